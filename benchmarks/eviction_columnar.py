"""Eviction on the columnar engine's state (``runtime/columnar/join.py``): a join side of
1,000,000 rows built as a run builds it (100 batches of 10,000 rows, time growing with the
batch), then (a) an eviction that removes nothing (a batch's cleanup when the watermark has
not reached the oldest row) and (b) one that removes the 1% oldest rows.  Prints one JSON
line: best of 3 of each, in ms.

    python benchmarks/eviction_columnar.py [ROWS]
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl

from sjoin.compiler.planning.plan import Side, StateRule
from sjoin.compiler.vocabulary.model import Column
from sjoin.compiler.vocabulary.types import lookup_type
from sjoin.runtime.columnar.join import _Side

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import rows_argument

BATCH = 10_000


def _type(name: str) -> Any:
    found = lookup_type(name, ())
    assert found is not None
    return found


def build(rows: int) -> _Side:
    rng = random.Random(2)
    side = Side(
        name="left",
        relation="l",
        alias="L",
        columns=(Column("k", _type("bigint")), Column("t", _type("timestamp"))),
        event_time_column="t",
        event_time_is_window=False,
        pushed_filter=None,
        inferred_filters=(),
        not_null=(),
        pre_join_filter=None,
        state=StateRule("value", column="t"),
        preserved=False,
        retention="",
        evicted_rows_skipped="none",
    )
    state = _Side(side, [("k", "bigint"), ("t", "timestamp")], [0], 1, False)
    for b in range(rows // BATCH):
        times = [b * 10_000_000 + rng.randrange(10_000_000) for _ in range(BATCH)]
        keys = [rng.randint(1, 10_000) for _ in range(BATCH)]
        state.append(pl.DataFrame({"c0": keys, "c1": times}), None)
        state.evict(-1, ordered=False)  # each batch's cleanup: nothing old enough yet
    return state


def best_ms(rows: int, threshold_of: str) -> float:
    best = float("inf")
    for _ in range(3):
        state = build(rows)
        threshold = -1 if threshold_of == "nothing" else (rows // 100 // BATCH) * 10_000_000 - 1
        start = time.perf_counter()
        gone = state.evict(threshold, ordered=False)
        best = min(best, time.perf_counter() - start)
        removed = 0 if gone is None else gone.height
        assert (removed == 0) if threshold_of == "nothing" else (removed == rows // 100)
    return best * 1000


def main() -> None:
    rows = rows_argument(sys.argv[1:2])
    nothing, one = best_ms(rows, "nothing"), best_ms(rows, "one")
    print(json.dumps({"rows": rows, "nothing_ms": nothing, "one_percent_ms": one}))


if __name__ == "__main__":
    main()
