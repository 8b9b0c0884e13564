"""The filters a view's one reader pushes into it (compiler/planning/view_pushdown.py): which
view gets which filter, where it runs against the stream's watermark node, and where nothing
is pushed.  Spark's side of it runs in the parity scenarios ``join_filter_pushed_into_a_view``,
``join_not_null_pushed_into_a_view`` and ``view_over_a_view_over_a_stream``."""

from __future__ import annotations

from typing import Any

from sjoin.api import check_text
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.planning.plan import ViewNode

HEAD = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 seconds
"""
RANGE = "L.k = R.k AND L.t >= R.t - INTERVAL 2 SECONDS AND L.t <= R.t"
VIEW = "view rv = SELECT X.k, X.t, X.v FROM r AS X\n"


def join(right: str = "rv", extra: str = "", name: str = "j", how: str = "") -> str:
    return (
        f"join {name} = l AS L {how}JOIN {right} AS R ON {RANGE}{extra}\n"
        "  SELECT L.k AS lk, L.t AS lt, R.v AS rv\n"
    )


def _plan(text: str) -> Any:
    result = check_text(HEAD + text, "pushdown.sjoin")
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    assert result.plan is not None
    return result.plan


def _view(plan: Any, name: str = "rv") -> ViewNode:
    node = plan.node(name)
    assert isinstance(node, ViewNode)
    return node


def _sql(parts: tuple[Any, ...]) -> list[str]:
    return [p.sql(dialect="spark") for p in parts]


def test_a_joins_side_filter_and_not_null_go_below_the_streams_watermark_node() -> None:
    view = _view(_plan(VIEW + join(extra=" AND R.v <> 'b'")))
    assert _sql(view.filters_below_watermark) == ["X.v <> 'b'"]
    # isnotnull(R.t) reads the watermarked column: it stays at the join
    assert view.not_null_below_watermark == ("k", "v")
    assert view.filters_above_watermark == ()
    assert view.where is None  # the back ends write the view as written
    assert view.pushed_from == "j"


def test_the_views_own_where_comes_first() -> None:
    view = _view(
        _plan(
            "view rv = SELECT X.k, X.t, X.v FROM r AS X WHERE X.k > 2\n"
            + join(extra=" AND R.v <> 'b'")
        )
    )
    assert _sql(view.filters_below_watermark) == ["X.k > 2", "X.v <> 'b'"]
    assert view.where is not None and view.where.sql(dialect="spark") == "X.k > 2"


def test_a_computed_columns_not_null_is_pushed_as_its_expression() -> None:
    view = _view(_plan("view rv = SELECT X.k * 1 AS k, X.t, X.v FROM r AS X\n" + join()))
    assert _sql(view.filters_below_watermark) == ["NOT X.k * 1 IS NULL"]
    assert view.not_null_below_watermark == ()


def test_a_view_over_a_view_gets_the_upper_views_where_and_the_joins_filters() -> None:
    plan = _plan(
        VIEW.replace("rv", "r1")
        + "view rv = SELECT Y.k, Y.t, Y.v FROM r1 AS Y WHERE Y.v <> 'b'\n"
        + join()
    )
    lower = _view(plan, "r1")
    assert _sql(lower.filters_below_watermark) == ["X.v <> 'b'"]
    assert lower.not_null_below_watermark == ("k",)
    assert lower.pushed_from == "rv"
    assert _view(plan).pushed_from == "j"


def test_nothing_is_pushed_into_a_view_that_two_operators_read() -> None:
    plan = _plan(VIEW + join(extra=" AND R.v <> 'b'") + join(name="j2"))
    view = _view(plan)
    assert view.filters == () and view.not_null_below_watermark == ()
    assert view.pushed_from is None


def test_nothing_is_pushed_into_a_view_that_a_sink_reads() -> None:
    plan = _plan(VIEW + join(extra=" AND R.v <> 'b'") + "sink rv to console\n")
    assert _view(plan).pushed_from is None


def test_nothing_is_pushed_through_a_non_deterministic_output() -> None:
    plan = _plan("view rv = SELECT X.k, X.t, X.v, rand() AS n FROM r AS X\n" + join())
    assert _view(plan).pushed_from is None


def test_a_preserved_sides_view_gets_nothing() -> None:
    # a RIGHT OUTER join keeps every right row: Spark pushes no right filter below it
    plan = _plan(VIEW + join(extra=" AND R.v <> 'b'", how="RIGHT OUTER "))
    assert _view(plan).pushed_from is None


def test_sjoin_plan_says_where_the_filters_come_from() -> None:
    plan = _plan(VIEW + join(extra=" AND R.v <> 'b'"))
    text = plan_text(plan)
    assert "pushed from      j, its one reader" in text
    assert plan_json(plan, [])["views"][0]["filters_below_watermark"] == ["X.v <> 'b'"]


OUTER = (
    "join j = l AS L LEFT OUTER JOIN r AS R ON " + RANGE + "\n"
    "  SELECT L.k AS k, L.t AS lt, R.v AS rv\n"
)


def test_a_views_where_over_a_join_is_the_joins_where_too() -> None:
    """Spark pushes the view's Filter through the join's Project into the join, where
    EliminateOuterJoin runs the LEFT OUTER join as INNER (the parity scenario
    ``view_where_over_a_left_outer_join``)."""
    plan = _plan(OUTER + "view v = SELECT J.k, J.lt, J.rv FROM j AS J WHERE J.rv <> 'b'\n")
    j = plan.node("j")
    assert j.executed_as == "inner"
    assert j.where is None  # the job writes each WHERE where it is written
    # an INNER join's WHERE conjunct over one side goes into that side, below the join
    assert j.right.pushed_filter.sql(dialect="spark") == "R.v <> 'b'"
    view = _view(plan, "v")
    assert view.where_pushed_into == "j"
    text = plan_text(plan)
    assert "where from       the WHERE of view v" in text
    assert "where pushed     into join j" in text


def test_an_aggregates_where_goes_through_the_view_into_the_join() -> None:
    plan = _plan(
        OUTER
        + "view v = SELECT J.k, J.lt, J.rv FROM j AS J\n"
        + "aggregate a = v AS A WHERE A.rv <> 'b' GROUP BY window(A.lt, INTERVAL 10 SECONDS)\n"
        + "  SELECT window(A.lt, INTERVAL 10 SECONDS) AS w, count(*) AS n\n"
    )
    assert plan.node("j").executed_as == "inner"
    assert _view(plan, "v").where_pushed_into == "j"


def test_a_join_another_operator_reads_keeps_its_type() -> None:
    plan = _plan(
        OUTER
        + "view v = SELECT J.k, J.lt, J.rv FROM j AS J WHERE J.rv <> 'b'\n"
        + "sink j to console\n"
    )
    assert plan.node("j").executed_as == "left_outer"  # as the sink's query runs it
    # the query of v optimizes on its own (``Plan.apart``): the view's WHERE goes into its
    # own run of j, which then runs as INNER there
    assert plan.query_roots == ("j", "v")
    assert _view(plan, "v").where_pushed_into == "j"
    assert plan.for_query("v").node("j").executed_as == "inner"


def test_the_job_writes_the_views_where_at_the_view() -> None:
    from sjoin.compiler.backends.pyspark import compile_pyspark

    job = compile_pyspark(
        _plan(OUTER + "view v = SELECT J.k, J.lt, J.rv FROM j AS J WHERE J.rv <> 'b'\n")
    )
    assert '"inner",' in job  # the join Spark runs, as for an aggregate's WHERE
    assert job.count("'b'") == 1
