"""A view's WHERE and a join's WHERE read from real Spark's optimized plans: the generated job's
``build`` (compile_pyspark) runs on the local Spark, and each fact the planner states
(compiler/planning/where.py, ``Planner.plan_view``) is found there: which join Spark runs
(EliminateOuterJoin), which conjuncts it pushes into a side and whether below or above that
side's EventTimeWatermark, which stay a Filter above the join, and a view's conjuncts and
inferred isnotnull filters at its stream's watermark node."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.vocabulary.model import JOIN_KINDS
from sjoin.jvm.spark_driver import StreamDriver

pytestmark = pytest.mark.spark

DDL = {
    "orders": "order_id BIGINT, status STRING, amount DOUBLE, order_time TIMESTAMP",
    "payments": "order_id BIGINT, paid DOUBLE, pay_time TIMESTAMP",
}
HEAD = """spark 4.3
stream orders (order_id BIGINT, status STRING, amount DOUBLE, order_time TIMESTAMP)
  watermark order_time delay 10 seconds
stream payments (order_id BIGINT, paid DOUBLE, pay_time TIMESTAMP)
  watermark pay_time delay 10 seconds
"""
ON = (
    "ON o.order_id = p.order_id "
    "AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 MINUTE"
)


def _optimized(spark: Any, text: str, root: str) -> str:
    result = check_text(text, "where.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    namespace: dict[str, Any] = {}
    exec(compile(compile_pyspark(result.plan), "job.py", "exec"), namespace)
    with StreamDriver(spark, DDL) as driver:
        rels = namespace["build"](spark, driver.inputs)
        driver.start(rels[root])
        driver.feed({"orders": [], "payments": []})
        execution = driver.query._jsq.streamingQuery().lastExecution()
        return str(execution.optimizedPlan().toString())


def _flat(text: str) -> str:
    """Plan text without the driver's JSON parsing (each ``from_json(...).c`` is ``c``),
    expression ids, watermark marks, quotes, spaces and parentheses."""
    out, i = [], 0
    while (start := text.find("from_json(", i)) >= 0:
        out.append(text[i:start])
        depth, j = 0, start + len("from_json")
        while True:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        i = j + 1 if text[j : j + 1] == "." else j  # the field access's dot
    out.append(text[i:])
    text = re.sub(r"#\d+L?|-T\d+ms", "", "".join(out))
    return re.sub(r"[\s()'`]", "", text)


def _sides(plan: str) -> tuple[str, str, str]:
    """(the lines above the plan's one Join, its left input, its right input)."""
    lines = plan.splitlines()
    top = next(i for i, line in enumerate(lines) if "Join " in line)
    match = re.match(r"[ :]*(?:\+- |:- )?", lines[top])
    indent = match.end() if match else 0
    right = next(i for i in range(top + 1, len(lines)) if lines[i][indent:].startswith("+- "))
    return "\n".join(lines[: top + 1]), "\n".join(lines[top + 1 : right]), "\n".join(lines[right:])


def _at_node(side: str) -> tuple[str, str]:
    """A join input's (or a view's) plan text above and below its EventTimeWatermark."""
    at = side.index("EventTimeWatermark")
    return _flat(side[:at]), _flat(side[at:])


JOIN_CASES = [
    # (join type, WHERE, Spark's text of each conjunct pushed: side, above/below its node)
    ("LEFT OUTER", "p.paid > 1", [("right", "below", "paid>1.0")]),
    (
        "LEFT OUTER",
        "o.status = 'ok' AND o.order_time > TIMESTAMP '2024-01-01 00:00:00'",
        [("left", "below", "status=ok"), ("left", "above", "order_time>2024-01-0100:00:00")],
    ),
    ("LEFT OUTER", "p.paid IS NULL OR o.amount > 1", []),
    ("FULL OUTER", "o.amount > 1", [("left", "below", "amount>1.0")]),
    ("FULL OUTER", "o.amount > 1 AND p.paid > 1", [("left", "below", "amount>1.0")]),
    ("RIGHT OUTER", "p.paid IS NOT NULL", [("right", "below", "isnotnullpaid")]),
    ("RIGHT OUTER", "o.amount + 1 > p.paid", []),
]


@pytest.mark.parametrize(("how", "where", "pushed"), JOIN_CASES)
def test_join_where_is_sparks(
    spark: Any, how: str, where: str, pushed: list[tuple[str, str, str]]
) -> None:
    text = HEAD + f"join j = orders AS o {how} JOIN payments AS p {ON} WHERE {where}\n"
    result = check_text(text, "where.sjoin")
    assert result.plan is not None
    join = result.plan.joins[0]
    plan = _optimized(spark, text, "j")
    top, left, right = _sides(plan)
    assert f"Join {JOIN_KINDS[join.executed_as].spark_name}," in top, plan
    for side, where_, found in pushed:
        above, below = _at_node(left if side == "left" else right)
        assert found in (below if where_ == "below" else above), (side, where_, found, plan)
    # the planner's Filter above the join is Spark's, and only then is there one
    assert ("Filter" in top.splitlines()[-2]) == (join.where_filter is not None), plan


VIEW = HEAD + (
    "view v = SELECT o.order_id, o.amount * 2 AS doubled, o.order_time FROM orders AS o "
    "WHERE o.status = 'ok' AND o.order_time > TIMESTAMP '2024-01-01 00:00:00' "
    "AND o.amount > rand()\n"
)


def test_view_filters_at_the_watermark_node_are_sparks(spark: Any) -> None:
    result = check_text(VIEW, "view.sjoin")
    assert result.plan is not None
    (view,) = result.plan.views
    assert view.not_null_below_watermark == ("amount",)
    above, below = _at_node(_optimized(spark, VIEW, "v"))
    assert "status=ok" in below and "isnotnullamount" in below
    assert "order_time>2024-01-0100:00:00" in above and "rand" in above
    assert "status" not in above and "order_time>" not in below
