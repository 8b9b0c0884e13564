"""A global-watermark hazard: clicks attributed to impressions, counted per campaign and
minute, then the busiest minute per campaign, all in update mode.  The first aggregate
emits updated counts for windows the watermark has passed, which the second would drop as
late: Spark refuses to start it (its global watermark correctness check)."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

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
    F.expr("click_ad = ad_id AND clicked_at BETWEEN shown_at AND shown_at + INTERVAL 15 MINUTES"),
)
per_minute = attributed.groupBy(F.window("shown_at", "1 minute"), "campaign").count()
busiest = per_minute.groupBy("campaign").agg(F.max("count").alias("peak"))
busiest.writeStream.outputMode("update").format("console").start()
