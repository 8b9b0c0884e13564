-- INNER JOIN with a time range and no equality between the sides.
-- The input: data/STREAM/00.json, one micro-batch (Spark rejects the pipeline before it
-- would matter).
CREATE STREAMING TABLE paid AS
SELECT o.order_id, o.order_time, o.amount, p.paid_at, p.method
FROM STREAM(orders) WITH ('maxFilesPerTrigger' = '1') WATERMARK order_time DELAY OF INTERVAL 5 SECONDS AS o
INNER JOIN STREAM(payments) WITH ('maxFilesPerTrigger' = '1') WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS AS p
ON p.paid_at BETWEEN o.order_time AND o.order_time + INTERVAL 10 SECONDS
