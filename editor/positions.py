"""Character offsets (what a ``Span`` holds: Python string indexes, one per code point)
to and from LSP positions (a 0-based line and a column in code units of the position
encoding the client and the server agreed on: UTF-16 by default, as the protocol says;
UTF-8 or UTF-32 when the client prefers one, as Neovim may).

Lines end at LF, CRLF or a lone CR, as in ``compiler/vocabulary/source.py`` and in the
LSP specification.  A position past the end of a line is its end; a line past the end of
the text is the text's end (the specification asks servers to clamp, not to fail).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Literal

from ..compiler.vocabulary.source import LINE_BREAK

Encoding = Literal["utf-8", "utf-16", "utf-32"]


def units(ch: str, encoding: Encoding = "utf-16") -> int:
    """Code units of one character: in UTF-16 two beyond the BMP (an emoji); in UTF-8
    one to four bytes (a lone surrogate three, as Python's surrogatepass writes it)."""
    code = ord(ch)
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 1


def length(text: str, encoding: Encoding = "utf-16") -> int:
    """Code units of ``text``."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-16":
        return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
    return sum(units(ch, encoding) for ch in text)


@dataclass(frozen=True)
class LineIndex:
    """The line starts of one text, for converting offsets and positions both ways."""

    text: str
    encoding: Encoding = "utf-16"
    _starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]
        starts.extend(m.end() for m in LINE_BREAK.finditer(self.text))
        object.__setattr__(self, "_starts", tuple(starts))

    @property
    def lines(self) -> int:
        return len(self._starts)

    def line_end(self, line: int) -> int:
        """Offset of the end of 0-based ``line``, its line break excluded."""
        if line + 1 < len(self._starts):
            end = self._starts[line + 1]
            return end - (2 if self.text[max(0, end - 2) : end] == "\r\n" else 1)
        return len(self.text)

    def position(self, offset: int) -> tuple[int, int]:
        """(line, UTF-16 character) of a character offset, clamped into the text; an offset
        inside a CRLF is the end of its line."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._starts, offset) - 1
        start = self._starts[line]
        offset = min(offset, self.line_end(line))
        return line, length(self.text[start:offset], self.encoding)

    def offset(self, line: int, character: int) -> int:
        """The character offset of an LSP position, clamped: a line past the last is the
        end of the text, a character past a line's end is that end, and a character in the
        middle of a surrogate pair is the character it is part of."""
        if line < 0:
            return 0
        if line >= len(self._starts):
            return len(self.text)
        start, end = self._starts[line], self.line_end(line)
        counted = 0
        at = start
        while at < end and counted < character:
            counted += units(self.text[at], self.encoding)
            if counted > character:  # inside a character's units: the character itself
                break
            at += 1
        return at
