"""Orders and payments from Kafka (JSON values parsed with a StructType), payments
deduplicated within the watermark and filtered, a range join written with Column
expressions, then revenue per 10-minute window."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StringType, StructField, StructType, TimestampType

ORDER = StructType(
    [
        StructField("order_id", StringType()),
        StructField("customer", StringType()),
        StructField("amount", DoubleType()),
        StructField("order_time", TimestampType()),
    ]
)
PAYMENT = StructType(
    [
        StructField("payment_id", StringType()),
        StructField("order_ref", StringType()),
        StructField("paid", DoubleType()),
        StructField("pay_time", TimestampType()),
    ]
)


def kafka(spark, topic, schema, alias):
    return (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", "broker:9092")
        .option("subscribe", topic)
        .load()
        .select(F.from_json(F.col("value").cast("string"), schema).alias(alias))
        .select(f"{alias}.*")
    )


def main():
    spark = SparkSession.builder.master("local[*]").appName("revenue").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    orders = kafka(spark, "orders", ORDER, "o").withWatermark("order_time", "10 minutes")
    payments = kafka(spark, "payments", PAYMENT, "p").withWatermark("pay_time", "20 minutes")
    unique = payments.dropDuplicatesWithinWatermark(["payment_id"])
    paid = unique.filter(F.col("paid") > 0)
    matched = orders.join(
        paid,
        (orders.order_id == paid.order_ref)
        & paid.pay_time.between(orders.order_time, orders.order_time + F.expr("INTERVAL 1 HOUR")),
    )
    revenue = matched.groupBy(F.window("order_time", "10 minutes"), "customer").agg(
        F.sum("amount").alias("revenue")
    )
    (
        revenue.writeStream.outputMode("append")
        .format("parquet")
        .option("path", "/lake/revenue")
        .option("checkpointLocation", "/chk/revenue")
        .trigger(processingTime="1 minute")
        .start()
        .awaitTermination()
    )


if __name__ == "__main__":
    main()
