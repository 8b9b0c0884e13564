"""Each relation kind of issue 37 compiled with `--target pipeline` runs with SDP's own CLI on
local Spark, and its sinks' rows equal `sjoin run`'s on the same input (the comparison of
test_pipeline_on_spark.py: the whole input in one micro-batch, then the no-data batch):

- a dedup (dropDuplicates, and dropDuplicatesWithinWatermark), which SDP's SQL cannot write:
  a Python flow of the project, read by a join's SQL as a temporary view;
- a view with a WHERE, and a join's WHERE, in SQL;
- a union of two streams (each read with its own WATERMARK clause), in SQL;
- a static table (a materialized view of its files, SQL's `fmt.`path``` read with each column
  cast to its declared type: the form the SQL front end reads back) and a stream-static join
  that reads it without STREAM();
- all of them chained: dedup -> view -> LEFT OUTER join with a WHERE -> stream-static join ->
  aggregate.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_pipeline, check_text
from sjoin.compiler.backends.pipeline import compile_pipeline
from sjoin.compiler.checks.job_warnings import pipeline_refusals

from .test_pipeline_on_spark import _compare, _run_pipeline, _spark_rows

pytestmark = pytest.mark.spark


def _t(seconds: int) -> str:
    return f"2026-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def _plan(text: str) -> Any:
    result = check_text(text, "kinds.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return result.plan


ORDERS = "stream orders (order_id BIGINT, customer_id BIGINT, amount DOUBLE, order_time TIMESTAMP)"
PAYMENTS = "stream payments (order_id BIGINT, status STRING, pay_time TIMESTAMP)"


def _order(batch: int, order_id: int, customer: int, amount: float, t: int) -> dict[str, Any]:
    row = {"order_id": order_id, "customer_id": customer, "amount": amount, "order_time": _t(t)}
    return {"batch": batch, "stream": "orders", "row": row}


def _payment(order_id: int, status: str, t: int) -> dict[str, Any]:
    row = {"order_id": order_id, "status": status, "pay_time": _t(t)}
    return {"batch": 0, "stream": "payments", "row": row}


# Kafka's at-least-once duplicates: the same record twice (an exact copy: which of two
# copies survives is then the same row on both sides)
ORDER_ROWS = [
    _order(0, 1, 10, 25.0, 0),
    _order(0, 1, 10, 25.0, 0),
    _order(0, 2, 20, 5.0, 3),
    _order(0, 3, 30, 40.0, 5),
    _order(0, 3, 30, 40.0, 5),
    _order(0, 4, 10, 60.0, 8),
    _order(0, 5, 99, 70.0, 200),
]
PAYMENT_ROWS = [
    _payment(1, "ok", 10),
    _payment(1, "ok", 10),
    _payment(2, "ok", 12),
    _payment(3, "failed", 20),
    _payment(4, "ok", 30),
    _payment(5, "ok", 205),
]


DEDUP_SPEC = f"""spark 4.3
{ORDERS} watermark order_time delay 10 seconds
{PAYMENTS} watermark pay_time delay 10 seconds
dedup orders_once = orders ON (order_id, order_time)
dedup payments_once = payments ON (order_id) WITHIN WATERMARK
join paid = orders_once AS o INNER JOIN payments_once AS p
  ON o.order_id = p.order_id
  AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 MINUTE
  SELECT o.order_id, o.amount, p.status, p.pay_time
"""


def test_dedups_before_a_join_run_as_python_views(connect_server: str, tmp_path: Path) -> None:
    plan = _plan(DEDUP_SPEC)
    got = _compare(plan, ORDER_ROWS + PAYMENT_ROWS, connect_server, tmp_path, "dedups")
    assert sum(got.values()) == 5  # one match per order, the copies dropped on both sides


ROOT_SPEC = f"""spark 4.3
{ORDERS} watermark order_time delay 10 seconds
dedup orders_seen = orders ON (order_id) WITHIN WATERMARK
"""


def test_a_dedup_as_a_query_root_runs_as_a_python_table(
    connect_server: str, tmp_path: Path
) -> None:
    got = _compare(_plan(ROOT_SPEC), ORDER_ROWS, connect_server, tmp_path, "dedup_root")
    assert sum(got.values()) == 5


VIEW_SPEC = f"""spark 4.3
{ORDERS} watermark order_time delay 10 seconds
{PAYMENTS} watermark pay_time delay 10 seconds
view big_orders = SELECT o.order_id, o.order_time, o.amount * 2 AS doubled
  FROM orders AS o WHERE o.amount > 10 AND o.customer_id <> 20
join settled = big_orders AS b LEFT OUTER JOIN payments AS p
  ON b.order_id = p.order_id
  AND p.pay_time BETWEEN b.order_time AND b.order_time + INTERVAL 1 MINUTE
  WHERE p.status = 'ok' OR p.status IS NULL
  SELECT b.order_id, b.doubled, p.status
"""


def test_a_view_and_a_join_where_run_in_sql(connect_server: str, tmp_path: Path) -> None:
    plan = _plan(VIEW_SPEC)
    got = _compare(plan, ORDER_ROWS + PAYMENT_ROWS, connect_server, tmp_path, "views")
    assert got and sum(got.values()) < len(ORDER_ROWS)  # the WHERE filtered some out


UNION_SPEC = """spark 4.3
stream web (user_id BIGINT, t TIMESTAMP) watermark t delay 5 seconds
stream app (user_id BIGINT, t TIMESTAMP) watermark t delay 20 seconds
union clicks = web UNION ALL app
aggregate per_minute = clicks AS c GROUP BY window(c.t, INTERVAL 1 MINUTE)
  SELECT window(c.t, INTERVAL 1 MINUTE) AS w, count(*) AS n
  OUTPUT MODE append
"""


def test_a_union_runs_in_sql(connect_server: str, tmp_path: Path) -> None:
    rows = [
        {"batch": 0, "stream": s, "row": {"user_id": u, "t": _t(t)}}
        for s, u, t in [
            ("web", 1, 0),
            ("web", 2, 30),
            ("app", 3, 50),
            ("app", 1, 70),
            ("web", 4, 200),
            ("app", 5, 200),
        ]
    ]
    got = _compare(_plan(UNION_SPEC), rows, connect_server, tmp_path, "unions")
    # the windows the global watermark (the slower input's: min(200 - 5, 200 - 20) seconds)
    # closed: [0, 1) and [1, 2) minutes
    assert sum(got.values()) == 2


TABLE_SPEC = f"""spark 4.3
table customers (customer_id BIGINT, segment STRING) from parquet (path = 'customers')
{ORDERS} watermark order_time delay 10 seconds
join enriched = orders AS o LEFT OUTER JOIN customers AS c
  ON o.customer_id = c.customer_id
  SELECT o.order_id, o.amount, c.segment
join unknown = orders AS o LEFT ANTI JOIN customers AS c ON o.customer_id = c.customer_id
"""
CUSTOMERS = [
    {"batch": 0, "table": "customers", "row": {"customer_id": c, "segment": s}}
    for c, s in [(10, "gold"), (20, "silver"), (30, "gold")]
]


def test_a_static_table_is_read_without_stream(connect_server: str, tmp_path: Path) -> None:
    got = _compare(_plan(TABLE_SPEC), ORDER_ROWS + CUSTOMERS, connect_server, tmp_path, "tables")
    assert sum(got.values()) == 1  # `unknown`: order 5, of no customer


CHAIN_SPEC = f"""spark 4.3
table customers (customer_id BIGINT, segment STRING) from parquet (path = 'customers')
{ORDERS} watermark order_time delay 10 seconds
{PAYMENTS} watermark pay_time delay 10 seconds
dedup orders_once = orders ON (order_id, order_time)
view paid_payments = SELECT p.order_id, p.pay_time FROM payments AS p WHERE p.status = 'ok'
join settled = orders_once AS o LEFT OUTER JOIN paid_payments AS p
  ON o.order_id = p.order_id
  AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 MINUTE
  WHERE o.amount > 1
  SELECT o.order_id, o.customer_id, o.amount, o.order_time, p.pay_time
join enriched = settled AS s INNER JOIN customers AS c ON s.customer_id = c.customer_id
  SELECT s.order_id, s.amount, s.order_time, c.segment
"""


def test_a_chain_of_the_new_kinds(connect_server: str, tmp_path: Path) -> None:
    records = ORDER_ROWS + PAYMENT_ROWS + CUSTOMERS
    got = _compare(_plan(CHAIN_SPEC), records, connect_server, tmp_path, "chain")
    assert got


def test_a_csv_table_with_options_and_a_hostile_path_runs_as_sjoin_reads_it(
    connect_server: str, tmp_path: Path
) -> None:
    """The static table's one form on real SDP: a CSV file with a header and `;` between its
    fields (the read's WITH options), under a folder whose name holds a quote, back-quotes,
    `;` and `--` (the back-quoted path), its columns cast to the declared types (SDP refuses
    the CSV file's strings for a BIGINT column otherwise); the project reads back to the
    spec's plan, and the joined rows are the table's."""
    folder = tmp_path / "dim it's `x`; -- y"
    folder.mkdir()
    (folder / "customers.csv").write_text("customer_id;segment\n10;gold\n20;silver\n")
    orders = tmp_path / "orders"
    orders.mkdir()
    rows = [(1, 10), (2, 20), (3, 99)]
    (orders / "part-0.json").write_text(
        "".join(json.dumps({"order_id": o, "customer_id": c}) + "\n" for o, c in rows)
    )
    out = tmp_path / "out" / "enriched"
    path = str(folder / "customers.csv").replace("'", "''")
    spec = check_text(
        f"""spark 4.3
table customers (customer_id BIGINT, segment STRING)
  from csv (path = '{path}', header = 'true', sep = ';')
stream orders (order_id BIGINT, customer_id BIGINT) from json (path = '{orders}')
join enriched = orders AS o LEFT OUTER JOIN customers AS c ON o.customer_id = c.customer_id
  SELECT o.order_id, c.segment
sink enriched to json (path = '{out}')
""",
        "csv.sjoin",
    )
    assert spec.ok and spec.plan is not None, [d.message for d in spec.diagnostics]
    assert pipeline_refusals(spec.plan) == []
    project = tmp_path / "project"
    for relative, text in compile_pipeline(
        spec.plan, "csv", (tmp_path / "storage").as_uri(), "csv.sjoin"
    ).items():
        (project / relative).parent.mkdir(parents=True, exist_ok=True)
        (project / relative).write_text(text, encoding="utf-8")
    back = check_pipeline(project)
    assert back.ok and back.plan is not None, [d.message for d in back.diagnostics]
    assert back.plan.tables[0].source.options == spec.plan.tables[0].source.options
    _run_pipeline(project, connect_server, "sjoin_csv_table")
    got = _spark_rows(out, ["order_id", "segment"])
    assert got == Counter(
        {(order, segment): 1 for order, segment in [(1, "gold"), (2, "silver"), (3, None)]}
    ), got
