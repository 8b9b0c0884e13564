"""The completion's word lists (editor/completion.py) against the grammar they name, and
the aliases read from a statement that does not parse yet."""

from __future__ import annotations

import re

from sjoin.editor.completion import KEYWORDS, STATEMENTS, aliases, statement_text
from sjoin.grammar import grammar_text


def test_every_keyword_is_a_word_of_the_grammar() -> None:
    text = grammar_text("sjoin.lark").lower()
    # the quoted keywords, and the words of the terminals written as regexes (`UNION ALL`)
    words = set(re.findall(r'"([a-z_]+)"i', text))
    words |= set(re.findall(r"[a-z]+", " ".join(re.findall(r"/[^/\n]+/i", text))))
    missing = [w for w in (*STATEMENTS, *KEYWORDS) if w.lower() not in words]
    assert missing == []


def test_aliases_of_a_statement_being_typed() -> None:
    text = "stream a (k INT)\njoin j = impressions AS i LEFT OUTER JOIN clicks c\n    ON i."
    statement = statement_text(text, len(text))
    assert statement.startswith("join j")
    assert aliases(statement) == {"impressions": "impressions", "i": "impressions",
                                  "clicks": "clicks", "c": "clicks"}  # fmt: skip
