"""A self-join: one stream of page events under two aliases, a view followed by a
purchase of the same session within 30 minutes."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

events = (
    spark.readStream.schema("session STRING, kind STRING, page STRING, at TIMESTAMP")
    .json("/in/events")
    .withWatermark("at", "15 minutes")
)
converted = events.alias("v").join(
    events.alias("b"),
    (F.col("v.session") == F.col("b.session"))
    & (F.col("v.kind") == "view")
    & (F.col("b.kind") == "buy")
    & F.expr("b.at BETWEEN v.at AND v.at + INTERVAL 30 MINUTES"),
)
converted.select(
    F.col("v.session").alias("session"), F.col("v.page").alias("viewed"), F.col("b.at")
).writeStream.format("console").start()
