"""A full outer join of two streams without watermarks: Spark refuses to start it (no
state of either side could ever be evicted)."""

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()

left = spark.readStream.schema("k STRING, a_time TIMESTAMP").json("/in/a")
right = spark.readStream.schema("k STRING, b_time TIMESTAMP").json("/in/b")
both = left.alias("a").join(
    right.alias("b"),
    "k",
    "full_outer",
)
both.writeStream.format("console").start()
