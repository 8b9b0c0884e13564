"""`SELECT DISTINCT` over a stream, as Spark 4.3 runs it, and what the SQL front end makes of
it (compiler/frontend/sqllower.py): Spark's optimizer replaces the Distinct with an Aggregate
grouping by every column (ReplaceDistinctWithAggregate), so a stream's DISTINCT is a streaming
aggregate with no aggregate function: StateStoreRestore/StateStoreSave on every column.  In
append mode (the only mode of a pipeline's flow) Spark refuses it without a watermark on a
grouping column, with the streaming aggregate's own error, and with one it emits each distinct
row once, when the watermark passes its time; sjoin plans it as that aggregate (E023 without
the watermark)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_pipeline
from sjoin.compiler.planning.plan import AggregateNode
from sjoin.jvm.spark_driver import StreamDriver

pytestmark = pytest.mark.spark

KTV = "k BIGINT, t TIMESTAMP, v STRING"
STREAM = "CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP, v STRING);\n"
WATERMARK = " WATERMARK t DELAY OF INTERVAL 10 SECONDS"


def _rows(*rows: tuple[int, str, str]) -> list[dict[str, Any]]:
    return [{"k": k, "t": f"2026-01-01T00:{t}Z", "v": v} for k, t, v in rows]


def _at(seconds: int) -> datetime:
    return datetime(2026, 1, 1, 0, 0, seconds, tzinfo=UTC)


def test_distinct_without_a_watermark_is_refused_in_append_mode(spark: Any, tmp_path: Path) -> None:
    with StreamDriver(spark, {"a": KTV}) as driver:
        driver.inputs["a"].createOrReplaceTempView("distinct_plain")
        query = spark.sql("SELECT DISTINCT k, t, v FROM distinct_plain")
        with pytest.raises(Exception, match=r"STREAMING_OUTPUT_MODE\.UNSUPPORTED_OPERATION") as err:
            driver.start(query, "append")
    assert "streaming aggregations without watermark" in str(err.value)
    path = tmp_path / "p.sql"
    path.write_text(STREAM + "CREATE STREAMING TABLE d AS SELECT DISTINCT k, t, v FROM STREAM(a);")
    result = check_pipeline(path)
    assert [d.code for d in result.diagnostics] == ["E023"]
    assert "streaming aggregations without watermark" in result.diagnostics[0].message


def test_distinct_with_a_watermark_is_an_aggregate_of_every_column(
    spark: Any, tmp_path: Path
) -> None:
    with StreamDriver(spark, {"a": KTV}) as driver:
        driver.inputs["a"].withWatermark("t", "10 seconds").createOrReplaceTempView("distinct_wm")
        driver.start(spark.sql("SELECT DISTINCT k, t, v FROM distinct_wm"), "append")
        driver.feed({"a": _rows((1, "00:00", "x"), (1, "00:00", "x"), (2, "00:05", "y"))})
        driver.feed({"a": _rows((1, "00:00", "x"), (3, "00:30", "z"))})
        driver.feed({"a": _rows((4, "01:00", "w"))})
        plan = driver.executed_plan()
        batches = driver.results()
    assert "StateStoreSave" in plan and "Deduplicate" not in plan
    assert "HashAggregate(keys=[k#" in plan and "functions=[]" in plan
    emitted = [(row["k"], row["t"], row["v"]) for b in batches for row in b.rows]
    # each distinct row once, when the watermark (max t - 10 s) passes its time
    assert sorted(emitted) == [(1, _at(0), "x"), (2, _at(5), "y"), (3, _at(30), "z")]
    path = tmp_path / "p.sql"
    path.write_text(
        STREAM + f"CREATE STREAMING TABLE d AS SELECT DISTINCT k, t, v FROM STREAM(a){WATERMARK};\n"
    )
    result = check_pipeline(path)
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    node = result.plan.node("d")
    assert isinstance(node, AggregateNode)
    assert node.mode == "append"
    assert [c.name for c in node.output] == ["k", "t", "v"]
    assert len(node.group_by) == 3
    assert node.watermark_key == "a.t" and node.buffer_types == ()  # no aggregate function
