"""The guide's left outer join in Update mode.  Spark refuses to start it (LeftOuter join
between two streaming DataFrames/Datasets is not supported in Update output mode, only in
Append output mode): an outer join's null-padded rows come out only in Append mode."""

from pyspark.sql import SparkSession
from pyspark.sql.functions import expr

spark = SparkSession.builder.getOrCreate()

impressions = (
    spark.readStream.schema("impressionAdId BIGINT, impressionTime TIMESTAMP")
    .json("/data/impressions")
    .withWatermark("impressionTime", "2 hours")
)
clicks = (
    spark.readStream.schema("clickAdId BIGINT, clickTime TIMESTAMP")
    .json("/data/clicks")
    .withWatermark("clickTime", "3 hours")
)

attributed = impressions.join(
    clicks,
    expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
    "leftOuter",
)

query = attributed.writeStream.outputMode("update").format("console").start()
query.awaitTermination()
