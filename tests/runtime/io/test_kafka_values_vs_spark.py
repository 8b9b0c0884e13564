"""Every case of test_kafka_values.py through real Spark: the value as a Kafka record's bytes,
read as the generated job reads it (``from_json`` / ``from_csv`` of ``CAST(value AS STRING)``
with the stream's schema, PERMISSIVE, the session time zone of the case).  Where the replay
reads a row, Spark reads the same row; where it reports a fault, Spark reads the partial row
the fault states, and for the columns the replay cannot tell, what the case says Spark reads."""

from __future__ import annotations

from itertools import groupby
from typing import Any

import pytest

from .test_kafka_values import CASES, COLUMNS, DDL, Case, Read, as_row, raw, same

pytestmark = pytest.mark.spark


def spark_rows(spark: Any, cases: list[Case]) -> dict[str, tuple[Any, ...]]:
    """Each case's row as Spark's job reads it, in runtime values (timestamps as epoch
    microseconds, dates as epoch days)."""
    from pyspark.sql import functions as F

    payload, zone = cases[0].payload, cases[0].zone
    frame = spark.createDataFrame(
        [(case.id, None if (v := raw(case)) is None else bytearray(v)) for case in cases],
        "id STRING, value BINARY",
    )
    text = F.col("value").cast("string")
    parsed = F.from_json(text, DDL) if payload == "json" else F.from_csv(text, DDL)
    columns = []
    for name, kind in COLUMNS.items():
        column = F.col("row").getField(name)
        if kind == "TIMESTAMP":
            column = F.unix_micros(column)
        elif kind == "DATE":
            column = F.unix_date(column)
        columns.append(column.alias(name))
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        rows = frame.select("id", parsed.alias("row")).select("id", *columns).collect()
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    return {row["id"]: tuple(row[name] for name in COLUMNS) for row in rows}


def test_spark_reads_every_value_as_the_replay_says(spark: Any) -> None:
    found: dict[str, tuple[Any, ...]] = {}
    key = lambda case: (case.payload, case.zone)  # noqa: E731
    for _, group in groupby(sorted(CASES, key=key), key=key):
        found.update(spark_rows(spark, list(group)))
    wrong = []
    for case in CASES:
        got = found[case.id]
        if isinstance(case.expect, Read):
            expected = as_row(case.expect.values)
        else:
            claims = {**case.expect.partial, **case.expect.spark}
            expected = tuple(
                case.expect.spark.get(name) if name in case.expect.unknown else claims.get(name)
                for name in COLUMNS
            )
        differ = [
            (name, g, e)
            for name, g, e in zip(COLUMNS, got, expected, strict=True)
            if not same(g, e)
        ]
        if differ:
            wrong.append(f"{case.id}: {differ}")
    assert not wrong, "\n".join(wrong)
