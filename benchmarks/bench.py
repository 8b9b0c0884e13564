"""sjoin against real Spark on this machine, in one run, as ratios.

    .venv/bin/python benchmarks/bench.py                 # everything (~15 min on 2 cores)
    .venv/bin/python benchmarks/bench.py --quick         # N = 20k only, fewer repeats
    .venv/bin/python benchmarks/bench.py --markdown docs/benchmarks.md   # also write the table

1. Throughput: the seeded workload of workload.py (inner range join with watermarks, keys
   1..10,000, 10 batches, N rows per side per batch) on the reference runtime, the columnar
   engine and local[2] Spark running the job `sjoin compile` generates (N = 20k, 100k, 500k;
   the reference runtime is left out at 500k). Per engine: steady-state input rows/s
   (batches 2..10), wall time of the whole process (interpreter, imports, JVM, reading,
   every batch), peak resident memory, final state rows and output rows (which must agree).
2. The generated PySpark job against a hand-written one (handwritten_job.py): executed
   physical plans compared modulo expression ids, and their run-time ratio.
3. A small 5-batch test scenario end to end: the runtime against Spark session start + run.
4. Evicting 1% of a 1,000,000-row state: the event-time index against a full scan
   (eviction.py: in stream order, the target, and in random order, the worst case); and the
   columnar engine's state evicting nothing and 1% (eviction_columnar.py).
5. A cold `sjoin check` and `sjoin compile` of each example (a new process each time).

`--startup` runs only the start-up section (issue 26, item 6), on its own so that no Spark
run just before disturbs it: N cold processes each of `sjoin --version`, `--help`, `check`,
`compile` and `plan` of an example, interleaved; median, p90, best and CPU time against the
targets, the machine's load, and whether `--version`/`--help` import sqlglot or lark.

    .venv/bin/python benchmarks/bench.py --startup --markdown docs/benchmarks.md

Each engine run is a new process (engines.py, startup.py, eviction.py), so start-up and
peak memory are its own. Run it on a quiet machine: both engines share its cores.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from workload import (  # noqa: E402 - the benchmark folder is not a package
    SHAPES,
    ShapedWorkload,
    Workload,
    count,
    generate,
    generate_shape,
)

TARGET_THROUGHPUT = 2.0
TARGET_SMALL = 50.0
TARGET_EVICTION = 0.05
# issue 17: the columnar engine against Spark local[2], per N (rows per side per batch)
TARGET_COLUMNAR = {20_000: 5.0, 100_000: 10.0}
TARGET_EVICT_NOTHING_MS = 1.0
TARGET_CHECK_S = 0.3
COLUMNAR = ["columnar", "columnar-parquet", "columnar-lines", "columnar-jsonl"]


# ------------------------------------------------------------------------------ running


def child(args: Sequence[str], what: str) -> tuple[dict[str, Any], float]:
    """Run a benchmark process; return the JSON it printed last and its wall seconds."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise ChildFailed(f"{what} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise ChildFailed(f"{what} printed no figures:\n{done.stdout[-2000:]}")
    return json.loads(lines[-1]), wall


class ChildFailed(Exception):
    """A benchmark process failed: throughput runs record it and go on (a Spark run that
    dies at the largest size must not lose the figures of the rest); others stop."""


def steady_rows_per_s(figures: dict[str, Any]) -> float:
    """Input rows per second over batches 2..10 (the first pays for warm-up)."""
    batches = figures["batches"][1:]
    return sum(b["rows"] for b in batches) / sum(b["seconds"] for b in batches)


def steady_seconds(figures: dict[str, Any]) -> float:
    return float(sum(b["seconds"] for b in figures["batches"][1:]))


def engine(name: str, work: Workload) -> dict[str, Any]:
    args = [
        str(HERE / "engines.py"),
        name,
        str(work.directory),
        str(work.rows_per_side),
        str(work.batches),
    ]
    figures, wall = child(args, f"{name} on N={work.rows_per_side:,}")
    figures["wall_s"] = wall
    figures["steady"] = steady_rows_per_s(figures)
    return figures


# ------------------------------------------------------------------------------ sections


LABELS = {
    "runtime": "sjoin runtime (rows counted, like Spark's noop sink)",
    "runtime-rows": "sjoin runtime (+ JSON-ready row dicts, as run() returns)",
    "columnar": "sjoin columnar engine, Parquet input (every output row built as columns)",
    "columnar-parquet": "sjoin columnar engine, Parquet input, every output row written to Parquet",
    "columnar-lines": "sjoin columnar engine, Parquet input, + every output JSON line",
    "columnar-jsonl": "sjoin columnar engine, JSON-lines trace, + every output JSON line",
    "generated": "Spark local[2], generated job, noop sink",
    "handwritten": "Spark local[2], hand-written job, noop sink",
}


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median steady-state throughput (this machine's speed varies)."""
    return sorted(runs, key=lambda r: r["steady"])[len(runs) // 2]


def measure(
    n: int, batches: int, repeat: int, engines: list[str], workdir: Path
) -> dict[str, list[dict[str, Any]]]:
    """``engines`` on the workload of size ``n``, ``repeat`` times each, interleaved so
    that a slow spell of the machine does not land on one engine."""
    print(f"  generating N={n:,} rows per side per batch ...", flush=True)
    work = generate(workdir / f"n{n}", n, batches)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in engines}
    for i in range(repeat):
        names = engines if i % 2 == 0 else engines[::-1]
        for name in names:
            print(f"  N={n:,}: {name} run {i + 1}/{repeat} ...", flush=True)
            try:
                runs[name].append(engine(name, work))
            except ChildFailed as err:
                print(f"  bench: {err}", flush=True)
                FAILED[(n, name)] = str(err).splitlines()[-1][:300]
    return runs


FAILED: dict[tuple[int, str], str] = {}  # (N, engine) -> the last line of its error
HEADER = ["engine", "steady rows/s", "wall s", "peak MiB", "final state rows", "output rows"]


def _row(name: str, r: dict[str, Any]) -> list[str]:
    return [
        LABELS[name],
        f"{r['steady']:,.0f}",
        f"{r['wall_s']:.1f}",
        f"{r['peak_mib']:,.0f}",
        f"{r['state_rows']:,}",
        f"{r['output_rows']:,}",
    ]


def throughput(n: int, batches: int, runs: dict[str, list[dict[str, Any]]], out: Report) -> None:
    chosen = {name: median_run(rs) for name, rs in runs.items() if rs}
    for (size, name), why in FAILED.items():
        if size == n:
            out.figure(f"N={n:,} {name}: the run failed ({why})", False, "a run")
    if "generated" not in chosen:
        out.table(
            f"N = {n:,} rows per side per batch, without Spark (its run failed)",
            HEADER,
            [_row(name, r) for name, r in chosen.items()],
        )
        return
    spark = chosen["generated"]
    repeat = len(runs["generated"])
    out.table(
        f"N = {n:,} rows per side per batch ({2 * n * batches:,} input rows); "
        f"median of {repeat} run{'s' if repeat > 1 else ''} per engine",
        HEADER,
        [_row(name, r) for name, r in chosen.items()],
    )
    for name in ("runtime", "runtime-rows", *COLUMNAR):
        if name not in chosen:
            continue
        r = chosen[name]
        ratio = r["steady"] / spark["steady"]
        shorter = spark["wall_s"] / r["wall_s"]
        memory = r["peak_mib"] / spark["peak_mib"]
        target = TARGET_COLUMNAR.get(n, 0.0) if name in COLUMNAR else TARGET_THROUGHPUT
        wanted = [f">= {target:.0f}x"] if target else []
        wanted += ["memory under Spark's"] if name in COLUMNAR else []
        out.figure(
            f"N={n:,} {name}: throughput {ratio:.2f}x Spark's, wall {shorter:.1f}x "
            f"shorter, memory {memory:.2f}x Spark's",
            ratio >= target and (name not in COLUMNAR or memory < 1),
            ", ".join(wanted),
        )
    agree = {(r["output_rows"], r["state_rows"]) for rs in runs.values() for r in rs} == {
        (spark["output_rows"], spark["state_rows"])
    }
    out.figure(f"N={n:,}: output rows and final state rows equal in every run", agree, "equal")


def generated_vs_handwritten(n: int, runs: dict[str, list[dict[str, Any]]], out: Report) -> None:
    plans = {name: normal_plan(runs[name][-1]["plan"]) for name in ("generated", "handwritten")}
    same = plans["generated"] == plans["handwritten"]
    rows = []
    for name in ("generated", "handwritten"):
        steady = [steady_seconds(r) for r in runs[name]]
        walls = [r["wall_s"] for r in runs[name]]
        rows.append(
            [
                name,
                " / ".join(f"{s:.2f}" for s in steady),
                f"{statistics.median(steady):.2f}",
                f"{statistics.median(walls):.1f}",
                f"{runs[name][-1]['output_rows']:,}",
            ]
        )
    repeat = len(runs["generated"])
    out.table(
        f"N = {n:,}, {repeat} runs each, interleaved",
        ["job", "batches 2..10 s (each run)", "median s", "median wall s", "output rows"],
        rows,
    )
    med = {
        name: statistics.median(steady_seconds(r) for r in runs[name])
        for name in ("generated", "handwritten")
    }
    spread = max(
        (max(steady_seconds(r) for r in runs[name]) - min(steady_seconds(r) for r in runs[name]))
        / med[name]
        for name in med
    )
    ratio = med["generated"] / med["handwritten"]
    out.figure(
        f"run-time ratio generated / hand-written: {ratio:.2f} (run-to-run spread of one job: "
        f"{spread:.0%})",
        abs(ratio - 1) <= max(spread, 0.05),
        "1.00 within noise",
    )
    out.figure("executed physical plans identical modulo expression ids", same, "identical")
    if not same:
        diff = difflib.unified_diff(
            plans["handwritten"].splitlines(), plans["generated"].splitlines(), lineterm=""
        )
        out.text("\n".join(diff))


def normal_plan(plan: str) -> str:
    """An executed plan without what differs between any two runs of one job: expression
    ids, plan ids, watermark operator ids, checkpoint paths and run ids."""
    plan = re.sub(r"#\d+", "#_", plan)
    plan = re.sub(r"plan_id=\d+", "plan_id=_", plan)
    plan = re.sub(r"checkpoint = \S+,", "checkpoint = _,", plan)
    plan = re.sub(r"runId = [0-9a-f-]+", "runId = _", plan)
    return re.sub(r"EventTimeWatermark [0-9a-f-]{36}", "EventTimeWatermark _", plan)


def small_scenario(workdir: Path, runs: int, out: Report) -> None:
    out.section("3. A small test scenario: 5 batches of 10 rows per side, keys 1..5")
    work = generate(workdir / "small", 10, 5, keys=5)
    cli = [
        "-m",
        "sjoin.cli.main",
        "run",
        str(work.spec),
        "--trace",
        str(work.trace),
        "--output",
        os.devnull,
    ]
    # one untimed run of each first (a --quick run right after the Spark sections measured
    # 0.42 s where the same command on its own takes 0.27 s)
    child_wall(cli)
    child_wall([*cli, "--engine", "columnar"])
    cli_walls = [child_wall(cli) for _ in range(runs)]
    columnar_walls = [child_wall([*cli, "--engine", "columnar"]) for _ in range(runs)]
    inproc = [child([str(HERE / "startup.py"), "runtime", str(work.directory)], "runtime")[0]]
    spark, spark_wall = child([str(HERE / "startup.py"), "spark", str(work.directory)], "spark")
    runtime_s = statistics.median(cli_walls)
    run_s = inproc[0]["run_s"]
    spark_s = spark["session_s"] + spark["run_s"]
    out.table(
        "end to end",
        ["engine", "what is timed", "seconds", "output rows"],
        [
            [
                "sjoin runtime",
                "`sjoin run` as a new process (median; `--engine auto`, the default, runs "
                "this small trace on the reference engine)",
                f"{runtime_s:.2f}",
                "-",
            ],
            [
                "sjoin runtime",
                "`sjoin run --engine columnar` as a new process (median; polars imported)",
                f"{statistics.median(columnar_walls):.2f}",
                "-",
            ],
            [
                "sjoin runtime",
                "plan + run, sjoin imported",
                f"{run_s:.3f}",
                f"{inproc[0]['output_rows']}",
            ],
            ["Spark local[2]", "new process: import, session start, run", f"{spark_wall:.1f}", "-"],
            ["Spark local[2]", "session start + run", f"{spark_s:.1f}", f"{spark['output_rows']}"],
            ["Spark local[2]", "run, session already started", f"{spark['run_s']:.1f}", "-"],
        ],
    )
    out.figure(
        f"new process each: `sjoin run` {spark_wall / runtime_s:.0f}x faster than Spark",
        spark_wall / runtime_s >= TARGET_SMALL,
        f">= {TARGET_SMALL:.0f}x",
    )
    columnar_s = statistics.median(columnar_walls)
    out.figure(
        f"new process each: `sjoin run --engine columnar` {spark_wall / columnar_s:.0f}x "
        "faster than Spark (for information: `auto` does not pick it for a small trace)",
        True,
        "-",
    )
    out.figure(
        f"in a test process: runtime plan + run {spark_s / run_s:.0f}x faster than Spark session "
        f"start + run ({spark['run_s'] / run_s:.0f}x than the run alone)",
        spark_s / run_s >= TARGET_SMALL,
        f">= {TARGET_SMALL:.0f}x",
    )
    out.figure(
        "both engines give the same output rows",
        inproc[0]["output_rows"] == spark["output_rows"],
        "equal",
    )


def child_wall(args: Sequence[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def eviction(out: Report) -> None:
    out.section("4. Eviction of 1% of a 1,000,000-row state")
    figures, _ = child([str(HERE / "eviction.py")], "eviction")
    out.table(
        "best of 3, each on a state built in a new process",
        ["event-time order of the state", "event-time index ms", "full scan ms", "index / scan"],
        [
            [
                label,
                f"{figures[f'{order}_index_ms']:.1f}",
                f"{figures[f'{order}_scan_ms']:.1f}",
                f"{figures[f'{order}_ratio']:.1%}",
            ]
            for order, label in (
                ("stream", "as a stream appends it (time grows with the batch)"),
                ("random", "random (worst case: evicted rows spread over memory)"),
            )
        ],
    )
    out.figure(
        f"stream order: index {figures['stream_ratio']:.1%} of the scan's time",
        figures["stream_ratio"] <= TARGET_EVICTION,
        f"<= {TARGET_EVICTION:.0%}",
    )
    col, _ = child([str(HERE / "eviction_columnar.py")], "columnar eviction")
    out.table(
        "the columnar engine's state (1,000,000 rows, stream order), best of 3",
        ["eviction", "ms"],
        [
            ["removes nothing (watermark below the oldest row)", f"{col['nothing_ms']:.3f}"],
            ["removes the 1% oldest", f"{col['one_percent_ms']:.1f}"],
        ],
    )
    out.figure(
        f"columnar: evicting 0 rows from a 1M-row state takes {col['nothing_ms']:.3f} ms",
        col["nothing_ms"] < TARGET_EVICT_NOTHING_MS,
        f"< {TARGET_EVICT_NOTHING_MS:.0f} ms",
    )


def cold_compile(runs: int, workdir: Path, out: Report) -> None:
    out.section("5. Cold `sjoin check` and `sjoin compile` of each example (new process)")
    rows = []
    worst_check = 0.0
    for spec in sorted((ROOT / "examples").glob("*.sjoin")):
        target = workdir / f"{spec.stem}_job.py"
        checks = [child_wall(["-m", "sjoin.cli.main", "check", str(spec)]) for _ in range(runs)]
        walls = [
            child_wall(["-m", "sjoin.cli.main", "compile", str(spec), "-o", str(target)])
            for _ in range(runs)
        ]
        worst_check = max(worst_check, statistics.median(checks))
        rows.append(
            [
                spec.name,
                f"{statistics.median(checks):.2f}",
                f"{min(checks):.2f}",
                f"{statistics.median(walls):.2f}",
                f"{min(walls):.2f}",
            ]
        )
    out.table(
        f"{runs} runs each",
        ["example", "check median s", "check best s", "compile median s", "compile best s"],
        rows,
    )
    out.figure(
        f"cold `sjoin check`: {worst_check:.2f} s (the slowest example's median)",
        worst_check < TARGET_CHECK_S,
        f"< {TARGET_CHECK_S} s",
    )


# ------------------------------------------------------- production-shaped workloads (issue 26)


# issue 26: wall time of the whole `sjoin run --engine columnar` process against Spark's, both
# writing every output row in the format named
TARGET_SHAPED = {"parquet": 10.0, "jsonl": 5.0}
# issue 26, item 5: JSON-lines output costs at most twice Parquet output's wall time
TARGET_JSON_OVER_PARQUET = 2.0
FORMAT_NAMES = {"parquet": "Parquet", "jsonl": "JSON lines"}


class WorkloadFailed(Exception):
    """A production-shaped workload that must fail the bench (exit 1): its columnar run
    left an operator to the reference engine, or the engines disagree on its rows."""


def timed_process(args: Sequence[str], cwd: Path) -> dict[str, Any]:
    """Run a process to its end: wall seconds, peak resident MiB (``wait4``'s ``ru_maxrss``,
    the process's own), exit status and its stderr."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return {
        "wall_s": wall,
        "peak_mib": usage.ru_maxrss / 1024,
        "status": process.returncode,
        "stderr": text,
    }


def output_rows(path: Path, output_format: str) -> int:
    """Rows written under ``path``: a JSON-lines file, or the Parquet (or Spark's JSON)
    part files of a directory."""
    if path.is_file():
        with path.open("rb") as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    if output_format == "parquet":
        import pyarrow.parquet as pq

        return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(path.glob("*.parquet")))
    total = 0
    for part in sorted(path.glob("part-*.json")):
        total += output_rows(part, "jsonl")
    return total


def sjoin_run(
    work: ShapedWorkload, engine_name: str, output_format: str, scratch: Path
) -> dict[str, Any]:
    """`sjoin run` as a user runs it, a new process: the Parquet trace (the reference engine:
    the same rows as a JSON-lines trace, as it reads no Parquet), every output row of
    the spec's sink relation written in ``output_format``, one progress line per batch,
    ``--backlog`` (the trace's batches back to back, as Spark's file source runs files that
    were all there when it started: the same batches as Spark's), ``--verbose`` (which
    engine runs each operator)."""
    out = scratch / ("out.jsonl" if output_format == "jsonl" else "out")
    progress = scratch / "progress.jsonl"
    args = [
        sys.executable,
        "-m",
        "sjoin",
        "run",
        str(work.spec(output_format)),
        "--trace",
        str(work.trace if engine_name == "columnar" else work.jsonl_trace),
        "--engine",
        engine_name,
        "--relation",
        work.shape.relation,
        "--backlog",
        "--verbose",
        "--progress",
        str(progress),
        "--output",
        str(out),
        "--output-format",
        output_format,
    ]
    load = os.getloadavg()[0]
    figures = timed_process(args, ROOT)
    if figures["status"] != 0:
        raise ChildFailed(
            f"sjoin run --engine {engine_name} ({output_format}) exited {figures['status']}:\n"
            + figures["stderr"][-2000:]
        )
    last = json.loads(progress.read_text().splitlines()[-1])
    figures.update(
        load=load,
        output_rows=output_rows(
            out / work.shape.relation if output_format == "parquet" else out, output_format
        ),
        state_rows=sorted(op["numRowsTotal"] for op in last["operators"]),
        fallbacks=re.findall(r"`([^`]+)` runs on the reference engine: (.*)", figures["stderr"]),
        out=out,
    )
    return figures


def spark_run(work: ShapedWorkload, output_format: str, scratch: Path) -> dict[str, Any]:
    """The generated job on local[2] Spark writing its sink (engines.py spark-sink)."""
    load = os.getloadavg()[0]
    args = [
        str(HERE / "engines.py"),
        "spark-sink",
        str(work.directory),
        work.shape.name,
        output_format,
        str(scratch),
    ]
    figures, wall = child(args, f"Spark {work.shape.name} ({output_format})")
    figures.update(
        wall_s=wall,
        load=load,
        output_rows=output_rows(scratch / "out" / work.shape.relation, output_format),
    )
    return figures


def production(
    shapes: list[str],
    sizes: list[int],
    batches: int,
    reference_max: int,
    workdir: Path,
    out: Report,
    outputs: Path | None = None,
) -> list[str]:
    """Issue 26: each production-shaped workload at each size, on sjoin's columnar engine
    (Parquet and JSON-lines output), Spark local[2] (the generated job, the same formats) and
    sjoin's reference engine (JSON lines; up to ``reference_max`` rows per side per batch).
    Every run writes its output under ``outputs`` (default: ``workdir``), removed once its
    rows are counted.  Returns the failures: a workload whose columnar run fell back to the
    reference engine, or whose engines disagree on output or final state rows."""
    from sjoin.api import check_file
    from sjoin.runtime.operators import fallbacks, place

    failures: list[str] = []
    outputs = outputs or workdir
    out.section(
        f"6. Production-shaped workloads (issue 26): {batches} batches, the same Parquet "
        "micro-batches for every engine, every output row written"
    )
    for shape in shapes:
        for n in sizes:
            label = f"{shape} N={n:,}"
            print(f"  generating {label} ({batches} batches) ...", flush=True)
            work = generate_shape(
                workdir / f"{shape}-n{n}-b{batches}", shape, n, batches, jsonl=n <= reference_max
            )
            plan = check_file(work.spec("parquet")).plan
            assert plan is not None, f"{work.spec('parquet')} does not plan"
            placed = place(plan)
            planned = fallbacks(placed, list(placed))
            runs: dict[str, dict[str, Any]] = {}
            order = [("columnar", "parquet"), ("spark", "parquet"), ("columnar", "jsonl")]
            order += [("spark", "jsonl")]
            if n <= reference_max:
                order.append(("reference", "jsonl"))
            for engine_name, output_format in order:
                key = f"{engine_name}-{output_format}"
                print(f"  {label}: {key} ...", flush=True)
                scratch = outputs / f"{shape}-n{n}-{key}"
                shutil.rmtree(scratch, ignore_errors=True)
                scratch.mkdir(parents=True)
                try:
                    if engine_name == "spark":
                        runs[key] = spark_run(work, output_format, scratch)
                    else:
                        runs[key] = sjoin_run(work, engine_name, output_format, scratch)
                except ChildFailed as err:
                    print(f"  bench: {err}", flush=True)
                    out.figure(f"{label} {key}: the run failed ({str(err)[:300]})", False, "a run")
                if key == "reference-jsonl" and "columnar-jsonl" in runs and key in runs:
                    same = _same_bytes(runs["columnar-jsonl"]["out"], runs[key]["out"])
                    runs[key]["same_bytes"] = same
                if engine_name != "columnar" or output_format != "jsonl":
                    shutil.rmtree(scratch, ignore_errors=True)
            shutil.rmtree(outputs / f"{shape}-n{n}-columnar-jsonl", ignore_errors=True)
            expected = [f"{e}-{f}" for e, f in order]
            failures += _production_report(label, n, batches, runs, planned, out, expected)
    return failures


def _same_bytes(a: Path, b: Path) -> bool:
    with a.open("rb") as fa, b.open("rb") as fb:
        while True:
            x, y = fa.read(1 << 24), fb.read(1 << 24)
            if x != y:
                return False
            if not x:
                return True


PRODUCTION_LABELS = {
    "columnar-parquet": "sjoin run --engine columnar, Parquet output",
    "columnar-jsonl": "sjoin run --engine columnar, JSON-lines output",
    "reference-jsonl": "sjoin run --engine reference, JSON-lines output",
    "spark-parquet": "Spark local[2], generated job, Parquet sink",
    "spark-jsonl": "Spark local[2], generated job, JSON sink",
}


def _production_report(
    label: str,
    n: int,
    batches: int,
    runs: dict[str, dict[str, Any]],
    planned: dict[str, str],
    out: Report,
    expected: list[str],
) -> list[str]:
    failures: list[str] = []
    out.table(
        f"{label} ({2 * n * batches:,} input rows)",
        ["engine", "wall s", "peak MiB", "output rows", "final state rows", "load"],
        [
            [
                PRODUCTION_LABELS[key],
                f"{r['wall_s']:.1f}",
                f"{r['peak_mib']:,.0f}",
                f"{r['output_rows']:,}",
                " + ".join(f"{x:,}" for x in r["state_rows"]),
                f"{r['load']:.1f}",
            ]
            for key, r in runs.items()
        ],
    )
    for output_format, target in TARGET_SHAPED.items():
        mine, spark = runs.get(f"columnar-{output_format}"), runs.get(f"spark-{output_format}")
        if mine is None or spark is None:
            continue
        ratio = spark["wall_s"] / mine["wall_s"]
        memory = mine["peak_mib"] / spark["peak_mib"]
        name = FORMAT_NAMES[output_format]
        out.figure(
            f"{label} {name}: wall {ratio:.1f}x shorter than Spark's (load {mine['load']:.1f} / "
            f"{spark['load']:.1f})",
            ratio >= target,
            f">= {target:.0f}x",
        )
        out.figure(
            f"{label} {name}: peak memory {memory:.2f}x Spark's", memory < 1, "below Spark's"
        )
    if all(f"{e}-{f}" in runs for e in ("columnar", "spark") for f in ("parquet", "jsonl")):
        # item 5, as the figures are put: each format's ratio to Spark writing it
        figure = {
            f: runs[f"spark-{f}"]["wall_s"] / runs[f"columnar-{f}"]["wall_s"]
            for f in ("parquet", "jsonl")
        }
        out.figure(
            f"{label}: JSON lines' figure {figure['jsonl']:.1f}x is "
            f"{figure['jsonl'] / figure['parquet']:.2f} of Parquet's {figure['parquet']:.1f}x",
            figure["jsonl"] >= figure["parquet"] / TARGET_JSON_OVER_PARQUET,
            f">= 1/{TARGET_JSON_OVER_PARQUET:.0f}",
        )
    if "columnar-parquet" in runs and "columnar-jsonl" in runs:
        # and as sjoin's own throughput: the JSON-lines run against the Parquet run
        over = runs["columnar-jsonl"]["wall_s"] / runs["columnar-parquet"]["wall_s"]
        out.figure(
            f"{label}: sjoin's JSON-lines run takes {over:.2f}x its Parquet run's wall time",
            over <= TARGET_JSON_OVER_PARQUET,
            f"<= {TARGET_JSON_OVER_PARQUET:.0f}x",
        )
    counts = {key: (r["output_rows"], tuple(r["state_rows"])) for key, r in runs.items()}
    agree = len(set(counts.values())) <= 1
    missing = [key for key in expected if key not in runs]
    engines = ", ".join(sorted({k.split("-")[0] for k in counts}))
    out.figure(
        f"{label}: output rows and final state rows equal on {engines} (both output formats)"
        + (f"; {', '.join(missing)} did not run" if missing else ""),
        agree and not missing,
        "equal",
    )
    if not agree:
        failures.append(f"{label}: output or final state rows differ: {counts}")
    if missing:
        failures.append(f"{label}: {', '.join(missing)} failed (above), nothing to compare with")
    if "reference-jsonl" in runs and "same_bytes" in runs["reference-jsonl"]:
        same = runs["reference-jsonl"]["same_bytes"]
        out.figure(f"{label}: the two engines' JSON-lines files byte for byte equal", same, "equal")
        if not same:
            failures.append(f"{label}: the columnar JSON lines differ from the reference's")
    fell_back = {name: why for r in runs.values() for name, why in r.get("fallbacks", [])}
    fell_back.update(planned)
    out.figure(
        f"{label}: every operator ran columnar"
        + (
            ""
            if not fell_back
            else " - fell back: " + "; ".join(f"`{k}`: {v}" for k, v in sorted(fell_back.items()))
        ),
        not fell_back,
        "no fallback",
    )
    if fell_back:
        failures.append(
            f"{label}: the columnar run left "
            + ", ".join(f"`{k}` ({v})" for k, v in sorted(fell_back.items()))
            + " to the reference engine"
        )
    return failures


# ------------------------------------------------------------------------------ output


class Report:
    """Prints as it goes and keeps a Markdown copy for docs/benchmarks.md."""

    def __init__(self) -> None:
        self.markdown: list[str] = []
        self.verdicts: list[tuple[str, bool, str]] = []

    def section(self, title: str) -> None:
        print(f"\n{title}", flush=True)
        self.markdown += ["", f"### {title}", ""]

    def table(self, caption: str, header: list[str], rows: list[list[str]]) -> None:
        widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
        print(f"  {caption}")
        for line in [header, *rows]:
            print("    " + "  ".join(str(x).ljust(w) for x, w in zip(line, widths, strict=True)))
        self.markdown += ["", f"{caption}:", "", "| " + " | ".join(header) + " |"]
        self.markdown.append("|" + "|".join("---" for _ in header) + "|")
        self.markdown += ["| " + " | ".join(row) + " |" for row in rows]
        self.markdown.append("")

    def figure(self, text: str, ok: bool, target: str) -> None:
        mark = "ok " if ok else "MISSED"
        print(f"  [{mark}] {text} (target {target})", flush=True)
        self.verdicts.append((text, ok, target))
        self.markdown.append(f"- {'met' if ok else '**missed**'}: {text} (target {target})")

    def text(self, body: str) -> None:
        print(body)
        self.markdown += ["```text", body, "```"]


def machine() -> str:
    cpu = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"model name\s*:\s*(.+)", cpuinfo.read_text())
        cpu = found.group(1).strip() if found else cpu
    mem = ""
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        found = re.search(r"MemTotal:\s*(\d+)", meminfo.read_text())
        mem = f", {int(found.group(1)) / 1024 / 1024:.0f} GiB" if found else ""
    java = shutil.which("java")
    java_v = ""
    if java:
        banner = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
        java_v = banner.splitlines()[0] if banner else ""
    try:
        from importlib.metadata import version

        pyspark = version("pyspark")
    except Exception:
        pyspark = "not installed"
    return (
        f"{cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; pyspark {pyspark}; {java_v}"
    )


def write_markdown(path: Path, report: Report, header: str, marker: str = "bench") -> None:
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    body = "\n".join([start, header, *report.markdown, "", end])
    text = path.read_text() if path.exists() else f"# Benchmarks\n\n{start}\n{end}\n"
    if start not in text or end not in text:
        sys.exit(f"bench: {path} has no {start} ... {end} section to replace")
    before, rest = text.split(start, 1)
    after = rest.split(end, 1)[1]
    path.write_text(before + body + after)
    print(f"\nwrote the figures into {path}")


# ------------------------------------------------------------------ start-up (issue 26, item 6)

# the median wall time of a cold process of each command (None: the issue sets no target)
TARGET_STARTUP_S: dict[str, float | None] = {
    "--version": 0.1,
    "--help": 0.1,
    "check": 0.25,
    "compile": 0.25,
    "plan": None,
}
STARTUP_SPEC = ROOT / "examples" / "ad_attribution.sjoin"
# what `--version` and `--help` must not import
HEAVY_MODULES = ("sqlglot", "lark", "polars", "pyarrow", "pyspark")


def sjoin_command() -> list[str]:
    """The `sjoin` console script beside this interpreter (what a user runs), else
    ``python -m sjoin``."""
    script = Path(sys.executable).parent / "sjoin"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "sjoin"]


def startup_commands(spec: Path, scratch: Path) -> dict[str, list[str]]:
    return {
        "--version": ["--version"],
        "--help": ["--help"],
        "check": ["check", str(spec)],
        "compile": ["compile", str(spec), "-o", str(scratch / "job.py")],
        "plan": ["plan", str(spec)],
    }


def cold_process(argv: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process, which must succeed."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise ChildFailed(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr.decode()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-9 * len(ordered) // 10) - 1)]


def startup(runs: int, spec: Path, out: Report, against: Path | None = None) -> None:
    """Issue 26, item 6: ``runs`` cold processes of each command, interleaved (a slow spell
    of the machine falls on every command alike), with the parser cache of a fresh
    ``XDG_CACHE_HOME`` (written by one run before: the first run a user makes).  With
    ``against`` (another sjoin installed there by ``pip install --target``), each run is
    paired with one of that sjoin (``python -m sjoin`` under ``PYTHONPATH``, as this one then
    runs too), and a second table compares their CPU times."""
    sjoin = sjoin_command()
    with tempfile.TemporaryDirectory(prefix="sjoin-startup-") as scratch:
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch) / "cache")}
        commands = startup_commands(spec, Path(scratch))
        other = None
        if against is not None:  # both as `python -m sjoin`, each on its own PYTHONPATH
            sjoin = [sys.executable, "-m", "sjoin"]
            here = tempfile.mkdtemp(prefix="sjoin-here-", dir=scratch)
            subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                 here, str(ROOT)],
                check=True,
                capture_output=True,
            )  # fmt: skip
            other = {**env, "PYTHONPATH": str(against)}
            env = {**env, "PYTHONPATH": here}
            cold_process([*sjoin, *commands["check"]], other)
        first, _ = cold_process([*sjoin, *commands["check"]], env)  # builds the parser
        loads = [os.getloadavg()[0]]
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        before: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, args in commands.items():
                wall, cpu = cold_process([*sjoin, *args], env)
                walls[name].append(wall)
                cpus[name].append(cpu)
                if other is not None:
                    before[name].append(cold_process([*sjoin, *args], other)[1])
            loads.append(os.getloadavg()[0])
        # what --version and --help import (python -X importtime: one line per module)
        imported = {}
        for name in ("--version", "--help"):
            done = subprocess.run(
                [sys.executable, "-X", "importtime", "-m", "sjoin", name],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            lines = done.stderr.splitlines()
            modules = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in lines}
            imported[name] = sorted(modules & set(HEAVY_MODULES))
    program = " ".join(Path(a).name for a in sjoin)
    out.section(
        f"7. Start-up: {runs} cold processes of each command (`{program} ...`, {spec.name}), "
        "interleaved"
    )
    rows = []
    for name in commands:
        target = TARGET_STARTUP_S[name]
        w = walls[name]
        shown = " ".join(Path(a).name if a.startswith("/") else a for a in commands[name])
        rows.append(
            [
                f"`sjoin {shown}`",
                f"{statistics.median(w):.3f}",
                f"{p90(w):.3f}",
                f"{min(w):.3f}",
                f"{statistics.median(cpus[name]):.3f}",
                "-" if target is None else f"< {target}",
            ]
        )
    out.table(
        f"seconds; load average {min(loads):.1f}-{max(loads):.1f} during the runs (2 cores: "
        "above 2, the wall time includes waiting for a core; the CPU time, user + system, "
        "is what a quiet machine's wall time would be)",
        ["command", "median", "p90", "best", "median CPU", "target (median)"],
        rows,
    )
    out.text(
        f"first `sjoin check`, the parser cache empty (it builds and writes it): {first:.3f} s"
    )
    if against is not None:
        out.table(
            f"CPU seconds (user + system), medians, each run of this tree paired with one of "
            f"the sjoin in {against}",
            ["command", against.name, "this tree", "change"],
            [
                [
                    f"`sjoin {name}`",
                    f"{statistics.median(before[name]):.3f}",
                    f"{statistics.median(cpus[name]):.3f}",
                    f"{statistics.median(cpus[name]) / statistics.median(before[name]) - 1:+.0%}",
                ]
                for name in commands
            ],
        )
    for name in commands:
        target = TARGET_STARTUP_S[name]
        if target is None:
            continue
        median, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        out.figure(
            f"cold `sjoin {name}`{'' if name.startswith('-') else ' ' + spec.name}: median "
            f"{median:.3f} s (p90 {p90(walls[name]):.3f} s, CPU {cpu:.3f} s)",
            median < target,
            f"< {target} s",
        )
    heavy = ", ".join(HEAVY_MODULES)
    for name, found in imported.items():
        out.figure(
            f"`sjoin {name}` imports {', '.join(found) if found else 'none of ' + heavy}",
            not found,
            "neither sqlglot nor lark",
        )


def startup_main(opts: argparse.Namespace) -> None:
    """`bench.py --startup`: section 7 alone, its figures between the startup markers."""
    header = (
        f"Machine: {machine()}. Run on {time.strftime('%Y-%m-%d')}, load average "
        f"{os.getloadavg()[0]:.1f} at the start; command: `.venv/bin/python benchmarks/bench.py"
        f"{''.join(' ' + a for a in sys.argv[1:])}`."
    )
    print(header)
    report = Report()
    startup(opts.startup_runs, opts.startup_spec, report, opts.startup_against)
    missed = [text for text, ok, _ in report.verdicts if not ok]
    print(f"\n{len(report.verdicts) - len(missed)} of {len(report.verdicts)} targets met")
    if opts.markdown is not None:
        write_markdown(opts.markdown, report, header, "startup")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="N = 20k only, fewer repeats")
    parser.add_argument("--sizes", type=count, nargs="+", help="rows per side per batch")
    parser.add_argument("--repeat", type=count, help="runs of each job in section 2")
    parser.add_argument("--markdown", type=Path, help="write the figures into this page")
    parser.add_argument("--workdir", type=Path, help="keep the generated workloads here")
    parser.add_argument(
        "--production",
        action="store_true",
        help="only the production-shaped workloads of issue 26 (section 6): N = 20k and "
        "100k, 20 batches; with --quick N = 20k and 4 batches",
    )
    parser.add_argument(
        "--shapes", nargs="+", choices=list(SHAPES), help="with --production: these workloads"
    )
    parser.add_argument("--batches", type=count, help="with --production: batches (default 20)")
    parser.add_argument(
        "--output-dir",
        type=Path,
        help="with --production: where the runs write their output (default: the workdir)",
    )
    parser.add_argument(
        "--reference-max",
        type=count,
        default=20_000,
        help="with --production: run the reference engine up to this N (default 20,000)",
    )
    parser.add_argument(
        "--startup",
        action="store_true",
        help="only the start-up section (issue 26, item 6): cold sjoin --version, --help, "
        "check, compile and plan",
    )
    parser.add_argument(
        "--startup-runs", type=count, default=21, help="with --startup: runs of each (21)"
    )
    parser.add_argument(
        "--startup-spec",
        type=Path,
        default=STARTUP_SPEC,
        help="with --startup: the spec checked, compiled and planned (ad_attribution)",
    )
    parser.add_argument(
        "--startup-against",
        type=Path,
        help="with --startup: also time the sjoin installed in this folder (pip install "
        "--target DIR of another commit), each run paired with one of this tree",
    )
    opts = parser.parse_args()
    if opts.startup:
        startup_main(opts)
        return
    if opts.production:
        production_main(opts)
        return
    sizes = opts.sizes or ([20_000] if opts.quick else [20_000, 100_000, 500_000])
    repeat = opts.repeat or (1 if opts.quick else 3)
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as err:
        sys.exit(f"bench: needs pyspark and pyarrow (pip install '.[dev]'): {err}")
    if shutil.which("java") is None:
        sys.exit("bench: Spark needs Java 17 or newer on PATH")
    load = os.getloadavg()[0]
    header = (
        f"Machine: {machine()}. Run on {time.strftime('%Y-%m-%d')}, load average "
        f"{load:.1f} at the start; command: `.venv/bin/python benchmarks/bench.py"
        f"{''.join(' ' + a for a in sys.argv[1:])}`."
    )
    print(header)
    report = Report()
    workdir = opts.workdir or Path(tempfile.mkdtemp(prefix="sjoin-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        first, *more = sizes
        all_runs = {first: measure(first, 10, repeat, list(LABELS), workdir)}
        for n in more:  # one run each: minutes per Spark run; no hand-written job
            # the reference runtime takes minutes and gigabytes at 500k: columnar and Spark only
            names = ["runtime", "runtime-rows"] if n <= 100_000 else []
            all_runs[n] = measure(n, 10, 1, [*names, *COLUMNAR, "generated"], workdir)
        report.section("1. Throughput: inner range join, keys 1..10,000, 10 batches")
        for n in sizes:
            throughput(n, 10, all_runs[n], report)
        report.section("2. Generated PySpark vs hand-written PySpark (same workload, same Spark)")
        generated_vs_handwritten(sizes[0], all_runs[sizes[0]], report)
        small_scenario(workdir, 3 if opts.quick else 7, report)
        eviction(report)
        cold_compile(3 if opts.quick else 5, workdir, report)
    finally:
        if opts.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    missed = [text for text, ok, _ in report.verdicts if not ok]
    print(f"\n{len(report.verdicts) - len(missed)} of {len(report.verdicts)} targets met")
    if opts.markdown is not None:
        write_markdown(opts.markdown, report, header)


def production_main(opts: argparse.Namespace) -> None:
    """`bench.py --production`: section 6 alone, its figures between the bench26 markers;
    exit 1 when a workload fails (a fallback, or rows that differ between the engines)."""
    sizes = opts.sizes or ([20_000] if opts.quick else [20_000, 100_000])
    batches = opts.batches or (4 if opts.quick else 20)
    shapes = opts.shapes or list(SHAPES)
    if shutil.which("java") is None:
        sys.exit("bench: Spark needs Java 17 or newer on PATH")
    header = (
        f"Machine: {machine()}. Run on {time.strftime('%Y-%m-%d')}, load average "
        f"{os.getloadavg()[0]:.1f} at the start; command: `.venv/bin/python benchmarks/bench.py"
        f"{''.join(' ' + a for a in sys.argv[1:])}`."
    )
    if opts.output_dir is not None:
        header += f" Output written under `{opts.output_dir}`."
    print(header)
    report = Report()
    workdir = opts.workdir or Path(tempfile.mkdtemp(prefix="sjoin-bench26-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        failures = production(
            shapes, sizes, batches, opts.reference_max, workdir, report, opts.output_dir
        )
    finally:
        if opts.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    missed = [text for text, ok, _ in report.verdicts if not ok]
    print(f"\n{len(report.verdicts) - len(missed)} of {len(report.verdicts)} targets met")
    if opts.markdown is not None:  # one size alone: its own section (bench26-20000 ...)
        marker = f"bench26-{sizes[0]}" if len(sizes) == 1 else "bench26"
        write_markdown(opts.markdown, report, header, marker)
    if failures:
        print("\nbench: FAILED:", file=sys.stderr)
        for failure in failures:
            print(f"  {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
