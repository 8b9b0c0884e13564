from pyspark import pipelines as dp
from pyspark.sql import DataFrame


@dp.table
def impressions() -> DataFrame:
    return (
        spark.readStream.format("json")  # noqa: F821 - the pipeline's session
        .schema("ad_id BIGINT, campaign STRING, impression_time TIMESTAMP")
        .load("in/impressions")
    )


@dp.table(name="clicks")
def read_clicks() -> DataFrame:
    return (
        spark.readStream.format("json")  # noqa: F821
        .schema("ad_id BIGINT, click_time TIMESTAMP")
        .load("in/clicks")
    )
