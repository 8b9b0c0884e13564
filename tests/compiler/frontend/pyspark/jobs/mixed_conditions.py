"""One join condition written three ways at once: df["col"] comparisons, F.col on
aliases, and expr() strings, joined with & and a Column's between()."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

rides = (
    spark.readStream.schema("ride_id STRING, zone STRING, fare DOUBLE, requested TIMESTAMP")
    .csv("/in/rides")
    .withWatermark("requested", "2 minutes")
)
drivers = (
    spark.readStream.schema("driver STRING, driver_zone STRING, offered TIMESTAMP")
    .csv("/in/drivers")
    .withWatermark("offered", "2 minutes")
)
matches = rides.alias("r").join(
    drivers.alias("d"),
    (rides["zone"] == drivers["driver_zone"])
    & F.expr("d.offered >= r.requested")
    & (F.col("d.offered") <= F.col("r.requested") + F.expr("INTERVAL 5 MINUTES"))
    & F.expr("r.fare > 0 AND d.driver IS NOT NULL"),
    "inner",
)
matches.writeStream.format("console").start()
