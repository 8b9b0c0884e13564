-- Back-quoted names: tables named by keywords (`order`, `from`), columns and aliases with
-- spaces, `;`, `--` and a back-quote, a string literal holding `'`, `;` and `--`.
-- The input (data/STREAM/NN.json in micro-batch NN; seconds after 2026-01-01T00:00:00Z):
--   batch 0: orders 1 (0 s), 2 (1 s); payment 1 (3 s), whose `x`y` is the literal: the
--     condition drops it before the watermark (Spark pushes the filter below the
--     WATERMARK), so the payments' watermark has seen no row, and batch 1 has none
--   batch 1: order 3 (30 s); payments 2 (4 s, for order 2), 4 (33 s, no order)
--   batch 2, no data (watermark 25 s): order 1 comes out with nulls
CREATE STREAMING TABLE `from` AS
SELECT `o r`.`order id` AS `id -- out`, `o r`.`select` AS `a;b`, `p;q`.`x``y` AS `x``y`,
  `p;q`.`paid at` AS `paid at`
FROM STREAM(`order`) WITH ('maxFilesPerTrigger' = '1') WATERMARK `event time` DELAY OF INTERVAL 5 SECONDS AS `o r`
LEFT OUTER JOIN STREAM(`payment`) WITH ('maxFilesPerTrigger' = '1') WATERMARK `paid at` DELAY OF INTERVAL 5 SECONDS AS `p;q`
ON `o r`.`order id` = `p;q`.`order id`
  AND `p;q`.`paid at` BETWEEN `o r`.`event time` AND `o r`.`event time` + INTERVAL 10 SECONDS
  AND `p;q`.`x``y` <> 'x'';--' -- a ';' in a comment
