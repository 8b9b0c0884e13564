CREATE STREAMING TABLE attributed AS
SELECT i.ad_id, i.campaign, c.click_time
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 2 HOURS AS i
JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 3 HOURS AS c
  ON i.ad_id = c.ad_id
 AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR;
