-- A windowed aggregate over a join, in one query: sjoin reads it as a join (`clicks_join`)
-- feeding an aggregate, one streaming query.
CREATE STREAMING TABLE impressions (ad_id BIGINT, impression_time TIMESTAMP, campaign STRING);
CREATE STREAMING TABLE clicks (ad_id BIGINT, click_time TIMESTAMP);

CREATE STREAMING TABLE campaign_clicks AS
SELECT i.campaign, window(i.impression_time, '10 minutes') AS impression_window,
       count(*) AS clicks
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 1 MINUTE AS i
JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 1 MINUTE AS c
  ON i.ad_id = c.ad_id
 AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 30 MINUTES
GROUP BY i.campaign, window(i.impression_time, '10 minutes');
