-- INNER JOIN on a window key: an order and its payment in the same 10-second window
-- (order 5 at 25 s and its payment at 30 s are in different windows).
-- The input: data/STREAM/NN.json, file NN in micro-batch NN (times: seconds after
-- 2026-01-01T00:00:00Z; both watermarks 5 seconds behind their stream's latest time; a batch
-- drops as late the rows at or before the previous batch's watermark):
--   batch 0 (no watermark yet): orders 1 (0 s), 2 (1 s), 3 (20 s); payments 1 (3 s), 2 (8 s)
--   batch 1 (watermark 3 s, nothing late yet): order 4 (2 s, older than the watermark);
--     payments 4 (4 s), 5 (30 s)
--   batch 2 (watermark 15 s, late at or before 3 s): orders 5 (25 s, for payment 5 of
--     batch 1), 6 (60 s), 7 (1 s: late), 8 (58 s); payments 7 (2 s: late), 3 (40 s: 20 s
--     after order 3), 6 (62 s)
--   batch 3, no data (watermark 55 s): evicts what the condition lets go
CREATE STREAMING TABLE same_window AS
SELECT o.order_id, o.order_window, o.amount, p.paid_window, p.method
FROM (
  SELECT order_id, window(order_time, '10 seconds') AS order_window, amount
  FROM STREAM(orders) WITH ('maxFilesPerTrigger' = '1') WATERMARK order_time DELAY OF INTERVAL 5 SECONDS
) AS o
INNER JOIN (
  SELECT order_id, window(paid_at, '10 seconds') AS paid_window, method
  FROM STREAM(payments) WITH ('maxFilesPerTrigger' = '1') WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS
) AS p
ON o.order_id = p.order_id
  AND o.order_window = p.paid_window
