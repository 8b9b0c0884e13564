-- The LEFT OUTER JOIN of left_outer_range, reading the streams' tables without
-- WITH ('maxFilesPerTrigger' = '1'): SDP's run reads all of each table in one micro-batch
-- (the tables themselves are still written a file per batch), then runs the no-data
-- batch; nothing is late, so order 7 joins payment 7.
-- The input: data/STREAM/NN.json, the files of left_outer_range (times: seconds after
-- 2026-01-01T00:00:00Z; both watermarks 5 seconds behind their stream's latest time), all
-- read in micro-batch 0 (no watermark yet):
--   orders 1 (0 s), 2 (1 s), 3 (20 s), 4 (2 s), 5 (25 s), 6 (60 s), 7 (1 s), 8 (58 s);
--   payments 1 (3 s), 2 (8 s), 4 (4 s), 5 (30 s), 7 (2 s), 3 (40 s), 6 (62 s)
--   batch 1, no data (watermark 55 s): order 3 comes out with nulls; order 8 waits
CREATE STREAMING TABLE paid AS
SELECT o.order_id, o.order_time, o.amount, p.paid_at, p.method
FROM STREAM(orders) WATERMARK order_time DELAY OF INTERVAL 5 SECONDS AS o
LEFT OUTER JOIN STREAM(payments) WATERMARK paid_at DELAY OF INTERVAL 5 SECONDS AS p
ON o.order_id = p.order_id
  AND p.paid_at BETWEEN o.order_time AND o.order_time + INTERVAL 10 SECONDS
