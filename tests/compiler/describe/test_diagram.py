"""`sjoin plan --format mermaid`: every node and edge is drawn, verdicts on the edges, and user
names never break the diagram's syntax."""

from __future__ import annotations

import re

from sjoin.api import check_file, check_text
from sjoin.compiler.describe.diagram import mermaid

from ...conftest import ROOT


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
    for line in statements(text):
        assert re.fullmatch(r"\s*n\d+\s+[-.]+\s+(?:-->|\.->)\s+n\d+|\s*n\d+\W+", line), line


def test_labels_never_break_a_line() -> None:
    from sjoin.compiler.describe.diagram import _label

    label = _label("a\nb\rc\u2028d\u2029e\x85f\x00g\u202eh", "ok")
    assert label.splitlines() == ['"a#10;b#13;c#8232;d#8233;e#133;f#0;g#8238;h', 'ok"']
    assert all(line.isprintable() for line in label.splitlines())


def statements(diagram: str) -> list[str]:
    """The diagram's statements with every quoted label taken out (a label may span lines:
    one per line it shows)."""
    return re.sub(r'"[^"]*"', "", diagram).splitlines()[1:]


# Text Mermaid would read in a label if it got through as written: its entity codes (and
# its own stand-ins for `&#`, `&`, `;` while it decodes them), HTML, Markdown, KaTeX,
# Font Awesome icons, the `style ...:...#...;` rewrite, and its flowchart syntax.
HOSTILE = {
    "entity": "#quot;",
    "numeric-entity": "#35;x",
    "hash": "a#b",
    "html-entity": "&amp;&#35;",
    "markup": "<b>x</b><br/>",
    "quote": 'say "hi"',
    "pipe": "a|b",
    "markdown": "`**md**`",
    "katex": "$$x^2$$",
    "dollar": "$",
    "icon": "fa:fa-car",
    "style-rewrite": "style:x#lt;y;",
    "class-rewrite": "classDef:a#b;c",
    "colon": "a:b",
    "stand-in-amp": "\ufb02\xb0amp\xb6\xdf",
    "stand-in-number": "\ufb02\xb0\xb035\xb6\xdf",
    "stand-in-end": "\xb6\xdf",
    "eszett": "Stra\xdfe 20\xb0",
    "syntax": "[a]{b}(c)-->d;e",
    "end": "end",
    "comment": "%% c",
    "class": "a:::b",
    "backslash": "a\\b",
    "backslash-n": "a\\nb",
    "percent": "%%{init: {}}%%",
    "br": "a<br/>b",
    "unicode": "café 中 😀",
}
NAMED = {"quot": '"', "amp": "&", "lt": "<", "gt": ">"}


def hostile_spec(name: str, spark: str) -> tuple[str, dict[str, str]]:
    """A chain (left outer join, then an aggregate) whose every name holds ``name``: stream,
    column, watermark column, join, alias, aggregate, SELECT names; on Spark 3.4 the chain
    is rejected, so the checks' details and the nodes' styles hold the names too."""
    n = {role: name + role for role in ("s", "r", "k", "t", "u", "j", "a", "b", "g", "c", "n")}
    x = {role: "`" + v.replace("`", "``") + "`" for role, v in n.items()}
    spec = (
        f"spark {spark}\n"
        f"stream {x['s']} ({x['k']} BIGINT, {x['t']} TIMESTAMP) watermark {x['t']} delay 1 second\n"
        f"stream {x['r']} ({x['k']} BIGINT, {x['u']} TIMESTAMP) watermark {x['u']} delay 1 second\n"
        f"join {x['j']} = {x['s']} AS {x['a']} LEFT OUTER JOIN {x['r']} AS {x['b']}\n"
        f"    ON {x['a']}.{x['k']} = {x['b']}.{x['k']}\n"
        f"    AND {x['b']}.{x['u']} BETWEEN {x['a']}.{x['t']}\n"
        f"        AND {x['a']}.{x['t']} + INTERVAL 1 MINUTE\n"
        f"aggregate {x['g']} = {x['j']} AS {x['c']}\n"
        f"    GROUP BY window({x['c']}.{x['t']}, INTERVAL 1 MINUTE) SELECT count(*) AS {x['n']}\n"
        "    OUTPUT MODE append\n"
    )
    return spec, n


def shown(label: str) -> list[str]:
    """The lines of a label as Mermaid shows them: its entity codes decoded."""
    return [
        re.sub(r"#(\w+);", lambda m: NAMED.get(m[1]) or chr(int(m[1])), line)
        for line in label.split("\n")
    ]


def hostile_diagrams() -> list[tuple[str, str, dict[str, str]]]:
    out = []
    for key, name in sorted(HOSTILE.items()):
        for spark in ("3.4", "4.3"):
            spec, n = hostile_spec(name, spark)
            plan = check_text(spec).plan
            assert plan is not None, key
            out.append((f"{key}-{spark}", mermaid(plan), n))
    return out


def test_hostile_names_are_shown_as_written_and_read_as_nothing() -> None:
    """Every label keeps to characters Mermaid gives no meaning (each special one is an
    entity code), decodes to the text as written, and every name of the spec is shown."""
    special = set('"#&<>|`$\\%')
    for key, diagram, n in hostile_diagrams():
        assert diagram.startswith("flowchart LR\n")
        for line in statements(diagram):
            assert re.fullmatch(
                r"\s*n\d+\s+[-.]+\s+(?:-->|\.->)\s+n\d+|\s*n\d+\W+|\s*style n\d+ [\w:#,]+",
                line,
            ), (key, line)
        texts = []
        for label in re.findall(r'"([^"]*)"', diagram):
            for line in label.split("\n"):
                raw = re.sub(r"#\w+;", "", line)
                assert not special & set(raw), (key, label)
                assert not re.search(r":(?! )", raw), (key, label)
                assert raw.isprintable(), (key, label)
                assert "\ufb02\xb0" not in line and "\xb6\xdf" not in line, (key, label)
            # Mermaid's stand-ins for `&` and `;` are shown with a word joiner inside
            texts += [t.replace("\u2060", "") for t in shown(label)]
        whole = "\n".join(texts)
        for role in ("s", "r", "j", "a", "b", "g"):
            assert n[role] in texts or any(t.startswith(n[role] + ": ") for t in texts), (
                key,
                role,
                texts,
            )
        for column in (n["t"], n["u"]):
            assert f"watermark {column} - 1 second" in texts, (key, column)
        assert n["k"].replace("`", "``") in whole, key  # the keys are SQL text
        if key.endswith("3.4"):
            assert re.search(r"^    style n\d+ fill:#fdd", diagram, re.M), key


def test_checks_are_read_by_relation_not_by_name() -> None:
    """A relation named `a -> b` is one name: the global-watermark edge still joins the two
    operators it judges, and a name ending like another's marks only its own node."""
    spec = (
        "spark 3.4\n"
        "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
        "stream r (k BIGINT, u TIMESTAMP) watermark u delay 1 second\n"
        "join `x -> y` = s AS a LEFT OUTER JOIN r AS b\n"
        "    ON a.k = b.k AND b.u BETWEEN a.t AND a.t + INTERVAL 1 MINUTE\n"
        "aggregate `of g` = `x -> y` AS c GROUP BY window(c.t, INTERVAL 1 MINUTE)\n"
        "    SELECT count(*) AS n OUTPUT MODE append\n"
        "aggregate g = s AS d GROUP BY window(d.t, INTERVAL 1 MINUTE)\n"
        "    SELECT count(*) AS n OUTPUT MODE append\n"
    )
    plan = check_text(spec).plan
    assert plan is not None
    text = mermaid(plan)
    ids = {node.name: f"n{i}" for i, node in enumerate(plan.nodes)}
    assert f"    {ids['x -> y']} -. " in text and f" .-> {ids['of g']}\n" in text
    styled = re.findall(r"style (n\d+) fill:#fdd", text)
    assert styled == [ids["of g"]], text


def test_checks_of_names_whose_labels_coincide_are_both_kept() -> None:
    """`a -> b` then `c`, and `a` then `b -> c`: both chains are judged (the label of each is
    `a -> b -> c`), and the diagram draws both edges."""
    join = (
        "join {name} = s AS x LEFT OUTER JOIN r AS y\n"
        "    ON x.k = y.k AND y.u BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
    )
    agg = (
        "aggregate {name} = {input} AS z GROUP BY window(z.t, INTERVAL 1 MINUTE)\n"
        "    SELECT count(*) AS n OUTPUT MODE append\n"
    )
    spec = (
        "spark 3.4\n"
        "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
        "stream r (k BIGINT, u TIMESTAMP) watermark u delay 1 second\n"
        + join.format(name="a")
        + join.format(name="`a -> b`")
        + agg.format(name="c", input="`a -> b`")
        + agg.format(name="`b -> c`", input="a")
    )
    plan = check_text(spec).plan
    assert plan is not None
    chains = [c.relations for c in plan.checks if c.name == "global watermark: a -> b -> c"]
    assert sorted(chains) == [("a", "b -> c"), ("a -> b", "c")]
    text = mermaid(plan)
    ids = {node.name: f"n{i}" for i, node in enumerate(plan.nodes)}
    for lower, upper in chains:
        assert re.search(rf'^    {ids[lower]} -\. "[^"]*" \.-> {ids[upper]}$', text, re.M)
