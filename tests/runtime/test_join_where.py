"""A join's ``WHERE`` (compiler/planning/where.py): Spark's EliminateOuterJoin and
PushPredicateThroughJoin as typed plan fields, shown by `sjoin plan`, written by the job, and
run alike by both engines (tests/integration/spark/test_where_on_spark.py reads the same facts from
real Spark 4.3's optimized plans)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.planning.where import eliminate_outer, rejected_sides
from sjoin.compiler.vocabulary.sql import spark_sql
from sjoin.runtime import run

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


def _join(how: str, where: str, select: str = "SELECT o.order_id, p.paid") -> Any:
    text = HEAD + f"join j = orders AS o {how} JOIN payments AS p {ON} WHERE {where} {select}\n"
    result = check_text(text, "where.sjoin")
    assert result.ok, result.diagnostics
    assert result.plan is not None
    return result.plan


# (join type, WHERE, what Spark 4.3.0 runs, conjuncts pushed per side, the filter above)
CASES = [
    ("LEFT OUTER", "p.paid > 1", "inner", {"right": ["p.paid > 1"]}, None),
    (
        "LEFT OUTER",
        "o.status = 'ok' AND o.order_time > TIMESTAMP '2024-01-01 00:00:00'",
        "left_outer",
        {"left": ["o.status = 'ok'", "o.order_time > CAST('2024-01-01 00:00:00' AS TIMESTAMP)"]},
        None,
    ),
    (
        "LEFT OUTER",
        "p.paid IS NULL OR o.amount > 1",
        "left_outer",
        {},
        "(p.paid IS NULL OR o.amount > 1)",
    ),
    ("FULL OUTER", "o.amount > 1", "left_outer", {"left": ["o.amount > 1"]}, None),
    (
        "FULL OUTER",
        "o.amount > 1 AND p.paid > 1",
        "inner",
        {"left": ["o.amount > 1"], "right": ["p.paid > 1"]},
        None,
    ),
    ("RIGHT OUTER", "p.paid IS NOT NULL", "right_outer", {"right": ["NOT p.paid IS NULL"]}, None),
    ("RIGHT OUTER", "o.amount + 1 > p.paid", "inner", {}, None),
    (
        "INNER",
        "o.amount > p.paid AND o.status = 'ok'",
        "inner",
        {"left": ["o.status = 'ok'"]},
        None,
    ),
]


@pytest.mark.parametrize(("how", "where", "runs", "pushed", "above"), CASES)
def test_where_is_planned_as_spark_plans_it(
    how: str, where: str, runs: str, pushed: dict[str, list[str]], above: str | None
) -> None:
    join = _join(how, where).joins[0]
    assert join.executed_as == runs
    if runs != how.lower().replace(" ", "_"):
        assert join.where_eliminated is not None
        assert join.where_eliminated[:2] == (how.lower().replace(" ", "_"), runs)
    else:
        assert join.where_eliminated is None
    for side in ("left", "right"):
        node = getattr(join, side)
        written = [
            spark_sql(p) for p in (*node.filters_below_watermark, *node.filters_above_watermark)
        ]
        for text in pushed.get(side, []):
            assert text in written, (side, written)
    assert (spark_sql(join.where_filter) if join.where_filter is not None else None) == above


def test_a_converted_join_stores_and_evicts_as_an_inner_join() -> None:
    plan = _join("LEFT OUTER", "p.paid > 1")
    join = plan.joins[0]
    assert not join.left.preserved and not join.right.preserved
    assert join.null_rows == ()
    text = plan_text(plan)
    assert (
        "EliminateOuterJoin: `p.paid > 1` drops every null-padded row, so Spark runs this LEFT "
        "OUTER join as INNER" in text
    )
    found = plan_json(plan, [])["joins"][0]
    assert found["executed_as"] == "inner"
    assert found["where"]["eliminate_outer_join"] == {
        "from": "left_outer",
        "to": "inner",
        "conjuncts": ["p.paid > 1"],
    }


def test_a_join_without_where_keeps_its_json() -> None:
    text = HEAD + f"join j = orders AS o LEFT OUTER JOIN payments AS p {ON}\n"
    result = check_text(text)
    assert result.plan is not None
    assert "where" not in plan_json(result.plan, [])["joins"][0]


def test_the_job_writes_the_where_after_the_join() -> None:
    job = compile_pyspark(_join("LEFT OUTER", "p.paid > 1"))
    assert 'joined = joined.where(F.expr("p.paid > 1"))' in job
    assert '"inner",' in job  # the join Spark runs, as for a window's EliminateOuterJoin


def test_null_rejection() -> None:
    from sqlglot import exp, parse_one

    def part(sql: str, side: str) -> Any:
        node = parse_one(sql, read="spark")
        for col in node.find_all(exp.Column):
            col.meta["side"] = side
        return node

    assert rejected_sides(part("p.x > 1", "right")) == {"right"}
    assert rejected_sides(part("p.x IS NULL", "right")) == frozenset()
    assert rejected_sides(part("NOT p.x IS NULL", "right")) == {"right"}
    assert rejected_sides(part("p.x > 1 OR p.y = 2", "right")) == {"right"}
    assert rejected_sides(part("coalesce(p.x, 1) = 1", "right")) == frozenset()
    assert eliminate_outer("left_outer", frozenset({"left"})) == "left_outer"
    assert eliminate_outer("full_outer", frozenset({"right"})) == "right_outer"


def _row(batch: int, stream: str, **row: Any) -> dict[str, Any]:
    return {"batch": batch, "stream": stream, "row": row}


TRACE = [
    _row(0, "orders", order_id=1, status="ok", amount=5.0, order_time="2024-01-01 00:00:10"),
    _row(0, "orders", order_id=2, status="bad", amount=0.5, order_time="2024-01-01 00:00:20"),
    _row(0, "payments", order_id=1, paid=0.5, pay_time="2024-01-01 00:00:20"),
    _row(0, "payments", order_id=2, paid=6.0, pay_time="2024-01-01 00:00:30"),
    _row(1, "orders", order_id=9, status="ok", amount=9.0, order_time="2024-01-01 00:10:00"),
    _row(1, "payments", order_id=9, paid=9.0, pay_time="2024-01-01 00:10:00"),
]


def _rows(plan: Any, engine: str) -> list[tuple[int, str, dict[str, Any]]]:
    result = run(plan, [json.dumps(r) for r in TRACE], engine=engine)  # type: ignore[arg-type]
    return [(b.batch, rel, row) for b in result.batches for rel, row in b.rows]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_engines_run_the_where(engine: str) -> None:
    # converted to INNER: no null-padded order 1, whose payment fails p.paid > 1
    inner = _join("LEFT OUTER", "p.paid > 1")
    got = [(b, r["order_id"], r["paid"]) for b, _, r in _rows(inner, engine)]
    assert got == [(0, 2, 6.0), (2, 9, 9.0)]
    # kept LEFT OUTER, the filter above the join: order 1's match fails it, and order 1 is
    # never null-padded (it matched); order 2 fails o.amount > 1 but matched: dropped too
    outer = _join("LEFT OUTER", "p.paid IS NULL OR o.amount > 1")
    got = [(b, r["order_id"], r["paid"]) for b, _, r in _rows(outer, engine)]
    assert got == [(0, 1, 0.5), (2, 9, 9.0)]
    assert _rows(outer, engine) == _rows(outer, "reference")
