-- expect: E033 at 10:1 "no LEFT ANTI join of two streams"
-- Spark refuses LEFT ANTI JOIN with a streaming right side; the LEFT OUTER JOIN ... WHERE
-- p.order_id IS NULL form is how it runs one.
CREATE STREAMING TABLE orders (order_id BIGINT, order_time TIMESTAMP);
CREATE STREAMING TABLE payments (order_id BIGINT, payment_time TIMESTAMP);

CREATE STREAMING TABLE unpaid AS
SELECT o.order_id
FROM STREAM(orders) WATERMARK order_time DELAY OF INTERVAL 1 MINUTE AS o
LEFT ANTI JOIN STREAM(payments) WATERMARK payment_time DELAY OF INTERVAL 1 MINUTE AS p
  ON o.order_id = p.order_id
 AND p.payment_time BETWEEN o.order_time AND o.order_time + INTERVAL 15 MINUTES;
