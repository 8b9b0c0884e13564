"""THE printer: diagnostics -> rustc-style text (colored with rich on a terminal) or JSON.

Only this module makes text of a diagnostic.  Plain text when the output is not a terminal or
NO_COLOR is set, so piped output and tests see the exact contract of the language brief.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from sjoin.compiler.diagnostics import Diagnostic
from sjoin.compiler.source import Source

STYLES = {"error": "bold red", "warning": "bold yellow"}


def _cells(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def render(d: Diagnostic, src: Source) -> Text:
    """One diagnostic as rustc-style text: header, source line, carets, help."""
    line, col = src.line_col(d.span.start)
    text = src.line_text(line)
    prefix = text[: col - 1]
    pad = "".join("\t" if ch == "\t" else " " * _cells(ch) for ch in prefix)
    underlined = text[
        col - 1 : max(col - 1, min(d.span.end, src.line_end(line)) - d.span.start + col - 1)
    ]
    carets = "^" * max(1, sum(_cells(ch) for ch in underlined))
    gutter = " " * len(str(line))
    style = STYLES[d.severity]
    out = Text()
    out.append(f"{src.path}:{line}:{col}: ")
    out.append(f"{d.severity}[{d.code}]", style=style)
    out.append(f": {d.message}\n", style="bold")
    out.append(f"{gutter} |\n", style="blue")
    out.append(f"{line} | ", style="blue")
    out.append(f"{text}\n")
    out.append(f"{gutter} | ", style="blue")
    out.append(pad)
    out.append(carets, style=style)
    if d.label:
        out.append(f" {d.label}", style=style)
    if d.help:
        out.append("\n")
        out.append(f"{gutter} = ", style="blue")
        out.append("help", style="bold")
        out.append(f": {d.help}")
    return out


def render_plain(d: Diagnostic, src: Source) -> str:
    return render(d, src).plain


def to_dict(d: Diagnostic, src: Source) -> dict[str, Any]:
    """The JSON record of a diagnostic (the `diagnostics` entries of the plan JSON)."""
    line, col = src.line_col(d.span.start)
    end_line, end_col = src.line_col(d.span.end)
    record: dict[str, Any] = {
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
    return record


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    return ", ".join(parts)


class Printer:
    """All echoing of the CLI: stdout for results, stderr for diagnostics and notes."""

    def __init__(
        self, color: str = "auto", out: TextIO | None = None, err: TextIO | None = None
    ) -> None:
        force = {"always": True, "never": False}.get(color)
        no_color = True if color == "never" else None
        self.out = Console(
            file=out, force_terminal=force, no_color=no_color, highlight=False, soft_wrap=True
        )
        self.err = Console(
            file=err,
            stderr=err is None,
            force_terminal=force,
            no_color=no_color,
            highlight=False,
            soft_wrap=True,
        )

    def diagnostics(self, items: Iterable[tuple[Diagnostic, Source]]) -> None:
        for d, src in items:
            self.err.print(render(d, src))
            self.err.print()

    def result(self, text: str) -> None:
        self.out.print(Text(text))

    def json(self, data: Any) -> None:
        self.out.print(Text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)))

    def note(self, text: str, style: str = "") -> None:
        self.err.print(Text(text, style=style))
