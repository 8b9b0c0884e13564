"""Spark's streaming deduplication, written once: the order in which
``StreamingDeduplicateExec`` (``dropDuplicates``) and ``StreamingDeduplicateWithinWatermarkExec``
(``dropDuplicatesWithinWatermark``) run a micro-batch (``BaseStreamingDeduplicateExec`` in
``statefulOperators.scala``), over a state store that either engine provides.

Per batch, as Spark does:

1. rows whose event time (the input's event-time column, a window's end) is at or below the
   late-events watermark are dropped (``applyRemovingRowsOlderThanWatermark``,
   ``numRowsDroppedByWatermark``), whether or not that column is a dedup column;
2. the rest, in input order: a row whose key (the dedup columns) is not in state is put
   there (``numRowsUpdated``) and passes; a row whose key is there is dropped
   (``numDroppedDuplicateRows``): so the first row of a key in the batch passes;
3. after the input: the keys the eviction watermark has passed are removed
   (``numRowsRemoved``): a key whose event-time column is ``<= W`` (``dropDuplicates`` with
   that column among the keys), or whose stored ``expiresAtMicros`` (the first row's event
   time plus the watermark delay) is ``<= W`` (within the watermark); a key stored in this
   batch is removed in it too when W has passed it;
4. ``numRowsTotal``: the keys left in state.

The store (``DedupStore``) holds the keys: the row storage (``dedup.RowDedupStore``: a dict
and an ``EvictionIndex``) and the polars one (``columnar/dedup.FrameDedupStore``).  The order
above and the metrics live here only; what to compare and with what the plan's
``DedupNode`` says (``DedupFacts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from ...compiler.planning.plan import DedupNode
from .batches import Batch
from .late import Dropped
from .watermark import WatermarkNode

In = TypeVar("In")


@dataclass(slots=True)
class DedupMetrics:
    num_rows_total: int = 0
    num_rows_updated: int = 0
    num_rows_removed: int = 0
    num_rows_dropped_by_watermark: int = 0
    num_dropped_duplicate_rows: int = 0  # Spark's custom metric numDroppedDuplicateRows


@dataclass(frozen=True, slots=True)
class DedupFacts:
    """What a deduplication executes, from its node once: the positions of its key columns
    in the input row, the late column's position (None: no late filter), whether it is a
    window, the eviction and, within the watermark, the delay added to the stored time."""

    keys: tuple[int, ...]
    late_index: int | None
    late_is_window: bool
    eviction: str  # "key", "expiry" or "never" (``DedupState.eviction``)
    time_index: int | None  # the column whose time a key is evicted by / expires from
    time_is_window: bool
    delay_us: int  # within the watermark: expiresAtMicros = time + delay_us

    @staticmethod
    def of(node: DedupNode) -> DedupFacts:
        names = [c.name for c in node.columns]
        state = node.state
        late = names.index(node.late_column) if node.late_column is not None else None
        time = names.index(state.column) if state.column is not None else None
        return DedupFacts(
            tuple(names.index(k) for k in node.keys),
            late,
            node.late_is_window,
            state.eviction,
            time,
            state.window or (state.eviction == "expiry" and node.late_is_window),
            (state.offset_ms or 0) * 1000 if state.eviction == "expiry" else 0,
        )


class DedupStore(Protocol[In]):
    """The state of one deduplication as an engine stores it: its keys (and, within the
    watermark, each key's expiry).  ``In`` is a batch as the store reads it."""

    def observed(self, value: Batch, node: WatermarkNode | None) -> In:
        """The input batch as the store reads it, observed by its watermark node."""
        ...

    def drop_late(self, data: In, late_us: int, keep: bool) -> tuple[In, int, Dropped | None]:
        """The rows whose late column is not at or below ``late_us`` (a NULL time never is),
        how many were dropped, and (when ``keep``) the dropped rows."""
        ...

    def admit(self, data: In) -> tuple[In, int]:
        """The rows whose key is not in state, the first of each key in input order, each
        put into state; and how many rows were dropped as duplicates."""
        ...

    def evict(self, watermark_us: int) -> int:
        """Remove the keys the watermark (µs) has passed; how many."""
        ...

    def count(self, data: In) -> int: ...

    def size(self) -> int:
        """The number of keys in state."""
        ...

    def batch(self, data: In) -> Batch: ...

    def snapshot(self) -> dict[str, Any]: ...

    def restore(self, data: dict[str, Any]) -> None: ...


class DedupObserver(Protocol):
    """What a deduplication tells an observer (``runtime/observe/lineage.py``, `sjoin why`),
    on the path an unobserved run takes: each batch's input (after its watermark node) with
    the watermarks it runs with, the rows dropped as late, the rows that reached the state
    and those that passed (the rest were duplicates), and the eviction (the store before and
    after it).  ``data`` and ``out`` are batches as the store reads them."""

    def arrived(self, data: Any, late_ms: int | None, evict_ms: int | None) -> None: ...

    def late(self, dropped: Dropped, late_ms: int | None) -> None: ...

    def admitted(self, data: Any, out: Any) -> None: ...

    def evicting(self, evict_ms: int) -> None:
        """Before the eviction (the keys in state then)."""
        ...

    def evicted(self, evict_ms: int) -> None:
        """After it."""
        ...


class StreamingDedup(Generic[In]):
    """One ``dedup`` of the plan, run batch after batch over ``store``."""

    def __init__(self, node: DedupNode, store: DedupStore[In]) -> None:
        self.node = node
        self.store = store
        self.late_rows: list[Dropped] | None = None  # kept only when asked (``late.py``)
        self.observer: DedupObserver | None = None  # `sjoin why`'s (None: a normal run)

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Batch, DedupMetrics]:
        """``Operator.step``: the input observed by its watermark node, then ``process``."""
        (value,), (node,) = inputs, watermarks
        out, metrics = self.process(self.store.observed(value, node), late_ms, evict_ms)
        return self.store.batch(out), metrics

    def process(
        self, data: In, late_ms: int | None, evict_ms: int | None
    ) -> tuple[In, DedupMetrics]:
        store, observer = self.store, self.observer
        m = DedupMetrics()
        if observer is not None:
            observer.arrived(data, late_ms, evict_ms)
        if late_ms is not None and self.node.late_column is not None:
            keep = self.late_rows is not None or observer is not None
            data, m.num_rows_dropped_by_watermark, dropped = store.drop_late(
                data, late_ms * 1000, keep
            )
            if dropped is not None and self.late_rows is not None:
                self.late_rows.append(dropped)
            if dropped is not None and observer is not None:
                observer.late(dropped, late_ms)
        out, m.num_dropped_duplicate_rows = store.admit(data)
        if observer is not None:
            observer.admitted(data, out)
        m.num_rows_updated = store.count(out)
        if evict_ms is not None and self.node.state.eviction != "never":
            if observer is not None:
                observer.evicting(evict_ms)
            m.num_rows_removed = store.evict(evict_ms * 1000)
            if observer is not None:
                observer.evicted(evict_ms)
        m.num_rows_total = store.size()
        return out, m

    def has_state_predicate(self) -> bool:
        """Spark's ``shouldRunAnotherBatch`` for a deduplication: its eviction watermark is
        defined and the new one is higher, whether or not any key can be evicted (the query
        compares the watermarks; None where no watermark reaches it)."""
        return True

    def state_watermark(self, input_ms: int) -> int:
        """A deduplication passes its input watermark on (``produceOutputWatermark``)."""
        return input_ms

    def snapshot(self) -> dict[str, Any]:
        return self.store.snapshot()

    def restore(self, data: dict[str, Any]) -> None:
        self.store.restore(data)
