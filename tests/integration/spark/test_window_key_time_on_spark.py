"""The Spark fact behind E023 on a window-key join's time column: a join side that projects
a window for its key keeps one event-time column, the window, and its time column is
recomputed without watermark metadata (the generated job's ``timestamp_micros(unix_micros(t))``;
Spark 3.5+ refuses two event-time columns on a side).  An aggregate in Append mode that
groups by a window of that time column then has no watermark, and Spark refuses it; grouping
by the window the join outputs keeps the watermark and runs."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.spark_driver import run_batches

pytestmark = pytest.mark.spark

SCHEMAS = {"a": "k BIGINT, t TIMESTAMP", "b": "k BIGINT, t TIMESTAMP"}
BATCHES = [
    {"a": [{"k": 1, "t": "2026-01-01T00:00:30Z"}], "b": [{"k": 1, "t": "2026-01-01T00:00:35Z"}]},
]
SPEC = """spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
join j = a AS L INNER JOIN b AS R
  ON L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)
  SELECT L.k AS k, L.t AS t, window(L.t, INTERVAL 10 SECONDS) AS w
aggregate g = j AS x GROUP BY x.k, {key}
  SELECT x.k AS k, count(*) AS n
  OUTPUT MODE append
"""


def _build(key: str) -> Any:
    """The generated job's shape: each side's window projected, its time recomputed."""
    from pyspark.sql import functions as F

    def build(inputs: dict[str, Any]) -> Any:
        sides = []
        for name in ("a", "b"):
            side = inputs[name].withWatermark("t", "10 seconds")
            side = side.select(
                "k",
                F.expr("timestamp_micros(unix_micros(t))").alias("t"),
                F.window("t", "10 seconds").alias("w"),
            )
            sides.append(side.alias("L" if name == "a" else "R"))
        left, right = sides
        joined = left.join(right, F.expr("L.k = R.k AND L.w = R.w")).select(
            F.col("L.k").alias("k"), F.col("L.t").alias("t"), F.col("L.w").alias("w")
        )
        return joined.groupBy("k", F.expr(key).alias("g")).count()

    return build


def test_a_window_of_the_recomputed_time_has_no_watermark(spark: Any) -> None:
    with pytest.raises(Exception, match=r"without watermark"):
        run_batches(spark, SCHEMAS, _build("window(t, '1 minute')"), BATCHES, "append")
    result = check_text(SPEC.format(key="window(x.t, INTERVAL 1 MINUTE)"), "g.sjoin")
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["E023"]


def test_the_joins_output_window_keeps_it(spark: Any) -> None:
    run_batches(spark, SCHEMAS, _build("w"), BATCHES, "append")
    result = check_text(SPEC.format(key="x.w"), "g.sjoin")
    assert result.ok, [d.message for d in result.diagnostics]
