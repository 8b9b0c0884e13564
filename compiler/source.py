"""Source text and spans.

Spans are character offsets; line and column are derived only when rendering, so that
every stage can carry positions cheaply and precisely (as codespan and ariadne do).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any


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


@dataclass(frozen=True)
class Source:
    """One spec file's text, with a line index for offset -> (line, col)."""

    path: str
    text: str
    _line_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]
        starts.extend(i + 1 for i, ch in enumerate(self.text) if ch == "\n")
        object.__setattr__(self, "_line_starts", tuple(starts))

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset (clamped into the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def line_text(self, line: int) -> str:
        start = self._line_starts[line - 1]
        end = self.line_end(line)
        return self.text[start:end]

    def line_end(self, line: int) -> int:
        """Offset of the end of ``line`` (its newline excluded)."""
        if line < len(self._line_starts):
            return self._line_starts[line] - 1
        return len(self.text)

    def snippet(self, span: Span) -> str:
        return self.text[span.start : span.end]
