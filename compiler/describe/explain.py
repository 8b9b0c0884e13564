"""Plan -> the stable, sorted plan JSON of the language brief (§5), and its text form.

The JSON fields ``spark``, ``joins[].name/join_type/keys/state`` and ``diagnostics`` are a
contract; everything else is extra explanation.  Keys are sorted and values are plain, so
the output is fit for snapshot tests.
"""

from __future__ import annotations

from functools import singledispatch
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from ..planning.plan import (
    AggregateNode,
    AggregateWhere,
    Check,
    DedupNode,
    InputWatermark,
    JoinNode,
    Plan,
    PlanNode,
    Side,
    StateRule,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..vocabulary.expr import strip_parens
from ..vocabulary.model import JOIN_KINDS, WatermarkChoice, WatermarkUse
from ..vocabulary.sql import written_sql
from ..vocabulary.types import format_ms

if TYPE_CHECKING:
    from .capacity import AggregateLag


def _sql(node: exp.Expression | None) -> str | None:
    return None if node is None else written_sql(node)


def _conjunction(parts: tuple[exp.Expression, ...]) -> str | None:
    """Conjuncts as one ``AND`` in Spark SQL (an OR conjunct in parentheses); None if none."""
    texts = [
        f"({written_sql(p)})" if isinstance(strip_parens(p), exp.Or) else written_sql(p)
        for p in parts
    ]
    return " AND ".join(texts) or None


def state_json(rule: StateRule) -> dict[str, Any]:
    out: dict[str, Any] = {"eviction": rule.eviction}
    if rule.eviction == "never":
        out["reason"] = rule.reason
        return out
    out["column"] = rule.column
    out["offset_ms"] = rule.offset_ms
    if rule.eviction == "key":
        out["key_index"] = rule.key_index
        out["window_end"] = rule.window
    else:
        out["bounds"] = [
            {
                "conjunct": b.conjunct,
                "strict": b.strict,
                "watermark_coefficient": b.coef,
                "constant_us": b.const_us,
            }
            for b in rule.bounds
        ]
    return out


def _side_json(side: Side) -> dict[str, Any]:
    found: dict[str, Any] = {
        "relation": side.relation,
        "alias": side.alias,
        "event_time_column": side.event_time_column,
        "pushed_filter": _sql(side.pushed_filter),
        "inferred_filter": _conjunction(side.inferred_filters),
        "pre_join_filter": _sql(side.pre_join_filter),
        "inferred_not_null": list(side.not_null),
        "preserved": side.preserved,
        "retention": side.retention,
        "state_predicate": predicate_text(side),
        "evicted_rows_skipped": side.evicted_rows_skipped,
    }
    mark = side.input_watermark
    if mark is not None:  # only where defined: the sides of other joins read as before
        found["input_watermark"] = {"column": mark.column, "delay_ms": mark.delay_ms}
    if side.filters_pushed_into is not None:  # only where pushed: other plans read as before
        found["filters_pushed_into"] = side.filters_pushed_into
    if side.inferred_above:  # only where pushed: other plans read as before
        found["inferred_above"] = {
            "filter": _conjunction(side.inferred_above),
            "inferred_by": side.inferred_above_by,
        }
    return found


# `sjoin plan`'s words for ``Side.evicted_rows_skipped`` (the append rule, SPARK-49829)
SKIPPED_TEXT = {
    "all": "that this batch's eviction removes at once are not stored",
    "matched": "that this batch's eviction removes at once are not stored once matched "
    "(an unmatched one is, to come out null-padded)",
    "none": "are all stored, also those this batch's eviction removes at once",
}


def predicate_text(side: Side) -> str | None:
    """The eviction predicate as a formula, e.g. ``i.impression_time <= watermark - 1 hour 1
    ms`` (for a window key, the window end)."""
    rule = side.state
    if rule.eviction == "never" or rule.offset_ms is None:
        return None
    col = f"{side.alias}.{rule.column}"
    if rule.window:
        col = f"window({col}).end"
    if rule.offset_ms == 0:
        return f"{col} <= watermark"
    sign = "-" if rule.offset_ms < 0 else "+"
    return f"{col} <= watermark {sign} {format_ms(abs(rule.offset_ms))}"


PLAN_SCHEMA = 2  # docs/plan-json.md: bump when a field changes meaning or goes away


def watermark_text(choice: WatermarkChoice) -> str:
    """``previous batch's global watermark`` and the like, for `sjoin plan`."""
    batch = "this batch's" if choice.batch == "this" else "the previous batch's"
    if choice.source == "global":
        return f"{batch} global watermark"
    return f"{batch} watermark propagated from the operators below"


def watermarks_json(use: WatermarkUse) -> dict[str, Any]:
    return {
        "late_rows": {"source": use.late_rows.source, "batch": use.late_rows.batch},
        "eviction": {"source": use.eviction.source, "batch": use.eviction.batch},
        "output": use.output,
    }


def join_json(node: JoinNode) -> dict[str, Any]:
    return (
        {
            "name": node.name,
            "join_type": node.join_type,
            "executed_as": node.executed_as,
            "keys": [[_sql(a), _sql(b)] for a, b in node.keys],
            "state": {"left": state_json(node.left.state), "right": state_json(node.right.state)},
            "sides": {"left": _side_json(node.left), "right": _side_json(node.right)},
            "condition": _sql(node.condition),
            "post_join_filter": _sql(node.post_join_filter),
            "constant_filter": _sql(node.constant_filter),
            "time_range": None
            if node.time_range is None
            else {
                "left_column": node.time_range.left_column,
                "right_column": node.time_range.right_column,
                "lower_us": node.time_range.lower_us,
                "upper_us": node.time_range.upper_us,
            },
            "window_times": [_sql(e) for e in node.window_times],
            "null_rows": list(node.null_rows),
            "may_emit_late_rows": node.may_emit_late_rows,
            "late_rows_reason": node.late_rows_reason,
            "watermarks": watermarks_json(node.watermarks),
            "quirks": {
                "append_rule": node.quirks.append_rule,
                "semi_right_first": node.quirks.semi_right_first,
                "count_all_removals": node.quirks.count_all_removals,
            },
            "output": [
                {
                    "name": o.name,
                    "expr": _sql(o.expr),
                    "type": str(o.type),
                    "event_time": o.event_time,
                }
                for o in node.output
            ],
            "notes": list(node.notes),
        }
        | (_where_json(node) if _has_where(node) else {})
        # a join's OUTPUT MODE, only when it is not append (every plan before it had none)
        | ({} if node.mode == "append" else {"mode": node.mode})
        | _readers_json(node)
    )


def _has_where(node: JoinNode) -> bool:
    """Whether a join has a WHERE: its own, or an aggregate's pushed into it (its decisions
    without a written one)."""
    return (
        node.where is not None
        or bool(node.where_pushed)
        or node.where_filter is not None
        or node.where_eliminated is not None
    )


def _readers_json(node: JoinNode) -> dict[str, Any]:
    """The readers' null-rejecting filters that run the join narrower (only a join with one
    has this key): compiler/planning/readers.py."""
    found = [w for w in node.padded_windows if w.reader is not None]
    if not found:
        return {}
    return {
        "reader_filters": {
            "eliminate_outer_join": {"from": node.join_type, "to": node.executed_as},
            "filters": [
                {"reader": w.reader, "filter": w.how, "side": w.side, "column": w.time_column}
                for w in found
            ],
        }
    }


def reader_text(node: JoinNode) -> list[str]:
    """The readers' filters that run the join narrower, in `sjoin plan`: EliminateOuterJoin
    in words, with the reader and the filter Spark pushes down to the join."""
    found = [w for w in node.padded_windows if w.reader is not None]
    if not found:
        return []
    said = " AND ".join(
        f"`{w.reader}`'s "
        + ("window() (TimeWindowing's" if w.how == "window" else "join (its inferred")
        + f" isnotnull({(node.left if w.side == 'left' else node.right).alias}.{w.time_column}))"
        for w in found
    )
    before = node.join_type.replace("_", " ").upper()
    after = node.executed_as.replace("_", " ").upper()
    return [
        f"  outer join       EliminateOuterJoin: {said} drops every null-padded row, pushed "
        f"down to the join, so Spark runs this {before} join as {after}: it stores, evicts "
        f"and emits as {after}"
    ]


def _where_json(node: JoinNode) -> dict[str, Any]:
    """A join's WHERE in its plan JSON (only a join with one has these keys)."""
    eliminated = node.where_eliminated
    return {
        "where": {
            "condition": _sql(node.where),
            "pushed": [{"side": side, "conjunct": _sql(p)} for side, p in node.where_pushed],
            "above_join": _sql(node.where_filter),
            "eliminate_outer_join": None
            if eliminated is None
            else {
                "from": eliminated[0],
                "to": eliminated[1],
                "conjuncts": [_sql(p) for p in eliminated[2]],
            },
        }
    }


def union_json(plan: Plan, node: UnionNode) -> dict[str, Any]:
    """A union's entry of the plan JSON (docs/plan-json.md, "A union")."""
    shown: dict[str, Any] = {
        "name": node.name,
        "inputs": list(node.relations),
        "columns": [
            {"name": c.name, "type": str(c.type), "event_time": c.event_time} for c in node.columns
        ],
        "event_time_column": node.event_time_column,
        "watermark_nodes": [
            {
                "input": relation,
                "column": column,
                "delay_ms": delay,
                "filters_below": _union_filters_below(node, i),
            }
            for i, relation, column, delay in union_watermark_nodes(plan, node)
        ],
    }
    if node.pushed_join is not None:  # only then: other unions keep their JSON byte for byte
        pushed = node.pushed_join
        shown["pushed_join"] = {"join_type": pushed.how, "union": pushed.union, "rule": pushed.rule}
    return shown


def _union_filters_below(node: UnionNode, i: int) -> list[str]:
    """What input ``i``'s watermark node runs below it: the pushed conjuncts, then the
    isnotnull filters (empty when no one join side reads the union)."""
    filters = node.below_watermark[i] if i < len(node.below_watermark) else ()
    not_null = node.not_null_below_watermark[i] if i < len(node.not_null_below_watermark) else ()
    return [written_sql(f) for f in filters] + [f"isnotnull({n})" for n in not_null]


def union_watermark_nodes(plan: Plan, node: UnionNode) -> list[tuple[int, str, str, int]]:
    """The watermark nodes right below a union: (input position, stream input, its column,
    its delay), one per read of a watermarked stream among its inputs (each counts in the
    global watermark on its own, by the policy)."""
    found = []
    for i, (_, relation) in enumerate(node.inputs):
        source = plan.node(relation)
        if isinstance(source, StreamNode) and source.watermark_column is not None:
            found.append((i, relation, source.watermark_column, source.delay_ms or 0))
    return found


def where_text(node: JoinNode, pushed_from: str | None = None) -> list[str]:
    """A join's WHERE in `sjoin plan`: Spark's EliminateOuterJoin in words, where each
    conjunct runs (``pushed_from``: the filters Spark pushes into it, ``pushed_where_from``)."""
    if not _has_where(node) and pushed_from is None:
        return []
    lines = [f"  where            {_sql(node.where)}"] if node.where is not None else []
    if pushed_from is not None:
        lines.append(
            f"  where from       {pushed_from}, pushed through this "
            "join's projection (PushPredicateThroughNonJoin)"
        )
    eliminated = node.where_eliminated
    if eliminated is not None:
        before, after, parts = eliminated
        said = " AND ".join(f"`{_sql(p)}`" for p in parts)
        lines.append(
            f"  outer join       EliminateOuterJoin: {said} drops every null-padded row, so "
            f"Spark runs this {before.replace('_', ' ').upper()} join as "
            f"{after.replace('_', ' ').upper()}: it stores, evicts and emits as "
            f"{after.replace('_', ' ').upper()}"
        )
    for side, part in node.where_pushed:
        lines.append(f"  where pushed     {_sql(part)} (into the {side} side, below the join)")
    if node.where_filter is not None:
        lines.append(
            f"  where above      {_sql(node.where_filter)} (a filter of the join's output "
            "rows, null-padded ones included)"
        )
    return lines


def plan_json(plan: Plan, diagnostics: list[dict[str, Any]]) -> dict[str, Any]:
    shown = _plan_json(plan, diagnostics)
    if plan.dedups:  # a plan without one keeps its JSON byte for byte
        shown = _with_dedups(plan, shown)
    if plan.unions:  # only then: a plan without a union keeps its JSON byte for byte
        shown["unions"] = [union_json(plan, u) for u in plan.unions]
    if plan.apart:  # only then, alike
        shown["planned_apart"] = apart_json(plan)
    if plan.copies:  # only then, alike
        shown["copies"] = dict(plan.copies)
    if plan.shared_watermarks:  # only then, alike
        shown["shared_watermarks"] = list(plan.shared_watermarks)
    return shown


def _with_dedups(plan: Plan, shown: dict[str, Any]) -> dict[str, Any]:
    from .dedup_text import dedup_json

    items = list(shown.items())
    at = [k for k, _ in items].index("aggregates") + 1
    dedups = [dedup_json(d, watermarks_json(d.watermarks)) for d in plan.dedups]
    return dict([*items[:at], ("dedups", dedups), *items[at:]])


def _plan_json(plan: Plan, diagnostics: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema": PLAN_SCHEMA,
        "spark": str(plan.spark),
        "ansi": plan.ansi,
        "settings": dict(sorted(plan.settings.items())),
        "query_roots": list(plan.query_roots),
        "streams": [
            {
                "name": s.name,
                "watermark": None
                if s.watermark_column is None
                else {"column": s.watermark_column, "delay_ms": s.delay_ms},
                "columns": [{"name": c.name, "type": str(c.type)} for c in s.columns],
                "source": None
                if s.source is None
                else {"format": s.source.format, "options": dict(s.source.options)},
            }
            for s in plan.streams
        ],
        "joins": [join_json(j) for j in plan.joins],
        "aggregates": [
            {
                "name": a.name,
                "input": a.input,
                "mode": a.mode,
                "group_by": [_sql(g) for g in a.group_by],
                "watermark_key": a.watermark_key,
                "watermark_key_index": a.watermark_key_index,
                "watermarks": watermarks_json(a.watermarks),
                "input_watermark": None
                if a.input_watermark is None
                else {"column": a.input_watermark.column, "delay_ms": a.input_watermark.delay_ms},
                "output": [
                    {"name": o.name, "expr": _sql(o.expr), "type": str(o.type)} for o in a.output
                ],
            }
            | ({} if a.where is None else {"where": aggregate_where_json(a.where)})
            for a in plan.aggregates
        ],
        "sinks": [
            {
                "relation": s.relation,
                "format": s.target.format,
                "options": dict(s.target.options),
                "checkpoint": s.checkpoint,
                "mode": s.mode,
            }
            for s in plan.sinks
        ],
        "checks": [{"name": c.name, "verdict": c.verdict, "detail": c.detail} for c in plan.checks],
        "diagnostics": diagnostics,
        **static_json(plan),
    } | ({"views": [view_json(v) for v in plan.views]} if plan.views else {})


def view_json(node: ViewNode) -> dict[str, Any]:
    """A view's plan JSON (only a plan with views has the ``views`` key)."""
    mark = node.input_watermark
    return {
        "name": node.name,
        "input": node.input,
        "alias": node.alias,
        "where": _sql(node.where),
        "filters_below_watermark": [_sql(p) for p in node.filters_below_watermark],
        "filters_above_watermark": [_sql(p) for p in node.filters_above_watermark],
        "not_null_below_watermark": list(node.not_null_below_watermark),
        "input_watermark": None
        if mark is None
        else {"column": mark.column, "delay_ms": mark.delay_ms},
        "output": [
            {"name": o.name, "expr": _sql(o.expr), "type": str(o.type), "event_time": o.event_time}
            for o in node.output
        ],
    }


@singledispatch
def _node_text(node: PlanNode, plan: Plan) -> list[str]:
    """A relation's lines in `sjoin plan`."""
    raise TypeError(f"`sjoin plan` has no text for a plan node of kind {type(node).__name__}")


@_node_text.register
def _view_text(node: ViewNode, plan: Plan) -> list[str]:
    """A view in `sjoin plan`: its filters, where each runs against its input's watermark
    node, and its output columns."""
    lines = [f"view {node.name} = {node.input} AS {node.alias}  [stateless]"]
    marked = _input_marked(plan, node)
    filters = filters_text(
        node.input,
        node.alias,
        marked,
        node.filters_below_watermark,
        node.not_null_below_watermark,
        node.filters_above_watermark,
    )
    lines.append(f"  filter           {'; '.join(filters) or '(none)'}")
    pushed_from = pushed_where_from(plan, node.name)
    if pushed_from is not None:
        lines.append(
            f"  where from       {pushed_from}, pushed through this "
            "view's projection (PushPredicateThroughNonJoin), after its own"
        )
    if node.where_pushed_into is not None:
        lines.append(
            f"  where pushed     into join {node.where_pushed_into}, through its projection "
            "(PushPredicateThroughNonJoin), then as its WHERE: the view keeps the same rows"
        )
    if node.pushed_from is not None:
        lines.append(
            f"  pushed from      {node.pushed_from}, its one reader: the filters it runs on this "
            "view go below it, through its projection, after its own WHERE (Spark's predicate "
            "pushdown); they choose the rows the watermark node sees"
        )
    if node.input_watermark is not None:
        text = _input_watermark_text(plan, node.input, node.input_watermark)
        lines.append(f"  input watermark  {text}")
    output = ", ".join(
        o.name + (" (event time)" if o.event_time else "")
        if isinstance(o.expr, exp.Column) and o.expr.name == o.name
        else f"{_sql(o.expr)} AS {o.name}" + (" (event time)" if o.event_time else "")
        for o in node.output
    )
    lines.append(f"  output           {output}")
    lines.append("  state            none: rows are filtered and projected, no row is late")
    return lines


def _input_marked(plan: Plan, node: ViewNode | AggregateNode) -> bool:
    """Whether a watermark node lies right below where ``node`` reads its input: one defined
    on the input, or the watermarked stream it reads."""
    source = plan.node(node.input)
    return node.input_watermark is not None or (
        isinstance(source, StreamNode) and source.watermark_column is not None
    )


def filters_text(
    relation: str,
    alias: str,
    marked: bool,
    below: tuple[exp.Expression, ...],
    not_null: tuple[str, ...],
    above: tuple[exp.Expression, ...],
    before: str = "the projection",
) -> list[str]:
    """A Filter's conjuncts over ``relation`` in words, where each runs against its
    watermark node (``marked``: it has one; else each runs ``before`` what follows it): a
    view's, an aggregate's WHERE."""
    filters = []
    for part in below:
        where = (
            f"pushed below {relation}'s watermark node (PushPredicateThroughNonJoin): the "
            "watermark sees only the rows it keeps"
            if marked
            else f"before {before}"
        )
        filters.append(f"{_sql(part)} ({where})")
    for name in not_null:
        filters.append(
            f"isnotnull({alias}.{name}) (inferred by Spark from a filter above the "
            "watermark node, pushed below it)"
        )
    for part in above:
        filters.append(
            f"{_sql(part)} (above {relation}'s watermark node: it reads the watermarked "
            "column or is not deterministic)"
        )
    return filters


def pushed_where_from(plan: Plan, relation: str) -> str | None:
    """The filters the plan pushes into ``relation`` (a join, or a view for an aggregate's),
    in words (``the WHERE of aggregate a``, ``the WHERE of view v``, ``the left side's
    filters of join j``), if any."""
    return next(
        iter(
            (
                *(
                    f"the WHERE of aggregate {a.name}"
                    for a in plan.aggregates
                    if a.where and a.where.pushed_into == relation
                ),
                *(
                    f"the WHERE of view {v.name}"
                    for v in plan.views
                    if v.where_pushed_into == relation
                ),
                *(
                    f"the {side.name} side's filters of join {j.name}"
                    for j in plan.joins
                    for side in (j.left, j.right)
                    if side.filters_pushed_into == relation
                ),
            )
        ),
        None,
    )


def static_json(plan: Plan) -> dict[str, Any]:
    """The plan JSON's `tables` and `static_joins` (docs/plan-json.md), only in a plan that
    has a table: every other plan's JSON is as before."""
    if not plan.tables:
        return {}
    return {
        "tables": [
            {
                "name": t.name,
                "columns": [{"name": c.name, "type": str(c.type)} for c in t.columns],
                "source": {"format": t.source.format, "options": dict(t.source.options)},
            }
            for t in plan.tables
        ],
        "static_joins": [
            {
                "name": j.name,
                "join_type": j.join_type,
                "static_side": j.static_side,
                "stream": {"relation": j.stream.relation, "alias": j.stream.alias},
                "table": {"relation": j.table.relation, "alias": j.table.alias},
                "keys": [[_sql(a), _sql(b)] for a, b in j.keys],
                "condition": _sql(j.condition),
                "state": None,
                "state_text": j.state,
                "output": [
                    {
                        "name": o.name,
                        "expr": _sql(o.expr),
                        "type": str(o.type),
                        "event_time": o.event_time,
                    }
                    for o in j.output
                ],
            }
            for j in plan.static_joins
        ],
    }


@_node_text.register
def _stream_text(node: StreamNode, plan: Plan) -> list[str]:
    wm = (
        f"watermark {node.watermark_column} delay {format_ms(node.delay_ms or 0)}"
        if node.watermark_column
        else "no watermark"
    )
    lines = [f"stream {node.name}: {wm}"]
    if node.name in plan.shared_watermarks:
        lines.append(
            "  reads            several, whose watermark nodes count as one in the global "
            "watermark: the highest of them (Spark 4.0+, one nodeId)"
        )
    return lines


@_node_text.register
def _table_text(node: TableNode, plan: Plan) -> list[str]:
    options = ", ".join(f"{k} = {v!r}" for k, v in node.source.options)
    return [f"table {node.name}: static, read in batch from {node.source.format} ({options})"]


@_node_text.register
def _static_join_text(node: StaticJoinNode, plan: Plan) -> list[str]:
    keys = ", ".join(f"{_sql(a)} = {_sql(b)}" for a, b in node.keys) or "none"
    return [
        f"join {node.name} = {node.left.relation} AS {node.left.alias} "
        f"{node.kind.keyword} JOIN {node.right.relation} AS {node.right.alias}  "
        f"[stream-static, table on the {node.static_side}]",
        f"  keys             {keys}",
        f"  condition        {_sql(node.condition)}",
        f"  state            {node.state}",
        "  watermarks       none used: the stream's watermark passes through to the operators "
        "above; no late-row filter, no eviction",
    ]


@_node_text.register
def _aggregate_text(node: AggregateNode, plan: Plan) -> list[str]:
    key = node.watermark_key or "none (no event-time grouping key)"
    lines = [
        f"aggregate {node.name} = {node.input}  [{node.mode}]",
        f"  group by         {', '.join(_sql(g) or '' for g in node.group_by)}",
        f"  watermark key    {key}",
    ]
    mark = node.input_watermark
    if mark is not None:
        lines.append(f"  input watermark  {_input_watermark_text(plan, node.input, mark)}")
    if node.where is not None:
        lines.extend(aggregate_where_text(plan, node, node.where))
    lines.append(
        f"  watermarks       late rows: {watermark_text(node.watermarks.late_rows)}; "
        f"eviction: {watermark_text(node.watermarks.eviction)}"
    )
    lines.append(f"  results          {_results_text(plan, node)}")
    return lines


# where `sjoin plan` prints each kind of relation: the sources first, then the unions, then
# the operators and views, each after a blank line; in plan order within each
_SOURCES, _UNIONS, _OPERATORS = range(3)


@singledispatch
def _text_place(node: PlanNode) -> int:
    raise TypeError(f"`sjoin plan` has no place for a plan node of kind {type(node).__name__}")


@_text_place.register(StreamNode)
@_text_place.register(TableNode)
def _(node: StreamNode | TableNode) -> int:
    return _SOURCES


@_text_place.register
def _(node: UnionNode) -> int:
    return _UNIONS


@_text_place.register(JoinNode)
@_text_place.register(StaticJoinNode)
@_text_place.register(ViewNode)
@_text_place.register(AggregateNode)
@_text_place.register(DedupNode)
def _(node: JoinNode | StaticJoinNode | ViewNode | AggregateNode | DedupNode) -> int:
    return _OPERATORS


def plan_text(plan: Plan) -> str:
    """The human-readable plan of `sjoin plan`."""
    lines = [
        f"spark {plan.spark}   watermark policy: {plan.settings.multiple_watermark_policy}",
        "",
    ]
    for node in sorted(plan.nodes, key=_text_place):  # a stable sort: plan order in a place
        if _text_place(node) == _OPERATORS:
            lines.append("")
        lines.extend(_node_text(node, plan))
    lines.extend(apart_text(plan))
    lines.append("")
    lines.append("checks")
    lines.extend(_check_text(c) for c in plan.checks)
    return "\n".join(lines)


def node_text(plan: Plan, name: str) -> list[str]:
    """The lines `sjoin plan` prints for the relation ``name`` (none for a name the plan does
    not hold): an editor's hover shows them (``editor/hover.py``)."""
    node = next((n for n in plan.nodes if n.name == name), None)
    return [] if node is None else _node_text(node, plan)


def apart_text(plan: Plan) -> list[str]:
    """The relations a query runs otherwise than above (``Plan.apart``), each query's under
    a heading that says why."""
    lines: list[str] = []
    for query in plan.apart:
        own = plan.for_query(query.root)
        names = " and ".join(n.name for n in query.nodes)
        mine = {n.name for n in query.nodes}
        others = [
            r
            for r in plan.query_roots
            if r != query.root and mine & {m.name for m in plan.closure(r)}
        ]
        lines += [
            "",
            f"in query {query.root} (Spark optimizes each query on its own: there {names} "
            f"{'runs' if len(query.nodes) == 1 else 'run'} as follows, and as above in query "
            f"{', '.join(others)})",
        ]
        for node in query.nodes:
            lines.extend(_node_text(node, own))
    return lines


def apart_json(plan: Plan) -> list[dict[str, Any]]:
    """``planned_apart`` in the plan JSON: per query, the joins and views it runs
    otherwise, each as ``joins`` and ``views`` show them."""
    return [
        {
            "query": q.root,
            "relations": [n.name for n in q.nodes],
            "joins": [join_json(n) for n in q.nodes if isinstance(n, JoinNode)],
            "views": [view_json(n) for n in q.nodes if isinstance(n, ViewNode)],
        }
        for q in plan.apart
    ]


def aggregate_where_text(plan: Plan, node: AggregateNode, where: AggregateWhere) -> list[str]:
    """An aggregate's WHERE in `sjoin plan`: where Spark runs it, below the aggregate's state."""
    lines = [f"  where            {_sql(where.condition)}"]
    if where.pushed_into is not None:
        lines.append(
            f"  where pushed     into {where.pushed_into} (PushPredicateThroughNonJoin through "
            f"its projection; see its filters): the rows it drops never reach this aggregate"
        )
        return lines
    marked = _input_marked(plan, node)
    filters = filters_text(
        node.input,
        node.alias,
        marked,
        where.filters_below_watermark,
        where.not_null_below_watermark,
        where.filters_above_watermark,
        "the grouping",
    )
    lines.append(f"  where filter     {'; '.join(filters)}")
    lines.append(
        "  where runs       before the grouping: the rows it drops are never grouped, stored "
        "or counted as late"
    )
    return lines


def aggregate_where_json(where: AggregateWhere) -> dict[str, Any]:
    """An aggregate's ``where`` in its plan JSON (only an aggregate with one has the key)."""
    return {
        "condition": _sql(where.condition),
        "pushed_into": where.pushed_into,
        "filters_below_watermark": [_sql(p) for p in where.filters_below_watermark],
        "filters_above_watermark": [_sql(p) for p in where.filters_above_watermark],
        "not_null_below_watermark": list(where.not_null_below_watermark),
    }


def _results_text(plan: Plan, node: AggregateNode) -> str:
    """When an aggregate's groups come out (append) or leave state (update): how far its
    eviction watermark runs behind the newest event time of its input, and why that far
    (the model of `plan --rates`, capacity.aggregate_lag, at the spec's trigger)."""
    from .capacity import aggregate_lag

    lag = aggregate_lag(plan, node)
    if lag.lag_ms is None:
        return str(lag.reason)
    delay = format_ms(round(lag.delay_ms or 0))
    why = [
        f"its streams' delay {delay}"
        if lag.marked is None
        else f"the delay {delay} of the watermark on {lag.marked}'s output"
    ]
    if lag.offset_ms < 0:
        why.append(f"{format_ms(round(-lag.offset_ms))} held back by the join state below it")
    if lag.trigger_ms > 0:
        times = "once" if node.watermarks.eviction.batch == "this" else "twice"
        why.append(f"the trigger {format_ms(lag.trigger_ms)} {times} ({lag.trigger_source})")
    else:
        why.append("batches back to back")
    behind = (
        f"the watermark runs {format_ms(round(lag.lag_ms))} behind the newest row of its input "
        f"({', '.join(why)})"
    )
    return f"{_when_text(node, lag)}: {behind}"


def results_summary(plan: Plan, node: AggregateNode) -> str:
    """When an aggregate's groups come out or leave state, without the why of
    ``_results_text`` (the diagram's aggregate node)."""
    from .capacity import aggregate_lag

    lag = aggregate_lag(plan, node)
    return str(lag.reason) if lag.lag_ms is None else _when_text(node, lag)


def _when_text(node: AggregateNode, lag: AggregateLag) -> str:
    assert lag.lag_ms is not None
    span = format_ms(round(lag.lag_ms))
    if lag.trigger_ms > 0:
        span += f" to {format_ms(round(lag.lag_ms + lag.trigger_ms))}"
    end = "a window's groups" if lag.windowed else "an event time's groups"
    after = "its end" if lag.windowed else "that time"
    if node.mode == "append":
        return f"{end} come out {span} after {after}"
    return f"updated groups come out every batch; {end} leave state {span} after {after}"


def _input_watermark_text(plan: Plan, relation: str, mark: InputWatermark) -> str:
    """A watermark defined where an operator reads ``relation``, in words."""
    return (
        f"{mark.column} delay {format_ms(mark.delay_ms)} on {relation}'s output: a watermark "
        f"node of its own, one more input of the {plan.settings.multiple_watermark_policy} "
        f"global watermark; `{mark.column}` is the one event-time column from there on"
    )


@_node_text.register
def _join_text(node: JoinNode, plan: Plan) -> list[str]:
    keys = ", ".join(f"{_sql(a)} = {_sql(b)}" for a, b in node.keys) or "(none)"
    kind = node.join_type.replace("_", " ").upper()
    lines = [
        f"join {node.name} = {node.left.relation} AS {node.left.alias} {kind} JOIN "
        f"{node.right.relation} AS {node.right.alias}"
    ]
    if node.join_type != node.executed_as:  # LEFT ANTI, or a WHERE's EliminateOuterJoin
        dropped = " + drop matched rows" if node.kind.drops_matched else ""
        lines.append(f"  executed as      {node.executed_as.replace('_', ' ').upper()}{dropped}")
    lines.append(f"  keys             {keys}")
    for side in (node.left, node.right):
        if side.input_watermark is not None:
            text = _input_watermark_text(plan, side.relation, side.input_watermark)
            lines.append(f"  {side.name + ' watermark':<16} {text}")
    for side in (node.left, node.right):
        pushed = _sql(side.pushed_filter)
        pre = _sql(side.pre_join_filter)
        filters = []
        if pushed and side.filters_pushed_into is not None:
            kind = "view" if isinstance(plan.node(side.filters_pushed_into), ViewNode) else "join"
            filters.append(
                f"{pushed} (pushed below the join, and on into {kind} {side.filters_pushed_into})"
            )
        elif pushed:
            filters.append(f"{pushed} (pushed below the join)")
        inferred = _conjunction(side.inferred_filters)
        read = plan.node(side.relation)
        # the join this side reads, or the one below the view it reads
        below = {side.relation, *([read.input] if isinstance(read, ViewNode) else [])}
        into = next(
            (
                j.name
                for j in plan.joins
                for s in (j.left, j.right)
                if s.inferred_above_by == node.name and j.name in below
            ),
            None,
        )
        if inferred:
            onward = f", and on into join {into}" if into is not None else ""
            filters.append(
                f"{inferred} (inferred by Spark through the condition's equalities, "
                f"pushed below the join{onward})"
            )
        late = _conjunction(side.inferred_above)
        if late:
            filters.append(
                f"{late} (inferred by join {side.inferred_above_by} for the rows it reads, "
                "pushed into this join after its own inference)"
            )
        if pre:
            filters.append(f"{pre} (in the join; failing rows come out null-padded at once)")
        lines.append(f"  {side.name + ' filter':<16} {'; '.join(filters) or '(none)'}")
    lines.append(f"  post-join filter {_sql(node.post_join_filter) or '(none)'}")
    lines.extend(where_text(node, pushed_where_from(plan, node.name)))
    lines.extend(reader_text(node))
    for side in (node.left, node.right):
        rule = side.state
        if rule.eviction == "never":
            desc = f"never: {rule.reason}"
        else:
            desc = f"{rule.eviction} watermark: {predicate_text(side)}"
        lines.append(f"  {side.name + ' state':<16} {desc}")
        lines.append(f"  {'':<16} kept {side.retention}")
        if rule.eviction != "never":
            lines.append(f"  {'':<16} new rows {SKIPPED_TEXT[side.evicted_rows_skipped]}")
    for text in node.null_rows:
        lines.append(f"  null rows        {text}")
    late = "yes" if node.may_emit_late_rows else "no"
    lines.append(f"  late output      {late}: {node.late_rows_reason}")
    lines.append(
        f"  watermarks       late rows: {watermark_text(node.watermarks.late_rows)}; "
        f"eviction: {watermark_text(node.watermarks.eviction)}"
    )
    lines.extend(f"  note             {n}" for n in node.notes)
    return lines


@_node_text.register
def _dedup_text(node: DedupNode, plan: Plan) -> list[str]:
    from .dedup_text import dedup_text

    mark = node.input_watermark
    shown = None if mark is None else _input_watermark_text(plan, node.input, mark)
    return dedup_text(node, watermark_text, shown)


@_node_text.register
def _union_text(node: UnionNode, plan: Plan) -> list[str]:
    """A union in `sjoin plan`'s text: its inputs, the event-time column downstream
    operators see, and the watermark nodes it keeps below it."""
    nodes = union_watermark_nodes(plan, node)
    marks = ", ".join(
        f"{relation}.{column} delay {format_ms(delay)}" for _, relation, column, delay in nodes
    )
    time = node.event_time_column
    pushed = [
        f"  below {relation}.{column}  {' AND '.join(below)}"
        for i, relation, column, _ in nodes
        if (below := _union_filters_below(node, i))
    ]
    return [
        f"union {node.name} = {' UNION ALL '.join(node.relations)}",
        "  event time       "
        + (
            f"{time} (the first input's)"
            if time
            else "none (the first input has no event-time column; Spark keeps its metadata)"
        ),
        "  watermark nodes  "
        + (
            f"{marks}: each its own in the global watermark "
            f"({plan.settings.multiple_watermark_policy} policy)"
            if nodes
            else "none below the union"
        ),
        *pushed,
        *_pushed_join_text(node),
    ]


def _pushed_join_text(node: UnionNode) -> list[str]:
    """The join a union stands for, pushed below the union it read
    (compiler/planning/semi_union.py)."""
    pushed = node.pushed_join
    if pushed is None:
        return []
    kind = JOIN_KINDS[pushed.how].keyword
    return [
        f"  pushed join      {node.name} = {pushed.union} {kind} JOIN, as written: Spark's "
        f"{pushed.rule} runs it as one join per input of {pushed.union} "
        f"({', '.join(node.relations)}), each with its own state, and unions their outputs",
    ]


def _check_text(check: Check) -> str:
    return f"  [{check.verdict}] {check.name}: {check.detail}"
