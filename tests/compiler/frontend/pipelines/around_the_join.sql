-- The pipeline around the join, in SDP SQL: two order topics unioned, paid orders filtered
-- and projected in a view, payments deduplicated as Spark runs SELECT DISTINCT (an aggregate
-- of every column), a LEFT OUTER join whose WHERE makes it an inner join, enriched from a
-- static table of customers (a materialized view of files, read in batch).
-- sjoin: spark 4.3

CREATE STREAMING TABLE orders_eu (order_id BIGINT, customer_id BIGINT, status STRING, order_time TIMESTAMP);
CREATE STREAMING TABLE orders_us (order_id BIGINT, customer_id BIGINT, status STRING, order_time TIMESTAMP);
CREATE STREAMING TABLE payments (order_id BIGINT, amount DOUBLE, payment_time TIMESTAMP);

CREATE MATERIALIZED VIEW customers (customer_id BIGINT, segment STRING)
AS SELECT * FROM parquet.`dim/customers`;

CREATE TEMPORARY VIEW orders AS
SELECT * FROM STREAM(orders_eu) WATERMARK order_time DELAY OF INTERVAL 10 MINUTES
UNION ALL
SELECT * FROM STREAM(orders_us) WATERMARK order_time DELAY OF INTERVAL 10 MINUTES;

CREATE TEMPORARY VIEW paid_orders AS
SELECT o.order_id, o.customer_id, o.order_time
FROM STREAM(orders) AS o
WHERE o.status = 'paid';

CREATE TEMPORARY VIEW payments_once AS
SELECT DISTINCT order_id, amount, payment_time
FROM STREAM(payments) WATERMARK payment_time DELAY OF INTERVAL 10 MINUTES;

CREATE TEMPORARY VIEW settled AS
SELECT o.order_id, o.customer_id, p.amount
FROM STREAM(paid_orders) AS o
LEFT JOIN STREAM(payments_once) AS p
  ON o.order_id = p.order_id
 AND p.payment_time BETWEEN o.order_time AND o.order_time + INTERVAL 15 MINUTES
WHERE p.amount > 0;

CREATE STREAMING TABLE enriched AS
SELECT s.order_id, s.amount, c.segment
FROM STREAM(settled) AS s
LEFT JOIN customers AS c
  ON s.customer_id = c.customer_id;
