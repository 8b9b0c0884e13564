"""The catalogue of broken specs: one file per case in ``cases/``, named ``<CODE>_<what>.sjoin``,
or a pipeline's SQL file ``<CODE>_<what>.sql`` (read by the SQL front end, its diagnostics in
the .sql file), or a pipeline project directory ``<CODE>_<what>/`` (its expectations are the
``# expect:`` lines of its spark-pipeline.yml, each naming the file it points into; a
``trace.jsonl`` in it is given as ``--trace`` is).

Each case file starts with header lines

    -- expect: E020 at 12:5
    -- expect: W001 at 9:6 "state of `c`" "from below"

giving a diagnostic code and the 1-based line and column where its span must start;
optional double-quoted texts must all occur in the message (e.g. which join side a warning
is about, and why).  The first line is the primary diagnostic, whose code names the file.
Each line is matched by a distinct diagnostic, so two lines with the same code and position
expect two diagnostics there (one per join side, say).

Rules checked for every case:
- every expectation is met, at exactly that line and column;
- no error is reported that no expectation accounts for (a cascade of follow-up errors, or
  a wrong code, fails the case);
- for cases about warnings only (every expectation a warning), no diagnostic at all is left
  unaccounted for; for error cases, extra warnings are tolerated;
- the rendered text of all diagnostics is snapshotted (``__snapshots__``), so that every
  change of a message, label, help or caret is reviewed.

And across the catalogue: every code of ``compiler/diagnostics/codes.py`` but E999 has a case.

A case is read as ``sjoin check`` reads it (``read_spec``): line breaks as written (a lone CR
is a case of its own), and a lone surrogate may be stored UTF-8-encoded (bytes ED A0 80 for
U+D800), the only way to keep one in a file.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from sjoin.api import CheckResult, check_pipeline, check_pyspark, check_text, read_spec
from sjoin.compiler.diagnostics.codes import CODES
from sjoin.compiler.vocabulary.source import Source
from sjoin.reports.diagnostics import render_plain

CASES_DIR = Path(__file__).parent / "cases"
CASES = sorted(
    [
        *CASES_DIR.glob("*.sjoin"),
        *CASES_DIR.glob("*.sql"),
        *CASES_DIR.glob("*.py"),  # PySpark jobs (docs/pyspark.md)
        *(p for p in CASES_DIR.iterdir() if p.is_dir()),
    ]
)
NAME = re.compile(r"(?P<code>[EW]\d{3})_[a-z0-9_]+(\.sjoin|\.sql|\.py|)")
EXPECT = re.compile(
    r"(?:--|#)\s*expect:\s*(?P<code>[EW]\d{3})\s+at\s+(?:(?P<file>[\w./-]+):)?"
    r'(?P<line>\d+):(?P<col>\d+)(?P<texts>(?:\s+"[^"]*")*)\s*$'
)
NOT_EXPECTED = {"E999"}  # an internal error has no case: the fuzz tests hunt for it


@dataclass(frozen=True)
class Expect:
    code: str
    line: int
    col: int
    texts: tuple[str, ...] = ()
    file: str | None = None  # in a project case: the file it points into

    def matches(self, found: Found) -> bool:
        return (
            (found.code, found.line, found.col) == (self.code, self.line, self.col)
            and self.file in (None, found.file)
            and all(text in found.message for text in self.texts)
        )

    def __str__(self) -> str:
        return f"{self.code} at {self.line}:{self.col}" + "".join(f' "{t}"' for t in self.texts)


@dataclass(frozen=True)
class Found:
    code: str
    severity: str
    line: int
    col: int
    message: str
    file: str = ""

    def __str__(self) -> str:
        return f"{self.code} at {self.file}:{self.line}:{self.col}: {self.message}"


def header(path: Path) -> Path:
    """The file of a case that holds its expectations."""
    return path / "spark-pipeline.yml" if path.is_dir() else path


def expectations(path: Path) -> list[Expect]:
    """The ``-- expect:`` header lines of a case (they must come first in the file)."""
    found = []
    for line in read_spec(header(path)).split("\n"):
        if not line.startswith(("-- expect:", "# expect:")):
            break
        m = EXPECT.fullmatch(line.strip())
        assert m is not None, f"{path.name}: malformed header line {line!r}"
        texts = tuple(re.findall(r'"([^"]*)"', m["texts"]))
        found.append(Expect(m["code"], int(m["line"]), int(m["col"]), texts, m["file"]))
    return found


COMPILE_ONLY = ("W008", "W009")  # reported by `sjoin compile`, not `check`
PIPELINE_ONLY = ("E032",)  # reported by `sjoin compile --target pipeline` only


def check(path: Path) -> CheckResult:
    if path.suffix == ".py":  # a PySpark job, its path relative to the catalogue, as shown
        with contextlib.chdir(CASES_DIR.parent):
            return check_pyspark(Path("cases") / path.name)
    if path.suffix != ".sjoin":  # a pipeline: its paths relative to the catalogue, as shown
        trace = path / "trace.jsonl" if path.is_dir() else None
        with contextlib.chdir(CASES_DIR.parent):
            return check_pipeline(
                Path("cases") / path.name,
                trace=trace if trace is not None and trace.exists() else None,
            )
    result = check_text(read_spec(path), f"cases/{path.name}")
    if path.name.startswith(COMPILE_ONLY):
        from sjoin.compiler.checks.job_warnings import job_warnings

        assert result.plan is not None
        result.diagnostics = sorted(
            [*result.diagnostics, *job_warnings(result.plan)], key=lambda d: d.span.start
        )
    if path.name.startswith(PIPELINE_ONLY):
        from sjoin.compiler.checks.job_warnings import pipeline_refusals

        assert result.plan is not None
        result.diagnostics = sorted(
            [*result.diagnostics, *pipeline_refusals(result.plan)], key=lambda d: d.span.start
        )
    return result


def diagnostics(result: CheckResult) -> list[Found]:
    out = []
    for d in result.diagnostics:
        source, span = result.source.locate(d.span)
        line, col = source.line_col(span.start)
        shown = Path(source.path)
        where = shown.relative_to(Path("cases") / shown.parts[1]).as_posix()
        out.append(Found(d.code, d.severity, line, col, d.message, where))
    return out


def match(expected: list[Expect], found: list[Found]) -> tuple[list[Expect], list[Found]]:
    """Pair each expectation with a distinct diagnostic; return the unmet expectations and
    the diagnostics left over.  Expectations with a message text claim theirs first."""
    left = list(found)
    unmet = []
    for exp in sorted(expected, key=lambda e: -len(e.texts)):
        hit = next((f for f in left if exp.matches(f)), None)
        if hit is None:
            unmet.append(exp)
        else:
            left.remove(hit)
    return unmet, left


def describe(found: list[Found]) -> str:
    return "\n".join(f"    {f}" for f in found) or "    (none)"


# ---------------------------------------------------------------------- the catalogue itself


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 45


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case_file_is_well_formed(path: Path) -> None:
    m = NAME.fullmatch(path.name)
    assert m is not None, f"{path.name}: name it <CODE>_<what>.sjoin (lower case words)"
    expected = expectations(path)
    assert expected, f"{path.name}: starts with no `-- expect: CODE at LINE:COL` line"
    assert expected[0].code == m["code"], (
        f"{path.name}: the first expectation ({expected[0].code}) is not the file's code"
    )
    for exp in expected:
        assert exp.code in CODES, f"{path.name}: {exp.code} is not in compiler/diagnostics/codes.py"
    for exp in expected:
        where = path / exp.file if exp.file else path
        source = Source(path.name, read_spec(where))  # its lines, as diagnostics count them
        last_line, _ = source.line_col(len(source.text))
        assert exp.line <= last_line, f"{path.name}: {exp} is past the end of the file"
        assert exp.col <= len(source.line_text(exp.line)) + 1, (
            f"{path.name}: {exp} is past its line"
        )


def test_every_code_has_a_case() -> None:
    covered = {exp.code for path in CASES for exp in expectations(path)}
    named = {path.name[:4] for path in CASES}
    missing = sorted(set(CODES) - NOT_EXPECTED - (covered & named))
    assert not missing, f"codes without a case file in tests/compiler/diagnostics/cases/: {missing}"


# ---------------------------------------------------------------------- each case


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case(path: Path) -> None:
    expected = expectations(path)
    found = diagnostics(check(path))
    unmet, extra = match(expected, found)
    warning_case = all(CODES[e.code].severity == "warning" for e in expected)
    unexpected = [f for f in extra if warning_case or f.severity == "error"]
    problems = []
    if unmet:
        problems.append("missing: " + ", ".join(map(str, unmet)))
    if unexpected:
        what = "diagnostics" if warning_case else "errors"
        problems.append(f"unexpected {what}: " + "; ".join(map(str, unexpected)))
    assert not problems, (
        f"{path.name}: " + " | ".join(problems) + "\n  all diagnostics:\n" + describe(found)
    )


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case_never_crashes(path: Path) -> None:
    """A broken spec is a user's problem, never an internal error."""
    codes = [d.code for d in check(path).diagnostics]
    assert "E999" not in codes


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_rendered(path: Path, text_snapshot) -> None:  # type: ignore[no-untyped-def]
    result = check(path)
    rendered = "\n\n".join(render_plain(d, result.source) for d in result.diagnostics)
    assert rendered + "\n" == text_snapshot


def test_no_consumer_warnings_after_a_syntax_error() -> None:
    """A broken join is what reads the streams: no W002 may call their watermarks unused."""
    path = CASES_DIR / "E001_no_cascade_after_syntax_error.sjoin"
    codes = [d.code for d in check(path).diagnostics]
    assert codes == ["E001"], codes
