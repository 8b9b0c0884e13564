-- expect: E001 at 9:56 "unexpected `MINS`"
-- Spark's interval grammar reads only whole unit words: the help names the one meant.
CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);

CREATE STREAMING TABLE j AS
SELECT x.k
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x
INNER JOIN STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS y
ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 30 MINS;
