"""The diagnostic record and the collector every stage appends to.

A diagnostic is data (code, span, message, label, help); only ``cli/render.py`` turns it
into text or JSON.  Stages never raise on user input: they report and carry on, so one run
reports every independent problem.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from .codes import CODES, Severity
from .source import Span


def excerpt(text: str, width: int = 40) -> str:
    """User text for a message, cut to about ``width`` characters: a 5000-digit number is
    named by its start and its length, not echoed whole (the caret shows where it is)."""
    if len(text) <= width:
        return text
    return f"{text[: width - 10]}... ({len(text)} characters)"


MAX_SUGGESTED = 200  # a longer word is no typo of a name: no did-you-mean (difflib is quadratic)


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """``did you mean `x`?`` for the candidate closest to ``word``, or None: the one
    did-you-mean of diagnostics and run errors alike."""
    if len(word) > MAX_SUGGESTED:
        return None
    names = [c for c in candidates if len(c) <= MAX_SUGGESTED]
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str  # reads on its own: one-line mode and JSON use it alone
    span: Span
    label: str = ""  # printed after the carets
    help: str | None = None

    def __post_init__(self) -> None:
        if self.code not in CODES:  # a typo fails the first test that hits it
            raise ValueError(f"unregistered diagnostic code {self.code}")

    @property
    def severity(self) -> Severity:
        return CODES[self.code].severity


@dataclass
class Diagnostics:
    """An append-only collector, shared by every stage of one compilation."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(
        self, code: str, message: str, span: Span, label: str = "", help: str | None = None
    ) -> None:
        self.items.append(Diagnostic(code, message, span, label, help))

    def sorted(self) -> list[Diagnostic]:
        """Diagnostics in source order, errors before warnings at the same place."""
        return sorted(
            self.items, key=lambda d: (d.span.start, d.severity != "error", d.code, d.message)
        )
