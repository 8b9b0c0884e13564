"""The evaluator against Spark SQL itself: each expression is evaluated by Spark (one batch
query, ANSI on, UTC) and by the runtime on the same row."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from sjoin.compiler.backends.pyspark import job_sql
from sjoin.runtime.errors import QueryError

from .test_eval import NAMES, ev, output_expression

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
    # DECIMAL arithmetic at its Spark type's scale (types.arith_type): compared with it
    "A.d * A.d", "A.d / 7", "A.d % 5", "A.d * 0.05 + A.i", "A.d - A.x", "A.d * -2",
    "A.d / A.d", "A.d / A.x * CAST(1.5 AS DECIMAL(38, 30))",
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
    "unix_micros(A.t)", "timestamp_micros(A.x)", "timestamp_micros(unix_micros(A.t))",
    "timestamp_micros(A.i * 1000000000000)",
    "hour(A.t)", "minute(A.t)", "second(A.t)", "A.t + INTERVAL 90 MINUTES",
    "A.t - INTERVAL 2 DAYS", "A.dt < A.t", "window(A.t, '10 minutes')",
    "window(A.t, INTERVAL 10 MINUTES)",
    # text, pattern and math functions (compiler/vocabulary/javatext.py), as the generated job
    # writes them
    "date_format(A.t, 'yyyy-MM-dd HH:mm:ss.SSS')", "date_format(A.t, 'HH:mm:ss.SSS')",
    "date_format(A.t, 'EEE, d MMM yyyy')", "date_format(A.t, 'EEEE MMMM')",
    "date_format(A.t, 'h:mm a')", "date_format(A.t, 'yyyy-MM-dd''T''HH:mm')",
    "date_format(A.t, 'D DDD')", "date_format(A.t, 'yy M d H m s S')", "date_format(A.t, 'SSSSSS')",
    "date_format(A.t, 'Q G z X k K')", "date_format(A.t, 'yyyyy')", "date_format(A.dt, 'dd/MM')",
    "date_format(A.t, NULL)",
    "split(A.s, '_')", "split(A.s, 'l', 2)", "split(A.s, '')", "split(A.s, '.')",
    "split(A.s, 'l', 0)", "split(A.s, 'l', -1)", "split(A.s, '[éo]')", "split(A.s, 'l+', A.x)",
    "element_at(split(A.s, '_'), 1)", "element_at(split(A.s, '_'), -1)",
    "element_at(split(A.s, '_'), -2)",
    "regexp_extract(A.s, '(\\w+)_(\\w+)', 2)", "regexp_extract(A.s, 'zzz(.)', 1)",
    "regexp_extract(A.s, '(H)(x)?', 2)", "regexp_extract(A.s, 'W.r', 0)",
    "regexp_extract(A.s, '([a-z]+)')", "regexp_extract(A.s, '\\s(\\S)', 1)",
    "regexp_replace(A.s, 'l+', 'L')", "regexp_replace(A.s, '(\\w+)_(\\w+)', '$2-$1')",
    "regexp_replace(A.s, 'o', '\\$')", "regexp_replace(A.s, '', '-')",
    "regexp_replace(A.s, '(l)(l)', '$2$1$10')", "regexp_replace(A.s, '^\\s+|\\s+$', '')",
    "lpad(A.s, 20, '*')", "lpad(A.s, 3)", "lpad(A.s, -1, 'x')", "lpad(A.s, 20, '')",
    "lpad(A.s, 18, 'ab')", "rpad(A.s, 18, 'ab')", "rpad(A.s, 3, 'x')", "lpad(A.i, 5, '0')",
    "sqrt(-1)", "sqrt(A.x)", "sqrt(A.d)", "sqrt(A.y * 1000000000000.0)", "sqrt(2)",
    "sign(A.i)", "signum(A.y)", "sign(0)", "sign(A.d)", "pmod(-7, 3)", "pmod(A.i, 2)",
    "pmod(A.x, -3)", "pmod(-7.5, 2)", "pmod(A.d, 5)", "nullif(A.x, 7)", "nullif(A.i, 7)",
    "nullif(A.s, NULL)", "nullif(A.y, 2.5)",
    "year(A.t)", "quarter(A.t)", "month(A.t)", "day(A.t)", "dayofmonth(A.dt)", "dayofweek(A.t)",
    "dayofyear(A.t)", "weekofyear(A.t)", "weekofyear(timestamp_seconds(A.x * 86400 * 365))",
    "dayofweek(timestamp_seconds(A.x * 86400))", "year(timestamp_seconds(-A.x * 86400 * 400))",
]  # fmt: skip


def job_text(text: str) -> str:
    """The Spark SQL the generated job writes for a spec expression (compiler/backends), so
    that Spark reads exactly what a job gives it: string escapes, and window() durations as
    strings (Spark 4.3's SQL window() rejects an INTERVAL literal, _LEGACY_ERROR_TEMP_1207)."""
    return job_sql(output_expression(text))


def _same(mine: Any, want: Any) -> bool:
    """Equal values; NaN is the same as NaN, as Spark's own comparisons treat it."""
    if isinstance(mine, float) and isinstance(want, float) and math.isnan(mine):
        return math.isnan(want)
    if isinstance(mine, Decimal) and isinstance(want, Decimal):  # and the same scale (text)
        return mine == want and mine.as_tuple().exponent == want.as_tuple().exponent
    return bool(mine == want)


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

    from sjoin.jvm.spark_driver import _to_python

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
    texts = {e: job_text(e) for e in EXPRESSIONS}
    # window() filters out a row whose time is NULL (TimeWindowing): see the join scenario
    expressions = [e for e in EXPRESSIONS if not (nulls and e.startswith("window("))]
    selected = frame.selectExpr(*(f"{texts[e]} AS c{n}" for n, e in enumerate(expressions)))
    (got,) = selected.collect()
    mismatches = []
    for n, text in enumerate(expressions):
        want = spark_value(_to_python(got[n], selected.schema.fields[n].dataType))
        mine = ev(text, row, row)
        if isinstance(want, float) and isinstance(mine, Decimal):
            mismatches.append((text, "type", mine, want))
        elif not _same(mine, want) or (
            type(mine) is not type(want) and not (isinstance(mine, int) and isinstance(want, int))
        ):
            mismatches.append((text, mine, want))
    assert mismatches == []


# Errors that Spark raises for these values (ANSI on), and the runtime with the same class.
ERRORS = {
    "element_at(split(A.s, '_'), 5)": "INVALID_ARRAY_INDEX_IN_ELEMENT_AT",
    "element_at(split(A.s, '_'), 0)": "INVALID_INDEX_OF_ZERO",
    "pmod(A.x, 0)": "REMAINDER_BY_ZERO",
    "CAST(A.x AS DECIMAL(38, 0)) * 99999999999999999999999999999999999999": (
        "NUMERIC_VALUE_OUT_OF_RANGE"
    ),
    "CAST(A.x AS DECIMAL(38, 0)) + 99999999999999999999999999999999999999": (
        "NUMERIC_VALUE_OUT_OF_RANGE"
    ),
    "regexp_extract(A.s, '(H)', A.x)": "REGEX_GROUP_INDEX",
}


@pytest.mark.parametrize("text", list(ERRORS))
def test_errors_against_spark_sql(spark: Any, text: str) -> None:
    from pyspark.sql import Row

    frame = spark.createDataFrame([Row(x=ROW["x"], s=ROW["s"])], "x BIGINT, s STRING").alias("A")
    with pytest.raises(Exception, match=ERRORS[text]):
        frame.selectExpr(job_text(text)).collect()
    with pytest.raises(QueryError, match=ERRORS[text]):
        ev(text, ROW, ROW)


# Regexes run on RE2 (compiler/vocabulary/javaregex.py) with Java's results: each pattern below (the
# spec's text) is run by Spark and by the runtime on every subject, every group extracted,
# every match replaced and the text split.  They cover the pathological shapes on texts
# short enough for Java, empty matches, groups in loops (Java keeps the empty last
# iteration's groups), alternation order, Java's line terminators for `.` and `$`, ASCII
# case folding, and Java's `\s` (with \x0B).
PATTERNS = [
    "(a+)+$", "(a*)*b", "(a|aa)+$", "(a|)*", "(a*)*", "(a|b|)*", "(\\w*_*)*", "((a)|b)+",
    "(?:(a)|b)*", "(a)|b", "(x)?y", "a|ab", "ab|a", "(a|ab)(c|bcd)(d*)", "$", "a$", ".$",
    "a\\Z", "(?s).+", ".+", "(?i)A[b-c]", "[^a]+", "\\s+", "\\W+", "(\\b)*", "((\\z))*", "x*",
    "(a*?)(a*)", "a{2,3}?", "[]a]+", "\\x41|\\u00e9|\\t", "\\Qa.b\\E|[\\d-z]",
]  # fmt: skip
SUBJECTS = [
    "aaaa", "aaab", "ab", "abcd", "a\n", "a\r\n", "a\r", "b\u2028", "A\x85", "", "x y_z",
    "Ab\tc\x0b", "é1-", "a.b]",
]  # fmt: skip


def _pattern_expressions() -> list[str]:
    from sjoin.compiler.vocabulary.javatext import group_count

    texts = []
    for p in PATTERNS:
        texts += [f"regexp_extract(A.s, '{p}', {g})" for g in range(group_count(p) + 1)]
        texts += [f"regexp_replace(A.s, '{p}', '[$0]')", f"split(A.s, '{p}')"]
    return texts


def test_regexes_against_spark_sql(spark: Any) -> None:
    from pyspark.sql import Row

    frame = spark.createDataFrame([Row(s=s) for s in SUBJECTS], "s STRING").alias("A")
    expressions = _pattern_expressions()
    selected = frame.selectExpr("s", *(f"{job_text(e)} AS c{n}" for n, e in enumerate(expressions)))
    mismatches = []
    for got in selected.collect():
        for n, text in enumerate(expressions):
            want, mine = got[n + 1], ev(text, {"s": got[0]})
            if mine != want:
                mismatches.append((text, got[0], mine, want))
    assert mismatches == []


LIKES = [
    "%a%a%a%a%a%a%a%a%a%b", "%a", "a%", "%", "_", "__", "a_c%", "%\\%%", "%\\_", "a\\\\b",
    "%b_", "%%a%%", "", "%\n%", "_%_",
]  # fmt: skip
LIKE_SUBJECTS = ["aaaaaaaaaaaaaaaaab", "a", "abc", "a%", "_", "a\\b", "ab\n", "", "xa", "ba"]


def test_like_against_spark_sql(spark: Any) -> None:
    """LIKE with the pattern a column (read from the trace), matched without backtracking."""
    from pyspark.sql import Row

    pairs = [(s, p) for s in LIKE_SUBJECTS for p in LIKES]
    frame = spark.createDataFrame([Row(s=s, p=p) for s, p in pairs], "s STRING, p STRING")
    got = [r[0] for r in frame.selectExpr("s LIKE p").collect()]
    mine = [ev("A.s LIKE B.s", {"s": s}, {"s": p}) for s, p in pairs]
    assert [(pair, m, g) for pair, m, g in zip(pairs, mine, got, strict=True) if m != g] == []


# Errors Spark raises for values read from the data, and the runtime with the same class
DATA_ERRORS = [
    ("lpad(s, x, 'x')", "A.s", "lpad(A.s, A.x, 'x')", {"s": "a", "x": 2**31}, "CAST_OVERFLOW"),
    ("rpad(s, x)", "A.s", "rpad(A.s, A.x)", {"s": "a", "x": -(2**31) - 1}, "CAST_OVERFLOW"),
    ("s LIKE p", "a\\b", "A.s LIKE B.s", {"s": "a\\b"}, "ESC_IN_THE_MIDDLE"),
    ("s LIKE p", "a\\", "A.s LIKE B.s", {"s": "a\\"}, "ESC_AT_THE_END"),
]


@pytest.mark.parametrize(("sql", "pattern", "text", "row", "error"), DATA_ERRORS)
def test_errors_from_the_data_against_spark_sql(
    spark: Any, sql: str, pattern: str, text: str, row: dict[str, Any], error: str
) -> None:
    from pyspark.sql import Row

    values = {"s": row["s"], "x": row.get("x", 1), "p": pattern}
    frame = spark.createDataFrame([Row(**values)], "s STRING, x BIGINT, p STRING")
    with pytest.raises(Exception, match=error):
        frame.selectExpr(sql).collect()
    with pytest.raises(QueryError, match=error):
        ev(text, row, {"s": pattern})


# Argument types: what Spark 4.3's analyzer takes and refuses (UNEXPECTED_INPUT_TYPE), and the
# binder the same (E012, a type error, for a refused one).  unix_millis/unix_micros cast no DATE;
# timestamp_millis/timestamp_micros take integers only (timestamp_seconds any number).
ARGUMENT_TYPES = {
    "unix_micros(A.t)": True, "unix_micros(A.dt)": False, "unix_millis(A.dt)": False,
    "unix_timestamp(A.dt)": True, "timestamp_micros(A.i)": True, "timestamp_micros(A.y)": False,
    "timestamp_micros(A.d)": False, "timestamp_millis(A.y)": False, "timestamp_millis(A.d)": False,
    "timestamp_seconds(A.y)": True, "timestamp_micros(unix_micros(A.t))": True,
}  # fmt: skip


@pytest.mark.parametrize("text", list(ARGUMENT_TYPES))
def test_argument_types_against_spark_sql(spark: Any, text: str) -> None:
    from pyspark.errors import AnalysisException
    from pyspark.sql import Row

    from sjoin.api import check_text

    from .test_eval import COLUMNS

    schema = "i INT, y DOUBLE, t TIMESTAMP, d DECIMAL(10, 2), dt DATE"
    frame = spark.createDataFrame([Row(i=1, y=1.5, t=None, d=None, dt=None)], schema).alias("A")
    spec = (
        f"stream a ({COLUMNS}) watermark t delay 1 second\n"
        f"stream b ({COLUMNS}) watermark t delay 1 second\n"
        f"join j = a AS A INNER JOIN b AS B ON A.x = B.x SELECT {text} AS out\n"
    )
    errors = [d.code for d in check_text(spec).diagnostics if d.severity == "error"]
    if ARGUMENT_TYPES[text]:
        frame.selectExpr(text.replace("A.", "")).collect()
        assert errors == []
    else:
        with pytest.raises(AnalysisException, match="UNEXPECTED_INPUT_TYPE"):
            frame.selectExpr(text.replace("A.", "")).collect()
        assert errors == ["E012"]


SWEEP_TYPES = {
    "ti": "TINYINT", "i": "INT", "x": "BIGINT", "y": "DOUBLE", "f": "FLOAT", "d": "DECIMAL(10, 2)",
    "s": "STRING", "t": "TIMESTAMP", "dt": "DATE", "b": "BOOLEAN",
}  # fmt: skip


@pytest.mark.parametrize("arity", [1, 2])
def test_no_call_spark_refuses_is_accepted(spark: Any, arity: int) -> None:
    """Every function that takes ``arity`` arguments (functions.FUNCTIONS, aggregates and
    non-deterministic ones aside) on columns of every type: where Spark 4.3's analyzer
    refuses the call, the binder refuses it too (E012), so no job sjoin passes fails at its
    start.  (The other way, sjoin is stricter than Spark in places: it casts no argument
    implicitly, so `lower(1)` or `hour('...')` are E012 where Spark casts: not asserted.)"""
    import itertools

    from pyspark.errors import AnalysisException
    from pyspark.sql import Row

    from sjoin.api import check_text
    from sjoin.compiler.vocabulary.functions import FUNCTIONS

    schema = ", ".join(f"{c} {kind}" for c, kind in SWEEP_TYPES.items())
    frame = spark.createDataFrame([Row(**dict.fromkeys(SWEEP_TYPES))], schema)
    head = "".join(
        f"stream {s} (k BIGINT, {schema}) watermark t delay 1 second\n" for s in ("a", "b")
    )
    names = [
        f.name
        for f in FUNCTIONS.values()
        if f.min_args <= arity <= (f.max_args or arity)
        and not f.aggregate
        and f.deterministic
        and f.name != "window"
    ]
    assert {"unix_micros", "timestamp_micros", "lower"} <= set(names) or arity == 2
    assert {"date_trunc", "round", "pmod"} <= set(names) or arity == 1
    accepted_refused = []
    for name in names:
        for columns in itertools.product(SWEEP_TYPES, repeat=arity):
            try:
                _ = frame.selectExpr(f"{name}({', '.join(columns)})").schema  # analysed
                spark_ok = True
            except AnalysisException:
                spark_ok = False
            call = f"{name}({', '.join(f'A.{c}' for c in columns)})"
            spec = head + f"join j = a AS A INNER JOIN b AS B ON A.k = B.k SELECT {call} AS out\n"
            errors = [d.code for d in check_text(spec).diagnostics if d.severity == "error"]
            if not spark_ok and not errors:
                accepted_refused.append(f"{name}({', '.join(SWEEP_TYPES[c] for c in columns)})")
            elif not spark_ok:
                assert errors == ["E012"], (call, errors)
    assert accepted_refused == []
