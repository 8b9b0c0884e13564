"""Orders not paid within 5 minutes, written the way Spark runs a left anti join of two
streams (it refuses the join itself): a left outer join, a filter on the right key IS
NULL, then the order's columns only."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

orders = (
    spark.readStream.schema("order_id STRING, amount BIGINT, order_time TIMESTAMP")
    .json("/in/orders")
    .withWatermark("order_time", "10 minutes")
)
payments = (
    spark.readStream.schema("order_id STRING, pay_time TIMESTAMP")
    .json("/in/payments")
    .withWatermark("pay_time", "10 minutes")
)
unpaid = (
    orders.alias("o")
    .join(
        payments.alias("p"),
        (F.col("o.order_id") == F.col("p.order_id"))
        & (F.col("p.pay_time") > F.col("o.order_time"))
        & (F.col("p.pay_time") <= F.expr("o.order_time + INTERVAL 5 MINUTES")),
        "left_outer",
    )
    .where(F.col("p.order_id").isNull())
    .select("o.order_id", "o.amount", "o.order_time")
)
unpaid.writeStream.format("parquet").option("checkpointLocation", "/chk/unpaid").start(
    "/out/unpaid"
)
