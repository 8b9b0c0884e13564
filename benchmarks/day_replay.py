"""A day of traffic on the runtime (issue 40): 1,440 one-minute batches at 100,000 rows per
side per batch, on the uniform inner range join and the LEFT OUTER one of issue 26
(``workload.generate_shape``), against the floor of a bare polars loop and, for the first
batches, Spark local[2].

Each shape is generated as a Parquet trace (a file per stream per batch, about 1 MB each),
run, and deleted before the next, so the disk holds one shape at a time.  Three runs per
shape, each in a fresh process so that its peak memory is its own:

* ``engine``: the columnar engine through ``sjoin.runtime.iter_batches`` (what `sjoin run`
  runs: the check pass over the whole trace, then one streamed batch at a time), every
  output row built as columns and counted, then dropped, as Spark's noop sink does: a day's
  output (2 billion rows for the uniform shape) does not fit on this disk;
* ``floor``: a bare polars loop doing the same join per batch with no Spark semantics but
  what the join needs to give the same rows: read the two files, join the new rows of each
  side with the other side's state and new rows, keep the range, add the new rows to the
  state and drop what the watermark has passed (and, for LEFT OUTER, emit the left rows that
  leave the state unmatched).  No check pass, no metrics, no no-data batches, no late-row
  bookkeeping: what the engine costs over this is the price of Spark's semantics;
* ``floor-ordered``: the same loop with its joins keeping an order (polars'
  ``maintain_order="left_right"``), as a loop whose output must be the same bytes on every
  run needs, as the engine's is;
* ``spark``: the job `sjoin compile` generates, on local[2], over the first ``--spark-batches``
  batches (hard links to their files), writing its Parquet sink.

After each batch a run records its wall time and resident memory (VmRSS; the peak is
VmHWM), so the memory per batch can be plotted (``--plot``).

    python benchmarks/day_replay.py [--batches 1440] [--rows 100000] [--shapes uniform outer]
        [--spark-batches 10] [--dir DIR] [--json FILE] [--plot PNG]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import STREAMS, count, generate_shape  # not a package

WATERMARK_DELAY_US = 10_000_000  # every shape's streams: watermark t delay 10 seconds
# each shape's join, for the floor: (left outer?, the range as (low, high) offsets of L.t
# from R.t in microseconds: L.t BETWEEN R.t + low AND R.t + high)
JOINS = {
    "uniform": (False, (-5_000_000, 10_000_000)),  # L.t BETWEEN R.t - 5 s AND R.t + 10 s
    "outer": (True, (-10_000_000, 0)),  # R.t BETWEEN L.t AND L.t + 10 s
}


def memory_mib() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MiB (Linux)."""
    figures = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            figures[key] = int(value.split()[0]) / 1024
    return figures["VmRSS"], figures["VmHWM"]


class Recorder:
    """Per trace batch: its wall time since the run's start, RSS and peak after it."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.batches: list[list[float]] = []  # [seconds since start, rss MiB, peak MiB]

    def record(self) -> None:
        rss, peak = memory_mib()
        self.batches.append([round(time.perf_counter() - self.start, 3), rss, peak])

    def figures(self, **more: Any) -> dict[str, Any]:
        return {"seconds": time.perf_counter() - self.start, "per_batch": self.batches, **more}


def run_engine(directory: Path, shape: str) -> dict[str, Any]:
    """The columnar engine over the Parquet trace, as `sjoin run` runs it, the output rows
    counted and dropped."""
    import polars as pl

    from sjoin.api import check_file
    from sjoin.runtime import iter_batches

    plan = check_file(directory / f"{shape}.parquet.sjoin").plan
    assert plan is not None
    pl.DataFrame({"x": [1]}).join(pl.DataFrame({"x": [1]}), on="x")  # polars loaded and warm
    recorder = Recorder()
    output_rows = executed = 0
    state_rows = 0
    last_trace_batch = -1
    for out in iter_batches(plan, directory / "parquet", engine="columnar"):
        executed += 1
        output_rows += out.row_count
        state_rows = sum(op["numRowsTotal"] for op in out.progress["operators"])
        if out.data:
            last_trace_batch += 1
            recorder.record()
    return recorder.figures(
        output_rows=output_rows, executed_batches=executed, state_rows=state_rows
    )


def run_floor(directory: Path, shape: str, batches: int, ordered: bool = False) -> dict[str, Any]:
    """The bare polars loop (the module's docstring): the join and its state, nothing else;
    ``ordered``: its joins keep an order (the probe's rows, then the state's)."""
    import polars as pl

    outer, (low, high) = JOINS[shape]
    pl.DataFrame({"x": [1]}).join(pl.DataFrame({"x": [1]}), on="x")
    recorder = Recorder()
    # a left row can match right rows with R.t in [L.t - high, L.t - low]; it leaves the
    # state once every right row still to come (R.t >= watermark) is past that: L.t + (-low)
    # < watermark.  A right row matches L.t in [R.t + low, R.t + high]: it leaves once
    # R.t + high < watermark.
    left_keep, right_keep = low, -high
    watermark: int | None = None
    empty_l = pl.DataFrame(
        schema={"k": pl.Int64, "t": pl.Datetime("us", "UTC"), "v": pl.String, "id": pl.Int64}
    )
    order: Any = "left_right" if ordered else "none"
    state_l = empty_l.with_columns(pl.lit(False).alias("matched"))
    state_r = empty_l.drop("id")
    output_rows = 0
    next_id = 0
    for batch in range(batches):
        new_l = pl.read_parquet(directory / "parquet" / "l" / f"batch-{batch:04d}.parquet")
        new_r = pl.read_parquet(directory / "parquet" / "r" / f"batch-{batch:04d}.parquet")
        if watermark is not None:  # rows at or before the watermark are dropped as late
            cut = pl.lit(watermark).cast(pl.Datetime("us", "UTC"))
            new_l = new_l.filter(pl.col("t") > cut)
            new_r = new_r.filter(pl.col("t") > cut)
        new_l = new_l.with_columns(
            pl.int_range(next_id, next_id + new_l.height, dtype=pl.Int64).alias("id"),
            pl.lit(False).alias("matched"),
        )
        next_id += new_l.height
        all_l = pl.concat([state_l, new_l])
        in_range = (pl.col("t") >= pl.col("t_r") + pl.duration(microseconds=low)) & (
            pl.col("t") <= pl.col("t_r") + pl.duration(microseconds=high)
        )
        # new left rows with every right row, and the stored left rows with the new right
        # rows: each pair once
        # (one lazy query: polars keeps only the columns each step needs)
        pairs = pl.concat(
            [
                new_l.lazy()
                .join(pl.concat([state_r, new_r]).lazy(), on="k", suffix="_r", maintain_order=order)
                .filter(in_range),
                state_l.lazy()
                .join(new_r.lazy(), on="k", suffix="_r", maintain_order=order)
                .filter(in_range),
            ]
        ).collect()
        output = pairs.select("k", "t", "t_r", "v", "v_r")
        output_rows += output.height
        if outer:
            hit = pairs.get_column("id").unique()
            all_l = all_l.with_columns(pl.col("matched") | pl.col("id").is_in(hit.implode()))
        state_r = pl.concat([state_r, new_r])
        maxima = [f.get_column("t").dt.epoch("us").max() for f in (new_l, new_r) if f.height]
        if len(maxima) == 2:  # the global watermark: the minimum of both streams'
            seen = min(maxima) - WATERMARK_DELAY_US  # type: ignore[type-var,operator]
            watermark = seen if watermark is None else max(watermark, seen)
        if watermark is not None:
            leave_l = pl.col("t") + pl.duration(microseconds=-left_keep) < pl.lit(watermark).cast(
                pl.Datetime("us", "UTC")
            )
            if outer:  # unmatched left rows leave the state null-padded
                unmatched = all_l.filter(leave_l & ~pl.col("matched"))
                output_rows += unmatched.select("k", "t", "v").height
            all_l = all_l.filter(~leave_l)
            state_r = state_r.filter(
                pl.col("t") + pl.duration(microseconds=-right_keep)
                >= pl.lit(watermark).cast(pl.Datetime("us", "UTC"))
            )
        state_l = all_l
        recorder.record()
    return recorder.figures(output_rows=output_rows, state_rows=state_l.height + state_r.height)


def run_spark(directory: Path, shape: str, batches: int, scratch: Path) -> dict[str, Any]:
    """The generated job on local[2] over the first ``batches`` batches (hard links)."""
    first = scratch / f"{shape}-first"
    shutil.rmtree(first, ignore_errors=True)
    for stream in STREAMS:
        (first / "parquet" / stream).mkdir(parents=True)
        for batch in range(batches):
            name = f"batch-{batch:04d}.parquet"
            os.link(directory / "parquet" / stream / name, first / "parquet" / stream / name)
    shutil.copy(directory / f"{shape}.parquet.sjoin", first)
    from engines import run_spark_sink

    start = time.perf_counter()
    figures = run_spark_sink(first, shape, "parquet", first / "out")
    figures["seconds"] = time.perf_counter() - start
    import polars as pl

    figures["output_rows"] = (
        pl.scan_parquet(first / "out" / "out" / "j" / "*.parquet").select(pl.len()).collect().item()
    )
    shutil.rmtree(first)
    return figures


def child(kind: str, *args: str) -> dict[str, Any]:
    """One run in a fresh process: its figures (one JSON line on stdout)."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, *args], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"the {kind} run failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        kind, directory, shape, *rest = argv[1:]
        if kind == "engine":
            figures = run_engine(Path(directory), shape)
        elif kind in ("floor", "floor-ordered"):
            figures = run_floor(Path(directory), shape, int(rest[0]), kind == "floor-ordered")
        else:
            figures = run_spark(Path(directory), shape, int(rest[0]), Path(rest[1]))
        print(json.dumps(figures))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=count, default=1440)
    parser.add_argument("--rows", type=count, default=100_000, help="rows per side per batch")
    parser.add_argument("--shapes", nargs="+", choices=sorted(JOINS), default=["uniform", "outer"])
    parser.add_argument("--spark-batches", type=int, default=10, help="0: no Spark run")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/sjoin-day"), help="scratch")
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--plot", type=Path, help="memory per batch, as a PNG (matplotlib)")
    options = parser.parse_args(argv)
    if not 0 <= options.spark_batches <= options.batches:
        parser.error(
            f"--spark-batches: 0 to --batches ({options.batches}), not {options.spark_batches}"
        )
    results: dict[str, Any] = {"batches": options.batches, "rows": options.rows, "shapes": {}}
    for shape in options.shapes:
        directory = options.dir / shape
        shutil.rmtree(directory, ignore_errors=True)
        start = time.perf_counter()
        generate_shape(directory, shape, options.rows, options.batches)
        generated = time.perf_counter() - start
        disk = sum(f.stat().st_size for f in (directory / "parquet").rglob("*.parquet"))
        print(
            f"# {shape}: {options.batches:,} batches x {options.rows:,} rows per side generated "
            f"in {generated:.0f} s, {disk / 2**30:.2f} GiB of Parquet",
            flush=True,
        )
        figures: dict[str, Any] = {"generate_seconds": generated, "trace_bytes": disk}
        figures["engine"] = child("engine", str(directory), shape)
        figures["floor"] = child("floor", str(directory), shape, str(options.batches))
        figures["floor_ordered"] = child(
            "floor-ordered", str(directory), shape, str(options.batches)
        )
        if options.spark_batches:
            figures["spark"] = child(
                "spark", str(directory), shape, str(options.spark_batches), str(options.dir)
            )
        shutil.rmtree(directory)
        results["shapes"][shape] = figures
        report(shape, options, figures)
    if options.json:
        options.json.write_text(json.dumps(results, indent=1))
    if options.plot:
        plot(results, options.plot)
    return 0


def report(shape: str, options: argparse.Namespace, figures: dict[str, Any]) -> None:
    """The shape's figures as a Markdown table (what docs/benchmarks.md quotes)."""
    rows = 2 * options.rows * options.batches
    engine, floor, ordered = figures["engine"], figures["floor"], figures["floor_ordered"]
    at = min(10, len(engine["per_batch"])) - 1
    print(f"| {shape} | wall (s) | rows/s | peak memory (MiB) | output rows |")
    print("|---|---|---|---|---|")
    for name, f in (
        ("sjoin run --engine columnar", engine),
        ("bare polars loop", floor),
        ("bare polars loop, joins keeping an order", ordered),
    ):
        print(
            f"| {name} | {f['seconds']:,.1f} | {rows / f['seconds']:,.0f} | "
            f"{f['per_batch'][-1][2]:,.0f} | {f['output_rows']:,} |"
        )
    if "spark" in figures:
        s, n = figures["spark"], options.spark_batches
        spark_rows = 2 * options.rows * n
        print(
            f"| Spark local[2], first {n} batches | {s['seconds']:,.0f} | "
            f"{spark_rows / s['seconds']:,.0f} | {s['peak_mib']:,.0f} | {s['output_rows']:,} |"
        )
        mine = engine["per_batch"][n - 1][0]
        print(
            f"# first {n} batches: engine {mine:.1f} s, Spark {s['seconds']:.1f} s: "
            f"Spark / engine = {s['seconds'] / mine:.1f}"
        )
    print(
        f"# engine / floor time: {engine['seconds'] / floor['seconds']:.2f} (/ the floor keeping "
        f"an order: {engine['seconds'] / ordered['seconds']:.2f}); engine peak after "
        f"batch {at + 1}: {engine['per_batch'][at][2]:,.0f} MiB, after batch "
        f"{len(engine['per_batch']):,}: {engine['per_batch'][-1][2]:,.0f} MiB "
        f"({engine['per_batch'][-1][2] / engine['per_batch'][at][2]:.2f}x); state rows at the "
        f"end: engine {engine['state_rows']:,}, floor {floor['state_rows']:,}",
        flush=True,
    )


def plot(results: dict[str, Any], path: Path) -> None:
    """Resident memory after each batch, per shape, engine and floor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    for shape, figures in results["shapes"].items():
        for run, style in (("engine", "-"), ("floor", ":")):
            per = figures[run]["per_batch"]
            ax.plot(range(1, len(per) + 1), [p[1] for p in per], style, label=f"{shape}, {run}")
    ax.set_xlabel("trace batch")
    ax.set_ylabel("resident memory (MiB)")
    ax.set_ylim(bottom=0)
    ax.set_title(
        f"sjoin run --engine columnar: {results['batches']:,} batches x "
        f"{results['rows']:,} rows per side"
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    raise SystemExit(main())
