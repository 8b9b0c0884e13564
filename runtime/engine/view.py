"""A view on rows: Spark's Filter and Project of one relation, stateless.

Its WHERE's conjuncts run in the plan's order: those below the input's watermark node
(``ViewNode.filters_below_watermark``), the node's observation, those above it; then each
output expression per kept row.  No state, no late rows, no metrics of its own: the
watermark it passes on is its input's (a stateless node of Spark's
``PropagateWatermarkSimulator``: the minimum of its inputs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlglot import exp

from ...compiler.planning.plan import AggregateNode, OutputColumn, ViewNode
from ...compiler.vocabulary import annotate
from ...compiler.vocabulary.source import Span
from ...compiler.vocabulary.types import SqlType
from .batches import Batch, Rows
from .eval import Getter, Layout, compile_expr
from .late import Dropped
from .watermark import WatermarkNode

Row = tuple[Any, ...]


@dataclass(slots=True)
class ViewMetrics:
    """A view keeps no state: every count is 0 (``Operator.step`` returns metrics)."""

    num_rows_total: int = 0
    num_rows_updated: int = 0
    num_rows_removed: int = 0
    num_rows_dropped_by_watermark: int = 0


def view_layout(columns: Sequence[tuple[str, str]]) -> Layout:
    """The layout the view's expressions read: its input's columns, as input ``input``."""
    return Layout.of(("input", list(columns)))


def _true_of(f: Getter) -> Callable[[Row], bool]:
    return lambda row: f(row, None) is True


def _not_null_at(i: int) -> Callable[[Row], bool]:
    return lambda row: row[i] is not None


class ViewObserver(Protocol):
    """What a view tells an observer (``runtime/observe/lineage.py``, `sjoin why`): its input
    rows, the rows each of its tests dropped (``stage`` ``below`` or ``above`` the watermark
    node, ``index`` the test's place in ``ViewOperator.below`` or ``above``: the plan's
    conjuncts in order, then its isnotnull filters), and each kept row's output row."""

    def arrived(self, rows: Sequence[Row]) -> None: ...

    def filtered(
        self, rows: Sequence[Row], kept: Sequence[Row], stage: str, index: int
    ) -> None: ...

    def projected(self, rows: Sequence[Row], out: Sequence[Row]) -> None: ...


class ViewOperator:
    """One ``view`` of the plan, run batch after batch on rows (``operators.Operator``)."""

    def __init__(
        self,
        node: ViewNode,
        columns: Sequence[tuple[str, str]],
        ansi: bool,
        keep_rows: bool = False,
    ) -> None:
        self.node = node
        # an aggregate's WHERE (``aggregate_filter``): the kept rows pass as they are, each
        # the same row object (``sjoin why`` knows a row by identity), unprojected
        self.keep_rows = keep_rows
        layout = view_layout(columns)
        index = {name: i for i, (name, _) in enumerate(columns)}
        self.below = [
            *(_true_of(compile_expr(p, layout, ansi=ansi)) for p in node.filters_below_watermark),
            *(_not_null_at(index[n]) for n in node.not_null_below_watermark),
        ]
        self.above = [
            _true_of(compile_expr(p, layout, ansi=ansi)) for p in node.filters_above_watermark
        ]
        self.outputs = [compile_expr(o.expr, layout, ansi=ansi) for o in node.output]
        self.late_rows: list[Dropped] | None = None
        self.observer: ViewObserver | None = None  # `sjoin why`'s (None: a normal run)

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Batch, ViewMetrics]:
        """``Operator.step``: the input's rows filtered below its watermark node, observed by
        it, filtered above it, and projected."""
        (batch,), (mark,) = inputs, watermarks
        observer = self.observer
        rows: Sequence[Row] = batch.to_rows()
        if observer is not None:
            observer.arrived(rows)
        for i, test in enumerate(self.below):
            kept = [r for r in rows if test(r)]
            if observer is not None and len(kept) != len(rows):
                observer.filtered(rows, kept, "below", i)
            rows = kept
        if mark is not None:
            mark.observe(rows)
        for i, test in enumerate(self.above):
            kept = [r for r in rows if test(r)]
            if observer is not None and len(kept) != len(rows):
                observer.filtered(rows, kept, "above", i)
            rows = kept
        if self.keep_rows:
            return Rows(list(rows)), ViewMetrics()
        outputs = self.outputs
        out = [tuple(g(r, None) for g in outputs) for r in rows]
        if observer is not None:
            observer.projected(rows, out)
        return Rows(out), ViewMetrics()

    def has_state_predicate(self) -> bool:
        return False

    def state_watermark(self, input_ms: int) -> int:
        return input_ms

    def snapshot(self) -> dict[str, Any]:
        return {}

    def restore(self, data: dict[str, Any]) -> None:
        """A view has no state to restore."""


def aggregate_filter(
    node: AggregateNode, columns: Sequence[tuple[str, SqlType]]
) -> ViewNode | None:
    """The WHERE an aggregate runs itself (its plan's ``AggregateWhere``; None: it has none,
    or the plan pushed it into the join or view below), as the view of its input that runs
    those conjuncts where the plan put them and keeps every column: the view operators of
    both engines run it before the aggregate groups (``aggregate_core.StreamingAggregate``)."""
    where = node.where
    if where is None or where.pushed_into is not None:
        return None
    output = []
    for name, kind in columns:
        column = exp.column(name, node.alias)
        annotate.set_column(column, side="input", event_time=False, relation=node.input)
        annotate.set_type(column, kind)
        output.append(OutputColumn(name, column, kind, False))
    return ViewNode(
        name=node.name,
        input=node.input,
        alias=node.alias,
        where=where.condition,
        output=tuple(output),
        name_span=Span(0, 0),  # no statement of its own
        filters_below_watermark=where.filters_below_watermark,
        filters_above_watermark=where.filters_above_watermark,
        not_null_below_watermark=where.not_null_below_watermark,
    )
