# expect: E041 at 13:28 "Python UDF"
"""A join condition that calls a Python UDF: sjoin cannot say which rows it matches."""

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType

spark = SparkSession.builder.getOrCreate()
same_user = F.udf(lambda a, b: a.lower() == b.lower(), BooleanType())

views = spark.readStream.schema("user STRING, view_time TIMESTAMP").json("/in/views")
buys = spark.readStream.schema("buyer STRING, buy_time TIMESTAMP").json("/in/buys")
matched = views.join(buys, same_user(views.user, buys.buyer))
matched.writeStream.format("console").start()
