"""``view NAME = SELECT ... FROM REL [WHERE ...]``: the plan (where each conjunct runs against
the input's watermark node), `sjoin plan`'s text, JSON and Mermaid, the generated job, and both
engines running it alike, batch by batch, with the filters below the watermark node changing
the watermark as Spark's do (tests/integration/spark/test_where_on_spark.py reads these facts from
real Spark 4.3's optimized plans)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.describe.diagram import mermaid
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.planning.plan import ViewNode
from sjoin.compiler.vocabulary.sql import spark_sql
from sjoin.runtime import run

SPEC = """spark 4.3
stream orders (order_id BIGINT, status STRING, amount DOUBLE, order_time TIMESTAMP)
  watermark order_time delay 10 seconds
stream payments (order_id BIGINT, paid DOUBLE, pay_time TIMESTAMP)
  watermark pay_time delay 10 seconds

view ok_orders = SELECT o.order_id, o.amount * 2 AS doubled, o.order_time FROM orders AS o
  WHERE o.status = 'ok' AND o.order_time > TIMESTAMP '2024-01-01 00:00:00'

join j = ok_orders AS v INNER JOIN payments AS p
  ON v.order_id = p.order_id
  AND p.pay_time BETWEEN v.order_time AND v.order_time + INTERVAL 1 MINUTE
  SELECT v.order_id, v.doubled, p.paid, v.order_time
"""


def _row(batch: int, stream: str, **row: Any) -> dict[str, Any]:
    return {"batch": batch, "stream": stream, "row": row}


# order 2 fails the view's WHERE below the watermark node: its late time (00:05) never
# moves the watermark, so order 3 (00:01) is on time in batch 1 and joins its payment
TRACE = [
    _row(0, "orders", order_id=1, status="ok", amount=5.0, order_time="2024-01-01 00:00:10"),
    _row(0, "orders", order_id=2, status="bad", amount=6.0, order_time="2024-01-01 00:05:00"),
    _row(0, "payments", order_id=1, paid=5.0, pay_time="2024-01-01 00:00:20"),
    _row(1, "payments", order_id=3, paid=7.0, pay_time="2024-01-01 00:01:30"),
    _row(1, "orders", order_id=3, status="ok", amount=7.0, order_time="2024-01-01 00:01:00"),
    _row(1, "orders", order_id=4, status="ok", amount=1.0, order_time="2023-12-31 23:00:00"),
]


def _plan(text: str = SPEC) -> Any:
    result = check_text(text, "view.sjoin")
    assert result.ok, result.diagnostics
    assert result.plan is not None
    return result.plan


def test_the_view_is_planned_with_its_filters_at_the_watermark_node() -> None:
    plan = _plan()
    (view,) = plan.views
    assert isinstance(view, ViewNode)
    assert view.inputs == (("input", "orders"),)
    assert [spark_sql(p) for p in view.filters_below_watermark] == ["o.status = 'ok'"]
    assert [spark_sql(p) for p in view.filters_above_watermark] == [
        "o.order_time > CAST('2024-01-01 00:00:00' AS TIMESTAMP)"
    ]
    assert [(o.name, o.event_time) for o in view.output] == [
        ("order_id", False),
        ("doubled", False),
        ("order_time", True),
    ]
    # a view is no stateful operator: the join over it is the query's first
    assert [n.name for n in plan.operators] == ["j"]
    assert plan.stateful_operators("j") == [plan.node("j")]
    assert plan.sources("j") == ["orders", "payments"]
    assert plan.columns_of("ok_orders") == [
        ("order_id", "bigint"),
        ("doubled", "double"),
        ("order_time", "timestamp"),
    ]
    join = plan.joins[0]
    assert join.left.relation == "ok_orders"
    assert join.watermarks.late_rows.source == "global"
    assert join.left.state.eviction == "value"


def test_a_filter_above_the_node_has_its_not_null_columns_pushed_below() -> None:
    """Spark 4.3.0: ``amount > rand()`` stays above the node, ``isnotnull(amount)`` runs
    below it (InferFiltersFromConstraints, then PushPredicateThroughNonJoin)."""
    text = SPEC.replace("o.status = 'ok' AND", "o.amount > rand() AND")
    (view,) = _plan(text).views
    assert view.filters_below_watermark == ()
    assert spark_sql(view.filters_above_watermark[0]) == "o.amount > rand()"
    assert view.not_null_below_watermark == ("amount",)


def test_plan_text_json_and_mermaid_show_the_view() -> None:
    plan = _plan()
    text = plan_text(plan)
    assert "view ok_orders = orders AS o  [stateless]" in text
    assert "o.status = 'ok' (pushed below orders's watermark node" in text
    assert "(above orders's watermark node" in text
    found = json.loads(json.dumps(plan_json(plan, [])))
    (view,) = found["views"]
    assert view["name"] == "ok_orders"
    assert view["filters_below_watermark"] == ["o.status = 'ok'"]
    assert view["output"][2] == {
        "name": "order_time",
        "expr": "o.order_time",
        "type": "TIMESTAMP",
        "event_time": True,
    }
    diagram = mermaid(plan)
    assert '"ok_orders\nview, stateless"' in diagram
    assert "where o.status = 'ok' AND" in diagram


def test_a_plan_without_views_has_no_views_key() -> None:
    text = SPEC.split("view ok_orders")[0] + (
        "join j = orders AS o INNER JOIN payments AS p ON o.order_id = p.order_id "
        "AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 MINUTE\n"
    )
    assert "views" not in plan_json(_plan(text), [])


def test_the_job_filters_and_projects_the_view() -> None:
    job = compile_pyspark(_plan())
    assert "# view ok_orders = orders AS o" in job
    assert ".where(\n            F.expr(\"o.status = 'ok' AND o.order_time > CAST(" in job
    assert 'F.expr("o.amount * 2").alias("doubled"),' in job
    compile(job, "job.py", "exec")


def _rows(plan: Any, engine: str) -> list[tuple[int, str, dict[str, Any]]]:
    result = run(plan, [json.dumps(r) for r in TRACE], engine=engine)  # type: ignore[arg-type]
    return [(b.batch, rel, row) for b in result.batches for rel, row in b.rows]


def _watermarks(plan: Any, engine: str) -> list[str | None]:
    result = run(plan, [json.dumps(r) for r in TRACE], engine=engine)  # type: ignore[arg-type]
    return [b.watermark for b in result.batches]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_both_engines_run_the_view(engine: str) -> None:
    plan = _plan()
    rows = _rows(plan, engine)
    assert [(b, rel, r["order_id"]) for b, rel, r in rows if rel == "j"] == [
        (0, "j", 1),
        (2, "j", 3),
    ]
    view_rows = [(b, r["order_id"], r["doubled"]) for b, rel, r in rows if rel == "ok_orders"]
    # order 2 fails status = 'ok', order 4 the time filter above the node
    assert view_rows == [(0, 1, 10.0), (2, 3, 14.0)]
    # the watermark: order 2's 00:05 never reached the node
    assert _watermarks(plan, engine)[1] == "2024-01-01T00:00:00Z"
    assert rows == _rows(plan, "reference")


def test_a_view_as_the_head_of_a_query() -> None:
    """A view that nothing reads is a stateless query of its own; a sink on it too."""
    text = SPEC.split("join j")[0]
    plan = _plan(text)
    assert plan.query_roots == ("ok_orders",)
    for engine in ("reference", "columnar"):
        rows = [r for _, rel, r in _rows(plan, engine) if rel == "ok_orders"]
        assert [r["order_id"] for r in rows] == [1, 3]


def test_a_view_over_a_join_and_an_aggregate_over_the_view() -> None:
    text = SPEC + (
        "view big = SELECT * FROM j WHERE j.paid > 6\n"
        "aggregate total = big AS b GROUP BY window(b.order_time, INTERVAL 1 MINUTE) AS w "
        "SELECT w, sum(b.paid) AS paid OUTPUT MODE update\n"
    )
    text = text.replace(
        "GROUP BY window(b.order_time, INTERVAL 1 MINUTE) AS w",
        "GROUP BY window(b.order_time, INTERVAL 1 MINUTE)",
    )
    text = text.replace("SELECT w, sum", "SELECT window(b.order_time, INTERVAL 1 MINUTE) AS w, sum")
    plan = _plan(text)
    assert plan.query_roots == ("total",)
    assert [n.name for n in plan.stateful_operators("total")] == ["total", "j"]
    got = {e: _rows(plan, e) for e in ("reference", "columnar")}
    assert got["reference"] == got["columnar"]
    assert [r["paid"] for _, rel, r in got["reference"] if rel == "total"] == [7.0]


def test_bad_view_input_is_reported() -> None:
    result = check_text(SPEC + "view w = SELECT x.nope FROM ok_orders AS x WHERE x.doubled\n")
    codes = sorted(d.code for d in result.diagnostics)
    assert "E012" in codes  # WHERE is DOUBLE, not BOOLEAN
    assert any(d.code.startswith("E00") for d in result.diagnostics)  # unknown column
