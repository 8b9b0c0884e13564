"""Payments from two Kafka topics (card and wallet), parsed with from_json, unioned, then
joined with orders."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

PAYMENT = "order_ref STRING, paid DOUBLE, pay_time TIMESTAMP"

spark = SparkSession.builder.getOrCreate()


def payments(topic):
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", "broker:9092")
        .option("subscribe", topic)
        .load()
        .select(F.from_json(F.col("value").cast("string"), PAYMENT).alias("p"))
        .select("p.*")
        .withWatermark("pay_time", "10 minutes")
    )


card = payments("card-payments")
wallet = payments("wallet-payments")
all_payments = card.union(wallet)

orders = (
    spark.readStream.schema("order_id STRING, total DOUBLE, order_time TIMESTAMP")
    .json("/in/orders")
    .withWatermark("order_time", "10 minutes")
)
paid = orders.join(
    all_payments,
    (orders.order_id == all_payments.order_ref)
    & all_payments.pay_time.between(
        orders.order_time, orders.order_time + F.expr("INTERVAL 1 DAY")
    ),
)
paid.writeStream.format("console").start()
