"""Temperature and humidity readings of a device paired per 10-second window: each side
gets its window with withColumn and its time recomputed beside it (so that the side keeps
one event-time column, as Spark 3.5 and later need), then an equi-join on the device and
the window, written with Column expressions."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.appName("climate").getOrCreate()

temperature = (
    spark.readStream.schema("device_id STRING, reading_time TIMESTAMP, celsius DOUBLE")
    .json("/in/temperature")
    .withWatermark("reading_time", "5 seconds")
)
humidity = (
    spark.readStream.schema("device_id STRING, reading_time TIMESTAMP, percent DOUBLE")
    .json("/in/humidity")
    .withWatermark("reading_time", "5 seconds")
)


def windowed(readings):
    """The reading's 10-second window, and its time without the watermark's mark."""
    return readings.withColumn("window", F.window("reading_time", "10 seconds")).withColumn(
        "reading_time", F.timestamp_micros(F.unix_micros("reading_time"))
    )


t = windowed(temperature).alias("t")
h = windowed(humidity).alias("h")
climate = t.join(
    h, (F.col("t.device_id") == F.col("h.device_id")) & (F.col("t.window") == F.col("h.window"))
).select(
    F.col("t.device_id"),
    F.col("t.window").alias("reading_window"),
    F.col("t.celsius"),
    F.col("h.percent"),
)

climate.writeStream.format("parquet").option("path", "/out/climate").option(
    "checkpointLocation", "/chk/climate"
).start()
