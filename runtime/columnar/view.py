"""A view on frames (the reference's ``runtime/engine/view.py``): its WHERE's conjuncts below and
above its input's watermark node (``join.SideFilters.apply``, as a join side's filters), the
node's observation of the frame, then the projection: an output that is an input column is
that polars column, any other is computed by the reference evaluator per row, as the
columnar join computes its outputs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from ...compiler.planning.plan import ViewNode
from ...compiler.vocabulary.types import SqlType
from ..engine.batches import Batch, Frame
from ..engine.eval import Getter, column_slot, compile_expr
from ..engine.late import Dropped
from ..engine.view import ViewMetrics, view_layout
from ..engine.watermark import WatermarkNode
from .frames import as_frame
from .join import SideFilters, observe
from .windows import join_dtype, rows_of, window_series


class ColumnarView:
    """One ``view`` of the plan, run batch after batch on frames (``operators.Operator``)."""

    def __init__(self, node: ViewNode, columns: Sequence[tuple[str, SqlType]], ansi: bool) -> None:
        self.node = node
        self.kinds = [kind for _, kind in columns]
        self.width = len(columns)
        layout = view_layout([(name, kind.name) for name, kind in columns])
        index = {name: i for i, (name, _) in enumerate(columns)}
        self.below: list[Getter | int] = [
            *(compile_expr(p, layout, ansi=ansi) for p in node.filters_below_watermark),
            *(index[n] for n in node.not_null_below_watermark),
        ]
        self.above: list[Getter | int] = [
            compile_expr(p, layout, ansi=ansi) for p in node.filters_above_watermark
        ]
        self.input_windows = [i for i, kind in enumerate(self.kinds) if kind.name == "window"]
        self.outputs: list[tuple[tuple[int, int] | None, Getter, Any]] = []
        for o in node.output:
            getter = compile_expr(o.expr, layout, ansi=ansi)
            self.outputs.append((column_slot(getter), getter, join_dtype(o.type)))
        self.output_windows = [j for j, o in enumerate(node.output) if o.type.name == "window"]
        self.late_rows: list[Dropped] | None = None

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Batch, ViewMetrics]:
        """``Operator.step`` on frames: the input's frame filtered below its watermark node,
        observed by it, filtered above it, and projected."""
        (batch,), (mark,) = inputs, watermarks
        frame = SideFilters.apply(as_frame(batch, self.kinds), self.below)
        if mark is not None:
            observe(mark, frame)
        frame = SideFilters.apply(frame, self.above)
        return Frame(self._project(frame), tuple(self.output_windows)), ViewMetrics()

    def _project(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Output columns c0.. of the input's columns c0.."""
        computed: dict[int, pl.Series] = {}
        wanted = [(j, g) for j, (s, g, _) in enumerate(self.outputs) if s is None]
        if wanted:
            rows = rows_of(frame, [f"c{i}" for i in range(self.width)], self.input_windows)
            for j, g in wanted:
                values = [g(r, None) for r in rows]
                computed[j] = (
                    window_series(f"c{j}", values)
                    if j in self.output_windows
                    else pl.Series(f"c{j}", values, dtype=self.outputs[j][2], strict=True)
                )
        exprs: list[Any] = []
        for j, (s, _, dtype) in enumerate(self.outputs):
            if s is not None:
                exprs.append(pl.col(f"c{s[1]}").cast(dtype).alias(f"c{j}"))
            else:
                exprs.append(pl.lit(computed[j]).alias(f"c{j}"))
        if not exprs:
            return pl.DataFrame()
        return frame.select(exprs)

    def has_state_predicate(self) -> bool:
        return False

    def state_watermark(self, input_ms: int) -> int:
        return input_ms

    def snapshot(self) -> dict[str, Any]:
        return {}

    def restore(self, data: dict[str, Any]) -> None:
        """A view has no state to restore."""
