-- A chain in one streaming query: two joins and an aggregate, each temporary view inlined
-- by SDP into the flow that reads it.
-- sjoin: sink revenue to parquet (path = 'out/revenue') checkpoint 'chk/revenue'
CREATE STREAMING TABLE impressions (ad_id BIGINT, campaign STRING, impression_time TIMESTAMP);
CREATE STREAMING TABLE clicks (ad_id BIGINT, click_id STRING, click_time TIMESTAMP);
CREATE STREAMING TABLE purchases (click_id STRING, amount DOUBLE, purchase_time TIMESTAMP);

CREATE STREAMING TABLE revenue AS
SELECT v.campaign, window(v.purchase_time, '10 minutes') AS purchase_window,
       count(*) AS purchases, sum(v.amount) AS revenue
FROM STREAM(converted) AS v
GROUP BY v.campaign, window(v.purchase_time, '10 minutes');

CREATE TEMPORARY VIEW converted AS
SELECT k.campaign, p.amount, p.purchase_time
FROM STREAM(clicked) AS k
JOIN STREAM(purchases) WATERMARK purchase_time DELAY OF INTERVAL 10 MINUTES AS p
  ON k.click_id = p.click_id
 AND p.purchase_time >= k.click_time
 AND p.purchase_time <= k.click_time + INTERVAL 30 MINUTES;

CREATE TEMPORARY VIEW clicked AS
SELECT i.campaign, c.click_id, c.click_time
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 10 MINUTES AS i
JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 10 MINUTES AS c
  ON i.ad_id = c.ad_id
 AND c.click_time >= i.impression_time
 AND c.click_time <= i.impression_time + INTERVAL 10 MINUTES;
