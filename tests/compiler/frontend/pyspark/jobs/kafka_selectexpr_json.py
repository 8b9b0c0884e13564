"""Two Kafka topics read the way most jobs read them: the value cast to a string with
selectExpr, parsed by from_json with a StructType, the struct's fields selected; then an
inner join of orders and shipments within two days."""

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, expr, from_json
from pyspark.sql.types import StringType, StructField, StructType, TimestampType

ORDERS = StructType(
    [
        StructField("order_id", StringType()),
        StructField("customer", StringType()),
        StructField("order_time", TimestampType()),
    ]
)
SHIPMENTS = StructType(
    [
        StructField("shipped_order", StringType()),
        StructField("carrier", StringType()),
        StructField("ship_time", TimestampType()),
    ]
)

spark = SparkSession.builder.appName("shipping").getOrCreate()


def topic(name, schema):
    raw = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", "broker:9092")
        .option("subscribe", name)
        .option("startingOffsets", "earliest")
        .load()
    )
    return (
        raw.selectExpr("CAST(value AS STRING) AS json")
        .select(from_json(col("json"), schema).alias("data"))
        .select("data.*")
    )


orders = topic("orders", ORDERS).withWatermark("order_time", "1 hour")
shipments = topic("shipments", SHIPMENTS).withWatermark("ship_time", "1 hour")

shipped = orders.join(
    shipments,
    (col("order_id") == col("shipped_order"))
    & (col("ship_time") >= col("order_time"))
    & (col("ship_time") <= col("order_time") + expr("INTERVAL 2 DAYS")),
)

(
    shipped.writeStream.format("parquet")
    .option("path", "/lake/shipped")
    .option("checkpointLocation", "/chk/shipped")
    .start()
    .awaitTermination()
)
