"""`sjoin verify` of a spec with static tables (issue 37, item 4): the job's `build` is given
each table as a DataFrame of the trace's rows (the job's TABLES schema), so a stream-static
join is compared batch by batch with Spark; what verify cannot feed (a table's second
version, a Delta table's one version after the first batch) is refused before Spark starts,
never compared wrongly. A job on its own sources (Kafka, a Delta trace) is given the tables
in the same way."""

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


class _Given(Exception):
    """Raised by a job runner maker to show what verify handed it."""


def test_a_job_run_on_its_own_sources_is_given_the_static_tables() -> None:
    """Through Kafka or a Delta trace (``make_runner``), the job reads its streams itself and
    is given its static tables as DataFrames, as through memory streams."""

    def make_runner(plan: Any, folder: str, tables: Any = None) -> Any:
        raise _Given(tables)

    with pytest.raises(_Given) as given:
        verify(_plan("parquet"), TRACE, spark=NO_SPARK, make_runner=make_runner)
    ((ddl, rows),) = given.value.args[0].values()
    assert list(given.value.args[0]) == ["customers"]
    assert ddl == "`customer_id` BIGINT, `segment` STRING"
    assert rows == [
        {"customer_id": 1, "segment": "gold"},
        {"customer_id": 2, "segment": "silver"},
    ]


def test_a_job_without_tables_is_made_as_before() -> None:
    """A spec without static tables calls ``make_runner(plan, folder)``: a runner maker
    with two parameters keeps working."""
    spec = SPEC.replace("FORMAT", "parquet").split("join enriched")[0]
    spec = spec.replace("table customers (customer_id BIGINT, segment STRING) from parquet", "")
    spec = spec.replace("(path = 'dim/c')\n", "") + (
        "join paid = orders AS o LEFT OUTER JOIN payments AS p ON o.order_id = p.order_id\n"
        "    AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 20 SECONDS\n"
        "    SELECT o.order_id, p.pay_time\n"
    )
    result = check_text(spec, "s.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    streams = [line for line in TRACE if '"table"' not in line]

    def make_runner(plan: Any, folder: str) -> Any:
        raise _Given(folder)

    with pytest.raises(_Given) as given:
        verify(result.plan, streams, spark=NO_SPARK, make_runner=make_runner)
    assert "sjoin-verify-" in given.value.args[0]
