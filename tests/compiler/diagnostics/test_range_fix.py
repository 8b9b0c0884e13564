"""W001's edit (``Diagnostic.fix``, an editor's quick fix): the range condition its help
suggests, inserted after the ON condition; the spec it makes bounds the state."""

from __future__ import annotations

import pytest

from sjoin.api import check_text

HEAD = (
    "stream a (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds\n"
    "stream b (k BIGINT, `event t` TIMESTAMP) watermark `event t` delay 10 seconds\n"
)


def fixed(text: str) -> tuple[str | None, list[str]]:
    """The spec with W001's fix applied (None without one), and its diagnostics' codes."""
    found = [d for d in check_text(text, "t.sjoin").diagnostics if d.code == "W001"]
    assert found, text
    fix = found[0].fix
    if fix is None:
        return None, []
    out = text[: fix.span.start] + fix.text + text[fix.span.end :]
    return out, [d.code for d in check_text(out, "t.sjoin").diagnostics]


@pytest.mark.parametrize(
    "join",
    [
        "join j = a AS x INNER JOIN b AS y ON x.k = y.k\n",
        "join j = a INNER JOIN b ON a.k = b.k AND b.`event t` > a.t\n",
        "join j = a AS `the a` INNER JOIN b AS y ON (`the a`.k = y.k)\n",
    ],
)
def test_the_fix_bounds_the_state(join: str) -> None:
    text, codes = fixed(HEAD + join)
    assert text is not None and "INTERVAL 1 HOUR" in text
    assert "W001" not in codes, (text, codes)
    assert not [c for c in codes if c.startswith("E")], (text, codes)


def test_no_fix_where_and_would_bind_only_the_last_or_term() -> None:
    text, _ = fixed(HEAD + "join j = a INNER JOIN b ON a.k = b.k OR a.t = b.`event t`\n")
    assert text is None
