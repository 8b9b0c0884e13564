"""Behaviour that depends on the target Spark version, checked against the reference's
worked examples (spark-stream-join-semantics.md; those numbers come from real runs of
PySpark 3.3.4, 3.4.4, 3.5.1, 3.5.9, 4.0.1, 4.1.4, 4.2.1 and 4.3.0)."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.compiler.planning.planner import join_quirks
from sjoin.compiler.vocabulary.model import SparkVersion
from sjoin.runtime import run
from sjoin.runtime.query import Query

from .harness import plan_of, trace_records
from .scenarios import RANGE, range_spec, row

NO_DATA_OFF = "set no_data_micro_batches = false\n"


def batches_of(
    spec: str, batches: list[dict[str, Any]]
) -> list[tuple[list[tuple[Any, ...]], tuple[int, ...]]]:
    """Per executed batch: the output rows as (lv, rv) pairs and (total, upd, rem, dropped)."""
    result = run(plan_of(spec), trace_records(batches))
    out = []
    for b in result.batches:
        (op,) = b.progress["operators"]
        rows = sorted(((r.get("lv"), r.get("rv")) for _, r in b.rows), key=repr)
        metrics = (
            op["numRowsTotal"],
            op["numRowsUpdated"],
            op["numRowsRemoved"],
            op["numRowsDroppedByWatermark"],
        )
        out.append((rows, metrics))
    return out


def test_spark_49829_versions() -> None:
    fixed = {
        "3.3.4": False,
        "3.4.3": False,
        "3.4.4": True,
        "3.5.1": False,
        "3.5.8": False,
        "3.5.9": True,
        "3.5": True,
        "4.0.0": True,
        "4.3": True,
    }
    for text, want in fixed.items():
        parts = [int(p) for p in text.split(".")]
        version = SparkVersion(parts[0], parts[1], parts[2] if len(parts) > 2 else None)
        assert join_quirks(version).append_rule is want, text


INNER_17 = [
    {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
    {"l": [row(1, 80, "c")], "r": [row(1, 75, "d"), row(2, 95, "e")]},
]


@pytest.mark.parametrize(
    ("version", "rows", "upd", "rem"),
    [
        ("3.5.1", [], 1, 0),  # old rule: L80 is not stored, the (c, d) match is lost
        ("3.4.4", [("c", "d")], 2, 1),
        ("3.5.9", [("c", "d")], 2, 1),
        ("4.0.1", [("c", "d")], 2, 1),
        ("4.3.0", [("c", "d")], 2, 1),
    ],
)
def test_append_rule_inner_reference_1_7(version: str, rows: list[Any], upd: int, rem: int) -> None:
    spec = range_spec("INNER", header=f"spark {version}\n{NO_DATA_OFF}")
    got = batches_of(spec, INNER_17)
    assert got[1][0] == rows
    assert got[1][1][1:3] == (upd, rem)


@pytest.mark.parametrize(
    ("version", "rows", "upd", "rem"),
    [
        ("3.5.1", [], 0, 0),  # old rule: R75 is never stored, never output
        ("4.0.1", [(None, "d")], 1, 0),  # stored, evicted at once, output null-padded
        ("4.3.0", [(None, "d")], 1, 1),  # 4.3 also counts the preserved side's eviction
    ],
)
def test_append_rule_right_outer_reference_1_7(
    version: str, rows: list[Any], upd: int, rem: int
) -> None:
    spec = range_spec("RIGHT OUTER", header=f"spark {version}\n{NO_DATA_OFF}")
    got = batches_of(spec, [INNER_17[0], {"r": [row(1, 75, "d")]}])
    assert got[1][0] == rows
    assert got[1][1][1:3] == (upd, rem)


@pytest.mark.parametrize(
    ("version", "c_out", "upd"),
    [("3.3.4", [], 0), ("3.5.1", [], 0), ("3.4.4", [("c", None)], 1), ("4.0.1", [("c", None)], 1)],
)
def test_positive_offset_reference_1_7(version: str, c_out: list[Any], upd: int) -> None:
    condition = "L.k = R.k AND L.t BETWEEN R.t + INTERVAL 5 SECONDS AND R.t + INTERVAL 20 SECONDS"
    spec = range_spec("LEFT OUTER", condition, header=f"spark {version}\n")
    got = batches_of(
        spec,
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"l": [row(2, 92, "c")]},
            {"l": [row(3, 200, "d")], "r": [row(3, 200, "e")]},
        ],
    )
    assert got[2][0] == c_out and got[2][1][1] == upd
    assert got[4][0] == [("a", None)]  # every version: a comes out once W passes it


@pytest.mark.parametrize(
    ("version", "dropped"), [("3.3.4", 2), ("3.4.4", 0), ("3.5.1", 0), ("4.0.1", 0), ("4.3.0", 0)]
)
def test_late_rows_watermark_reference_1_3(version: str, dropped: int) -> None:
    spec = range_spec("INNER", header=f"spark {version}\n{NO_DATA_OFF}")
    got = batches_of(spec, [INNER_17[0], {"l": [row(1, 80, "c")], "r": [row(1, 75, "d")]}])
    assert got[1][1][3] == dropped


@pytest.mark.parametrize(
    ("version", "removed"),
    [("3.3.4", 1), ("3.5.1", 1), ("4.0.1", 1), ("4.1.4", 1), ("4.2.1", 1), ("4.3.0", 3)],
)
def test_left_outer_removed_count_reference_1_8(version: str, removed: int) -> None:
    spec = range_spec("LEFT OUTER", header=f"spark {version}\n")
    got = batches_of(
        spec,
        [
            {"l": [row(1, 100, "a"), row(2, 100, "x")], "r": [row(1, 100, "b")]},
            {"l": [row(3, 130, "y")], "r": [row(3, 130, "z")]},
        ],
    )
    assert [g[0] for g in got] == [[("a", "b")], [], [("y", "z")], [("x", None)]]
    assert got[3][1] == (2, 0, removed, 0)


@pytest.mark.parametrize(("version", "removed"), [("4.0.1", 0), ("4.3.0", 2)])
def test_full_outer_removed_count_reference_1_9(version: str, removed: int) -> None:
    spec = range_spec("FULL OUTER", header=f"spark {version}\n")
    got = batches_of(
        spec,
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"l": [row(3, 130, "y")], "r": [row(3, 130, "z")]},
        ],
    )
    assert got[3][1][:3] == (2, 0, removed)  # total 4 -> 2


SEMI_SPEC = "SELECT L.k AS lk, L.t AS lt, L.v AS lv"


@pytest.mark.parametrize(
    ("version", "first", "second"),
    [
        ("4.1.4", (3, 3, 0), (2, 1, 0)),
        ("4.2.1", (2, 2, 0), (1, 1, 1)),
        ("4.3.0", (2, 2, 0), (1, 1, 1)),
    ],
)
def test_left_semi_order_reference_1_2(version: str, first: Any, second: Any) -> None:
    spec = range_spec("LEFT SEMI", header=f"spark {version}\n").replace(
        "SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.k AS rk, R.t AS rt, R.v AS rv", SEMI_SPEC
    )
    got = batches_of(spec, [{"l": [row(1, 100, "a")], "r": [row(1, 100, "b"), row(1, 101, "c")]}])
    assert got[0][0] == [("a", None)] and got[0][1][:3] == first
    got = batches_of(spec, [{"l": [row(1, 100, "a")]}, {"r": [row(1, 101, "b")]}])
    assert got[1][0] == [("a", None)] and got[1][1][:3] == second


def test_semi_old_append_rule_keeps_each_left_row_once() -> None:
    spec = range_spec("LEFT SEMI", header="spark 3.5.1\n").replace(
        "SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.k AS rk, R.t AS rt, R.v AS rv", SEMI_SPEC
    )
    got = batches_of(
        spec,
        [
            {"l": [row(1, 100, "a")]},
            {"r": [row(1, 101, "b"), row(1, 102, "c")]},
            {"r": [row(1, 103, "d")]},
        ],
    )
    assert [g[0] for g in got] == [[], [("a", None)], [], []]  # batch 2: no-data


CHAIN = """spark {version}
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R ON {range}
  SELECT L.k AS k, L.t AS t, L.v AS lv
aggregate agg = j AS J GROUP BY window(J.t, INTERVAL 10 SECONDS)
  SELECT window(J.t, INTERVAL 10 SECONDS) AS w, count(*) AS n
"""


def test_propagated_watermarks_reference_4_3() -> None:
    """4.0.1: in batch 3 (W=120 000, previous 90 000) the join uses 90 000 / 120 000 and
    the aggregation 79 999 / 109 999 (the join's output watermarks)."""
    plan = plan_of(CHAIN.format(version="4.0", range=RANGE))
    rules = Query(plan, "agg", ["agg"]).rules
    assert (rules.late("j", 90_000, 120_000), rules.eviction("j", 120_000)) == (90_000, 120_000)
    assert (rules.late("agg", 90_000, 120_000), rules.eviction("agg", 120_000)) == (
        79_999,
        109_999,
    )
    assert rules.eviction("agg", 0) == 0  # a global watermark of 0 is not propagated


def test_watermarks_per_version_without_propagation() -> None:
    plan = plan_of(CHAIN.format(version="3.3", range="L.k = R.k AND L.t = R.t"))
    rules = Query(plan, "agg", ["agg"]).rules
    assert (rules.late("agg", 90_000, 120_000), rules.eviction("agg", 120_000)) == (
        120_000,
        120_000,
    )
    spec = range_spec("INNER", header="spark 3.4\n")
    rules = Query(plan_of(spec), "j", ["j"]).rules
    assert (rules.late("j", 90_000, 120_000), rules.eviction("j", 120_000)) == (90_000, 120_000)
    spec = range_spec("INNER", header="spark 4.3\nset allow_multiple_stateful_operators = false\n")
    rules = Query(plan_of(spec), "j", ["j"]).rules
    assert (rules.late("j", 90_000, 120_000), rules.eviction("j", 120_000)) == (
        120_000,
        120_000,
    )
