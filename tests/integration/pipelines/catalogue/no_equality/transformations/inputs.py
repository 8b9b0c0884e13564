"""The pipeline's input streams: each is read from the JSON files under data/STREAM/ by a
temporary view STREAM_files, one file per micro-batch (`maxFilesPerTrigger`), so that its
streaming table (transformations/streams.sql) is written in as many batches as it has files."""

from pathlib import Path

from pyspark import pipelines as dp
from pyspark.sql import DataFrame, SparkSession

DATA = Path(__file__).resolve().parents[1] / "data"
SCHEMAS = {
    "orders": "order_id BIGINT, order_time TIMESTAMP, amount INT",
    "payments": "order_id BIGINT, paid_at TIMESTAMP, method STRING",
}

spark = SparkSession.active()


def files(stream: str) -> DataFrame:
    reader = spark.readStream.schema(SCHEMAS[stream]).option("maxFilesPerTrigger", 1)
    return reader.json(str(DATA / stream))


@dp.temporary_view(name="orders_files")
def orders_files() -> DataFrame:
    return files("orders")


@dp.temporary_view(name="payments_files")
def payments_files() -> DataFrame:
    return files("payments")
