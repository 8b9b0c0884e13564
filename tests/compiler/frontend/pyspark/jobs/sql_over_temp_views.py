"""Two streams as temporary views, joined with spark.sql: a left outer join with a time
range, read as the DataFrame API's join of the two streams (a plain name of a streaming
temporary view is a streaming read)."""

from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("paid-orders").getOrCreate()

orders = (
    spark.readStream.format("json")
    .schema("order_id STRING, order_time TIMESTAMP, amount DOUBLE")
    .load("/data/orders")
)
payments = (
    spark.readStream.format("json")
    .schema("order_id STRING, pay_time TIMESTAMP")
    .load("/data/payments")
)
orders.withWatermark("order_time", "10 minutes").createOrReplaceTempView("orders")
payments.withWatermark("pay_time", "10 minutes").createOrReplaceTempView("payments")

paid = spark.sql("""
    SELECT o.order_id, o.order_time, p.pay_time
    FROM orders o
    LEFT OUTER JOIN payments p
      ON o.order_id = p.order_id
     AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 HOUR
""")

(
    paid.writeStream.format("parquet")
    .option("checkpointLocation", "/chk/paid")
    .start("/out/paid")
    .awaitTermination()
)
