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
from typing import Any

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


# ---------------------------------------------------------------- production-shaped (issue 26)
#
# Four workloads, each a spec and a Parquet trace (``<stream>/batch-NNNN.parquet``) that both
# `sjoin run --trace DIR` and Spark's file source read (trigger i = file i of each stream), so
# that every engine sees the same micro-batches.  Each spec ends in a `sink` of its output
# relation, in the format the run writes (Parquet or JSON lines), so that Spark runs the job
# `sjoin compile` generates, sink included.  Generated with numpy's PCG64, seeded per
# (shape, batch, stream): the same seed gives the same files on any machine.

ZIPF_S = 1.1  # (b): P(key = k) proportional to k ** -1.1 over 1..KEYS: key 1 is the hot key
UNMATCHED_SHARE = 0.30  # (c): left rows given no right row
LATE_SHARE = 0.05  # (c): rows of each side whose event time is before their batch's start
LATE_MAX_MS = 20_000  # (c): a late row is 1 ms to 20 s late; past 10 s it is beyond the watermark
MATCH_DELAY_MS = 8_000  # (c): a right row comes 0..8 s after its left row (range: 10 s)
WATERMARK_DELAY_MS = 10_000  # every shape's streams: watermark t delay 10 seconds

_RANGE_JOIN = """\
-- issue 26 workload ({shape}): {title}
spark 4.3
set shuffle_partitions = {{partitions}}
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L {join} JOIN r AS R
  ON L.k = R.k AND {range}
  SELECT L.k AS k, L.t AS lt, R.t AS rt, L.v AS lv, R.v AS rv
sink j to {{sink}} (path = 'out/j') checkpoint 'chk/j'
"""

_WINDOW_AGG = """\
-- issue 26 workload (window_agg): a window-key join feeding a windowed aggregate, DECIMAL amounts
spark 4.3
set shuffle_partitions = {partitions}
stream l (k BIGINT, t TIMESTAMP, amount DECIMAL(12, 2)) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)
  SELECT L.k AS k, window(L.t, INTERVAL 10 SECONDS) AS w, L.amount AS amount, R.v AS rv
aggregate a = j AS x GROUP BY x.k, x.w
  SELECT x.k AS k, x.w AS w, count(*) AS n, sum(x.amount) AS total
  OUTPUT MODE append
sink a to {sink} (path = 'out/a') checkpoint 'chk/a'
"""


@dataclass(frozen=True)
class Shape:
    """One production-shaped workload: its spec (``{partitions}`` and ``{sink}``, the sink's
    format, left to fill) and the relation its sink writes (`sjoin run --relation`)."""

    name: str
    title: str
    spec: str
    relation: str


SHAPES = {
    s.name: s
    for s in (
        Shape(
            "uniform",
            "(a) inner range join, keys uniform in 1..10,000",
            _RANGE_JOIN.format(
                shape="uniform",
                title="an inner range join, keys uniform",
                join="INNER",
                range="L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS",
            ),
            "j",
        ),
        Shape(
            "skewed",
            "(b) inner range join, left keys Zipf (s = 1.1, key 1 hot), right keys uniform",
            _RANGE_JOIN.format(
                shape="skewed",
                title="an inner range join, left keys Zipf-skewed with one hot key",
                join="INNER",
                range="L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS",
            ),
            "j",
        ),
        Shape(
            "outer",
            "(c) LEFT OUTER range join, 30% of left rows unmatched, 5% late rows per side",
            _RANGE_JOIN.format(
                shape="outer",
                title="a LEFT OUTER range join with unmatched and late rows",
                join="LEFT OUTER",
                range="R.t BETWEEN L.t AND L.t + INTERVAL 10 SECONDS",
            ),
            "j",
        ),
        Shape(
            "window_agg",
            "(d) window-key join -> windowed aggregate (append), DECIMAL(12, 2) amounts",
            _WINDOW_AGG,
            "a",
        ),
    )
}
SINK_FORMATS = {"parquet": "parquet", "jsonl": "json"}  # sjoin's --output-format -> Spark's
# (d) groups by the window the join projects, which keeps the event-time watermark in Spark's
# plan; grouping by window(x.t) over the join's `L.t AS t` instead, Spark 4.3 refuses ("append
# ... not supported for streaming aggregations without watermark": the generated join rewrites
# each side's t as timestamp_micros(unix_micros(t))), and so does `sjoin check` (E023)


@dataclass(frozen=True)
class ShapedWorkload:
    """Where one generated production-shaped workload lives on disk."""

    directory: Path
    shape: Shape
    rows_per_side: int
    batches: int

    def spec(self, output_format: str) -> Path:
        """The spec whose sink writes ``output_format`` (parquet or jsonl)."""
        return self.directory / f"{self.shape.name}.{output_format}.sjoin"

    @property
    def trace(self) -> Path:
        """The Parquet trace, which Spark and the columnar engine read."""
        return self.directory / "parquet"

    @property
    def jsonl_trace(self) -> Path:
        """The same rows as a JSON-lines trace (``generate_shape(jsonl=True)``): the
        reference engine reads no Parquet trace."""
        return self.directory / "trace.jsonl"

    def parquet_dir(self, stream: str) -> Path:
        return self.trace / stream

    @property
    def input_rows(self) -> int:
        return 2 * self.rows_per_side * self.batches


def _rng(seed: int, shape: str, batch: int, stream: str) -> Any:
    import numpy as np

    tags = [seed, list(SHAPES).index(shape), batch, ("l", "r", "match").index(stream)]
    return np.random.Generator(np.random.PCG64(tags))


def _times(rng: Any, batch: int, n: int) -> Any:
    """Event times in microseconds, whole milliseconds, uniform inside the batch's 10 s."""
    base = T0_US + batch * BATCH_SECONDS * 1_000_000
    return base + rng.integers(0, BATCH_SECONDS * 1000, n) * 1000


def zipf_probabilities(keys: int = KEYS, s: float = ZIPF_S) -> Any:
    """P(key = k) for k in 1..keys, proportional to k ** -s."""
    import numpy as np

    weights = np.arange(1, keys + 1, dtype=np.float64) ** -s
    return weights / weights.sum()


def shaped_batch(shape: str, seed: int, batch: int, n: int) -> dict[str, dict[str, Any]]:
    """Both streams' columns of one batch: stream -> column -> numpy array (``t`` in
    microseconds; ``amount`` in cents).  A function of its arguments only."""
    import numpy as np

    base = T0_US + batch * BATCH_SECONDS * 1_000_000
    out: dict[str, dict[str, Any]] = {}
    if shape in ("uniform", "skewed", "window_agg"):
        for stream in STREAMS:
            rng = _rng(seed, shape, batch, stream)
            if shape == "skewed" and stream == "l":
                cdf = np.cumsum(zipf_probabilities())
                keys = np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), KEYS - 1) + 1
            else:
                keys = rng.integers(1, KEYS + 1, n)
            out[stream] = {"k": keys, "t": _times(rng, batch, n)}
            if shape == "window_agg" and stream == "l":
                out[stream]["amount"] = rng.integers(0, 1_000_000, n)
        return out
    assert shape == "outer", shape
    left = _outer_left(seed, batch, n)
    # right rows of this batch: the matches whose time falls in it (of the left rows of the
    # batch before: those past its end; of this batch's: those before its end), then rows
    # of keys no left row has, up to n rows
    end = base + BATCH_SECONDS * 1_000_000
    keys_parts, times_parts = [], []
    for b in (batch - 1, batch):
        if b < 0:
            continue
        k, t = _outer_matches(seed, b, n)
        keep = t >= base if b < batch else t < end
        keys_parts.append(k[keep])
        times_parts.append(t[keep])
    keys_m = np.concatenate(keys_parts)
    times_m = np.concatenate(times_parts)
    rng = _rng(seed, shape, batch, "r")
    pad = n - len(keys_m)
    assert pad >= 0, "more matched right rows than rows per batch"
    pad_keys = -(batch * n + np.arange(pad, dtype=np.int64) + 1)  # no left key is negative
    pad_times = _times(rng, batch, pad)
    late_needed = round(LATE_SHARE * n) - int((times_m < base).sum()) if batch > 0 else 0
    if late_needed > 0:
        late = rng.choice(pad, size=min(late_needed, pad), replace=False)
        pad_times[late] = base - rng.integers(1, LATE_MAX_MS + 1, len(late)) * 1000
    keys = np.concatenate([keys_m, pad_keys])
    times = np.concatenate([times_m, pad_times])
    order = rng.permutation(n)
    out["l"] = {"k": left[0], "t": left[1]}
    out["r"] = {"k": keys[order], "t": times[order]}
    return out


def _outer_left(seed: int, batch: int, n: int) -> tuple[Any, Any]:
    """(c)'s left rows: unique keys; LATE_SHARE of them (from batch 1) 1 ms to 20 s before
    the batch's start."""
    rng = _rng(seed, "outer", batch, "l")
    keys = batch * n + rng.permutation(n).astype("int64") + 1
    times = _times(rng, batch, n)
    if batch > 0:
        late = rng.choice(n, size=round(LATE_SHARE * n), replace=False)
        base = T0_US + batch * BATCH_SECONDS * 1_000_000
        times[late] = base - rng.integers(1, LATE_MAX_MS + 1, len(late)) * 1000
    return keys, times


def _outer_matches(seed: int, batch: int, n: int) -> tuple[Any, Any]:
    """(c)'s right rows for the left rows of ``batch``: 1 - UNMATCHED_SHARE of them get one,
    0..8 s after the left row (inside the join's 10 s range); each goes to the batch its
    time falls in (this one or the next)."""
    import numpy as np

    keys, times = _outer_left(seed, batch, n)
    rng = _rng(seed, "outer", batch, "match")
    chosen = np.sort(rng.choice(n, size=round((1 - UNMATCHED_SHARE) * n), replace=False))
    delay = rng.integers(0, MATCH_DELAY_MS + 1, len(chosen)) * 1000
    return keys[chosen], times[chosen] + delay


def generate_shape(
    directory: Path,
    shape: str,
    rows_per_side: int,
    batches: int = 20,
    *,
    seed: int = 26,
    partitions: int = 2,
    jsonl: bool = False,
) -> ShapedWorkload:
    """Write ``shape``'s two specs (a Parquet and a JSON sink) and its Parquet trace; with
    ``jsonl`` also the same rows as a JSON-lines trace."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    work = ShapedWorkload(directory, SHAPES[shape], rows_per_side, batches)
    directory.mkdir(parents=True, exist_ok=True)
    for output_format, sink in SINK_FORMATS.items():
        text = work.shape.spec.format(partitions=partitions, sink=sink)
        work.spec(output_format).write_text(text)
    stamp_type = pa.timestamp("us", tz="UTC")
    for stream in STREAMS:
        work.parquet_dir(stream).mkdir(parents=True, exist_ok=True)
    lines = work.jsonl_trace.open("w") if jsonl else None
    for batch in range(batches):
        columns = shaped_batch(shape, seed, batch, rows_per_side)
        for stream in STREAMS:
            c = columns[stream]
            arrays = [pa.array(c["k"], pa.int64()), pa.array(c["t"]).cast(stamp_type)]
            names = ["k", "t"]
            if "amount" in c:
                cents = c["amount"]
                texts = [f"{v // 100}.{v % 100:02d}" for v in cents.tolist()]
                arrays.append(pa.array(texts).cast(pa.decimal128(12, 2)))
                names.append("amount")
            else:
                arrays.append(pa.array([f"{stream}{batch}-{i}" for i in range(len(c["k"]))]))
                names.append("v")
            path = work.parquet_dir(stream) / f"batch-{batch:04d}.parquet"
            table = pa.table(arrays, names=names)
            pq.write_table(table, path)
            stamp = 1_700_000_000 + batch  # the file source orders files by modification time
            os.utime(path, (stamp, stamp))
            if lines is not None:
                _write_lines(lines, batch, stream, table)
    if lines is not None:
        lines.close()
    return work


def _write_lines(out: Any, batch: int, stream: str, table: Any) -> None:
    """A batch of one stream as trace lines: times as ISO text (whole milliseconds),
    decimals as strings holding their exact digits."""
    import pyarrow as pa

    micros = table.column("t").cast(pa.int64())
    for row in table.set_column(1, "t", micros).to_pylist():
        row["t"] = _iso(row["t"])
        if "amount" in row:
            row["amount"] = str(row["amount"])
        out.write(json.dumps({"batch": batch, "stream": stream, "row": row}))
        out.write("\n")
