"""Eviction cost: remove the 1% oldest rows of a 1,000,000-row join state through the
runtime's event-time index, against finding and removing the same rows with a full scan of
the state that tests each row with the side's state predicate (what a store without an
index must do, and what Spark's state store does for a value predicate).  Prints one JSON
line.

    python benchmarks/eviction.py [ROWS]

The state is built as a run builds it: rows appended over 100 batches of 10,000 on 10,000
keys, each batch ending with an eviction that finds nothing (a batch's cleanup step), which
sorts that batch into the index.  Two orders of event time:

* ``stream``: time advances with the batches, uniform within each batch's 10 s, as a
  stream's rows arrive (the 1% oldest were appended together);
* ``random``: every row's time uniform over the whole range, independent of when it was
  appended (the worst case for the index: the evicted rows are spread over all of memory).

Each timing is the best of 3, each on a state built in a new process.
"""

from __future__ import annotations

import gc
import json
import random
import subprocess
import sys
import time
from pathlib import Path

from sjoin.runtime.rows.join import SideState

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import rows_argument

BATCH = 10_000


def event_times(order: str, rows: int) -> list[int]:
    rng = random.Random(2)
    if order == "random":
        return [rng.randrange(rows * 1000) for _ in range(rows)]
    return [(i // BATCH) * 10_000_000 + rng.randrange(10_000_000) for i in range(rows)]


def build(times: list[int]) -> SideState:
    state = SideState(lambda key, row: row[0], track_matched=False)  # an inner join's side
    for i, t in enumerate(times):
        state.append(i % 10_000, (t, i), False)
        if i % BATCH == BATCH - 1:
            state.evict_count(-1)
    return state


def by_index(state: SideState, threshold: int) -> int:
    return state.evict_count(threshold)


def by_scan(state: SideState, threshold: int) -> int:
    time_of = state.time_of
    assert time_of is not None
    removed = 0
    for key, bucket in list(state.by_key.items()):
        for ident, row in list(bucket.items()):
            t = time_of(key, row)
            if t is not None and t <= threshold:
                state.remove(key, ident)
                removed += 1
    return removed


def measure_once(order: str, method: str, rows: int) -> float:
    """Seconds to evict 1% of a fresh state (run in a process of its own: a process that
    has freed one large state runs random memory accesses far slower for a while)."""
    times = event_times(order, rows)
    threshold = sorted(times)[rows // 100 - 1]  # 1% of the rows are at or below it
    state = build(times)
    gc.collect()
    gc.disable()  # as during a run (runtime/runner.py pauses the collector)
    start = time.perf_counter()
    evicted = (by_index if method == "index" else by_scan)(state, threshold)
    seconds = time.perf_counter() - start
    assert evicted == rows // 100, (order, method, evicted)
    return seconds


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--once":
        print(measure_once(sys.argv[2], sys.argv[3], int(sys.argv[4])))
        return
    rows = rows_argument(sys.argv[1:2])
    figures: dict[str, float] = {"state_rows": rows, "evicted_rows": rows // 100}
    for order in ("stream", "random"):
        for method in ("index", "scan"):
            runs = [
                float(
                    subprocess.run(
                        [sys.executable, __file__, "--once", order, method, str(rows)],
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout
                )
                for _ in range(3)
            ]
            figures[f"{order}_{method}_ms"] = min(runs) * 1000
        figures[f"{order}_ratio"] = figures[f"{order}_index_ms"] / figures[f"{order}_scan_ms"]
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
