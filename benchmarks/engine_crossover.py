"""Where `sjoin run --engine auto` should switch engines: `sjoin run` as a new process on the
reference and the columnar engine over a grid of (rows per batch, data batches), on four
shapes of join, with the figures, the crossover and what `auto` picks in each cell.

    .venv/bin/python benchmarks/engine_crossover.py            # ~6 min on 2 shared cores
    .venv/bin/python benchmarks/engine_crossover.py --repeat 5 --rows 100 400 1600 6400

Shapes (rows per batch counts the trace lines of a batch, all streams together):

* ``bench``: the benchmark workload (workload.py), an inner range join, keys 1..10,000;
* ``bench_reordered``: the same trace with each record's fields in another order
  (``{"stream", "row", "batch"}``): the columnar engine reads it with the reference reader,
  not in bulk;
* ``ad_attribution``: examples/ad_attribution.sjoin, a LEFT OUTER range join (2/3 of the
  rows are impressions, 1/3 clicks on recent impressions, 1 in 7 after the hour);
* ``checkout_funnel``: examples/checkout_funnel.sjoin, join -> join -> windowed aggregate
  over three streams; its DOUBLE column has no bulk (canonical) form, so the columnar engine
  reads this trace with the reference reader;
* ``iot_window`` (not run by default): examples/iot_window_join.sjoin, an inner join on
  the device and a 10-second window() of each side's time (a window key, key eviction by
  the window's end); a minute of event time per batch, about 20 rows per device;
* ``funnel_decimal`` (not run by default): the same with amount DECIMAL(10, 2); every
  operator runs columnar (before DECIMAL did, only the first join did).
* ``uniform``, ``skewed``, ``outer``, ``window_agg`` (``--shapes production``): issue 26's
  four production-shaped workloads (workload.py ``generate_shape``, its JSON-lines trace,
  run with ``--relation`` of the spec's sink as bench.py runs them): (a) the inner range
  join, keys uniform; (b) left keys Zipf-skewed (s = 1.1) with one hot key; (c) a LEFT OUTER
  range join, 30% of left rows unmatched, 5% late rows per side (its generator needs 50 rows
  per side per batch or more: smaller cells are left out); (d) a window-key join feeding a
  windowed aggregate with DECIMAL amounts (read row by row: a DECIMAL has no bulk form).

``--cells 180x120 500x600`` measures those cells (rows per batch x batches) instead of the
grid: those two are the traces reported in issues 23 and 26 (2.1 MB of 120 batches, 29.7 MB
of 600 batches on the benchmark join).

Each cell runs each engine ``--repeat`` times, interleaved, and keeps the medians. Per shape
and engine it fits ``seconds = fixed + per_batch * batches + per_row * rows`` (least squares
over the cells) and prints the break-even rows per batch the fit gives at each batch count:
``(fixed_c - fixed_r) / batches + (per_batch_c - per_batch_r)``, over
``(per_row_r - per_row_c)``. Last, the cost of the scan `auto` makes of a trace file
(``runtime.scan_trace``) on a trace of about 30 MB, against a run of it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from workload import SHAPES as SHAPED  # noqa: E402 - not a package
from workload import SPEC, _iso, count, generate_shape, rows_of_batch  # noqa: E402

ENGINES = ("reference", "columnar")
T0_US = 1_767_254_400_000_000  # 2026-01-01T08:00:00Z
MINUTE_US = 60_000_000


# ------------------------------------------------------------------------------ the traces


def write(out: IO[str], batch: int, stream: str, row: dict[str, Any]) -> None:
    out.write(json.dumps({"batch": batch, "stream": stream, "row": row}))
    out.write("\n")


def bench_trace(out: IO[str], rows: int, batches: int, canonical: bool = True) -> None:
    for batch in range(batches):
        for stream, n in (("l", rows // 2), ("r", rows - rows // 2)):
            for k, t, v in rows_of_batch(7, batch, stream, n):
                row = {"k": k, "t": _iso(t), "v": v}
                if canonical:
                    write(out, batch, stream, row)
                else:  # the same record, its fields in another order
                    out.write(json.dumps({"stream": stream, "row": row, "batch": batch}))
                    out.write("\n")


def funnel_decimal_spec() -> str:
    spec = (ROOT / "examples" / "checkout_funnel.sjoin").read_text()
    assert "amount         DOUBLE" in spec
    return spec.replace("amount         DOUBLE", "amount         DECIMAL(10, 2)")


def ad_trace(out: IO[str], rows: int, batches: int) -> None:
    """5 minutes of event time per batch; each click is on an impression of the last hour,
    0-70 minutes after it (the join keeps the first 60)."""
    rng = random.Random(11)
    recent: list[tuple[int, int]] = []  # (ad_id, time) of the impressions of the last hour
    ad_id = 0
    for batch in range(batches):
        base = T0_US + batch * 5 * MINUTE_US
        impressions = max(1, rows * 2 // 3)
        for _ in range(impressions):
            ad_id += 1
            t = base + rng.randrange(5 * 60_000) * 1000
            campaign = rng.choice(("brand", "retarget", "search", "internal"))
            write(
                out,
                batch,
                "impressions",
                {"ad_id": ad_id, "impression_time": _iso(t), "campaign": campaign},
            )
            recent.append((ad_id, t))
        recent = recent[-impressions * 12 :]
        for _ in range(rows - impressions):
            clicked, t = rng.choice(recent)
            click = t + rng.randrange(70 * 60_000) * 1000
            write(
                out,
                batch,
                "clicks",
                {"ad_id": clicked, "click_time": _iso(click), "user_id": f"u{rng.randrange(1000)}"},
            )


def funnel_trace(out: IO[str], rows: int, batches: int) -> None:
    """5 minutes of event time per batch: half the rows impressions, a third clicks (0-12
    minutes after a recent impression), a sixth purchases (0-35 minutes after a recent
    click)."""
    rng = random.Random(13)
    impressions: list[tuple[int, int]] = []
    clicks: list[tuple[str, int]] = []
    ad_id = click_id = 0
    for batch in range(batches):
        base = T0_US + batch * 5 * MINUTE_US
        n_imp = max(1, rows // 2)
        n_click = max(1, rows // 3)
        for _ in range(n_imp):
            ad_id += 1
            t = base + rng.randrange(5 * 60_000) * 1000
            campaign = rng.choice(("brand", "retarget", "search"))
            write(
                out,
                batch,
                "impressions",
                {"ad_id": ad_id, "campaign": campaign, "impression_time": _iso(t)},
            )
            impressions.append((ad_id, t))
        impressions = impressions[-n_imp * 3 :]
        for _ in range(n_click):
            click_id += 1
            shown, t = rng.choice(impressions)
            c = t + rng.randrange(12 * 60_000) * 1000
            write(
                out,
                batch,
                "clicks",
                {"ad_id": shown, "click_id": f"c{click_id}", "click_time": _iso(c)},
            )
            clicks.append((f"c{click_id}", c))
        clicks = clicks[-n_click * 7 :]
        for _ in range(max(0, rows - n_imp - n_click)):
            clicked, t = rng.choice(clicks)
            p = t + rng.randrange(35 * 60_000) * 1000
            write(
                out,
                batch,
                "purchases",
                {
                    "click_id": clicked,
                    "amount": round(rng.uniform(5, 200), 2),
                    "purchase_time": _iso(p),
                },
            )


def iot_trace(out: IO[str], rows: int, batches: int) -> None:
    """A minute of event time per batch; half the rows temperatures, half humidities, of
    ``rows // 20`` devices at random times in the batch's minute (so each device has about
    two readings of each kind per 10-second window)."""
    rng = random.Random(17)
    devices = max(1, rows // 20)
    for batch in range(batches):
        base = T0_US + batch * MINUTE_US
        for stream, column, low, high in (
            ("temperature", "celsius", -10.0, 35.0),
            ("humidity", "percent", 10.0, 95.0),
        ):
            for _ in range(rows // 2 if stream == "temperature" else rows - rows // 2):
                t = base + rng.randrange(60_000) * 1000
                write(
                    out,
                    batch,
                    stream,
                    {
                        "device_id": f"d{rng.randrange(devices)}",
                        "reading_time": _iso(t),
                        column: round(rng.uniform(low, high), 1),
                    },
                )


@dataclass(frozen=True)
class Shape:
    name: str
    what: str
    spec: Callable[[], str]
    trace: Callable[[IO[str], int, int], None]
    # `sjoin run --relation`: the query the run executes (None: the spec's queries)
    relation: str | None = None
    # writes the spec and the trace of (rows per batch, batches) into a directory, instead
    # of ``spec`` and ``trace`` (the production-shaped workloads of workload.py)
    make: Callable[[int, int, Path], tuple[Path, Path]] | None = None
    min_rows: int = 1  # rows per batch below which the generator cannot make the trace


def _production_shape(name: str) -> Shape:
    """Issue 26's workload ``name`` (workload.py) as a shape: ``rows`` per batch are
    ``rows // 2`` per side; the JSON-lines trace (a Parquet trace always runs columnar)."""
    shaped = SHAPED[name]

    def make(rows: int, batches: int, directory: Path) -> tuple[Path, Path]:
        spec = directory / f"{name}.jsonl.sjoin"
        trace = directory / "trace.jsonl"
        if not (spec.exists() and trace.exists()):
            work = generate_shape(directory, name, rows // 2, batches, jsonl=True)
            assert work.spec("jsonl") == spec and work.jsonl_trace == trace
        return spec, trace

    def unused(*_: Any) -> Any:
        raise AssertionError("made by generate_shape")

    return Shape(
        name,
        shaped.title,
        unused,
        unused,
        relation=shaped.relation,
        make=make,
        min_rows=100 if name == "outer" else 2,
    )


SHAPES = {
    s.name: s
    for s in (
        Shape(
            "bench",
            "inner range join (the benchmark workload)",
            lambda: SPEC.format(partitions=2),
            bench_trace,
        ),
        Shape(
            "bench_reordered",
            "the same, each record's fields in another order (no bulk read)",
            lambda: SPEC.format(partitions=2),
            lambda out, rows, batches: bench_trace(out, rows, batches, canonical=False),
        ),
        Shape(
            "ad_attribution",
            "LEFT OUTER range join (examples/ad_attribution.sjoin)",
            lambda: (ROOT / "examples" / "ad_attribution.sjoin").read_text(),
            ad_trace,
        ),
        Shape(
            "checkout_funnel",
            "join -> join -> aggregate, a DOUBLE column (examples/checkout_funnel.sjoin)",
            lambda: (ROOT / "examples" / "checkout_funnel.sjoin").read_text(),
            funnel_trace,
        ),
        Shape(
            "iot_window",
            "inner join on a window key (examples/iot_window_join.sjoin)",
            lambda: (ROOT / "examples" / "iot_window_join.sjoin").read_text(),
            iot_trace,
        ),
        Shape(
            "funnel_decimal",
            "the same with amount DECIMAL(10, 2): every operator runs columnar",
            funnel_decimal_spec,
            funnel_trace,
        ),
    )
}
SHAPES.update({name: _production_shape(name) for name in SHAPED})
DEFAULT_SHAPES = ["bench", "bench_reordered", "ad_attribution", "checkout_funnel"]
# ``--shapes production``: issue 26's four workloads
PRODUCTION = list(SHAPED)


def generate(shape: Shape, rows: int, batches: int, workdir: Path) -> tuple[Path, Path]:
    directory = workdir / f"{shape.name}-{rows}x{batches}"
    directory.mkdir(parents=True, exist_ok=True)
    if shape.make is not None:
        return shape.make(rows, batches, directory)
    spec, trace = directory / "spec.sjoin", directory / "trace.jsonl"
    spec.write_text(shape.spec())
    if not trace.exists():
        partial = trace.with_suffix(".partial")
        with partial.open("w") as out:
            shape.trace(out, rows, batches)
        partial.replace(trace)
    return spec, trace


# ------------------------------------------------------------------------------ measuring


def run_wall(spec: Path, trace: Path, engine: str, relation: str | None = None) -> float:
    """`sjoin run` as a new process, output to /dev/null; its wall seconds."""
    return run_times(spec, trace, engine, relation)["wall"]


def run_times(
    spec: Path, trace: Path, engine: str, relation: str | None = None
) -> dict[str, float]:
    """`sjoin run` as a new process, output to /dev/null: its wall seconds and its CPU
    seconds (user + system, all its threads): on a machine whose cores are shared, the CPU
    time is what the run costs, the wall time also what it waited for a core."""
    import resource

    args = [
        sys.executable,
        "-m",
        "sjoin.cli.main",
        "run",
        str(spec),
        "--trace",
        str(trace),
        "--output",
        os.devnull,
        "--engine",
        engine,
        *(["--relation", relation] if relation is not None else []),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed (exit {done.returncode}):\n{done.stderr}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall": wall, "cpu": cpu}


def auto_choice(spec: Path, trace: Path, relation: str | None = None) -> tuple[str, str]:
    """What `sjoin run --engine auto` runs (planned as the run plans it: for ``relation``)."""
    from sjoin.api import check_text
    from sjoin.runtime import choose_engine

    plan = check_text(spec.read_text(), str(spec), relation).plan
    assert plan is not None
    return choose_engine(plan, trace)


@dataclass
class Cell:
    rows: int
    batches: int
    mb: float
    seconds: dict[str, float]
    auto: str
    reason: str
    load: float = 0.0  # the load average when the cell was measured
    # both measures' medians (``seconds`` is the one compared: ``--metric``)
    times: dict[str, dict[str, float]] | None = None

    @property
    def faster(self) -> str:
        return min(ENGINES, key=lambda e: self.seconds[e])

    @property
    def regret(self) -> float:
        """auto's time over the faster engine's (1.0: auto picked the faster one)."""
        return self.seconds[self.auto] / self.seconds[self.faster]


def measure(
    shape: Shape,
    grid: Sequence[tuple[int, int]],
    repeat: int,
    workdir: Path,
    metric: str = "wall",
) -> list[Cell]:
    cells = []
    for rows, batches in grid:
        if rows < shape.min_rows:
            print(
                f"    {shape.name:16} {rows:>6,} rows x {batches:>4} batches: left out "
                f"(the generator needs {shape.min_rows} rows per batch or more)"
            )
            continue
        spec, trace = generate(shape, rows, batches, workdir)
        runs: dict[str, dict[str, list[float]]] = {
            m: {e: [] for e in ENGINES} for m in ("wall", "cpu")
        }
        load = os.getloadavg()[0]
        for _ in range(repeat):  # interleaved: a slow spell does not land on one engine
            for engine in ENGINES:
                got = run_times(spec, trace, engine, shape.relation)
                for m, value in got.items():
                    runs[m][engine].append(value)
        auto, reason = auto_choice(spec, trace, shape.relation)
        times = {m: {e: statistics.median(v) for e, v in by.items()} for m, by in runs.items()}
        cell = Cell(
            rows,
            batches,
            trace.stat().st_size / 1e6,
            times[metric],
            auto,
            reason,
            (load + os.getloadavg()[0]) / 2,
            times,
        )
        print(
            f"    {shape.name:16} {rows:>6,} rows x {batches:>4} batches "
            f"({cell.mb:6.2f} MB): wall reference {times['wall']['reference']:6.2f} s, "
            f"columnar {times['wall']['columnar']:6.2f} s; CPU reference "
            f"{times['cpu']['reference']:6.2f} s, columnar {times['cpu']['columnar']:6.2f} s; "
            f"auto: {auto} ({reason}); load {cell.load:.1f}",
            flush=True,
        )
        cells.append(cell)
    return cells


def fit(cells: Sequence[Cell], engine: str) -> tuple[float, float, float]:
    """(fixed s, s per batch, s per row) by least squares over the cells."""
    import numpy as np

    a = np.array([[1.0, c.batches, c.rows * c.batches] for c in cells])
    y = np.array([c.seconds[engine] for c in cells])
    solution, *_ = np.linalg.lstsq(a, y, rcond=None)
    fixed, per_batch, per_row = (float(x) for x in solution)
    return fixed, per_batch, per_row


def break_even(
    ref: tuple[float, float, float], col: tuple[float, float, float], batches: int
) -> float | None:
    """Rows per batch above which the fitted columnar time is below the reference's."""
    saving = ref[2] - col[2]
    if saving <= 0:
        return None
    return ((col[0] - ref[0]) / batches + (col[1] - ref[1])) / saving


def crossover(cells: Sequence[Cell], batches: int) -> str:
    """Between which measured rows per batch the faster engine changes, at ``batches``."""
    row = sorted((c for c in cells if c.batches == batches), key=lambda c: c.rows)
    if not row:
        return "-"
    if all(c.faster == "columnar" for c in row):
        return f"<= {row[0].rows:,} (columnar throughout)"
    if all(c.faster == "reference" for c in row):
        return f"> {row[-1].rows:,} (reference throughout)"
    last_ref = max(c.rows for c in row if c.faster == "reference")
    first_col = min(c.rows for c in row if c.faster == "columnar")
    if first_col > last_ref:
        return f"{last_ref:,} .. {first_col:,}"
    return f"{first_col:,} .. {last_ref:,} (within noise)"


# ------------------------------------------------------------------------------ the scan


def scan_cost(workdir: Path, repeat: int) -> dict[str, Any]:
    """runtime.scan_trace on a ~30 MB trace of 600 batches of 500 rows (the second reported
    shape), in this process (median of ``repeat``), against `sjoin run` of it as `auto`
    runs it (reference)."""
    from sjoin.runtime import scan_trace

    shape = SHAPES["bench"]
    spec, trace = generate(shape, 500, 600, workdir)
    scans = []
    for _ in range(max(repeat, 5)):
        start = time.perf_counter()
        found = scan_trace(trace)
        scans.append(time.perf_counter() - start)
    run = statistics.median(run_wall(spec, trace, "reference") for _ in range(repeat))
    return {
        "mb": trace.stat().st_size / 1e6,
        "scan_s": statistics.median(scans),
        "run_s": run,
        "lines": found.lines,
        "batches": found.batches,
        "probes": found.probes,
    }


# ------------------------------------------------------------------------------ main


def cell_argument(text: str) -> tuple[int, int]:
    """``--cells``: ROWSxBATCHES, each a ``count``."""
    rows, sep, batches = text.partition("x")
    if not sep:
        raise argparse.ArgumentTypeError(f"a cell is ROWSxBATCHES, such as 180x120, not {text!r}")
    return count(rows), count(batches)


def table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    for line in [header, *rows]:
        print("    " + "  ".join(str(x).ljust(w) for x, w in zip(line, widths, strict=True)))
    print("\n    markdown:\n")
    print("    | " + " | ".join(header) + " |")
    print("    |" + "|".join("---" for _ in header) + "|")
    for line in rows:
        print("    | " + " | ".join(line) + " |")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rows",
        type=count,
        nargs="+",
        default=[250, 1000, 4000, 16000],
        help="rows per batch (all streams)",
    )
    parser.add_argument(
        "--batches", type=count, nargs="+", default=[8, 32, 128], help="data batches"
    )
    parser.add_argument(
        "--max-rows",
        type=count,
        default=128_000,
        help="leave out the cells with more rows in all (default 128000)",
    )
    parser.add_argument(
        "--cells",
        type=cell_argument,
        nargs="+",
        help="measure these cells, ROWSxBATCHES (rows per batch x data batches), not the grid",
    )
    parser.add_argument("--repeat", type=count, default=3)
    parser.add_argument(
        "--shapes",
        nargs="+",
        choices=[*sorted(SHAPES), "production"],
        default=DEFAULT_SHAPES,
        help="production: issue 26's four workloads (uniform skewed outer window_agg)",
    )
    parser.add_argument(
        "--json", type=Path, help="also write every cell's figures to this file (JSON)"
    )
    parser.add_argument(
        "--metric",
        choices=["wall", "cpu"],
        default="wall",
        help="what the engines are compared on: wall seconds, or CPU seconds (user + system, "
        "all threads: on a loaded machine, what each run costs rather than what it waited)",
    )
    parser.add_argument("--no-scan", action="store_true", help="skip the scan's cost")
    parser.add_argument("--scan-only", action="store_true", help="only the scan's cost")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/sjoin-engine-crossover"))
    args = parser.parse_args(argv)
    shapes = [s for name in args.shapes for s in (PRODUCTION if name == "production" else [name])]
    grid = args.cells or [
        (r, b)
        for b in sorted(set(args.batches))
        for r in sorted(set(args.rows))
        if r * b <= args.max_rows
    ]
    if not grid:
        parser.error("no cell of the grid has --max-rows rows or fewer")
    started = time.perf_counter()
    print(
        f"grid: {len(grid)} cells per shape, {args.repeat} runs per engine per cell "
        f"(medians), `sjoin run` as new processes, compared on {args.metric} seconds; load "
        f"average at the start {os.getloadavg()[0]:.1f}"
    )
    worst: list[tuple[float, str]] = []
    records: list[dict[str, Any]] = []
    for name in [] if args.scan_only else shapes:
        shape = SHAPES[name]
        print(f"\n{name}: {shape.what}")
        cells = measure(shape, grid, args.repeat, args.workdir, args.metric)
        print()
        table(
            [
                "rows/batch",
                "batches",
                "MB",
                "reference s",
                "columnar s",
                "columnar/reference",
                "faster",
                "auto",
                "auto/faster",
            ],
            [
                [
                    f"{c.rows:,}",
                    f"{c.batches:,}",
                    f"{c.mb:.2f}",
                    f"{c.seconds['reference']:.2f}",
                    f"{c.seconds['columnar']:.2f}",
                    f"{c.seconds['columnar'] / c.seconds['reference']:.2f}",
                    c.faster,
                    c.auto,
                    f"{c.regret:.2f}",
                ]
                for c in cells
            ],
        )
        worst += [(c.regret, f"{name} {c.rows:,}x{c.batches}") for c in cells]
        records += [
            {
                "shape": name,
                "rows": c.rows,
                "batches": c.batches,
                "mb": round(c.mb, 3),
                "seconds": c.seconds,
                "times": c.times,
                "auto": c.auto,
                "reason": c.reason,
                "load": round(c.load, 2),
            }
            for c in cells
        ]
        if args.json is not None:  # after each shape: a long run keeps what it measured
            args.json.write_text(json.dumps(records, indent=1) + "\n")
        if len({c.rows for c in cells}) < 2 or len({c.batches for c in cells}) < 2:
            print("\n    (no fit: it needs two row counts and two batch counts)")
            continue
        ref, col = fit(cells, "reference"), fit(cells, "columnar")
        print(
            f"\n    fit (s): reference {ref[0]:.2f} + {ref[1] * 1e3:.2f} ms/batch + "
            f"{ref[2] * 1e6:.1f} us/row; columnar {col[0]:.2f} + {col[1] * 1e3:.2f} ms/batch"
            f" + {col[2] * 1e6:.1f} us/row"
        )
        for batches in sorted({c.batches for c in cells}):
            even = break_even(ref, col, batches)
            fitted = "never (no saving per row)" if even is None else f"{even:,.0f}"
            print(
                f"    {batches:>4} batches: measured crossover (rows/batch) "
                f"{crossover(cells, batches)}; fitted break-even {fitted}"
            )
        many = break_even(ref, col, 10**9)
        if many is not None:
            print(f"    many batches: fitted break-even {many:,.0f} rows/batch")
    if worst:
        regret, where = max(worst)
        print(
            f"\nauto's worst cell: {regret:.2f}x the faster engine's time ({where}); "
            f"mean {statistics.mean(r for r, _ in worst):.3f}x"
        )
    if not args.no_scan:
        s = scan_cost(args.workdir, args.repeat)
        print(
            f"\nscan of a {s['mb']:.1f} MB trace ({s['lines']:,} lines, {s['batches']:,} "
            f"batches, {s['probes']:,} lines probed): {s['scan_s'] * 1e3:.1f} ms, "
            f"{s['scan_s'] / s['run_s']:.2%} of its run on the reference engine "
            f"({s['run_s']:.2f} s)"
        )
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
