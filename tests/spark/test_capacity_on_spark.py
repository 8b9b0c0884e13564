"""`sjoin plan --rates` on real Spark: a LEFT OUTER join fed a generated trace at given rates
through its generated job (HDFS-backed state store); after warm-up the predicted state rows
are within 10% of Spark's numRowsTotal and the predicted bytes within 25% of its
memoryUsedBytes (docs/capacity.md has the full table, benchmarks/capacity.py)."""

from __future__ import annotations

from typing import Any

import pytest

from ..planner.test_capacity import load_bench

pytestmark = pytest.mark.spark


def test_predicted_state_on_spark(spark: Any) -> None:
    bench = load_bench()
    case = bench.case(
        "spark-test", bench.RANGE, (150, 100), how="LEFT OUTER", keys=1000, delays=(5, 5),
        width=5, batches=8,
    )  # fmt: skip
    cap, observed, log = bench.run_case(case, spark)
    op = cap.operators[0]
    assert observed.batches >= 3, log
    assert observed.rows_spark == pytest.approx(op.rows, rel=0.10), log
    assert observed.rows_spark == pytest.approx(observed.rows_runtime, rel=0.001), log
    assert observed.bytes_spark == pytest.approx(op.bytes, rel=0.25), log
