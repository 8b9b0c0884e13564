"""The Maven packages a generated job needs on a Spark cluster: Spark's Kafka connector and
Delta Lake, by the Spark version the spec targets (PyPI's pyspark ships neither). The job's
header and `sjoin compile` name them; ``sjoin.jvm.jars`` fetches them for local runs."""

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

# Delta Lake releases by the Spark line they are built on (delta-spark's pom names its Spark),
# the newest the registry serves: Delta 4.1-4.3 are built on Spark 4.1.0 only; Delta 4.4 is
# built for Spark 4.2.0, 4.1.0 and 4.0.1 and named by its Spark line
# (io.delta:delta-spark_4.2_2.13:4.4.0; its 4.4.1 is not served). No Delta release is built
# on Spark 4.3.
DELTA_RELEASES = {"3.5": "3.3.2", "4.0": "4.0.1", "4.1": "4.3.1", "4.2": "4.4.0"}


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
    if delta.startswith(("1.", "2.")):
        artifact = "delta-core"
    elif _version_key(delta) >= (4, 4):  # one artifact per Spark line from Delta 4.4 on
        artifact = f"delta-spark_{spark_line(spark)}"
    else:
        artifact = "delta-spark"
    return f"io.delta:{artifact}_{scala_of(spark)}:{delta}"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


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
