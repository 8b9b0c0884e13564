"""Hostile characters through the Python API (``check_text``), every character class in every
kind of text: each is one E008 error whose span is exactly that character, at its line and
column, with a help line that names it; nothing else is reported and nothing crashes.

``check_text`` is the way in for a lone surrogate (valid UTF-8 cannot hold one), so the
classes are enumerated here: through ``check_text`` every character of every class (of the
2048 surrogates, the ends of both halves) in every kind of text, and through the lexer's
check every code point in every kind of text.  The catalogue (``cases/E008_*.sjoin``) holds
rendered cases.
"""

from __future__ import annotations

import re
import unicodedata

import pytest

from sjoin.api import CheckResult, check_file, check_text
from sjoin.compiler.diagnostics.diagnostics import Diagnostics
from sjoin.compiler.frontend.parse import check_characters
from sjoin.compiler.vocabulary.source import HOSTILE, Source, Span, char_name
from sjoin.reports.diagnostics import render_plain, to_dict

# Every character that is never allowed, by class.
CLASSES: dict[str, list[str]] = {
    "C0 control": [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"],
    "DEL and C1 control": [chr(c) for c in range(0x7F, 0xA0)],
    # the ends of the high and low halves (all 2048 go through the lexer's check below)
    "lone surrogate": ["\ud800", "\udbff", "\udc00", "\udfff"],
    "line or paragraph separator": ["\u2028", "\u2029"],
    "bidirectional control": [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))],
}

# Each kind of text, with `@` where the character goes; the rest of the spec is clean, and
# the character sits on line 3 (line 4 for the comment), not at column 1.
KINDS: dict[str, str] = {
    "quoted name": "spark 4.0\n\nstream s (`a@b` INT, t TIMESTAMP)\n",
    "string literal": "spark 4.0\n\nstream s (a INT) from json (path = 'in@put')\n",
    "option name": "spark 4.0\n\nstream s (a INT) from json (`pa@th` = 'x', path = 'y')\n",
    "line comment": "spark 4.0\n\nstream s (a INT) -- a@b\n",
    "block comment": "spark 4.0\n\nstream s (a INT) /* a\n b @ */\n",
    "between tokens": "spark 4.0\n\nstream s (a INT)@\nstream t (b INT)\n",
    "inside an expression": (
        "stream a (k INT, t TIMESTAMP) watermark t delay 1 minute\n"
        "stream b (k INT, t TIMESTAMP) watermark t delay 1 minute\n"
        "join j = a JOIN b ON a.k = b.k @AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE\n"
    ),
}
WHERE = {
    "quoted name": "in a quoted name",
    "option name": "in a quoted name",
    "string literal": "in a string literal",
    "line comment": "in a comment",
    "block comment": "in a comment",
    "between tokens": "between tokens",
    "inside an expression": "between tokens",
}


def only_character_errors(text: str, at: int) -> CheckResult:
    """``text`` gives exactly one diagnostic: E008 on the character at offset ``at``."""
    result = check_text(text)
    found = [(d.code, d.span.start, d.span.end) for d in result.diagnostics]
    assert found == [("E008", at, at + 1)], [(d.code, d.message) for d in result.diagnostics]
    (d,) = result.diagnostics
    name = char_name(text[at])
    assert name in d.message and d.help is not None and name in d.help
    record = to_dict(d, result.source)
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    assert (record["line"], record["col"], record["end_line"], record["end_col"]) == (
        line,
        col,
        line,
        col + 1,
    )
    # what a terminal gets holds none of them: the source line shows a stand-in
    assert HOSTILE.search(render_plain(d, result.source)) is None
    return result


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("cls", sorted(CLASSES))
def test_every_character_of_every_class_in_every_kind_of_text(cls: str, kind: str) -> None:
    template = KINDS[kind]
    at = template.index("@")
    for ch in CLASSES[cls]:
        text = template.replace("@", ch)
        result = only_character_errors(text, at)
        assert WHERE[kind] in result.diagnostics[0].message


def test_the_lexer_rejects_exactly_these_characters() -> None:
    """Every code point goes through the lexer's check in every kind of text: rejected are
    exactly the classes above (Cc but TAB, LF and CR; all 2048 surrogates; Zl and Zp; the
    nine bidi embeddings, overrides and isolates), each at its own offset."""
    classes = {ch for chars in CLASSES.values() for ch in chars}
    expected = classes | {chr(c) for c in range(0xD800, 0xE000)}
    assert {chr(c) for c in range(0x110000) if HOSTILE.match(chr(c))} == expected
    for c in range(0x110000):
        ch = chr(c)
        if ch in "\t\n\r" or (unicodedata.category(ch) != "Cc" and ch not in expected):
            continue
        for kind, template in KINDS.items():
            at = template.index("@")
            diags = Diagnostics()
            cleaned = check_characters(template.replace("@", ch), diags)
            assert [(d.code, d.span) for d in diags.items] == [("E008", Span(at, at + 1))], (
                kind,
                hex(c),
            )
            assert cleaned == template.replace("@", " ")


# TAB and CR: allowed where they are whitespace or a line break, not in a name (TAB, CR) or a
# string (CR); a CR followed by LF is one line break wherever a line may end.
@pytest.mark.parametrize(
    ("kind", "ch", "rejected"),
    [
        ("quoted name", "\t", True),
        ("option name", "\t", True),
        ("string literal", "\t", False),
        ("line comment", "\t", False),
        ("block comment", "\t", False),
        ("between tokens", "\t", False),
        ("inside an expression", "\t", False),
        ("quoted name", "\r", True),
        ("option name", "\r", True),
        ("string literal", "\r", True),
        ("block comment", "\r", False),
        ("between tokens", "\r", False),
        ("inside an expression", "\r", False),
    ],
)
def test_tab_and_carriage_return(kind: str, ch: str, rejected: bool) -> None:
    template = KINDS[kind]
    text = template.replace("@", ch)
    if rejected:
        at = template.index("@")
        result = check_text(text)
        assert [(d.code, d.span.start) for d in result.diagnostics] == [("E008", at)]
        line, col = result.source.line_col(at)
        assert (line, col) == (Source("t", template).line_col(at))  # end of its line
        assert char_name(ch) in (result.diagnostics[0].help or "")
    else:
        assert check_text(text).diagnostics == []


def test_a_lone_cr_ends_a_line_comment() -> None:
    """The text after a CR is on the next line, so it is code, not part of the comment."""
    text = "stream s (a INT) -- comment\rstream s (b INT)\n"
    result = check_text(text)
    assert [(d.code, result.source.line_col(d.span.start)) for d in result.diagnostics] == [
        ("E002", (2, 8))
    ]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_numbers_do_not_depend_on_the_line_break(newline: str) -> None:
    text = newline.join(["spark 4.0", "", "stream s (`a\0b` INT)", "stream t (b INT) -- \u202e"])
    result = check_text(text)
    assert [result.source.line_col(d.span.start) for d in result.diagnostics] == [(3, 13), (4, 21)]
    assert [render_plain(d, result.source).splitlines()[2] for d in result.diagnostics] == [
        "3 | stream s (`a\u2400b` INT)",
        "4 | stream t (b INT) -- \ufffd",
    ]


def test_a_line_feed_in_a_string_is_an_unterminated_string() -> None:
    result = check_text("stream s (a INT) from json (path = 'a\nb')\n")
    assert [d.code for d in result.diagnostics] == ["E001"]
    assert "unterminated string" in result.diagnostics[0].message


def test_an_escape_sequence_never_reaches_a_message() -> None:
    """A name with ESC used where it is unknown: the E004 message holds no ESC either."""
    text = "stream a (k INT)\nstream b (k INT)\njoin j = a JOIN b ON a.k = b.`\x1b[2J`\n"
    result = check_text(text)
    assert sorted(d.code for d in result.diagnostics) == ["E004", "E008"]
    for d in result.diagnostics:
        assert HOSTILE.search(" ".join([d.message, d.label, d.help or ""])) is None


def test_many_characters_are_summed_up() -> None:
    """A UTF-16 file read as UTF-8 has a NUL before every ASCII character: the first hundred
    are reported one by one, then one diagnostic counts the rest."""
    text = "\0".join("stream s (a INT)\n" * 20)
    result = check_text(text)
    found = [d for d in result.diagnostics if d.code == "E008"]
    assert len(found) == 101 and "E999" not in {d.code for d in result.diagnostics}
    assert found[-1].message.startswith(f"{text.count(chr(0)) - 100} more")
    assert "UTF-16" in (found[-1].help or "")


def test_a_file_is_read_as_written(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`sjoin check` reads line breaks as written and a UTF-8-encoded lone surrogate as one,
    so a file gives the diagnostics its text gives through the API."""
    text = "spark 4.0\r\nstream s (`a\rb` INT) from json (path = 'x\ud800')\r\n"
    spec = tmp_path / "s.sjoin"
    spec.write_bytes(text.encode("utf-8", "surrogatepass"))
    from_file = [(d.code, d.span) for d in check_file(spec).diagnostics]
    assert from_file == [(d.code, d.span) for d in check_text(text).diagnostics]
    assert [c for c, _ in from_file] == ["E008", "E008"]


def test_names_of_characters() -> None:
    assert char_name("\0") == "U+0000 NUL"
    assert char_name("\x1b") == "U+001B ESCAPE"
    assert char_name("\x85") == "U+0085 NEXT LINE"
    assert char_name("\ud800") == "lone surrogate U+D800"
    assert char_name("\u2028") == "U+2028 LINE SEPARATOR"
    assert char_name("\u202e") == "U+202E RIGHT-TO-LEFT OVERRIDE"
    assert re.fullmatch(r"U\+[0-9A-F]{4} \S.*", char_name("\x7f"))
