"""Fuzzing the SQL front end: no pipeline SQL, however broken, makes ``check_pipeline`` raise
or report E999, and every diagnostic points into the file and renders safely.

Inputs are the hand-written pipelines (tests/compiler/frontend/pipelines), the .sql cases of the
diagnostics catalogue and every example written as pipeline SQL (`fmt --to sql`), each with a
random slice replaced by random text (the .sjoin fuzzer's tokens, and SQL's own: STREAM,
WATERMARK, DELAY OF, CREATE FLOW, Spark's escapes and literals), and token soup.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sjoin.api import CheckResult, check_pipeline, check_text
from sjoin.compiler.backends.pipeline import pipeline_sql
from sjoin.compiler.vocabulary.sjointext import Unwritable
from sjoin.compiler.vocabulary.source import HOSTILE
from sjoin.reports.diagnostics import render_plain

from .test_fuzz_check import ATOMS, FUZZ, replace_slice, shown

ROOT = Path(__file__).resolve().parents[3]
SQL_TOKENS = [
    "CREATE", "STREAMING", "TABLE", "MATERIALIZED", "VIEW", "TEMPORARY", "FLOW", "INSERT",
    "INTO", "BY NAME", "AS", "SELECT", "FROM", "STREAM", "STREAM(", "WATERMARK", "DELAY OF",
    "DELAY OF INTERVAL 10 SECONDS", "JOIN", "LEFT ANTI JOIN", "SEMI", "CROSS", "ON", "USING",
    "WHERE", "GROUP BY", "HAVING", "ORDER BY", "SET", "SET a.b = ", "USE", "RESET", ";", ";;",
    "-- sjoin:", "-- sjoin: spark 4.1\n", "-- sjoin: from json (path = 'x')\n",
    "-- sjoin: sink j to json (path = 'y')\n", "'\\n'", "'\\u0041'", "'\\'", "r'\\'", '"dq"',
    "10L", "1.5D", "2BD", ".5", "1e3", "x::INT", "a <=> b", "a || b", "window(t, '1 minute')",
    "INTERVAL '1 hour 30 minutes'", "INTERVAL 1 HOUR 30 MINUTES", "INTERVAL '1:30' HOUR TO MINUTE",
    "timestamp_micros(unix_micros(t))", "TRUE AS m", "IS NULL", "(SELECT * FROM STREAM(a))",
    "read_files('x', format => 'json')", "json.`/x`", "`a``b`", "`a\nb`", "/* /* */",
]  # fmt: skip
SQL_ATOMS = [*ATOMS, *SQL_TOKENS]
SQL_TEXT = st.one_of(
    st.lists(st.sampled_from(SQL_ATOMS), max_size=30).map(" ".join),
    st.lists(st.sampled_from(SQL_ATOMS), max_size=30).map("".join),
    st.text(st.characters(), max_size=40),
)


def _seeds() -> dict[str, str]:
    seeds = {
        p.name: p.read_text()
        for p in sorted((ROOT / "tests/compiler/frontend/pipelines").glob("*.sql"))
    }
    cases = ROOT / "tests" / "compiler" / "diagnostics" / "cases"
    seeds.update({p.name: p.read_text() for p in sorted(cases.glob("*.sql"))})
    for example in sorted((ROOT / "examples").glob("*.sjoin")):
        result = check_text(example.read_text(), example.name)
        assert result.plan is not None
        try:
            seeds[example.name] = pipeline_sql(result.plan, example.name)
        except Unwritable:  # a dedup: the pipeline's SQL has none (E032), so no SQL seed
            continue
    return seeds


SEEDS = _seeds()
WORK = Path(tempfile.mkdtemp(prefix="sjoin-fuzz-sql-"))


def checked(text: str, counter: Counter[str], name: str) -> CheckResult:
    counter[name] += 1
    path = WORK / "fuzz.sql"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    result = check_pipeline(path)  # must not raise
    crashes = [d for d in result.diagnostics if d.code == "E999"]
    assert not crashes, f"{crashes[0].message}\n--- input ---\n{shown(text)}"
    for d in result.diagnostics:
        source, span = result.source.locate(d.span)
        assert source.path == str(path)
        assert 0 <= span.start <= span.end <= len(source.text), (d, shown(text))
        rendered = render_plain(d, result.source)
        assert rendered.startswith(f"{path}:")
        assert HOSTILE.search(rendered) is None and "\r" not in rendered, rendered
    return result


@FUZZ
@given(seed=st.sampled_from(sorted(SEEDS)), data=st.data())
def test_mutated_pipelines_never_crash(
    seed: str, data: st.DataObject, fuzz_inputs: Counter[str]
) -> None:
    original = SEEDS[seed]
    i = data.draw(st.integers(0, len(original)), label="start")
    k = data.draw(st.integers(i, min(len(original), i + 40)), label="end")
    text = original[:i] + data.draw(SQL_TEXT, label="replacement") + original[k:]
    checked(text, fuzz_inputs, "mutated pipelines")


@FUZZ
@given(seed=st.sampled_from(sorted(SEEDS)), data=st.data())
def test_pipelines_with_any_slice_replaced_never_crash(
    seed: str, data: st.DataObject, fuzz_inputs: Counter[str]
) -> None:
    checked(replace_slice(SEEDS[seed], data), fuzz_inputs, "pipelines, a slice replaced")


@FUZZ
@given(text=st.lists(st.sampled_from(SQL_ATOMS), max_size=80).map(" ".join))
def test_sql_token_soup_never_crashes(text: str, fuzz_inputs: Counter[str]) -> None:
    checked(text, fuzz_inputs, "SQL token soup")
