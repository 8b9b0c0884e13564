"""The filters a view's one reader pushes into it, as Spark's optimizer pushes them.

Spark pushes the filters a join runs before it on one side (the conjuncts of its condition
over that side, the filters ``InferFiltersFromConstraints`` adds there, its ``isnotnull``
filters: ``PushPredicateThroughJoin``) and a view's WHERE (``PushPredicateThroughNonJoin``)
down through the Project of the view they read, the view's own Filter (``CombineFilters``),
and below the stream's ``EventTimeWatermark`` when they do not read its watermarked column.
There they decide which rows the watermark node observes: a right row that the join's
``R.g = L.g`` rejects for its NULL ``g`` never advances the stream's watermark (seen on
Spark 4.3.0 and 3.5 in the parity scenarios ``join_filter_pushed_into_a_view``,
``join_not_null_pushed_into_a_view`` and ``view_over_a_view_over_a_stream``; found by
tests/integration/parity/test_random.py).

sjoin keeps one node per view, so it pushes only where Spark's one plan of the view gets
them all: a view that exactly one operator reads, that heads no query of its own (a sink,
or nothing reads it), whose outputs are all deterministic and no window (Spark substitutes
them into the filter) and whose WHERE is deterministic (``CombineFilters`` merges a Filter
only into a deterministic one); a non-deterministic filter of the reader stays above, as
Spark keeps it in a Filter of its own.  The reader still runs its filters too: they keep
the same rows, so running them twice changes nothing.  A dedup or aggregate below stops
the filters (Spark pushes nothing through a Deduplicate or an Aggregate); a union below
gets a view's filters from ``push_into_unions``; an aggregate's WHERE is pushed on the
bound spec already (``Planner._pushed_wheres``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace

from sqlglot import exp

from ..binding.bound import BoundSpec, View
from ..vocabulary import annotate
from ..vocabulary import types as t
from ..vocabulary.expr import strip_parens
from .infer import is_not_null_test
from .plan import JoinNode, PlanNode, StaticJoinNode, StreamNode, ViewNode
from .split import conjoin, is_deterministic

# re-plans a view with the WHERE given (its own and what is pushed into it, in that order)
Replan = Callable[[View, exp.Expression], ViewNode]
# a WHERE over a projection's output, rewritten over its input (None: Spark does not push)
Through = Callable[[exp.Expression, View], exp.Expression | None]


def push_into_views(
    spec: BoundSpec,
    nodes: list[PlanNode],
    roots: Collection[str],
    replan: Replan,
    through: Through,
) -> list[PlanNode]:
    """``nodes`` with each view that one operator reads re-planned with that reader's
    filters on it after its own WHERE; readers first, so a view's pushed filters reach the
    view below it."""
    by_name: dict[str, PlanNode] = {n.name: n for n in nodes}
    readers: dict[str, list[str]] = {}
    for n in nodes:
        for _, relation in n.inputs:
            readers.setdefault(relation, []).append(n.name)
    for n in reversed(nodes):
        if not isinstance(n, ViewNode) or n.name in roots:
            continue
        found = readers.get(n.name, [])
        if len(found) != 1:
            continue
        view = spec.relation(n.name)
        assert isinstance(view, View)
        if view.where is not None and not is_deterministic(view.where):
            # CombineFilters merges a Filter into the one below only when that one is
            # deterministic: the view's non-deterministic conjunct stops what comes from above
            continue
        filters, names = _pushed_by(by_name[found[0]], n.name)
        # a non-deterministic conjunct stays above, in a Filter of its own (CombineFilters)
        filters = [f for f in filters if is_deterministic(f)]
        parts = [*filters, *(_not_null(name, n) for name in names)]
        through_parts = [p for part in parts if (p := through(part, view)) is not None]
        if not parts or len(through_parts) != len(parts):
            continue  # Spark pushes a Filter through a Project whole, or not at all
        marked = _marked_column(n, by_name.get(n.input))
        pushed = through_parts[: len(filters)]
        not_null: list[str] = []
        for part in through_parts[len(filters) :]:
            plain = _plain_not_null(part)
            if plain is None:
                pushed.append(part)  # isnotnull of a computed column, pushed as it is
            elif plain != marked:  # one on the watermarked column stays above it
                not_null.append(plain)
        if not pushed and not not_null:
            continue
        where = conjoin([*([] if view.where is None else [view.where]), *pushed])
        planned = n if where is None or not pushed else replan(view, where)
        by_name[n.name] = replace(
            planned,
            where=view.where,
            not_null_below_watermark=tuple(
                dict.fromkeys([*planned.not_null_below_watermark, *not_null])
            ),
            pushed_from=found[0],
        )
    return [by_name[n.name] for n in nodes]


def _plain_not_null(part: exp.Expression) -> str | None:
    """The column of ``NOT column IS NULL`` (a plain column's isnotnull), else None."""
    if not is_not_null_test(part):
        return None
    inner = strip_parens(strip_parens(part).this.this)
    return inner.name if isinstance(inner, exp.Column) else None


def _marked_column(view: ViewNode, source: PlanNode | None) -> str | None:
    """The column of the watermark node right below the view's filters, if any."""
    if view.input_watermark is not None:
        return view.input_watermark.column
    return source.watermark_column if isinstance(source, StreamNode) else None


def _pushed_by(reader: PlanNode, relation: str) -> tuple[list[exp.Expression], list[str]]:
    """The filters ``reader`` runs on its input ``relation`` that Spark pushes below it (over
    the reader's names for that input's columns: a join side's alias, a view's), and the
    columns its isnotnull filters read.  Those above a watermark node the reader defines on
    that input stay above it."""
    if isinstance(reader, JoinNode):
        filters: list[exp.Expression] = []
        names: list[str] = []
        for side in (reader.left, reader.right):
            if side.relation == relation:
                filters += side.filters_below_watermark
                names += side.not_null_below_watermark
        return filters, names
    if isinstance(reader, StaticJoinNode):
        if reader.stream.relation != relation:
            return [], []
        return list(reader.filters_below_watermark), list(reader.not_null_below_watermark)
    if isinstance(reader, ViewNode):
        return list(reader.filters_below_watermark), list(reader.not_null_below_watermark)
    return [], []


def _not_null(name: str, view: ViewNode) -> exp.Expression:
    """``name IS NOT NULL`` over the view's output column ``name``, typed as the binder
    types it."""
    column = exp.column(name)
    out = next(o for o in view.output if o.name == name)
    annotate.set_column(column, side="input", event_time=out.event_time, kind=out.type)
    test = exp.Is(this=column, expression=exp.Null())
    annotate.set_type(test, t.BOOLEAN)
    negated = exp.Not(this=test)
    annotate.set_type(negated, t.BOOLEAN)
    return negated
