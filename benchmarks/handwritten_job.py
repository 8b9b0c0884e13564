"""The benchmark join written by hand, as a PySpark developer would write it without sjoin.

The benchmark compares its executed physical plan and its run time with the job that
`sjoin compile` generates from benchmarks/workload.py's spec: they must be the same plan and
take the same time.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

CONF = {
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
}
SCHEMA = "k BIGINT, t TIMESTAMP, v STRING"


def build(spark: SparkSession, left_dir: str, right_dir: str) -> DataFrame:
    """Clicks-style range join: a left row matches right rows with the same key whose time is
    within [-5 s, +10 s] of it; both sides keep 10 s of late data."""

    def read(path: str) -> DataFrame:
        return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(path)

    left = read(left_dir).withWatermark("t", "10 seconds").alias("L")
    right = read(right_dir).withWatermark("t", "10 seconds").alias("R")
    joined = left.join(
        right,
        (F.col("L.k") == F.col("R.k"))
        & F.col("L.t").between(
            F.col("R.t") - F.expr("INTERVAL 5 SECONDS"),
            F.col("R.t") + F.expr("INTERVAL 10 SECONDS"),
        ),
        "inner",
    )
    return joined.select(
        F.col("L.k").alias("k"),
        F.col("L.t").alias("lt"),
        F.col("R.t").alias("rt"),
        F.col("L.v").alias("lv"),
        F.col("R.v").alias("rv"),
    )
