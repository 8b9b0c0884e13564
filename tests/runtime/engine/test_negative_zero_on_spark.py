"""A DOUBLE/FLOAT sum (and avg) of -0.0 alone is 0.0 on Spark: ``Sum.updateExpressions``
adds from 0.0 (``coalesce(coalesce(sum, zero) + child, sum)``).  Checked on real Spark with a
streaming aggregate, on both engines; the runtime once gave -0.0 here."""

from __future__ import annotations

import json

import pytest

from sjoin.api import check_text
from sjoin.jvm.verify import verify_spec
from sjoin.runtime import run

SPEC = """
stream s (k STRING, t TIMESTAMP, x DOUBLE, f FLOAT)
watermark t delay 1 minute

aggregate totals = s AS s
    GROUP BY s.k
    SELECT s.k, sum(s.x) AS sx, avg(s.x) AS ax, sum(s.f) AS sf, count(*) AS n
    OUTPUT MODE update
"""
ROWS = [  # (batch, k, second, x, f)
    (0, "a", 0, -0.0, -0.0),
    (0, "a", 1, -0.0, -0.0),
    (0, "b", 1, -0.0, -0.0),
    (1, "b", 2, -0.0, -0.0),
    (1, "c", 2, -0.0, 1.5),
    (1, "d", 3, 0.0, -0.0),
]


def _trace() -> list[str]:
    return [
        json.dumps(
            {
                "batch": b,
                "stream": "s",
                "row": {"k": k, "t": f"2026-01-01T00:00:0{sec}Z", "x": x, "f": f},
            }
        )
        for b, k, sec, x, f in ROWS
    ]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_a_sum_of_negative_zeros_is_zero(engine: str) -> None:
    checked = check_text(SPEC, "z.sjoin")
    assert checked.plan is not None
    result = run(checked.plan, _trace(), engine=engine)
    sums = [
        json.dumps([row["sx"], row["ax"], row["sf"]]) for b in result.batches for _, row in b.rows
    ]
    assert sums and all("-0.0" not in s for s in sums), sums


@pytest.mark.spark
def test_spark_sums_negative_zeros_to_zero(spark) -> None:  # type: ignore[no-untyped-def]
    checked = check_text(SPEC, "z.sjoin")
    report = verify_spec(checked, _trace(), spark=spark)
    assert report.agree, report.text()
