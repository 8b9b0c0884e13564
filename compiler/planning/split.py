"""ON -> equi-join keys, pre-join filter per side, post-join filter, as Spark splits it.

Mirrors, in order: ``ExtractEquiJoinKeys`` (the keys), ``PushPredicateThroughJoin`` (which
side-only conjuncts leave the join per join type), ``InferFiltersFromConstraints`` (the
not-null filters Spark adds below the join) and ``JoinConditionSplitPredicates`` (leftOnly,
rightOnly, both).  Expressions are bound sqlglot trees whose columns carry ``meta['side']``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from ..vocabulary import annotate
from ..vocabulary import types as t
from ..vocabulary.expr import find_all, nodes, strip_parens
from ..vocabulary.functions import FUNCTIONS
from ..vocabulary.model import JOIN_KINDS, JoinType
from ..vocabulary.types import SqlType

NON_DETERMINISTIC = frozenset(f.name for f in FUNCTIONS.values() if not f.deterministic)


def sides(node: exp.Expression) -> frozenset[str]:
    """Which join sides a bound expression references."""
    return frozenset(annotate.side(c) for c in find_all(node, exp.Column))


def columns_of(node: exp.Expression) -> list[exp.Column]:
    return list(find_all(node, exp.Column))


def is_deterministic(node: exp.Expression) -> bool:
    return not any(annotate.function(f) in NON_DETERMINISTIC for f in find_all(node, exp.Anonymous))


def conjoin(parts: list[exp.Expression]) -> exp.Expression | None:
    """AND of the parts (None when empty), sharing the parts' trees.

    The tree is balanced, ceil(log2 n) deep (see ``parse.balanced``: it means what the
    left-deep tree means), so that no walk of 100,000 conjuncts runs out of stack.  An OR
    part gets its parentheses back (``conjuncts`` strips them), so the plan's text reads
    ``(a OR b) AND c``, not ``a OR b AND c``.  The new nodes leave the parts where they are
    (``_over``): a part stays a child of the join condition it came from, and a pushed
    filter costs no copy of its conjuncts."""
    if not parts:
        return None
    level = [_over(exp.Paren, this=p) if isinstance(p, exp.Or) else p for p in parts]
    while len(level) > 1:
        paired: list[exp.Expression] = [
            _over(exp.And, this=a, expression=b)
            for a, b in zip(level[::2], level[1::2], strict=False)
        ]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def _over(kind: type[exp.Expression], **args: exp.Expression) -> exp.Expression:
    """A ``kind`` node over ``args`` that does not make itself their parent, as sqlglot's
    constructor would: the args keep their place (and parent) in the tree they belong to.
    Plan trees are only read (plan.py): ``copy()``, ``sql()`` and every walk go through
    ``args``, and a copy gets parents of its own."""
    node = kind()
    node.args.update(args)
    return node


@dataclass(frozen=True)
class ConditionSplit:
    """The join condition as Spark's planner and optimizer leave it."""

    keys: tuple[tuple[exp.Expression, exp.Expression], ...]  # (left expr, right expr)
    key_conjuncts: tuple[exp.Expression, ...]  # the equalities that became keys
    left_only: tuple[exp.Expression, ...]  # stays in the join: leftOnly (preserved left)
    right_only: tuple[exp.Expression, ...]  # stays in the join: rightOnly (preserved right)
    both: tuple[exp.Expression, ...]  # post-join filter, incl. non-deterministic conjuncts
    pushed_left: tuple[exp.Expression, ...]  # filters the left input before the join
    pushed_right: tuple[exp.Expression, ...]
    constant: tuple[exp.Expression, ...]  # conjuncts that reference no column
    # the null-safe equalities between the sides (``l <=> r``, IS NOT DISTINCT FROM), each
    # two pairs of ``keys`` from its index on (``null_safe_pairs``): (l, r, index)
    null_safe: tuple[tuple[exp.Expression, exp.Expression, int], ...] = ()

    @property
    def residual(self) -> tuple[exp.Expression, ...]:
        """What the join operator evaluates besides the keys (Spark's ``condition.full``)."""
        return self.left_only + self.right_only + self.both


def split_condition(parts: Sequence[exp.Expression], how: JoinType) -> ConditionSplit:
    """The ON condition's conjuncts (``conjuncts``, BETWEEN expanded for the target) split
    as Spark splits them; the split shares the parts' trees."""
    keys: list[tuple[exp.Expression, exp.Expression]] = []
    key_conjuncts: list[exp.Expression] = []
    left_only: list[exp.Expression] = []
    right_only: list[exp.Expression] = []
    both: list[exp.Expression] = []
    constant: list[exp.Expression] = []
    null_safe: list[tuple[exp.Expression, exp.Expression, int]] = []
    for part in map(strip_parens, parts):
        pair = equi_key(part)
        if pair is not None:
            keys.append(pair)
            key_conjuncts.append(part)
            continue
        operands = null_safe_key(part)
        if operands is not None:
            null_safe.append((*operands, len(keys)))
            keys.extend(null_safe_pairs(*operands))
            key_conjuncts.append(part)
            continue
        refs = sides(part)
        if not is_deterministic(part):
            both.append(part)
        elif not refs:
            constant.append(part)
        elif refs == {"left"}:
            left_only.append(part)
        elif refs == {"right"}:
            right_only.append(part)
        else:
            both.append(part)
    # which side-only conjuncts stay in the join (PushPredicateThroughJoin); the rest are pushed
    keep_left = "left" in JOIN_KINDS[how].keeps_in_join
    keep_right = "right" in JOIN_KINDS[how].keeps_in_join
    return ConditionSplit(
        keys=tuple(keys),
        key_conjuncts=tuple(key_conjuncts),
        left_only=tuple(left_only) if keep_left else (),
        right_only=tuple(right_only) if keep_right else (),
        both=tuple(both),
        pushed_left=() if keep_left else tuple(left_only),
        pushed_right=() if keep_right else tuple(right_only),
        constant=tuple(constant),
        null_safe=tuple(null_safe),
    )


def equi_key(part: exp.Expression) -> tuple[exp.Expression, exp.Expression] | None:
    """(left expr, right expr) when ``part`` is an equality between the two sides."""
    if not isinstance(part, exp.EQ) or not is_deterministic(part):
        return None
    a, b = part.this, part.expression
    sa, sb = sides(a), sides(b)
    if sa == {"left"} and sb == {"right"}:
        return a, b
    if sa == {"right"} and sb == {"left"}:
        return b, a
    return None


def null_safe_key(part: exp.Expression) -> tuple[exp.Expression, exp.Expression] | None:
    """(left expr, right expr) when ``part`` is a null-safe equality (``<=>``, IS NOT
    DISTINCT FROM) between the two sides: a join key to Spark too (``null_safe_pairs``)."""
    if not isinstance(part, exp.NullSafeEQ) or not is_deterministic(part):
        return None
    a, b = part.this, part.expression
    sa, sb = sides(a), sides(b)
    if sa == {"left"} and sb == {"right"}:
        return a, b
    if sa == {"right"} and sb == {"left"}:
        return b, a
    return None


def null_safe_pairs(
    left: exp.Expression, right: exp.Expression
) -> tuple[tuple[exp.Expression, exp.Expression], tuple[exp.Expression, exp.Expression]]:
    """The two key pairs Spark's ExtractEquiJoinKeys makes of ``left <=> right``:
    (coalesce(left, d), coalesce(right, d)) and (isnull(left), isnull(right)), ``d`` the
    default value of the operands' common type (``Literal.default``: 0, '', false, the
    epoch ...), so that a NULL key matches a NULL key and no other.  The operands stay
    where they are (``_over``): the new calls only point at them."""
    kind = _common_type(left, right)
    return (
        (
            _call("coalesce", kind, left, default_literal(kind)),
            _call("coalesce", kind, right, default_literal(kind)),
        ),
        (_call("isnull", t.BOOLEAN, left), _call("isnull", t.BOOLEAN, right)),
    )


def _common_type(left: exp.Expression, right: exp.Expression) -> SqlType:
    a, b = annotate.sql_type(left), annotate.sql_type(right)
    if a is None or b is None:
        return a or b or t.UNKNOWN
    return t.common_type(a, b) or a


def _call(name: str, kind: SqlType, *args: exp.Expression) -> exp.Expression:
    """A ``name(args)`` call over ``args`` that leaves them in their tree (``_over``)."""
    node = _over(exp.Anonymous)
    node.args.update(this=name, expressions=list(args))
    annotate.set_function(node, name)
    annotate.set_type(node, kind)
    return node


def default_literal(kind: SqlType) -> exp.Expression:
    """Spark's ``Literal.default`` of ``kind`` as an expression (its Spark SQL text): 0 of a
    number at its scale, '' , false, X'', the epoch's DATE and TIMESTAMP."""
    name = kind.name
    node: exp.Expression
    if name == "string":
        node = exp.Literal.string("")
    elif name == "boolean":
        node = exp.Boolean(this=False)
    elif name == "binary":
        node = exp.HexString(this="")
    elif name in ("double", "float"):
        node = exp.Literal.number("0.0")
    elif name == "decimal":
        scale = kind.params[1] if len(kind.params) > 1 else 0
        node = exp.Literal.number("0." + "0" * scale if scale else "0")
    elif name == "date":
        node = exp.Cast(this=exp.Literal.string("1970-01-01"), to=exp.DataType.build("DATE"))
    elif name == "timestamp":
        node = exp.Cast(
            this=exp.Literal.string("1970-01-01 00:00:00"), to=exp.DataType.build("TIMESTAMPTZ")
        )
    else:
        node = exp.Literal.number("0")
    annotate.set_type(node, kind)
    return node


# Expressions through which a NULL operand makes the whole result NULL (Spark's
# NullIntolerant): a column under only these, in a comparison, must be non-null to match.
_NULL_INTOLERANT = (
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Mod,
    exp.Neg,
    exp.Paren,
    exp.Cast,
    exp.Column,
)
_NULL_INTOLERANT_PREDICATES = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


def not_null_columns(part: exp.Expression) -> list[exp.Column]:
    """Columns that a conjunct proves non-null (so Spark infers ``isnotnull`` for them)."""
    part = strip_parens(part)
    if isinstance(part, exp.Between):
        operands = [part.this, part.args["low"], part.args["high"]]
    elif isinstance(part, _NULL_INTOLERANT_PREDICATES):
        operands = [part.this, part.expression]
    else:
        return []
    found = []
    for operand in operands:
        if all(
            isinstance(
                n,
                (
                    *_NULL_INTOLERANT,
                    exp.Literal,
                    exp.Interval,
                    exp.DataType,
                    exp.Identifier,
                    exp.Var,
                ),
            )
            for n in nodes(operand)
        ):
            found.extend(find_all(operand, exp.Column))
    return found
