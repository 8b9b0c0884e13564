-- Flows into declared streaming tables: INSERT INTO ... BY NAME, and by position (the
-- table's column names), the table's own name the relation's.
CREATE STREAMING TABLE requests (zone STRING, request_id STRING, request_time TIMESTAMP);
CREATE STREAMING TABLE offers (zone STRING, request_id STRING, offer_time TIMESTAMP);
CREATE STREAMING TABLE matched (request_id STRING, request_time TIMESTAMP, offer_time TIMESTAMP);
CREATE STREAMING TABLE unmatched (request_id STRING, requested TIMESTAMP);

CREATE FLOW match_requests AS INSERT INTO matched BY NAME
SELECT o.offer_time, r.request_id, r.request_time
FROM STREAM(requests) WATERMARK request_time DELAY OF INTERVAL 30 SECONDS AS r
JOIN STREAM(offers) WATERMARK offer_time DELAY OF INTERVAL 30 SECONDS AS o
  ON r.request_id = o.request_id AND r.zone = o.zone
 AND o.offer_time BETWEEN r.request_time AND r.request_time + INTERVAL 2 MINUTES;

CREATE FLOW unmatched_requests AS INSERT INTO unmatched
SELECT r.request_id, r.request_time
FROM STREAM(requests) WATERMARK request_time DELAY OF INTERVAL 30 SECONDS AS r
LEFT JOIN STREAM(offers) WATERMARK offer_time DELAY OF INTERVAL 30 SECONDS AS o
  ON r.request_id = o.request_id AND r.zone = o.zone
 AND o.offer_time BETWEEN r.request_time AND r.request_time + INTERVAL 2 MINUTES
WHERE o.request_id IS NULL;
