"""`sjoin verify` of a spec with static tables (issue 37, item 4): the job's `build` is given
each table as a DataFrame of the trace's rows (the job's TABLES schema), so a stream-static
join is compared batch by batch with Spark; what verify cannot feed (a table's second
version, a Delta table's one version after the first batch, tables through Kafka or a
folder trace) is refused before Spark starts, never compared wrongly."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.verify import verify
from sjoin.runtime import UsageError

SPEC = """spark 4.3
table customers (customer_id BIGINT, segment STRING) from FORMAT (path = 'dim/c')
stream orders (order_id BIGINT, customer_id BIGINT, order_time TIMESTAMP)
    watermark order_time delay 10 seconds
stream payments (order_id BIGINT, pay_time TIMESTAMP) watermark pay_time delay 10 seconds
join enriched = orders AS o LEFT OUTER JOIN customers AS c ON o.customer_id = c.customer_id
    SELECT o.order_id, o.order_time, c.segment
join paid = enriched AS e LEFT OUTER JOIN payments AS p
    ON e.order_id = p.order_id
    AND p.pay_time BETWEEN e.order_time AND e.order_time + INTERVAL 20 SECONDS
    SELECT e.order_id, e.segment, p.pay_time
"""


def _plan(fmt: str) -> Any:
    result = check_text(SPEC.replace("FORMAT", fmt), "s.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return result.plan


def _line(batch: int, what: str, name: str, row: dict[str, Any]) -> str:
    return json.dumps({"batch": batch, what: name, "row": row})


def _order(batch: int, oid: int, cid: int | None, second: int) -> str:
    time = f"2026-01-01T00:00:{second:02d}Z"
    return _line(
        batch, "stream", "orders", {"order_id": oid, "customer_id": cid, "order_time": time}
    )


def _payment(batch: int, oid: int, second: int) -> str:
    time = f"2026-01-01T00:00:{second:02d}Z"
    return _line(batch, "stream", "payments", {"order_id": oid, "pay_time": time})


def _customer(batch: int, cid: int, segment: str) -> str:
    return _line(batch, "table", "customers", {"customer_id": cid, "segment": segment})


# what verify reads of a session before it refuses: the refusals come before any query runs
NO_SPARK = SimpleNamespace(version="4.3.0")

TRACE = [
    _customer(0, 1, "gold"),
    _customer(0, 2, "silver"),
    _order(0, 10, 1, 1),
    _order(0, 11, 3, 2),
    _order(0, 12, None, 3),
    _payment(0, 10, 5),
    _order(1, 13, 2, 30),
    _payment(1, 11, 20),
    _order(2, 14, 1, 59),
    _payment(2, 14, 59),
]


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_verify_compares_a_stream_static_join_batch_by_batch(spark: Any, fmt: str) -> None:
    report = verify(_plan(fmt), TRACE, spark=spark)
    assert report.agree, report.text()
    (query,) = report.queries
    assert query.rows > 0 and query.spark_batches == query.runtime_batches > 3


@pytest.mark.parametrize(
    ("fmt", "lines", "message"),
    [
        (
            "delta",
            [_customer(1, 1, "new")],
            "changes during the trace (its rows are in batch 0, 1)",
        ),
        (
            "parquet",
            [_customer(1, 1, "new")],
            "changes during the trace (its rows are in batch 0, 1)",
        ),
    ],
)
def test_a_table_with_two_versions_is_refused_before_spark_starts(
    fmt: str, lines: list[str], message: str
) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        trace = sorted([*TRACE, *lines], key=lambda line: json.loads(line)["batch"])
        verify(_plan(fmt), trace, spark=NO_SPARK)


def test_a_delta_table_first_given_after_the_first_batch_is_refused() -> None:
    late = [line for line in TRACE if '"table"' not in line] + [_customer(1, 1, "gold")]
    late.sort(key=lambda line: json.loads(line)["batch"])
    with pytest.raises(UsageError, match=r"rows are in batch 1, and it is empty before that"):
        verify(_plan("delta"), late, spark=NO_SPARK)


def test_tables_through_kafka_are_refused() -> None:
    with pytest.raises(UsageError, match="without --kafka, on a JSON-lines trace"):
        verify(_plan("parquet"), TRACE, spark=NO_SPARK, make_runner=lambda plan, folder: None)  # type: ignore[arg-type,return-value]
