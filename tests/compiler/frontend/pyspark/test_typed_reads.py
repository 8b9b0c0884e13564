"""A read without a schema given its columns by ``DataFrame.to(schema)`` (Spark 3.4+): how a
job says the columns of a source that carries its own schema and refuses a declared one
(Delta), read back offline with no server; `sjoin compile` writes its Delta reads as a
``.select`` of the spec's columns, then ``.to`` of their types (docs/pyspark.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_pyspark, check_text

pytest.importorskip("pyspark.sql.connect.client.core")

JOB = """from pyspark.sql import SparkSession
from pyspark.sql import types as T

spark = SparkSession.builder.getOrCreate()
CUSTOMERS = T.StructType(
    [
        T.StructField("customer_id", T.LongType()),
        T.StructField("segment", T.StringType()),
        T.StructField("score", T.DecimalType(12, 3)),
        T.StructField("since", T.DateType()),
        T.StructField("flags", T.ByteType()),
    ]
)
customers = spark.read.format("delta").load("dim/customers")SELECT.to(CUSTOMERS)
orders = (
    spark.readStream.format("delta")
    .load("in/orders")
    .to(T.StructType([T.StructField("customer_id", T.LongType()),
                      T.StructField("ts", T.TimestampType())]))
    .withWatermark("ts", "1 minute")
)
out = orders.join(customers, "customer_id", "left_outer")
out.writeStream.format("parquet").option("checkpointLocation", "/chk").start("/out")
"""

SPEC = """
stream orders (customer_id BIGINT, ts TIMESTAMP)
watermark ts delay 1 minute
from delta (path = 'in/orders')

table customers (customer_id BIGINT, segment STRING, score DECIMAL(12, 3), since DATE,
                 flags TINYINT)
from delta (path = 'dim/customers')
"""


def _read(tmp_path: Path, text: str) -> Any:
    job = tmp_path / "job.py"
    job.write_text(text, encoding="utf-8")
    return check_pyspark(job)


@pytest.mark.parametrize(
    "select", ["", '.select("customer_id", "segment", "score", "since", "flags")']
)
def test_to_after_a_read_gives_it_its_columns(tmp_path: Path, select: str) -> None:
    back = _read(tmp_path, JOB.replace("SELECT", select))
    assert back.ok, back.diagnostics
    streams = {s["name"]: s for s in back.plan_json()["streams"]}
    assert [(c["name"], c["type"]) for c in streams["orders"]["columns"]] == [
        ("customer_id", "BIGINT"),
        ("ts", "TIMESTAMP"),
    ]
    spec = check_text(SPEC, "spec.sjoin")
    assert spec.ok, spec.diagnostics
    tables = {t["name"]: t for t in back.plan_json().get("tables", [])}
    want = {t["name"]: t for t in spec.plan_json().get("tables", [])}
    assert [(c["name"], c["type"]) for c in tables["customers"]["columns"]] == [
        (c["name"], c["type"]) for c in want["customers"]["columns"]
    ]
    assert len(want["customers"]["columns"]) == 5


@pytest.mark.parametrize(
    ("select", "message"),
    [
        ('.select("segment", "customer_id")', "a select of segment, customer_id before"),
        ('.select("customer_id").withColumn("x", F.lit(1))', "DataFrame.to(schema) other than"),
    ],
)
def test_to_over_anything_else_is_named_at_its_line(
    tmp_path: Path, select: str, message: str
) -> None:
    text = JOB.replace("SELECT", select).replace(
        "from pyspark.sql import types as T", "from pyspark.sql import types as T, functions as F"
    )
    back = _read(tmp_path, text)
    found = [d for d in back.diagnostics if message in d.message]
    assert found and all(d.code == "E041" for d in found), back.diagnostics
    assert found[0].span is not None


def test_a_type_no_column_is_declared_with_is_refused(tmp_path: Path) -> None:
    text = JOB.replace("SELECT", "").replace("T.ByteType()", "T.ArrayType(T.StringType())")
    back = _read(tmp_path, text)
    assert any(
        "whose schema is no struct of columns sjoin declares" in d.message for d in back.diagnostics
    )


def test_a_delta_read_without_to_says_how_to_give_its_columns(tmp_path: Path) -> None:
    back = _read(tmp_path, JOB.replace("SELECT.to(CUSTOMERS)", ""))
    (found,) = [d for d in back.diagnostics if "delta source without a schema" in d.message]
    assert ".to(StructType([...]))" in str(found.help)
