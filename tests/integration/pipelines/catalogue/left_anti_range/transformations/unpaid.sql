-- LEFT ANTI JOIN of two streams with a time range (the orders without a payment):
-- Spark has no stream-stream anti join.
-- The input: data/STREAM/00.json, one micro-batch (Spark rejects the pipeline before it
-- would matter).
CREATE STREAMING TABLE unpaid AS
SELECT o.order_id, o.order_time, o.amount
FROM STREAM(orders) WITH ('maxFilesPerTrigger' = '1') WATERMARK order_time DELAY OF INTERVAL 5 SECONDS AS o
LEFT ANTI JOIN STREAM(payments) WITH ('maxFilesPerTrigger' = '1') WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS AS p
ON o.order_id = p.order_id
  AND p.paid_at BETWEEN o.order_time AND o.order_time + INTERVAL 10 SECONDS
