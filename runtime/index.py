"""An event-time index over stored state, so eviction costs what it removes.

Entries appended during a batch collect in a buffer; before the first eviction (or
snapshot) the buffer is sorted once into a *run*.  Runs live in a heap keyed by their
smallest time, so ``pop_upto(W)`` visits only runs holding something ``<= W`` and takes
each run's evictable prefix with a binary search: O(evicted + runs touched), never a scan
of the whole state, and far fewer Python-level steps than a heap of single entries.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from typing import Any

Item = tuple[int, int, Any]  # (time µs, entry id, key)


class EvictionIndex:
    __slots__ = ("_buffer", "_heap", "_next_run", "_runs")

    def __init__(self) -> None:
        self._buffer: list[Item] = []
        self._runs: dict[int, list[Any]] = {}  # run id -> [sorted items, position]
        self._heap: list[tuple[int, int]] = []  # (smallest remaining time, run id)
        self._next_run = 0

    def add(self, time_us: int, ident: int, key: Any) -> None:
        self._buffer.append((time_us, ident, key))

    def _flush(self) -> None:
        if not self._buffer:
            return
        items = self._buffer
        items.sort()  # by (time, id): ids are unique, so keys are never compared
        self._buffer = []
        run = self._next_run
        self._next_run += 1
        self._runs[run] = [items, 0]
        heapq.heappush(self._heap, (items[0][0], run))

    def pop_upto(self, threshold_us: int) -> list[Item]:
        """Remove and return every item with time ``<= threshold_us`` (stale ones included:
        the caller skips entries it has already removed)."""
        self._flush()
        heap = self._heap
        probe = (threshold_us, math.inf)  # after every (time <= threshold, id, key)
        popped: list[Item] = []
        while heap and heap[0][0] <= threshold_us:
            _, run = heapq.heappop(heap)
            items, position = self._runs[run]
            end = bisect_right(items, probe, lo=position)
            popped += items[position:end]
            if end < len(items):
                self._runs[run][1] = end
                heapq.heappush(heap, (items[end][0], run))
            else:
                del self._runs[run]
        return popped

    def __len__(self) -> int:
        pending = sum(len(items) - int(position) for items, position in self._runs.values())
        return len(self._buffer) + pending
