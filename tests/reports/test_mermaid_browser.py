"""`sjoin plan --format mermaid` renders for real: each example's diagram, loaded with
mermaid's own browser bundle (from npm, see scripts/setup.sh) in headless Chromium, becomes
an SVG with every node and edge label, and Mermaid reports no syntax error."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from sjoin.api import check_file, check_text
from sjoin.compiler.describe.diagram import mermaid

from ..compiler.describe.test_diagram import hostile_diagrams, shown
from ..compiler.planning.cases import CASES
from ..conftest import EXAMPLES, ROOT
from .conftest import Chromium, Dom, distinct_colors, png_size

pytestmark = pytest.mark.browser

# user names that would break the syntax if a label let them through
# (tests/compiler/describe/test_diagram.py)
HOSTILE = (
    'stream `a"b|c` (k INT, t TIMESTAMP) watermark t delay 1 second\n'
    "stream `<x>` (k INT, t TIMESTAMP) watermark t delay 1 second\n"
    'join `j]"` = `a"b|c` AS p INNER JOIN `<x>` AS q ON p.k = q.k AND p.t = q.t\n'
)
BUDGET_MS = 20_000  # virtual time for mermaid to lay out and draw


def page(diagram: str, mermaid_js: Path, out: Path) -> Path:
    """An HTML page that renders ``diagram`` with the local bundle and marks <body> with the
    outcome (data-rendered, or data-error with Mermaid's message)."""
    out.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>\n"
        f'<script src="{mermaid_js.resolve().as_uri()}"></script></head>\n<body>\n'
        f'<pre class="mermaid">{html.escape(diagram)}</pre>\n'
        "<script>\n"
        "mermaid.initialize({startOnLoad: false, securityLevel: 'strict'});\n"
        "mermaid.run()\n"
        "  .then(() => document.body.setAttribute('data-rendered', 'yes'))\n"
        "  .catch((e) => document.body.setAttribute('data-error', String(e && e.message || e)));\n"
        "</script>\n</body></html>\n",
        encoding="utf-8",
    )
    return out


def labels(diagram: str) -> list[str]:
    """Every line of every quoted label, as Mermaid should show it."""
    lines = []
    for label in re.findall(r'"([^"]*)"', diagram):
        lines += shown(label)
    return lines


def rendered(chromium: Chromium, mermaid_js: Path, diagram: str, tmp_path: Path) -> Dom:
    dom = Dom(chromium.dom(page(diagram, mermaid_js, tmp_path / "d.html"), budget_ms=BUDGET_MS))
    assert "data-error" not in dom.body, f"Mermaid: {dom.body['data-error']}"
    assert dom.body.get("data-rendered") == "yes", "Mermaid did not finish within the budget"
    assert len(dom.svgs) == 1, "one rendered diagram"
    text = dom.svg_text()
    assert "Syntax error" not in text and "Syntax error" not in " ".join(dom.text)
    return dom


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_example_diagram_renders(
    spec: Path, chromium: Chromium, mermaid_js: Path, tmp_path: Path
) -> None:
    plan = check_file(spec).plan
    assert plan is not None
    diagram = mermaid(plan)
    text = rendered(chromium, mermaid_js, diagram, tmp_path).svg_text()
    for node in plan.nodes:
        assert node.name in text, f"node {node.name} is not drawn"
    lines = labels(diagram)
    assert len(lines) >= 2 * len(plan.nodes)
    for line in lines:
        assert line in text, f"label line {line!r} is not drawn"


def test_hostile_names_render_as_written(
    chromium: Chromium, mermaid_js: Path, tmp_path: Path
) -> None:
    plan = check_text(HOSTILE).plan
    assert plan is not None
    text = rendered(chromium, mermaid_js, mermaid(plan), tmp_path).svg_text()
    for name in ('a"b|c', "<x>", 'j]"'):
        assert name in text.splitlines(), name


def render_all(
    chromium: Chromium, mermaid_js: Path, diagrams: list[tuple[str, str]], tmp_path: Path
) -> Dom:
    """Every diagram in one page, rendered one after the other; Mermaid reports no error."""
    blocks = "\n".join(
        f'<pre class="mermaid" data-name="{html.escape(name)}">{html.escape(d)}</pre>'
        for name, d in diagrams
    )
    out = tmp_path / "all.html"
    out.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>\n"
        f'<script src="{mermaid_js.resolve().as_uri()}"></script></head>\n<body>\n{blocks}\n'
        "<script>\n"
        "mermaid.initialize({startOnLoad: false, securityLevel: 'strict'});\n"
        "(async () => {\n"
        "  const errors = [];\n"
        "  for (const el of document.querySelectorAll('pre.mermaid')) {\n"
        "    try { await mermaid.run({nodes: [el]}); }\n"
        "    catch (e) { errors.push(el.dataset.name + ': ' + String(e && e.message || e)); }\n"
        "  }\n"
        "  document.body.setAttribute('data-errors', errors.join('\\n'));\n"
        "  document.body.setAttribute('data-rendered', 'yes');\n"
        "})();\n"
        "</script>\n</body></html>\n",
        encoding="utf-8",
    )
    dom = Dom(chromium.dom(out, budget_ms=300_000))
    assert dom.body.get("data-rendered") == "yes", "Mermaid did not finish within the budget"
    assert not dom.body.get("data-errors"), dom.body["data-errors"]
    assert len(dom.svgs) == len(diagrams)
    assert "Syntax error" not in " ".join(dom.text)
    return dom


def test_every_planned_case_renders(chromium: Chromium, mermaid_js: Path, tmp_path: Path) -> None:
    """Every spec of the plan catalogue and of the diagnostics cases that plans, in one page:
    Mermaid parses and draws each diagram (windows, outer joins, chains, rejected pipelines)."""
    specs = [(case.id, check_text(case.spec)) for case in CASES]
    cases = ROOT / "tests" / "compiler" / "diagnostics" / "cases"
    specs += [(path.stem, check_file(path)) for path in sorted(cases.glob("*.sjoin"))]
    diagrams = [(name, mermaid(r.plan)) for name, r in specs if r.plan is not None]
    assert len(diagrams) > 100
    render_all(chromium, mermaid_js, diagrams, tmp_path)


def test_every_hostile_name_renders_as_written(
    chromium: Chromium, mermaid_js: Path, tmp_path: Path
) -> None:
    """Names that hold Mermaid's entity codes and stand-ins, HTML, Markdown, KaTeX, icons
    and flowchart syntax, in every place of a chain (tests/compiler/describe/test_diagram.py): each
    diagram renders, with every label line drawn as written, and none drawn as markup."""
    cases = hostile_diagrams()
    dom = render_all(chromium, mermaid_js, [(key, d) for key, d, _ in cases], tmp_path)
    for index, (key, diagram, n) in enumerate(cases):
        drawn = dom.svg_text(index)
        for line in labels(diagram):
            assert line.strip() in drawn, (key, line, drawn)
        assert n["j"] in drawn.replace("\u2060", "").splitlines(), (key, drawn)
    assert not {"b", "i", "strong", "em", "math", "code"} & set(dom.tags)
    assert "katex" not in " ".join(dom.classes)


def test_chain_diagram_screenshot(chromium: Chromium, mermaid_js: Path, tmp_path: Path) -> None:
    plan = check_file(next(p for p in EXAMPLES if p.stem == "checkout_funnel")).plan
    assert plan is not None
    html_page = page(mermaid(plan), mermaid_js, tmp_path / "funnel.html")
    png = tmp_path / "funnel.png"
    data = chromium.screenshot(html_page, png, size=(1600, 900), budget_ms=BUDGET_MS)
    assert png_size(data) == (1600, 900)
    assert distinct_colors(png) > 100, "the diagram screenshot is (nearly) blank"
