"""The deduplication on rows (the reference engine's): ``RowDedupStore``, the row storage of
a dedup's state (a dict from key to its expiry, an ``EvictionIndex`` by eviction time), and
``DedupOperator``, the core ``dedup_core.StreamingDedup`` over it."""

from __future__ import annotations

import math
from typing import Any

from ...compiler.planning.plan import DedupNode
from ..engine.batches import Batch, Rows
from ..engine.dedup_core import DedupFacts, StreamingDedup
from ..engine.index import EvictionIndex
from ..engine.late import Dropped
from ..engine.watermark import WatermarkNode

Row = tuple[Any, ...]


def _time(value: Any, window: bool) -> int | None:
    """A time column's value in µs (a window's end), None for a NULL."""
    if value is None:
        return None
    return int(value[1]) if window else int(value)


def _canonical(value: Any, bitwise: bool = False) -> Any:
    """A key value as Spark's streaming Deduplicate compares them: every NaN one key (a NaN
    is keyed by a marker: a dict finds a NaN only by identity); -0.0 the key 0.0 where its
    floating keys are normalised (``DedupNode.float_keys``, Spark 4.2+: seen on Spark 4.3.0,
    the parity scenario ``dedup_double_key``), a key of its own where they are compared
    bitwise (Spark 3.5: seen on 3.5.7, the same scenario); other values compare as Python
    compares them."""
    if type(value) is float:
        if math.isnan(value):
            return ("float", "nan")
        if bitwise and value == 0.0 and math.copysign(1.0, value) < 0:
            return ("float", "-0")
        return value
    if type(value) is tuple:
        return tuple(_canonical(v, bitwise) for v in value)
    return value


class RowDedupStore:
    """A dedup's state as a dict: canonical key -> (the key's values, its eviction time in
    µs or None); insertion order is the order of the snapshot."""

    def __init__(self, node: DedupNode) -> None:
        self.facts = DedupFacts.of(node)
        self.bitwise = node.float_keys == "bitwise"
        self.keys: dict[Any, tuple[Row, int | None]] = {}
        self.index = EvictionIndex()
        self.counter = 0

    def observed(self, value: Batch, node: WatermarkNode | None) -> list[Row]:
        rows = value.to_rows()
        if node is not None:
            node.observe(rows)
        return rows

    def drop_late(
        self, data: list[Row], late_us: int, keep: bool
    ) -> tuple[list[Row], int, Dropped | None]:
        f = self.facts
        assert f.late_index is not None
        at, window = f.late_index, f.late_is_window
        kept: list[Row] = []
        dropped = Dropped(0, [], [])
        for row in data:
            t = _time(row[at], window)
            if t is None or t > late_us:
                kept.append(row)
            elif keep:
                dropped.rows.append(row)
                dropped.times.append(t)
        count = len(data) - len(kept)
        return kept, count, dropped if keep and count else None

    def _eviction_time(self, row: Row) -> int | None:
        f = self.facts
        if f.eviction == "never" or f.time_index is None:
            return None
        value = row[f.time_index]
        if f.eviction == "expiry":
            # Spark reads the time with getLong: a NULL's slot holds 0
            t = _time(value, f.time_is_window)
            return (0 if t is None else t) + f.delay_us
        return _time(value, f.time_is_window)

    def key_of(self, row: Row) -> tuple[Any, Row]:
        """The key a row is stored under in ``keys`` (canonical), and its key values."""
        values = tuple(row[i] for i in self.facts.keys)
        return _canonical(values, self.bitwise), values

    def admit(self, data: list[Row]) -> tuple[list[Row], int]:
        out: list[Row] = []
        keys = self.keys
        key_of = self.key_of
        for row in data:
            key, values = key_of(row)
            if key in keys:
                continue
            when = self._eviction_time(row)
            keys[key] = (values, when)
            if when is not None:
                self.index.add(when, self.counter, key)
            self.counter += 1
            out.append(row)
        return out, len(data) - len(out)

    def evict(self, watermark_us: int) -> int:
        _, found, _ = self.index.pop_upto(watermark_us, ordered=False)
        removed = 0
        for key in found:
            if self.keys.pop(key, None) is not None:
                removed += 1
        return removed

    def count(self, data: list[Row]) -> int:
        return len(data)

    def size(self) -> int:
        return len(self.keys)

    def batch(self, data: list[Row]) -> Batch:
        return Rows(data)

    def snapshot(self) -> dict[str, Any]:
        return {"keys": [(values, when) for values, when in self.keys.values()]}

    def restore(self, data: dict[str, Any]) -> None:
        self.keys = {}
        self.index = EvictionIndex()
        self.counter = 0
        for stored, when in data["keys"]:
            values = tuple(stored)
            key = _canonical(values, self.bitwise)
            self.keys[key] = (values, when)
            if when is not None:
                self.index.add(when, self.counter, key)
            self.counter += 1


class DedupOperator(StreamingDedup[list[Row]]):
    """One ``dedup`` of the plan on the row storage (the reference engine's)."""

    store: RowDedupStore

    def __init__(self, node: DedupNode) -> None:
        super().__init__(node, RowDedupStore(node))
