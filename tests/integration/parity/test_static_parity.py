"""Parity of stream-static joins (issue 37, item 4): an inner and a left outer join of a
stream with a static table, run by the generated PySpark job on real Spark (4.3) and by both
engines, compared batch by batch (rows, watermark, and no state operator on either side).

The table is a file table (one version for the whole run: the trace gives its rows once),
handed to the job's build() as a static DataFrame of those rows, as `inputs` may give it;
the stream is fed a micro-batch per trace batch through the memory-stream driver.
"""

from __future__ import annotations

import json
import tempfile
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.spark_driver import StreamDriver
from sjoin.jvm.verify import load_job, normal_row
from sjoin.runtime import run

pytestmark = pytest.mark.spark

HEAD = """\
spark 4.3
table customers (customer_id BIGINT, segment STRING) from parquet (path = 'dim/customers')
stream orders (order_id BIGINT, customer_id BIGINT, amount DOUBLE, order_time TIMESTAMP)
  watermark order_time delay 10 minutes
"""
CUSTOMERS = [(1, "gold"), (2, None), (3, "bronze")]
ORDERS = [
    [(10, 1, 50.0, "2026-01-01T08:00:00Z"), (11, 4, 50.0, "2026-01-01T08:01:00Z")],
    [(12, 3, 5.0, "2026-01-01T08:02:00Z"), (13, None, 20.0, "2026-01-01T08:30:00Z")],
    # an hour behind the watermark (08:20): the stream-static join still joins it
    [(14, 2, 20.0, "2026-01-01T07:00:00Z"), (15, 3, 20.0, "2026-01-01T08:31:00Z")],
]


def _trace() -> list[str]:
    lines = [
        json.dumps({"batch": 0, "table": "customers", "row": {"customer_id": c, "segment": s}})
        for c, s in CUSTOMERS
    ]
    for i, batch in enumerate(ORDERS):
        for oid, cid, amount, t in batch:
            row = {"order_id": oid, "customer_id": cid, "amount": amount, "order_time": t}
            lines.append(json.dumps({"batch": i, "stream": "orders", "row": row}))
    return lines


def _on_spark(spark: Any, plan: Any) -> list[tuple[list[str], str | None, list[Any]]]:
    with tempfile.TemporaryDirectory(prefix="sjoin-static-") as tmp:
        job = load_job(plan, tmp)
        table = spark.createDataFrame(CUSTOMERS, "customer_id BIGINT, segment STRING")
        with StreamDriver(spark, {"orders": job.SCHEMAS["orders"]}) as driver:
            built = job.build(spark, {**driver.inputs, "customers": table})
            driver.start(built["e"])
            for batch in ORDERS:
                driver.feed(
                    {
                        "orders": [
                            {"order_id": o, "customer_id": c, "amount": a, "order_time": t}
                            for o, c, a, t in batch
                        ]
                    }
                )
            results = driver.results()
    return [
        (sorted(normal_row(r) for r in b.rows), b.watermark, b.state_operators) for b in results
    ]


@pytest.mark.parametrize("how", ["INNER", "LEFT OUTER"])
def test_both_engines_agree_with_spark(spark: Any, how: str) -> None:
    spec = (
        HEAD
        + f"join e = orders AS o {how} JOIN customers AS c\n"
        + "  ON o.customer_id = c.customer_id AND o.amount > 10\n"
        + "  SELECT o.order_id, o.order_time, c.segment\n"
    )
    result = check_text(spec, "s.sjoin")
    assert result.ok, result.diagnostics
    spark_batches = _on_spark(spark, result.plan)
    assert all(ops == [] for _, _, ops in spark_batches)  # no state operator on Spark
    assert len(spark_batches) == len(ORDERS)
    for engine in ("reference", "columnar"):
        runtime = run(result.plan, _trace(), engine=engine)  # type: ignore[arg-type]
        assert [b.progress["operators"] for b in runtime.batches] == [[]] * len(ORDERS)
        ours = [sorted(normal_row(r) for _, r in b.rows) for b in runtime.batches]
        assert ours == [rows for rows, _, _ in spark_batches], engine
        theirs = [wm for _, wm, _ in spark_batches]
        assert [b.watermark for b in runtime.batches] == [
            None if wm is None else wm.replace(".000Z", "Z") for wm in theirs
        ], engine
