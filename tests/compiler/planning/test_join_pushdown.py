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
    # (the query of j pushes them into its own run of i: `Plan.apart`, below)
    assert _join(sunk.for_query("j"), "i").left.pushed_filter is not None
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


# ------------------------------------------------------------------ inferred filters
# `Planner._inferred_pushdown`: the filters a join INFERS for a side that reads another join go
# into that join after its own inference (parity scenario
# `inferred_filter_pushed_into_a_join_below`, checked on Spark 4.3 and 3.5)


def test_an_inferred_filter_goes_into_the_join_below_after_its_inference() -> None:
    plan = _plan(_spec(" AND R.k > 1"))
    lower, upper = _join(plan, "i"), _join(plan, "j")
    assert [_sql(p) for p in upper.left.inferred_filters] == ["L.k > 1"]
    # through i's projection (`A.k AS k`) onto its left input, below l's watermark node
    assert [_sql(p) for p in lower.left.inferred_above] == ["A.k > 1"]
    assert lower.left.inferred_above_by == "j"
    assert [_sql(p) for p in lower.left.filters_below_watermark] == ["A.k > 1"]
    # neither written nor pushed there, and i's own inference has run: `B.k > 1` never is
    assert lower.left.pushed_filter is None
    assert lower.left.inferred_filters == () and lower.right.inferred_filters == ()
    assert lower.right.filters_below_watermark == () and lower.right.inferred_above == ()
    assert lower.left.not_null == ("k", "t")  # inferred by i itself, from its own condition
    text = plan_text(plan)
    assert (
        "left filter      A.k > 1 (inferred by join j for the rows it reads, pushed into this "
        "join after its own inference)" in text
    )
    assert (
        "L.k > 1 (inferred by Spark through the condition's equalities, pushed below the "
        "join, and on into join i)" in text
    )
    sides = {j["name"]: j["sides"] for j in plan_json(plan, [])["joins"]}
    assert sides["i"]["left"]["inferred_above"] == {"filter": "A.k > 1", "inferred_by": "j"}
    assert "inferred_above" not in sides["i"]["right"]
    assert "inferred_above" not in sides["j"]["left"]


def test_an_inferred_filter_goes_on_down_a_chain() -> None:
    text = (
        HEAD
        + "stream s (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds\n"
        + LOWER.format(how="")
        + UPPER.format(how="", on=RANGE)
        + "join top = j AS X JOIN s AS S ON X.k = S.k AND X.lt BETWEEN S.t AND S.t + "
        "INTERVAL 5 SECONDS AND S.k > 1\n  SELECT X.k AS k, S.t AS st\n"
    )
    plan = _plan(text)
    middle, lower = _join(plan, "j"), _join(plan, "i")
    assert [_sql(p) for p in middle.left.inferred_above] == ["L.k > 1"]
    assert middle.left.inferred_above_by == "top"
    assert [_sql(p) for p in lower.left.inferred_above] == ["A.k > 1"]
    assert lower.left.inferred_above_by == "top"
    # j's own inference ran before: it inferred nothing from what came down
    assert middle.right.inferred_filters == () and middle.right.inferred_above == ()


def test_no_inferred_filter_goes_into_a_join_that_is_a_query_of_its_own() -> None:
    sink = "sink i to parquet (path = 'out/i') checkpoint 'chk/i'\n"
    assert _join(_plan(_spec(" AND R.k > 1", tail=sink)), "i").left.inferred_above == ()
    assert _join(_plan(_spec(" AND R.k > 1"), relation="i"), "i").left.inferred_above == ()


def test_no_inferred_filter_goes_through_a_watermark_defined_on_the_side() -> None:
    text = "set allow_multiple_stateful_operators = false\n" + _spec(" AND R.k > 1").replace(
        "join j = i AS L ", "join j = i AS L watermark t delay 0 seconds "
    )
    plan = _plan(text)
    assert [_sql(p) for p in _join(plan, "j").left.inferred_filters] == ["L.k > 1"]
    assert _join(plan, "i").left.inferred_above == ()


def test_an_inferred_filter_on_a_null_padded_column_runs_an_outer_join_below_as_inner() -> None:
    # `L.mv = R.v AND R.v = 'x'` infers `L.mv = 'x'` on i's padded column; the isnotnull of
    # `L.mv` that the equality gives already runs i as INNER (readers.py), and the inferred
    # filter then goes on into i's right input (parity `inferred_filter_into_an_outer_join_below`)
    plan = _plan(
        HEAD
        + LOWER.format(how="LEFT OUTER ")
        + UPPER.format(how="", on=RANGE + " AND L.mv = R.v AND R.v = 'x'")
    )
    lower = _join(plan, "i")
    assert lower.executed_as == "inner"
    assert [_sql(p) for p in lower.right.inferred_above] == ["B.v = 'x'"]


# ------------------------------------------------------------------ through a view
# a join reading a view over a join: the side's filters go through the view's projection,
# join its WHERE after its own (CombineFilters), and go on into the join below (parity
# `join_side_filter_through_a_view_into_a_join`)
VIEW = "view w = SELECT X.k AS k, X.t AS t, X.v AS v FROM i AS X{where}\n"


def _through_view(extra: str, where: str = "") -> str:
    upper = UPPER.format(how="", on=RANGE + extra).replace("i AS L", "w AS L")
    return HEAD + LOWER.format(how="") + VIEW.format(where=where) + upper


def test_a_side_filter_goes_through_a_view_into_the_join_below_it() -> None:
    plan = _plan(_through_view(" AND L.v <> 'b'", where=" WHERE X.k <> 7"))
    lower = _join(plan, "i")
    # the view's own WHERE, then what the join above pushed into it, both into i's left input
    assert _sql(lower.left.pushed_filter) == "A.k <> 7 AND A.v <> 'b'"
    assert lower.where is None


def test_an_inferred_filter_goes_through_a_view_into_the_join_below_it() -> None:
    plan = _plan(_through_view(" AND R.k > 1"))
    lower = _join(plan, "i")
    assert [_sql(p) for p in lower.left.inferred_above] == ["A.k > 1"]
    assert lower.left.inferred_above_by == "j"
    assert lower.right.inferred_filters == ()


def test_nothing_goes_through_a_view_with_a_non_deterministic_where() -> None:
    plan = _plan(_through_view(" AND L.v <> 'b' AND R.k > 1", where=" WHERE X.k > rand()"))
    lower = _join(plan, "i")
    assert lower.left.pushed_filter is None and lower.left.inferred_above == ()


# a view over a view over a join: PushPredicateThroughNonJoin takes the Filter through each
# Project in turn (parity `join_side_filter_through_two_views_into_a_join`)
VIEW2 = "view w2 = SELECT Y.k AS k, Y.t AS t, Y.v AS v FROM w AS Y{where}\n"


def _through_two_views(extra: str, where: str = "", where2: str = "") -> str:
    upper = UPPER.format(how="", on=RANGE + extra).replace("i AS L", "w2 AS L")
    return (
        HEAD + LOWER.format(how="") + VIEW.format(where=where) + VIEW2.format(where=where2) + upper
    )


def test_a_side_filter_goes_through_two_views_into_the_join_below_them() -> None:
    plan = _plan(
        _through_two_views(" AND L.v <> 'b'", where=" WHERE X.k <> 7", where2=" WHERE Y.k <> 8")
    )
    lower = _join(plan, "i")
    # each view's own WHERE after what comes from above it (CombineFilters), all into i
    assert _sql(lower.left.pushed_filter) == "A.k <> 7 AND A.k <> 8 AND A.v <> 'b'"
    upper_view, lower_view = plan.node("w2"), plan.node("w")
    assert upper_view.where_pushed_into is None  # into a view: its `pushed from` says so
    assert lower_view.where_pushed_into == "i" and lower_view.pushed_from == "w2"
    text = plan_text(plan)
    assert "where pushed     into join i" in text


def test_an_inferred_filter_goes_through_two_views_into_the_join_below_them() -> None:
    plan = _plan(_through_two_views(" AND R.k > 1"))
    lower = _join(plan, "i")
    assert [_sql(p) for p in lower.left.inferred_above] == ["A.k > 1"]
    assert lower.left.inferred_above_by == "j"


def test_a_views_where_goes_through_the_view_below_into_the_join() -> None:
    # no join above: the upper view's own WHERE reaches i through w
    text = (
        HEAD
        + LOWER.format(how="")
        + VIEW.format(where="")
        + VIEW2.format(where=" WHERE Y.v <> 'b'")
    )
    text += "join j = w2 AS L INNER JOIN r AS R ON " + RANGE + "\n  SELECT L.k AS k, R.t AS rt\n"
    lower = _join(_plan(text), "i")
    assert _sql(lower.left.pushed_filter) == "A.v <> 'b'"


def test_nothing_goes_through_two_views_when_another_operator_reads_the_lower_one() -> None:
    text = _through_two_views(" AND L.v <> 'b'") + "sink w to console\n"
    lower = _join(_plan(text), "i")
    assert lower.left.pushed_filter is None and lower.left.inferred_above == ()


# ------------------------------------------------------------------ each query on its own
# a join with a sink of its own that a join above reads: Spark optimizes the two queries
# apart, so the upper query pushes its filters into its own run of the lower join (parity
# `join_side_filter_pushed_into_a_join_with_a_sink`, checked on Spark 4.3.0)
SINK_I = "sink i to parquet (path = 'out/i') checkpoint 'chk/i'\n"


def test_a_join_with_a_sink_gets_the_filters_of_the_query_above_it_in_that_query() -> None:
    plan = _plan(_spec(" AND L.v <> 'b'", tail=SINK_I))
    assert plan.query_roots == ("i", "j")
    # its own query (the sink) pushes nothing into it: the shared node
    assert _join(plan, "i").left.pushed_filter is None
    # in the query of j, j's side filter is pushed into i
    [apart] = plan.apart
    assert apart.root == "j" and [n.name for n in apart.nodes] == ["i"]
    in_j = plan.for_query("j")
    assert _sql(_join(in_j, "i").left.pushed_filter) == "A.v <> 'b'"
    # j runs in one query only: its shared node is that query's
    assert _join(plan, "j").left.filters_pushed_into == "i"
    assert plan.for_query("i") is plan


def test_a_query_planned_apart_in_text_and_json() -> None:
    plan = _plan(_spec(" AND L.v <> 'b'", tail=SINK_I))
    text = plan_text(plan)
    assert (
        "in query j (Spark optimizes each query on its own: there i runs as follows, and as"
        " above in query i)"
    ) in text
    shown = plan_json(plan, [])
    [apart] = shown["planned_apart"]
    assert apart["query"] == "j" and apart["relations"] == ["i"]
    assert apart["joins"][0]["sides"]["left"]["pushed_filter"] == "A.v <> 'b'"
    assert apart["views"] == []


def test_one_query_or_nothing_pushed_plans_nothing_apart() -> None:
    assert _plan(_spec(" AND L.v <> 'b'")).apart == ()
    # a sink on i, nothing to push and every column of i read: the query of j runs i as
    # i's own query does (reading fewer, it would prune i's state columns there, as Spark)
    every = UPPER.format(how="", on=RANGE).replace("L.t AS lt", "L.t AS lt, L.v AS v, L.mv AS mv")
    plan = _plan(HEAD + LOWER.format(how="") + every + SINK_I)
    assert plan.apart == () and "planned_apart" not in plan_json(plan, [])
    # --relation runs one query
    assert _plan(_spec(" AND L.v <> 'b'", tail=SINK_I), relation="j").apart == ()


def test_two_readers_each_push_their_own_filters_in_their_own_query() -> None:
    # i read by j and by k: each of the two queries pushes its own side filter into i
    text = _spec(" AND L.v <> 'b'") + (
        "join k = i AS L INNER JOIN r AS R ON " + RANGE + " AND L.v <> 'c'\n"
        "  SELECT L.k AS k, R.t AS rt\n"
    )
    plan = _plan(text)
    assert _join(plan, "i").left.pushed_filter is None  # read twice: nothing in the shared node
    by_query = {q.root: _join(plan.for_query(q.root), "i") for q in plan.apart}
    assert {q: _sql(i.left.pushed_filter) for q, i in by_query.items()} == {
        "j": "A.v <> 'b'",
        "k": "A.v <> 'c'",
    }
