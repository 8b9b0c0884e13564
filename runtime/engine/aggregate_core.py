"""Spark's streaming aggregate, written once: the order in which ``StateStoreSaveExec`` runs a
micro-batch (``statefulOperators.scala``), over a state store that either engine provides.

Per batch, as ``StateStoreSaveExec`` does:

1. the batch's rows go into state: in append and update mode the rows whose group's
   watermark key is at or below the late-events watermark are dropped first
   (``applyRemovingRowsOlderThanWatermark``; ``numRowsDroppedByWatermark`` counts the
   distinct groups, as Spark counts after the partial aggregation), the rest are merged into
   their groups (``numUpdatedStateRows``: the groups the batch changed);
2. output by mode: *complete* emits every group and never removes one; *update* emits the
   groups the batch changed, then removes silently those the eviction watermark has passed;
   *append* removes the passed groups and emits them (``numRemovedStateRows``);
3. ``numTotalStateRows``: the groups left in state.

The store (``AggregateStore``) holds the groups and answers in its own terms: the row
storage (``aggregate.RowGroups``: a dict of accumulator states, an ``EvictionIndex``) and the
polars one (``columnar/aggregate.FrameGroups``: one frame of groups).  The order above, the
modes and the metrics live here only.

``sjoin why`` observes an aggregate through ``AggregateObserver``: the operator reports the
rows that reached it, the groups each row was dropped as late for or folded into, and the
group each output row is, as it runs them: the same code path as ``sjoin run``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from ...compiler.planning.plan import AggregateNode
from .batches import Batch
from .late import Dropped
from .watermark import WatermarkNode

Row = tuple[Any, ...]
Key = tuple[Any, ...]

In = TypeVar("In")
Groups = TypeVar("Groups")
Out = TypeVar("Out")
In_contra = TypeVar("In_contra", contravariant=True)
Out_contra = TypeVar("Out_contra", contravariant=True)


@dataclass(slots=True)
class AggregateMetrics:
    num_rows_total: int = 0
    num_rows_updated: int = 0
    num_rows_removed: int = 0
    num_rows_dropped_by_watermark: int = 0


@dataclass(slots=True)
class Late:
    """What a batch's late filter dropped: the number of distinct late groups (the metric)
    and, when kept, the rows with their groups and times (None: none dropped or not kept)."""

    groups: int
    dropped: Dropped | None


class AggregateStore(Protocol[In, Groups, Out]):
    """The state of one aggregate as an engine stores it: its groups and their
    accumulators.  ``Groups`` is a set of groups in the order they are output (the store's
    own form); ``In`` a batch as the store reads it; ``Out`` its output rows."""

    def observed(self, value: Batch, node: WatermarkNode | None) -> In:
        """The input batch as the store reads it, observed by its watermark node."""
        ...

    def update(
        self, data: In, late_us: int | None, keep: bool, grouped: list[tuple[Row, Key]] | None
    ) -> tuple[Groups, Late]:
        """Merge the batch's rows into state, a row's group left out when its watermark key
        is at or below ``late_us`` (None: no late filter).  The updated groups, in the order
        the batch first updated them, and what was dropped (its rows kept when ``keep``).
        ``grouped``: when a list, gets each (input row, group) folded into state."""
        ...

    def groups(self) -> Groups:
        """Every group in state, in the order the groups were made."""
        ...

    def evict(self, threshold_us: int) -> Groups:
        """Remove the groups whose watermark key time is ``<= threshold_us`` and return
        them in eviction order (``spark_rules.eviction_order``)."""
        ...

    def count(self, groups: Groups) -> int: ...

    def size(self) -> int:
        """The number of groups in state."""
        ...

    def emit(self, groups: Groups) -> Out:
        """The output rows of ``groups``, one per group, in their order."""
        ...

    def nothing(self) -> Out:
        """An output of no rows."""
        ...

    def group_keys(self, groups: Groups) -> list[Key]:
        """The groups' keys (a window as ``(start, end)``), for an observer."""
        ...

    def batch(self, out: Out) -> Batch: ...

    def snapshot(self) -> dict[str, Any]: ...

    def restore(self, data: dict[str, Any]) -> None: ...


class AggregateObserver(Protocol[In_contra, Out_contra]):
    """What an aggregate reports as it runs a batch, when observed (``lineage.py``)."""

    def arrived(self, data: In_contra, late_ms: int | None, evict_ms: int | None) -> None:
        """The batch's input rows reached the operator."""
        ...

    def late(self, dropped: Dropped, late_ms: int | None) -> None:
        """Rows dropped as late, each for a group."""
        ...

    def grouped(self, pairs: Sequence[tuple[Row, Key]]) -> None:
        """Rows folded into groups, in the order they were."""
        ...

    def emitted(self, out: Out_contra, keys: Sequence[Key]) -> None:
        """Output rows, each the result of one group."""
        ...


class InputFilter(Protocol):
    """The aggregate's WHERE where the aggregate runs it (``AggregateWhere``): a view of its
    input that keeps every column (``view.aggregate_filter``), on rows or on frames; it runs
    the conjuncts below the input's watermark node, the node's observation, those above."""

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Batch, Any]: ...


class StreamingAggregate(Generic[In, Groups, Out]):
    """One ``aggregate`` of the plan, run batch after batch over ``store``."""

    def __init__(self, node: AggregateNode, store: AggregateStore[In, Groups, Out]) -> None:
        self.node = node
        self.mode = node.mode
        self.store = store
        self.late_rows: list[Dropped] | None = None  # kept only when asked (``late.py``)
        self.observer: AggregateObserver[In, Out] | None = None
        # its WHERE, when it runs one (``operators.make_operator`` sets it): the rows it
        # drops never reach the state, its late filter or its metrics (Spark's Filter
        # below the aggregate)
        self.where: InputFilter | None = None

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Batch, AggregateMetrics]:
        """``Operator.step``: the input filtered by its WHERE and observed by its watermark
        node (between the WHERE's conjuncts below and above it), then ``process``."""
        (value,), (node,) = inputs, watermarks
        if self.where is not None:
            (value, _), node = self.where.step([value], [node], None, None), None
        out, metrics = self.process(self.store.observed(value, node), late_ms, evict_ms)
        return self.store.batch(out), metrics

    def process(
        self, data: In, late_ms: int | None, evict_ms: int | None
    ) -> tuple[Out, AggregateMetrics]:
        store, observer = self.store, self.observer
        m = AggregateMetrics()
        if observer is not None:
            observer.arrived(data, late_ms, evict_ms)
        complete = self.mode == "complete"
        late_us = None if complete or late_ms is None else late_ms * 1000
        grouped: list[tuple[Row, Key]] | None = None if observer is None else []
        keep = self.late_rows is not None or observer is not None
        updated, late = store.update(data, late_us, keep, grouped)
        m.num_rows_dropped_by_watermark = late.groups
        if late.dropped is not None:
            if self.late_rows is not None:
                self.late_rows.append(late.dropped)
            if observer is not None:
                observer.late(late.dropped, late_ms)
        if observer is not None and grouped is not None:
            observer.grouped(grouped)
        m.num_rows_updated = store.count(updated)
        out = store.nothing()
        if complete:
            out = self._emit(store.groups())
        elif self.mode == "update":
            out = self._emit(updated)
            if evict_ms is not None:
                m.num_rows_removed = store.count(store.evict(evict_ms * 1000))
        elif evict_ms is not None:
            evicted = store.evict(evict_ms * 1000)
            m.num_rows_removed = store.count(evicted)
            out = self._emit(evicted)
        m.num_rows_total = store.size()
        return out, m

    def _emit(self, groups: Groups) -> Out:
        out = self.store.emit(groups)
        if self.observer is not None:
            self.observer.emitted(out, self.store.group_keys(groups))
        return out

    def has_state_predicate(self) -> bool:
        return self.mode in ("append", "update")

    def state_watermark(self, input_ms: int) -> int:
        """An aggregate passes its input watermark on."""
        return input_ms

    def snapshot(self) -> dict[str, Any]:
        return self.store.snapshot()

    def restore(self, data: dict[str, Any]) -> None:
        self.store.restore(data)
