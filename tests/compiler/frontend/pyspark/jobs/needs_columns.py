"""A job that asks Spark for a DataFrame's columns while it builds the query."""


def build(spark):
    events = spark.readStream.schema("id STRING, headers STRING, t TIMESTAMP").json("/in")
    keep = [c for c in events.columns if c != "headers"]
    return events.select(*keep).writeStream.format("console").start()
