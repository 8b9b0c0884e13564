"""examples/order_revenue (issue 37, item 7): the whole pipeline around the join, orders and
payments from Kafka with duplicates -> dedup -> left outer range join -> a customers table
(stream-static) -> a windowed aggregate -> Delta. Both engines give the expected rows and
metrics on its trace; on real Spark (4.3) the generated job gives the same, batch by batch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_file
from sjoin.runtime import run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "order_revenue.sjoin"
TRACE = EXAMPLE.with_suffix(".trace.jsonl")


def _plan() -> Any:
    result = check_file(EXAMPLE)
    assert result.ok and result.plan is not None
    return result.plan


def _rows(result: Any, relation: str) -> list[tuple[int, dict[str, Any]]]:
    return [(b.batch, r) for b in result.batches for rel, r in b.rows if rel == relation]


def _metrics(result: Any, relation: str) -> list[tuple[int, int, int, int]]:
    return [
        (
            o["numRowsTotal"],
            o["numRowsUpdated"],
            o["numRowsRemoved"],
            o["numRowsDroppedByWatermark"],
        )
        for b in result.batches
        for o in b.progress["operators"]
        if o["relation"] == relation
    ]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_the_pipeline_gives_the_expected_rows_on_both_engines(engine: str) -> None:
    result = run(_plan(), TRACE, engine=engine)  # type: ignore[arg-type]
    revenue = [
        (batch, r["order_window"]["start"][11:16], r["segment"], r["orders"], r["paid_orders"])
        for batch, r in _rows(result, "revenue")
    ]
    # 09:00-09:10 closes when the join's outer rows are out: the aggregate's watermark is the
    # join's output watermark, 15 minutes behind the streams' (Spark 3.5+'s propagation)
    assert revenue == [
        (9, "09:00", "gold", 3, 3),
        (9, "09:00", "silver", 1, 1),
        (9, "09:00", "unknown", 1, 0),  # order 1004: customer 9 is not in the table, unpaid
        (11, "09:10", "silver", 1, 1),
        (11, "09:10", "bronze", 1, 0),  # order 1007: paid 16 minutes after, too late
    ]
    assert [str(r["amount"]) for _, r in _rows(result, "revenue")] == [
        "216.50",
        "35.00",
        "60.00",
        "210.00",
        "42.00",
    ]
    # each order once: 1001 twice in batch 0, 1002 again in trace batch 1; 1008 came late
    orders = [r["order_id"] for _, r in _rows(result, "orders_once")]
    assert orders == [1001, 1002, 1003, 1004, 1005, 1006, 1007, 1009, 1010, 1011]
    payments = [r["payment_id"] for _, r in _rows(result, "payments_once")]
    assert payments == [9001, 9002, 9003, 9005, 9006, 9007, 9008, 9010, 9011]
    # the orders never paid in time come out null-padded once the watermark passes
    # order_time + 15 minutes: in the no-data batch after trace batch 4 (watermark 09:30)
    unpaid = [(b, r["order_id"]) for b, r in _rows(result, "settled") if r["payment_time"] is None]
    assert unpaid == [(9, 1004), (9, 1007)]
    assert result.batches[9].watermark == "2026-01-01T09:30:00Z"
    # the late order is counted where Spark counts it: by the orders' dedup, in batch 6
    dropped = [m[3] for m in _metrics(result, "orders_once")]
    assert dropped == [0] * 6 + [1] + [0] * 5


def test_the_engines_agree_batch_by_batch() -> None:
    plan = _plan()
    runs = [run(plan, TRACE, engine=e) for e in ("reference", "columnar")]  # type: ignore[arg-type]
    reference, columnar = (
        [(b.batch, b.watermark, b.rows, b.progress) for b in r.batches] for r in runs
    )
    assert reference == columnar


@pytest.mark.spark
def test_the_generated_job_agrees_on_spark(spark: Any) -> None:
    """`sjoin verify`: the generated PySpark job on local Spark, fed a micro-batch per trace
    batch (the customers table given as a DataFrame of the trace's rows), against the
    runtime: rows, watermark and every operator's state metrics, batch by batch."""
    from sjoin.jvm.verify import verify_spec

    report = verify_spec(check_file(EXAMPLE), TRACE, spark=spark)
    assert report.rejected == []
    assert report.agree, report.text()
    (query,) = report.queries
    assert query.relation == "revenue"
    assert query.spark_batches == query.runtime_batches == 12
    assert query.rows == 5


def test_verify_gives_the_job_the_trace_s_table_rows_and_refuses_a_table_that_changes() -> None:
    """What `sjoin verify` hands the job for a static table: its DDL and the trace's rows of
    it, as JSON-ready dicts; a Delta table with a version per batch cannot be one DataFrame."""
    from sjoin.jvm.verify import static_tables
    from sjoin.runtime import UsageError
    from sjoin.runtime.io.trace import read_trace, schemas_of, table_schemas

    plan = _plan()
    schemas = {**schemas_of(plan), **table_schemas(plan)}
    tables = static_tables(plan, read_trace(TRACE, schemas))
    ddl, rows = tables["customers"]
    assert ddl == "`customer_id` BIGINT, `segment` STRING, `country` STRING"
    assert rows[0] == {"customer_id": 1, "segment": "gold", "country": "DE"} and len(rows) == 4
    changed = [*TRACE.read_text().splitlines()]
    row = {"customer_id": 9, "segment": "new", "country": "IT"}
    changed.append(json.dumps({"batch": 5, "table": "customers", "row": row}))
    with pytest.raises(UsageError, match=r"table `customers` changes during the trace"):
        static_tables(plan, read_trace(changed, schemas))


def test_the_plan_says_when_a_window_comes_out_through_the_table_join() -> None:
    """The aggregate reads the join through the stream-static join: the join's state
    offset (15 minutes 1 ms) still holds its watermark back, as the run above shows (the
    09:00-09:10 window comes out at watermark 09:30, when the newest order was at 09:31)."""
    from sjoin.compiler.describe.capacity import aggregate_lag

    plan = _plan()
    lag = aggregate_lag(plan, plan.node("revenue"))
    assert (lag.offset_ms, lag.lag_ms) == (-900_001, 960_001)
