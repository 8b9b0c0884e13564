"""The one way user text reaches .sjoin text: ``name`` and ``string``.

`sjoin fmt --to sjoin` writes a spec, and a pipeline's SQL holds .sjoin text in its
``-- sjoin:`` lines (``compile --target pipeline``'s ``sjoin-schemas.sql``, `fmt --to sql`).
A name is written bare only when it is a plain identifier and no word of the language
(``select``, ``join``, ... are back-quoted, a back-quote doubled inside); a string is
single-quoted with a quote doubled, the language's only escape.  The language has no
escape for a line break, and refuses control characters, lone surrogates, the line and
paragraph separators and bidirectional controls (E008): text holding one cannot be
written, and ``Unwritable`` names it, so that nothing is ever written that reads back as
something else.
"""

from __future__ import annotations

import re

from .source import HOSTILE, char_name

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# the words of grammar/sjoin.lark: written bare, each would read as the word
WORDS = frozenset(
    [
        "aggregate",
        "and",
        "anti",
        "as",
        "between",
        "by",
        "case",
        "cast",
        "checkpoint",
        "delay",
        "distinct",
        "else",
        "end",
        "false",
        "from",
        "full",
        "group",
        "ilike",
        "in",
        "inner",
        "interval",
        "is",
        "join",
        "left",
        "like",
        "mode",
        "not",
        "null",
        "on",
        "or",
        "outer",
        "output",
        "regexp",
        "right",
        "rlike",
        "select",
        "semi",
        "set",
        "sink",
        "spark",
        "stream",
        "then",
        "to",
        "true",
        "try_cast",
        "unknown",
        "watermark",
        "when",
    ]
)


class Unwritable(ValueError):
    """Text that the .sjoin language cannot hold (the message says which character)."""


def _check(text: str, what: str, banned: str) -> None:
    for ch in text:
        if ch in banned or HOSTILE.fullmatch(ch):
            raise Unwritable(
                f"{what} {text[:40]!r} holds {char_name(ch)}, which .sjoin text cannot hold"
            )


def name(text: str) -> str:
    """A name as .sjoin reads it back: bare, or back-quoted."""
    if _PLAIN.fullmatch(text) and text.lower() not in WORDS:
        return text
    _check(text, "the name", "\r\n\t")
    if not text:
        raise Unwritable("an empty name cannot be written in .sjoin text")
    return "`" + text.replace("`", "``") + "`"


def string(text: str) -> str:
    """A string literal as .sjoin reads it back."""
    _check(text, "the string", "\r\n")
    return "'" + text.replace("'", "''") + "'"
