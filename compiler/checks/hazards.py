"""Spark's analysis rules and sjoin's warnings, as diagnostics: a pass over the Plan.

It reads only the plan (each join's and aggregate's ``analysis``, worked out once by the
planner) and never calls the state solver.  Per join: an equi-key (E020), evictable state
for outer/semi/anti joins (E021, Spark's ``checkForStreamStreamJoinWatermark``), one
event-time column per input (E025), deterministic conditions (E026), one window per
SELECT (E029) and none of a null-padded side (E030), and the warnings W001
(unbounded state), W003 (always false), W004 (range lost by Spark 4's BETWEEN rewrite),
W005 (null keys in full outer), W015 (an outer join a reader's filter runs as INNER).
Per pipeline: output modes (E023), the global-watermark correctness check (E022, W007),
features of the target version (E027), unused watermarks (W002), the max policy (W006), an
aggregate's OUTPUT MODE that no query runs it in (W016).
"""

from __future__ import annotations

from functools import singledispatch

from sqlglot import exp

from ..diagnostics.diagnostics import Diagnostic, Fix
from ..planning.plan import (
    OPERATOR_KINDS,
    AggregateNode,
    Check,
    DedupNode,
    JoinNode,
    OperatorNode,
    Plan,
    PlanNode,
    Side,
    StaticJoinNode,
    StreamNode,
    UnionNode,
)
from ..vocabulary import annotate, sjointext
from ..vocabulary.model import JOIN_KINDS
from ..vocabulary.source import Span
from ..vocabulary.sql import spark_sql
from ..vocabulary.types import format_ms
from .job_warnings import name_span


def check(plan: Plan) -> tuple[list[Diagnostic], list[Check]]:
    """Every diagnostic Spark's analysis and sjoin's warnings give ``plan``, and the
    pipeline verdicts that `sjoin plan` prints under the joins."""
    found: list[Diagnostic] = []
    for node in plan.joins:
        found.extend(_check_join(plan, node))
    for dedup in plan.dedups:
        found.extend(_check_dedup(plan, dedup))
    for union in plan.unions:
        found.extend(_check_union(plan, union))
    checks = _check_pipeline(plan, found)
    return found, checks


def check_joins(plan: Plan, nodes: list[JoinNode]) -> list[Diagnostic]:
    """The per-join diagnostics of ``nodes``: joins the planner planned again for another
    query root than the plan's (a relation run as its own query)."""
    return [d for node in nodes for d in _check_join(plan, node)]


# ---------------------------------------------------------------------- per dedup


def _check_dedup(plan: Plan, node: DedupNode) -> list[Diagnostic]:
    """A deduplication: dropDuplicatesWithinWatermark before Spark 3.5 (E027) or without a
    watermark (E021, UnsupportedOperationChecker), two event-time columns on its input
    (E025), and state that is never evicted (W001)."""
    out: list[Diagnostic] = []
    span = node.within_span or node.name_span
    if node.within_watermark and not plan.spark.at_least(3, 5):
        out.append(
            Diagnostic(
                "E027",
                f"Spark {plan.spark} has no dropDuplicatesWithinWatermark: it came in Spark "
                "3.5.0 (SPARK-42931); on older versions the DataFrame has no such method",
                span,
                "WITHIN WATERMARK",
                "target Spark 3.5 or later, or deduplicate with a watermarked event-time "
                "column among the dedup columns (dropDuplicates)",
            )
        )
        return out
    if node.within_watermark and node.late_column is None:
        out.append(
            Diagnostic(
                "E021",
                f"dedup `{node.name}` deduplicates within the watermark, but "
                f"`{node.input}` carries no watermark; Spark {plan.spark}: "
                "dropDuplicatesWithinWatermark is not supported on streaming "
                "DataFrames/DataSets without watermark",
                span,
                "no watermark",
                f"declare a watermark on the stream `{node.input}` comes from, or drop "
                "WITHIN WATERMARK",
            )
        )
        return out
    several = plan.settings.allow_multiple_stateful_operators and plan.spark.at_least(3, 5)
    if several and len(node.input_event_time) > 1:
        shown = ", ".join(f"`{c}`" for c in node.input_event_time)
        out.append(
            Diagnostic(
                "E025",
                f"the input of dedup `{node.name}` has several event-time columns ({shown}); "
                f"Spark {plan.spark} fails it: More than one event time columns are "
                "available. Please ensure there is at most one event time column per "
                "stream.",
                node.name_span,
                "several event-time columns",
                f"keep one of them in `{node.input}`'s output",
            )
        )
    if node.state.eviction == "never":
        out.append(
            Diagnostic(
                "W001",
                f"the state of dedup `{node.name}` is never evicted: {node.state.reason}; "
                "every key it has seen stays in the state",
                node.name_span,
                "unbounded state",
                "add the watermarked event-time column to the dedup columns, or write "
                "WITHIN WATERMARK (Spark 3.5+) to keep each key for the watermark's delay",
            )
        )
    return out


# ---------------------------------------------------------------------- per union


@singledispatch
def _event_time_names(node: PlanNode | None) -> list[str]:
    """The columns of ``node``'s rows that carry watermark metadata, as W014 reads them:
    a stream's, a union's, a join's and an aggregate's; none for any other relation (a
    dedup, a view, a table, a stream-static join) or a name of no relation."""
    return []


@_event_time_names.register
def _(node: StreamNode) -> list[str]:
    return [] if node.watermark_column is None else [node.watermark_column]


@_event_time_names.register
def _(node: UnionNode) -> list[str]:
    return [c.name for c in node.columns if c.event_time]


@_event_time_names.register(JoinNode)
@_event_time_names.register(AggregateNode)
def _(node: JoinNode | AggregateNode) -> list[str]:
    return [o.name for o in node.output if o.event_time]


def _check_union(plan: Plan, union: UnionNode) -> list[Diagnostic]:
    """W014: an input after the first whose event-time column is none of the union's.
    Spark's ``Union.mergeChildOutputs`` keeps the first child's metadata only (seen on
    Spark 4.3.0: ``tests/integration/spark/test_union_on_spark.py``), so an operator over the union
    sees no watermark on that column; the input's watermark node still counts in the global
    watermark."""
    kept = {c.name for c in union.columns if c.event_time}
    out = []
    for position, (_, relation) in enumerate(union.inputs[1:], 2):
        lost = [n for n in _event_time_names(plan.node(relation)) if n not in kept]
        if not lost:
            continue
        first = union.relations[0]
        out.append(
            Diagnostic(
                "W014",
                f"union `{union.name}`: the event time `{lost[0]}` of its input "
                f"`{relation}` (input {position}) is lost: Spark keeps the watermark "
                f"metadata of the first input, `{first}`, whose `{lost[0]}` has none, so an "
                f"operator over `{union.name}` sees no event time there (its state is not "
                "evicted by it, no late rows are dropped by it)",
                union.name_span,
                "event time of a later input lost",
                f"put an input with the watermark first, or give `{first}` the same watermark",
            )
        )
    return out


# ---------------------------------------------------------------------- per join


def _several_windows(node: JoinNode) -> list[Diagnostic]:
    """Spark's TimeWindowing computes a projection's windows once, and fails on two."""
    windows: dict[str, exp.Expression] = {}
    for column in node.output:
        for call in column.expr.find_all(exp.Anonymous):
            if annotate.is_call(call, "window"):
                windows.setdefault(spark_sql(call), call)
    if len(windows) < 2:
        return []
    first, second = list(windows)[:2]
    return [
        Diagnostic(
            "E029",
            f"join `{node.name}` computes two windows in its SELECT, `{first}` and `{second}`",
            annotate.span(windows[second]) or Span(0, 0),
            "a second window",
            "Spark rejects it (Multiple time/session window expressions would result in a "
            "cartesian product of rows): compute the second window in a later join or "
            "aggregate, or use one window",
        )
    ]


def _windows_of_null_padded_sides(node: JoinNode) -> list[Diagnostic]:
    """E030: the planner's ``padded_windows``, windows whose NULL drops the null-padded rows,
    so that Spark's EliminateOuterJoin runs the join as ``executed_as``."""
    out = []
    for window in node.padded_windows:
        if window.reader is not None:
            continue  # a reader's filter: W015 (_outer_join_run_narrower)
        alias = (node.left if window.side == "left" else node.right).alias
        preserved = (node.right if window.side == "left" else node.left).alias
        out.append(
            Diagnostic(
                "E030",
                f"join `{node.name}` ({node.kind.keyword}): the window of `{alias}`'s "
                f"time in its SELECT drops the rows of `{preserved}` that have no "
                f"match; Spark then runs the join as "
                f"{JOIN_KINDS[node.executed_as].keyword}",
                window.span or Span(0, 0),
                f"NULL for unmatched `{preserved}` rows",
                f"window `{preserved}`'s time instead, or write the start of "
                f"`{alias}`'s window as date_trunc (e.g. date_trunc('MINUTE', ...)), "
                "which keeps NULL; or `set allow_unemitted_outer_rows = true` to "
                "accept it on purpose",
            )
        )
    return out


def _outer_join_run_narrower(node: JoinNode) -> list[Diagnostic]:
    """W015: the readers' null-rejecting filters on a null-padded side's columns that made
    the planner plan the join as Spark's EliminateOuterJoin runs it (``executed_as``),
    reported once per reader at its window() call or its join condition."""
    out: list[Diagnostic] = []
    said: set[str] = set()
    for window in node.padded_windows:
        if window.reader is None or window.reader in said:
            continue
        said.add(window.reader)
        padded = node.left if window.side == "left" else node.right
        preserved = node.right if window.side == "left" else node.left
        runs = JOIN_KINDS[node.executed_as].keyword
        what = (
            f"`{window.reader}` groups by a window of `{padded.alias}.{window.time_column}`, "
            "and Spark's TimeWindowing keeps only rows whose window time is not NULL"
            if window.how == "window"
            else f"`{window.reader}` joins on `{padded.alias}.{window.time_column}` "
            "(an inferred isnotnull filter)"
        )
        out.append(
            Diagnostic(
                "W015",
                f"join `{node.name}` ({node.kind.keyword}): {what}; the filter reaches the join, "
                f"so Spark runs it as {runs} (EliminateOuterJoin): the unmatched "
                f"`{preserved.alias}` rows never come out",
                window.span or Span(0, 0),
                f"NULL for unmatched `{preserved.alias}` rows",
                f"use `{preserved.alias}`'s column here if the unmatched rows should count, "
                f"or write `{node.name}` as an {runs} join",
            )
        )
    return out


def _check_join(plan: Plan, node: JoinNode) -> list[Diagnostic]:
    a = node.analysis
    if not a.typed_cleanly:
        return []  # the binder reported the condition's errors; judging it would only echo them
    out: list[Diagnostic] = []
    for sql, span in a.nondeterministic:
        out.append(
            Diagnostic(
                "E026",
                f"join `{node.name}` has a non-deterministic condition `{sql}`",
                span,
                "non-deterministic",
                "Spark rejects it; compute the random value in the input instead",
            )
        )
    out.extend(_several_windows(node))
    if not plan.settings.allow_unemitted_outer_rows:
        out.extend(_windows_of_null_padded_sides(node))
    out.extend(_outer_join_run_narrower(node))
    left, right = node.left, node.right
    if not node.keys:
        out.append(
            Diagnostic(
                "E020",
                f"join `{node.name}` has no equality between `{left.alias}` and `{right.alias}`",
                a.condition_span,
                "no equi-join key here",
                f"add an equality between the sides, e.g. `{left.alias}.id = {right.alias}.id`",
            )
        )
    blocked = _check_evictable(node, out)
    multiple = plan.spark.at_least(3, 5) and plan.settings.allow_multiple_stateful_operators
    for i, side in enumerate((left, right)):
        times = a.event_time_columns[i]
        beside = a.time_beside_window[i]
        if multiple and beside is not None:
            time, window = beside
            out.append(
                Diagnostic(
                    "E025",
                    f"input `{side.alias}` carries 2 event-time columns (`{time}` and its "
                    f"window `{window}`); Spark fails at the first batch with "
                    "MULTIPLE_EVENT_TIME_COLUMNS",
                    a.input_spans[i],
                    "several watermarked columns",
                    f"recompute the time beside its window (timestamp_micros(unix_micros("
                    f"{time})) AS {time}), or read `{time}` nowhere after the join (Spark "
                    "then prunes it below the join)",
                )
            )
        elif multiple and len(times) > 1:
            names = ", ".join(f"`{c}`" for c in times)
            out.append(
                Diagnostic(
                    "E025",
                    f"input `{side.alias}` of join `{node.name}` carries {len(times)} "
                    f"event-time columns ({names}); Spark {plan.spark} fails at the first "
                    "batch with MULTIPLE_EVENT_TIME_COLUMNS",
                    a.input_spans[i],
                    "several watermarked columns",
                    f"keep one event-time column in the SELECT of `{side.relation}`",
                )
            )
    accept_lost_rows = plan.settings.allow_unemitted_outer_rows
    for side in (left, right):
        if side.state.eviction != "never" or side.name in blocked:
            continue
        if side.preserved and not accept_lost_rows:
            out.append(
                Diagnostic(
                    "E028",
                    f"join `{node.name}` ({node.kind.keyword}): unmatched `{side.alias}` rows "
                    f"are never emitted: the state of `{side.alias}` is never evicted "
                    f"({side.state.reason}), and Spark emits an unmatched row only when it "
                    "evicts it; Spark accepts this join and silently loses those rows",
                    a.name_span,
                    f"unmatched `{side.alias}` rows never come out",
                    _fix_hint(node)
                    + "; or `set allow_unemitted_outer_rows = true` to accept it on purpose",
                )
            )
        else:
            out.append(
                Diagnostic(
                    "W001",
                    f"join `{node.name}` ({node.kind.keyword}): the state of `{side.alias}` is "
                    f"never evicted and grows without bound: {side.state.reason}",
                    a.name_span,
                    f"`{side.alias}` state is unbounded",
                    _fix_hint(node),
                    fix=_range_fix(node),
                )
            )
    if a.always_false is not None:
        out.append(
            Diagnostic(
                "W003",
                f"join `{node.name}`: the condition is always false",
                a.always_false,
                "always false",
            )
        )
    elif a.empty_range is not None:
        r = a.empty_range
        out.append(
            Diagnostic(
                "W003",
                f"join `{node.name}`: the range on {r.left} - {r.right} is empty "
                f"(lower bound {format_ms(r.low_ms)} above upper bound "
                f"{format_ms(r.high_ms)}); no rows can match",
                r.span,
                "always false",
                "swap the bounds of the range",
            )
        )
    for side, culprit in zip((left, right), a.between_loses_state, strict=True):
        if culprit is not None:
            out.append(
                Diagnostic(
                    "W004",
                    f"join `{node.name}`: Spark {plan.spark} rewrites this BETWEEN so "
                    f"that `{side.alias}` loses its state watermark (it is never evicted)",
                    culprit,
                    "BETWEEN on an expression",
                    "write the range as two comparisons with >= and <=",
                )
            )
    # the join Spark runs: a FULL OUTER join a filter narrows to LEFT/RIGHT OUTER or INNER
    # infers isnotnull of the keys of a side it no longer preserves (EliminateOuterJoin)
    if node.executed_as == "full_outer" and node.keys:
        out.append(
            Diagnostic(
                "W005",
                f"join `{node.name}`: NULL keys match each other in a stream-stream FULL "
                "OUTER join",
                a.how_span,
                "null keys match",
                "filter NULL keys out of the inputs if they must not match",
            )
        )
    return out


def _fix_hint(node: JoinNode) -> str:
    lt, rt = node.analysis.declared_event_time
    left, right = node.left, node.right
    if lt and rt:
        return (
            f"add a range condition, e.g. `{right.alias}.{rt[0]} BETWEEN "
            f"{left.alias}.{lt[0]} AND {left.alias}.{lt[0]} + INTERVAL "
            "1 HOUR`, or join on a window of the event times"
        )
    missing = [s.relation for s, times in ((left, lt), (right, rt)) if not times]
    return "declare a watermark on " + " and ".join(f"`{name}`" for name in missing)


def _range_fix(node: JoinNode) -> Fix | None:
    """The range condition ``_fix_hint`` suggests, as an edit at the end of the ON condition
    (an editor's quick fix; the hour is a start the user tunes): none without both event
    times, a place for the condition, or where `AND` would bind only its last OR term."""
    lt, rt = node.analysis.declared_event_time
    span = annotate.span(node.condition)
    if not (lt and rt) or span is None or isinstance(node.condition, exp.Or):
        return None
    try:
        left, right = sjointext.name(node.left.alias), sjointext.name(node.right.alias)
        lcol, rcol = sjointext.name(lt[0]), sjointext.name(rt[0])
    except sjointext.Unwritable:
        return None
    bound = f"{right}.{rcol} BETWEEN {left}.{lcol} AND {left}.{lcol} + INTERVAL 1 HOUR"
    return Fix(Span(span.end, span.end), f" AND {bound}")


def _check_evictable(node: JoinNode, out: list[Diagnostic]) -> set[str]:
    """Spark's rule for outer and semi joins (UnsupportedOperationChecker), applied to the
    analyzed condition.  Returns the sides already reported (no W001 on top)."""
    a = node.analysis
    executed = JOIN_KINDS[node.executed_as]
    needs = executed.must_evict
    if not needs or a.keys_carry_event_time:
        return set()
    ok = {"left": a.analysis_bounds[0], "right": a.analysis_bounds[1]}
    if node.executed_as == "full_outer" and (ok["left"] or ok["right"]):
        return set()
    if all(ok[s] for s in needs):
        return set()
    side = next(s for s in needs if not ok[s])
    evicted, other = (node.left, node.right) if side == "left" else (node.right, node.left)
    other_times = a.declared_event_time[1 if side == "left" else 0]
    anti = " (LEFT ANTI runs as a left outer join)" if node.kind.drops_matched else ""
    why = (
        f"`{other.alias}` has no watermark"
        if not other_times
        else f"no range condition bounds `{evicted.alias}`'s event time from below by "
        f"`{other.alias}`'s watermark"
    )
    out.append(
        Diagnostic(
            "E021",
            f"join `{node.name}` ({node.kind.keyword}){anti}: the state of "
            f"`{evicted.alias}` can never be evicted, so its unmatched rows would never be "
            f"emitted: {why}; Spark rejects it: Stream-stream {executed.spark_name} join "
            "between two streaming DataFrame/Datasets is not supported without a watermark "
            "in the join keys, or a watermark on the nullable side and an appropriate range "
            "condition",
            a.how_span,
            "state cannot be evicted",
            _fix_hint(node),
        )
    )
    return set(needs)


# ---------------------------------------------------------------------- pipelines


def _check_pipeline(plan: Plan, out: list[Diagnostic]) -> list[Check]:
    checks: list[Check] = []
    reported: set[tuple[str, ...]] = set()
    late = _LateRows(plan)
    for root_name in _checked_roots(plan):
        root = plan.node(root_name)
        if root is None:
            continue
        mode = plan.query_modes.get(root_name, "append")
        # the mode is its operator's, under the views the query may end in: Spark's rules
        # judge the query from there (the views keep no state)
        below = plan.mode_operator(root_name) if mode != "append" else None
        if below is not None and below is not root:
            root, root_name = below, below.name
        chain = [root, *plan.upstream(root_name)]
        checks.extend(_check_modes(plan, root_name, mode, chain, out, reported))
        checks.extend(_check_global_watermark(plan, late, mode, chain, out, reported))
    checks.extend(_check_watermarks(plan, out))
    checks.extend(_check_redefined_watermarks(plan, out))
    out.extend(_modes_of_no_query(plan, _checked_roots(plan)))
    if not checks:
        checks.append(Check("pipeline", "ok", "no stateful chains to check"))
    return sorted(set(checks), key=lambda c: (c.name, c.verdict, c.detail))


def _modes_of_no_query(plan: Plan, roots: list[str]) -> list[Diagnostic]:
    """W016: an aggregate whose OUTPUT MODE is not append, and no query of the pipeline's,
    read in a query of another mode: Spark runs a query in one output mode, its sink's, so
    there the aggregate runs in that query's mode and the clause holds nowhere (only
    `--relation NAME`, the aggregate run as its own query, runs it so)."""
    out: list[Diagnostic] = []
    for agg in plan.aggregates:
        written = agg.analysis.written_mode
        if written == "append" or agg.name in roots:
            continue
        queries = [
            r
            for r in roots
            if agg.name in {n.name for n in plan.upstream(r)}
            and plan.query_modes.get(r, "append") != written
        ]
        if not queries:
            continue
        modes = ", ".join(f"`{r}` ({plan.query_modes.get(r, 'append').title()})" for r in queries)
        out.append(
            Diagnostic(
                "W016",
                f"aggregate `{agg.name}` has OUTPUT MODE {written}, but it runs only in the "
                f"quer{'y' if len(queries) == 1 else 'ies'} of {modes}: a query has one "
                "output mode, its sink's, so "
                f"`{agg.name}` runs in that one there; {written.title()} holds only when it "
                "runs as its own query",
                agg.analysis.mode_span or agg.analysis.name_span,
                "not this query's mode",
                f"drop `OUTPUT MODE {written}`, or give `{agg.name}` a sink of its own",
            )
        )
    return out


def _checked_roots(plan: Plan) -> list[str]:
    """The queries Spark would analyse: one per sink; without sinks, one per operator that
    nothing consumes (the plan's query roots)."""
    if plan.sinks:
        return [s.relation for s in plan.sinks]
    return list(plan.query_roots)


def _check_modes(
    plan: Plan,
    root: str,
    mode: str,
    chain: list[PlanNode],
    out: list[Diagnostic],
    reported: set[tuple[str, ...]],
) -> list[Check]:
    """Spark's output-mode rules (E023) for each relation of the query rooted at ``root``,
    run in ``mode``."""
    checks = _complete_needs_one(plan, root, mode, chain, out, reported)
    return checks + [
        c for rel in chain for c in _mode_checks(rel, plan, root, mode, chain, out, reported)
    ]


def _complete_needs_one(
    plan: Plan,
    root: str,
    mode: str,
    chain: list[PlanNode],
    out: list[Diagnostic],
    reported: set[tuple[str, ...]],
) -> list[Check]:
    """UnsupportedOperationChecker's first word on a query in Complete mode without a
    streaming aggregate (a query ending in a join): Complete re-emits the whole result,
    which only an aggregate keeps (Spark 4.3: the query does not start)."""
    top = chain[0]
    if mode != "complete" or any(isinstance(r, AggregateNode) for r in chain):
        return []
    if not isinstance(top, JoinNode) or ("complete", root) in reported:
        return []
    reported.add(("complete", root))
    spark_text = (
        "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: "
        "complete. This output mode is not supported for no streaming aggregations on "
        "streaming DataFrames/DataSets"
        if plan.spark.at_least(4, 0)
        else "Complete output mode not supported when there are no streaming aggregations "
        "on streaming DataFrames/Datasets"
    )
    out.append(
        Diagnostic(
            "E023",
            f"query `{root}` runs in Complete output mode but has no aggregate; "
            f"Spark {plan.spark}: {spark_text}",
            top.analysis.mode_span or top.analysis.name_span,
            "complete mode",
            "drop `OUTPUT MODE complete`: a join's rows are emitted once, in Append mode",
        )
    )
    return [Check(f"output mode of {root}", "error", "complete without an aggregate", (root,))]


@singledispatch
def _mode_checks(
    rel: PlanNode,
    plan: Plan,
    root: str,
    mode: str,
    chain: list[PlanNode],
    out: list[Diagnostic],
    reported: set[tuple[str, ...]],
) -> list[Check]:
    """The output-mode verdicts of one relation of a query: Spark's rules are on its joins
    and aggregates; any other relation has none."""
    return []


@_mode_checks.register
def _(
    rel: JoinNode,
    plan: Plan,
    root: str,
    mode: str,
    chain: list[PlanNode],
    out: list[Diagnostic],
    reported: set[tuple[str, ...]],
) -> list[Check]:
    if mode == "append":
        return []
    if mode == "complete" and not any(isinstance(r, AggregateNode) for r in chain):
        return []  # Spark says first that Complete needs an aggregate (_complete_needs_one)
    update_joins = plan.spark.at_least(4, 2)
    updatable = not rel.kind.outer  # 4.2: joins that emit no null-padded rows
    allowed = update_joins and mode == "update" and updatable
    name = JOIN_KINDS[rel.kind.executed_as].spark_name  # LEFT ANTI: the left outer join Spark runs
    if allowed:
        return [
            Check(
                f"output mode of {rel.name}",
                "ok",
                f"{name} join in Update mode (Spark 4.2+): the rows of Append",
                (rel.name,),
            )
        ]
    if ("mode", rel.name) in reported:
        return []
    reported.add(("mode", rel.name))
    if update_joins:  # SPARK-56384: the join type names itself
        modes = "Append and Update output modes" if updatable else "Append output mode"
        spark_text = (
            f"{name} join between two streaming DataFrames/Datasets is not supported in "
            f"{mode.title()} output mode, only in {modes}"
        )
    else:
        spark_text = (
            "Join between two streaming DataFrames/Datasets is not supported in "
            f"{mode.title()} output mode, only in Append output mode"
        )
    top = chain[0]
    if isinstance(top, JoinNode):
        span = top.analysis.mode_span or top.analysis.name_span
        fix = (
            f"drop `OUTPUT MODE {mode}`: a join's own rows are the same in Append mode"
            if top is rel
            else f"drop `OUTPUT MODE {mode}` of `{root}`"
        )
    else:
        agg = next(r for r in chain if isinstance(r, AggregateNode) and r.name == root)
        span = agg.analysis.mode_span or agg.analysis.name_span
        fix = "use OUTPUT MODE append with a watermarked window in GROUP BY"
    where = "" if rel.name == root else f" of `{root}`"
    out.append(
        Diagnostic(
            "E023",
            f"join `{rel.name}` runs in the {mode.title()} output mode{where}; "
            f"Spark {plan.spark}: {spark_text}",
            span,
            f"{mode} mode",
            fix,
        )
    )
    return [Check(f"output mode of {rel.name}", "error", f"{mode} not allowed", (rel.name,))]


@_mode_checks.register
def _(
    rel: AggregateNode,
    plan: Plan,
    root: str,
    mode: str,
    chain: list[PlanNode],
    out: list[Diagnostic],
    reported: set[tuple[str, ...]],
) -> list[Check]:
    if rel.mode != "append" or rel.watermark_key_index is not None:
        return []
    if ("agg", rel.name) in reported:
        return []
    reported.add(("agg", rel.name))
    spark_text = (
        "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: "
        "append. This output mode is not supported for streaming aggregations without "
        "watermark on streaming DataFrames/DataSets"
        if plan.spark.at_least(4, 0)
        else "Append output mode not supported when there are streaming aggregations "
        "on streaming DataFrames/DataSets without watermark"
    )
    out.append(
        Diagnostic(
            "E023",
            f"aggregate `{rel.name}` runs in Append mode without a watermarked column "
            f"among its grouping keys; Spark {plan.spark}: {spark_text}",
            rel.analysis.mode_span or rel.analysis.name_span,
            "append needs a watermark",
            _window_hint(plan, rel),
        )
    )
    return [Check(f"output mode of {rel.name}", "error", "append without watermark", (rel.name,))]


def _window_hint(plan: Plan, agg: AggregateNode) -> str:
    times = list(agg.analysis.input_event_time)
    source = plan.node(agg.input)
    if isinstance(source, (JoinNode, AggregateNode)):
        # the planner's word on which of the input's columns keep watermark metadata
        kept = {o.name for o in source.output if o.event_time}
        lost = [name for name in times if name not in kept]
        times = [name for name in times if name in kept]
        if lost:
            why = (
                f"`{agg.alias}.{lost[0]}` carries no watermark: join `{agg.input}` recomputes "
                "it beside the window it projects for its key (a side keeps one event-time "
                "column)"
            )
            windows = {o.name for o in source.output if o.type.name == "window"}
            if not times:
                return (
                    f"{why}; output that window from `{agg.input}` and group by it, or use "
                    "OUTPUT MODE update or complete"
                )
            if times[0] in windows:
                return f"{why}; group by `{agg.alias}.{times[0]}`, which keeps it"
    if not times:
        columns = [] if source is None else plan.columns_of(agg.input)
        times_kept = [name for name, kind in columns if kind == "timestamp"]
        if isinstance(source, StreamNode) and times_kept:
            return (
                f"stream `{agg.input}` declares no watermark: add `watermark {times_kept[0]} "
                "delay ...` to it, or use OUTPUT MODE update or complete"
            )
        if times_kept:  # it keeps a time, but no watermark reached it
            shown = ", ".join(f"`{name}`" for name in times_kept[:3])
            return (
                f"`{agg.input}` keeps {shown}, but none carries a watermark (only a "
                "watermarked stream's column, selected as it is, does): declare a watermark "
                "on the stream it comes from, or use OUTPUT MODE update or complete"
            )
        return (
            f"`{agg.input}` carries no event-time column: keep one in its SELECT, "
            "or use OUTPUT MODE update or complete"
        )
    return (
        "group by a window of an event-time column, e.g. "
        f"`window({agg.alias}.{times[0]}, INTERVAL 10 MINUTES)`"
    )


@singledispatch
def _emits_late(rel: PlanNode, plan: Plan, mode: str) -> str | None:
    """Why ``rel`` counts as 'may emit late rows' for the target version's check, or None:
    only a join or an aggregate may; any other relation passes its rows on as they come."""
    return None


@_emits_late.register
def _(rel: AggregateNode, plan: Plan, mode: str) -> str | None:
    if not plan.spark.at_least(3, 4):  # judged by the query's output mode
        return "an aggregation in Append mode" if mode == "append" else None
    return None if mode == "append" else f"an aggregation in {mode.title()} mode"


@_emits_late.register
def _(rel: JoinNode, plan: Plan, mode: str) -> str | None:
    v = plan.spark
    if not v.at_least(3, 4):
        return None if rel.join_type == "inner" else f"a {rel.kind.keyword} join"
    if not v.at_least(3, 5) and rel.analysis.time_interval:
        return "a time-interval join (a range condition on event time)"
    return None


@singledispatch
def _late_rows(node: PlanNode) -> str:
    """The rows older than the watermark that an operator which emits late rows
    (``_emits_late``) may emit."""
    raise TypeError(f"a plan node of kind {type(node).__name__} emits no late rows")


@_late_rows.register
def _(node: JoinNode) -> str:
    return "null-padded outer rows and matches older than the watermark"


@_late_rows.register
def _(node: AggregateNode) -> str:
    return "aggregated rows updated after the watermark"


class _LateRows:
    """Which operators may emit rows older than the watermark (``_emits_late``), and for each
    relation the nearest such operator at or below it, per output mode; each computed once,
    so the global-watermark check costs the size of the pipeline, not its square."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self._why: dict[tuple[str, str], str | None] = {}
        self._nearest: dict[tuple[str, str], PlanNode | None] = {}

    def why(self, rel: PlanNode, mode: str) -> str | None:
        key = (rel.name, mode)
        if key not in self._why:
            self._why[key] = _emits_late(rel, self.plan, mode)
        return self._why[key]

    def nearest(self, rel: PlanNode, mode: str) -> PlanNode | None:
        """``rel`` if it emits late rows, else the nearest operator below it that does (the
        first in input order), else None; a post-order walk without recursion."""
        memo = self._nearest
        stack: list[tuple[PlanNode, bool]] = [(rel, False)]
        entered: set[str] = set()
        while stack:
            node, inputs_done = stack.pop()
            if (node.name, mode) in memo:
                continue
            below = [r for _, n in node.inputs if (r := self.plan.node(n)) is not None]
            if not inputs_done:
                if node.name in entered:  # a cycle (the binder rejects them): cut it
                    memo[(node.name, mode)] = None
                    continue
                entered.add(node.name)
                stack.append((node, True))
                stack += [(r, False) for r in reversed(below)]
                continue
            found: PlanNode | None = None
            if self.why(node, mode) is not None:
                found = node
            else:
                found = next((f for r in below if (f := memo.get((r.name, mode)))), None)
            memo[(node.name, mode)] = found
        return memo[(rel.name, mode)]


def _check_global_watermark(
    plan: Plan,
    late: _LateRows,
    mode: str,
    chain: list[PlanNode],
    out: list[Diagnostic],
    reported: set[tuple[str, ...]],
) -> list[Check]:
    """Spark's checkStreamingQueryGlobalWatermarkLimit: a stateful operator after one that
    may emit late rows.  One verdict per stateful operator and stateful input: ok, or the
    nearest operator below that input which emits late rows (so a chain of n operators gets
    n verdicts, not n^2)."""
    checks = []
    enabled = plan.settings.correctness_check
    stateful: list[OperatorNode] = [r for r in chain if isinstance(r, OPERATOR_KINDS)]
    aggregates = [r for r in stateful if isinstance(r, AggregateNode)]
    if (
        not plan.spark.at_least(3, 4)
        and len(aggregates) > 1
        and ("multi", chain[0].name) not in reported
    ):
        reported.add(("multi", chain[0].name))
        out.append(
            Diagnostic(
                "E027",
                f"Spark {plan.spark}: Multiple streaming aggregations are not "
                "supported with streaming DataFrames/Datasets",
                name_span(aggregates[0]),
                "second aggregation",
                "target Spark 3.4 or later",
            )
        )
    for upper in stateful:
        if ("gw-upper", upper.name, mode) in reported:
            continue  # another query over the same operator, in the same mode
        reported.add(("gw-upper", upper.name, mode))
        for name in dict.fromkeys(r for _, r in upper.inputs):
            below = plan.node(name)
            if below is None:
                continue
            lower = late.nearest(below, mode)
            if lower is None:
                if isinstance(below, OPERATOR_KINDS):
                    checks.append(
                        Check(
                            f"global watermark: {below.name} -> {upper.name}",
                            "ok",
                            f"Spark {plan.spark} allows this chain",
                            (below.name, upper.name),
                        )
                    )
                continue
            why = late.why(lower, mode)
            label = f"{lower.name} -> {upper.name}"
            pair = (lower.name, upper.name)
            if ("gw", *pair) in reported:  # the names, not the label: `a -> b` is a name too
                continue
            reported.add(("gw", *pair))
            rows = _late_rows(lower)
            message = (
                f"`{upper.name}` follows `{lower.name}`, {why}, which may emit rows "
                f"older than the watermark ({rows}); `{upper.name}` could drop them as "
                f"late. Spark {plan.spark}: Detected pattern of possible 'correctness' "
                "issue due to global watermark"
            )
            fix = (
                "target Spark 3.5 or later, where each operator gets its own watermark"
                if not plan.spark.at_least(3, 5)
                else "run the aggregation in Append mode"
            )
            if enabled:
                out.append(
                    Diagnostic(
                        "E022",
                        message,
                        name_span(upper),
                        f"stateful operator after `{lower.name}`",
                        fix,
                    )
                )
                checks.append(Check(f"global watermark: {label}", "error", str(why), pair))
            else:
                out.append(
                    Diagnostic(
                        "W007",
                        message + " (check disabled by correctness_check = false)",
                        name_span(upper),
                        "rows may be dropped",
                        fix,
                    )
                )
                checks.append(Check(f"global watermark: {label}", "warning", str(why), pair))
    return checks


def _check_watermarks(plan: Plan, out: list[Diagnostic]) -> list[Check]:
    checks = []
    for stream in plan.streams:
        if stream.watermark_column is None or stream.watermark_span is None:
            continue
        consumers = plan.readers(stream.name)
        if not consumers:
            out.append(
                Diagnostic(
                    "W002",
                    f"the watermark of `{stream.name}` is unused: no join or aggregate reads "
                    "the stream",
                    stream.watermark_span,
                    "unused watermark",
                    "join or aggregate the stream, or remove it",
                )
            )
            continue
        if all(isinstance(plan.node(c), StaticJoinNode) and not plan.readers(c) for c in consumers):
            out.append(
                Diagnostic(
                    "W002",
                    f"the watermark of `{stream.name}` is unused: only stream-static joins "
                    "read the stream, and they use no watermark (no late rows, no state)",
                    stream.watermark_span,
                    "unused watermark",
                    "aggregate or join the stream-static join's output, or remove it",
                )
            )
            continue
        if not any(_drives_cleanup(plan.node(c), plan, stream) for c in consumers):
            out.append(
                Diagnostic(
                    "W002",
                    f"the watermark of `{stream.name}` drives no state cleanup: it only drops "
                    "late rows",
                    stream.watermark_span,
                    "no state cleanup uses it",
                    "add a range condition on this column, or join on its window",
                )
            )
    policy_span = plan.setting_spans.get("multiple_watermark_policy")
    watermarked = [s for s in plan.streams if s.watermark_column is not None]
    if (
        policy_span is not None
        and plan.settings.multiple_watermark_policy == "max"
        and len(watermarked) > 1
    ):
        out.append(
            Diagnostic(
                "W006",
                "the global watermark follows the fastest stream: rows of the "
                "slower streams arrive late and are dropped",
                policy_span,
                "max policy",
                "keep the default `min` unless dropping slow rows is intended",
            )
        )
        checks.append(Check("watermark policy", "warning", "max: slower streams lose rows"))
    return checks


def _has_watermark_node(plan: Plan, name: str) -> bool:
    """Whether a watermark node lies in ``name``'s plan (a watermarked stream, or a
    watermark defined on an input): its output then carries a watermark."""
    for node in [plan.node(name), *plan.upstream(name)]:
        if isinstance(node, StreamNode) and node.watermark_column is not None:
            return True
        if node is not None and node.input_watermarks:
            return True
    return False


def _check_redefined_watermarks(plan: Plan, out: list[Diagnostic]) -> list[Check]:
    """A watermark defined on a join's or aggregate's output (E034).  From 3.5 with
    ``allowMultiple`` (PropagateWatermarkSimulator, WatermarkPropagator.scala) Spark fails
    a watermark node whose input carries a watermark, the first time it propagates the
    watermarks (the first batch whose global watermark is above 0); with one watermark
    for all (``UseSingleWatermarkPropagator``, and before 3.5) it runs the node."""
    checks = []
    propagates = plan.spark.at_least(3, 5) and plan.settings.allow_multiple_stateful_operators
    for node in plan.nodes:
        for port, mark in node.input_watermarks:
            relation = dict(node.inputs)[port]
            label = f"watermark on {relation} in {node.name}"
            pair = (relation, node.name)
            if propagates and _has_watermark_node(plan, relation):
                out.append(
                    Diagnostic(
                        "E034",
                        f"`{node.name}` defines a watermark on `{relation}`, whose rows "
                        f"already carry a watermark; Spark {plan.spark} fails the query at "
                        "its first batch with a watermark above 0: `Redefining watermark is "
                        "disallowed. You can set the config "
                        "'spark.sql.streaming.statefulOperator.allowMultiple' to 'false' to "
                        "restore the previous behavior. Note that multiple stateful "
                        "operators will be disallowed.`",
                        mark.span,
                        "watermark redefined",
                        "`set allow_multiple_stateful_operators = false` runs it, with one "
                        "global watermark for every operator (the minimum of all watermark "
                        "nodes); or drop this watermark: the join's own watermark reaches "
                        f"`{node.name}`",
                    )
                )
                checks.append(Check(label, "error", "redefining watermark is disallowed", pair))
            else:
                checks.append(
                    Check(label, "ok", "one more watermark node in the global watermark", pair)
                )
    return checks


@singledispatch
def _drives_cleanup(consumer: PlanNode | None, plan: Plan, stream: StreamNode) -> bool:
    """Whether the stream's watermark evicts some state of ``consumer``, a relation that
    reads it: a join's, as its sides' state rules say; taken as yes for any other reader
    (an aggregate's, a dedup's; a view or a union passes it on)."""
    return True


@_drives_cleanup.register
def _(consumer: JoinNode, plan: Plan, stream: StreamNode) -> bool:
    pairs: tuple[tuple[Side, Side], ...] = (
        (consumer.left, consumer.right),
        (consumer.right, consumer.left),
    )
    return any(
        side.relation == stream.name
        and (side.state.eviction != "never" or other.state.eviction == "value")
        for side, other in pairs
    )


@_drives_cleanup.register
def _(consumer: StaticJoinNode, plan: Plan, stream: StreamNode) -> bool:
    # a stream-static join passes the watermark on: the operators above it use it
    return bool(plan.readers(consumer.name))
