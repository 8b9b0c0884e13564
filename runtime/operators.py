"""The one seam between the plan and the engines: whether each join and aggregate of the
plan runs columnar is decided here once (``place``: a ``Placement`` per operator, from the
plan alone and without polars), and ``make_operator`` builds the operator an engine runs for
it behind the ``Operator`` protocol, which the reference operators (``join.JoinOperator``,
``aggregate.AggregateOperator``) and the columnar ones (``columnar/join.ColumnarJoin``,
``columnar/aggregate.ColumnarAggregate``) satisfy alike.  ``choose_engine`` counts the
columnar placements, the query builds its operators from them, and ``Engine.fallbacks``
(``sjoin run --verbose``) reads their reasons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import singledispatch
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..compiler.planning.plan import (
    OPERATOR_KINDS,
    AggregateNode,
    DedupNode,
    JoinNode,
    OperatorNode,
    Plan,
    PlanNode,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..compiler.vocabulary.types import SqlType
from .engine.aggregate_core import AggregateMetrics
from .engine.batches import Batch
from .engine.dedup_core import DedupMetrics
from .engine.late import Dropped
from .engine.view import ViewMetrics, ViewOperator, aggregate_filter
from .engine.watermark import WatermarkNode
from .rows.aggregate import AggregateOperator
from .rows.join import JoinMetrics, JoinOperator

if TYPE_CHECKING:
    from .columnar.view import ColumnarView

EngineName = Literal["columnar", "reference"]
ENGINES: tuple[EngineName, ...] = ("columnar", "reference")
Metrics = JoinMetrics | AggregateMetrics | DedupMetrics | ViewMetrics
StepNode = OperatorNode | ViewNode  # what a query runs an operator for: not streams, unions
STEP_KINDS = (*OPERATOR_KINDS, ViewNode)  # isinstance's form of StepNode


def columns_of(node: PlanNode) -> list[tuple[str, str]]:
    """A relation's row layout (``Plan.columns_of``), for ``runtime/observe/lineage.py``, which
    reads it here until its rewrite (issue 36) reads the plan's."""
    return list(node.layout)


class Operator(Protocol):
    """What a query runs for one join, aggregate or view, on either engine."""

    # the rows ``step`` drops as late, kept only when a run asks (``late.py``): None, or a
    # list the query empties after each batch
    late_rows: list[Dropped] | None

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Batch, Metrics]:
        """One micro-batch: each input's batch (``Plan.inputs_of`` order) filtered, observed by
        its watermark node (None: none) and run; the output batch and the metrics."""
        ...

    def has_state_predicate(self) -> bool: ...

    def state_watermark(self, input_ms: int) -> int:
        """The watermark the operator passes downstream, from its input watermark."""
        ...

    def snapshot(self) -> dict[str, Any]: ...

    def restore(self, data: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class Placement:
    """Where one operator runs: ``unsupported`` says why not columnar (None: it runs
    columnar on the columnar engine); ``aggregate`` is a columnar aggregate's plan
    (``columnar.support.AggregatePlan``), worked out once with the decision."""

    name: str
    unsupported: str | None
    aggregate: Any = None

    @property
    def columnar(self) -> bool:
        return self.unsupported is None


def placement(plan: Plan, node: StepNode) -> Placement:
    """The decision for one operator (``columnar/support.py``'s rules; no polars)."""
    return _placement(node, plan)


@singledispatch
def _placement(node: PlanNode, plan: Plan) -> Placement:
    raise TypeError(f"no operator runs for a {type(node).__name__} ({node.name})")


@_placement.register
def _(node: DedupNode, plan: Plan) -> Placement:
    from .columnar.decimals import relation_unsupported
    from .columnar.support import dedup_unsupported

    # its rows pass through: DECIMALs at scale if its input's
    unfixed = relation_unsupported(plan, node.input)
    reads = None if unfixed is None else f"it reads {unfixed}"
    return Placement(node.name, dedup_unsupported(node) or reads)


@_placement.register
def _(node: ViewNode, plan: Plan) -> Placement:
    from .columnar.decimals import decimal_unsupported

    # its filters and outputs run as a join side's do
    return Placement(node.name, decimal_unsupported(plan, node))


@_placement.register
def _(node: AggregateNode, plan: Plan) -> Placement:
    from .columnar.decimals import decimal_unsupported
    from .columnar.support import aggregate_plan

    found = aggregate_plan(node, plan.columns_of(node.input), plan.ansi)
    if isinstance(found, str):
        return Placement(node.name, found)
    unfixed = decimal_unsupported(plan, node)
    if unfixed is not None:
        return Placement(node.name, unfixed)
    return Placement(node.name, None, found)


@_placement.register
def _(node: JoinNode, plan: Plan) -> Placement:
    from .columnar.decimals import decimal_unsupported
    from .columnar.support import join_unsupported

    return Placement(
        node.name, join_unsupported(node, plan.ansi) or decimal_unsupported(plan, node)
    )


def place(plan: Plan) -> dict[str, Placement]:
    """The decision for every join, aggregate, dedup and view of the plan, in plan order."""
    return {node.name: placement(plan, node) for node in plan.nodes if isinstance(node, STEP_KINDS)}


def typed_columns(plan: Plan, name: str) -> list[tuple[str, SqlType]]:
    """Relation ``name``'s columns with their SQL types (a DECIMAL's with its scale)."""
    node = plan.node(name)
    assert node is not None, name
    return _typed_columns(node)


@singledispatch
def _typed_columns(node: PlanNode) -> list[tuple[str, SqlType]]:
    raise TypeError(f"no typed columns for a {type(node).__name__} ({node.name})")


@_typed_columns.register
def _(node: StreamNode | UnionNode | TableNode) -> list[tuple[str, SqlType]]:
    return [(c.name, c.type) for c in node.columns]


@_typed_columns.register
def _(
    node: JoinNode | AggregateNode | DedupNode | ViewNode | StaticJoinNode,
) -> list[tuple[str, SqlType]]:
    return [(o.name, o.type) for o in node.output]


def make_operator(plan: Plan, node: StepNode, engine: EngineName, where: Placement) -> Operator:
    """The operator ``engine`` runs for ``node``: the columnar one where the engine is
    columnar and ``where`` says the operator runs columnar, else the reference one (only
    then is polars imported)."""
    return _make_operator(node, plan, engine == "columnar" and where.columnar, where)


@singledispatch
def _make_operator(node: PlanNode, plan: Plan, columnar: bool, where: Placement) -> Operator:
    raise TypeError(f"no operator runs for a {type(node).__name__} ({node.name})")


@_make_operator.register
def _(node: DedupNode, plan: Plan, columnar: bool, where: Placement) -> Operator:
    if columnar:
        from .columnar.dedup import ColumnarDedup

        return ColumnarDedup(node)
    from .rows.dedup import DedupOperator

    return DedupOperator(node)


@_make_operator.register
def _(node: ViewNode, plan: Plan, columnar: bool, where: Placement) -> Operator:
    columns = typed_columns(plan, node.input)
    if columnar:
        from .columnar.view import ColumnarView

        return ColumnarView(node, columns, plan.ansi)
    return ViewOperator(node, [(n, k.name) for n, k in columns], plan.ansi)


@_make_operator.register
def _(node: JoinNode, plan: Plan, columnar: bool, where: Placement) -> Operator:
    if columnar:
        from .columnar.join import ColumnarJoin

        return ColumnarJoin(node, plan.ansi)
    return JoinOperator(node, plan.ansi)


@_make_operator.register
def _(node: AggregateNode, plan: Plan, columnar: bool, where: Placement) -> Operator:
    if columnar:
        from .columnar.aggregate import ColumnarAggregate

        found = ColumnarAggregate(node, plan.columns_of(node.input), plan.ansi, where.aggregate)
        found.where = _aggregate_filter(plan, node, columnar=True)
        return found
    aggregate = AggregateOperator(node, plan.columns_of(node.input), plan.ansi)
    aggregate.where = _aggregate_filter(plan, node, columnar=False)
    return aggregate


def _aggregate_filter(
    plan: Plan, node: AggregateNode, columnar: bool
) -> ViewOperator | ColumnarView | None:
    """The aggregate's WHERE where it runs it (``view.aggregate_filter``), by the view
    operator of the aggregate's engine."""
    columns = typed_columns(plan, node.input)
    view = aggregate_filter(node, columns)
    if view is None:
        return None
    if columnar:
        from .columnar.view import ColumnarView

        return ColumnarView(view, columns, plan.ansi)
    return ViewOperator(view, [(n, k.name) for n, k in columns], plan.ansi, keep_rows=True)


def fallbacks(placements: Mapping[str, Placement], names: Sequence[str]) -> dict[str, str]:
    """Operator -> why it runs on the reference operator in a columnar run."""
    return {
        name: where.unsupported
        for name in names
        if (where := placements[name]).unsupported is not None
    }
