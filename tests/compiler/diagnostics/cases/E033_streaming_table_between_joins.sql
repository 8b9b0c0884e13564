-- expect: E033 at 15:13 "reading it starts a second streaming query"
-- An aggregate reading a join's streaming table: a second query, which the join's watermark
-- does not reach. A temporary view keeps the chain one query.
CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);

CREATE STREAMING TABLE j AS
SELECT x.k, x.t
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x
JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS y
  ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 5 SECONDS;

CREATE STREAMING TABLE counts AS
SELECT window(j.t, '1 minute') AS w, count(*) AS n
FROM STREAM(j)
GROUP BY window(j.t, '1 minute');
