-- expect: E001 at 8:1
-- A pipeline's SQL file: a misspelt keyword in the second statement; the first still reads.
CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);

CREATE STREAMING TABLE j AS
SELECT x.k
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x
JION STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS y
ON x.k = y.k;
