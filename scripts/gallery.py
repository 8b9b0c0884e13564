"""Generate docs/examples.md, the gallery of every example in examples/*.sjoin:

    .venv/bin/python scripts/gallery.py > docs/examples.md

For each example: the business question (the spec's ``Business question:`` comment), the
joins and their types, what the planner says about each side's state and any warnings (what
``sjoin plan`` prints), the Mermaid diagram (``sjoin plan --format mermaid``) and the commands
to try it. Everything comes from sjoin's own API, so the page says exactly what the tool says;
tests/integration/examples/test_gallery.py fails when the page is out of date.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from sjoin.api import CheckResult, check_text
from sjoin.compiler.describe.diagram import mermaid
from sjoin.compiler.describe.explain import plan_text
from sjoin.compiler.frontend.ast import JOIN_KEYWORDS
from sjoin.reports.diagnostics import render_plain

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ".venv/bin/python scripts/gallery.py > docs/examples.md"

JOIN_TYPES = JOIN_KEYWORDS


def examples(root: Path = ROOT) -> list[Path]:
    return sorted((root / "examples").glob("*.sjoin"))


def header(text: str) -> tuple[str, str, str]:
    """(summary, business question, the rest) from the spec's leading comment block:
    ``-- examples/x.sjoin: summary`` then ``-- Business question: ...?`` and more prose."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        lines.append(line[2:].strip())
    summary = lines[0].split(":", 1)[1].strip() if lines and ":" in lines[0] else ""
    prose = " ".join(lines[1:])
    match = re.search(r"Business question:\s*(.*?\?)\s*(.*)", prose)
    if match is None:
        raise SystemExit("an example has no `-- Business question: ...?` in its first comment")
    return summary, match.group(1), match.group(2)


def cell(text: str) -> str:
    """Text for a Markdown table cell (a pipe would end the cell)."""
    return text.replace("|", "\\|")


def code(text: str) -> str:
    return f"`{cell(text)}`"


def join_type(join: dict[str, Any], executed: bool = True) -> str:
    name = JOIN_TYPES[join["join_type"]]
    if executed and join["executed_as"] != join["join_type"]:
        name += f", executed as {JOIN_TYPES[join['executed_as']]}"
    return name


def state_rows(join: dict[str, Any]) -> list[str]:
    rows = []
    for which in ("left", "right"):
        side, state = join["sides"][which], join["state"][which]
        who = f"{which}: `{side['alias']}` ({side['relation']})"
        if state["eviction"] == "never":
            rule, kept = "never evicted", f"forever: {state['reason']}"
        else:
            rule = f"{state['eviction']} watermark: {code(side['state_predicate'])}"
            kept = side["retention"]
        rows.append(f"| {join['name']} | {who} | {rule} | {cell(kept)} |")
    return rows


def section(path: Path, root: Path = ROOT) -> list[str]:
    rel = path.relative_to(root).as_posix()
    text = path.read_text(encoding="utf-8")
    result: CheckResult = check_text(text, rel)
    if not result.ok or result.plan is None:
        raise SystemExit(f"{rel} has errors: run `sjoin check {rel}`")
    plan = result.plan_json()
    summary, question, rest = header(text)
    name = path.stem
    out = [f"## {name}", ""]
    out += [f"[{rel}](../{rel}): {summary}", ""] if summary else [f"[{rel}](../{rel})", ""]
    out += [f"**Business question:** {question}", ""]
    if rest:
        out += [rest, ""]

    out += ["| relation | type | keys |", "|---|---|---|"]
    for join in plan["joins"]:
        keys = ", ".join(code(f"{a} = {b}") for a, b in join["keys"])
        out.append(f"| {join['name']} | {join_type(join)} | {keys} |")
    for agg in plan["aggregates"]:
        group = ", ".join(code(g) for g in agg["group_by"])
        out.append(f"| {agg['name']} | aggregate, output mode {agg['mode']} | group by {group} |")
    out.append("")

    out += [
        "State of each join side, as `sjoin plan` derives it (a row leaves the state in the",
        "first micro-batch whose eviction watermark makes the predicate true):",
        "",
        "| join | side | evicted when | kept |",
        "|---|---|---|---|",
    ]
    for join in plan["joins"]:
        out += state_rows(join)
    out.append("")
    for join in plan["joins"]:
        for note in join["null_rows"]:
            out.append(f"- {join['name']}: {note}")
        late = "yes" if join["may_emit_late_rows"] else "no"
        out.append(f"- {join['name']}, late output: {late}: {join['late_rows_reason']}")
        out += [f"- {join['name']}: {note}" for note in join["notes"]]
    out += [f"- check {c['name']}: [{c['verdict']}] {c['detail']}" for c in plan["checks"]]
    out.append("")

    warnings = [d for d in result.diagnostics if d.severity == "warning"]
    if warnings:
        label = "Warning" if len(warnings) == 1 else "Warnings"
        out += [f"{label} (see [diagnostics.md](diagnostics.md)):", "", "```text"]
        out += [render_plain(d, result.source) for d in warnings]
        out += ["```", ""]
    else:
        out += ["Warnings: none.", ""]

    out += ["```mermaid", mermaid(result.plan).rstrip("\n"), "```", ""]

    trace = path.with_suffix(".trace.jsonl")
    out += ["Try it:", "", "```sh", f".venv/bin/sjoin plan {rel}"]
    if trace.exists():
        out.append(f".venv/bin/sjoin run {rel} --trace {trace.relative_to(root).as_posix()}")
    out += [f".venv/bin/sjoin compile {rel} -o {name}_job.py", "```", ""]

    out += [
        "<details><summary>The whole <code>sjoin plan</code> output</summary>",
        "",
        "```text",
        plan_text(result.plan).rstrip("\n"),
        "```",
        "",
        "</details>",
        "",
    ]
    return out


def gallery(root: Path = ROOT) -> str:
    """The text of docs/examples.md."""
    specs = examples(root)
    out = [
        "# Examples gallery",
        "",
        "Generated from `examples/*.sjoin` by `scripts/gallery.py`; do not edit by hand.",
        f"Regenerate it with `{COMMAND}` (`tests/integration/examples/test_gallery.py`",
        "fails when it is out of date).",
        "",
        "Each example is a spec with a trace to run it on. For each: the question it answers,",
        "its joins, what `sjoin plan` says about each side's state and the warnings, the",
        "pipeline as a diagram, and the commands to try it from the checkout (after",
        "`bash scripts/setup.sh`).",
        "",
        "| example | joins | business question |",
        "|---|---|---|",
    ]
    for path in specs:
        result = check_text(path.read_text(encoding="utf-8"), path.name)
        assert result.plan is not None
        joins = ", ".join(
            f"{j['name']} ({join_type(j, executed=False)})" for j in result.plan_json()["joins"]
        )
        question = header(path.read_text(encoding="utf-8"))[1]
        out.append(f"| [{path.stem}](#{path.stem}) | {cell(joins)} | {cell(question)} |")
    out.append("")
    for path in specs:
        out += section(path, root)
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":
    sys.stdout.write(gallery())
