"""Orders never paid, written as a left anti join of two streams: Spark 4.3 refuses a
LeftAnti join whose right side is a stream."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

orders = (
    spark.readStream.schema("order_id STRING, order_time TIMESTAMP")
    .json("/in/orders")
    .withWatermark("order_time", "10 minutes")
)
payments = (
    spark.readStream.schema("order_id STRING, pay_time TIMESTAMP")
    .json("/in/payments")
    .withWatermark("pay_time", "10 minutes")
)
unpaid = orders.alias("o").join(
    payments.alias("p"),
    (F.col("o.order_id") == F.col("p.order_id"))
    & F.col("p.pay_time").between(F.col("o.order_time"), F.expr("o.order_time + INTERVAL 1 HOUR")),
    "left_anti",
)
unpaid.writeStream.format("console").start()
