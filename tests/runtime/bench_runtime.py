"""Runtime measurements (not a test; run by hand):

    .venv/bin/python -m tests.runtime.bench_runtime [ROWS]

1. throughput on a generated trace of ROWS rows (default 1 000 000): an inner range join
   on keys 1..10 000, 100 micro-batches, event time advancing 10 s per batch;
2. evicting 1% of a 1 000 000-row join state through the eviction index, against finding
   and removing the same rows with a full scan of the state.
"""

from __future__ import annotations

import gc
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from sjoin.api import check_text
from sjoin.runtime import run
from sjoin.runtime.join import SideState
from sjoin.runtime.trace import read_trace, schemas_of
from sjoin.runtime.values import format_timestamp

SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt, L.v AS lv, R.v AS rv
"""


def generate(path: Path, rows: int, batches: int = 100, seed: int = 1) -> None:
    rng = random.Random(seed)
    per_batch = rows // batches
    with path.open("w") as out:
        for b in range(batches):
            base_us = 1_767_225_600_000_000 + b * 10_000_000
            for i in range(per_batch):
                stream = "l" if i % 2 == 0 else "r"
                t = format_timestamp(base_us + rng.randrange(10_000_000))
                row = {"k": rng.randint(1, 10_000), "t": t, "v": f"{stream}{b}-{i}"}
                out.write(json.dumps({"batch": b, "stream": stream, "row": row}) + "\n")


def throughput(rows: int) -> None:
    plan = check_text(SPEC).plan
    assert plan is not None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.jsonl"
        generate(path, rows)
        gc.collect()
        start = time.perf_counter()
        trace = read_trace(path, schemas_of(plan))
        read_s = time.perf_counter() - start
        start = time.perf_counter()
        result = run(plan, path)
        total_s = time.perf_counter() - start
    out_rows = len(result.rows())
    print(f"trace: {trace.row_count:,} rows in {len(trace.batches)} batches")
    print(f"read + check the trace: {read_s:.2f} s ({trace.row_count / read_s:,.0f} rows/s)")
    print(
        f"whole run (read, join, {len(result.batches)} batches, {out_rows:,} output rows as "
        f"JSON-ready dicts): {total_s:.2f} s = {trace.row_count / total_s:,.0f} input rows/s"
    )
    engine_s = total_s - read_s
    print(f"engine alone (run - read): {engine_s:.2f} s = {trace.row_count / engine_s:,.0f} rows/s")


def eviction(rows: int = 1_000_000) -> None:
    rng = random.Random(2)
    times = [rng.randrange(rows * 1000) for _ in range(rows)]
    threshold = sorted(times)[rows // 100 - 1]  # 1% of the rows are at or below it

    def build() -> SideState:
        """1M rows appended over 100 batches; each batch ends with an eviction that finds
        nothing (as a batch's cleanup step does), which sorts that batch into the index."""
        state = SideState(lambda key, row: row[0])
        for i, t in enumerate(times):
            state.append(i % 10_000, (t, i), False)
            if i % 10_000 == 9_999:
                state.evict(-1)
        return state

    state = build()
    gc.collect()
    start = time.perf_counter()
    evicted = state.evict(threshold)
    indexed_s = time.perf_counter() - start
    assert len(evicted) == rows // 100

    state = build()
    gc.collect()
    start = time.perf_counter()
    removed = []
    for key, bucket in list(state.by_key.items()):
        for ident, entry in list(bucket.items()):
            if entry[0][0] <= threshold:
                removed.append(entry)
                state.remove(key, ident)
    scan_s = time.perf_counter() - start
    assert len(removed) == rows // 100
    print(
        f"evict 1% ({rows // 100:,} rows) of a {rows:,}-row state: "
        f"index {indexed_s * 1000:.1f} ms, full scan {scan_s * 1000:.1f} ms "
        f"({scan_s / indexed_s:.0f}x)"
    )


if __name__ == "__main__":
    throughput(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
    eviction()
