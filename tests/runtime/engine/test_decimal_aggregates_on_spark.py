"""``sum`` and ``avg`` of DECIMALs as Spark types and computes them, checked on real Spark
with streaming aggregates (issue 26):

- types: ``sum(DECIMAL(p, s))`` is DECIMAL(p + 10, s) and ``avg`` DECIMAL(p + 4, s + 4),
  each bounded to 38 (``Sum.resultType``, ``Average.resultType``, ``DecimalType.bounded``);
  the planner once typed avg as DOUBLE and sum as its argument's type;
- values: avg rounds HALF_UP to its scale; a sum whose prefix leaves its type stays
  overflowed for good (in one batch or across batches, though the total comes back in
  range): NULL without ANSI, ARITHMETIC_OVERFLOW with it, raised when the group is output
  (in append mode: when the window closes, not when the rows arrive); an avg whose
  quotient does not fit its type alike.

Each check runs the runtime on both engines with the same plan.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.planning.plan import Plan
from sjoin.jvm.spark_driver import StreamDriver, session_confs
from sjoin.jvm.verify import load_job, verify_spec
from sjoin.runtime import RunError, run

BIG = "9" * 37 + "0"
T0 = "2026-01-01T00:00:00Z"

TYPES = """spark 4.3
stream s (k BIGINT, t TIMESTAMP, w DECIMAL(6, 2), v DECIMAL(38, 0), x DECIMAL(36, 36))
watermark t delay 10 seconds
aggregate a = s AS S GROUP BY S.k
  SELECT S.k AS k, sum(S.w) AS sw, avg(S.w) AS aw, sum(S.v) AS sv, avg(S.v) AS av,
    sum(S.x) AS sx, avg(S.x) AS ax
  OUTPUT MODE update
"""
# avg: 1.00/3 and 2.00/3 round HALF_UP at scale 6; x's avg has scale 38 (bounded)
TYPES_ROWS = [
    {"k": 1, "t": T0, "w": "1.00", "v": "1", "x": "0.123456789012345678901234567890123456"},
    {"k": 1, "t": T0, "w": "0.00", "v": "2", "x": "0.5"},
    {"k": 1, "t": T0, "w": "0.00", "v": None, "x": None},
    {"k": 2, "t": T0, "w": "2.00", "v": "-7", "x": "0.000000000000000000000000000000000001"},
    {"k": 2, "t": T0, "w": "0.00", "v": "9" * 34, "x": None},  # an avg of 34 digits
    {"k": 2, "t": T0, "w": "0.00", "v": "0", "x": "0.000000000000000000000000000000000002"},
]


def _plan(text: str) -> Plan:
    checked = check_text(text, "decimal.sjoin")
    assert checked.ok and checked.plan is not None, checked.diagnostics
    return checked.plan


def _trace(batches: list[list[dict[str, Any]]]) -> list[str]:
    return [
        json.dumps({"batch": b, "stream": "s", "row": row})
        for b, rows in enumerate(batches)
        for row in rows
    ]


@pytest.mark.spark
def test_spark_types_decimal_sums_and_averages_as_the_plan(spark: Any, tmp_path: Path) -> None:
    plan = _plan(TYPES)
    (node,) = plan.aggregates
    job = load_job(plan, str(tmp_path))
    with StreamDriver(spark, job.SCHEMAS) as driver:
        schema = job.build(spark, driver.inputs)["a"].schema
    spark_types = {f.name: f.dataType.simpleString() for f in schema.fields}
    planned = {o.name: str(o.type).lower().replace(", ", ",") for o in node.output}
    assert spark_types == planned
    assert planned == {
        "k": "bigint",
        "sw": "decimal(16,2)",
        "aw": "decimal(10,6)",
        "sv": "decimal(38,0)",
        "av": "decimal(38,4)",
        "sx": "decimal(38,36)",
        "ax": "decimal(38,38)",
    }


@pytest.mark.spark
def test_spark_sums_and_averages_decimals_as_the_runtime(spark: Any) -> None:
    """The runtime against the generated job on Spark (ANSI, 4.x), batch by batch: HALF_UP
    averages, an average with all of its type's 34 integer digits, one of scale 38."""
    checked = check_text(TYPES, "decimal.sjoin")
    report = verify_spec(checked, _trace([TYPES_ROWS[:3], TYPES_ROWS[3:]]), spark=spark)
    assert report.agree, report.text()


# the same functions, per window in append mode: a group's result is computed when its
# window closes (batch 2's no-data batch), after the overflow of batch 0
OVERFLOW = """spark {version}
stream s (k BIGINT, t TIMESTAMP, v DECIMAL(38, 0)) watermark t delay 10 seconds
aggregate a = s AS S GROUP BY window(S.t, INTERVAL 10 SECONDS), S.k
  SELECT S.k AS k, sum(S.v) AS sv, avg(S.v) AS av, count(*) AS n
  OUTPUT MODE append
"""
# k 1: BIG + BIG leaves DECIMAL(38, 0); the third row brings the total back: still NULL;
# k 2: a sum in range whose average does not fit DECIMAL(38, 4); k 3: in range.  With ANSI
# Spark fails at the first group it outputs, in an order of its own: one group at a time.
GROUPS = {
    1: [BIG, BIG, "-" + BIG],
    2: [BIG],
    3: ["5"],
}


def _batches(keys: list[int]) -> list[list[dict[str, Any]]]:
    first = [{"k": k, "t": T0, "v": v} for k in keys for v in GROUPS[k]]
    return [first, [{"k": 9, "t": "2026-01-01T00:01:40Z", "v": "1"}]]  # closes the window


def _spark_outputs(
    spark: Any, ansi: bool, batches: list[list[dict[str, Any]]]
) -> tuple[list[list[dict[str, Any]]], str | None]:
    """Each fed batch's output rows (k, sv, av, n) on Spark, until the query fails."""
    from pyspark.sql import functions as F

    outputs: list[list[dict[str, Any]]] = []
    confs = {"spark.sql.ansi.enabled": "true" if ansi else "false"}
    with (
        session_confs(spark, confs),
        StreamDriver(spark, {"s": "k BIGINT, t TIMESTAMP, v DECIMAL(38,0)"}) as driver,
    ):
        s = driver.inputs["s"].withWatermark("t", "10 seconds")
        driver.start(
            s.groupBy(F.window("t", "10 seconds"), "k").agg(
                F.sum("v").alias("sv"), F.avg("v").alias("av"), F.count("*").alias("n")
            ),
            "append",
        )
        for batch in batches:
            try:
                driver.feed({"s": batch})
            except Exception as err:  # the query died: Spark's error, in words
                return outputs, str(err)
            outputs.append(
                sorted(
                    (
                        {key: r[key] for key in ("k", "sv", "av", "n")}
                        for b in driver.results()
                        for r in b.rows
                    ),
                    key=lambda r: r["k"],
                )
            )
        return outputs, None


def _runtime_outputs(
    ansi: bool, engine: Any, batches: list[list[dict[str, Any]]]
) -> tuple[list[dict[str, Any]], str | None]:
    plan = _plan(OVERFLOW.format(version="4.3" if ansi else "3.5"))
    try:
        result = run(plan, _trace(batches), engine=engine)
    except RunError as err:
        return [], str(err)
    rows = [
        {key: row[key] for key in ("k", "sv", "av", "n")}
        for b in result.batches
        for _, row in b.rows
    ]
    return sorted(rows, key=lambda r: r["k"]), None


@pytest.mark.spark
def test_a_decimal_sum_that_overflows_is_null_for_good(spark: Any) -> None:
    batches = _batches([1, 2, 3])
    outputs, error = _spark_outputs(spark, False, batches)
    assert error is None
    assert outputs == [
        [],
        [
            {"k": 1, "sv": None, "av": None, "n": 3},
            {"k": 2, "sv": Decimal(BIG), "av": None, "n": 1},
            {"k": 3, "sv": Decimal("5"), "av": Decimal("5.0000"), "n": 1},
        ],
    ]
    for engine in ("reference", "columnar"):
        rows, runtime_error = _runtime_outputs(False, engine, batches)
        assert runtime_error is None
        assert rows == outputs[1]
        assert [str(r["av"]) for r in rows if r["av"] is not None] == ["5.0000"]


@pytest.mark.spark
@pytest.mark.parametrize(
    ("key", "error_class"), [(1, "ARITHMETIC_OVERFLOW"), (2, "NUMERIC_VALUE_OUT_OF_RANGE")]
)
def test_ansi_fails_when_the_group_is_output(spark: Any, key: int, error_class: str) -> None:
    """No error while the rows arrive (batch 0 runs), the error when the window closes."""
    batches = _batches([key, 3])
    outputs, error = _spark_outputs(spark, True, batches)
    assert outputs == [[]]
    assert error is not None and f"[{error_class}" in error
    for engine in ("reference", "columnar"):
        _, runtime_error = _runtime_outputs(True, engine, batches)
        assert runtime_error is not None and runtime_error.startswith(f"[{error_class}]")
