"""The Spark facts behind window(...).start/.end and E029/E030 (issue 16), on real Spark.

- window() inside a join condition does not resolve (TimeWindowing rewrites operators with
  one child), so the back end writes a window field in a condition as arithmetic on the
  time column;
- two different windows in one projection are rejected (E029);
- a window of the null-padded side's time in an outer join's SELECT filters isnotnull(time)
  above the join, and the optimizer runs the join as Inner (E030).
"""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.jvm.spark_driver import parse_join_plan, run_batches

pytestmark = pytest.mark.spark

SCHEMAS = {"a": "k BIGINT, t TIMESTAMP", "b": "k BIGINT, t TIMESTAMP"}
BATCHES = [
    {"a": [{"k": 1, "t": "2026-01-01T00:00:30Z"}], "b": [{"k": 1, "t": "2026-01-01T00:00:10Z"}]},
    {"a": [], "b": [{"k": 2, "t": "2026-01-01T00:05:00Z"}]},
]
RANGE = "a.k = b.k AND a.t BETWEEN b.t - INTERVAL 1 MINUTE AND b.t + INTERVAL 1 MINUTE"


def _sides(inputs: dict[str, Any]) -> tuple[Any, Any]:
    a = inputs["a"].withWatermark("t", "10 seconds").alias("a")
    b = inputs["b"].withWatermark("t", "10 seconds").alias("b")
    return a, b


def test_window_in_a_join_condition_does_not_resolve(spark: Any) -> None:
    from pyspark.sql import functions as F

    def build(inputs: dict[str, Any]) -> Any:
        a, b = _sides(inputs)
        on = "a.k = b.k AND b.t >= window(a.t, '1 minute').start"
        return a.join(b, F.expr(on)).select("a.k")

    with pytest.raises(Exception, match=r"INTERNAL_ERROR|unresolved"):
        run_batches(spark, SCHEMAS, build, BATCHES)


def test_two_windows_in_one_select_are_rejected(spark: Any) -> None:
    from pyspark.sql import functions as F

    def build(inputs: dict[str, Any]) -> Any:
        a, b = _sides(inputs)
        return a.join(b, F.expr(RANGE)).select(
            F.expr("window(a.t, '1 minute')").alias("wa"),
            F.expr("window(b.t, '1 minute')").alias("wb"),
        )

    with pytest.raises(Exception, match="Multiple time/session window expressions"):
        run_batches(spark, SCHEMAS, build, BATCHES)


@pytest.mark.parametrize(
    ("how", "windowed", "runs_as"),
    [
        ("right_outer", "a", "Inner"),
        ("right_outer", "b", "RightOuter"),
        ("left_outer", "b", "Inner"),
        ("full_outer", "a", "LeftOuter"),
    ],
)
def test_a_window_of_the_null_padded_side_makes_the_join_inner(
    spark: Any, how: str, windowed: str, runs_as: str
) -> None:
    from pyspark.sql import functions as F

    def build(inputs: dict[str, Any]) -> Any:
        a, b = _sides(inputs)
        return a.join(b, F.expr(RANGE), how).select(
            F.col("b.k").alias("k"), F.expr(f"window({windowed}.t, '1 minute').start").alias("ws")
        )

    result = run_batches(spark, SCHEMAS, build, BATCHES)
    (join,) = parse_join_plan(result.plan)
    assert join["join_type"] == runs_as
