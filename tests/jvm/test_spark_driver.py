"""Real-Spark checks of sjoin.jvm.spark_driver against the reference's worked examples
(§1.8, §1.10)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sjoin.jvm.spark_driver import (
    BatchResult,
    SparkUnavailable,
    StreamDriver,
    _to_python,
    get_spark,
    parse_join_plan,
    run_batches,
)

pytestmark = pytest.mark.spark

SCHEMA = "k BIGINT, t TIMESTAMP, v STRING"
RANGE = "L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def spark() -> Any:
    try:
        return get_spark()
    except SparkUnavailable as exc:
        pytest.skip(str(exc))


def at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def row(k: int, seconds: int, v: str) -> dict[str, Any]:
    """Input row with the time as an ISO-8601 string, as scenarios write it."""
    return {"k": k, "t": at(seconds).strftime("%Y-%m-%dT%H:%M:%SZ"), "v": v}


def range_join(how: str) -> Callable[[dict[str, Any]], Any]:
    def build(inputs: dict[str, Any]) -> Any:
        from pyspark.sql import functions as F

        left = inputs["left"].withWatermark("t", "10 seconds").alias("L")
        right = inputs["right"].withWatermark("t", "10 seconds").alias("R")
        return left.join(right, F.expr(RANGE), how).select(
            F.col("L.v").alias("lv"), F.col("L.t").alias("lt"), F.col("R.v").alias("rv")
        )

    return build


def state(batch: BatchResult) -> tuple[int, int, int, int]:
    (op,) = batch.state_operators
    assert op["operatorName"] == "symmetricHashJoin"
    return (
        op["numRowsTotal"],
        op["numRowsUpdated"],
        op["numRowsRemoved"],
        op["numRowsDroppedByWatermark"],
    )


def test_inner_worked_example(spark: Any) -> None:
    """§1.10: data batch, automatic no-data batch at W=90 s, late left row dropped."""
    run = run_batches(
        spark,
        {"left": SCHEMA, "right": SCHEMA},
        range_join("inner"),
        [{"left": [row(1, 100, "a")], "right": [row(1, 100, "b")]}, {"left": [row(1, 85, "c")]}],
    )
    assert [b.batch_id for b in run.batches] == [0, 1, 2]
    b0, b1, b2 = run.batches
    assert b0.rows == [{"lv": "a", "lt": at(100), "rv": "b"}]
    assert b0.rows[0]["lt"].tzinfo == UTC
    assert (b0.watermark, b0.num_input_rows, state(b0)) == (
        "1970-01-01T00:00:00.000Z",
        2,
        (2, 2, 0, 0),
    )
    assert (b1.rows, b1.watermark, b1.num_input_rows, state(b1)) == (
        [],
        "1970-01-01T00:01:30.000Z",
        0,
        (2, 0, 0, 0),
    )
    assert (b2.rows, b2.watermark, b2.num_input_rows, state(b2)) == (
        [],
        "1970-01-01T00:01:30.000Z",
        1,
        (2, 0, 0, 1),
    )

    (join,) = parse_join_plan(run.plan)
    assert join["join_type"] == "Inner"
    assert (join["late_events_watermark_ms"], join["eviction_watermark_ms"]) == (90000, 90000)
    assert join["state_cleanup"] == {
        "left": {"kind": "value", "value_ms": 84999},
        "right": {"kind": "value", "value_ms": 79999},
    }
    assert join["condition"]["leftOnly"] is None and join["condition"]["rightOnly"] is None
    assert join["condition"]["both"] == join["condition"]["full"]
    assert "INTERVAL '10' SECOND" in join["condition"]["full"]
    assert join["state_format_version"] == 2


def test_left_outer_null_row_in_no_data_batch(spark: Any) -> None:
    """§1.8: the unmatched left row x comes out null-padded in no-data batch 3 (W=120 s)."""
    from pyspark import __version__

    run = run_batches(
        spark,
        {"left": SCHEMA, "right": SCHEMA},
        range_join("left_outer"),
        [
            {"left": [row(1, 100, "a"), row(2, 100, "x")], "right": [row(1, 100, "b")]},
            {"left": [row(3, 130, "y")], "right": [row(3, 130, "z")]},
        ],
    )
    assert [b.batch_id for b in run.batches] == [0, 1, 2, 3]
    assert [b.rows for b in run.batches] == [
        [{"lv": "a", "lt": at(100), "rv": "b"}],
        [],
        [{"lv": "y", "lt": at(130), "rv": "z"}],
        [{"lv": "x", "lt": at(100), "rv": None}],
    ]
    assert [b.num_input_rows for b in run.batches] == [3, 0, 2, 0]
    assert [b.watermark[11:19] for b in run.batches if b.watermark] == [
        "00:00:00",
        "00:01:30",
        "00:01:30",
        "00:02:00",
    ]
    # 4.3 counts preserved-side evictions in numRowsRemoved (x and a on the left, b on the right).
    removed = 3 if tuple(int(p) for p in __version__.split(".")[:2]) >= (4, 3) else 1
    assert [state(b) for b in run.batches] == [
        (3, 3, 0, 0),
        (3, 0, 0, 0),
        (5, 2, 0, 0),
        (2, 0, removed, 0),
    ]
    (join,) = parse_join_plan(run.plan)
    assert join["join_type"] == "LeftOuter"
    assert (join["late_events_watermark_ms"], join["eviction_watermark_ms"]) == (90000, 120000)
    assert join["state_cleanup"] == {
        "left": {"kind": "value", "value_ms": 114999},
        "right": {"kind": "value", "value_ms": 109999},
    }


def test_each_feed_is_one_micro_batch(spark: Any) -> None:
    """Rows for two inputs land in one batch; an empty batch still runs; times round-trip in UTC."""
    from pyspark.errors import StreamingQueryException

    precise = datetime(2024, 3, 31, 1, 30, 0, 123456, tzinfo=UTC)
    with StreamDriver(spark, {"a": SCHEMA, "b": SCHEMA}) as driver:
        driver.start(driver.inputs["a"].unionByName(driver.inputs["b"]))
        offset_text = "2024-03-31 03:30:00+02:00"
        driver.feed(
            {
                "a": [{"k": 1, "t": precise, "v": "p"}],
                "b": [{"k": 2, "t": offset_text, "v": "q"}],
            }
        )
        driver.feed({"a": []})
        naive = datetime(2024, 1, 1)
        driver.feed({"b": [{"k": 3, "t": naive, "v": "r"}, {"k": 4, "t": None, "v": None}]})
        with pytest.raises(ValueError):
            driver.feed({"c": []})
        results = driver.results()
        with pytest.raises(StreamingQueryException):
            driver.feed({"a": [{"k": 5, "t": "not a time", "v": "s"}]})
    assert [(b.batch_id, b.num_input_rows) for b in results] == [(0, 2), (1, 0), (2, 2)]
    assert sorted(results[0].rows, key=lambda r: r["k"]) == [
        {"k": 1, "t": precise, "v": "p"},
        {"k": 2, "t": precise.replace(microsecond=0), "v": "q"},
    ]
    assert sorted(results[2].rows, key=lambda r: r["k"]) == [
        {"k": 3, "t": datetime(2024, 1, 1, tzinfo=UTC), "v": "r"},
        {"k": 4, "t": None, "v": None},
    ]
    assert all(b.state_operators == [] and b.watermark is None for b in results)


def test_collected_timestamps_do_not_depend_on_local_time_zone() -> None:
    """PySpark collects TIMESTAMPs as naive local times; rows must still carry UTC instants."""
    pytest.importorskip("pyspark")
    from pyspark.sql.types import StructField, StructType, TimestampType

    instant = datetime(2024, 3, 31, 1, 30, 0, 123456, tzinfo=UTC)
    micros = (instant - EPOCH) // timedelta(microseconds=1)
    schema = StructType([StructField("w", StructType([StructField("end", TimestampType())]))])
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"  # 01:30 UTC is 03:30 CEST, just after the DST switch
    time.tzset()
    try:
        local = TimestampType().fromInternal(micros)
        converted = _to_python(((local,),), schema)
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()
    assert local.hour == 3
    assert converted == {"w": {"end": instant}}


def test_idle_progress_is_not_a_batch(spark: Any) -> None:
    """Idle triggers after a batch report the next batch id with stateOperators and a
    watermark (seen on 4.3.0); they must not show up as executed batches."""
    spark.conf.set("spark.sql.streaming.noDataProgressEventInterval", "100ms")
    try:
        with StreamDriver(spark, {"left": SCHEMA, "right": SCHEMA}) as driver:
            driver.start(range_join("inner")(driver.inputs))
            driver.feed({"left": [row(1, 100, "a")], "right": [row(1, 100, "b")]})
            time.sleep(1)
            idle = [p for p in driver.query.recentProgress if "addBatch" not in p.durationMs]
            results = driver.results()
    finally:
        spark.conf.unset("spark.sql.streaming.noDataProgressEventInterval")
    assert any(p.batchId == 2 and p.stateOperators for p in idle)
    assert [(b.batch_id, state(b)) for b in results] == [(0, (2, 2, 0, 0)), (1, (2, 0, 0, 0))]


def test_parse_join_plan_other_shapes() -> None:
    """Key predicates, a missing side and the single-watermark form of Spark 3.3."""
    plan = (
        "*(3) Project [v#5]\n"
        "+- StreamingSymmetricHashJoin [k#3L, t#4-T10000ms], [k#9L, t#10-T10000ms], FullOuter, "
        "condition = [ leftOnly = (v#5 > a), rightOnly = null, both = null, full = (v#5 > a) ], "
        "state info [ checkpoint = file:/x, runId = r, opId = 0, ver = 1, numPartitions = 2], "
        "90000, state cleanup [ left key predicate: (input[1, timestamp, true] <= 90000000), "
        "right = null ], 2\n"
        "   :- Exchange hashpartitioning(k#3L, 2)\n"
    )
    assert parse_join_plan(plan) == [
        {
            "join_type": "FullOuter",
            "condition": {
                "leftOnly": "(v#5 > a)",
                "rightOnly": None,
                "both": None,
                "full": "(v#5 > a)",
            },
            "late_events_watermark_ms": 90000,
            "eviction_watermark_ms": 90000,
            "state_cleanup": {"left": {"kind": "key", "value_ms": 90000}, "right": None},
            "state_format_version": 2,
        }
    ]
    (negative,) = parse_join_plan(plan.replace("<= 90000000", "<= -5001000"))
    assert negative["state_cleanup"]["left"] == {"kind": "key", "value_ms": -5001}


def test_module_imports_without_pyspark() -> None:
    """The module is importable with pyspark absent, and get_spark then says why it cannot run."""
    path = Path(__file__).resolve().parents[2] / "jvm" / "spark_driver.py"
    script = (
        "import importlib.util, sys\n"
        "sys.modules['pyspark'] = None\n"
        f"spec = importlib.util.spec_from_file_location('spark_driver', {str(path)!r})\n"
        "mod = sys.modules['spark_driver'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(mod)\n"
        "try:\n"
        "    mod.get_spark()\n"
        "except mod.SparkUnavailable as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "pyspark is needed to run Spark: it is not installed"
