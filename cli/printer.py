"""The command's output: results on stdout, diagnostics and notes on stderr, as plain text,
or colored with rich on a terminal.

A diagnostic comes laid out as styled segments (``reports/diagnostics.py``); plain output
(not a terminal, NO_COLOR, --color never) joins them without loading rich at all, which
keeps a cold `sjoin check` fast, and a terminal gets them colored.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from ..compiler.diagnostics.diagnostics import Diagnostic
from ..compiler.vocabulary.source import Source
from ..reports.diagnostics import Segments, segments


class _Stream:
    """One output stream: plain text, or rich styling when it is a colored terminal."""

    def __init__(self, file: TextIO, color: str) -> None:
        self.file = file
        tty = hasattr(file, "isatty") and file.isatty()
        wanted = {"always": True, "never": False}.get(color, tty and not os.environ.get("NO_COLOR"))
        self.console: Any = None
        if wanted:
            from rich.console import Console  # only terminals pay for rich

            self.console = Console(file=file, force_terminal=True, highlight=False, soft_wrap=True)

    def write(self, parts: Segments) -> None:
        if self.console is None:
            self.file.write("".join(text for text, _ in parts) + "\n")
            self.file.flush()
            return
        from rich.text import Text

        styled = Text()
        for text, style in parts:
            styled.append(text, style=style or None)
        self.console.print(styled)


class Printer:
    """All echoing of the CLI: stdout for results, stderr for diagnostics and notes."""

    def __init__(
        self, color: str = "auto", out: TextIO | None = None, err: TextIO | None = None
    ) -> None:
        self.out = _Stream(out or sys.stdout, color)
        self.err = _Stream(err or sys.stderr, color)

    def diagnostics(self, items: Iterable[tuple[Diagnostic, Source]]) -> None:
        for d, src in items:
            self.err.write([*segments(d, src), ("\n", "")])

    def result(self, text: str) -> None:
        self.out.write([(text, "")])

    def json(self, data: Any) -> None:
        try:  # check, plan and compile load no runtime: their documents are plain JSON
            text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):  # a row's DECIMAL or NaN, written as `run` writes it
            from ..runtime.engine.values import dumps_indented

            text = dumps_indented(data)
        self.out.write([(text, "")])

    def note(self, text: str, style: str = "") -> None:
        self.err.write([(text, style)])
