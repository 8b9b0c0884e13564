# expect: E042 at 8:63 "KeyError"
"""A job whose own code fails before it starts a query."""

from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
settings = {"topic": "orders"}
events = spark.readStream.format("kafka").option("subscribe", settings["topics"]).load()
events.writeStream.format("console").start()
