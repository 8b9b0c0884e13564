"""State watermarks: which rows of each join side Spark evicts, and when.

A faithful port of ``StreamingSymmetricHashJoinHelper.getStateWatermarkPredicates`` and
``StreamingJoinHelper.getStateValueWatermark`` (``collectTerms``), over bound sqlglot trees:

* a join key carrying watermark metadata gives a *key* predicate to both sides;
* else a side with an event-time column gets a *value* predicate if some conjunct of the
  join condition bounds that side from below by the other side's watermark;
* else the side is never evicted.

Arithmetic is Spark's: terms in microseconds as doubles, numeric literals are seconds,
non-strict comparisons subtract 1 ms, the result is truncated toward zero, and the minimum
over conjuncts wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from sqlglot import exp

from ..frontend.ast import span_of
from ..vocabulary import annotate
from ..vocabulary import types as t
from ..vocabulary.expr import find_all, strip_parens
from ..vocabulary.model import Bound, SparkVersion
from ..vocabulary.sql import spark_sql

Mode = Literal["exec", "analysis"]  # optimized plan (constants folded) or analyzed plan


def legacy_terms(spark: SparkVersion) -> bool:
    """Up to Spark 4.1 the solver's terms form an ExpressionSet (equal terms collapse)."""
    return not spark.at_least(4, 2)


class Unsolvable(Exception):
    """A conjunct Spark cannot use for a state watermark (collectTerms' ``invalid``)."""


@dataclass(frozen=True, slots=True)
class Term:
    negated: bool
    column: exp.Column | None  # an attribute term ...
    value_us: float = 0.0  # ... or a constant, in microseconds

    def key(self) -> tuple[object, ...]:
        """ExpressionSet semantics: equal terms collapse into one."""
        if self.column is not None:
            col = self.column
            return (self.negated, "attr", annotate.side(col), col.table, col.name)
        return (self.negated, "lit", self.value_us)


def _is_column_free(node: exp.Expression) -> bool:
    return node.find(exp.Column) is None


def _fold(node: exp.Expression) -> tuple[str, float]:
    """Evaluate a column-free expression, as Spark's ConstantFolding would: ("interval", µs)
    or ("number", value).  A timestamp literal is unsolvable: Spark's evaluation of its term
    throws, so the conjunct gives no bound."""
    node = strip_parens(node)
    if isinstance(node, exp.Interval):
        return "interval", float(annotate.interval_micros(node))
    if isinstance(node, exp.Literal) and not node.is_string:
        return "number", float(node.this)
    if isinstance(node, exp.Cast):
        target = annotate.sql_type(node)
        if annotate.is_typed_literal(node):
            raise Unsolvable("timestamp literal")
        kind, value = _fold(node.this)
        if target is not None and target.is_numeric and kind == "number":
            return "number", float(int(value)) if target.name in (
                "tinyint",
                "smallint",
                "int",
                "bigint",
            ) else value
        raise Unsolvable("cast")
    if isinstance(node, exp.Neg):
        kind, value = _fold(node.this)
        return kind, -value
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        ka, a = _fold(node.this)
        kb, b = _fold(node.expression)
        if isinstance(node, (exp.Add, exp.Sub)):
            sign = 1 if isinstance(node, exp.Add) else -1
            if ka == kb:
                return ka, a + sign * b
        if isinstance(node, exp.Mul):
            if ka == "interval" and kb == "number":
                return "interval", a * b
            if kb == "interval" and ka == "number":
                return "interval", a * b
            if ka == kb == "number":
                return "number", a * b
        if isinstance(node, exp.Div) and kb == "number" and b != 0:
            return ka, a / b
    raise Unsolvable(type(node).__name__)


def collect_terms(node: exp.Expression, negate: bool, mode: Mode) -> list[Term]:
    """Spark's ``collectTerms``: flatten into signed terms, or raise Unsolvable."""
    node = strip_parens(node)
    if mode == "exec" and _is_column_free(node) and not isinstance(node, exp.Column):
        kind, value = _fold(node)
        scaled = value * (1_000_000.0 if kind == "number" else 1.0)
        if not math.isfinite(scaled):
            raise Unsolvable("number out of range")
        return [Term(negate, None, scaled)]
    if isinstance(node, exp.Add):
        return collect_terms(node.this, negate, mode) + collect_terms(node.expression, negate, mode)
    if (
        isinstance(node, exp.Sub)
        and annotate.sql_type(node) == t.INTERVAL
        and all(
            (annotate.sql_type(k) or t.UNKNOWN).is_temporal for k in (node.this, node.expression)
        )
    ):
        raise Unsolvable("timestamp difference")  # Spark's SubtractTimestamps: not a term
    if isinstance(node, exp.Sub):
        return collect_terms(node.this, negate, mode) + collect_terms(
            node.expression, not negate, mode
        )
    if isinstance(node, exp.Neg):
        return collect_terms(node.this, not negate, mode)
    if isinstance(node, exp.Cast):
        target = annotate.sql_type(node)
        if target is not None and (target.is_numeric or target == t.TIMESTAMP):
            if annotate.is_typed_literal(node):
                raise Unsolvable("string literal cast")  # a MatchError in Spark's code
            return collect_terms(node.this, negate, mode)
        raise Unsolvable("cast")
    if isinstance(node, exp.Column):
        return [Term(negate, node)]
    if isinstance(node, exp.Interval):
        return [Term(negate, None, float(annotate.interval_micros(node)))]
    if isinstance(node, exp.Literal) and not node.is_string:
        value = float(node.this) * 1_000_000.0
        if not math.isfinite(value):
            raise Unsolvable("number out of range")
        return [Term(negate, None, value)]
    raise Unsolvable(type(node).__name__)


def solve(
    less: exp.Expression,
    greater: exp.Expression,
    side: str,
    mode: Mode,
    strict: bool,
    conjunct: str,
    legacy_terms: bool,
) -> Bound | None:
    """``less < greater`` -> the bound it puts on ``side`` (Spark's
    getStateWatermarkFromLessThenPredicate), or None.

    ``legacy_terms`` (Spark up to 4.1): terms form an ExpressionSet, so equal terms collapse,
    and attributes are counted once each; from 4.2 every occurrence counts.
    """
    other = "right" if side == "left" else "left"
    refs = [
        (annotate.side(c), c.table, c.name)
        for n in (less, greater)
        for c in find_all(n, exp.Column)
    ]
    counted = set(refs) if legacy_terms else refs
    if sum(1 for r in counted if r[0] == side) > 1 or sum(1 for r in counted if r[0] == other) > 1:
        return None
    try:
        terms = collect_terms(exp.Sub(this=less, expression=greater), False, mode)
    except (Unsolvable, KeyError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if legacy_terms:
        terms = list({term.key(): term for term in reversed(terms)}.values())[::-1]
    constraint = [
        term for term in terms if term.column is not None and annotate.side(term.column) == side
    ]
    if len(constraint) != 1 or not constraint[0].negated:
        return None
    coef, const = 0, 0.0
    rest = [term for term in terms if term is not constraint[0]]
    if not rest:
        return None  # reduceLeft of nothing throws
    for term in rest:
        sign = -1 if term.negated else 1
        if term.column is None:
            const += sign * term.value_us
        elif annotate.side(term.column) == other and annotate.is_event_time(term.column):
            coef += sign
        else:
            return None  # an attribute Spark cannot substitute: evaluation fails
    return Bound(coef, const, strict, conjunct)


def value_bounds(
    residual: list[exp.Expression],
    side: str,
    other_has_watermark: bool,
    mode: Mode,
    legacy_terms: bool,
    variants: bool = True,
    explain: bool = True,
) -> tuple[list[Bound], list[exp.Expression]]:
    """Spark's getStateValueWatermark for ``side``: the bound of every usable conjunct, and
    the range-like conjuncts it could not use (for explanations).

    ``mode='exec'`` reads the optimized condition: constants folded, and (with ``variants``)
    a non-column BETWEEN value replaced by its metadata-less ``_common_expr`` alias.  The
    analysis check reads the analyzed condition, where neither has happened; its BETWEEN
    rule (4.0+: the lower bound, else the upper) is defined exactly when the expanded pair
    gives a bound, which is all the check asks.

    Without ``explain`` (a caller that asks only whether there are bounds) no bound gets its
    conjunct's SQL text and no unusable conjunct is listed: each is a walk or a print per
    conjunct.
    """
    if not other_has_watermark:
        return [], []
    bounds: list[Bound] = []
    unusable: list[exp.Expression] = []
    for part in residual:
        conj = ""  # the conjunct's Spark SQL, written only into a bound found (see below)
        variant = annotate.state_variant_or_self(part) if variants and mode == "exec" else part
        node = strip_parens(variant)
        found: Bound | None = None
        args = (side, mode)
        if isinstance(node, exp.LT):
            found = solve(node.this, node.expression, *args, True, conj, legacy_terms)
        elif isinstance(node, exp.LTE):
            found = solve(node.this, node.expression, *args, False, conj, legacy_terms)
        elif isinstance(node, exp.GT):
            found = solve(node.expression, node.this, *args, True, conj, legacy_terms)
        elif isinstance(node, exp.GTE):
            found = solve(node.expression, node.this, *args, False, conj, legacy_terms)
        if found is not None:
            bounds.append(replace(found, conjunct=spark_sql(part)) if explain else found)
        elif explain and _mentions_time_of_both(node):
            unusable.append(part)
    return bounds, unusable


def _mentions_time_of_both(node: exp.Expression) -> bool:
    seen = {
        annotate.side(c) for c in find_all(node, exp.Column) if annotate.sql_type(c) == t.TIMESTAMP
    }
    return {"left", "right"} <= seen


def expand_between(parts: list[exp.Expression], spark_major: int) -> list[exp.Expression]:
    """Conjuncts with BETWEEN rewritten as Spark's analyzer writes it: ``v >= lo AND v <= hi``.

    From Spark 4.0 that holds only when ``v`` is a column.  Otherwise Spark computes ``v``
    once below the join as ``_common_expr_N``: an attribute of ``v``'s side *without* watermark
    metadata, so it can no longer stand for that side's watermark.  Each such conjunct keeps
    that variant in ``meta['state_variant']``, used for the operator's state watermarks.
    """
    result: list[exp.Expression] = []
    counter = 0
    for part in parts:
        node = strip_parens(part)
        if not isinstance(node, exp.Between):
            result.append(part)
            continue
        value = strip_parens(node.this)
        low = exp.GTE(this=value.copy(), expression=node.args["low"].copy())
        high = exp.LTE(this=value.copy(), expression=node.args["high"].copy())
        for bound in (low, high):  # messages point at the BETWEEN
            annotate.set_span(bound, span_of(part))
        value_sides = {annotate.side(c) for c in find_all(value, exp.Column)}
        if spark_major >= 4 and not isinstance(value, exp.Column) and len(value_sides) == 1:
            alias = exp.Column(this=exp.to_identifier(f"_common_expr_{counter}"))
            annotate.set_column(
                alias, side=value_sides.pop(), event_time=False, kind=annotate.sql_type(value)
            )
            counter += 1
            for expanded in (low, high):
                variant = expanded.copy()
                variant.set("this", alias.copy())
                annotate.copy_column(variant.this, alias)
                annotate.set_state_variant(expanded, variant)
        result.extend([low, high])
    return result
