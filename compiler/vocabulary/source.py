"""Source text and spans.

Spans are character offsets; line and column are derived only when rendering, so that
every stage can carry positions cheaply and precisely (as codespan and ariadne do).

A line ends at LF, CRLF or a lone CR (as in Python's universal newlines and Spark's SQL
lexer, whose comments end at either), so a spec gives the same line numbers whichever of
the three its editor wrote.  Text shown to a user (a source line under a diagnostic, a
snippet quoted in a message) goes through :func:`visible`, which replaces characters that
would corrupt a terminal or reorder the line by one visible stand-in each.
"""

from __future__ import annotations

import ast
import bisect
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LINE_BREAK = re.compile(r"\r\n?|\n")

# the names of a Spark Declarative Pipelines project's spec file
SPEC_NAMES = ("spark-pipeline.yml", "spark-pipeline.yaml")


class PipelineError(ValueError):
    """A path that is no pipeline sjoin can read (the message says why)."""


def is_pipeline(path: str | Path) -> bool:
    """Whether ``path`` is read as a pipeline (a .sql file, a spark-pipeline.yml, or a
    directory: ``compiler/frontend/project.py``) rather than as a .sjoin spec.  Here, beside the
    sources, so that telling the two apart loads nothing of the SQL front end (`sjoin
    check` of a .sjoin spec never loads it)."""
    p = Path(path)
    return p.suffix.lower() == ".sql" or p.name in SPEC_NAMES or p.is_dir()


def is_pyspark_job(path: str | Path) -> bool:
    """Whether ``path`` is read as a PySpark job (a .py file: docs/pyspark.md)."""
    return Path(path).suffix.lower() == ".py"


def entry_defined(path: str, name: str, one_argument: bool = False) -> bool:
    """Whether the job's module defines a function ``name`` at its top level (read with
    ``ast``, before it runs: a job with an entry point is not run as ``__main__``); with
    ``one_argument``, only a function that can be called with the session alone counts
    (``sjoin compile``'s ``build(spark, inputs)`` is no entry point: that job runs as a
    script, its ``main()``)."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return False
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name == name
        and (not one_argument or _takes_one_argument(node.args))
        for node in tree.body
    )


def _takes_one_argument(args: ast.arguments) -> bool:
    """A signature ``f(spark)`` can be called with: one positional parameter or more (or
    ``*args``), all but the first with a default, and no keyword-only one without."""
    positional = [*args.posonlyargs, *args.args]
    if not positional and args.vararg is None:
        return False
    required = len(positional) - len(args.defaults)
    kw_required = [d for d in args.kw_defaults if d is None]
    return required <= 1 and not kw_required


# Characters a spec may never hold outside the places that allow them (see
# compiler/frontend/parse.py
# for where TAB and CR are allowed): C0 and C1 controls but TAB, LF and CR; lone surrogates;
# the line and paragraph separators; the bidirectional embeddings, overrides and isolates
# that "Trojan Source" (CVE-2021-42574) uses to make text display in another order.
HOSTILE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
# The longest text a message quotes whole (Source.snippet).
MAX_SNIPPET = 200
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

# Names of the C0 and C1 control characters (Unicode gives them no character name).
_C0 = (  # noqa: SIM905 - a table reads best as words
    "NUL SOH STX ETX EOT ENQ ACK BEL BS TAB LF VT FF CR SO SI "
    "DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US"
).split()
_C1 = (  # noqa: SIM905
    "PAD HOP BPH NBH IND NEL SSA ESA HTS HTJ VTS PLD PLU RI SS2 SS3 "
    "DCS PU1 PU2 STS CCH MW SPA EPA SOS SGC SCI CSI ST OSC PM APC"
).split()
_LONG = {"TAB": "TAB", "LF": "LINE FEED", "VT": "LINE TABULATION", "FF": "FORM FEED"}
_LONG.update({"CR": "CARRIAGE RETURN", "NEL": "NEXT LINE", "ESC": "ESCAPE"})


def char_name(ch: str) -> str:
    """``U+0000 NUL``, ``U+2028 LINE SEPARATOR``, ``lone surrogate U+D800``: a character
    named so that a reader can find it even when it is invisible."""
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:
        return f"lone surrogate U+{code:04X}"
    if code < 0x20:
        name = _LONG.get(_C0[code], _C0[code])
    elif code == 0x7F:
        name = "DEL"
    elif 0x80 <= code <= 0x9F:
        name = _LONG.get(_C1[code - 0x80], _C1[code - 0x80])
    else:
        name = unicodedata.name(ch, "")
    return f"U+{code:04X} {name}".rstrip()


def _stand_in(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: U+2400 is "␀"
    if code == 0x7F:
        return "\u2421"  # ␡
    return "\ufffd"


def visible(text: str) -> str:
    """``text`` with each control character, lone surrogate, line separator and bidi
    control replaced by one visible stand-in (TAB is kept), so that printing it cannot send
    escape sequences to a terminal or reorder the line, and columns still line up."""
    return HOSTILE.sub(_stand_in, text) if HOSTILE.search(text) else text


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range of character offsets ``[start, end)`` in one source text."""

    start: int
    end: int

    @staticmethod
    def of(meta: Any, offset: int = 0) -> Span:
        """The span of a Lark tree's ``meta`` (an empty tree gets an empty span at 0)."""
        if getattr(meta, "empty", True):
            return Span(offset, offset)
        return Span(meta.start_pos + offset, meta.end_pos + offset)

    def cover(self, other: Span) -> Span:
        return Span(min(self.start, other.start), max(self.end, other.end))

    # Immutable: a copy of an expression (sqlglot deep-copies each node's meta) shares its
    # spans instead of rebuilding each one through pickling's reduce protocol, which cost a
    # third of checking 10,000 conjuncts.
    def __copy__(self) -> Span:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Span:
        return self


@dataclass(frozen=True)
class Source:
    """One spec file's text, with a line index for offset -> (line, col).

    Lines end at LF, CRLF or a lone CR.  ``outside``: a file of a pipeline project that is
    outside the project's folder (a link to a file elsewhere, or a libraries glob that climbs
    out of it): it is read, as Spark's pipelines read it, but no diagnostic shows its text
    (``diagnostics.shown``; the printer names its path and place only)."""

    path: str
    text: str
    _line_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)
    outside: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]
        starts.extend(m.end() for m in LINE_BREAK.finditer(self.text))
        object.__setattr__(self, "_line_starts", tuple(starts))

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset (clamped into the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def line_text(self, line: int, first: int = 1, last: int | None = None) -> str:
        """The line as shown to a user: its line break excluded, see :func:`visible`; with
        ``first`` and ``last``, only its columns ``first..last`` (1-based, inclusive), so
        that showing a part of a long line does not cost the whole line."""
        start = self._line_starts[line - 1]
        end = self.line_end(line)
        if last is not None:
            end = min(end, start + last)
        return visible(self.text[start + first - 1 : end])

    def line_length(self, line: int) -> int:
        """Characters of ``line``, its line break excluded."""
        return self.line_end(line) - self._line_starts[line - 1]

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line`` (its line break excluded)."""
        if line < len(self._line_starts):
            end = self._line_starts[line]
            return end - (2 if self.text[max(0, end - 2) : end] == "\r\n" else 1)
        return len(self.text)

    def snippet(self, span: Span) -> str:
        """The text of ``span`` as shown to a user in a message: line breaks as LF, see
        :func:`visible`; a span longer than ``MAX_SNIPPET`` characters is shown as its start
        and its end around `` ... `` (a message quotes an expression, not a whole spec)."""
        if span.end - span.start > MAX_SNIPPET:
            head = self.text[span.start : span.start + MAX_SNIPPET // 2]
            tail = self.text[span.end - MAX_SNIPPET // 4 : span.end]
            return f"{self._shown(head)} ... {self._shown(tail)}"
        return self._shown(self.text[span.start : span.end])

    @staticmethod
    def _shown(text: str) -> str:
        return visible(LINE_BREAK.sub("\n", text))

    def locate(self, span: Span) -> tuple[Source, Span]:
        """The file a span is in and the span there: for one file, itself and the span
        (``ProjectSource`` holds several)."""
        return self, span


@dataclass(frozen=True)
class ProjectSource(Source):
    """The text of several files read as one (a pipeline project: its spark-pipeline.yml,
    SQL and Python files): spans are offsets in the whole text, and ``locate`` gives the
    file a span is in and the span in that file, which is what a diagnostic shows."""

    parts: tuple[tuple[int, Source], ...] = ()

    def locate(self, span: Span) -> tuple[Source, Span]:
        if not self.parts:
            return self, span
        starts = [start for start, _ in self.parts]
        i = max(0, bisect.bisect_right(starts, span.start) - 1)
        start, file = self.parts[i]
        local_start = max(0, span.start - start)
        local_end = max(local_start, min(span.end - start, len(file.text)))
        return file, Span(min(local_start, len(file.text)), local_end)
