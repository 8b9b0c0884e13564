"""The benchmark workload: a seeded inner range join with watermarks, written once in the two
forms the engines read, so that both see exactly the same micro-batches.

* the reference runtime reads a §7 trace (JSONL, one line per row, ``batch`` numbers);
* Spark reads one Parquet file per stream per batch through the file source with
  ``maxFilesPerTrigger = 1``, so trigger i takes file i of each stream: the same batch.

Keys are uniform in 1..10,000; event time advances 10 s per batch and each row's time is
uniform inside its batch's 10 s, so the watermark (10 s delay) evicts old state every batch
and the state reaches a steady size after about three batches.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

SPEC = """\
-- benchmark workload: an inner range join with watermarks on both sides
spark 4.3
set shuffle_partitions = {partitions}
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt, L.v AS lv, R.v AS rv
"""
STREAMS = ("l", "r")
KEYS = 10_000
BATCH_SECONDS = 10
T0_US = 1_767_225_600_000_000  # 2026-01-01T00:00:00Z


MAX_COUNT_DIGITS = 9


def count(text: str) -> int:
    """A count on a benchmark's command line (``--sizes``, ``--repeat``, ``--n``, ``--runs``,
    ``ROWS``): 1 to 9 ASCII digits, at least 1.  argparse's ``type=int`` would take ``٣``
    (as 3), `` 5``, ``+5`` and ``1_000``, and 0 would fall back to the default unseen; as an
    argparse ``type`` this makes a bad value exit 2 with the option's name."""
    if not (text.isascii() and text.isdigit() and len(text) <= MAX_COUNT_DIGITS):
        raise argparse.ArgumentTypeError(
            f"a count is 1 to {MAX_COUNT_DIGITS} of the digits 0-9, not {text[:20]!r}"
            + ("..." if len(text) > 20 else "")
        )
    if int(text) == 0:
        raise argparse.ArgumentTypeError("a count is at least 1, not 0")
    return int(text)


def rows_argument(args: list[str], default: int = 1_000_000) -> int:
    """The optional ``ROWS`` of ``eviction.py [ROWS]``: a ``count``; a bad one exits 2."""
    if not args:
        return default
    try:
        return count(args[0])
    except argparse.ArgumentTypeError as err:
        print(f"usage error: ROWS: {err}", file=sys.stderr)
        raise SystemExit(2) from None


@dataclass(frozen=True)
class Workload:
    """Where one generated workload lives on disk."""

    directory: Path
    rows_per_side: int
    batches: int

    @property
    def spec(self) -> Path:
        return self.directory / "bench.sjoin"

    @property
    def trace(self) -> Path:
        return self.directory / "bench.trace.jsonl"

    def parquet_dir(self, stream: str) -> Path:
        return self.directory / "parquet" / stream

    @property
    def input_rows(self) -> int:
        return 2 * self.rows_per_side * self.batches


def rows_of_batch(
    seed: int, batch: int, stream: str, n: int, keys: int = KEYS
) -> list[tuple[int, int, str]]:
    """(k, t in microseconds, v) rows of one stream in one batch; a seed per (batch, stream)
    keeps every batch reproducible on its own."""
    rng = random.Random(f"{seed}/{batch}/{stream}")
    base = T0_US + batch * BATCH_SECONDS * 1_000_000
    span = BATCH_SECONDS * 1_000_000
    # whole milliseconds: both engines keep microseconds, but the trace format is ms-exact
    return [
        (rng.randint(1, keys), base + rng.randrange(span // 1000) * 1000, f"{stream}{batch}-{i}")
        for i in range(n)
    ]


def generate(
    directory: Path,
    rows_per_side: int,
    batches: int = 10,
    *,
    keys: int = KEYS,
    seed: int = 7,
    partitions: int = 2,
) -> Workload:
    """Write the spec, the trace and the Parquet files (pyarrow, from pyspark's extras).
    ``keys``: join keys are uniform in 1..keys (fewer keys, more matches per row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    work = Workload(directory, rows_per_side, batches)
    directory.mkdir(parents=True, exist_ok=True)
    work.spec.write_text(SPEC.format(partitions=partitions))
    schema = pa.schema([("k", pa.int64()), ("t", pa.timestamp("us", tz="UTC")), ("v", pa.string())])
    for stream in STREAMS:
        work.parquet_dir(stream).mkdir(parents=True, exist_ok=True)
    with work.trace.open("w") as trace:
        for batch in range(batches):
            for stream in STREAMS:
                rows = rows_of_batch(seed, batch, stream, rows_per_side, keys)
                for k, t, v in rows:
                    row = {"k": k, "t": _iso(t), "v": v}
                    trace.write(json.dumps({"batch": batch, "stream": stream, "row": row}))
                    trace.write("\n")
                ks, ts, vs = zip(*rows, strict=True)
                table = pa.table([list(ks), list(ts), list(vs)], schema=schema)
                path = work.parquet_dir(stream) / f"batch-{batch:04d}.parquet"
                pq.write_table(table, path)
                # the file source orders new files by modification time: make it the batch order
                stamp = 1_700_000_000 + batch
                os.utime(path, (stamp, stamp))
    return work


def _iso(us: int) -> str:
    seconds, micros = divmod(us, 1_000_000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{micros // 1000:03d}Z"
