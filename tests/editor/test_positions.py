"""Offsets to LSP positions and back (editor/positions.py): UTF-16 units by default, UTF-8
and UTF-32 when the client asks, multi-byte characters, CRLF and lone CR line ends,
positions past the end clamped."""

from __future__ import annotations

import pytest

from sjoin.editor.positions import Encoding, LineIndex, length


def test_ascii_round_trip() -> None:
    lines = LineIndex("ab\ncd\n")
    assert [lines.position(i) for i in range(7)] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0)
    ]  # fmt: skip
    assert [lines.offset(*lines.position(i)) for i in range(7)] == list(range(7))


def test_characters_beyond_the_bmp_are_two_utf16_units() -> None:
    text = "a🎉b\n"
    lines = LineIndex(text)
    assert lines.position(text.index("b")) == (0, 3)
    assert lines.offset(0, 3) == text.index("b")
    assert lines.offset(0, 2) == text.index("🎉")  # inside the pair: the emoji itself
    assert length("🎉é") == 3


@pytest.mark.parametrize(
    ("encoding", "x", "end"), [("utf-16", 3, 4), ("utf-8", 6, 7), ("utf-32", 2, 3)]
)
def test_the_client_s_encoding(encoding: Encoding, x: int, end: int) -> None:
    text = "é🎉x"  # é: 1, 2, 1 units (UTF-16, UTF-8, UTF-32); 🎉: 2, 4, 1
    lines = LineIndex(text, encoding)
    assert lines.position(2) == (0, x)
    assert lines.position(3) == (0, end)
    assert lines.offset(0, x) == 2
    assert lines.offset(0, end) == 3


@pytest.mark.parametrize("brk", ["\n", "\r\n", "\r"])
def test_line_ends(brk: str) -> None:
    text = f"one{brk}two{brk}three"
    lines = LineIndex(text)
    t = text.index("three")
    assert lines.position(t) == (2, 0)
    assert lines.offset(2, 0) == t
    assert lines.offset(1, 99) == text.index("two") + 3  # the line's end, not its break
    assert lines.position(text.index("two") + 3) == (1, 3)


def test_an_offset_inside_crlf_is_the_end_of_its_line() -> None:
    lines = LineIndex("ab\r\ncd")
    assert lines.position(3) == (0, 2)


def test_past_the_end_is_clamped() -> None:
    text = "ab\ncd"
    lines = LineIndex(text)
    assert lines.offset(10, 0) == len(text)
    assert lines.offset(0, 50) == 2
    assert lines.offset(-1, 0) == 0
    assert lines.position(100) == (1, 2)
    assert lines.position(-5) == (0, 0)


def test_empty_text() -> None:
    lines = LineIndex("")
    assert lines.position(0) == (0, 0)
    assert lines.offset(0, 0) == 0
    assert lines.offset(3, 3) == 0
