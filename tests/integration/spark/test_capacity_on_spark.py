"""`sjoin plan --rates` on real Spark: a LEFT OUTER join, and a join feeding an aggregate,
fed a generated trace at given rates through the generated job (HDFS-backed state store);
after warm-up the predicted state rows are within 10% of Spark's numRowsTotal and the
predicted bytes within 25% of its memoryUsedBytes (docs/capacity.md has the full table,
benchmarks/capacity.py); and an aggregate's state schema, which the model sizes, is the
plan's."""

from __future__ import annotations

import tempfile
from typing import Any

import pytest

from ...compiler.describe.test_capacity import load_bench

pytestmark = pytest.mark.spark


def test_predicted_state_on_spark(spark: Any) -> None:
    bench = load_bench()
    case = bench.case(
        "spark-test", bench.RANGE, (150, 100), how="LEFT OUTER", keys=1000, delays=(5, 5),
        width=5, batches=8,
    )  # fmt: skip
    cap, observed, log = bench.run_case(case, spark)
    op = cap.operators[0]
    assert observed.batches >= 3, log
    assert observed.rows_spark == pytest.approx(op.rows, rel=0.10), log
    assert observed.rows_spark == pytest.approx(observed.rows_runtime, rel=0.001), log
    assert observed.bytes_spark == pytest.approx(op.bytes, rel=0.25), log


def test_predicted_groups_on_spark(spark: Any) -> None:
    """A join feeding a windowed append aggregate: after warm-up the predicted groups are
    within 10% of Spark's numRowsTotal of the aggregate, its bytes within 25% of its
    memoryUsedBytes."""
    bench = load_bench()
    case = bench.aggregated(
        "spark-test", bench.AGG_RANGE, bench.BY_WINDOW, (100, 60), keys=800, width=10,
        delays=(5, 5), batches=24,
    )  # fmt: skip
    cap, observed, log = bench.run_case(case, spark)
    op = bench.operator_of(cap, "g")
    assert observed.batches >= 4, log
    assert observed.rows_spark == pytest.approx(op.rows, rel=0.10), log
    assert observed.rows_spark == pytest.approx(observed.rows_runtime, rel=0.001), log
    assert observed.bytes_spark == pytest.approx(op.bytes, rel=0.25), log


STATE = """spark 4.3
set shuffle_partitions = 1
stream s (k STRING, t TIMESTAMP, g BIGINT, x DOUBLE, i INT, d DECIMAL(10, 2),
          e DECIMAL(30, 2), b BOOLEAN, d8 DECIMAL(8, 2), d9 DECIMAL(9, 2),
          d11 DECIMAL(11, 3), d12 DECIMAL(12, 2))
  watermark t delay 10 seconds
aggregate a = s AS S
  GROUP BY S.k, window(S.t, INTERVAL 10 SECONDS)
  SELECT S.k AS k, window(S.t, INTERVAL 10 SECONDS) AS w, count(*) AS n, count(S.x) AS nx,
         sum(S.g) AS sg, sum(S.x) AS sx, sum(S.i) AS si, sum(S.d) AS sd, avg(S.i) AS ai,
         avg(S.d) AS ad, avg(S.e) AS ae, min(S.k) AS lk, max(S.t) AS mt, min(S.b) AS lb,
         approx_count_distinct(S.g) AS dg, sum(S.d8) AS s8, sum(S.d9) AS s9,
         avg(S.d11) AS a11, avg(S.d12) AS a12
  OUTPUT MODE append
"""


def _spark_type(kind: str) -> list[str]:
    """A plan's state type as Spark's simpleString (a sketch as its words)."""
    if kind == "SKETCH":
        return ["bigint"] * 52
    if kind == "WINDOW":
        return ["struct<start:timestamp,end:timestamp>"]
    return [kind.lower().replace(", ", ",")]


def test_aggregate_state_schema_on_spark(spark: Any) -> None:
    """The aggregate's state key and value schemas, read back from the checkpoint with
    Spark's state data source, are the plan's key_types and buffer_types, which the
    capacity model sizes: every aggregate function over every type it takes, the decimal
    sums and averages on both sides of DecimalAggregates' bounds, the sketch's 52 words."""
    from sjoin.api import check_text
    from sjoin.jvm.spark_driver import StreamDriver
    from sjoin.jvm.verify import load_job

    result = check_text(STATE)
    assert result.ok and result.plan is not None, result.diagnostics
    node = result.plan.node("a")
    with tempfile.TemporaryDirectory() as tmp:
        job = load_job(result.plan, tmp)
        with StreamDriver(spark, {"s": job.SCHEMAS["s"]}) as driver:
            driver.start(job.build(spark, driver.inputs)["a"], "append")
            row = {"k": "a", "t": "2026-01-01T00:00:00Z", "g": 1, "x": 1.5, "i": 2, "d": 1.25,
                   "e": 2.5, "b": True, "d8": 1.5, "d9": 1.5, "d11": 1.5, "d12": 1.5}  # fmt: skip
            driver.feed({"s": [row]})
            checkpoint = driver._checkpoint
            assert checkpoint is not None
            schema = spark.read.format("statestore").load(checkpoint).schema
    key, value = schema["key"].dataType, schema["value"].dataType
    assert [f.dataType.simpleString() for f in key.fields] == [
        t for k in node.key_types for t in _spark_type(str(k))
    ]
    assert [f.dataType.simpleString() for f in value.fields] == [
        t for k in node.buffer_types for t in _spark_type(str(k))
    ]
