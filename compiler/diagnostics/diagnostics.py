"""The diagnostic record and the collector every stage appends to.

A diagnostic is data (code, span, message, label, help); only ``reports/diagnostics.py`` turns it
into text or JSON.  Stages never raise on user input: they report and carry on, so one run
reports every independent problem.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..vocabulary.source import ProjectSource, Source, Span
from .codes import CODES, Severity


def excerpt(text: str, width: int = 40) -> str:
    """User text for a message, cut to about ``width`` characters: a 5000-digit number is
    named by its start and its length, not echoed whole (the caret shows where it is)."""
    if len(text) <= width:
        return text
    return f"{text[: width - 10]}... ({len(text)} characters)"


MAX_SUGGESTED = 200  # a longer word is no typo of a name: no did-you-mean (difflib is quadratic)


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` (a likely misspelling of it), or None."""
    if len(word) > MAX_SUGGESTED:
        return None
    names = [c for c in candidates if len(c) <= MAX_SUGGESTED]
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return close[0] if close else None


def mean(close: str | None) -> str | None:
    """``did you mean `x`?`` for a closest candidate (``closest``), or None."""
    return f"did you mean `{close}`?" if close is not None else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """``did you mean `x`?`` for the candidate closest to ``word``, or None: the one
    did-you-mean of diagnostics and run errors alike."""
    return mean(closest(word, candidates))


@dataclass(frozen=True, slots=True)
class Fix:
    """A diagnostic's fix as an edit: ``span``'s text replaced by ``text`` (a did-you-mean
    spelling, say).  Data only: the text report does not show it; an editor offers it as a
    code action (``editor/actions.py``)."""

    span: Span
    text: str

    @staticmethod
    def replace(span: Span, text: str | None) -> Fix | None:
        """The fix that writes ``text`` at ``span``, or None when there is no ``text``."""
        return None if text is None else Fix(span, text)


@dataclass(frozen=True, slots=True)
class Related:
    """Another place a diagnostic is about (the first definition of a name defined twice),
    with what it is there.  Data only: the text report does not show it; an editor shows it
    as the diagnostic's related information (``editor/diagnostics.py``)."""

    span: Span
    message: str


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    message: str  # reads on its own: one-line mode and JSON use it alone
    span: Span
    label: str = ""  # printed after the carets
    help: str | None = None
    fix: Fix | None = None  # the edit the help suggests, when it is one (never printed)
    related: tuple[Related, ...] = ()  # the other places it is about (never printed)

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
        self,
        code: str,
        message: str,
        span: Span,
        label: str = "",
        help: str | None = None,
        fix: Fix | None = None,
        related: tuple[Related, ...] = (),
    ) -> None:
        self.items.append(Diagnostic(code, message, span, label, help, fix, related))

    def sorted(self) -> list[Diagnostic]:
        """Diagnostics in source order, errors before warnings at the same place."""
        return sorted(
            self.items, key=lambda d: (d.span.start, d.severity != "error", d.code, d.message)
        )


OUTSIDE_HELP = (
    "the file is outside the project's folder (a link to a file elsewhere, or a libraries "
    "glob that climbs out of the folder): SDP reads it, and sjoin checks it, but shows none "
    "of its text, only its place (docs/pipelines.md)"
)
_QUOTED = re.compile(r"`([^`\n]+)`")


def shown(d: Diagnostic, source: Source) -> Diagnostic:
    """``d`` as it may be shown: a diagnostic in a file outside a pipeline project's folder
    (``Source.outside``) keeps its code and place, and says no more of the file than its
    code's title (its message, label and help may quote the file); a diagnostic elsewhere
    has each back-quoted text that only an outside file holds (a did-you-mean of a name
    defined there, say) shown as `...`.  Every printer of diagnostics goes through it
    (``reports/diagnostics.py``), and so do a pipeline's check results (``api.check_pipeline``)."""
    if not isinstance(source, ProjectSource) or not any(f.outside for _, f in source.parts):
        return d
    file, _ = source.locate(d.span)
    if file.outside:
        if d.help == OUTSIDE_HELP:
            return d
        title = CODES[d.code].title
        return Diagnostic(d.code, f"{title}, in a file outside the project", d.span, "",
                          OUTSIDE_HELP)  # fmt: skip
    inside = [f.text for _, f in source.parts if not f.outside]
    outside = [f.text for _, f in source.parts if f.outside]

    def hide(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            quoted = m[1]
            if any(quoted in t for t in outside) and not any(quoted in t for t in inside):
                return "`...`"
            return m[0]

        return _QUOTED.sub(one, text)

    message, label = hide(d.message), hide(d.label)
    help = hide(d.help) if d.help is not None else None
    if (message, label, help) == (d.message, d.label, d.help):
        return d
    return Diagnostic(d.code, message, d.span, label, help, d.fix, d.related)
