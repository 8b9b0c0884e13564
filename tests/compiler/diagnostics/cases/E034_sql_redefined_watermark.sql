-- expect: E034 at 16:19 "Redefining watermark is disallowed"
-- The pipeline's WATERMARK on a join's view: Spark 4.3 refuses it unless the pipeline sets
-- spark.sql.streaming.statefulOperator.allowMultiple = false.
CREATE STREAMING TABLE orders (order_id BIGINT, order_time TIMESTAMP);
CREATE STREAMING TABLE payments (order_id BIGINT, paid_time TIMESTAMP, amount DOUBLE);

CREATE TEMPORARY VIEW paid AS
SELECT o.order_id, p.paid_time, p.amount
FROM STREAM(orders) WATERMARK order_time DELAY OF INTERVAL 10 MINUTES AS o
JOIN STREAM(payments) WATERMARK paid_time DELAY OF INTERVAL 10 MINUTES AS p
  ON o.order_id = p.order_id
 AND p.paid_time BETWEEN o.order_time AND o.order_time + INTERVAL 30 MINUTES;

CREATE STREAMING TABLE per_window AS
SELECT window(x.paid_time, '10 minutes') AS w, sum(x.amount) AS total
FROM STREAM(paid) WATERMARK paid_time DELAY OF INTERVAL 1 HOUR AS x
GROUP BY window(x.paid_time, '10 minutes');
