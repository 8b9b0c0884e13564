-- expect: E022 at 15:24
-- Spark 3.4's global-watermark check: a time-interval join followed by an aggregation in one
-- query (the join is a temporary view, which SDP inlines into the flow that reads it).
-- sjoin: spark 3.4
CREATE STREAMING TABLE impressions (ad_id BIGINT, campaign STRING, impression_time TIMESTAMP);
CREATE STREAMING TABLE clicks (ad_id BIGINT, click_time TIMESTAMP);

CREATE TEMPORARY VIEW clicked AS
SELECT i.campaign, c.click_time
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 10 MINUTES AS i
JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 10 MINUTES AS c
  ON i.ad_id = c.ad_id
 AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 10 MINUTES;

CREATE STREAMING TABLE per_campaign AS
SELECT k.campaign, window(k.click_time, '10 minutes') AS click_window, count(*) AS clicks
FROM STREAM(clicked) AS k
GROUP BY k.campaign, window(k.click_time, '10 minutes');
