"""Fuzzing the checker: no input, however broken, makes ``check_text`` raise or report E999.

``check_text`` turns any exception of a compiler stage into one E999 diagnostic, so "no
E999" is how these tests see a crash.  Inputs are example specs (and the broken specs of the
diagnostics catalogue) with a random slice replaced by random text, and fully random text;
the random text mixes SQL-ish tokens, quotes, back-quotes, comment openers, unicode, very
long names and deep parentheses.  ``test_many_inputs`` alone checks at least 20,000 inputs;
the total is printed at the end of the run (see ``conftest.py``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sjoin.api import CheckResult, check_text, read_spec
from sjoin.cli.main import main
from sjoin.compiler.vocabulary.source import HOSTILE
from sjoin.reports.diagnostics import render_plain

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = {p.name: p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("examples/*.sjoin"))}
CASES = {  # as `sjoin check` reads them: a case may hold a UTF-8-encoded lone surrogate
    p.name: read_spec(p)
    for p in sorted((ROOT / "tests" / "compiler" / "diagnostics" / "cases").glob("*.sjoin"))
}
# Small but complete specs: cheap to check, so the big test can afford many of them, and
# each still reaches the binder and the planner (outer join, range, aggregate, settings).
SMALL = [
    "spark 4.0\n"
    "stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
    "stream b (k BIGINT, t TIMESTAMP, s STRING) watermark t delay 1 minute\n"
    "join j = a LEFT OUTER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE\n",
    "spark 3.3\nset correctness_check = false\n"
    "stream a (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds\n"
    "stream b (k BIGINT, u TIMESTAMP) watermark u delay 10 seconds\n"
    "join j = a AS x FULL OUTER JOIN b AS y ON x.k = y.k AND y.u >= x.t AND y.u < x.t + "
    "INTERVAL 2 MINUTES SELECT x.k, x.t\n"
    "aggregate g = j GROUP BY window(j.t, INTERVAL 5 MINUTES) SELECT count(*) AS n\n",
    "stream `a b` (`k``x` INT, t TIMESTAMP, d DECIMAL(10, 2)) watermark t delay 2 hours\n"
    "stream c (k INT, t TIMESTAMP) watermark t delay 1 hour\n"
    "join j = `a b` AS l LEFT ANTI JOIN c AS r ON l.`k``x` = r.k AND r.t >= l.t "
    "AND r.t <= l.t + INTERVAL 15 MINUTES\n"
    "sink j to kafka (topic = 'it''s', bootstrap_servers = 'h:1') checkpoint 'c'\n",
]
SEEDS = list(EXAMPLES.values())
ALL_SEEDS = SEEDS + list(CASES.values())

KEYWORDS = " ".join(
    (
        "spark set stream join aggregate sink to from watermark delay on select as inner left",
        "right full outer semi anti group by output mode append update complete checkpoint",
        "interval cast case when then else end between and or not is null in like true false",
        "kafka json parquet timestamp string bigint int double decimal date boolean",
        "distinct try_cast rlike regexp ilike unknown",  # grammar/expr.lark's words
    )
).split()
# fmt: off
TOKENS = [
    *KEYWORDS,
    *(k.upper() for k in KEYWORDS),
    "=", "==", "<>", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "(", ")", ",", ".",
    ";", ":", "&&", "||", "!", "?", "$", "#", "@", "[", "]", "{", "}", "\\", '"',
    "'", "''", "'''", "'x'", "'2026-01-01 00:00:00'", "'unterminated",
    "`", "``", "`a b`", "`", "`unterminated",
    "--", "-- comment\n", "/*", "*/", "/* c */", "/*/", "*/*",
    "0", "1", "-1", "1.5", "007", "99999999999999999999999999", "1e5", ".5", "1.",
    "3.3", "3.4", "3.5", "4.0", "4.2", "4.3", "99.9", "3.5.1",
    "1 month", "2 years", "10 minutes", "5 ms", "0 seconds", "1 fortnight",
    "INTERVAL 1 HOUR", "INTERVAL '1' DAY", "INTERVAL 1 MONTH", "INTERVAL -1 SECOND",
    "INTERVAL 1.5 MINUTES", "TIMESTAMP '2026-01-01'", "TIMESTAMP 'nope'", "DATE '2026-02-30'",
    "DECIMAL(10, 2)", "DECIMAL(99, 99)", "DECIMAL(0)", "VARCHAR(10)", "MAP<STRING,INT>",
    "window(", "window(t, INTERVAL 10 SECONDS)", "rand()", "uuid()", "count(*)", "count(",
    "sum(x)", "lower(", "date_trunc('minute', t)", "coalesce()", "if(true, 1, 'a')",
    "CASE WHEN", "CAST(t AS BIGINT)", "CAST(x AS", "NOT NOT", "IS NOT NULL", "IN ()",
    "a", "b", "c", "i", "k", "t", "x", "j", "a.t", "b.t", "i.ad_id", "c.ad_id", "x.*", "*",
    "impressions", "clicks", "ad_id", "click_time", "impression_time", "campaign",
    "attributed", "orders", "payments", "order_time", "requests", "offers", "zone",
    "multiple_watermark_policy", "shuffle_partitions", "state_store", "correctness_check",
    "no_data_micro_batches", "trigger", "min", "max", "rocksdb", "hdfs",
    "é", "≥", "≤", "日本語", "🙂", "\u0000", "\ufeff", "\u200b", "\u2028", "\u00a0",
    "\u2029", "\u202e", "\u2066", "\u2069", "\x1b[2J", "\x7f", "\x85", "\ud800", "\udfff",
    "`a\u202eb`", "'a\x00b'", "`a\rb`", "'a\rb'", "-- \u202e x\n", "/* \x1b */",
    "\r", "\r\n", "\t", "\x0b", "\x0c", "\n", "\n\n", " ",
    "a" * 300, "x_" * 200, "`" + "long name " * 100 + "`", "'" + "s" * 500 + "'",
    "9" * 400, "(" * 60, ")" * 60, "(" * 400 + "1" + ")" * 400, "((((((((", "))))))))",
    "-" * 50, "NOT " * 200, "a.t + " * 150 + "a.t", "- " * 300 + "1",
    "<=>", "::", "::INT", "IS DISTINCT FROM", "IS NOT DISTINCT FROM", "try_cast(x AS INT)",
    "try_cast(", "count(DISTINCT x)", "f(a => 1)", "=>", "a.t.start", "ARRAY<INT>",
    "a.s || " * 150 + "'x'", "a.x" + "::BIGINT" * 150, "-128::TINYINT", "(a <=> " * 100,
]
# fmt: on
# One draw per atom keeps hypothesis' own cost per input low (the big test needs that).
ATOMS = [*TOKENS, " ", " ", " ", "\n", "\n    ", "\t", *"abcxyz_019éß日🙂'`(),.=<>*-/"]
SPACED = st.lists(st.sampled_from(ATOMS), max_size=30).map(" ".join)  # token-like text
GLUED = st.lists(st.sampled_from(ATOMS), max_size=30).map("".join)  # tokens run together
# Any unicode character, lone surrogates included: check_text takes any str.
UNICODE = st.text(st.characters(), max_size=40)
RANDOM_TEXT = st.one_of(SPACED, GLUED, UNICODE)


def replace_slice(seed: str, data: st.DataObject, max_cut: int | None = None) -> str:
    """``seed`` with one random slice replaced by random text."""
    i = data.draw(st.integers(0, len(seed)), label="start")
    limit = len(seed) if max_cut is None else min(len(seed), i + max_cut)
    k = data.draw(st.integers(i, limit), label="end")
    return seed[:i] + data.draw(RANDOM_TEXT, label="replacement") + seed[k:]


def shown(text: str, limit: int = 1500) -> str:
    """The input for a failure message, shortened when it is huge."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n... ({len(text) - limit} more characters) ...\n{text[-half:]}"


def checked(text: str, counter: Counter[str], name: str) -> CheckResult:
    """Check ``text``, which must come back with diagnostics, never an exception or E999."""
    counter[name] += 1
    result = check_text(text, path="fuzz.sjoin")  # must not raise
    crashes = [d for d in result.diagnostics if d.code == "E999"]
    assert not crashes, f"{crashes[0].message}\n--- input ---\n{shown(text)}"
    for d in result.diagnostics:  # each one points into the text and renders
        assert 0 <= d.span.start <= d.span.end <= len(text), (d, shown(text))
        rendered = render_plain(d, result.source)
        assert rendered.startswith("fuzz.sjoin:")
        # safe for a terminal: no control (but LF, TAB), bidi or separator character, no
        # lone surrogate, no CR
        assert HOSTILE.search(rendered) is None and "\r" not in rendered, rendered
    return result


# The loaded profile ("ci": 200 examples, derandomized) sets the size of every test below
# but the big one, so `HYPOTHESIS_PROFILE=many` turns them all into long runs.
FUZZ = settings(
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.filter_too_much,
    ],
)


# ---------------------------------------------------------------------- (a) mutated examples


@FUZZ
@given(seed=st.sampled_from(sorted(EXAMPLES)), data=st.data())
def test_mutated_examples_never_crash(
    seed: str, data: st.DataObject, fuzz_inputs: Counter[str]
) -> None:
    checked(replace_slice(EXAMPLES[seed], data), fuzz_inputs, "mutated examples")


@FUZZ
@given(seed=st.sampled_from(sorted(EXAMPLES)), data=st.data())
def test_small_edits_of_examples_never_crash(
    seed: str, data: st.DataObject, fuzz_inputs: Counter[str]
) -> None:
    """Short cuts keep most of a spec intact, so the binder and planner see the edit."""
    checked(replace_slice(EXAMPLES[seed], data, max_cut=6), fuzz_inputs, "small edits")


@FUZZ
@given(seed=st.sampled_from(sorted(CASES)), data=st.data())
def test_mutated_catalogue_cases_never_crash(
    seed: str, data: st.DataObject, fuzz_inputs: Counter[str]
) -> None:
    checked(replace_slice(CASES[seed], data, max_cut=20), fuzz_inputs, "mutated cases")


# ---------------------------------------------------------------------- (b) random text


@FUZZ
@given(text=st.text(st.characters(exclude_categories=("Cs",)), max_size=400))
def test_random_text_never_crashes(text: str, fuzz_inputs: Counter[str]) -> None:
    checked(text, fuzz_inputs, "random text")


@FUZZ
@given(text=st.lists(st.sampled_from(ATOMS), max_size=80).map(" ".join))
def test_token_soup_never_crashes(text: str, fuzz_inputs: Counter[str]) -> None:
    checked(text, fuzz_inputs, "token soup")


NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")


@FUZZ
@given(seed=st.sampled_from(sorted(EXAMPLES)), data=st.data())
def test_numbers_of_any_size_never_crash(
    seed: str, data: st.DataObject, fuzz_inputs: Counter[str]
) -> None:
    """Every number of a spec (versions, delays, intervals, precisions, settings, literals)
    replaced by a number of any size: huge ones must be diagnosed, not crash the checker."""
    text = EXAMPLES[seed]
    spots = [m.span() for m in NUMBER.finditer(text)]
    start, end = data.draw(st.sampled_from(spots), label="number")
    digits = data.draw(
        st.one_of(st.integers(0, 10**20).map(str), st.integers(1, 6000).map(lambda n: "9" * n)),
        label="digits",
    )
    checked(text[:start] + digits + text[end:], fuzz_inputs, "numbers of any size")


# ---------------------------------------------------------------------- (c) many inputs

MANY = 20_000


SEPARATORS = (" ", " ", "", "\n")


def atoms(data: bytes) -> str:
    """Bytes -> text, one atom (token or character) and a separator per two bytes."""
    out = []
    for i in range(0, len(data) - 1, 2):
        x, y = data[i], data[i + 1]
        out.append(ATOMS[(x << 8 | y) % len(ATOMS)] + SEPARATORS[(x ^ (y >> 3)) % 4])
    return "".join(out)


def characters(data: bytes) -> str:
    """Bytes -> any unicode text, three bytes per character (surrogates become U+FFFD)."""
    out = []
    for i in range(0, len(data) - 2, 3):
        code = int.from_bytes(data[i : i + 3], "big") % 0x110000
        out.append("\ufffd" if 0xD800 <= code < 0xE000 else chr(code))
    return "".join(out)


def decode(data: bytes) -> str:
    """One input of the big test from a byte string; the first byte says which kind.

    A single `st.binary` draw per input keeps hypothesis' own cost per input low (about a
    third of that of a composite strategy), and shrinking bytes still shrinks the text:
    fewer atoms, earlier seeds, smaller cuts.  One input in eight is an edited spec,
    which reach the binder and the planner; they cost ten times more to check than the rest.
    """
    if not data:
        return ""
    kind, rest = data[0] % 16, data[1:]
    if kind in (0, 1):  # a small spec (0) or an example or catalogue spec (1), edited
        seeds, max_cut = (SMALL, 8) if kind == 0 else (ALL_SEEDS, 12)
        rest = rest.ljust(4, b"\0")
        seed = seeds[rest[0] % len(seeds)]
        at = int.from_bytes(rest[1:3], "big") * (len(seed) + 1) // 65536
        return seed[:at] + atoms(rest[4:]) + seed[at + rest[3] % (max_cut + 1) :]
    if kind == 15:  # any unicode
        return characters(rest)
    return atoms(rest)  # SQL-ish tokens


def test_many_inputs(fuzz_inputs: Counter[str]) -> None:
    """At least 20,000 inputs in one test, derandomized: the same inputs on every run."""

    @settings(FUZZ, max_examples=MANY, derandomize=True, deadline=None)
    @given(text=st.binary(max_size=80).map(decode))
    def check_many(text: str) -> None:
        checked(text, fuzz_inputs, "many inputs")

    before = fuzz_inputs["many inputs"]
    check_many()
    assert fuzz_inputs["many inputs"] - before >= MANY


# ---------------------------------------------------------------------- pathological inputs

PATHOLOGICAL = {
    "empty": "",
    "only whitespace": " \n\t\r\n ",
    "only a comment": "-- nothing here",
    "bom": "\ufeffspark 4.0\n",
    "nul bytes": "spark 4.0\x00\nstream a (k INT)\x00",
    "crlf": EXAMPLES["ad_attribution.sjoin"].replace("\n", "\r\n"),
    "deep parentheses in a condition": EXAMPLES["ad_attribution.sjoin"].replace(
        "i.ad_id = c.ad_id", "(" * 3000 + "i.ad_id = c.ad_id" + ")" * 3000
    ),
    "unbalanced parentheses": "join j = a JOIN b ON " + "(" * 5000,
    "long AND chain": EXAMPLES["ad_attribution.sjoin"].replace(
        "i.ad_id = c.ad_id", " AND ".join(["i.ad_id = c.ad_id"] * 2000)
    ),
    "long arithmetic chain": EXAMPLES["ad_attribution.sjoin"].replace(
        "i.impression_time + INTERVAL 1 HOUR",
        "i.impression_time" + " + INTERVAL 1 SECOND" * 1500,
    ),
    "deep NOT": EXAMPLES["ad_attribution.sjoin"].replace(
        "i.campaign <> 'internal'", "NOT " * 3000 + "i.campaign <> 'internal'"
    ),
    "deep CASE": EXAMPLES["ad_attribution.sjoin"].replace(
        "i.campaign <> 'internal'",
        "CASE WHEN " * 400 + "true" + " THEN true END" * 400,
    ),
    "very long name": EXAMPLES["ad_attribution.sjoin"].replace("clicks", "c" * 100_000),
    "very long quoted name": "stream `" + "x" * 100_000 + "` (k INT)",
    "very long string": "stream a (k INT) from kafka (topic = '" + "t" * 100_000 + "')",
    # Huge numbers: beyond Python's 4300-digit int() limit, or beyond a float's range.
    "spark version with a 5000-digit part": "spark 4." + "9" * 5000,
    "set value with 5000 digits": "set shuffle_partitions = " + "9" * 5000,
    "watermark delay with 5000 digits": "stream a (t TIMESTAMP) watermark t delay "
    + "9" * 5000
    + " seconds",
    "number literal with 5000 digits": EXAMPLES["ad_attribution.sjoin"].replace(
        "i.campaign <> 'internal'", "i.ad_id <> " + "9" * 5000
    ),
    "decimal precision of 400 digits": "stream a (k DECIMAL(" + "9" * 400 + ", 2))",
    "interval of 400 digits in a range": EXAMPLES["ad_attribution.sjoin"].replace(
        "INTERVAL 1 HOUR", "INTERVAL " + "9" * 400 + " HOUR"
    ),
    "numeric offset of 400 digits in a range": EXAMPLES["ad_attribution.sjoin"].replace(
        "c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR",
        "CAST(c.click_time AS BIGINT) >= CAST(i.impression_time AS BIGINT) - " + "9" * 400,
    ),
    "watermark delay of 400 digits": EXAMPLES["ad_attribution.sjoin"].replace(
        "2 hours", "9" * 400 + " hours"
    ),
    "many statements": "stream a (k INT)\n" * 3000,
    "many joins": "stream a (k INT, t TIMESTAMP) watermark t delay 1 second\n"
    + "".join(f"join j{n} = a AS l JOIN a AS r ON l.k = r.k\n" for n in range(300)),
    "unterminated comment at the start": "/*" + EXAMPLES["ad_attribution.sjoin"],
    "unterminated string at the end": EXAMPLES["ad_attribution.sjoin"] + "\nsink x to '",
    "only operators": "=<>!=<=>=+-*/%(),.;" * 200,
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_input(name: str, fuzz_inputs: Counter[str]) -> None:
    checked(PATHOLOGICAL[name], fuzz_inputs, "pathological")


# ---------------------------------------------------------------------- the real CLI


@pytest.fixture(scope="module")
def mutated_files() -> list[tuple[str, str]]:
    """A few mutated specs, fixed so that the CLI test is the same on every run."""
    edits = [
        ("ad_attribution.sjoin", "i.ad_id = c.ad_id", "i.ad_id = `c.ad_id"),
        ("ad_attribution.sjoin", "LEFT OUTER", "LEFT OUTER OUTER"),
        ("checkout_funnel.sjoin", "10 minutes", "10 months"),
        ("checkout_funnel.sjoin", "OUTPUT MODE append", "OUTPUT MODE update"),
        ("iot_window_join.sjoin", "INTERVAL 10 SECONDS", "INTERVAL 10 SECONDS)" + ")" * 50),
        ("ride_matching.sjoin", "min", "max"),
        ("ride_matching.sjoin", "o.offer_time >= r.request_time", "/* o.offer_time"),
        ("unpaid_orders.sjoin", "order_time", "`order time`"),
        ("unpaid_orders.sjoin", "payments", "paymentsé🙂"),
        ("unpaid_orders.sjoin", "spark 4.3", "spark 3.3\n" + "(" * 2000),
    ]
    out = []
    for n, (name, old, new) in enumerate(edits):
        text = EXAMPLES[name]
        assert old in text, (name, old)
        out.append((f"mutated_{n}_{name}", text.replace(old, new, 1)))
    return out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_cli_check_on_mutated_files(  # type: ignore[no-untyped-def]
    tmp_path: Path, mutated_files, fmt: str, fuzz_inputs
) -> None:
    runner = CliRunner()
    for name, text in mutated_files:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        fuzz_inputs["cli"] += 1
        result = runner.invoke(main, ["check", "--format", fmt, "--color", "never", str(path)])
        output = result.output + (result.stderr or "")
        assert result.exit_code in (0, 1), (name, result.exit_code, output)
        assert "Traceback" not in output, (name, output)
        assert "E999" not in output, (name, output)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            name,
            repr(result.exception),
        )
        if fmt == "json":
            payload = json.loads(result.stdout)
            assert isinstance(payload["diagnostics"], list)


def test_cli_check_on_all_mutated_files_at_once(tmp_path: Path, mutated_files) -> None:  # type: ignore[no-untyped-def]
    paths = []
    for name, text in mutated_files:
        (tmp_path / name).write_text(text, encoding="utf-8")
        paths.append(str(tmp_path / name))
    result = CliRunner().invoke(main, ["check", "--color", "never", *paths])
    output = result.output + (result.stderr or "")
    assert result.exit_code == 1, output  # several of the files have errors
    assert "Traceback" not in output
    assert "E999" not in output


def test_cli_check_on_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.sjoin"
    path.write_bytes(
        EXAMPLES["ad_attribution.sjoin"].replace("clicks", "cl\xefcks").encode("latin-1")
    )
    result = CliRunner().invoke(main, ["check", str(path)])
    output = result.output + (result.stderr or "")
    assert result.exit_code == 2, output  # a usage error, as the brief says
    assert "Traceback" not in output
