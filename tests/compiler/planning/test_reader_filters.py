"""A reader's null-rejecting filter over an outer join (compiler/planning/readers.py): which
join Spark runs (EliminateOuterJoin), which isnotnull it pushes into which side, what W015
says and `sjoin plan` shows.  Each join type here is the one Spark 4.3.0's optimized plan
shows for the same query (tests/integration/spark/test_reader_filters_on_spark.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.describe.explain import plan_json, plan_text

HEAD = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream m (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
table d (k BIGINT, name STRING) from parquet (path = 'd')
"""
ON = "ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS"
SELECT = "SELECT L.k AS lk, L.t AS lt, R.k AS rk, R.t AS rt"


def join(how: str, select: str = SELECT) -> str:
    return f"join j = l AS L {how} JOIN r AS R {ON}\n  {select}\n"


def window(reads: str, column: str, extra: str = "") -> str:
    return (
        f"aggregate a = {reads} AS A{extra} GROUP BY window(A.{column}, INTERVAL 10 SECONDS)\n"
        f"  SELECT window(A.{column}, INTERVAL 10 SECONDS) AS w, count(*) AS n\n"
        "  OUTPUT MODE append\n"
    )


def _plan(text: str, relation: str | None = None) -> Any:
    result = check_text(HEAD + text, "readers.sjoin", relation)
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    assert result.plan is not None
    return result


ONLY_LK = "SELECT L.k AS lk, R.k AS rk, R.t AS rt"
# (the spec after the streams, what Spark 4.3 runs `j` as)
CASES = {
    # an aggregate's window() of a null-padded column: TimeWindowing's isnotnull
    "right outer, window of the left time": (join("RIGHT OUTER") + window("j", "lt"), "inner"),
    "left outer, window of the right time": (join("LEFT OUTER") + window("j", "rt"), "inner"),
    "full outer, window of the left time": (join("FULL OUTER") + window("j", "lt"), "left_outer"),
    "full outer, window of the right time": (
        join("FULL OUTER") + window("j", "rt"),
        "right_outer",
    ),
    "right outer, window of the preserved side": (
        join("RIGHT OUTER") + window("j", "rt"),
        "right_outer",
    ),
    "left outer, window of the preserved side": (
        join("LEFT OUTER") + window("j", "lt"),
        "left_outer",
    ),
    "through a view that renames the column": (
        join("RIGHT OUTER")
        + "view v = SELECT J.lt AS x, J.rk AS rk FROM j AS J\n"
        + window("v", "x"),
        "inner",
    ),
    "through an INNER stream-static join": (
        join("RIGHT OUTER")
        + "join e = j AS J INNER JOIN d AS D ON J.rk = D.k\n  SELECT J.lt AS lt, D.name AS n\n"
        + window("e", "lt"),
        "inner",
    ),
    "through a union": (
        join("RIGHT OUTER")
        + join("RIGHT OUTER").replace("join j =", "join j2 =")
        + "union u = j UNION ALL j2\n"
        + window("u", "lt"),
        "inner",
    ),
    # a join's inferred isnotnull of a null-padded key
    "an INNER stream-static join on the left key": (
        join("RIGHT OUTER", ONLY_LK) + "join e = j AS J INNER JOIN d AS D ON J.lk = D.k\n",
        "inner",
    ),
    "a LEFT SEMI stream-static join on the left key": (
        join("RIGHT OUTER", ONLY_LK) + "join e = j AS J LEFT SEMI JOIN d AS D ON J.lk = D.k\n",
        "inner",
    ),
    "a LEFT OUTER stream-static join on the left key": (
        join("RIGHT OUTER", ONLY_LK) + "join e = j AS J LEFT OUTER JOIN d AS D ON J.lk = D.k\n",
        "right_outer",
    ),
    "an INNER stream-stream join on the right key": (
        join("LEFT OUTER", "SELECT L.k AS lk, L.t AS lt, R.k AS rk")
        + "join e = j AS J INNER JOIN m AS M\n"
        + "  ON J.rk = M.k AND M.t BETWEEN J.lt AND J.lt + INTERVAL 5 SECONDS\n",
        "inner",
    ),
    # what stops the filter
    "a dedup between": (
        join("RIGHT OUTER", "SELECT L.k AS lk, L.t AS lt, R.k AS rk")
        + "dedup dd = j ON (lk, lt)\n"
        + window("dd", "lt"),
        "right_outer",
    ),
    "a watermark on the windowed column where the aggregate reads it": (
        "set allow_multiple_stateful_operators = false\n"
        + join("RIGHT OUTER", "SELECT L.k AS lk, L.t AS lt, R.k AS rk")
        + window("j", "lt", " watermark lt delay 0 seconds"),
        "right_outer",
    ),
    "the join is a query of its own (a sink)": (
        join("RIGHT OUTER") + window("j", "lt") + "sink j to memory\nsink a to memory\n",
        "right_outer",
    ),
    "another reader keeps the null-padded rows": (
        join("RIGHT OUTER")
        + window("j", "lt")
        + "view v = SELECT J.lk, J.rk FROM j AS J\nsink a to memory\nsink v to memory\n",
        "right_outer",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_join_runs_as_spark_runs_it(name: str) -> None:
    text, runs = CASES[name]
    result = _plan(text)
    j = result.plan.node("j")
    assert j.executed_as == runs
    converted = runs != j.join_type
    said = [d for d in result.diagnostics if d.code == "W015" and "join `j` " in d.message]
    assert len(said) == (1 if converted else 0)
    readers = [w for w in j.padded_windows if w.reader is not None]
    assert bool(readers) == converted
    found = plan_json(result.plan, [])["joins"][0]
    assert ("reader_filters" in found) == converted


def test_the_filter_is_pushed_into_the_side_and_preserved_sides_too() -> None:
    converted = _plan(join("RIGHT OUTER") + window("j", "lt")).plan.node("j")
    # TimeWindowing's isnotnull(L.t), and the keys an INNER join infers on both sides
    assert converted.left.not_null == ("k", "t") and converted.right.not_null == ("k", "t")
    assert not converted.left.preserved and not converted.right.preserved
    assert converted.null_rows == ()
    kept = _plan(join("RIGHT OUTER") + window("j", "rt")).plan.node("j")
    # the window of the preserved side: Spark pushes isnotnull(R.t) into it, above its
    # watermark node (the filter reads the watermarked column)
    assert kept.right.preserved and kept.right.not_null == ("t",)
    assert kept.right.not_null_above_watermark == ("t",)


def test_run_as_its_own_query_the_join_keeps_its_type() -> None:
    text = join("RIGHT OUTER") + window("j", "lt")
    assert _plan(text).plan.node("j").executed_as == "inner"
    # `--relation j`: the query rooted at j has no aggregate above it
    assert _plan(text, relation="j").plan.node("j").executed_as == "right_outer"


def test_w015_points_at_the_window() -> None:
    text = join("RIGHT OUTER") + window("j", "lt")
    result = _plan(text)
    (w015,) = [d for d in result.diagnostics if d.code == "W015"]
    source = HEAD + text
    assert source[w015.span.start : w015.span.end] == "window(A.lt, INTERVAL 10 SECONDS)"
    assert "`a` groups by a window of `L.t`" in w015.message
    assert "runs it as INNER" in w015.message
    assert w015.severity == "warning"


def test_the_plan_says_why(text_snapshot: Any) -> None:
    result = _plan(
        join("RIGHT OUTER")
        + "view v = SELECT J.lt AS x, J.rk AS rk FROM j AS J\n"
        + window("v", "x")
    )
    found = plan_json(result.plan, [])["joins"][0]["reader_filters"]
    shown = plan_text(result.plan) + "\n---\n" + json.dumps(found, indent=2, sort_keys=True)
    assert "EliminateOuterJoin: `a`'s window() (TimeWindowing's isnotnull(L.t))" in shown
    assert shown == text_snapshot


def test_the_job_writes_the_join_spark_runs() -> None:
    from sjoin.compiler.backends.pyspark import compile_pyspark

    job = compile_pyspark(_plan(join("RIGHT OUTER") + window("j", "lt")).plan)
    assert '"inner",' in job


def test_a_join_run_as_inner_says_so_in_its_late_output_and_w005() -> None:
    """What the plan says of the join follows the join Spark runs: an outer join a reader's
    filter runs as INNER emits no null-padded rows, and a FULL OUTER join run narrower
    infers isnotnull of a side's keys, so NULL keys no longer match (no W005)."""
    inner = _plan(join("RIGHT OUTER") + window("j", "lt")).plan.node("j")
    assert inner.executed_as == "inner"
    assert "outer rows" not in inner.late_rows_reason
    assert inner.late_rows_reason.startswith("a time-interval join matches")
    written = _plan(join("RIGHT OUTER")).plan.node("j")
    assert written.late_rows_reason.startswith("outer rows are emitted")
    full = _plan(join("FULL OUTER") + window("j", "lt"))
    assert full.plan.node("j").executed_as == "left_outer"
    assert "W005" not in [d.code for d in full.diagnostics]
    assert "W005" in [d.code for d in _plan(join("FULL OUTER")).diagnostics]
