"""The guide's inner join in Update mode, then a filter and a projection of its output: the
mode is the query's, so it is the join's (Spark 4.2+ runs an inner stream-stream join in
Update mode, SPARK-56384; the filter and the projection keep no state)."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

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
    F.expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
    "inner",
)
quick = matched.where(F.col("clickTime") < F.col("impressionTime") + F.expr("INTERVAL 30 MINUTES"))
quick = quick.select("clickAdId", "clickTime")

query = quick.writeStream.outputMode("update").format("console").start()
query.awaitTermination()
