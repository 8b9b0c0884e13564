"""Static tables and stream-static joins on both engines (issue 37, item 4): the table's rows
from the trace (`{"batch": N, "table": name, "row": {...}}`, its whole contents from batch N
on), each join type Spark allows, no state, rows behind the watermark still joined, and a
chain into an aggregate; bad table lines located as trace rows are."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.runtime import TraceError, UsageError, run

# a Delta table is read as of each micro-batch: the trace may give it a version per batch
TABLE = "table customers (customer_id BIGINT, segment STRING) from delta (path = 'dim/c')\n"
ORDERS = (
    "stream orders (order_id BIGINT, customer_id BIGINT, amount DOUBLE, order_time TIMESTAMP) "
    "watermark order_time delay 10 minutes\n"
)


def _plan(text: str, table: str = TABLE) -> Any:
    result = check_text(table + ORDERS + text, "s.sjoin")
    assert [d for d in result.diagnostics if d.severity == "error"] == []
    return result.plan


def _customer(batch: int, cid: int, segment: str | None) -> str:
    row = {"customer_id": cid, "segment": segment}
    return json.dumps({"batch": batch, "table": "customers", "row": row})


def _order(batch: int, oid: int, cid: int | None, amount: float, time: str) -> str:
    row = {"order_id": oid, "customer_id": cid, "amount": amount, "order_time": time}
    return json.dumps({"batch": batch, "stream": "orders", "row": row})


TRACE = [
    _customer(0, 1, "gold"),
    _customer(0, 2, "silver"),
    _order(0, 10, 1, 50.0, "2026-01-01T08:00:00Z"),
    _order(0, 11, 3, 50.0, "2026-01-01T08:01:00Z"),
    _order(0, 15, None, 50.0, "2026-01-01T08:01:00Z"),
    # batch 1: the table is now customers 1 and 3 (2 is gone); order 12 fails the ON's amount
    _customer(1, 1, "gold"),
    _customer(1, 3, "bronze"),
    _order(1, 12, 3, 5.0, "2026-01-01T08:02:00Z"),
    _order(1, 13, 3, 20.0, "2026-01-01T08:30:00Z"),
    # batch 2: a row an hour behind the watermark (08:20) still joins; order 16 for customer 2
    _order(2, 14, 1, 20.0, "2026-01-01T07:00:00Z"),
    _order(2, 16, 2, 20.0, "2026-01-01T08:31:00Z"),
]


def _batches(plan: Any, trace: list[str], engine: str) -> list[list[tuple[Any, ...]]]:
    result = run(plan, trace, engine=engine)  # type: ignore[arg-type]
    return [[tuple(r.values()) for _, r in b.rows] for b in result.batches if b.data]


ON = "ON o.customer_id = c.customer_id AND o.amount > 10"


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_left_outer_join_reads_the_table_as_it_is_in_each_batch(engine: str) -> None:
    plan = _plan(
        f"join e = orders AS o LEFT OUTER JOIN customers AS c {ON} SELECT o.order_id, c.segment\n"
    )
    result = run(plan, TRACE, engine=engine)  # type: ignore[arg-type]
    assert [[tuple(r.values()) for _, r in b.rows] for b in result.batches] == [
        [(10, "gold"), (11, None), (15, None)],
        [(12, None), (13, "bronze")],
        [(14, "gold"), (16, None)],
    ]
    # no state, no operator in the progress: the query has no stateful operator
    assert all(b.progress["operators"] == [] for b in result.batches)
    assert [b.watermark for b in result.batches] == [
        "1970-01-01T00:00:00Z",
        "2026-01-01T07:51:00Z",
        "2026-01-01T08:20:00Z",
    ]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("INNER", [[(10, "gold")], [(13, "bronze")], [(14, "gold")]]),
        ("LEFT SEMI", [[(10,)], [(13,)], [(14,)]]),
        ("LEFT ANTI", [[(11,), (15,)], [(12,)], [(16,)]]),
    ],
)
def test_each_join_type_spark_allows_with_the_table_on_the_right(
    engine: str, how: str, expected: list[list[tuple[Any, ...]]]
) -> None:
    select = "o.order_id" if how.startswith("LEFT ") else "o.order_id, c.segment"
    plan = _plan(f"join e = orders AS o {how} JOIN customers AS c {ON} SELECT {select}\n")
    assert _batches(plan, TRACE, engine) == expected


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_the_table_on_the_left(engine: str) -> None:
    on = "ON o.customer_id = c.customer_id AND o.amount > 10"
    inner = _plan(f"join e = customers AS c JOIN orders AS o {on} SELECT o.order_id, c.segment\n")
    assert _batches(inner, TRACE, engine) == [[(10, "gold")], [(13, "bronze")], [(14, "gold")]]
    right = _plan(
        f"join e = customers AS c RIGHT OUTER JOIN orders AS o {on} SELECT o.order_id, c.segment\n"
    )
    assert _batches(right, TRACE, engine) == [
        [(10, "gold"), (11, None), (15, None)],
        [(12, None), (13, "bronze")],
        [(14, "gold"), (16, None)],
    ]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_a_stream_static_join_feeds_a_windowed_aggregate(engine: str) -> None:
    plan = _plan(
        f"join e = orders AS o LEFT OUTER JOIN customers AS c {ON}\n"
        "  SELECT o.order_id, o.order_time, c.segment\n"
        "aggregate per = e GROUP BY window(e.order_time, INTERVAL 10 MINUTES), e.segment\n"
        "  SELECT window(e.order_time, INTERVAL 10 MINUTES) AS w, e.segment, count(*) AS n\n"
    )
    result = run(plan, TRACE, engine=engine)  # type: ignore[arg-type]
    # the aggregate is the one stateful operator; its input carries the stream's watermark
    assert [len(b.progress["operators"]) for b in result.batches] == [1] * len(result.batches)
    rows = [
        (b.batch, r["w"]["start"], r["segment"], r["n"])
        for b in result.batches
        for relation, r in b.rows
        if relation == "per"
    ]
    # 08:00-08:10 closes in the no-data batch after trace batch 1 (watermark 08:20): gold 1,
    # and NULL 3 (orders 11 and 15 found no customer, order 12 failed the ON's amount)
    assert rows == [
        (3, "2026-01-01T08:00:00Z", "gold", 1),
        (3, "2026-01-01T08:00:00Z", None, 3),
    ]
    # the row at 07:00 came an hour behind the watermark: the aggregate drops it as late (the
    # stream-static join below it does not)
    dropped = [b.progress["operators"][0]["numRowsDroppedByWatermark"] for b in result.batches]
    assert dropped == [0, 0, 0, 0, 1, 0]


def test_a_bad_table_row_is_located_as_a_trace_row_is() -> None:
    plan = _plan(f"join e = orders AS o JOIN customers AS c {ON}\n")
    bad = [
        _customer(0, 1, "gold"),
        json.dumps({"batch": 0, "table": "customers", "row": {"customer_id": "x", "segment": "a"}}),
        json.dumps({"batch": 0, "stream": "customers", "row": {"customer_id": 1, "segment": "a"}}),
        json.dumps({"batch": 0, "table": "orders", "row": {}}),
        json.dumps({"batch": 0, "table": "custmers", "row": {}}),
    ]
    with pytest.raises(TraceError) as err:
        run(plan, bad, engine="reference")
    found = [(r.line, r.reason) for r in err.value.bad_rows]
    assert [line for line, _ in found] == [2, 3, 4, 5]
    assert "column `customer_id`" in found[0][1]
    assert "`customers` is a static table" in found[1][1]
    assert "`orders` is a stream" in found[2][1]
    assert "unknown table `custmers`" in found[3][1] and "customers" in found[3][1]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_a_file_table_has_one_version_for_the_whole_run(engine: str) -> None:
    """Spark lists a file table once, when the query starts (tests/integration/spark/
    test_stream_static_on_spark.py): its rows hold from the first batch, wherever the trace
    gives them, and a second version is refused."""
    parquet = TABLE.replace("delta", "parquet")
    plan = _plan(
        f"join e = orders AS o LEFT OUTER JOIN customers AS c {ON} SELECT o.order_id, c.segment\n",
        parquet,
    )
    later = [
        _order(0, 10, 1, 50.0, "2026-01-01T08:00:00Z"),
        _customer(1, 1, "gold"),
        _order(1, 11, 1, 50.0, "2026-01-01T08:01:00Z"),
    ]
    assert _batches(plan, later, engine) == [[(10, "gold")], [(11, "gold")]]
    with pytest.raises(UsageError, match="one version for the whole run"):
        run(plan, TRACE, engine=engine)  # type: ignore[arg-type]


def test_why_follows_a_row_through_a_stream_static_join(tmp_path: Any) -> None:
    """`why` runs the join's own operator, observed (tests/cli/test_why_pipeline.py has the
    rest): order 13 of batch 1 matched customer 3 of the table's version of batch 1."""
    from sjoin.reports.why import Teller
    from sjoin.runtime.observe.lineage import trace_run

    plan = _plan(f"join e = orders AS o JOIN customers AS c {ON}\n")
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(TRACE) + "\n")
    log, _ = trace_run(plan, trace)
    life = Teller(plan, log).life(9)
    (matched,) = [e for s in life["operators"] for e in s["events"] if e["what"] == "matched"]
    assert [o["line"] for o in matched["others"]] == [7]
    assert "line 7 (the version of trace batch 1)" in matched["text"]
