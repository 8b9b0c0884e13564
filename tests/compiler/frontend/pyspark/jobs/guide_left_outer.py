"""The guide's left outer join, with a build(spark) entry point, aliases, and a condition
that mixes Column expressions and an expr() string."""

from pyspark.sql import functions as F

IMPRESSIONS = "impressionAdId BIGINT, impressionTime TIMESTAMP, campaign STRING"


def read_impressions(spark):
    return (
        spark.readStream.schema(IMPRESSIONS)
        .json("/data/impressions")
        .withWatermark("impressionTime", "2 hours")
    )


def build(spark):
    impressions = read_impressions(spark)
    clicks = (
        spark.readStream.format("json")
        .schema("clickAdId BIGINT, clickTime TIMESTAMP, userId STRING")
        .load("/data/clicks")
        .withWatermark("clickTime", "3 hours")
    )
    attributed = impressions.alias("i").join(
        clicks.alias("c"),
        (impressions["impressionAdId"] == clicks["clickAdId"])
        & F.expr("c.clickTime BETWEEN i.impressionTime AND i.impressionTime + INTERVAL 1 HOUR")
        & (F.col("i.campaign") != "internal"),
        "leftOuter",
    )
    return (
        attributed.writeStream.format("parquet")
        .option("checkpointLocation", "/chk/attributed")
        .start("/out/attributed")
    )


if __name__ == "__main__":
    raise SystemExit("run me with spark-submit")
