-- expect: E003 at 8:13 "unknown dataset `clicks`"
-- The join reads a table that no SQL file defines and sjoin-schemas.sql does not declare.
CREATE STREAMING TABLE impressions (ad_id BIGINT, impression_time TIMESTAMP);

CREATE STREAMING TABLE attributed AS
SELECT i.ad_id, c.click_time
FROM STREAM(impressions) WATERMARK impression_time DELAY OF INTERVAL 1 MINUTE AS i
JOIN STREAM(clicks) WATERMARK click_time DELAY OF INTERVAL 1 MINUTE AS c
  ON i.ad_id = c.ad_id;
