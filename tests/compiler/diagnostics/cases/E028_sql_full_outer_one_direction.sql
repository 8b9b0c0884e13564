-- expect: E028 at 8:24 "unmatched `o` rows are never emitted"
-- expect: W005 at 11:1
-- FULL OUTER JOIN bounded in one direction only: Spark accepts it, but the offers are never
-- evicted, and never emitted null-padded.
CREATE STREAMING TABLE requests (zone STRING, request_id STRING, request_time TIMESTAMP);
CREATE STREAMING TABLE offers (zone STRING, request_id STRING, offer_time TIMESTAMP);

CREATE STREAMING TABLE matched AS
SELECT r.request_id, r.request_time, o.offer_time
FROM STREAM(requests) WATERMARK request_time DELAY OF INTERVAL 30 SECONDS AS r
FULL OUTER JOIN STREAM(offers) WATERMARK offer_time DELAY OF INTERVAL 30 SECONDS AS o
  ON r.request_id = o.request_id
 AND o.offer_time <= r.request_time + INTERVAL 2 MINUTES;
