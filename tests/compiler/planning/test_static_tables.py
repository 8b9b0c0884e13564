"""The `table` statement and the planner's stream-static joins (issue 37, item 4): the plan
node of a table (layout, no watermark, no streaming source), a stream-static join planned
with no state, E038 for what Spark refuses, and the plan in text, JSON and Mermaid (a plan
without a table keeps its JSON as before: no `tables` key)."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.describe.diagram import mermaid
from sjoin.compiler.describe.explain import plan_text
from sjoin.compiler.planning.plan import StaticJoinNode, TableNode

SPEC = """\
table customers (customer_id BIGINT, segment STRING) from parquet (path = 'dim/customers')
stream orders (order_id BIGINT, customer_id BIGINT, amount DOUBLE, order_time TIMESTAMP)
  watermark order_time delay 10 minutes
join enriched = orders AS o LEFT OUTER JOIN customers AS c
  ON o.customer_id = c.customer_id AND o.amount > 10
  SELECT o.order_id, o.order_time, c.segment
aggregate per_segment = enriched AS e
  GROUP BY window(e.order_time, INTERVAL 10 MINUTES), e.segment
  SELECT window(e.order_time, INTERVAL 10 MINUTES) AS w, e.segment, count(*) AS n
"""


def _checked(text: str) -> Any:
    return check_text(text, "s.sjoin")


def test_the_plan_of_a_table_and_a_stream_static_join(text_snapshot: Any) -> None:
    result = _checked(SPEC)
    assert result.ok, result.diagnostics
    plan = result.plan
    table = plan.node("customers")
    assert isinstance(table, TableNode)
    assert table.layout == (("customer_id", "bigint"), ("segment", "string"))
    assert plan.sources("per_segment") == ["orders"]  # a table is no streaming source
    join = plan.node("enriched")
    assert isinstance(join, StaticJoinNode)
    assert (join.static_side, join.stream.relation, join.table.relation) == (
        "right",
        "orders",
        "customers",
    )
    # stateless: not among the stateful operators; the aggregate is the first of them
    assert [n.name for n in plan.operators] == ["per_segment"]
    assert [n.name for n in plan.stateful_operators("per_segment")] == ["per_segment"]
    assert plan.node("per_segment").watermarks.late_rows.source == "global"
    # the stream's time keeps its watermark through the join
    assert [o.event_time for o in join.output] == [False, True, False]
    assert plan_text(plan) + "\n---\n" + mermaid(plan) == text_snapshot


def test_the_plan_json_of_a_stream_static_join() -> None:
    data = _checked(SPEC).plan_json()
    assert data["tables"] == [
        {
            "name": "customers",
            "columns": [
                {"name": "customer_id", "type": "BIGINT"},
                {"name": "segment", "type": "STRING"},
            ],
            "source": {"format": "parquet", "options": {"path": "dim/customers"}},
        }
    ]
    (join,) = data["static_joins"]
    assert join["state"] is None
    assert (join["static_side"], join["join_type"]) == ("right", "left_outer")
    assert join["keys"] == [["o.customer_id", "c.customer_id"]]
    assert [j["name"] for j in data["joins"]] == []
    # a plan without a table has no such keys: its JSON is as before
    plain = _checked("stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n").plan_json()
    assert "tables" not in plain and "static_joins" not in plain


def test_inner_filters_below_the_streams_watermark_node() -> None:
    plan = _checked(SPEC.replace("LEFT OUTER JOIN", "JOIN")).plan
    join = plan.node("enriched")
    assert isinstance(join, StaticJoinNode)
    # an inner join pushes the stream-only conjunct below the join, and the key's isnotnull
    assert [str(p) for p in join.filters_below_watermark] == ["o.amount > 10"]
    assert join.not_null_below_watermark == ("customer_id", "amount")
    left_outer = _checked(SPEC).plan.node("enriched")
    assert left_outer.filters_below_watermark == ()  # the preserved stream keeps it in the join
    assert left_outer.not_null_below_watermark == ()


REFUSED = [
    ("customers AS c LEFT OUTER JOIN orders AS o", "LeftOuter join with a streaming"),
    ("customers AS c LEFT SEMI JOIN orders AS o", "LeftSemi join with a streaming"),
    ("customers AS c LEFT ANTI JOIN orders AS o", "LeftAnti joins with a streaming"),
    ("orders AS o RIGHT OUTER JOIN customers AS c", "RightOuter join with a streaming"),
    ("orders AS o FULL OUTER JOIN customers AS c", "FullOuter joins with streaming"),
    ("customers AS c FULL OUTER JOIN orders AS o", "FullOuter joins with streaming"),
]


@pytest.mark.parametrize(("pair", "reason"), REFUSED)
def test_e038_refuses_what_spark_refuses(pair: str, reason: str) -> None:
    text = SPEC.split("join enriched")[0] + f"join j = {pair} ON o.customer_id = c.customer_id\n"
    errors = [d for d in _checked(text).diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == ["E038"]
    assert reason in errors[0].message


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("aggregate a = customers GROUP BY segment SELECT segment, count(*) AS n\n", "aggregate"),
        ("sink customers to parquet (path = 'out')\n", "sink"),
        ("join j = customers AS a JOIN customers AS b ON a.segment = b.segment\n", "two tables"),
        (
            "join j = orders AS o JOIN customers AS c watermark x delay 1 second "
            "ON o.customer_id = c.customer_id\n",
            "watermark",
        ),
    ],
)
def test_a_table_is_only_one_side_of_a_join_with_a_stream(text: str, what: str) -> None:
    errors = [
        d
        for d in _checked(SPEC.split("join enriched")[0] + text).diagnostics
        if d.severity == "error"
    ]
    assert [d.code for d in errors] == ["E038"]
    assert what in errors[0].message


def test_a_table_needs_a_batch_format_with_its_path() -> None:
    kafka = _checked("table t (k BIGINT) from kafka (topic = 'x')\n").diagnostics
    assert [d.code for d in kafka] == ["E024"]
    no_path = _checked("table t (k BIGINT) from parquet ()\n").diagnostics
    assert [(d.code, d.message) for d in no_path] == [
        ("E024", "table `parquet` needs the option `path`")
    ]
    missing = _checked("table t (k BIGINT)\n").diagnostics
    assert [d.code for d in missing] == ["E001"]
