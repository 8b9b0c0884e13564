"""The facts about each join and aggregate that Spark's analysis rules and sjoin's warnings
judge, worked out once, by the planner, with the state solver: which conjuncts are
non-deterministic, which event-time columns reach the join, whether Spark's analysis check
finds a state bound per side, whether the range is empty or a BETWEEN rewrite loses a
bound, whether the join is a time-interval join.  ``hazards`` reads them from the plan.
"""

from __future__ import annotations

from sqlglot import exp

from ..binding.bound import Aggregate, Input, Join
from ..frontend.ast import span_of
from ..vocabulary import annotate
from ..vocabulary import types as t
from ..vocabulary.expr import conjuncts, find_all, nodes, strip_parens
from ..vocabulary.model import AggregateAnalysis, Column, EmptyRange, JoinAnalysis, SparkVersion
from ..vocabulary.source import Span
from ..vocabulary.sql import spark_sql
from .split import ConditionSplit, equi_key, is_deterministic
from .state import Unsolvable, collect_terms, legacy_terms, value_bounds


def analyse_join(
    spark: SparkVersion,
    j: Join,
    split: ConditionSplit,
    parts: list[exp.Expression],
    event_time: dict[str, list[Column]],
    keys_carry_event_time: bool,
    used: dict[str, set[str]],
) -> JoinAnalysis:
    """``parts``: the ON condition's conjuncts (BETWEEN expanded for the target);
    ``event_time``: per side, the event-time columns that reach the join after Spark's
    column pruning (the ones MULTIPLE_EVENT_TIME_COLUMNS counts); ``used``: per side, the
    columns that pruning keeps (a time kept beside its window counts only when it is one)."""
    legacy = legacy_terms(spark)
    declared = (_names(j.left), _names(j.right))
    bounds = (
        bool(value_bounds(parts, "left", bool(declared[1]), "analysis", legacy, explain=False)[0]),
        bool(value_bounds(parts, "right", bool(declared[0]), "analysis", legacy, explain=False)[0]),
    )
    always_false = next(
        (
            span_of(p)
            for p in parts
            if isinstance(strip_parens(p), exp.Boolean) and not strip_parens(p).this
        ),
        None,
    )
    return JoinAnalysis(
        name_span=j.name_span,
        how_span=j.how_span,
        condition_span=span_of(j.condition),
        input_spans=(j.left.span, j.right.span),
        typed_cleanly=typed_cleanly(j.condition),
        nondeterministic=tuple(
            (spark_sql(p), span_of(p)) for p in parts if not is_deterministic(p)
        ),
        declared_event_time=declared,
        event_time_columns=(
            tuple(c.name for c in event_time["left"]),
            tuple(c.name for c in event_time["right"]),
        ),
        keys_carry_event_time=keys_carry_event_time,
        analysis_bounds=bounds,
        always_false=always_false,
        empty_range=None if always_false is not None else _empty_range(parts),
        between_loses_state=_between_rewrite(spark, j, split),
        time_interval=_is_time_interval(j),
        time_beside_window=(
            _reaching(j.left, used["left"]),
            _reaching(j.right, used["right"]),
        ),
        mode_span=j.mode_span,
    )


def _reaching(inp: Input, used: set[str]) -> tuple[str, str] | None:
    """A time kept beside its window, when it is an event-time column of the input and
    reaches the join (Spark prunes it when nothing above reads it: then the side carries
    the window alone, and runs)."""
    beside = inp.time_beside_window
    if beside is None or beside[0] not in used:
        return None
    return beside if beside[0] in {c.name for c in inp.event_time_columns} else None


def analyse_aggregate(a: Aggregate) -> AggregateAnalysis:
    return AggregateAnalysis(a.name_span, a.mode_span, _names(a.input), a.mode)


def typed_cleanly(node: exp.Expression) -> bool:
    """No part of ``node`` failed to bind (an error gave it the UNKNOWN type)."""
    return all(annotate.sql_type(sub) != t.UNKNOWN for sub in nodes(node))


def _names(inp: Input) -> tuple[str, ...]:
    return tuple(c.name for c in inp.event_time_columns)


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
        side = annotate.side(term.column)
        if annotate.sql_type(term.column) != t.TIMESTAMP or side in cols:
            return None
        cols[side] = (f"{term.column.table}.{term.column.name}", sign)
    if set(cols) != {"left", "right"} or cols["left"][1] == cols["right"][1]:
        return None
    # less - greater = sL*L + sR*R + const < 0, with sR = -sL
    if cols["left"][1] == 1:  # L - R < -const
        return cols["left"][0], cols["right"][0], -const, True, strict
    return cols["left"][0], cols["right"][0], const, False, strict  # L - R > const


def _empty_range(parts: list[exp.Expression]) -> EmptyRange | None:
    """The first pair of columns whose lower bound on L - R is above its upper bound."""
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
            culprit = max((low[3], high[3]), key=lambda p: span_of(p).start)
            return EmptyRange(
                lcol, rcol, int(low[0] // 1000), int(high[0] // 1000), span_of(culprit)
            )
    return None


def _between_rewrite(
    spark: SparkVersion, j: Join, split: ConditionSplit
) -> tuple[Span | None, Span | None]:
    """Per side, the BETWEEN whose Spark 4 rewrite (a non-column value computed as a
    metadata-less alias) costs the side the state watermark it would otherwise have."""
    if spark.major < 4:
        return (None, None)
    residual = list(split.residual)
    legacy = legacy_terms(spark)
    found: list[Span | None] = []
    for side, inp, other in (("left", j.left, j.right), ("right", j.right, j.left)):
        culprit = None
        if inp.event_time_columns:
            has = bool(other.event_time_columns)
            with_rewrite = value_bounds(residual, side, has, "exec", legacy, explain=False)[0]
            without = value_bounds(
                residual, side, has, "exec", legacy, variants=False, explain=False
            )[0]
            if without and not with_rewrite:
                culprit = next(
                    span_of(p) for p in residual if annotate.state_variant(p) is not None
                )
        found.append(culprit)
    return (found[0], found[1])


def _is_time_interval(join: Join) -> bool:
    """Spark 3.4's test, on the analyzed condition: besides its equi-keys, the condition
    holds anywhere (even under OR or NOT) a range comparison with an event-time column."""
    for part in conjuncts(join.condition):
        if equi_key(part) is not None:
            continue
        for cmp in find_all(part, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between):
            if any(annotate.is_event_time(c) for c in find_all(cmp, exp.Column)):
                return True
    return False
