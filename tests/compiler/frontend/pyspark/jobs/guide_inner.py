"""The stream-stream inner join of Spark's Structured Streaming programming guide
(impressions and clicks, watermarks, a time-range join condition), as a script."""

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, expr, from_json

spark = SparkSession.builder.appName("ad-monetization").getOrCreate()

impressions = (
    spark.readStream.format("json")
    .schema("impressionAdId BIGINT, impressionTime TIMESTAMP")
    .load("/data/impressions")
)
clicks = (
    spark.readStream.format("kafka")
    .option("kafka.bootstrap.servers", "broker:9092")
    .option("subscribe", "clicks")
    .load()
    .select(
        from_json(col("value").cast("string"), "clickAdId BIGINT, clickTime TIMESTAMP").alias("c")
    )
    .select("c.*")
)

# Apply watermarks on event-time columns
impressionsWithWatermark = impressions.withWatermark("impressionTime", "2 hours")
clicksWithWatermark = clicks.withWatermark("clickTime", "3 hours")

# Join with event-time constraints
joined = impressionsWithWatermark.join(
    clicksWithWatermark,
    expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
)

query = (
    joined.writeStream.format("parquet")
    .option("path", "/out/joined")
    .option("checkpointLocation", "/chk/joined")
    .start()
)
query.awaitTermination()
