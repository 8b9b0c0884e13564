-- A join on a window key whose side also keeps its time column: two event-time
-- columns on one join input.
-- The input: data/STREAM/00.json, one micro-batch (Spark rejects the pipeline before it
-- would matter).
CREATE STREAMING TABLE same_window AS
SELECT o.order_id, o.order_time, o.order_window, o.amount, p.paid_window, p.method
FROM (
  SELECT order_id, order_time, window(order_time, '10 seconds') AS order_window, amount
  FROM STREAM(orders) WITH ('maxFilesPerTrigger' = '1') WATERMARK order_time DELAY OF INTERVAL 5 SECONDS
) AS o
INNER JOIN (
  SELECT order_id, window(paid_at, '10 seconds') AS paid_window, method
  FROM STREAM(payments) WITH ('maxFilesPerTrigger' = '1') WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS
) AS p
ON o.order_id = p.order_id
  AND o.order_window = p.paid_window
