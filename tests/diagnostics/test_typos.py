"""One typo, one diagnostic: a typo injected into each example (a keyword, a unit, a name, a
type) gets its own error and nothing that merely follows from it: no `unknown relation` for
what the broken statement declares, no warning about the state of a stream whose watermark
did not bind, and no warning the clean spec does not have (issue 23)."""

from __future__ import annotations

import re

import pytest

from sjoin.api import check_text

from ..conftest import EXAMPLES

# (what, pattern, replacement): the first match in a spec is replaced
TYPOS = [
    ("keyword stream", r"(?m)^stream ", "strem "),
    ("keyword join", r"(?m)^join ", "jion "),
    ("keyword watermark", r"(?m)^watermark ", "watermak "),
    ("keyword delay", r" delay ", " dealy "),
    ("keyword JOIN", r" JOIN ", " JION "),
    ("keyword BETWEEN", r"BETWEEN", "BETWEN"),
    ("keyword SELECT", r"(?m)^(\s+)SELECT ", r"\1SELCT "),
    ("keyword sink", r"(?m)^sink ", "snik "),
    ("bare OUTER", r"LEFT OUTER JOIN", "OUTER JOIN"),
    ("unit hours", r"(delay \d+) hours\b", r"\1 hourz"),
    ("unit minutes", r"(delay \d+) minutes?\b", r"\1 minuts"),
    ("type BIGINT", r"\bBIGINT\b", "BIGNT"),
    ("type TIMESTAMP", r"\bTIMESTAMP\b", "TIMESTMP"),
    ("type STRING", r"\bSTRING\b", "STRNG"),
]


def _names(spec: str) -> list[str]:
    return re.findall(r"(?m)^stream (\w+)", spec)


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for path in EXAMPLES:
        text = path.read_text(encoding="utf-8")
        for what, pattern, replacement in TYPOS:
            typo, n = re.subn(pattern, replacement, text, count=1)
            if n:
                out.append((f"{path.stem}-{what}", text, typo))
        # a stream's name misspelt where a join reads it
        stream = _names(text)[0]
        typo, n = re.subn(rf"= {stream} ", f"= {stream[:-1]} ", text, count=1)
        if n:
            out.append((f"{path.stem}-name", text, typo))
    return out


CASES = _cases()


@pytest.mark.parametrize(("clean", "typo"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_one_typo_one_diagnostic(clean: str, typo: str) -> None:
    before = check_text(clean, "s.sjoin")
    assert before.ok
    after = check_text(typo, "s.sjoin")
    errors = [d for d in after.diagnostics if d.severity == "error"]
    assert len(errors) == 1, [f"{d.code} {d.message}" for d in errors]
    known = {(d.code, d.message) for d in before.diagnostics}
    new = [
        d for d in after.diagnostics if d.severity != "error" and (d.code, d.message) not in known
    ]
    assert not new, [f"{d.code} {d.message}" for d in new]


def test_the_corpus_covers_every_kind_of_typo() -> None:
    kinds = {c[0].split("-", 1)[1].split()[0] for c in CASES}
    assert {"keyword", "unit", "type", "name", "bare"} <= kinds
    assert len(CASES) >= 40
