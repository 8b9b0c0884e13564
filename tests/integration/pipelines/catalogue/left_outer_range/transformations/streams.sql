-- One streaming table per input stream, with its columns: the streams the joins read.

CREATE STREAMING TABLE orders (order_id BIGINT, order_time TIMESTAMP, amount INT)
AS SELECT * FROM STREAM(orders_files);

CREATE STREAMING TABLE payments (order_id BIGINT, paid_at TIMESTAMP, method STRING)
AS SELECT * FROM STREAM(payments_files)
