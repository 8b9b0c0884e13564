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

from ..harness import plan_of
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


# --------------------------------------------------------------- strings a function builds
# Issue 35, item 24: `lpad(v, 100000000, 'xy')` over 20 rows ended in E999 on a MemoryError.
# The runtime builds strings of at most MAX_BUILT_STRING_BYTES (64 MiB) with every function
# that builds one, on both engines, and fails before building a longer one.

BUILT = [
    "lpad(A.s, 100000000, 'xy')",
    "rpad(A.s, 70000000)",
    "lpad(A.s, A.n, '€')",  # "ab" and 22,369,621 characters of 3 bytes: 64 MiB and 1 byte
    "concat(lpad(A.s, 40000000, 'x'), rpad(A.s, 40000000, 'y'))",
    "concat(A.s, lpad(A.s, 60000000, 'x'), lpad(A.s, 10000000, 'é'))",
    "regexp_replace(lpad(A.s, 100000, 'x'), 'x', A2)",  # 1,000 characters for each x
]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
@pytest.mark.parametrize("expression", BUILT)
def test_a_string_past_the_runtimes_size_fails_before_it_is_built(
    expression: str, engine: str
) -> None:
    from sjoin.runtime import RunError
    from sjoin.runtime.engine.eval import MAX_BUILT_STRING_BYTES

    assert MAX_BUILT_STRING_BYTES == 2**26
    expression = expression.replace("A2", "'" + "y" * 1_000 + "'")
    spec = (
        "stream a (k BIGINT, s STRING, n INT, t TIMESTAMP) watermark t delay 1 second\n"
        "stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
        "join j = a AS A INNER JOIN b AS B ON A.k = B.k AND A.t = B.t "
        f"SELECT A.k, {expression} AS v\n"
    )
    t0 = "2026-01-01T00:00:00Z"
    extra = {"s": "ab", "n": 22_369_623}
    records = [
        {"batch": 0, "stream": s, "row": {"k": k, "t": t0, **(extra if s == "a" else {})}}
        for k in range(20)
        for s in ("a", "b")
    ]
    start = time.process_time()
    with pytest.raises(RunError, match=r"SJOIN_STRING_TOO_LONG.*at most 67,108,864 bytes"):
        run(plan_of(spec), records, engine=engine)  # type: ignore[arg-type]
    assert time.process_time() - start < FAST


@pytest.mark.parametrize(
    ("expression", "size"),
    [
        ("lpad(A.s, A.i, 'x')", 2**26),  # exactly the limit: built
        ("concat(A.s, lpad(A.s, A.i - 4, 'x'))", None),
    ],
)
def test_a_string_up_to_the_runtimes_size_is_built(expression: str, size: int | None) -> None:
    row = {"s": "ab", "i": 2**26}
    value = ev(expression, row, row)
    if size is not None:
        assert len(value.encode()) == size
    else:
        assert value.startswith("abx") and len(value) == 2 + 2**26 - 4


def test_out_of_memory_is_said_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that runs out of memory all the same says so, exit 1: not E999."""
    from click.testing import CliRunner

    from sjoin.cli import main as cli

    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(cli, "load", exhausted)
    result = CliRunner().invoke(cli.main, ["check", "x.sjoin"])
    assert result.exit_code == 1
    assert "E999" not in result.stderr and "error: out of memory" in result.stderr


def test_a_long_date_format_pattern_is_parsed_once_and_renders_in_linear_time() -> None:
    """A 100,000-character pattern of 50,000 fields: parsed once per distinct pattern, then
    each row in milliseconds (issue 35 measured 11 s of CPU a row)."""
    from sjoin.compiler.vocabulary import javatext

    pattern = "h " * 49_990
    javatext.date_pattern.cache_clear()
    start = time.process_time()
    ev(f"date_format(A.t, '{pattern}')", {"t": 0}, {"t": 0})
    first = time.process_time() - start
    start = time.process_time()
    for _ in range(20):
        value = ev(f"date_format(A.t, '{pattern}')", {"t": 0}, {"t": 0})
    assert value == "12 " * 49_989 + "12 "
    assert javatext.date_pattern.cache_info().misses == 1
    assert time.process_time() - start < max(FAST, 20 * first)
