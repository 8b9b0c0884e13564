"""A windowed aggregate in append mode feeding a stream-stream join: each window's count
comes out once, when the watermark closes it, so the join never sees a late update.  Spark
4.3 starts it."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

clicks = (
    spark.readStream.schema("user STRING, page STRING, click_time TIMESTAMP")
    .json("/in/clicks")
    .withWatermark("click_time", "10 minutes")
)
buys = (
    spark.readStream.schema("buyer STRING, item STRING, buy_time TIMESTAMP")
    .json("/in/buys")
    .withWatermark("buy_time", "10 minutes")
)

per_user = clicks.groupBy(F.window("click_time", "5 minutes"), "user").agg(
    F.count("*").alias("clicks")
)
busy_buyers = per_user.join(
    buys,
    (per_user.user == buys.buyer)
    & (buys.buy_time >= per_user.window.start)
    & (buys.buy_time < per_user.window.end),
)
busy_buyers.writeStream.format("console").start()
