"""An aggregate's WHERE (`aggregate a = REL AS x WHERE cond GROUP BY ...`): parsed, bound over
the input's columns, its errors at their places; planned as Spark runs `df.where(cond)
.groupBy(...)` (the Filter below the aggregate, pushed down where Spark's optimizer pushes it:
tests/integration/spark/test_aggregate_where_on_spark.py checks those facts on Spark 4.3.0)."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.binding.bound import Aggregate
from sjoin.compiler.diagnostics.diagnostics import Diagnostics
from sjoin.compiler.frontend import ast
from sjoin.compiler.frontend.parse import parse
from sjoin.compiler.frontend.unparse import spec_text
from sjoin.compiler.planning.plan import AggregateNode, JoinNode, ViewNode
from sjoin.compiler.vocabulary import types as t
from sjoin.compiler.vocabulary.source import Source
from sjoin.compiler.vocabulary.sql import written_sql

STREAMS = (
    "stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds\n"
    "stream b (k BIGINT, t TIMESTAMP, w DOUBLE) watermark t delay 10 seconds\n"
)
GROUP = "GROUP BY window(x.t, INTERVAL 10 SECONDS) SELECT count(*) AS n\n"
JOIN = (
    "join j = a AS A LEFT OUTER JOIN b AS B ON A.k = B.k "
    "AND B.t BETWEEN A.t AND A.t + INTERVAL 1 MINUTE SELECT A.k, A.t, A.v, B.w\n"
)


def parse_text(text: str) -> ast.SpecFile:
    diags = Diagnostics()
    spec = parse(Source("t.sjoin", text), diags)
    assert diags.items == [], [d.message for d in diags.items]
    return spec


def _check(text: str) -> Any:
    return check_text(STREAMS + text, "t.sjoin")


def _errors(text: str) -> list[Any]:
    return [d for d in _check(text).diagnostics if d.severity == "error"]


def _aggregate(text: str, name: str = "g") -> AggregateNode:
    result = _check(text)
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    node = result.plan.node(name)
    assert isinstance(node, AggregateNode)
    return node


def test_parsed_between_the_input_and_group_by() -> None:
    spec = parse_text(STREAMS + "aggregate g = a AS x WHERE x.v = 'ok' AND x.k > 1 " + GROUP)
    decl = spec.statements[-1]
    assert isinstance(decl, ast.AggregateDecl) and decl.where is not None
    assert decl.input.alias_text == "x"
    assert "WHERE x.v = 'ok'\n    AND x.k > 1\n    GROUP BY" in spec_text(spec)


def test_with_a_watermark_on_the_input() -> None:
    spec = parse_text(
        STREAMS + JOIN + "aggregate g = j AS x watermark t delay 5 seconds WHERE x.w > 0 " + GROUP
    )
    decl = spec.statements[-1]
    assert isinstance(decl, ast.AggregateDecl)
    assert decl.input.watermark is not None and decl.where is not None


def test_bound_over_the_input_columns() -> None:
    result = _check("aggregate g = a AS x WHERE x.v = 'ok' AND k > 1 " + GROUP)
    assert result.ok and result.bound is not None
    g = result.bound.relation("g")
    assert isinstance(g, Aggregate) and g.where is not None
    assert written_sql(g.where) == "x.v = 'ok' AND x.k > 1"
    assert g.columns[0].type == t.BIGINT  # the output is the aggregate's, not the WHERE's


def test_unknown_column_with_did_you_mean() -> None:
    (error,) = _errors("aggregate g = a AS x WHERE x.vv = 'ok' " + GROUP)
    assert error.code == "E004" and "`x` has no column `vv`" in error.message
    assert "did you mean `v`" in (error.help or "")
    text = STREAMS + "aggregate g = a AS x WHERE x.vv = 'ok' " + GROUP
    assert text[error.span.start : error.span.end] == "x.vv"


def test_not_boolean() -> None:
    (error,) = _errors("aggregate g = a AS x WHERE x.k + 1 " + GROUP)
    assert error.code == "E012"
    assert error.message == "the WHERE condition is BIGINT, not BOOLEAN"


def test_an_aggregate_function_as_spark_refuses_it() -> None:
    (error,) = _errors("aggregate g = a AS x WHERE sum(x.k) > 0 " + GROUP)
    assert error.code == "E019"
    assert "INVALID_WHERE_CONDITION" in error.message and "`sum`" in error.message
    assert "view v = SELECT * FROM a WHERE" in (error.help or "")
    # elsewhere the message is as before
    (other,) = _errors("view v = SELECT x.k FROM a AS x WHERE sum(x.k) > 0\n")
    assert other.message == "aggregate `sum` is not allowed here"


def test_a_column_of_another_relation() -> None:
    (error,) = _errors(JOIN + "aggregate g = j AS x WHERE B.w > 0 " + GROUP)
    assert error.code == "E005"  # the join's sides are not the aggregate's input


@pytest.mark.parametrize(
    "bad",
    [
        "aggregate g = a AS x GROUP BY x.k WHERE x.k > 1 SELECT count(*) AS n\n",
        "aggregate g = a AS x WHERE GROUP BY x.k SELECT count(*) AS n\n",
    ],
)
def test_syntax_errors_say_where_it_goes(bad: str) -> None:
    (error,) = _errors(bad)
    assert error.code == "E001"


def test_where_after_group_by_is_told_where_it_goes() -> None:
    (error,) = _errors("aggregate g = a AS x GROUP BY x.k WHERE x.k > 1 SELECT count(*) AS n\n")
    assert "after an aggregate's input (before GROUP BY" in (error.help or "")


# ------------------------------------------------------------------ planned


def test_over_a_stream_split_at_its_watermark_node() -> None:
    node = _aggregate("aggregate g = a AS x WHERE x.v = 'ok' AND x.t > x.t - INTERVAL 1 SECOND "
                      "AND x.k > 1 " + GROUP)  # fmt: skip
    where = node.where
    assert where is not None and where.pushed_into is None
    assert [written_sql(p) for p in where.filters_below_watermark] == ["x.v = 'ok'", "x.k > 1"]
    assert [written_sql(p) for p in where.filters_above_watermark] == [
        "x.t > x.t - INTERVAL '1' SECOND"
    ]


def test_isnotnull_inferred_from_a_conjunct_above_the_node() -> None:
    node = _aggregate("aggregate g = a AS x WHERE x.t > TIMESTAMP '2026-01-01 00:00:00' "
                      "AND x.k > rand() " + GROUP)  # fmt: skip
    assert node.where is not None
    assert node.where.filters_below_watermark == ()
    assert node.where.not_null_below_watermark == ("k",)


def test_pushed_into_a_join_only_it_reads() -> None:
    result = _check(JOIN + "aggregate g = j AS x WHERE x.w > 0 AND x.v = 'ok' " + GROUP)
    assert result.ok and result.plan is not None
    g, j = result.plan.node("g"), result.plan.node("j")
    assert isinstance(g, AggregateNode) and isinstance(j, JoinNode)
    assert g.where is not None and g.where.pushed_into == "j" and g.where.filters == ()
    assert j.join_type == "left_outer" and j.executed_as == "inner"  # EliminateOuterJoin
    assert j.where is None  # the join's own WHERE, as written: none
    assert j.where_eliminated is not None
    assert [written_sql(c) for c in j.where_eliminated[2]] == ["B.w > 0"]
    assert written_sql(j.left.pushed_filter) == "A.v = 'ok'"
    assert written_sql(j.right.pushed_filter) == "B.w > 0"


def test_after_the_join_own_where() -> None:
    join = JOIN.replace(" SELECT", " WHERE A.k > 5 SELECT")
    result = _check(join + "aggregate g = j AS x WHERE x.v = 'ok' " + GROUP)
    assert result.ok and result.plan is not None
    j = result.plan.node("j")
    assert isinstance(j, JoinNode) and j.where is not None
    assert written_sql(j.where) == "A.k > 5"
    assert written_sql(j.left.pushed_filter) == "A.k > 5 AND A.v = 'ok'"


@pytest.mark.parametrize(
    "other",
    [
        "sink j to console\n",  # a query of its own reads it
        "aggregate h = j AS y GROUP BY window(y.t, INTERVAL 10 SECONDS) SELECT count(*) AS m\n",
    ],
)
def test_pushed_into_a_join_another_reads_only_in_the_aggregates_query(other: str) -> None:
    # Spark optimizes each query on its own (``Plan.apart``): the other query runs j as
    # written, the query of g pushes g's WHERE into its own run of j
    result = _check(JOIN + other + "aggregate g = j AS x WHERE x.w > 0 " + GROUP)
    assert result.plan is not None
    g, j = result.plan.node("g"), result.plan.node("j")
    assert isinstance(g, AggregateNode) and isinstance(j, JoinNode)
    assert j.executed_as == "left_outer" and j.right.pushed_filter is None
    assert g.where is not None and g.where.pushed_into == "j"  # g runs in its query only
    in_g = result.plan.for_query("g").node("j")
    assert isinstance(in_g, JoinNode) and in_g.executed_as == "inner"  # EliminateOuterJoin
    assert written_sql(in_g.right.pushed_filter) == "B.w > 0"


def test_pushed_into_a_view_only_it_reads() -> None:
    result = _check(
        "view v = SELECT x.k, x.t, x.v AS label FROM a AS x WHERE x.k > 0\n"
        "aggregate g = v AS y WHERE y.label = 'ok' GROUP BY window(y.t, INTERVAL 10 SECONDS) "
        "SELECT count(*) AS n\n"
    )
    assert result.ok and result.plan is not None
    g, v = result.plan.node("g"), result.plan.node("v")
    assert isinstance(g, AggregateNode) and isinstance(v, ViewNode)
    assert g.where is not None and g.where.pushed_into == "v"
    assert v.where is not None and written_sql(v.where) == "x.k > 0"  # as written
    assert [written_sql(p) for p in v.filters_below_watermark] == ["x.k > 0", "x.v = 'ok'"]


def test_not_pushed_through_a_window_output() -> None:
    join = (
        "join j = a AS A INNER JOIN b AS B ON A.k = B.k "
        "AND B.t BETWEEN A.t AND A.t + INTERVAL 1 MINUTE "
        "SELECT A.k, window(A.t, INTERVAL 10 SECONDS) AS w, B.w AS bw\n"
    )
    node = _aggregate(
        join + "aggregate g = j AS x WHERE x.w.start > TIMESTAMP '2026-01-01 00:00:00' "
        "GROUP BY x.w SELECT x.w, count(*) AS n\n"
    )
    assert node.where is not None and node.where.pushed_into is None


# ------------------------------------------------------------------ sjoin diff


def test_a_changed_where_resumes_and_differs() -> None:
    """A Filter below the aggregate holds no state and Spark's checkpoint keeps nothing of it:
    on Spark 4.3.0 a query restarted from its checkpoint with `x > 2` for `x > 0` resumed and
    grouped with the new one (noop sink, update mode; the state's schemas are unchanged)."""
    from sjoin.compiler.describe.diff import diff_plans

    def plan(where: str) -> Any:
        result = _check(f"aggregate g = a AS x{where} " + GROUP)
        assert result.ok and result.plan is not None
        return result.plan

    (query,) = diff_plans(plan(" WHERE x.k > 0"), plan(" WHERE x.k > 2")).queries
    (op,) = query.operators
    assert op.verdict == "differs"
    (reason,) = op.reasons
    assert reason.topic == "filter" and "from x.k > 0 to x.k > 2" in reason.detail
    (query,) = diff_plans(plan(""), plan(" WHERE x.k > 2")).queries
    assert "from none to x.k > 2" in query.operators[0].reasons[0].detail
    (query,) = diff_plans(plan(" WHERE x.k > 0"), plan(" WHERE x.k > 0")).queries
    assert query.operators[0].verdict == "resumes"
