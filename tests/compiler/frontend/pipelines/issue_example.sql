-- The join of issue 28: two streaming tables (filled by flows sjoin does not model) and a
-- time-interval inner join written with SQL's WATERMARK clause.
CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);

CREATE STREAMING TABLE j AS
SELECT x.k, x.t AS ta, y.t AS tb
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x
JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS y
ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 5 SECONDS
