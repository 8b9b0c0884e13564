"""The filters a join's side pushes into the join below it (``Planner._pushed_from_join``):
which conjuncts go down, into which side, what EliminateOuterJoin makes of them, and where
nothing is pushed.  Spark's side of it runs in the parity scenarios
``join_side_filter_pushed_into_a_join_below`` and
``join_side_filter_into_an_outer_join_below`` (checked on Spark 4.3: before, the lower
join stored 6 rows in the runtime where Spark stored 4 and 3)."""

from __future__ import annotations

from typing import Any

from sjoin.api import check_text
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.planning.plan import JoinNode

HEAD = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream m (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
"""
LOWER = (
    "join i = l AS A {how}JOIN m AS B\n"
    "  ON A.k = B.k AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS\n"
    "  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv\n"
)
RANGE = "L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS"
UPPER = "join j = i AS L {how}JOIN r AS R ON {on}\n  SELECT L.k AS k, L.t AS lt, R.t AS rt\n"


def _spec(extra: str, lower: str = "", upper: str = "", tail: str = "") -> str:
    return HEAD + LOWER.format(how=lower) + UPPER.format(how=upper, on=RANGE + extra) + tail


def _plan(text: str, relation: str | None = None) -> Any:
    result = check_text(text, "pushdown.sjoin", relation=relation)
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    assert result.plan is not None
    return result.plan


def _join(plan: Any, name: str) -> JoinNode:
    node = plan.node(name)
    assert isinstance(node, JoinNode)
    return node


def _sql(part: Any) -> str | None:
    return None if part is None else part.sql(dialect="spark")


def test_a_left_only_conjunct_goes_into_the_join_below_through_its_projection() -> None:
    plan = _plan(_spec(" AND L.v <> 'b' AND R.v <> 'q'"))
    lower, upper = _join(plan, "i"), _join(plan, "j")
    # L.v is i's `A.v AS v`: the filter runs on i's left input, below l's watermark node
    assert _sql(lower.left.pushed_filter) == "A.v <> 'b'"
    assert _sql(lower.left.filters_below_watermark[0]) == "A.v <> 'b'"
    assert lower.right.pushed_filter is None
    assert lower.where is None  # the back ends write each condition where it is written
    # the join above still runs it on its side, and says where it went
    assert _sql(upper.left.pushed_filter) == "L.v <> 'b'"
    assert upper.left.filters_pushed_into == "i"
    assert upper.right.filters_pushed_into is None  # r is a stream
    text = plan_text(plan)
    assert (
        "where from       the left side's filters of join j, pushed through this join's "
        "projection (PushPredicateThroughNonJoin)" in text
    )
    assert "L.v <> 'b' (pushed below the join, and on into join i)" in text
    sides = {j["name"]: j["sides"] for j in plan_json(plan, [])["joins"]}
    assert sides["j"]["left"]["filters_pushed_into"] == "i"
    assert "filters_pushed_into" not in sides["j"]["right"]
    assert "filters_pushed_into" not in sides["i"]["left"]


def test_a_null_rejecting_conjunct_runs_an_outer_join_below_as_inner() -> None:
    plan = _plan(_spec(" AND L.mv <> 'z'", lower="LEFT OUTER "))
    lower = _join(plan, "i")
    assert lower.executed_as == "inner"
    assert _sql(lower.right.pushed_filter) == "B.v <> 'z'"


def test_a_preserved_sides_conjunct_stays_in_the_outer_join_above() -> None:
    # j's left side is preserved: its left-only conjunct is no filter of i's rows
    plan = _plan(_spec(" AND L.v <> 'b'", upper="LEFT OUTER "))
    assert _join(plan, "i").left.pushed_filter is None
    assert _join(plan, "j").left.filters_pushed_into is None


def test_a_where_on_the_join_above_goes_down_too() -> None:
    text = (
        HEAD
        + LOWER.format(how="")
        + (
            f"join j = i AS L JOIN r AS R ON {RANGE} WHERE L.v <> 'b'\n"
            "  SELECT L.k AS k, L.t AS lt, R.t AS rt\n"
        )
    )
    assert _sql(_join(_plan(text), "i").left.pushed_filter) == "A.v <> 'b'"


def test_a_chain_pushes_on_into_the_join_below_the_next() -> None:
    text = (
        HEAD
        + "stream s (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds\n"
        + LOWER.format(how="")
        + UPPER.format(how="", on=RANGE).replace("SELECT L.k AS k,", "SELECT L.k AS k, L.v AS v,")
        + "join top = j AS X JOIN s AS S ON X.k = S.k AND X.lt BETWEEN S.t AND S.t + "
        "INTERVAL 5 SECONDS AND X.v <> 'b'\n  SELECT X.k AS k, S.t AS st\n"
    )
    plan = _plan(text)
    assert _sql(_join(plan, "j").left.pushed_filter) == "L.v <> 'b'"
    assert _sql(_join(plan, "i").left.pushed_filter) == "A.v <> 'b'"


def test_nothing_is_pushed_into_a_join_that_is_a_query_of_its_own() -> None:
    extra = " AND L.v <> 'b'"
    sunk = _plan(_spec(extra, tail="sink i to parquet (path = 'out/i') checkpoint 'chk/i'\n"))
    assert _join(sunk, "i").left.pushed_filter is None
    assert _join(sunk, "j").left.filters_pushed_into is None
    run_alone = _plan(_spec(extra), relation="i")
    assert _join(run_alone, "i").left.pushed_filter is None


def test_nothing_is_pushed_into_a_join_read_twice() -> None:
    text = _spec(" AND L.v <> 'b'") + (
        "aggregate n = i AS X GROUP BY window(X.t, INTERVAL 1 MINUTE)\n"
        "  SELECT window(X.t, INTERVAL 1 MINUTE) AS w, count(*) AS c OUTPUT MODE append\n"
    )
    assert _join(_plan(text), "i").left.pushed_filter is None


def test_a_non_deterministic_conjunct_stays_above() -> None:
    text = (
        HEAD
        + LOWER.format(how="")
        + (
            f"join j = i AS L JOIN r AS R ON {RANGE} WHERE L.k > rand() AND L.v <> 'b'\n"
            "  SELECT L.k AS k, L.t AS lt, R.t AS rt\n"
        )
    )
    assert _sql(_join(_plan(text), "i").left.pushed_filter) == "A.v <> 'b'"
