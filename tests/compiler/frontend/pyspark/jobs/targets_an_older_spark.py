"""A job that says which Spark its cluster runs, as a generated job does: its plan is the
one for Spark 3.5 (a string that holds `# sjoin: spark 4.0` is no annotation)."""

# sjoin: spark 3.5

from pyspark.sql import SparkSession
from pyspark.sql.functions import expr

spark = SparkSession.builder.appName("older-cluster # sjoin: spark 4.0").getOrCreate()

orders = (
    spark.readStream.format("json")
    .schema("order_id BIGINT, order_time TIMESTAMP")
    .load("/data/orders")
    .withWatermark("order_time", "10 minutes")
)
payments = (
    spark.readStream.format("json")
    .schema("pay_order_id BIGINT, pay_time TIMESTAMP")
    .load("/data/payments")
    .withWatermark("pay_time", "10 minutes")
)
paid = orders.join(
    payments,
    expr(
        "order_id = pay_order_id AND pay_time BETWEEN order_time AND order_time + INTERVAL 1 HOUR"
    ),
    "leftOuter",
)
paid.writeStream.format("parquet").option("path", "/out/paid").option(
    "checkpointLocation", "/chk/paid"
).start()
