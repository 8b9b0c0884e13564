"""withColumnRenamed between the operators: both streams name their key `id` and their
time `ts`, so the job renames the clicks' columns before the join, and a column of the
join's output before it writes it."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

views = (
    spark.readStream.schema("id STRING, ts TIMESTAMP, url STRING")
    .json("/in/views")
    .withWatermark("ts", "5 minutes")
)
clicks = (
    spark.readStream.schema("id STRING, ts TIMESTAMP, button STRING")
    .json("/in/clicks")
    .withColumnRenamed("id", "click_id")
    .withColumnRenamed("ts", "click_ts")
    .withWatermark("click_ts", "5 minutes")
)
matched = views.join(
    clicks,
    (views.id == clicks.click_id)
    & (clicks.click_ts >= views.ts)
    & (clicks.click_ts <= views.ts + F.expr("INTERVAL 10 MINUTES")),
)
out = matched.withColumnRenamed("url", "page").withColumnsRenamed({"ts": "view_ts"})
out.writeStream.format("parquet").option("checkpointLocation", "/chk/out").start("/out")
