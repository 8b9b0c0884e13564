"""Spark's analysis rules and sjoin's warnings, as diagnostics.

Per join: an equi-key (E020), evictable state for outer/semi/anti joins (E021, Spark's
``checkForStreamStreamJoinWatermark``), one event-time column per input (E025),
deterministic conditions (E026), and the warnings W001 (unbounded state), W003 (always
false), W004 (range lost by Spark 4's BETWEEN rewrite), W005 (null keys in full outer).
Per pipeline: output modes (E023), the global-watermark correctness check (E022, W007),
features of the target version (E027), unused watermarks (W002), the max policy (W006).
"""

from __future__ import annotations

from sqlglot import exp

from . import types as t
from .ast import span_of
from .bound import Aggregate, BoundSpec, Join, Relation, Stream
from .diagnostics import Diagnostics
from .model import JOIN_KINDS, Column
from .plan import Check, JoinNode, Plan
from .source import Span
from .split import ConditionSplit, conjuncts, equi_key, is_deterministic, strip_parens
from .sql import spark_sql as _sql
from .state import Unsolvable, collect_terms, legacy_terms, value_bounds


def _span(node: exp.Expression) -> Span:
    return span_of(node)


# ---------------------------------------------------------------------- per join


def check_join(
    spec: BoundSpec,
    j: Join,
    node: JoinNode,
    split: ConditionSplit,
    parts: list[exp.Expression],
    event_time: dict[str, list[Column]],
    diags: Diagnostics,
) -> None:
    """``event_time``: per side, the event-time columns that reach the join (after Spark's
    column pruning), the ones Spark's MULTIPLE_EVENT_TIME_COLUMNS check counts."""
    kind = JOIN_KINDS[j.how].keyword
    if not typed_cleanly(j.condition):
        return  # the binder reported the condition's errors; judging it would only echo them
    for part in parts:
        if not is_deterministic(part):
            diags.add(
                "E026",
                f"join `{j.name}` has a non-deterministic condition `{_sql(part)}`",
                _span(part),
                "non-deterministic",
                "Spark rejects it; compute the random value in the input instead",
            )
    if not split.keys:
        diags.add(
            "E020",
            f"join `{j.name}` has no equality between `{j.left.alias}` and `{j.right.alias}`",
            _span(j.condition),
            "no equi-join key here",
            f"add an equality between the sides, e.g. `{j.left.alias}.id = {j.right.alias}.id`",
        )
    blocked = _check_evictable(spec, j, split, parts, diags)
    multiple = spec.spark.at_least(3, 5) and spec.setting("allow_multiple_stateful_operators", True)
    for side, inp in (("left", j.left), ("right", j.right)):
        times = event_time[side]
        if multiple and len(times) > 1:
            names = ", ".join(f"`{c.name}`" for c in times)
            diags.add(
                "E025",
                f"input `{inp.alias}` of join `{j.name}` carries {len(times)} "
                f"event-time columns ({names}); Spark {spec.spark} fails at the first "
                "batch with MULTIPLE_EVENT_TIME_COLUMNS",
                inp.span,
                "several watermarked columns",
                f"keep one event-time column in the SELECT of `{inp.relation}`",
            )
    for planned in (node.left, node.right):
        if planned.state.eviction == "never" and planned.name not in blocked:
            diags.add(
                "W001",
                f"join `{j.name}` ({kind}): the state of `{planned.alias}` is never "
                f"evicted and grows without bound: {planned.state.reason}",
                j.name_span,
                f"`{planned.alias}` state is unbounded",
                _fix_hint(j),
            )
    _check_contradiction(j, parts, diags)
    _check_between_rewrite(spec, j, split, diags)
    if j.how == "full_outer" and split.keys:
        diags.add(
            "W005",
            f"join `{j.name}`: NULL keys match each other in a stream-stream FULL OUTER join",
            j.how_span,
            "null keys match",
            "filter NULL keys out of the inputs if they must not match",
        )


def typed_cleanly(node: exp.Expression) -> bool:
    """No part of ``node`` failed to bind (an error gave it the UNKNOWN type)."""
    return all(sub.meta.get("type") != t.UNKNOWN for sub in node.walk())


def _fix_hint(j: Join) -> str:
    lt, rt = j.left.event_time_columns, j.right.event_time_columns
    if lt and rt:
        return (
            f"add a range condition, e.g. `{j.right.alias}.{rt[0].name} BETWEEN "
            f"{j.left.alias}.{lt[0].name} AND {j.left.alias}.{lt[0].name} + INTERVAL "
            "1 HOUR`, or join on a window of the event times"
        )
    missing = [inp.relation for inp, times in ((j.left, lt), (j.right, rt)) if not times]
    return "declare a watermark on " + " and ".join(f"`{name}`" for name in missing)


def _check_evictable(
    spec: BoundSpec, j: Join, split: ConditionSplit, parts: list[exp.Expression], diags: Diagnostics
) -> set[str]:
    """Spark's rule for outer and semi joins (UnsupportedOperationChecker), applied to the
    analyzed condition.  Returns the sides already reported (no W001 on top)."""
    how = JOIN_KINDS[j.how].executed_as
    if how == "inner":
        return set()
    in_keys = any(
        (isinstance(k, exp.Column) and k.meta.get("event_time"))
        or (
            isinstance(k, exp.Anonymous)
            and k.meta.get("function") == "window"
            and isinstance(k.expressions[0], exp.Column)
            and k.expressions[0].meta.get("event_time")
        )
        for pair in split.keys
        for k in pair
    )
    if in_keys:
        return set()
    conds = list(parts)
    legacy = legacy_terms(spec.spark)
    left_ok = bool(
        value_bounds(conds, "left", bool(j.right.event_time_columns), "analysis", legacy)[0]
    )
    right_ok = bool(
        value_bounds(conds, "right", bool(j.left.event_time_columns), "analysis", legacy)[0]
    )
    needs = {
        "left_outer": ("left",),
        "left_semi": ("left",),
        "right_outer": ("right",),
        "full_outer": ("left", "right"),
    }[how]
    ok = {"left": left_ok, "right": right_ok}
    if how == "full_outer" and (left_ok or right_ok):
        return set()
    if all(ok[s] for s in needs):
        return set()
    side = next(s for s in needs if not ok[s])
    evicted = j.left if side == "left" else j.right
    other = j.right if side == "left" else j.left
    spark_name = JOIN_KINDS[how].spark_name
    anti = " (LEFT ANTI runs as a left outer join)" if j.how == "left_anti" else ""
    why = (
        f"`{other.alias}` has no watermark"
        if not other.event_time_columns
        else f"no range condition bounds `{evicted.alias}`'s event time from below by "
        f"`{other.alias}`'s watermark"
    )
    diags.add(
        "E021",
        f"join `{j.name}` ({JOIN_KINDS[j.how].keyword}){anti}: the state of "
        f"`{evicted.alias}` can never be evicted, so its unmatched rows would never be "
        f"emitted: {why}; Spark rejects it: Stream-stream {spark_name} join between two "
        "streaming DataFrame/Datasets is not supported without a watermark in the join "
        "keys, or a watermark on the nullable side and an appropriate range condition",
        j.how_span,
        "state cannot be evicted",
        _fix_hint(j),
    )
    return set(needs)


def _difference(part: exp.Expression) -> tuple[str, str, float, bool, bool] | None:
    """``part`` as a bound on L - R: (left col, right col, value_us, is_upper, strict)."""
    node = strip_parens(part)
    ops: dict[type[exp.Expression], tuple[bool, bool]] = {
        exp.LT: (False, True),
        exp.LTE: (False, False),
        exp.GT: (True, True),
        exp.GTE: (True, False),
    }
    if type(node) not in ops:
        return None
    swap, strict = ops[type(node)]
    less, greater = (node.expression, node.this) if swap else (node.this, node.expression)
    try:
        terms = collect_terms(exp.Sub(this=less, expression=greater), False, "exec")
    except (Unsolvable, KeyError, ValueError, ZeroDivisionError):
        return None
    cols: dict[str, tuple[str, int]] = {}
    const = 0.0
    for term in terms:
        sign = -1 if term.negated else 1
        if term.column is None:
            const += sign * term.value_us
            continue
        side = term.column.meta.get("side", "")
        if term.column.meta.get("type") != t.TIMESTAMP or side in cols:
            return None
        cols[side] = (f"{term.column.table}.{term.column.name}", sign)
    if set(cols) != {"left", "right"} or cols["left"][1] == cols["right"][1]:
        return None
    # less - greater = sL*L + sR*R + const < 0, with sR = -sL
    if cols["left"][1] == 1:  # L - R < -const
        return cols["left"][0], cols["right"][0], -const, True, strict
    return cols["left"][0], cols["right"][0], const, False, strict  # L - R > const


def _check_contradiction(j: Join, parts: list[exp.Expression], diags: Diagnostics) -> None:
    for part in parts:
        node = strip_parens(part)
        if isinstance(node, exp.Boolean) and not node.this:
            diags.add(
                "W003",
                f"join `{j.name}`: the condition is always false",
                _span(part),
                "always false",
            )
            return
    ranges: dict[tuple[str, str], list[tuple[float, bool, bool, exp.Expression]]] = {}
    for part in parts:
        found = _difference(part)
        if found is not None:
            lcol, rcol, value, upper, strict = found
            ranges.setdefault((lcol, rcol), []).append((value, upper, strict, part))
    for (lcol, rcol), bounds in ranges.items():
        lows = [b for b in bounds if not b[1]]
        highs = [b for b in bounds if b[1]]
        if not lows or not highs:
            continue
        low = max(lows, key=lambda b: (b[0], b[2]))
        high = min(highs, key=lambda b: (b[0], not b[2]))
        if low[0] > high[0] or (low[0] == high[0] and (low[2] or high[2])):
            culprit = max((low[3], high[3]), key=lambda p: _span(p).start)
            diags.add(
                "W003",
                f"join `{j.name}`: the range on {lcol} - {rcol} is empty "
                f"(lower bound {t.format_ms(int(low[0] // 1000))} above upper bound "
                f"{t.format_ms(int(high[0] // 1000))}); no rows can match",
                _span(culprit),
                "always false",
                "swap the bounds of the range",
            )


def _check_between_rewrite(
    spec: BoundSpec, j: Join, split: ConditionSplit, diags: Diagnostics
) -> None:
    """Spark 4 computes a non-column BETWEEN value as a metadata-less alias: say when that
    costs a side the state watermark it would otherwise have."""
    if spec.spark.major < 4:
        return
    residual = list(split.residual)
    for side, other in (("left", j.right), ("right", j.left)):
        inp = j.left if side == "left" else j.right
        if not inp.event_time_columns:
            continue
        has = bool(other.event_time_columns)
        legacy = legacy_terms(spec.spark)
        with_rewrite = value_bounds(residual, side, has, "exec", legacy)[0]
        without = value_bounds(residual, side, has, "exec", legacy, variants=False)[0]
        if without and not with_rewrite:
            culprit = next(p for p in residual if p.meta.get("state_variant") is not None)
            diags.add(
                "W004",
                f"join `{j.name}`: Spark {spec.spark} rewrites this BETWEEN so "
                f"that `{inp.alias}` loses its state watermark (it is never evicted)",
                _span(culprit),
                "BETWEEN on an expression",
                "write the range as two comparisons with >= and <=",
            )


# ---------------------------------------------------------------------- pipelines


def _upstream(spec: BoundSpec, rel: Relation) -> list[Relation]:
    """Every relation below ``rel`` (not itself), each once, depth first in input order.

    Without recursion, and a relation read by several others is visited once: a chain of
    2,000 joins, or 30 self-joins each of the previous one (2^30 paths), costs its size."""
    found: list[Relation] = []
    seen = {rel.name}
    stack = list(reversed(_inputs(rel)))
    while stack:
        name = stack.pop()
        below = spec.relation(name)
        if name in seen or below is None:
            continue
        seen.add(name)
        found.append(below)
        stack += reversed(_inputs(below))
    return found


def _query_roots(spec: BoundSpec) -> list[Relation]:
    """A query per sink; without sinks, per relation that nothing else consumes."""
    if spec.sinks:
        return [r for s in spec.sinks if (r := spec.relation(s.relation)) is not None]
    consumed = {name for r in spec.relations for name in _inputs(r)}
    return [r for r in spec.relations if r.name not in consumed and not isinstance(r, Stream)]


def _inputs(rel: Relation) -> list[str]:
    if isinstance(rel, Join):
        return [rel.left.relation, rel.right.relation]
    if isinstance(rel, Aggregate):
        return [rel.input.relation]
    return []


def check_pipeline(spec: BoundSpec, plan: Plan, diags: Diagnostics) -> list[Check]:
    checks: list[Check] = []
    reported: set[tuple[str, str]] = set()
    late = _LateRows(spec, plan)
    for root in _query_roots(spec):
        mode = root.mode if isinstance(root, Aggregate) else "append"
        chain = [root, *_upstream(spec, root)]
        checks.extend(_check_modes(spec, root.name, mode, chain, diags, reported))
        checks.extend(_check_global_watermark(spec, late, mode, chain, diags, reported))
    checks.extend(_check_watermarks(spec, plan, diags))
    if not checks:
        checks.append(Check("pipeline", "ok", "no stateful chains to check"))
    return sorted(set(checks), key=lambda c: (c.name, c.verdict, c.detail))


def _check_modes(
    spec: BoundSpec,
    root: str,
    mode: str,
    chain: list[Relation],
    diags: Diagnostics,
    reported: set[tuple[str, str]],
) -> list[Check]:
    checks = []
    update_joins = spec.spark.at_least(4, 2)
    for rel in chain:
        if isinstance(rel, Join) and mode != "append":
            allowed = update_joins and mode == "update" and rel.how in ("inner", "left_semi")
            name = JOIN_KINDS[rel.how].spark_name
            if allowed:
                checks.append(
                    Check(
                        f"output mode of {rel.name}",
                        "ok",
                        f"{name} join in Update mode (Spark 4.2+)",
                    )
                )
                continue
            if ("mode", rel.name) in reported:
                continue
            reported.add(("mode", rel.name))
            modes = (
                "Append and Update output modes"
                if update_joins and rel.how in ("inner", "left_semi")
                else "Append output mode"
            )
            agg = next(r for r in chain if isinstance(r, Aggregate) and r.name == root)
            diags.add(
                "E023",
                f"join `{rel.name}` runs in the {mode.title()} output mode of "
                f"`{root}`; Spark {spec.spark}: {name} join between two streaming "
                f"DataFrames/Datasets is not supported in {mode.title()} output mode, "
                f"only in {modes}",
                agg.mode_span or agg.name_span,
                f"{mode} mode",
                "use OUTPUT MODE append with a watermarked window in GROUP BY",
            )
            checks.append(Check(f"output mode of {rel.name}", "error", f"{mode} not allowed"))
        if (
            isinstance(rel, Aggregate)
            and rel.mode == "append"
            and not any(_is_event_time_key(k) for k in rel.group_by)
        ):
            if ("agg", rel.name) in reported:
                continue
            reported.add(("agg", rel.name))
            spark_text = (
                "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: "
                "append. This output mode is not supported for streaming aggregations without "
                "watermark on streaming DataFrames/DataSets"
                if spec.spark.at_least(4, 0)
                else "Append output mode not supported when there are streaming aggregations "
                "on streaming DataFrames/DataSets without watermark"
            )
            diags.add(
                "E023",
                f"aggregate `{rel.name}` runs in Append mode without a watermarked column "
                f"among its grouping keys; Spark {spec.spark}: {spark_text}",
                rel.mode_span or rel.name_span,
                "append needs a watermark",
                _window_hint(rel),
            )
            checks.append(Check(f"output mode of {rel.name}", "error", "append without watermark"))
    return checks


def _window_hint(agg: Aggregate) -> str:
    times = agg.input.event_time_columns
    if not times:
        return (
            f"`{agg.input.relation}` carries no event-time column: keep one in its SELECT, "
            "or use OUTPUT MODE update or complete"
        )
    return (
        "group by a window of an event-time column, e.g. "
        f"`window({agg.input.alias}.{times[0].name}, INTERVAL 10 MINUTES)`"
    )


def _is_event_time_key(node: exp.Expression) -> bool:
    if isinstance(node, exp.Column):
        return bool(node.meta.get("event_time"))
    if isinstance(node, exp.Anonymous) and node.meta.get("function") == "window":
        return _is_event_time_key(node.expressions[0])
    return False


def _emits_late(spec: BoundSpec, plan: Plan, rel: Relation, mode: str) -> str | None:
    """Why ``rel`` counts as 'may emit late rows' for the target version's check, or None."""
    v = spec.spark
    if isinstance(rel, Aggregate):  # judged by the query's output mode
        if not v.at_least(3, 4):
            return "an aggregation in Append mode" if mode == "append" else None
        return None if mode == "append" else f"an aggregation in {mode.title()} mode"
    if isinstance(rel, Join):
        if not v.at_least(3, 4):
            return None if rel.how == "inner" else f"a {JOIN_KINDS[rel.how].keyword} join"
        if not v.at_least(3, 5) and _is_time_interval(rel):
            return "a time-interval join (a range condition on event time)"
        return None
    return None


def _is_time_interval(join: Join) -> bool:
    """Spark 3.4's test, on the analyzed condition: besides its equi-keys, the condition
    holds anywhere (even under OR or NOT) a range comparison with an event-time column."""
    for part in conjuncts(join.condition):
        if equi_key(part) is not None:
            continue
        for cmp in part.find_all(exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between):
            if any(c.meta.get("event_time") for c in cmp.find_all(exp.Column)):
                return True
    return False


class _LateRows:
    """Which operators may emit rows older than the watermark (``_emits_late``), and for each
    relation the nearest such operator at or below it, per output mode; each computed once,
    so the global-watermark check costs the size of the pipeline, not its square."""

    def __init__(self, spec: BoundSpec, plan: Plan) -> None:
        self.spec = spec
        self.plan = plan
        self._why: dict[tuple[str, str], str | None] = {}
        self._nearest: dict[tuple[str, str], Relation | None] = {}

    def why(self, rel: Relation, mode: str) -> str | None:
        key = (rel.name, mode)
        if key not in self._why:
            self._why[key] = _emits_late(self.spec, self.plan, rel, mode)
        return self._why[key]

    def nearest(self, rel: Relation, mode: str) -> Relation | None:
        """``rel`` if it emits late rows, else the nearest operator below it that does (the
        first in input order), else None; a post-order walk without recursion."""
        memo = self._nearest
        stack: list[tuple[Relation, bool]] = [(rel, False)]
        entered: set[str] = set()
        while stack:
            node, inputs_done = stack.pop()
            if (node.name, mode) in memo:
                continue
            below = [r for n in _inputs(node) if (r := self.spec.relation(n)) is not None]
            if not inputs_done:
                if node.name in entered:  # a cycle (the binder rejects them): cut it
                    memo[(node.name, mode)] = None
                    continue
                entered.add(node.name)
                stack.append((node, True))
                stack += [(r, False) for r in reversed(below)]
                continue
            found: Relation | None = None
            if isinstance(node, (Join, Aggregate)) and self.why(node, mode) is not None:
                found = node
            else:
                found = next((f for r in below if (f := memo.get((r.name, mode)))), None)
            memo[(node.name, mode)] = found
        return memo[(rel.name, mode)]


def _check_global_watermark(
    spec: BoundSpec,
    late: _LateRows,
    mode: str,
    chain: list[Relation],
    diags: Diagnostics,
    reported: set[tuple[str, str]],
) -> list[Check]:
    """Spark's checkStreamingQueryGlobalWatermarkLimit: a stateful operator after one that
    may emit late rows.  One verdict per stateful operator and stateful input: ok, or the
    nearest operator below that input which emits late rows (so a chain of n operators gets
    n verdicts, not n^2)."""
    checks = []
    enabled = bool(spec.setting("correctness_check", True))
    stateful = [r for r in chain if isinstance(r, (Join, Aggregate))]
    aggregates = [r for r in stateful if isinstance(r, Aggregate)]
    if (
        not spec.spark.at_least(3, 4)
        and len(aggregates) > 1
        and ("multi", chain[0].name) not in reported
    ):
        reported.add(("multi", chain[0].name))
        diags.add(
            "E027",
            f"Spark {spec.spark}: Multiple streaming aggregations are not "
            "supported with streaming DataFrames/Datasets",
            aggregates[0].name_span,
            "second aggregation",
            "target Spark 3.4 or later",
        )
    for upper in stateful:
        if ("gw-upper", f"{upper.name} {mode}") in reported:
            continue  # another query over the same operator, in the same mode
        reported.add(("gw-upper", f"{upper.name} {mode}"))
        for name in dict.fromkeys(_inputs(upper)):
            below = spec.relation(name)
            if below is None:
                continue
            lower = late.nearest(below, mode)
            if lower is None:
                if isinstance(below, (Join, Aggregate)):
                    checks.append(
                        Check(
                            f"global watermark: {below.name} -> {upper.name}",
                            "ok",
                            f"Spark {spec.spark} allows this chain",
                        )
                    )
                continue
            why = late.why(lower, mode)
            label = f"{lower.name} -> {upper.name}"
            if ("gw", label) in reported:
                continue
            reported.add(("gw", label))
            rows = (
                "null-padded outer rows and matches older than the watermark"
                if isinstance(lower, Join)
                else "aggregated rows updated after the watermark"
            )
            message = (
                f"`{upper.name}` follows `{lower.name}`, {why}, which may emit rows "
                f"older than the watermark ({rows}); `{upper.name}` could drop them as "
                f"late. Spark {spec.spark}: Detected pattern of possible 'correctness' "
                "issue due to global watermark"
            )
            fix = (
                "target Spark 3.5 or later, where each operator gets its own watermark"
                if not spec.spark.at_least(3, 5)
                else "run the aggregation in Append mode"
            )
            if enabled:
                diags.add(
                    "E022", message, upper.name_span, f"stateful operator after `{lower.name}`", fix
                )
                checks.append(Check(f"global watermark: {label}", "error", str(why)))
            else:
                diags.add(
                    "W007",
                    message + " (check disabled by correctness_check = false)",
                    upper.name_span,
                    "rows may be dropped",
                    fix,
                )
                checks.append(Check(f"global watermark: {label}", "warning", str(why)))
    return checks


def _check_watermarks(spec: BoundSpec, plan: Plan, diags: Diagnostics) -> list[Check]:
    checks = []
    used_by: dict[str, list[str]] = {}
    for rel in spec.relations:
        for name in _inputs(rel):
            used_by.setdefault(name, []).append(rel.name)
    for rel in spec.relations:
        if not isinstance(rel, Stream) or rel.watermark is None:
            continue
        consumers = used_by.get(rel.name, [])
        if not consumers:
            diags.add(
                "W002",
                f"the watermark of `{rel.name}` is unused: no join or aggregate reads the stream",
                rel.watermark.span,
                "unused watermark",
                "join or aggregate the stream, or remove it",
            )
            continue
        useful = False
        for consumer in consumers:
            node = plan.node(consumer)
            if not isinstance(node, JoinNode):
                useful = True
                continue
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if side.relation == rel.name and (
                    side.state.eviction != "never" or other.state.eviction == "value"
                ):
                    useful = True
        if not useful:
            diags.add(
                "W002",
                f"the watermark of `{rel.name}` drives no state cleanup: it only drops late rows",
                rel.watermark.span,
                "no state cleanup uses it",
                "add a range condition on this column, or join on its window",
            )
    policy = spec.settings.get("multiple_watermark_policy")
    streams = [r for r in spec.relations if isinstance(r, Stream) and r.watermark]
    if policy is not None and policy.value == "max" and len(streams) > 1:
        diags.add(
            "W006",
            "the global watermark follows the fastest stream: rows of the "
            "slower streams arrive late and are dropped",
            policy.span,
            "max policy",
            "keep the default `min` unless dropping slow rows is intended",
        )
        checks.append(Check("watermark policy", "warning", "max: slower streams lose rows"))
    return checks
