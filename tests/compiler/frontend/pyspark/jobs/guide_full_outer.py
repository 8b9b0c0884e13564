"""The guide's full outer join of impressions and clicks: watermarks on both sides and a
time range that bounds each side's state, so both sides' unmatched rows come out."""

from pyspark.sql import SparkSession
from pyspark.sql.functions import expr

spark = SparkSession.builder.getOrCreate()

impressions = (
    spark.readStream.format("json")
    .schema("impressionAdId BIGINT, impressionTime TIMESTAMP")
    .load("/data/impressions")
    .withWatermark("impressionTime", "2 hours")
)
clicks = (
    spark.readStream.format("json")
    .schema("clickAdId BIGINT, clickTime TIMESTAMP")
    .load("/data/clicks")
    .withWatermark("clickTime", "3 hours")
)

joined = impressions.join(
    clicks,
    expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
    "fullOuter",
)

joined.writeStream.format("parquet").option("checkpointLocation", "/chk/full").start("/out/full")
