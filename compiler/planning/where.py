"""A join's ``WHERE``: what Spark's optimizer does with a Filter above a stream-stream join.

Mirrors, in order: ``EliminateOuterJoin`` (a conjunct that no null-padded row of a side can
pass turns the outer join into the narrower one: LEFT OUTER into INNER under a filter on its
right side, FULL OUTER into LEFT / RIGHT OUTER or INNER), then ``PushPredicateThroughJoin``
for the join type Spark then runs (its deterministic side-only conjuncts go into the sides
that are not null-padded; an INNER join also takes the two-side ones into its condition;
the rest stay a Filter above the join).  Checked on Spark 4.3.0's optimized plans
(tests/integration/spark/test_where_on_spark.py).  The planner asks; the plan holds the answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from ..vocabulary import annotate
from ..vocabulary.expr import strip_parens
from ..vocabulary.model import JoinType
from .split import is_deterministic, not_null_columns, sides

# what a conjunct evaluates to when every column it reads is NULL: "null", "false", "true",
# "reject" (NULL or FALSE: a row like that never passes), "value" (some non-NULL value that
# is no boolean), "unknown" (sjoin cannot tell: the conjunct is not taken as null-rejecting)
_Kind = str
_STRICT = (
    exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Add, exp.Sub, exp.Mul, exp.Div,
    exp.Mod, exp.Neg, exp.Cast, exp.Like, exp.Between, exp.In,
)  # fmt: skip


def _all_null(node: exp.Expression) -> _Kind:
    """``node`` evaluated with every column NULL (Spark's ``canFilterOutNull`` evaluates the
    conjunct over an empty row)."""
    node = strip_parens(node)
    if isinstance(node, exp.Column):
        return "null"
    if isinstance(node, exp.Null):
        return "null"
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    if isinstance(node, (exp.Literal, exp.Interval)):
        return "value"
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        inner = _all_null(node.this)
        return (
            "true"
            if inner == "null"
            else "false"
            if inner in ("value", "true", "false")
            else "unknown"
        )
    if isinstance(node, exp.Not):
        inner = _all_null(node.this)
        return {"null": "null", "true": "false", "false": "true"}.get(inner, "unknown")
    if isinstance(node, exp.And):
        kinds = [_all_null(node.this), _all_null(node.expression)]
        if "false" in kinds:
            return "false"
        if any(k in ("null", "reject") for k in kinds):
            return "reject"
        return "true" if kinds == ["true", "true"] else "unknown"
    if isinstance(node, exp.Or):
        kinds = [_all_null(node.this), _all_null(node.expression)]
        if "true" in kinds:
            return "true"
        if all(k in ("null", "false", "reject") for k in kinds):
            return "false" if kinds == ["false", "false"] else "reject"
        return "unknown"
    if isinstance(node, _STRICT):
        operand = node.this
        if isinstance(node, (exp.Between, exp.In, exp.Like, exp.Cast, exp.Neg)):
            return "null" if _all_null(operand) == "null" else "unknown"
        kinds = [_all_null(node.this), _all_null(node.expression)]
        return "null" if "null" in kinds else "unknown"
    return "unknown"


def rejected_sides(part: exp.Expression) -> frozenset[str]:
    """The join sides whose null-padded rows ``part`` (a WHERE conjunct) never passes: a
    deterministic conjunct of one side that is NULL or FALSE when its columns are NULL, and
    the side of each column it proves non-null (Spark adds ``isnotnull`` constraints for
    them, which EliminateOuterJoin reads too)."""
    if not is_deterministic(part):
        return frozenset()
    found = {annotate.side(c) for c in not_null_columns(part)}
    read = sides(part)
    if len(read) == 1 and _all_null(part) in ("null", "false", "reject"):
        found |= read
    return frozenset(s for s in found if s in ("left", "right"))


def eliminate_outer(how: JoinType, rejected: frozenset[str]) -> JoinType:
    """The join type Spark's EliminateOuterJoin leaves under a filter that rejects the
    null-padded rows of the ``rejected`` sides."""
    if how == "left_outer" and "right" in rejected:
        return "inner"
    if how == "right_outer" and "left" in rejected:
        return "inner"
    if how == "full_outer" and rejected:
        if rejected >= {"left", "right"}:
            return "inner"
        return "left_outer" if "left" in rejected else "right_outer"
    return how


@dataclass
class WherePlacement:
    """Where each WHERE conjunct runs after PushPredicateThroughJoin."""

    condition: list[exp.Expression] = field(default_factory=list)  # an INNER join's condition
    pushed: dict[str, list[exp.Expression]] = field(
        default_factory=lambda: {"left": [], "right": []}
    )  # into a side, below the join
    above: list[exp.Expression] = field(default_factory=list)  # a Filter above the join


def place_where(parts: list[exp.Expression], executed: JoinType) -> WherePlacement:
    """PushPredicateThroughJoin of a Filter's conjuncts over a join Spark runs as
    ``executed``: deterministic conjuncts of one side go into that side unless the join
    null-pads it; an INNER join takes every other deterministic conjunct into its condition
    (its side-only ones are then pushed as the condition's are); the rest stay above."""
    found = WherePlacement()
    padded = {
        "inner": (),
        "left_outer": ("right",),
        "right_outer": ("left",),
        "full_outer": ("left", "right"),
        "left_semi": ("right",),
    }[executed]
    for part in parts:
        if not is_deterministic(part):
            found.above.append(part)
        elif executed == "inner":
            found.condition.append(part)
        else:
            read = sides(part)
            if len(read) == 1 and next(iter(read)) not in padded:
                found.pushed[next(iter(read))].append(part)
            else:
                found.above.append(part)
    return found
