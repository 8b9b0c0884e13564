"""Filters Spark infers through equalities: ``InferFiltersFromConstraints``.

A port of Spark's constraint propagation as it bears on a join (``QueryPlanConstraints``,
``ConstraintHelper.inferAdditionalConstraints``, ``InferFiltersFromConstraints``):

- A plan node's *constraints* are predicates true of every row it outputs.  A join input's
  are the filters below the join (the pushed conjuncts, in the layers Spark leaves them:
  below the input's watermark node, then above it), each layer adding what one step of
  inference finds (``constraints = valid + inferAdditionalConstraints(valid)``).
- The join's base set is both inputs' constraints and the conjuncts left in its condition;
  ``inferAdditionalConstraints`` adds, for each equality between two columns ``a = b`` of
  the set, every other predicate with ``a`` replaced by ``b`` and with ``b`` replaced by
  ``a``; for ``CAST(a AS T) = b`` (a type coercion, or a written cast) only ``b`` is
  replaced, by ``CAST(a AS T)``.  One step, no closure; ``a = b + 1``, ``a <=> b`` and
  ``IS NOT NULL`` predicates infer nothing.
- Each input that the join type lets Spark filter (``JoinKind.infers_not_null``: both for
  inner and left semi, the left for right outer, the right for left outer and left anti,
  none for full outer) gets every deterministic predicate of the result that reads only its
  columns and is not already one of its constraints.  Spark pushes it below the join like
  the written conjuncts (split at the watermark node by ``PushPredicateThroughNonJoin``).

The join condition, and with it the state watermarks Spark derives from it, is unchanged:
the inferred filters only drop, before the join, rows that cannot match.  Two predicates
are the same constraint when they are equal up to operand order of commutative operators
and ``a > b`` / ``b < a`` (Spark's canonical forms), which ``key`` captures.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from sqlglot import exp

from ..vocabulary import annotate
from ..vocabulary import types as t
from ..vocabulary.expr import copy_tree, find_all, strip_parens
from .split import is_deterministic

# operators whose operands Spark's canonical form orders (``Canonicalize.reorderCommutative``)
_COMMUTATIVE = (exp.EQ, exp.NEQ, exp.NullSafeEQ, exp.Add, exp.Mul, exp.And, exp.Or)
_FLIPPED = {exp.GT: exp.LT, exp.GTE: exp.LTE}

# a type coercion Spark's analyzer writes as one CAST of the narrower column (so that the
# equality is ``CAST(a AS T) = b``): integral and floating widening, DATE to TIMESTAMP
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_FLOATING = ("float", "double")


def key(node: exp.Expr, source: str | None = None, target: str | None = None) -> str:
    """A predicate's identity as a constraint: columns by side and name, commutative
    operands sorted, ``>``/``>=`` written as ``<``/``<=`` (Spark's ``semanticEquals``).
    With ``source`` and ``target``: the identity of the predicate with each column whose
    identity is ``source`` replaced by the expression whose identity is ``target``."""
    node = strip_parens(node)  # type: ignore[arg-type]
    if isinstance(node, exp.Column):
        found = f"{annotate.side(node)}:{node.name!r}"
        return target if target is not None and found == source else found
    if isinstance(node, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
        a, b = key(node.this, source, target), key(node.expression, source, target)
        flip = _FLIPPED.get(type(node))
        if flip is not None:
            return f"{flip.__name__}({b},{a})"
        return f"{type(node).__name__}({a},{b})"
    if isinstance(node, _COMMUTATIVE):
        operands = sorted(key(v, source, target) for v in (node.this, node.expression))
        return f"{type(node).__name__}({','.join(operands)})"
    parts = []
    for name, value in node.args.items():
        if isinstance(value, exp.Expr):
            parts.append(f"{name}={key(value, source, target)}")
        elif isinstance(value, list):
            items = (key(v, source, target) if isinstance(v, exp.Expr) else repr(v) for v in value)
            parts.append(f"{name}=[{','.join(items)}]")
        elif value is not None and value is not False:
            parts.append(f"{name}={value!r}")
    return f"{type(node).__name__}({','.join(parts)})"


def is_not_null_test(node: exp.Expression) -> bool:
    """``x IS NOT NULL`` (or ``NOT (x IS NULL)``, which Spark simplifies to it): Spark
    substitutes into no ``IsNotNull`` (its not-null filters are inferred apart)."""
    node = strip_parens(node)
    if not isinstance(node, exp.Not):
        return False
    inner = strip_parens(node.this)
    return isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null)


@dataclass(frozen=True)
class _Rewrite:
    """Replace every ``source`` column by ``target`` (a column, or a CAST of one)."""

    source: str  # key() of the column replaced
    target: exp.Expression


def _coerced(a: exp.Column, b: exp.Column) -> tuple[exp.Expression, exp.Expression] | None:
    """The two operands of ``a = b`` as Spark's analyzer leaves them: each column not of the
    type they are compared as under one CAST to it (checked on Spark 4.3: ``CAST(i AS
    DOUBLE) = x``, ``CAST(d AS TIMESTAMP) = t``, ``CAST(i AS DECIMAL(12,2)) = dc``); None
    when the types do not compare."""
    ta, tb = annotate.sql_type(a), annotate.sql_type(b)
    if ta is None or tb is None or ta == tb:
        return a, b
    wide = compared_as(ta, tb)
    if wide is None:
        return None
    return (a if ta == wide else _cast(a, wide)), (b if tb == wide else _cast(b, wide))


_DECIMAL_OF = {"tinyint": (3, 0), "smallint": (5, 0), "int": (10, 0), "bigint": (20, 0)}


def compared_as(a: t.SqlType, b: t.SqlType) -> t.SqlType | None:
    """The type Spark's type coercion compares two different types as (the wider numeric
    type; ``DecimalPrecision.widerDecimalType`` for decimals, an integral type being the
    DECIMAL of its digits; TIMESTAMP for a DATE and a TIMESTAMP), None when not comparable."""
    names = {a.name, b.name}
    if names <= set(_INTEGRAL):
        return a if _INTEGRAL.index(a.name) >= _INTEGRAL.index(b.name) else b
    if names <= {*_INTEGRAL, *_FLOATING, "decimal"}:
        if "double" in names or ("decimal" in names and "float" in names):
            return t.DOUBLE
        if "float" in names:
            return t.SqlType("float")
        (p1, s1), (p2, s2) = (_DECIMAL_OF.get(x.name) or x.params for x in (a, b))
        scale = max(s1, s2)
        return t.SqlType("decimal", (min(max(p1 - s1, p2 - s2) + scale, 38), min(scale, 38)))
    if names == {"date", "timestamp"}:
        return t.TIMESTAMP
    return None


def _cast(column: exp.Column, to: t.SqlType) -> exp.Expression:
    node = exp.Cast(this=copy_tree(column), to=to.to_sqlglot())
    annotate.set_type(node, to)
    return node


def _rewrites(predicate: exp.Expression) -> list[_Rewrite]:
    """What one equality lets Spark substitute (``inferAdditionalConstraints``' cases)."""
    node = strip_parens(predicate)
    if not isinstance(node, exp.EQ):
        return []
    a, b = strip_parens(node.this), strip_parens(node.expression)
    if isinstance(a, exp.Column) and isinstance(b, exp.Column):
        coerced = _coerced(a, b)
        if coerced is None or coerced[0] is not a or coerced[1] is not b:
            return []  # Spark casts one or both: see coerced_equality
        return [_Rewrite(key(a), b), _Rewrite(key(b), a)]  # EqualTo(a, b): both ways
    for cast, column in ((a, b), (b, a)):  # EqualTo(CAST(x AS T), y): only y is replaced
        if (
            isinstance(cast, exp.Cast)
            and isinstance(column, exp.Column)
            and isinstance(strip_parens(cast.this), exp.Column)
            and annotate.sql_type(cast) is not None
            and annotate.sql_type(cast) == annotate.sql_type(column)
        ):
            return [_Rewrite(key(column), cast)]
    return []


def _substituted(predicate: exp.Expression, rewrite: _Rewrite) -> exp.Expression:
    """A copy of ``predicate`` with every ``rewrite.source`` column replaced."""
    copy = copy_tree(predicate)
    for column in find_all(copy, exp.Column):
        if key(column) == rewrite.source:
            replacement = copy_tree(rewrite.target)
            if column is copy:
                return replacement
            column.replace(replacement)
    return copy


def coerced_equality(predicate: exp.Expression) -> exp.Expression:
    """An equality between two columns of different types as Spark's analyzer writes it,
    with the CAST its type coercion adds (``L.i = R.k`` is ``CAST(L.i AS BIGINT) = R.k``),
    so that what is substituted into it, and its identity, are Spark's; else as it is."""
    node = strip_parens(predicate)
    if not isinstance(node, exp.EQ):
        return predicate
    a, b = strip_parens(node.this), strip_parens(node.expression)
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
        return predicate
    coerced = _coerced(a, b)
    if coerced is None or (coerced[0] is a and coerced[1] is b):
        return predicate
    out = exp.EQ(this=coerced[0], expression=coerced[1])
    annotate.copy_column(out, node)  # the equality's own annotations (its type, its span)
    return out


@dataclass(frozen=True)
class _Entry:
    predicate: exp.Expression
    columns: frozenset[str]  # key() of each column it reads


class ConstraintSet:
    """Predicates by identity (``key``), in the order they were added."""

    def __init__(self, items: Iterable[exp.Expression] = ()) -> None:
        self.entries: dict[str, _Entry] = {}
        for item in items:
            self.add(item)

    def add(self, item: exp.Expression, known: str | None = None) -> None:
        """Add ``item`` (``known``: its key, when the caller has it)."""
        item = coerced_equality(item) if known is None else item
        k = key(item) if known is None else known
        if k not in self.entries:
            columns = frozenset(key(c) for c in find_all(item, exp.Column))
            self.entries[k] = _Entry(item, columns)

    def union(self, other: ConstraintSet) -> ConstraintSet:
        out = ConstraintSet()
        out.entries = {**self.entries, **other.entries}
        for k, entry in self.entries.items():  # first come first: this set's entries win
            out.entries[k] = entry
        return out

    def __contains__(self, item: str) -> bool:
        return item in self.entries

    def __iter__(self) -> Iterator[exp.Expression]:
        return (e.predicate for e in self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)


class TooManyConstraints(Exception):
    """The substitutions would pass ``MAX_SUBSTITUTIONS`` (``limits``)."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


def infer_step(constraints: ConstraintSet, budget: list[int]) -> ConstraintSet:
    """``constraints + inferAdditionalConstraints(constraints)``: one step of substitution
    through each equality between columns.  ``budget`` (one mutable count) bounds the
    substitutions over a whole plan; passing it raises ``TooManyConstraints`` before the
    work."""
    predicates = [
        (k, e) for k, e in constraints.entries.items() if not is_not_null_test(e.predicate)
    ]
    by_column: dict[str, list[int]] = {}
    for i, (_, entry) in enumerate(predicates):
        for c in entry.columns:
            by_column.setdefault(c, []).append(i)
    plans = [(i, r) for i, (_, e) in enumerate(predicates) for r in _rewrites(e.predicate)]
    needed = sum(len(by_column.get(r.source, ())) - 1 for _, r in plans)
    if needed > budget[0]:
        raise TooManyConstraints(needed)
    budget[0] -= needed
    out = ConstraintSet()
    out.entries = dict(constraints.entries)
    for i, rewrite in plans:
        target = key(rewrite.target)
        for j in by_column.get(rewrite.source, ()):
            if j != i:
                predicate = predicates[j][1].predicate
                k = key(predicate, rewrite.source, target)
                if k not in out.entries:
                    out.add(_substituted(predicate, rewrite), k)
    return out


@dataclass(frozen=True)
class SideConstraints:
    """What Spark knows of one join input's rows: the constraints of the relation it reads
    (``constraints.relation_constraints``), then the filters pushed below this join, layer
    by layer (below the watermark node, above it)."""

    inherited: tuple[exp.Expression, ...] = ()
    layers: tuple[tuple[exp.Expression, ...], ...] = ()

    def constraints(self, budget: list[int]) -> ConstraintSet:
        known = ConstraintSet(self.inherited)
        for layer in self.layers:
            if layer:
                known = infer_step(known.union(ConstraintSet(layer)), budget)
        return known


def inferred_filters(
    condition: Sequence[exp.Expression],
    left: SideConstraints,
    right: SideConstraints,
    filtered_sides: Sequence[str],
    budget: list[int],
) -> dict[str, tuple[exp.Expression, ...]]:
    """The filters ``InferFiltersFromConstraints`` adds below a join, per side: for each
    side in ``filtered_sides``, the deterministic predicates of the join's inferred
    constraints that read only that side and are not already its constraints.
    ``condition``: the conjuncts left in the join (keys, leftOnly, rightOnly, both)."""
    known = {"left": left.constraints(budget), "right": right.constraints(budget)}
    base = known["left"].union(known["right"])
    base = base.union(ConstraintSet(p for p in condition if is_deterministic(p)))
    everything = infer_step(base, budget)
    found: dict[str, tuple[exp.Expression, ...]] = {"left": (), "right": ()}
    for side in filtered_sides:
        prefix = f"{side}:"
        found[side] = tuple(
            entry.predicate
            for k, entry in everything.entries.items()
            if k not in known[side]
            and entry.columns
            and all(c.startswith(prefix) for c in entry.columns)
            and is_deterministic(entry.predicate)
            and not is_not_null_test(entry.predicate)
            and not any(annotate.window_of(c) for c in find_all(entry.predicate, exp.Column))
        )
    return found
