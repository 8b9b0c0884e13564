"""An aggregate's WHERE read from real Spark's optimized plans (the generated job's ``build`` on
the local Spark, as tests/integration/spark/test_where_on_spark.py reads a join's and a view's): the
Filter the job writes before ``.groupBy`` is pushed where the planner says
(``Planner._pushed_wheres``, ``AggregateNode.where``): into the sides of the LEFT OUTER join
only the aggregate reads, which EliminateOuterJoin then runs as INNER; at a stream's
watermark node, below it unless it reads the watermarked column.  And Spark's analyzer refuses
an aggregate function in it, as the binder does (E019)."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.planning.plan import AggregateNode, JoinNode

from .test_where_on_spark import HEAD, ON, _at_node, _optimized, _sides

pytestmark = pytest.mark.spark

GROUP = "GROUP BY window(x.order_time, INTERVAL 1 MINUTE) SELECT count(*) AS n\n"
JOIN = (
    f"join j = orders AS o LEFT OUTER JOIN payments AS p {ON} "
    "SELECT o.order_id, o.status, o.order_time, p.paid\n"
)


def test_pushed_into_the_join_and_run_as_inner(spark: Any) -> None:
    text = HEAD + JOIN + "aggregate g = j AS x WHERE x.paid > 1 AND x.status = 'ok' " + GROUP
    result = check_text(text, "where.sjoin")
    assert result.plan is not None
    join, g = result.plan.node("j"), result.plan.node("g")
    assert isinstance(join, JoinNode) and isinstance(g, AggregateNode)
    assert g.where is not None and g.where.pushed_into == "j"
    assert join.executed_as == "inner"
    plan = _optimized(spark, text, "g")
    top, left, right = _sides(plan)
    assert "Join Inner," in top, plan
    assert "status=ok" in _at_node(left)[1], plan  # below the left side's watermark node
    assert "paid>1.0" in _at_node(right)[1], plan
    assert "Filter" not in top.splitlines()[-2], plan  # nothing left above the join


def test_over_a_stream_at_its_watermark_node(spark: Any) -> None:
    text = HEAD + (
        "aggregate g = orders AS x WHERE x.status = 'ok' "
        "AND x.order_time > TIMESTAMP '2024-01-01 00:00:00' AND x.amount > rand() " + GROUP
    )
    result = check_text(text, "where.sjoin")
    assert result.plan is not None
    g = result.plan.node("g")
    assert isinstance(g, AggregateNode) and g.where is not None
    assert g.where.not_null_below_watermark == ("amount",)
    above, below = _at_node(_optimized(spark, text, "g"))
    assert "status=ok" in below and "isnotnullamount" in below
    assert "order_time>2024-01-0100:00:00" in above and "rand" in above
    assert "status=ok" not in above and "order_time>" not in below


def test_an_aggregate_function_is_refused_by_spark(spark: Any) -> None:
    result = check_text(HEAD + "aggregate g = orders AS x WHERE sum(x.amount) > 0 " + GROUP)
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["E019"]
    frame = spark.createDataFrame([(1, 2.0)], "k INT, x DOUBLE")
    with pytest.raises(Exception, match="INVALID_WHERE_CONDITION"):
        frame.where("sum(x) > 0").groupBy("k").count().collect()
