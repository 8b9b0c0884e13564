-- expect: E008 at 12:33
-- expect: E008 at 12:35
-- expect: E008 at 12:49
-- A bidirectional override inside a string literal of a pipeline's SQL ("Trojan Source").
CREATE STREAMING TABLE a (k STRING, t TIMESTAMP);
CREATE STREAMING TABLE b (k STRING, t TIMESTAMP);

CREATE STREAMING TABLE j AS
SELECT x.k
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x
JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS y
  ON x.k = y.k AND x.k <> 'admin‮ ⁦-- not really⁩'
 AND y.t BETWEEN x.t AND x.t + INTERVAL 5 SECONDS;
