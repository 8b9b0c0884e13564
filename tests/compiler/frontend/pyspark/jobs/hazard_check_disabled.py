"""The global-watermark hazard of refused_hazard_update.py with Spark's correctness check
turned off: Spark starts it and only logs the hazard; sjoin warns (W007) that the second
aggregate can silently drop the first one's updated counts as late."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = (
    SparkSession.builder.appName("hazard")
    .config("spark.sql.streaming.statefulOperator.checkCorrectness.enabled", "false")
    .getOrCreate()
)

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
