"""The guide's left semi join in Update mode: like an inner join, Spark 4.2+ runs it."""

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

clicked = impressions.join(
    clicks,
    expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
    "leftSemi",
)

query = clicked.writeStream.outputMode("update").format("console").start()
query.awaitTermination()
