"""The expression compiler: Spark's NULL semantics, arithmetic, casts and functions."""

from __future__ import annotations

from decimal import Decimal
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import exp

from sjoin.runtime.engine.eval import (
    Layout,
    compile_expr,
    date_trunc,
    to_spark_string,
    window_spans,
)
from sjoin.runtime.engine.values import parse_timestamp
from sjoin.runtime.errors import QueryError, UnsupportedExpression

from ..harness import plan_of

COLUMNS = "x BIGINT, i INT, y DOUBLE, s STRING, t TIMESTAMP, d DECIMAL(10, 2), b BOOLEAN, dt DATE"
NAMES = ["x", "i", "y", "s", "t", "d", "b", "dt"]
TYPES = ["bigint", "int", "double", "string", "timestamp", "decimal", "boolean", "date"]


@cache
def _compiled(text: str, spark: str) -> Any:
    spec = (
        f"spark {spark}\n"
        f"stream a ({COLUMNS}) watermark t delay 1 second\n"
        f"stream b ({COLUMNS}) watermark t delay 1 second\n"
        f"join j = a AS A INNER JOIN b AS B ON A.x = B.x SELECT {text} AS out\n"
    )
    (join,) = plan_of(spec).joins
    cols = list(zip(NAMES, TYPES, strict=True))
    layout = Layout.of(("left", cols), ("right", cols))
    return compile_expr(join.output[0].expr, layout, ansi=spark.startswith("4"))


def row(**values: Any) -> tuple[Any, ...]:
    if isinstance(values.get("t"), str):
        values["t"] = parse_timestamp(values["t"])
    return tuple(values.get(n) for n in NAMES)


def output_expression(text: str, spark: str = "4.3") -> exp.Expression:
    """The planned (bound) expression of ``text`` in a join's SELECT."""
    spec = (
        f"spark {spark}\n"
        f"stream a ({COLUMNS}) watermark t delay 1 second\n"
        f"stream b ({COLUMNS}) watermark t delay 1 second\n"
        f"join j = a AS A INNER JOIN b AS B ON A.x = B.x SELECT {text} AS out\n"
    )
    (join,) = plan_of(spec).joins
    return join.output[0].expr


def ev(
    text: str, a: dict[str, Any] | None = None, b: dict[str, Any] | None = None, spark: str = "4.3"
) -> Any:
    return _compiled(text, spark)(row(**(a or {})), row(**(b or {})))


# ------------------------------------------------------------------ three-valued logic

T, F, N = True, False, None
LOGIC = [
    (T, T, T, T),
    (T, F, F, T),
    (T, N, N, T),
    (F, T, F, T),
    (F, F, F, F),
    (F, N, F, N),
    (N, T, N, T),
    (N, F, F, N),
    (N, N, N, N),
]


@pytest.mark.parametrize(("p", "q", "and_", "or_"), LOGIC)
def test_and_or_are_three_valued(p: Any, q: Any, and_: Any, or_: Any) -> None:
    assert ev("A.b AND B.b", {"b": p}, {"b": q}) is and_
    assert ev("A.b OR B.b", {"b": p}, {"b": q}) is or_


@pytest.mark.parametrize(("p", "want"), [(T, F), (F, T), (N, N)])
def test_not(p: Any, want: Any) -> None:
    assert ev("NOT A.b", {"b": p}) is want


@pytest.mark.parametrize("op", ["=", "<>", "<", "<=", ">", ">="])
def test_comparisons_with_null_are_null(op: str) -> None:
    assert ev(f"A.x {op} B.x", {"x": None}, {"x": 1}) is None
    assert ev(f"A.x {op} B.x", {"x": 1}, {"x": None}) is None
    assert ev(f"A.x {op} NULL", {"x": 1}) is None


def test_is_null_and_between() -> None:
    assert ev("A.x IS NULL", {"x": None}) is True
    assert ev("A.x IS NOT NULL", {"x": None}) is False
    assert ev("A.x BETWEEN 1 AND 3", {"x": 3}) is True
    assert ev("A.x BETWEEN 1 AND B.x", {"x": 5}, {"x": None}) is None
    assert ev("A.x BETWEEN 6 AND B.x", {"x": 5}, {"x": None}) is False  # false AND null
    assert ev("A.x NOT BETWEEN 1 AND 3", {"x": 4}) is True


def test_in_list_null_semantics() -> None:
    assert ev("A.x IN (1, 2)", {"x": 2}) is True
    assert ev("A.x IN (1, 2)", {"x": 3}) is False
    assert ev("A.x IN (1, NULL)", {"x": 3}) is None
    assert ev("A.x IN (1, NULL)", {"x": 1}) is True
    assert ev("A.x IN (1, 2)", {"x": None}) is None
    assert ev("A.x IN (B.x, 7)", {"x": 7}, {"x": None}) is True
    assert ev("A.x NOT IN (1, NULL)", {"x": 3}) is None


def test_like() -> None:
    assert ev("A.s LIKE 'ab%'", {"s": "abc"}) is True
    assert ev("A.s LIKE 'a_c'", {"s": "abc"}) is True
    assert ev("A.s LIKE 'a_c'", {"s": "abbc"}) is False
    assert ev("A.s LIKE 'a\\%'", {"s": "a%"}) is True
    assert ev("A.s LIKE 'a\\%'", {"s": "ab"}) is False
    assert ev("A.s LIKE '%.%'", {"s": "no dot"}) is False  # regex characters are literal
    assert ev("A.s LIKE B.s", {"s": "xyz"}, {"s": "x%"}) is True
    assert ev("A.s LIKE 'x'", {"s": None}) is None
    assert ev("A.s LIKE 'a%b_'", {"s": "a\nzbq"}) is True  # % spans newlines


def test_case() -> None:
    text = "CASE WHEN A.x > 10 THEN 'big' WHEN A.x > 1 THEN 'mid' ELSE 'small' END"
    assert [ev(text, {"x": v}) for v in (20, 5, 0, None)] == ["big", "mid", "small", "small"]
    simple = "CASE A.x WHEN 1 THEN 'one' WHEN 2 THEN 'two' END"
    assert [ev(simple, {"x": v}) for v in (1, 2, 3, None)] == ["one", "two", None, None]
    assert ev("CASE WHEN A.b THEN A.y ELSE 1 END", {"b": False}) == 1.0


# ------------------------------------------------------------------ arithmetic


def test_integer_arithmetic_and_double_division() -> None:
    assert ev("A.x + B.x", {"x": 2}, {"x": 3}) == 5
    assert ev("A.x - 7", {"x": 2}) == -5
    assert ev("A.x * 3", {"x": 2}) == 6
    got = ev("A.x / 2", {"x": 3})
    assert got == 1.5 and isinstance(got, float)  # `/` is always a double division
    assert ev("A.x / 4", {"x": 2}) == 0.5
    assert ev("A.x % 3", {"x": -7}) == -1  # the sign of the dividend, like Java
    assert ev("A.x + NULL", {"x": 1}) is None
    assert ev("-A.x", {"x": 4}) == -4


def test_division_by_zero_fails_with_ansi_and_is_null_before_4() -> None:
    with pytest.raises(QueryError, match="DIVIDE_BY_ZERO"):
        ev("A.x / 0", {"x": 1}, spark="4.0")
    assert ev("A.x / 0", {"x": 1}, spark="3.5") is None
    assert ev("A.x % 0", {"x": 1}, spark="3.5") is None
    assert ev("A.y / 0", {"y": 1.0}, spark="3.5") is None


def test_integer_overflow_per_ansi_mode() -> None:
    big = 2**63 - 1
    with pytest.raises(QueryError, match="ARITHMETIC_OVERFLOW"):
        ev("A.x + 1", {"x": big}, spark="4.3")
    assert ev("A.x + 1", {"x": big}, spark="3.5") == -(2**63)  # wraps around
    assert ev("A.i + 1", {"i": 2**31 - 1}, spark="3.5") == -(2**31)


def test_decimal_arithmetic_keeps_exact_digits() -> None:
    assert ev("A.d + 0.10", {"d": Decimal("1.25")}) == Decimal("1.35")
    assert ev("A.d * 2", {"d": Decimal("1.25")}) == Decimal("2.50")
    assert ev("A.d + A.y", {"d": Decimal("1.25"), "y": 0.5}) == 1.75  # with a double: double
    third = ev("A.d / 3", {"d": Decimal("1.00")})
    assert isinstance(third, Decimal) and third == Decimal("0.333333")  # DECIMAL(10,2)/INT


def test_timestamp_and_interval_arithmetic_in_microseconds() -> None:
    t = "2026-01-01T00:00:00Z"
    base = parse_timestamp(t)
    assert base is not None
    assert ev("A.t + INTERVAL 1 HOUR", {"t": t}) == base + 3_600_000_000
    assert ev("A.t - INTERVAL 1500 MILLISECONDS", {"t": t}) == base - 1_500_000
    assert ev("A.t + INTERVAL 2 DAYS", {"t": t}) == base + 2 * 86_400_000_000
    assert ev("A.t - B.t", {"t": t}, {"t": "2025-12-31T23:00:00Z"}) == 3_600_000_000
    assert ev("A.t > B.t - INTERVAL 5 SECONDS", {"t": t}, {"t": t}) is True
    assert ev("A.t + INTERVAL 1 SECOND * 2", {"t": t}) == base + 2_000_000
    assert ev("A.t < TIMESTAMP '2026-01-01 00:00:01'", {"t": t}) is True
    assert ev("A.dt < A.t", {"dt": 20453, "t": t}) is True
    assert ev("A.dt = A.t", {"dt": 20454, "t": t}) is True  # DATE meets TIMESTAMP as µs


# ------------------------------------------------------------------ casts


def test_casts() -> None:
    assert ev("CAST(A.s AS BIGINT)", {"s": " 42 "}) == 42
    assert ev("CAST(A.s AS BIGINT)", {"s": "4x"}, spark="3.5") is None
    with pytest.raises(QueryError, match="CAST_INVALID_INPUT"):
        ev("CAST(A.s AS BIGINT)", {"s": "4x"}, spark="4.3")
    assert ev("CAST(A.y AS INT)", {"y": -2.7}) == -2
    assert ev("CAST(A.x AS DOUBLE)", {"x": 3}) == 3.0
    assert ev("CAST(A.x AS STRING)", {"x": 3}) == "3"
    assert ev("CAST(A.y AS STRING)", {"y": 1e20}) == "1.0E20"
    assert ev("CAST(A.y AS STRING)", {"y": 2.5}) == "2.5"
    assert ev("CAST(A.t AS STRING)", {"t": "2026-01-01T10:00:00.5Z"}) == "2026-01-01 10:00:00.5"
    assert ev("CAST(A.t AS BIGINT)", {"t": "1970-01-01T00:01:40.9Z"}) == 100
    assert ev("CAST(A.t AS DOUBLE)", {"t": "1970-01-01T00:01:40.5Z"}) == 100.5
    assert ev("CAST(A.s AS TIMESTAMP)", {"s": "2026-01-01 00:00:00"}) == parse_timestamp(
        "2026-01-01T00:00:00Z"
    )
    assert ev("CAST(A.y AS DECIMAL(5, 1))", {"y": 2.25}) == Decimal("2.3")  # HALF_UP
    assert ev("CAST(A.b AS INT)", {"b": True}) == 1
    assert ev("CAST(A.s AS BOOLEAN)", {"s": "yes"}) is True
    assert ev("CAST(A.x AS STRING)", {"x": None}) is None
    assert to_spark_string(-0.0, "double") == "-0.0"
    assert to_spark_string(1.5e-5, "double") == "1.5E-5"


# ------------------------------------------------------------------ functions


def test_string_functions() -> None:
    assert ev("lower(A.s)", {"s": "AbC"}) == "abc"
    assert ev("upper(A.s)", {"s": "AbC"}) == "ABC"
    assert ev("trim(A.s)", {"s": "  a b  "}) == "a b"
    assert ev("length(A.s)", {"s": "héllo"}) == 5
    assert ev("concat(A.s, '-', A.x)", {"s": "a", "x": 1}) == "a-1"
    assert ev("concat(A.s, B.s)", {"s": "a"}, {"s": None}) is None
    assert ev("substring(A.s, 2, 3)", {"s": "abcdef"}) == "bcd"
    assert ev("substring(A.s, -2)", {"s": "abcdef"}) == "ef"
    assert ev("substring(A.s, 0, 2)", {"s": "abcdef"}) == "ab"
    assert ev("substr(A.s, 10)", {"s": "abc"}) == ""


def test_null_handling_functions() -> None:
    assert ev("coalesce(A.x, B.x, 9)", {"x": None}, {"x": None}) == 9
    assert ev("coalesce(A.x, B.x)", {"x": None}, {"x": 4}) == 4
    assert ev("nvl(A.s, 'none')", {"s": None}) == "none"
    assert ev("ifnull(A.s, 'none')", {"s": "x"}) == "x"
    assert ev("if(A.b, 'yes', 'no')", {"b": None}) == "no"
    assert ev("greatest(A.x, B.x, 3)", {"x": None}, {"x": 7}) == 7
    assert ev("least(A.x, B.x)", {"x": None}, {"x": None}) is None


def test_numeric_functions() -> None:
    assert ev("abs(A.x)", {"x": -3}) == 3
    assert ev("round(A.y)", {"y": 2.5}) == 3.0  # HALF_UP, unlike Python's round
    assert ev("round(A.y, 2)", {"y": 0.125}) == 0.13
    assert ev("round(A.d, 1)", {"d": Decimal("1.25")}) == Decimal("1.3")
    assert ev("round(A.x, -2)", {"x": 1250}) == 1300
    assert ev("floor(A.y)", {"y": -1.5}) == -2
    assert ev("ceil(A.y)", {"y": -1.5}) == -1
    assert ev("ceiling(A.d)", {"d": Decimal("1.01")}) == 2


def test_time_functions() -> None:
    t = "2026-03-15T13:45:30.250Z"
    us = parse_timestamp(t)
    assert us is not None
    assert ev("hour(A.t)", {"t": t}) == 13
    assert ev("minute(A.t)", {"t": t}) == 45
    assert ev("second(A.t)", {"t": t}) == 30
    assert ev("unix_timestamp(A.t)", {"t": t}) == us // 1_000_000
    assert ev("unix_millis(A.t)", {"t": t}) == us // 1000
    assert ev("to_date(A.t)", {"t": t}) == us // 86_400_000_000
    assert ev("timestamp_seconds(A.x)", {"x": 100}) == 100_000_000
    assert ev("timestamp_millis(A.x)", {"x": 1500}) == 1_500_000
    assert ev("date_trunc('HOUR', A.t)", {"t": t}) == parse_timestamp("2026-03-15T13:00:00Z")
    assert ev("date_trunc('month', A.t)", {"t": t}) == parse_timestamp("2026-03-01T00:00:00Z")
    assert ev("date_trunc('nonsense', A.t)", {"t": t}) is None
    assert date_trunc("week", us) == parse_timestamp("2026-03-09T00:00:00Z")  # a Monday
    assert date_trunc("quarter", us) == parse_timestamp("2026-01-01T00:00:00Z")


def test_window_function_and_spans() -> None:
    t = "1970-01-01T00:01:45Z"
    assert ev("window(A.t, INTERVAL 10 SECONDS)", {"t": t}) == (100_000_000, 110_000_000)
    assert ev("window(A.t, '10 seconds')", {"t": t}) == (100_000_000, 110_000_000)
    assert ev("window(A.t, INTERVAL 10 SECONDS)", {"t": None}) is None
    assert window_spans(-1, 10, None) == [(-10, 0)]
    assert window_spans(105, 10, 5) == [(105, 115), (100, 110)]
    assert window_spans(107, 10, 5) == [(105, 115), (100, 110)]
    assert window_spans(7, 10, 5, 1) == [(6, 16), (1, 11)]


def test_unsupported_function_names_it_and_the_supported_ones() -> None:
    layout = Layout.of(("left", [("x", "bigint")]))
    node = exp.Anonymous(this="frobnicate", expressions=[])
    with pytest.raises(UnsupportedExpression) as err:
        compile_expr(node, layout, ansi=True)
    assert "`frobnicate`" in str(err.value)
    assert "lower" in str(err.value) and "window" in str(err.value)
    count = exp.Anonymous(this="count", expressions=[exp.Star()])
    count.meta["function"] = "count"
    with pytest.raises(UnsupportedExpression, match="aggregate"):
        compile_expr(count, layout, ansi=True)


def test_nan_compares_like_spark() -> None:
    nan = float("nan")
    assert ev("A.y = B.y", {"y": nan}, {"y": nan}) is True
    assert ev("A.y > B.y", {"y": nan}, {"y": 1e300}) is True
    assert ev("A.y IN (1.0, B.y)", {"y": nan}, {"y": nan}) is True


# ------------------------------------------------------------------ fused time ranges

RANGE_FORMS = [
    # (condition, reference over (left t, right t) in µs; both non-null)
    (
        "A.t >= B.t - INTERVAL 5 SECONDS AND A.t <= B.t + INTERVAL 10 SECONDS",
        lambda lt, rt: rt - 5_000_000 <= lt <= rt + 10_000_000,
    ),
    (  # written from the right side: compiled flipped, then fused
        "B.t <= A.t + INTERVAL 5 SECONDS AND B.t > A.t - INTERVAL 10 SECONDS",
        lambda lt, rt: lt - 10_000_000 < rt <= lt + 5_000_000,
    ),
    (  # one comparison from each side
        "A.t > B.t AND B.t + INTERVAL 2 SECONDS >= A.t",
        lambda lt, rt: rt < lt <= rt + 2_000_000,
    ),
    (
        "A.t BETWEEN B.t - INTERVAL 1 SECOND AND B.t + INTERVAL 1 SECOND",
        lambda lt, rt: rt - 1_000_000 <= lt <= rt + 1_000_000,
    ),
]


@pytest.mark.parametrize(("text", "reference"), RANGE_FORMS, ids=range(len(RANGE_FORMS)))
@given(
    lt=st.one_of(st.none(), st.integers(-20_000_000, 20_000_000)),
    rt=st.one_of(st.none(), st.integers(-20_000_000, 20_000_000)),
)
def test_time_range_conditions_match_sql_semantics(
    text: str, reference: Any, lt: int | None, rt: int | None
) -> None:
    """The fused closure for `L.t` within a range of `R.t` (read once, compared twice) gives
    what the AND of the two comparisons gives under SQL's NULL rules."""
    got = _compiled(text, "4.3")(row(t=lt), row(t=rt))
    want = None if lt is None or rt is None else reference(lt, rt)
    assert got is want


def test_time_range_edges_are_exact() -> None:
    text = RANGE_FORMS[0][0]
    for lt, want in (
        (-5_000_001, False),
        (-5_000_000, True),
        (10_000_000, True),
        (10_000_001, False),
    ):
        assert _compiled(text, "4.3")(row(t=lt), row(t=0)) is want


BIG38 = "99999999999999999999999999999999999999"


@pytest.mark.parametrize(
    ("text", "value", "expected"),
    [
        # rounded half up to the result type's scale (types.arith_type; Spark 4.3 gives these)
        ("A.d * CAST(0.0000025 AS DECIMAL(38, 10))", "1.00", Decimal("0.000003")),
        ("A.d * CAST(0.0000025 AS DECIMAL(38, 10))", "-1.00", Decimal("-0.000003")),
        ("A.d + 1", "2.50", Decimal("3.50")),
        ("A.d / 3", "10.00", Decimal("3.333333")),
        ("A.d * 0.05", "1.10", Decimal("0.0550")),
        ("A.d % 3", "10.00", Decimal("1.00")),
        ("A.d * CAST(1 AS DECIMAL(38, 10))", "-0.00", Decimal("0.000000")),
    ],
)
def test_decimal_arithmetic_keeps_its_types_scale(text: str, value: str, expected: Any) -> None:
    got = ev(text, {"d": Decimal(value)})
    assert got == expected and str(got) == str(expected)


def test_decimal_arithmetic_overflow_is_null_without_ansi_and_an_error_with() -> None:
    """Checked on Spark 4.3 with spark.sql.ansi.enabled false (NULL) and true (the error:
    tests/runtime/engine/test_eval_vs_spark.py)."""
    text = f"CAST(A.x AS DECIMAL(38, 0)) + {BIG38}"
    assert ev(text, {"x": 1}, spark="3.5") is None
    with pytest.raises(QueryError, match="NUMERIC_VALUE_OUT_OF_RANGE"):
        ev(text, {"x": 1})
    assert ev(text, {"x": -1}) == Decimal("9" * 37 + "8")
