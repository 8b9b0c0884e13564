"""THE renderer of diagnostics: rustc-style text (as styled segments) or JSON records, and
the small phrases every report shares (``count``, ``shown_value``, ``summary``).

Only this module makes text of a diagnostic.  A diagnostic is first laid out as styled
segments (``segments``): ``render_plain`` joins them (what the API, the pytest plugin and
`verify` show), and the command's printer (``cli/printer.py``) colors them on a terminal.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from ..compiler.diagnostics.diagnostics import Diagnostic, shown
from ..compiler.vocabulary.source import Source

STYLES = {"error": "bold red", "warning": "bold yellow"}
MAX_LINE_SHOWN = 200  # characters of a long source line shown under a diagnostic
CONTEXT_SHOWN = 60  # of them, before the diagnostic's column
Segments = list[tuple[str, str]]  # (text, rich style or "")


def count(n: int, noun: str) -> str:
    """``1 row``, ``2 rows``, ``3 batches``, ``2 queries``: a number and its noun."""
    if n == 1:
        return f"1 {noun}"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return f"{n} {noun[:-1]}ies"
    return f"{n} {noun}" + ("es" if noun.endswith(("ch", "s")) else "s")


def _cells(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def segments(d: Diagnostic, src: Source) -> Segments:
    """One diagnostic as rustc-style styled text: header, source line, carets, help.

    A line longer than ``MAX_LINE_SHOWN`` characters is shown as that many of its columns,
    from ``CONTEXT_SHOWN`` before the diagnostic's column, with ``...`` where it is cut: a
    large generated spec may hold a whole join on one line, and each diagnostic on it would
    otherwise print all of it.  The place is in the file ``src.locate`` gives (one of a
    pipeline project's files).  A file outside a project's folder is named by its path and
    place only: no line of it is shown (``diagnostics.shown``)."""
    d = shown(d, src)
    src, span = src.locate(d.span)
    line, col = src.line_col(span.start)
    if src.outside:
        out: Segments = [
            (f"{src.path}:{line}:{col}: ", ""),
            (f"{d.severity}[{d.code}]", STYLES[d.severity]),
            (f": {d.message}\n", "bold"),
        ]
        if d.help:
            out += [("  = ", "blue"), ("help", "bold"), (f": {d.help}", "")]
        return out
    length = src.line_length(line)
    first, last = 1, length
    if length > MAX_LINE_SHOWN:
        first = max(1, col - CONTEXT_SHOWN)
        last = min(length, first + MAX_LINE_SHOWN - 1)
    cut_before = "..." if first > 1 else ""
    text = cut_before + src.line_text(line, first, last) + ("..." if last < length else "")
    at = len(cut_before) + col - first  # the diagnostic's column in ``text``, 0-based
    prefix = text[:at]
    pad = "".join("\t" if ch == "\t" else " " * _cells(ch) for ch in prefix)
    line_start = span.start - col + 1
    end = min(span.end, line_start + last)  # the span's end on the line shown
    underlined = text[at : max(at, end - span.start + at)]
    carets = "^" * max(1, sum(_cells(ch) for ch in underlined))
    gutter = " " * len(str(line))
    style = STYLES[d.severity]
    out = [
        (f"{src.path}:{line}:{col}: ", ""),
        (f"{d.severity}[{d.code}]", style),
        (f": {d.message}\n", "bold"),
        (f"{gutter} |\n", "blue"),
        (f"{line} | ", "blue"),
        (f"{text}\n", ""),
        (f"{gutter} | ", "blue"),
        (pad, ""),
        (carets, style),
    ]
    if d.label:
        out.append((f" {d.label}", style))
    if d.help:
        out += [("\n", ""), (f"{gutter} = ", "blue"), ("help", "bold"), (f": {d.help}", "")]
    return out


def render_plain(d: Diagnostic, src: Source) -> str:
    return "".join(text for text, _ in segments(d, src))


def to_dict(d: Diagnostic, src: Source) -> dict[str, Any]:
    """The JSON record of a diagnostic (the `diagnostics` entries of the plan JSON)."""
    d = shown(d, src)
    src, span = src.locate(d.span)
    line, col = src.line_col(span.start)
    end_line, end_col = src.line_col(span.end)
    return {
        "code": d.code,
        "col": col,
        "end_col": end_col,
        "end_line": end_line,
        "file": src.path,
        "help": d.help,
        "label": d.label,
        "line": line,
        "message": d.message,
        "severity": d.severity,
    }


def shown_value(text: str, width: int = 40) -> str:
    """A value the user gave (an option's), quoted for a message and cut to ``width``
    characters: a 5000-digit value is not echoed whole."""
    if len(text) <= width:
        return repr(text)
    return f"{text[:width]!r}... ({len(text)} characters)"


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    return ", ".join(parts)
