"""The columnar engine's queries: the reference ``Query`` and ``Engine`` (batch scheduling,
no-data batches, watermarks, batch ids, checkpoints), with each join and aggregate that the
columnar operators support run on them (``ColumnarJoin``, ``ColumnarAggregate``) and fed
frames.

A relation's rows in a batch are a frame (columns ``c0..``) when they come from a columnar
join, a columnar aggregate whose outputs all have a columnar type, or the bulk trace reader,
else the reference's list of tuples (e.g. an aggregate that outputs a ``window()``); each
operator gets the form it runs on (``frames.as_frame`` / ``as_rows``, exact both ways; the
columnar aggregate takes either).  An operator that is not columnar (one that
``support.operator_unsupported`` names) runs the reference
operator; ``Engine.fallbacks`` says which and why (``sjoin run --verbose`` prints them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import polars as pl

from sjoin.compiler.plan import AggregateNode, JoinNode, Plan, Side

from ..aggregate import AggregateMetrics
from ..eval import Getter, Layout, compile_expr
from ..join import JoinMetrics
from ..query import Engine, Query, columns_of
from ..watermark import WatermarkNode
from .aggregate import ColumnarAggregate
from .frames import as_frame, as_rows
from .join import ColumnarJoin
from .spark_rules_vec import observed_max_ms_vec
from .support import operator_unsupported

Row = tuple[Any, ...]


class _SideFilters:
    """A side's filters below and above its watermark node, on frames (the reference's
    ``SideInput`` without windows: a join with windows is not columnar).  Each filter runs on
    the rows the previous ones kept, in the reference's order."""

    def __init__(self, side: Side, ansi: bool) -> None:
        columns = [(c.name, c.type.name) for c in side.columns]
        layout = Layout.of((side.name, columns))
        index = {name: i for i, (name, _) in enumerate(columns)}
        self.below: list[Getter | int] = [
            *(compile_expr(p, layout, ansi=ansi) for p in side.filters_below_watermark),
            *(index[n] for n in side.not_null_below_watermark),
        ]
        self.above: list[Getter | int] = [
            *(compile_expr(p, layout, ansi=ansi) for p in side.filters_above_watermark),
            *(index[n] for n in side.not_null_above_watermark),
        ]

    @staticmethod
    def apply(frame: pl.DataFrame, tests: Sequence[Getter | int]) -> pl.DataFrame:
        for test in tests:
            if frame.height == 0:
                return frame
            if isinstance(test, int):
                frame = frame.filter(pl.col(f"c{test}").is_not_null())
            else:
                keep = [test(row, None) is True for row in frame.rows()]
                frame = frame.filter(pl.Series(keep, dtype=pl.Boolean))
        return frame


def observe(node: WatermarkNode, frame: pl.DataFrame) -> None:
    """``WatermarkNode.observe`` of a frame (``spark_rules_vec.observed_max_ms_vec``)."""
    node.observe_max(observed_max_ms_vec(frame.get_column(f"c{node.time_index}")))


class ColumnarQuery(Query):
    """A ``Query`` whose supported joins run on ``ColumnarJoin`` and supported aggregates on
    ``ColumnarAggregate``."""

    def __init__(self, plan: Plan, root: str, outputs: Sequence[str]) -> None:
        super().__init__(plan, root, outputs)
        self.kinds = {n.name: [k for _, k in columns_of(n)] for n in self.nodes}
        self.fallbacks: dict[str, str] = {}
        self.filters: dict[str, tuple[_SideFilters, _SideFilters]] = {}
        for node in self.nodes:
            reason = operator_unsupported(plan, node.name)
            if reason is not None:
                self.fallbacks[node.name] = reason
            elif isinstance(node, AggregateNode):
                source = plan.node(node.input)
                assert source is not None
                # AggregateOperator's interface (process, snapshot, restore,
                # has_state_predicate) on frames
                self.operators[node.name] = cast(
                    Any, ColumnarAggregate(node, columns_of(source), plan.ansi)
                )
            elif isinstance(node, JoinNode):
                # ColumnarJoin has JoinOperator's interface (process, snapshot, restore,
                # has_state_predicate, state_watermark) on frames
                self.operators[node.name] = cast(Any, ColumnarJoin(node, plan.ansi))
                self.filters[node.name] = (
                    _SideFilters(node.left, plan.ansi),
                    _SideFilters(node.right, plan.ansi),
                )

    def _process(
        self,
        node: JoinNode | AggregateNode,
        produced: Mapping[str, Any],
        late: int | None,
        evict: int | None,
    ) -> tuple[Any, JoinMetrics | AggregateMetrics]:
        op = self.operators[node.name]
        if isinstance(node, JoinNode) and isinstance(op, ColumnarJoin):
            frames = []
            for side, filters in zip((node.left, node.right), self.filters[node.name], strict=True):
                frame = as_frame(produced[side.relation], self.kinds[side.relation])
                below = filters.apply(frame, filters.below)
                wm_node = self.node_of_input.get((node.name, side.name))
                if wm_node is not None:
                    observe(wm_node, below)
                frames.append(filters.apply(below, filters.above))
            return op.process(frames[0], frames[1], late, evict)
        if isinstance(node, AggregateNode) and isinstance(op, ColumnarAggregate):
            source = produced[node.input]
            wm_node = self.node_of_input.get((node.name, "input"))
            if wm_node is not None:
                if isinstance(source, pl.DataFrame):
                    observe(wm_node, source)
                else:
                    wm_node.observe(source)
            return op.process(source, late, evict)
        return super()._process(node, produced, late, evict)  # a fallback: fed rows

    def _rows(self, value: Any) -> Sequence[Row]:
        return as_rows(value)

    def _output_value(self, value: Any) -> Any:
        return value if isinstance(value, pl.DataFrame) else list(value)


class ColumnarEngine(Engine):
    """The reference ``Engine`` with ``ColumnarQuery`` queries."""

    query_class = ColumnarQuery

    @property
    def fallbacks(self) -> dict[str, str]:
        """Operator -> why it runs on the reference operator."""
        found: dict[str, str] = {}
        for q in self.queries:
            assert isinstance(q, ColumnarQuery)
            found.update(q.fallbacks)
        return found
