"""Plan -> a Mermaid flowchart (`sjoin plan --format mermaid`): streams, joins and aggregates,
with the keys, each side's eviction rule and the pipeline verdicts on the edges.

Node ids are generated (n0, n1, ...), and every label goes through ``_label``, so user names
never break the diagram's syntax.
"""

from __future__ import annotations

from .explain import predicate_text
from .plan import AggregateNode, JoinNode, Plan, Side, StreamNode
from .sql import written_sql
from .types import format_ms


def _label(*lines: str) -> str:
    """A quoted Mermaid label: quotes, markup and unprintable characters (line breaks of any
    kind included) as entities, lines as <br/>."""
    escaped = []
    for line in lines:
        text = line.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;")
        text = text.replace(">", "#gt;").replace("|", "#124;")
        if not text.isprintable():
            text = "".join(c if c.isprintable() else f"#{ord(c)};" for c in text)
        escaped.append(text)
    return '"' + "<br/>".join(escaped) + '"'


def _side_edge(side: Side, keys: str) -> str:
    never = side.state.eviction == "never"
    state = "state never evicted" if never else f"evict {predicate_text(side)}"
    return _label(f"{side.alias}: {keys}", state)


def mermaid(plan: Plan) -> str:
    ids = {node.name: f"n{i}" for i, node in enumerate(plan.nodes)}
    lines = ["flowchart LR"]
    verdicts = {c.name: c for c in plan.checks}
    for node in plan.nodes:
        nid = ids[node.name]
        if isinstance(node, StreamNode):
            wm = (
                f"watermark {node.watermark_column} - {format_ms(node.delay_ms or 0)}"
                if node.watermark_column
                else "no watermark"
            )
            lines.append(f"    {nid}[({_label(node.name, wm)})]")
        elif isinstance(node, JoinNode):
            kind = node.join_type.replace("_", " ").upper()
            late = "may emit late rows" if node.may_emit_late_rows else "no late rows"
            lines.append(f"    {nid}{{{{{_label(node.name, kind + ' JOIN', late)}}}}}")
        elif isinstance(node, AggregateNode):
            lines.append(f"    {nid}[/{_label(node.name, f'aggregate, {node.mode}')}/]")
    for node in plan.nodes:
        if isinstance(node, JoinNode):
            left_keys = ", ".join(written_sql(a) for a, _ in node.keys) or "no keys"
            right_keys = ", ".join(written_sql(b) for _, b in node.keys) or "no keys"
            for side, keys in ((node.left, left_keys), (node.right, right_keys)):
                lines.append(
                    f"    {ids[side.relation]} -- {_side_edge(side, keys)} --> {ids[node.name]}"
                )
        elif isinstance(node, AggregateNode):
            check = verdicts.get(f"output mode of {node.name}")
            text = [f"group by {', '.join(written_sql(g) for g in node.group_by)}"]
            if check is not None:
                text.append(f"[{check.verdict}] {check.detail}")
            lines.append(f"    {ids[node.input]} -- {_label(*text)} --> {ids[node.name]}")
    for check in plan.checks:
        if check.name.startswith("global watermark: "):
            lower, _, upper = check.name.removeprefix("global watermark: ").partition(" -> ")
            if lower in ids and upper in ids:
                lines.append(
                    f"    {ids[lower]} -. {_label(f'[{check.verdict}] {check.detail}')}"
                    f" .-> {ids[upper]}"
                )
    styles = {"error": "fill:#fdd,stroke:#c00", "warning": "fill:#ffd,stroke:#b80"}
    for node in plan.nodes:
        worst = [
            c.verdict
            for c in plan.checks
            if c.verdict != "ok" and c.name.endswith((f" {node.name}", f"-> {node.name}"))
        ]
        if worst:
            verdict = "error" if "error" in worst else "warning"
            lines.append(f"    style {ids[node.name]} {styles[verdict]}")
    return "\n".join(lines) + "\n"
