-- LEFT OUTER JOIN with its time range written through unix_timestamp(): a form from
-- which Spark derives no state watermark.
-- The input: data/STREAM/00.json, one micro-batch (Spark rejects the pipeline before it
-- would matter).
CREATE STREAMING TABLE paid AS
SELECT o.order_id, o.order_time, o.amount, p.paid_at, p.method
FROM STREAM(orders) WITH ('maxFilesPerTrigger' = '1') WATERMARK order_time DELAY OF INTERVAL 5 SECONDS AS o
LEFT OUTER JOIN STREAM(payments) WITH ('maxFilesPerTrigger' = '1') WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS AS p
ON o.order_id = p.order_id
  AND unix_timestamp(p.paid_at) - unix_timestamp(o.order_time) BETWEEN 0 AND 10
