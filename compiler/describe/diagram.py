"""Plan -> a Mermaid flowchart (`sjoin plan --format mermaid`): streams, joins and aggregates,
with the keys, each side's eviction rule and the pipeline verdicts on the edges.

Node ids are generated (n0, n1, ...): no user text is ever an id.  Every label goes through
``_label``, so user names never break the diagram's syntax, nor become markup, math, icons
or entities: Mermaid shows them as written.
"""

from __future__ import annotations

from functools import singledispatch

from ..planning.plan import (
    AggregateNode,
    Check,
    DedupNode,
    InputWatermark,
    JoinNode,
    Plan,
    PlanNode,
    Side,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..vocabulary.sql import written_sql
from ..vocabulary.types import format_ms
from .explain import predicate_text, results_summary

# What Mermaid (11) reads in the text of a quoted label, each written as an entity code
# (`#name;` or `#NNN;`, which Mermaid shows as the character):
_ENTITIES = {
    '"': "#quot;",  # ends the label
    "#": "#35;",  # starts an entity code: `#quot;` would show as `"`
    "&": "#amp;",  # labels are HTML: `&lt;` is an entity,
    "<": "#lt;",  # `<b>` a tag,
    ">": "#gt;",
    "|": "#124;",  # an edge text's delimiter
    "`": "#96;",  # a label that opens with a back-quote is Markdown
    "$": "#36;",  # `$$x$$` is KaTeX math
    "\\": "#92;",  # `\n` is a line break
    "%": "#37;",  # `%%` opens a comment at the start of a line
}
# Mermaid's own stand-ins for `&#`, `&` and `;` while it decodes entity codes (U+FB02 U+B0
# U+B0, U+FB02 U+B0, U+B6 U+DF): it decodes them wherever they are, twice, so no entity code
# keeps them.  An invisible WORD JOINER (U+2060) is put between the two characters of each.
_STAND_INS = {("\ufb02", "\xb0"), ("\xb6", "\xdf")}
_JOINER = "#8288;"


def _label(*lines: str) -> str:
    """A quoted Mermaid label of ``lines``: every character Mermaid reads (``_ENTITIES``)
    and every unprintable one (line breaks of any kind included) written as an entity code,
    so each of ``lines`` is one line of the label, shown as written.

    A ``:`` is one too unless a space follows it (so that ``i: i.ad_id`` stays readable):
    Mermaid reads ``fa:fa-car`` as an icon, and on a line that holds ``style`` or
    ``classDef``, ``:`` then non-spaces up to a ``#`` (``style:x#35;``) make it drop the
    line's last ``;``, an entity's end; after ``: `` neither can match.  Mermaid's
    stand-ins (``_STAND_INS``) are the one thing not shown exactly: an invisible word
    joiner separates their two characters.

    The lines are separated by line breaks inside the quotes, not by ``<br/>``: Mermaid
    decodes the entity codes of a label that holds a ``<br/>`` before it looks for icons,
    KaTeX and ``\\n`` (checked in Chromium, tests/reports/test_mermaid_browser.py)."""
    escaped = []
    for line in lines:
        out = []
        for i, c in enumerate(line):
            if i and (line[i - 1], c) in _STAND_INS:
                out.append(_JOINER)
            if c == ":":
                out.append(":" if line[i + 1 : i + 2] == " " else "#58;")
            else:
                out.append(_ENTITIES.get(c) or (c if c.isprintable() else f"#{ord(c)};"))
        escaped.append("".join(out))
    return '"' + "\n".join(escaped) + '"'


def _mark_text(mark: InputWatermark | None) -> list[str]:
    """A watermark defined where an operator reads a join's or aggregate's output."""
    return [] if mark is None else [f"watermark {mark.column} - {format_ms(mark.delay_ms)}"]


def _side_edge(side: Side, keys: str) -> str:
    never = side.state.eviction == "never"
    state = "state never evicted" if never else f"evict {predicate_text(side)}"
    return _label(f"{side.alias}: {keys}", *_mark_text(side.input_watermark), state)


@singledispatch
def _shape(node: PlanNode, nid: str, plan: Plan) -> str:
    """The node's line: its id, shape and label."""
    raise NotImplementedError(type(node).__name__)  # pragma: no cover


@_shape.register
def _(node: StreamNode, nid: str, plan: Plan) -> str:
    wm = (
        f"watermark {node.watermark_column} - {format_ms(node.delay_ms or 0)}"
        if node.watermark_column
        else "no watermark"
    )
    return f"    {nid}[({_label(node.name, wm)})]"


@_shape.register
def _(node: JoinNode, nid: str, plan: Plan) -> str:
    kind = node.join_type.replace("_", " ").upper()
    late = "may emit late rows" if node.may_emit_late_rows else "no late rows"
    return f"    {nid}{{{{{_label(node.name, kind + ' JOIN', late)}}}}}"


@_shape.register
def _(node: AggregateNode, nid: str, plan: Plan) -> str:
    label = _label(node.name, f"aggregate, {node.mode}", results_summary(plan, node))
    return f"    {nid}[/{label}/]"


@_shape.register
def _(node: DedupNode, nid: str, plan: Plan) -> str:
    kind = "dedup within watermark" if node.within_watermark else "dedup"
    state = node.state
    kept = (
        "state never evicted"
        if state.eviction == "never"
        else f"evict {state.column} <= watermark"
        if state.eviction == "key"
        else f"evict {state.column} + {format_ms(state.offset_ms or 0)} <= watermark"
    )
    return f"    {nid}[[{_label(node.name, kind, kept)}]]"


@_shape.register
def _(node: UnionNode, nid: str, plan: Plan) -> str:
    time = f"event time {node.event_time_column}" if node.event_time_column else "no event time"
    return f"    {nid}[{_label(node.name, 'UNION ALL', time)}]"


@_shape.register
def _(node: ViewNode, nid: str, plan: Plan) -> str:
    return f"    {nid}[{_label(node.name, 'view, stateless')}]"


@_shape.register
def _(node: TableNode, nid: str, plan: Plan) -> str:
    return f"    {nid}[({_label(node.name, f'static table, {node.source.format}')})]"


@_shape.register
def _(node: StaticJoinNode, nid: str, plan: Plan) -> str:
    kind = node.join_type.replace("_", " ").upper()
    return f"    {nid}{{{{{_label(node.name, kind + ' JOIN', 'stream-static, no state')}}}}}"


@singledispatch
def _edges(node: PlanNode, ids: dict[str, str], verdicts: dict[str, Check]) -> list[str]:
    """The edges into the node from its inputs (a stream has none)."""
    return []


@_edges.register
def _(node: JoinNode, ids: dict[str, str], verdicts: dict[str, Check]) -> list[str]:
    left_keys = ", ".join(written_sql(a) for a, _ in node.keys) or "no keys"
    right_keys = ", ".join(written_sql(b) for _, b in node.keys) or "no keys"
    return [
        f"    {ids[side.relation]} -- {_side_edge(side, keys)} --> {ids[node.name]}"
        for side, keys in ((node.left, left_keys), (node.right, right_keys))
    ]


@_edges.register
def _(node: AggregateNode, ids: dict[str, str], verdicts: dict[str, Check]) -> list[str]:
    check = verdicts.get(node.name)
    text = [
        *_mark_text(node.input_watermark),
        *([] if node.where is None else [f"where {written_sql(node.where.condition)}"]),
        f"group by {', '.join(written_sql(g) for g in node.group_by)}",
    ]
    if check is not None:
        text.append(f"[{check.verdict}] {check.detail}")
    return [f"    {ids[node.input]} -- {_label(*text)} --> {ids[node.name]}"]


@_edges.register
def _(node: DedupNode, ids: dict[str, str], verdicts: dict[str, Check]) -> list[str]:
    text = [*_mark_text(node.input_watermark), f"on {', '.join(node.keys)}"]
    return [f"    {ids[node.input]} -- {_label(*text)} --> {ids[node.name]}"]


@_edges.register
def _(node: UnionNode, ids: dict[str, str], verdicts: dict[str, Check]) -> list[str]:
    return [
        f"    {ids[relation]} -- {_label(f'input {int(port) + 1}')} --> {ids[node.name]}"
        for port, relation in node.inputs
    ]


@_edges.register
def _(node: ViewNode, ids: dict[str, str], verdicts: dict[str, Check]) -> list[str]:
    text = [*_mark_text(node.input_watermark)]
    if node.where is not None:
        text.append(f"where {written_sql(node.where)}")
    label = f" -- {_label(*text)} --> " if text else " --> "
    return [f"    {ids[node.input]}{label}{ids[node.name]}"]


@_edges.register
def _(node: StaticJoinNode, ids: dict[str, str], verdicts: dict[str, Check]) -> list[str]:
    left_keys = ", ".join(written_sql(a) for a, _ in node.keys) or "no keys"
    right_keys = ", ".join(written_sql(b) for _, b in node.keys) or "no keys"
    return [
        f"    {ids[side.relation]} -- "
        f"{_label(f'{side.alias}: {keys}', 'table, read whole' if side.static else 'stream')}"
        f" --> {ids[node.name]}"
        for side, keys in ((node.left, left_keys), (node.right, right_keys))
    ]


def mermaid(plan: Plan) -> str:
    ids = {node.name: f"n{i}" for i, node in enumerate(plan.nodes)}
    lines = ["flowchart LR"]
    verdicts = {c.relations[0]: c for c in plan.checks if c.name.startswith("output mode of ")}
    lines += [_shape(node, ids[node.name], plan) for node in plan.nodes]
    for node in plan.nodes:
        lines += _edges(node, ids, verdicts)
    for check in plan.checks:
        if check.name.startswith("global watermark: "):
            lower, upper = check.relations
            if lower in ids and upper in ids:
                lines.append(
                    f"    {ids[lower]} -. {_label(f'[{check.verdict}] {check.detail}')}"
                    f" .-> {ids[upper]}"
                )
    styles = {"error": "fill:#fdd,stroke:#c00", "warning": "fill:#ffd,stroke:#b80"}
    for node in plan.nodes:
        worst = [
            c.verdict for c in plan.checks if c.verdict != "ok" and c.relations[-1:] == (node.name,)
        ]
        if worst:
            verdict = "error" if "error" in worst else "warning"
            lines.append(f"    style {ids[node.name]} {styles[verdict]}")
    return "\n".join(lines) + "\n"
