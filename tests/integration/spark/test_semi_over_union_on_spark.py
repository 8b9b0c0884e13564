"""The Spark facts behind a LEFT SEMI join over a union (``compiler/planning/semi_union.py``),
each seen on Spark 4.3.0 with a query written as a user writes it (the union, then the join):
Spark's optimizer (PushDownLeftSemiAntiJoin, "LeftSemi/LeftAnti over Union") pushes the join
below the union, through a view's filter and projection over it too, so Spark runs one
stream-stream join per union input, each with its own state; a union on the right side is
not pushed; and Spark refuses a stream-stream LeftAnti join, which sjoin writes as a LEFT
OUTER join and a filter (not pushed either).  Each fact is held against what sjoin plans."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.planning.plan import JoinNode, Plan, UnionNode, ViewNode
from sjoin.jvm.spark_driver import StreamDriver
from sjoin.runtime import run

pytestmark = pytest.mark.spark

KTV = "k BIGINT, t TIMESTAMP, v STRING"
ON = "L.k = R.k AND L.t >= R.t AND L.t <= R.t + INTERVAL 5 SECONDS"
WINDOW_ON = "L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)"
METRICS = ("numRowsTotal", "numRowsUpdated", "numRowsRemoved", "numRowsDroppedByWatermark")


def _row(k: int, seconds: int) -> dict[str, Any]:
    return {"k": k, "t": f"2026-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z", "v": "x"}


BATCHES = [
    {"l": [_row(1, 100)], "r": [_row(1, 99)]},
    {"l2": [_row(1, 101), _row(4, 102)], "l3": [_row(1, 103)]},
    {"l": [_row(2, 120)], "l2": [_row(2, 121)], "l3": [_row(5, 122)], "r": [_row(2, 119)]},
    {"r2": [_row(5, 121)], "r": [_row(3, 200)], "l": [_row(3, 201)]},
    {"l2": [_row(3, 150), _row(3, 202)], "l3": [_row(3, 203)], "l": [_row(9, 300)]},
]
# shape -> (the left streams, the right streams, a view with a WHERE over the left union,
# window keys: each side's window projected before the join, as the generated job does)
SHAPES = {
    "union": (("l", "l2"), ("r",), False, False),
    "three inputs": (("l", "l2", "l3"), ("r",), False, False),
    "view over the union": (("l", "l2"), ("r",), True, False),
    "window keys": (("l", "l2"), ("r",), False, True),
    "union on the right": (("l3",), ("r", "r2"), False, False),
}


def _spec(
    left: tuple[str, ...], right: tuple[str, ...], view: bool, how: str, window: bool = False
) -> str:
    lines = ["spark 4.3"]
    lines += [f"stream {s} ({KTV}) watermark t delay 0 seconds" for s in (*left, *right)]
    sides = []
    for union, names in (("lu", left), ("ru", right)):
        if len(names) > 1:
            lines.append(f"union {union} = {' UNION ALL '.join(names)}")
        sides.append(union if len(names) > 1 else names[0])
    if view:
        lines.append(f"view lv = SELECT X.k, X.t, X.v FROM {sides[0]} AS X WHERE X.k <> 4")
        sides[0] = "lv"
    on = WINDOW_ON if window else ON
    lines.append(f"join j = {sides[0]} AS L {how} JOIN {sides[1]} AS R ON {on}")
    lines.append("  SELECT L.k AS k, L.t AS t")
    return "\n".join(lines) + "\n"


def _plan(spec: str) -> Plan:
    result = check_text(spec, "semi.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return result.plan


def _read(plan: Plan, name: str) -> str:
    """The stream a derived join's side reads: itself, or a view's input."""
    node = plan.node(name)
    return node.input if isinstance(node, ViewNode) else name


def _spark_run(
    spark: Any, left: tuple[str, ...], right: tuple[str, ...], view: bool, window: bool
) -> tuple[list[list[tuple[Any, ...]]], str]:
    """The union, then the LEFT SEMI join, as a user writes them with the DataFrame API: each
    batch's state metrics per stateful operator, and the executed plan."""
    from pyspark.sql import functions as F

    streams = (*left, *right)
    with StreamDriver(spark, dict.fromkeys(streams, KTV)) as driver:
        frames = {s: driver.inputs[s].withWatermark("t", "0 seconds") for s in streams}

        def union(names: tuple[str, ...]) -> Any:
            out = frames[names[0]]
            for name in names[1:]:
                out = out.union(frames[name])
            return out

        lhs = union(left)
        if view:
            lhs = lhs.alias("X").where(F.expr("X.k <> 4")).select("k", "t", "v")
        rhs = union(right)
        on = ON
        if window:  # the window as a column, the raw time without its mark (docs/language.md)
            lhs, rhs = (
                side.withColumn("w", F.window("t", "10 seconds")).withColumn(
                    "t", F.expr("timestamp_micros(unix_micros(t))")
                )
                for side in (lhs, rhs)
            )
            on = "L.k = R.k AND L.w = R.w"
        joined = lhs.alias("L").join(rhs.alias("R"), F.expr(on), "left_semi")
        driver.start(joined.select(F.expr("L.k").alias("k"), F.expr("L.t").alias("t")))
        for batch in BATCHES:
            feed = {s: rows for s, rows in batch.items() if s in streams}
            if feed:
                driver.feed(feed)
        metrics = [
            [tuple(op[m] for m in METRICS) for op in b.state_operators] for b in driver.results()
        ]
        return metrics, driver.executed_plan()


@pytest.mark.parametrize("shape", list(SHAPES))
def test_spark_pushes_a_left_semi_join_below_the_union_on_its_left(spark: Any, shape: str) -> None:
    left, right, view, window = SHAPES[shape]
    spark_metrics, executed = _spark_run(spark, left, right, view, window)
    joins = executed.count("StreamingSymmetricHashJoin")
    pushed = len(left) if len(left) > 1 else 1
    assert joins == pushed, executed
    assert executed.count("LeftSemi") == pushed
    assert all(len(ops) == pushed for ops in spark_metrics)
    plan = _plan(_spec(left, right, view, "LEFT SEMI", window))
    operators = plan.stateful_operators("j")
    assert len(operators) == pushed
    root = plan.node("j")
    if len(left) > 1:  # the union j of one join per input, each reading that input
        assert isinstance(root, UnionNode) and root.pushed_join is not None
        assert root.pushed_join.union == "lu"
        reads = [_read(plan, j.left.relation) for j in operators if isinstance(j, JoinNode)]
        assert reads == list(left)
    else:
        assert isinstance(root, JoinNode) and root.right.relation == "ru"
    # the state metrics of each of Spark's joins, batch by batch, are the runtime's
    trace = [
        {"batch": i, "stream": s, "row": r}
        for i, batch in enumerate(BATCHES)
        for s, rows in batch.items()
        if s in (*left, *right)
        for r in rows
    ]
    runtime = run(plan, trace, relation="j")
    names = [op.name for op in operators]
    ours = [
        [
            tuple(by[n][m] for m in METRICS)
            for by in [{op["relation"]: op for op in b.progress["operators"]}]
            for n in names
        ]
        for b in runtime.batches
    ]
    assert ours == spark_metrics


def test_spark_refuses_a_stream_stream_left_anti_join_so_nothing_is_pushed(spark: Any) -> None:
    from pyspark.sql import functions as F

    with StreamDriver(spark, {"l": KTV, "r": KTV}) as driver:
        lhs = driver.inputs["l"].withWatermark("t", "0 seconds").alias("L")
        rhs = driver.inputs["r"].withWatermark("t", "0 seconds").alias("R")
        with pytest.raises(Exception, match="LeftAnti joins with a streaming") as caught:
            driver.start(lhs.join(rhs, F.expr(ON), "left_anti"))
            driver.feed({"l": [_row(1, 100)]})
    assert "are not supported" in str(caught.value)
    # sjoin writes LEFT ANTI as a LEFT OUTER join (and a filter), which Spark's rule does not
    # push: one join over the union (its parity scenario: union_below_a_left_anti_join)
    plan = _plan(_spec(("l", "l2"), ("r",), False, "LEFT ANTI"))
    (join,) = plan.stateful_operators("j")
    assert isinstance(join, JoinNode) and join.executed_as == "left_outer"
    assert join.left.relation == "lu"
