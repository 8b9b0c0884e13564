"""A union in a micro-batch (``UnionNode``): its inputs' rows, the first input's then the
next's, as Spark's ``UnionExec`` lists its children's partitions; each stream input with a
watermark observed by a watermark node of its own, after the filters the plan pushes below
that node (``UnionNode.below_watermark``).  Stateless: no state, no metrics, nothing to
snapshot.  Both engines run it on rows (``Batch.to_rows``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ...compiler.planning.plan import UnionNode
from .batches import Batch, Rows
from .eval import Layout, compile_expr
from .watermark import WatermarkNode

Row = tuple[Any, ...]
Test = Callable[[Row], bool]


class UnionObserver(Protocol):
    """What a union tells an observer (`sjoin why`): each input's rows (``index``: the
    input's place in ``UnionNode.relations``), all of which it passes on as they are."""

    def came(self, index: int, rows: Sequence[Row]) -> None: ...


class UnionOperator:
    """One union of a query: per input, the tests its watermark node's rows pass."""

    observer: UnionObserver | None = None  # `sjoin why`'s (None: a normal run)

    def __init__(self, node: UnionNode, ansi: bool) -> None:
        self.node = node
        columns = [(c.name, c.type.name) for c in node.columns]
        layout = Layout.of((node.pushed_side or "left", columns))
        index = {name: i for i, (name, _) in enumerate(columns)}
        self.below: list[list[Test]] = [[] for _ in node.relations]
        for i, filters in enumerate(node.below_watermark):
            self.below[i] += [_true_of(compile_expr(f, layout, ansi=ansi)) for f in filters]
        for i, names in enumerate(node.not_null_below_watermark):
            self.below[i] += [_not_null_at(index[n]) for n in names]

    def step(self, inputs: Sequence[Batch], watermarks: Sequence[WatermarkNode | None]) -> Batch:
        """The union's batch; each input's rows that reach its watermark node observed."""
        out: list[Row] = []
        for i, (batch, tests, node) in enumerate(zip(inputs, self.below, watermarks, strict=True)):
            rows = batch.to_rows()
            if self.observer is not None:
                self.observer.came(i, rows)
            if node is not None:
                seen: Sequence[Row] = rows
                for test in tests:
                    seen = [r for r in seen if test(r)]
                node.observe(seen)
            out.extend(rows)
        return Rows(out)


def _true_of(f: Any) -> Test:
    return lambda row: f(row, None) is True


def _not_null_at(i: int) -> Test:
    return lambda row: row[i] is not None
