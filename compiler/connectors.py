"""The Maven packages a generated job needs on a Spark cluster: Spark's Kafka connector and
Delta Lake, by the Spark version the spec targets (PyPI's pyspark ships neither). The job's
header and `sjoin compile` name them; ``sjoin.jvm`` fetches them for local runs."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CONNECTOR_FORMATS", "delta_connector", "kafka_connector", "packages"]

# Source and sink formats that need a package beyond pyspark.
CONNECTOR_FORMATS = frozenset({"kafka", "delta"})

# The newest release of each Spark line that sjoin knows; a job's header names the connector
# of this release for the Spark version the spec targets (a cluster needs its own exact one).
SPARK_RELEASES = {
    "3.3": "3.3.4",
    "3.4": "3.4.4",
    "3.5": "3.5.7",
    "4.0": "4.0.2",
    "4.1": "4.1.3",
    "4.2": "4.2.0",
    "4.3": "4.3.0",
}

# Delta Lake releases by the Spark line they are built on (delta-spark's pom names its Spark):
# Delta 4.1-4.3 are built on Spark 4.1.0; no Delta release is built on Spark 4.2 or 4.3.
DELTA_RELEASES = {"3.5": "3.3.2", "4.0": "4.0.1", "4.1": "4.3.1"}


def scala_of(spark: str) -> str:
    return "2.12" if spark.startswith("3.") else "2.13"


def spark_line(spark: str) -> str:
    """``X.Y`` of a Spark version ``X.Y`` or ``X.Y.Z``."""
    return ".".join(spark.split(".")[:2])


def release_of(spark: str) -> str:
    return spark if spark.count(".") == 2 else SPARK_RELEASES.get(spark, f"{spark}.0")


def kafka_connector(spark: str) -> str:
    """Spark's Kafka connector for Spark ``spark`` (``X.Y`` or ``X.Y.Z``)."""
    return f"org.apache.spark:spark-sql-kafka-0-10_{scala_of(spark)}:{release_of(spark)}"


def delta_connector(spark: str) -> str | None:
    """The Delta Lake package built on the Spark line of ``spark``, or None if none is."""
    delta = DELTA_RELEASES.get(spark_line(spark))
    if delta is None:
        return None
    artifact = "delta-core" if delta.startswith(("1.", "2.")) else "delta-spark"
    return f"io.delta:{artifact}_{scala_of(spark)}:{delta}"


def packages(spark: str, formats: Iterable[str]) -> list[str]:
    """The Maven packages a job with sources and sinks of ``formats`` needs on Spark
    ``spark``, in a stable order (``spark-submit --packages`` takes them comma-separated)."""
    wanted = set(formats)
    out = []
    if "kafka" in wanted:
        out.append(kafka_connector(spark))
    if "delta" in wanted:
        delta = delta_connector(spark)
        if delta is not None:
            out.append(delta)
    return out
