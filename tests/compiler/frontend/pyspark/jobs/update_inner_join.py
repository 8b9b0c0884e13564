"""The guide's inner join in Update mode: Spark 4.2+ runs an inner (or left semi) stream-stream
join in Update mode (SPARK-56384), and it emits the same rows as in Append: a join never
retracts a row."""

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

matched = impressions.join(
    clicks,
    expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
    "inner",
)

query = matched.writeStream.outputMode("update").format("console").start()
query.awaitTermination()
