-- A join feeding an aggregate grouped by no event-time column: append mode (the only
-- mode a streaming table has) cannot emit it.
-- The input: data/STREAM/00.json, one micro-batch (Spark rejects the pipeline before it
-- would matter).
CREATE TEMPORARY VIEW paid AS
SELECT o.amount, p.paid_at, p.method
FROM STREAM(orders) WITH ('maxFilesPerTrigger' = '1') WATERMARK order_time DELAY OF INTERVAL 5 SECONDS AS o
INNER JOIN STREAM(payments) WITH ('maxFilesPerTrigger' = '1') WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS AS p
ON o.order_id = p.order_id
  AND p.paid_at BETWEEN o.order_time AND o.order_time + INTERVAL 10 SECONDS
