"""An event-time index over stored state, so eviction costs what it removes.

Entries appended during a batch collect in a buffer; before the first eviction (or
snapshot) the buffer is sorted once into a *run*.  Runs live in a heap keyed by their
smallest time, so ``pop_upto(W)`` visits only runs holding something ``<= W`` and takes
each run's evictable prefix with a binary search: O(evicted + runs touched), never a scan
of the whole state, and far fewer Python-level steps than a heap of single entries.

A run is four parallel lists (times, ids, keys, and a payload per entry, e.g. the state
bucket holding the row) rather than a tuple per entry: an entry costs four pointers, and
eviction walks contiguous lists instead of chasing one tuple per evicted row.

The runs are how the index is stored, never what it answers: ``pop_upto`` gives the
entries in (time, id) order across all runs (the rule ``spark_rules.eviction_order``), so
the order of what is evicted (the null-padded rows of an outer join, the groups an
aggregate emits) depends only on the entries held, which a checkpoint saves and restores,
and not on which batches' runs they came in (a restored index is one run).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from typing import Any

from .spark_rules import eviction_order


class _Run:
    __slots__ = ("extras", "idents", "keys", "position", "times")

    def __init__(self, times: list[int], idents: list[int], keys: list[Any], extras: list[Any]):
        self.times = times
        self.idents = idents
        self.keys = keys
        self.extras = extras
        self.position = 0  # entries before it have been popped


class EvictionIndex:
    __slots__ = ("_extras", "_heap", "_idents", "_keys", "_next_run", "_runs", "_times")

    def __init__(self) -> None:
        self._times: list[int] = []
        self._idents: list[int] = []
        self._keys: list[Any] = []
        self._extras: list[Any] = []
        self._runs: dict[int, _Run] = {}
        self._heap: list[tuple[int, int]] = []  # (smallest remaining time, run id)
        self._next_run = 0

    def add(self, time_us: int, ident: int, key: Any, extra: Any = None) -> None:
        """Index entry ``ident`` (ids grow with insertion) at ``time_us``."""
        self._times.append(time_us)
        self._idents.append(ident)
        self._keys.append(key)
        self._extras.append(extra)

    def _flush(self) -> None:
        times = self._times
        if not times:
            return
        # by (time, id): ids grow with insertion, so a stable sort on time alone does it
        order = sorted(range(len(times)), key=times.__getitem__)
        run = _Run(
            [times[i] for i in order],
            [self._idents[i] for i in order],
            [self._keys[i] for i in order],
            [self._extras[i] for i in order],
        )
        self._times, self._idents, self._keys, self._extras = [], [], [], []
        number = self._next_run
        self._next_run += 1
        self._runs[number] = run
        heapq.heappush(self._heap, (run.times[0], number))

    def pop_upto(
        self, threshold_us: int, ordered: bool = True
    ) -> tuple[list[int], list[Any], list[Any]]:
        """Remove every entry with time ``<= threshold_us``; return their ids, keys and
        payloads as parallel lists, in (time, id) order (stale entries included: the caller
        skips those it has already removed).  ``ordered=False``: in any order, for a caller
        that only counts them."""
        self._flush()
        heap = self._heap
        times: list[int] = []
        idents: list[int] = []
        keys: list[Any] = []
        extras: list[Any] = []
        runs = 0
        while heap and heap[0][0] <= threshold_us:
            _, number = heapq.heappop(heap)
            run = self._runs[number]
            start = run.position
            end = bisect_right(run.times, threshold_us, lo=start)
            if ordered:
                times += run.times[start:end]
            idents += run.idents[start:end]
            keys += run.keys[start:end]
            extras += run.extras[start:end]
            runs += 1
            if end < len(run.times):
                run.position = end
                heapq.heappush(heap, (run.times[end], number))
            else:
                del self._runs[number]
        if ordered and runs > 1:
            # each run's part is in order already: the sort merges them (timsort finds the runs)
            order = eviction_order(times, idents)
            idents = [idents[i] for i in order]
            keys = [keys[i] for i in order]
            extras = [extras[i] for i in order]
        return idents, keys, extras

    def __len__(self) -> int:
        pending = sum(len(run.times) - run.position for run in self._runs.values())
        return len(self._times) + pending
