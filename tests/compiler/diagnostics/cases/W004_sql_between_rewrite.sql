-- expect: W004 at 13:6 "`r` loses"
-- expect: W001 at 8:24 "state of `r`"
-- The condition split on a pipeline's SQL: Spark 4 computes a BETWEEN on a CAST as an alias
-- without watermark metadata, so the right side loses its state watermark.
CREATE STREAMING TABLE l (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE r (k BIGINT, t TIMESTAMP);

CREATE STREAMING TABLE pairs AS
SELECT l.k, l.t AS lt, r.t AS rt
FROM STREAM(l) WATERMARK t DELAY OF INTERVAL 10 SECONDS
JOIN STREAM(r) WATERMARK t DELAY OF INTERVAL 10 SECONDS
  ON l.k = r.k
 AND CAST(l.t AS BIGINT) BETWEEN CAST(r.t AS BIGINT) - 5 AND CAST(r.t AS BIGINT) + 10;
