"""Clicks deduplicated by click id within the watermark (dropDuplicatesWithinWatermark)
and impressions deduplicated by id and time (dropDuplicates), then joined."""

from pyspark.sql import SparkSession
from pyspark.sql.functions import expr

spark = SparkSession.builder.getOrCreate()

impressions = (
    spark.readStream.schema("imp_id STRING, ad BIGINT, imp_time TIMESTAMP")
    .json("/in/impressions")
    .withWatermark("imp_time", "10 minutes")
    .dropDuplicates(["imp_id", "imp_time"])
)
clicks = (
    spark.readStream.schema("click_id STRING, click_ad BIGINT, click_time TIMESTAMP")
    .json("/in/clicks")
    .withWatermark("click_time", "10 minutes")
    .dropDuplicatesWithinWatermark(["click_id"])
)
joined = impressions.join(
    clicks,
    expr("click_ad = ad AND click_time BETWEEN imp_time AND imp_time + INTERVAL 20 MINUTES"),
)
joined.writeStream.format("console").start()
