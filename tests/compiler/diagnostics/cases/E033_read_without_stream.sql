-- expect: E033 at 9:6 "read without STREAM"
-- A batch read of a stream (a stream-static join): sjoin models stream-stream joins.
CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);

CREATE STREAMING TABLE j AS
SELECT x.k
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x
JOIN b AS y ON x.k = y.k;
