"""A left outer join of two streams with a time range but no watermark on the clicks:
Spark refuses to start it (the impressions' state could never be evicted, so no
impression would ever come out unmatched)."""

from pyspark.sql import SparkSession
from pyspark.sql.functions import expr

spark = SparkSession.builder.getOrCreate()

impressions = spark.readStream.schema("impressionAdId BIGINT, impressionTime TIMESTAMP").json(
    "/data/impressions"
)
clicks = spark.readStream.schema("clickAdId BIGINT, clickTime TIMESTAMP").json("/data/clicks")

joined = impressions.withWatermark("impressionTime", "2 hours").join(
    clicks,
    expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
    "left_outer",
)
joined.writeStream.format("console").start()
