"""The pipeline's input streams: each is read from the JSON files under data/STREAM/ by a
temporary view STREAM_files, one file per micro-batch (`maxFilesPerTrigger`), so that its
streaming table (transformations/streams.sql) is written in as many batches as it has files."""

from pathlib import Path

from pyspark import pipelines as dp
from pyspark.sql import DataFrame, SparkSession

DATA = Path(__file__).resolve().parents[1] / "data"
SCHEMAS = {
    "order": "`order id` BIGINT, `event time` TIMESTAMP, `select` STRING",
    "payment": "`order id` BIGINT, `paid at` TIMESTAMP, `x``y` STRING",
}

spark = SparkSession.active()


def files(stream: str) -> DataFrame:
    reader = spark.readStream.schema(SCHEMAS[stream]).option("maxFilesPerTrigger", 1)
    return reader.json(str(DATA / stream))


@dp.temporary_view(name="order_files")
def order_files() -> DataFrame:
    return files("order")


@dp.temporary_view(name="payment_files")
def payment_files() -> DataFrame:
    return files("payment")
