"""A full outer join with watermarks on both streams but no time range in its condition
(and no event time in its keys): Spark refuses to start it."""

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()

sensors = (
    spark.readStream.schema("device STRING, temp DOUBLE, read_at TIMESTAMP")
    .json("/iot/sensors")
    .withWatermark("read_at", "5 minutes")
)
alerts = (
    spark.readStream.schema("alert_device STRING, level STRING, raised_at TIMESTAMP")
    .json("/iot/alerts")
    .withWatermark("raised_at", "5 minutes")
)
both = sensors.join(alerts, sensors["device"] == alerts["alert_device"], "full")
both.writeStream.format("console").start()
