"""`sjoin plan --format mermaid`: every node and edge is drawn, verdicts on the edges, and user
names never break the diagram's syntax."""

from __future__ import annotations

import re

from sjoin.api import check_file, check_text
from sjoin.compiler.diagram import mermaid

from .conftest import ROOT


def test_chain_diagram() -> None:
    plan = check_file(ROOT / "examples" / "checkout_funnel.sjoin").plan
    assert plan is not None
    text = mermaid(plan)
    assert text.startswith("flowchart LR\n")
    assert text.count("-->") == 5  # two inputs per join, one into the aggregate
    assert "evict i.impression_time #lt;= watermark - 10 minutes 1 ms" in text
    assert "[ok] Spark 4.3 allows this chain" in text


def test_rejected_chain_is_marked() -> None:
    spec = (
        (ROOT / "examples" / "checkout_funnel.sjoin").read_text().replace("spark 4.3", "spark 3.4")
    )
    plan = check_text(spec).plan
    assert plan is not None
    text = mermaid(plan)
    assert "[error] a time-interval join" in text
    assert re.search(r"style n\d fill:#fdd", text)


def test_user_names_are_escaped() -> None:
    spec = (
        'stream `a"b|c` (k INT, t TIMESTAMP) watermark t delay 1 second\n'
        "stream `<x>` (k INT, t TIMESTAMP) watermark t delay 1 second\n"
        'join `j]"` = `a"b|c` AS p INNER JOIN `<x>` AS q ON p.k = q.k AND p.t = q.t\n'
    )
    plan = check_text(spec).plan
    assert plan is not None
    text = mermaid(plan)
    assert 'a"b|c' not in text and "<x>" not in text
    assert "a#quot;b#124;c" in text and "#lt;x#gt;" in text
    for line in text.splitlines()[1:]:
        outside = re.sub(r'"[^"]*"', "", line)  # every label is one quoted string
        assert re.fullmatch(r"\s*n\d+\s+[-.]+\s+(?:-->|\.->)\s+n\d+|\s*n\d+\W+", outside), line


def test_labels_never_break_a_line() -> None:
    from sjoin.compiler.diagram import _label

    label = _label("a\nb\rc\u2028d\u2029e\x85f\x00g\u202eh", "ok")
    assert len(label.splitlines()) == 1 and label.isprintable()
    assert label == '"a#10;b#13;c#8232;d#8233;e#133;f#0;g#8238;h<br/>ok"'
