"""Hostile input, round 2: what one row can cost.  A pattern that makes Java's backtracking
matcher take minutes, a pad to 2^31 characters, a round to 2^31 digits and a window that
slides by a millisecond over a day are each either run in bounded time and memory with
Spark's result, refused by `check` with the spec's location, or failed at run time with a
clear error (never E999, never a MemoryError).  Every function path is probed, on both
engines."""

from __future__ import annotations

import time
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.runtime import run
from sjoin.runtime.errors import QueryError

from .harness import plan_of
from .test_eval import ev

# a run of the pathological shape takes Java minutes; here each call must be quick
FAST = 5.0  # seconds: a loaded CI machine pauses; the Java blowup is minutes
LONG = "a" * 5_000


def _timed(text: str, a: dict[str, Any], b: dict[str, Any] | None = None) -> Any:
    start = time.perf_counter()
    value = ev(text, a, b or a)
    assert time.perf_counter() - start < FAST, text
    return value


# (expression, the row's `s`, the other row's `s`, Spark's value): every path that runs a
# Java regex or a LIKE pattern, with the patterns of the issue and their relatives
PATHOLOGICAL = [
    ("regexp_extract(A.s, '(a+)+$', 0)", LONG + "b", None, ""),
    ("regexp_extract(A.s, '(a+)+$', 1)", LONG, None, "a" * 5_000),
    ("regexp_extract(A.s, '(a|aa)+$', 0)", LONG + "!", None, ""),
    ("regexp_extract(A.s, '(a*)*b', 0)", LONG, None, ""),
    ("regexp_extract(A.s, '^(\\w+\\s?)*$', 0)", "word " * 1_000 + "!", None, ""),
    ("regexp_replace(A.s, '(a*)*b', 'x')", LONG, None, LONG),
    ("regexp_replace(A.s, '(a+)+$', 'x')", LONG + "b", None, LONG + "b"),
    ("regexp_replace(A.s, '(.*a){12}', 'x')", LONG[:2_000], None, "x"),
    ("split(A.s, '(a+)+b')", LONG, None, [LONG]),
    ("element_at(split(A.s, '(a|a)*c'), 1)", LONG, None, LONG),
    ("A.s LIKE '" + "%a" * 14 + "b'", LONG, None, False),
    ("A.s LIKE '" + "%a" * 14 + "'", LONG, None, True),
    ("A.s LIKE '" + "%_a" * 14 + "b%'", LONG, None, False),
    ("A.s LIKE B.s", LONG, "%a" * 14 + "b", False),
    ("A.s LIKE B.s", LONG, "%a" * 14 + "%", True),
    ("A.s LIKE B.s", LONG, "%a_" * 200 + "%", True),
    ("A.s LIKE B.s", LONG, "%a_" * 2_600 + "%", False),
]


@pytest.mark.parametrize(("text", "s", "other", "want"), PATHOLOGICAL)
def test_pathological_patterns_run_in_linear_time(
    text: str, s: str, other: str | None, want: Any
) -> None:
    assert _timed(text, {"s": s}, {"s": other} if other is not None else None) == want


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_both_engines_run_the_pathological_pattern(engine: str) -> None:
    spec = (
        "stream a (k BIGINT, s STRING, t TIMESTAMP) watermark t delay 1 second\n"
        "stream b (k BIGINT, p STRING, t TIMESTAMP) watermark t delay 1 second\n"
        "join j = a AS A INNER JOIN b AS B ON A.k = B.k AND A.s LIKE B.p "
        "SELECT A.k, regexp_extract(A.s, '(a+)+$', 0) AS e, "
        "regexp_replace(A.s, '(a*)*b', '-') AS r\n"
    )
    t0 = "2026-01-01T00:00:00Z"
    records = [
        {"batch": 0, "stream": "a", "row": {"k": 1, "s": "a" * 3_000 + "!", "t": t0}},
        {"batch": 0, "stream": "b", "row": {"k": 1, "p": "%a" * 14 + "!", "t": t0}},
    ]
    start = time.perf_counter()
    result = run(plan_of(spec), records, engine=engine)  # type: ignore[arg-type]
    assert time.perf_counter() - start < 10 * FAST
    rows = [r for b in result.batches for _, r in b.rows]
    assert rows == [{"k": 1, "e": "", "r": "a" * 3_000 + "!"}]


# --------------------------------------------------------------- patterns check refuses

REFUSED = [
    ("regexp_extract(a.s, '(a)\\1', 0)", "back-reference"),
    ("regexp_replace(a.s, '(?=a)', 'x')", "look-ahead"),
    ("regexp_replace(a.s, '(?<=a)b', 'x')", "look-behind"),
    ("split(a.s, '(?>a+)b')", "atomic group"),
    ("split(a.s, 'a*+b')", "possessive"),
    ("split(a.s, 'a{1001}')", "above 1000"),
    ("split(a.s, '(a?)+')", "repetition other than"),
    ("split(a.s, '(|a)*')", "prefers an empty match"),
    ("split(a.s, '(?m)^a')", "multi-line"),
    ("split(a.s, '[a[b]]')", "class inside a class"),
    ("split(a.s, '[a&&b]')", "intersection"),
    ("split(a.s, 'a{2')", "invalid regular expression"),
    ("split(a.s, '*a')", "invalid regular expression"),
    ("split(a.s, '\\i')", "invalid regular expression"),
    ("a.s LIKE 'a\\b'", "INVALID_FORMAT.ESC_IN_THE_MIDDLE"),
    ("a.s LIKE 'a\\'", "INVALID_FORMAT.ESC_AT_THE_END"),
    ("lpad(a.s, 2147483648, 'x')", "CAST_OVERFLOW"),
    ("rpad(a.s, -2147483649)", "CAST_OVERFLOW"),
    ("lpad(a.s, 1073741824, '€')", "more than a Spark string holds"),
    ("round(a.x, 2147483648)", "CAST_OVERFLOW"),
    ("round(a.x, a.x)", "the scale must be a constant"),
    ("window(a.t, '1 day', '1 millisecond')", "86,400,000 windows"),
    ("window(a.t, INTERVAL 1 DAY, INTERVAL 8 SECONDS)", "10,800 windows"),
]
CHECK_SPEC = (
    "stream a (x BIGINT, s STRING, t TIMESTAMP) watermark t delay 1 second\n"
    "stream b (x BIGINT, s STRING, t TIMESTAMP) watermark t delay 1 second\n"
    "join j = a INNER JOIN b ON a.x = b.x SELECT {} AS out\n"
)


@pytest.mark.parametrize(("expression", "message"), REFUSED)
def test_check_refuses_with_the_location(expression: str, message: str) -> None:
    spec = CHECK_SPEC.format(expression)
    errors = [d for d in check_text(spec).diagnostics if d.severity == "error"]
    assert len(errors) == 1, errors
    (error,) = errors
    assert error.code in ("E012", "E014") and message in error.message, error.message
    assert error.span is not None and spec.find(expression) <= error.span.start
    assert error.span.end <= spec.find(expression) + len(expression)


ACCEPTED = [
    "regexp_extract(a.s, '(a+)+$', 0)",
    "split(a.s, '(a|)*')",
    "split(a.s, '(a*)*b')",
    "regexp_replace(a.s, '(?<name>x)(?i:y)', '$1')",
    "lpad(a.s, 2000000000, 'x')",  # Spark makes such a string (2 GB)
    "round(a.x, -2147483648)",
    "window(a.t, INTERVAL 1 DAY, INTERVAL 9 SECONDS)",  # 9,600 windows
]


@pytest.mark.parametrize("expression", ACCEPTED)
def test_check_accepts_the_bounded_ones(expression: str) -> None:
    result = check_text(CHECK_SPEC.format(expression))
    assert [d for d in result.diagnostics if d.severity == "error"] == []


# --------------------------------------------------------------- sizes from the data

SIZES = [
    # a BIGINT length is cast to INT as Spark does: CAST_OVERFLOW with ANSI on (4.x) ...
    ("lpad(A.s, A.x, 'x')", {"s": "a", "x": 2**31}, "4.3", "CAST_OVERFLOW"),
    ("rpad(A.s, A.x, 'x')", {"s": "a", "x": 2**62}, "4.3", "CAST_OVERFLOW"),
    ("lpad(A.s, -A.x)", {"s": "a", "x": 2**31 + 1}, "4.3", "CAST_OVERFLOW"),
    # ... and wrapped without it (3.5): 2^31 is -2^31, 2^62 is 0
    ("lpad(A.s, A.x, 'x')", {"s": "a", "x": 2**31}, "3.5", ""),
    ("rpad(A.s, A.x, 'x')", {"s": "a", "x": 2**62}, "3.5", ""),
    # within INT, a result over Spark's string size fails as it does in Spark
    ("lpad(A.s, A.i, 'x')", {"s": "a", "i": 2**31 - 1}, "4.3", "SJOIN_STRING_TOO_LONG"),
    ("rpad(A.s, A.i, '€')", {"s": "a", "i": 2**30}, "4.3", "SJOIN_STRING_TOO_LONG"),
    ("rpad(A.s, A.i, 'x€')", {"s": "é", "i": 1_500_000_000}, "4.3", "SJOIN_STRING_TOO_LONG"),
    ("lpad(A.s, A.i, '')", {"s": "abc", "i": 2**31 - 1}, "4.3", "abc"),
    ("lpad(A.s, A.i, 'x')", {"s": "abc", "i": -(2**31)}, "4.3", ""),
    ("rpad(A.s, A.i)", {"s": "abc", "i": 2}, "4.3", "ab"),
]


@pytest.mark.parametrize(("text", "row", "spark", "want"), SIZES)
def test_pad_lengths_from_the_data(text: str, row: dict[str, Any], spark: str, want: str) -> None:
    start = time.perf_counter()
    if want.isupper():
        with pytest.raises(QueryError, match=want):
            ev(text, row, row, spark=spark)
    else:
        assert ev(text, row, row, spark=spark) == want
    assert time.perf_counter() - start < FAST


ROUNDS = [
    ("round(A.y, 2147483647)", {"y": 1.5}, 1.5),
    ("round(A.y, 400)", {"y": 1.5}, 1.5),
    ("round(A.y, -400)", {"y": 1.5e300}, 0.0),
    ("round(A.y, -2147483647)", {"y": -2.5}, 0.0),
    ("round(A.y, 300)", {"y": 1.2345e-300}, 1e-300),
    ("round(A.d, 2147483647)", {"d": "1.50"}, "1.50"),
    ("round(A.d, -2147483647)", {"d": "1.50"}, "0"),
    ("round(A.x, 2147483647)", {"x": 7}, 7),
    ("round(A.x, -2147483647)", {"x": 7}, 0),
    ("round(A.x, -1)", {"x": 5}, 10),
]


@pytest.mark.parametrize(("text", "row", "want"), ROUNDS)
def test_round_to_any_scale_is_bounded(text: str, row: dict[str, Any], want: Any) -> None:
    from decimal import Decimal

    if "d" in row:
        row = {"d": Decimal(row["d"])}
        want = Decimal(want)
    start = time.perf_counter()
    assert ev(text, row, row) == want
    assert time.perf_counter() - start < FAST
