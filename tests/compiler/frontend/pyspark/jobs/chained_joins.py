"""A chain of two joins: orders joined with their payments, then with their shipments,
each join bounded in time; the second join's condition names the first join's columns."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

orders = (
    spark.readStream.schema("order_id STRING, amount DOUBLE, order_time TIMESTAMP")
    .parquet("/lake/orders")
    .withWatermark("order_time", "30 minutes")
)
payments = (
    spark.readStream.schema("paid_order STRING, pay_time TIMESTAMP")
    .parquet("/lake/payments")
    .withWatermark("pay_time", "30 minutes")
)
shipments = (
    spark.readStream.schema("shipped_order STRING, ship_time TIMESTAMP")
    .parquet("/lake/shipments")
    .withWatermark("ship_time", "1 hour")
)

paid = orders.join(
    payments,
    (orders.order_id == payments.paid_order)
    & (payments.pay_time >= orders.order_time)
    & (payments.pay_time <= orders.order_time + F.expr("INTERVAL 1 HOUR")),
).select("order_id", "amount", "order_time")

fulfilled = paid.join(
    shipments,
    F.expr(
        "shipped_order = order_id AND ship_time BETWEEN order_time AND order_time + INTERVAL 2 DAYS"
    ),
)

(
    fulfilled.writeStream.format("parquet")
    .option("checkpointLocation", "/chk/fulfilled")
    .start("/lake/fulfilled")
)
