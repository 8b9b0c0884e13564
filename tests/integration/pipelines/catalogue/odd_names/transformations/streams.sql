-- One streaming table per input stream, with its columns: the streams the joins read.

CREATE STREAMING TABLE `order` (`order id` BIGINT, `event time` TIMESTAMP, `select` STRING)
AS SELECT * FROM STREAM(order_files);

CREATE STREAMING TABLE payment (`order id` BIGINT, `paid at` TIMESTAMP, `x``y` STRING)
AS SELECT * FROM STREAM(payment_files)
