"""The aggregate operator: accumulators, output expressions, modes and state snapshots."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sjoin.runtime import run
from sjoin.runtime.operators import columns_of
from sjoin.runtime.rows.aggregate import AggregateOperator

from ..harness import plan_of, trace_records, ts

STREAM = (
    "spark 4.3\nstream s (k STRING, t TIMESTAMP, x DOUBLE, d DECIMAL(6, 2)) "
    "watermark t delay 10 seconds\n"
)


def aggregate(select: str, group_by: str = "S.k", mode: str = "complete") -> AggregateOperator:
    plan = plan_of(
        STREAM + f"aggregate a = s AS S GROUP BY {group_by} SELECT {select} OUTPUT MODE {mode}\n"
    )
    (node,) = plan.aggregates
    source = plan.node("s")
    assert source is not None
    return AggregateOperator(node, columns_of(source), True)


def srow(k: Any, seconds: float, x: float | None = None, d: str | None = None) -> tuple[Any, ...]:
    return (k, int(seconds * 1_000_000), x, None if d is None else Decimal(d))


def test_accumulators_follow_spark() -> None:
    op = aggregate(
        "S.k AS k, count(*) AS n, count(S.x) AS nx, sum(S.x) AS sx, avg(S.x) AS ax, "
        "min(S.x) AS lo, max(S.x) AS hi, sum(S.d) AS sd, avg(S.d) AS ad, "
        "approx_count_distinct(S.x) AS dx"
    )
    nan = float("nan")
    rows = [
        srow("a", 1, 1.0, "1.10"),
        srow("a", 2, None, "2.20"),
        srow("a", 3, 3.0, None),
        srow("a", 4, 3.0, "0.01"),
        srow("b", 5, nan, None),
    ]
    out, m = op.process(rows, None, None)
    by_key = {r[0]: r for r in out}
    assert by_key["a"] == ("a", 4, 3, 7.0, 7 / 3, 1.0, 3.0, Decimal("3.31"), Decimal("1.103333"), 2)
    b = by_key["b"]
    assert b[1:3] == (1, 1) and b[3] != b[3] and b[5] != b[5] and b[6] != b[6]  # NaN
    assert b[7] is None and b[8] is None and b[9] == 1
    assert (m.num_rows_total, m.num_rows_updated) == (2, 2)


def test_output_expressions_over_keys_and_aggregates() -> None:
    op = aggregate("upper(S.k) AS key, sum(S.x) / count(*) AS mean, count(*) + 1 AS n1")
    out, _ = op.process([srow("a", 1, 2.0), srow("a", 2, 4.0)], None, None)
    assert out == [("A", 3.0, 3)]


def test_modes_and_eviction() -> None:
    window = "window(S.t, INTERVAL 10 SECONDS)"
    for mode, first, second in (
        ("append", [], [("[100, 110)", 2)]),
        ("update", [("[100, 110)", 2)], []),
        ("complete", [("[100, 110)", 2)], [("[100, 110)", 2)]),
    ):
        op = aggregate(f"{window} AS w, count(*) AS n", group_by=window, mode=mode)
        out, m = op.process([srow("a", 101), srow("a", 105)], 0, 0)
        assert [(f"[{r[0][0] // 10**6}, {r[0][1] // 10**6})", r[1]) for r in out] == first
        out, m = op.process([], 0, 110_000)
        assert [(f"[{r[0][0] // 10**6}, {r[0][1] // 10**6})", r[1]) for r in out] == second
        assert m.num_rows_removed == (0 if mode == "complete" else 1)


def test_late_groups_are_dropped_once_per_group() -> None:
    window = "window(S.t, INTERVAL 10 SECONDS)"
    op = aggregate(f"{window} AS w, count(*) AS n", group_by=window, mode="update")
    out, m = op.process([srow("a", 101), srow("a", 102), srow("a", 95), srow("a", 125)], 110_000, 0)
    assert m.num_rows_dropped_by_watermark == 2  # windows [90,100) and [100,110)
    assert [r[1] for r in out] == [1]


def test_snapshot_round_trip() -> None:
    window = "window(S.t, INTERVAL 10 SECONDS)"
    select = f"{window} AS w, count(*) AS n, approx_count_distinct(S.k) AS keys"
    op = aggregate(select, group_by=window, mode="append")
    op.process([srow("a", 101), srow("b", 102), srow("a", 111)], 0, 0)
    copy = aggregate(select, group_by=window, mode="append")
    copy.restore(op.snapshot())
    out, m = copy.process([srow("c", 103)], 0, 110_000)
    assert [(r[1], r[2]) for r in out] == [(3, 3)]
    assert (m.num_rows_total, m.num_rows_removed) == (1, 1)


def test_aggregate_after_a_join_emits_per_batch_with_its_own_relation() -> None:
    spec = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R ON L.k = R.k AND L.t = R.t SELECT L.k AS k, L.t AS t
aggregate a = j AS J GROUP BY window(J.t, INTERVAL 10 SECONDS)
  SELECT window(J.t, INTERVAL 10 SECONDS) AS w, count(*) AS n
"""
    rows = [{"k": 1, "t": ts(101), "v": "a"}, {"k": 2, "t": ts(102), "v": "b"}]
    later = [{"k": 3, "t": ts(200), "v": "c"}]
    result = run(plan_of(spec), trace_records([{"l": rows, "r": rows}, {"l": later, "r": later}]))
    assert result.relations == ["j", "a"]
    assert len(result.rows("j")) == 3
    assert result.rows("a") == [
        {"w": {"start": "1970-01-01T00:01:40Z", "end": "1970-01-01T00:01:50Z"}, "n": 2}
    ]
