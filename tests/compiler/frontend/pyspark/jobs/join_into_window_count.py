"""Clicks attributed to impressions, counted per campaign and 5-minute window of the
impression time: a join feeding a windowed aggregate, written with groupBy().count()."""

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, expr, window

spark = SparkSession.builder.getOrCreate()

impressions = (
    spark.readStream.schema("ad_id BIGINT, campaign STRING, shown_at TIMESTAMP")
    .json("/data/impressions")
    .withWatermark("shown_at", "10 minutes")
)
clicks = (
    spark.readStream.schema("click_ad BIGINT, clicked_at TIMESTAMP")
    .json("/data/clicks")
    .withWatermark("clicked_at", "10 minutes")
)

attributed = impressions.join(
    clicks,
    (col("ad_id") == col("click_ad"))
    & expr("clicked_at BETWEEN shown_at AND shown_at + INTERVAL 15 MINUTES"),
)
per_window = attributed.groupBy(window("shown_at", "5 minutes"), "campaign").count()

query = (
    per_window.writeStream.outputMode("append")
    .format("console")
    .option("truncate", "false")
    .start()
)
query.awaitTermination()
