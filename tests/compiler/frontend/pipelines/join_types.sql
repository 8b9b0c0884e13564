-- Every join type SQL allows on two streams, each a streaming table of its own.
-- sjoin: spark 4.3
SET spark.sql.shuffle.partitions = 4;

CREATE STREAMING TABLE impressions (ad_id BIGINT, impression_time TIMESTAMP, campaign STRING);
CREATE STREAMING TABLE clicks (ad_id BIGINT, click_time TIMESTAMP, user_id STRING);

CREATE STREAMING TABLE inner_join AS
SELECT i.ad_id, i.campaign, c.user_id
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 2 HOURS AS i
INNER JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 3 HOURS AS c
  ON i.ad_id = c.ad_id
 AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR
WHERE i.campaign <> 'internal';

CREATE STREAMING TABLE left_join AS
SELECT i.ad_id, i.impression_time, c.click_time
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 2 HOURS AS i
LEFT JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 3 HOURS AS c
  ON i.ad_id = c.ad_id
 AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR;

CREATE STREAMING TABLE right_join AS
SELECT c.ad_id, c.click_time, i.campaign
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 2 HOURS AS i
RIGHT OUTER JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 3 HOURS AS c
  ON i.ad_id = c.ad_id
 AND i.impression_time BETWEEN c.click_time - INTERVAL 1 HOUR AND c.click_time;

CREATE STREAMING TABLE full_join AS
SELECT i.ad_id AS impression_ad, c.ad_id AS click_ad, i.impression_time, c.click_time
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 2 HOURS AS i
FULL OUTER JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 3 HOURS AS c
  ON i.ad_id = c.ad_id
 AND c.click_time >= i.impression_time
 AND c.click_time < i.impression_time + INTERVAL 1 HOUR;

CREATE STREAMING TABLE clicked_impressions AS
SELECT i.*
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 2 HOURS AS i
LEFT SEMI JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 3 HOURS AS c
  ON i.ad_id = c.ad_id
 AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR;

-- the anti join as Spark runs it on streams: LEFT OUTER, then the right key IS NULL
CREATE STREAMING TABLE unclicked AS
SELECT i.ad_id, i.impression_time
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 2 HOURS AS i
LEFT OUTER JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 3 HOURS AS c
  ON i.ad_id = c.ad_id
 AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR
WHERE c.ad_id IS NULL;
