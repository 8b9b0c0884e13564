-- expect: E014 at 11:44 "reads no unit `mins`"
-- expect: E014 at 9:37 "fraction only of seconds"
-- expect: E014 at 8:30 "reads no unit `secs`"
-- A pipeline's SQL runs on Spark as written: sjoin's own short units and a fraction of minutes
-- are refused as Spark's parser refuses them (PARSE_SYNTAX_ERROR, INVALID_INTERVAL_FORMAT).
CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE j AS
SELECT x.k, x.t, window(y.t, '10 secs') AS w
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 1.5 MINUTES AS x
INNER JOIN STREAM(a) WATERMARK t DELAY OF INTERVAL 2 MINUTES AS y
ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL '30 mins';
