-- expect: E038 at 10:1 "static table on the left"
-- A static table (a materialized view of files, read without STREAM) on the preserved side.
CREATE STREAMING TABLE orders (customer_id BIGINT, order_time TIMESTAMP);
CREATE MATERIALIZED VIEW customers (customer_id BIGINT, segment STRING)
AS SELECT * FROM parquet.`dim/customers`;

CREATE STREAMING TABLE enriched AS
SELECT c.segment, o.order_time
FROM customers AS c
LEFT JOIN STREAM(orders) WATERMARK order_time DELAY OF INTERVAL 1 MINUTE AS o
  ON c.customer_id = o.customer_id;
