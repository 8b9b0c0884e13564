"""The evaluator against Spark SQL itself: each expression is evaluated by Spark (one batch
query, ANSI on, UTC) and by the runtime on the same row."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from .test_eval import NAMES, ev

pytestmark = pytest.mark.spark

ROW = {
    "x": 7,
    "i": -3,
    "y": 2.5,
    "s": " Héllo_World ",
    "t": "2026-03-15T13:45:30.250Z",
    "d": Decimal("12.34"),
    "b": True,
    "dt": 20527,  # 2026-03-15
}
NULLS = dict.fromkeys(NAMES)
EXPRESSIONS = [
    "A.x / 2", "A.x % 3", "A.i % 2", "-A.i * A.x", "A.x + A.y", "A.d + 1", "A.d * A.x",
    "A.d / 3", "A.d / A.y", "A.y / 4", "A.x - A.i * 2",
    "A.x > A.y", "A.s LIKE '%llo\\_W%'", "A.s LIKE 'H%'", "A.x IN (1, 7, NULL)",
    "A.i IN (1, NULL)", "A.x BETWEEN A.i AND 7", "NOT (A.b AND A.i > 0)",
    "CASE WHEN A.x > 5 THEN 'big' ELSE 'small' END", "CASE A.i WHEN -3 THEN 1.5 ELSE 2 END",
    "CAST(A.y AS INT)", "CAST(A.d AS BIGINT)", "CAST(A.y AS STRING)", "CAST(A.x AS DOUBLE)",
    "CAST(A.t AS BIGINT)", "CAST(A.t AS DOUBLE)", "CAST(A.t AS STRING)", "CAST(A.d AS STRING)",
    "CAST(A.y AS DECIMAL(6, 3))", "CAST(A.b AS INT)", "CAST(A.y * 100000000000000000000 AS STRING)",
    "lower(A.s)", "upper(A.s)", "trim(A.s)", "length(A.s)", "concat(A.s, A.x, A.b)",
    "substring(A.s, 2, 4)", "substring(A.s, -4)", "substring(A.s, 0, 3)",
    "coalesce(NULL, A.i, A.x)", "nvl(NULL, A.y)", "if(A.x > 1, A.i, A.x)",
    "greatest(A.i, A.x, 3)", "least(A.i, A.y)", "abs(A.i)", "round(A.y)", "round(A.d, 1)",
    "round(A.x, -1)", "floor(A.y)", "ceil(-A.y)", "date_trunc('HOUR', A.t)",
    "date_trunc('WEEK', A.t)", "date_trunc('QUARTER', A.t)", "unix_timestamp(A.t)",
    "unix_millis(A.t)", "timestamp_seconds(A.x)", "timestamp_millis(A.x)", "to_date(A.t)",
    "hour(A.t)", "minute(A.t)", "second(A.t)", "A.t + INTERVAL 90 MINUTES",
    "A.t - INTERVAL 2 DAYS", "A.dt < A.t", "window(A.t, '10 minutes')",
    "window(A.t, INTERVAL 10 MINUTES)",
]  # fmt: skip
# Spark 4.3's SQL window() rejects an INTERVAL literal (_LEGACY_ERROR_TEMP_1207: "The
# duration and time inputs to window must be an integer, long or string literal"), which
# sjoin accepts: Spark evaluates the string form instead.
SPARK_TEXT = {"window(A.t, INTERVAL 10 MINUTES)": "window(A.t, '10 minutes')"}


def spark_value(value: Any) -> Any:
    """A value Spark returned, as the runtime holds it (µs, days, (start, end))."""
    if isinstance(value, datetime):
        return (value - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    if isinstance(value, date):
        return (value - date(1970, 1, 1)).days
    if isinstance(value, dict):
        return (spark_value(value["start"]), spark_value(value["end"]))
    return value


@pytest.mark.parametrize("nulls", [False, True], ids=["values", "nulls"])
def test_expressions_against_spark_sql(spark: Any, nulls: bool) -> None:
    from pyspark.sql import Row

    from sjoin.spark_driver import _to_python

    values = dict(ROW)
    values["t"] = datetime(2026, 3, 15, 13, 45, 30, 250000, tzinfo=UTC)
    values["dt"] = date(2026, 3, 15)
    row = NULLS if nulls else ROW
    if nulls:
        values = dict(NULLS)
    schema = (
        "x BIGINT, i INT, y DOUBLE, s STRING, t TIMESTAMP, d DECIMAL(10, 2), b BOOLEAN, dt DATE"
    )
    frame = spark.createDataFrame([Row(**values)], schema).alias("A")
    # window() filters out a row whose time is NULL (TimeWindowing): see the join scenario
    expressions = [e for e in EXPRESSIONS if not (nulls and e.startswith("window("))]
    selected = frame.selectExpr(
        *(f"{SPARK_TEXT.get(e, e)} AS c{n}" for n, e in enumerate(expressions))
    )
    (got,) = selected.collect()
    mismatches = []
    for n, text in enumerate(expressions):
        want = spark_value(_to_python(got[n], selected.schema.fields[n].dataType))
        mine = ev(text, row, row)
        if isinstance(want, float) and isinstance(mine, Decimal):
            mismatches.append((text, "type", mine, want))
        elif mine != want or (
            type(mine) is not type(want) and not (isinstance(mine, int) and isinstance(want, int))
        ):
            mismatches.append((text, mine, want))
    assert mismatches == []
