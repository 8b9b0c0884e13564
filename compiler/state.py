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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from sqlglot import exp

from . import types as t
from .bind import parse_timestamp
from .split import strip_parens
from .sql import spark_sql

Mode = Literal["exec", "analysis"]  # optimized plan (constants folded) or analyzed plan


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
            return (self.negated, "attr", col.meta.get("side"), col.table, col.name)
        return (self.negated, "lit", self.value_us)


@dataclass(frozen=True, slots=True)
class Bound:
    """One conjunct's state watermark for a side: ``trunc((coef*W*1000 + const_us)/1000) -
    (0 if strict else 1)`` milliseconds, where W is the eviction watermark (ms)."""

    coef: int
    const_us: float
    strict: bool
    conjunct: str  # the conjunct as Spark SQL, for explanations

    def at(self, watermark_ms: int) -> int:
        total = (self.coef * float(watermark_ms) * 1000.0 + self.const_us) / 1000.0
        return math.trunc(total) - (0 if self.strict else 1)


def _epoch_us(text: str) -> float:
    ts = parse_timestamp(text)
    if ts is None:
        raise Unsolvable(text)
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    delta = ts - datetime(1970, 1, 1, tzinfo=UTC)
    return float((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)


def _is_column_free(node: exp.Expression) -> bool:
    return node.find(exp.Column) is None


def _fold(node: exp.Expression) -> tuple[str, float]:
    """Evaluate a column-free expression, as Spark's ConstantFolding would: ("interval", µs),
    ("number", value) or ("timestamp", µs)."""
    node = strip_parens(node)
    if isinstance(node, exp.Interval):
        return "interval", float(node.meta["micros"])
    if isinstance(node, exp.Literal) and not node.is_string:
        return "number", float(node.this)
    if isinstance(node, exp.Cast):
        target = node.meta.get("type")
        if node.meta.get("typed_literal") and target == t.TIMESTAMP:
            return "timestamp", _epoch_us(node.this.name)
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
            if ka == kb or "timestamp" in (ka, kb):
                return (ka if ka != "interval" else kb), a + sign * b
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
        scale = 1_000_000.0 if kind in ("number", "timestamp") else 1.0
        return [Term(negate, None, value * scale)]
    if isinstance(node, exp.Add):
        return collect_terms(node.this, negate, mode) + collect_terms(node.expression, negate, mode)
    if isinstance(node, exp.Sub):
        return collect_terms(node.this, negate, mode) + collect_terms(
            node.expression, not negate, mode
        )
    if isinstance(node, exp.Neg):
        return collect_terms(node.this, not negate, mode)
    if isinstance(node, exp.Cast):
        target = node.meta.get("type")
        if target is not None and (target.is_numeric or target == t.TIMESTAMP):
            if node.meta.get("typed_literal"):
                raise Unsolvable("string literal cast")  # a MatchError in Spark's code
            return collect_terms(node.this, negate, mode)
        raise Unsolvable("cast")
    if isinstance(node, exp.Column):
        return [Term(negate, node)]
    if isinstance(node, exp.Interval):
        return [Term(negate, None, float(node.meta["micros"]))]
    if isinstance(node, exp.Literal) and not node.is_string:
        return [Term(negate, None, float(node.this) * 1_000_000.0)]
    raise Unsolvable(type(node).__name__)


def solve(
    less: exp.Expression,
    greater: exp.Expression,
    side: str,
    mode: Mode,
    strict: bool,
    conjunct: str,
) -> Bound | None:
    """``less < greater`` -> the bound it puts on ``side`` (Spark's
    getStateWatermarkFromLessThenPredicate), or None."""
    other = "right" if side == "left" else "left"
    attrs = {
        (c.meta.get("side"), c.table, c.name): c
        for node in (less, greater)
        for c in node.find_all(exp.Column)
    }
    if sum(1 for k in attrs if k[0] == side) > 1 or sum(1 for k in attrs if k[0] == other) > 1:
        return None
    try:
        terms = collect_terms(exp.Sub(this=less, expression=greater), False, mode)
    except (Unsolvable, KeyError, ValueError, ZeroDivisionError, OverflowError):
        return None
    unique: dict[tuple[object, ...], Term] = {}
    for term in terms:
        unique.setdefault(term.key(), term)
    constraint = [
        term
        for term in unique.values()
        if term.column is not None
        and term.column.meta.get("side") == side
        and term.column.meta.get("type") == t.TIMESTAMP
    ]
    if len(constraint) != 1 or not constraint[0].negated:
        return None
    coef, const = 0, 0.0
    for term in unique.values():
        if term is constraint[0]:
            continue
        sign = -1 if term.negated else 1
        if term.column is None:
            const += sign * term.value_us
        elif (
            term.column.meta.get("side") == other
            and term.column.meta.get("event_time")
            and term.column.meta.get("type") == t.TIMESTAMP
        ):
            coef += sign
        else:
            return None  # an attribute Spark cannot substitute: evaluation fails
    return Bound(coef, const, strict, conjunct)


def value_bounds(
    residual: list[exp.Expression],
    side: str,
    other_has_watermark: bool,
    mode: Mode,
    variants: bool = True,
) -> tuple[list[Bound], list[exp.Expression]]:
    """Spark's getStateValueWatermark for ``side``: the bound of every usable conjunct, and
    the range-like conjuncts it could not use (for explanations)."""
    if not other_has_watermark:
        return [], []
    bounds: list[Bound] = []
    unusable: list[exp.Expression] = []
    for part in residual:
        conj = spark_sql(part)
        if mode == "analysis" and part.meta.get("opaque_at_analysis"):
            unusable.append(part)
            continue
        variant = part.meta.get("state_variant", part) if variants else part
        node = strip_parens(variant if mode == "exec" else part)
        found: Bound | None = None
        if isinstance(node, exp.LT):
            found = solve(node.this, node.expression, side, mode, True, conj)
        elif isinstance(node, exp.LTE):
            found = solve(node.this, node.expression, side, mode, False, conj)
        elif isinstance(node, exp.GT):
            found = solve(node.expression, node.this, side, mode, True, conj)
        elif isinstance(node, exp.GTE):
            found = solve(node.expression, node.this, side, mode, False, conj)
        if found is not None:
            bounds.append(found)
        elif _mentions_time_of_both(node):
            unusable.append(part)
    return bounds, unusable


def _mentions_time_of_both(node: exp.Expression) -> bool:
    seen = {
        c.meta.get("side") for c in node.find_all(exp.Column) if c.meta.get("type") == t.TIMESTAMP
    }
    return {"left", "right"} <= seen


def expand_between(parts: list[exp.Expression], spark_major: int) -> list[exp.Expression]:
    """Conjuncts with BETWEEN rewritten as Spark's analyzer writes it: ``v >= lo AND v <= hi``.

    From Spark 4.0 that holds only when ``v`` is a column.  Otherwise Spark computes ``v``
    once below the join as ``_common_expr_N``: an attribute of ``v``'s side *without* watermark
    metadata, so it can no longer stand for that side's watermark.  Each such conjunct keeps
    that variant in ``meta['state_variant']`` (used for state watermarks), and is marked
    ``meta['opaque_at_analysis']``: in the analyzed plan, which the analysis checks read, it
    is still one BETWEEN that no range rule understands.
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
        value_sides = {c.meta.get("side") for c in value.find_all(exp.Column)}
        if spark_major >= 4 and not isinstance(value, exp.Column) and len(value_sides) == 1:
            alias = exp.Column(this=exp.to_identifier(f"_common_expr_{counter}"))
            alias.meta.update(side=value_sides.pop(), event_time=False, type=value.meta.get("type"))
            counter += 1
            for expanded in (low, high):
                variant = expanded.copy()
                variant.set("this", alias.copy())
                variant.this.meta.update(alias.meta)
                expanded.meta["state_variant"] = variant
                expanded.meta["opaque_at_analysis"] = True
        result.extend([low, high])
    return result
