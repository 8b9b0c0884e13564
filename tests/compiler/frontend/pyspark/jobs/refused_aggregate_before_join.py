"""Per-user click counts (an aggregate in update mode) joined with the users' purchases:
a stream-stream join after a streaming aggregate that emits updated counts.  Spark refuses
to start it: the join could drop the aggregate's updated rows as late (the global
watermark correctness check)."""

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
busy_buyers.writeStream.outputMode("update").format("console").start()
