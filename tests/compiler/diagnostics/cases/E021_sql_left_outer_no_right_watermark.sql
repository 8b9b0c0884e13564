-- expect: E021 at 11:1 "state of `x`"
-- expect: W001 at 8:24 "state of `y`"
-- LEFT OUTER JOIN whose right side is read without a WATERMARK clause: the left rows can
-- never be evicted, so Spark rejects the query.
CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);

CREATE STREAMING TABLE j AS
SELECT x.k, x.t AS ta, y.t AS tb
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x
LEFT OUTER JOIN STREAM(b) AS y
  ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 5 SECONDS;
