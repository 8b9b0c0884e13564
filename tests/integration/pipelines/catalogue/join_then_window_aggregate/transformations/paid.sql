-- A join feeding a windowed aggregate: the INNER JOIN of inner_range as a temporary
-- view (SDP inlines it: one streaming query), and the revenue per 10-second window of
-- payment time in append mode (a window comes out once the watermark passes its end).
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
CREATE TEMPORARY VIEW paid AS
SELECT o.amount, p.paid_at, p.method
FROM STREAM(orders) WITH ('maxFilesPerTrigger' = '1') WATERMARK order_time DELAY OF INTERVAL 5 SECONDS AS o
INNER JOIN STREAM(payments) WITH ('maxFilesPerTrigger' = '1') WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS AS p
ON o.order_id = p.order_id
  AND p.paid_at BETWEEN o.order_time AND o.order_time + INTERVAL 10 SECONDS
