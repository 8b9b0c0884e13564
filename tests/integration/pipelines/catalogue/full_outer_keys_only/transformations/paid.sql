-- FULL OUTER JOIN on the key alone: neither side's state can ever be cleaned up.
-- The input: data/STREAM/00.json, one micro-batch (Spark rejects the pipeline before it
-- would matter).
CREATE STREAMING TABLE paid AS
SELECT o.order_id, o.order_time, o.amount, p.order_id AS paid_order_id, p.paid_at, p.method
FROM STREAM(orders) WITH ('maxFilesPerTrigger' = '1') WATERMARK order_time DELAY OF INTERVAL 5 SECONDS AS o
FULL OUTER JOIN STREAM(payments) WITH ('maxFilesPerTrigger' = '1') WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS AS p
ON o.order_id = p.order_id
