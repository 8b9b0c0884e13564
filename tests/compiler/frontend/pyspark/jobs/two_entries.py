"""A module with two entry points: `build` (the default) and `build_inner`."""

from pyspark.sql import functions as F


def streams(spark):
    a = (
        spark.readStream.schema("k STRING, a_time TIMESTAMP")
        .json("/in/a")
        .withWatermark("a_time", "1 minute")
    )
    b = (
        spark.readStream.schema("k STRING, b_time TIMESTAMP")
        .json("/in/b")
        .withWatermark("b_time", "1 minute")
    )
    return a, b


def build(spark):
    a, b = streams(spark)
    cond = (a.k == b.k) & F.expr("b_time BETWEEN a_time AND a_time + INTERVAL 5 MINUTES")
    joined = a.join(b, cond, "left_outer")
    joined.writeStream.format("console").start()


def build_inner(spark):
    a, b = streams(spark)
    joined = a.join(b, a.k == b.k)
    joined.writeStream.format("console").start()
