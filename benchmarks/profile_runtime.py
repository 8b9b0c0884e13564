"""Where the reference runtime spends its time on the benchmark workload: a pyinstrument
profile of reading the trace and running every batch (output rows counted, as in bench.py's
throughput figure; ``--rows`` also builds the JSON-ready row dicts).

    .venv/bin/python benchmarks/profile_runtime.py [--n 20000] [--rows] [--html FILE]

With ``--shape NAME`` (issue 26's workloads: uniform, skewed, outer, window_agg) it profiles
what `sjoin run --engine columnar --backlog` does instead: the columnar engine over the
workload's Parquet trace (``--batches``, default 6), every output row written to a file in
``--output-format`` (jsonl or parquet; under ``--output-dir``, default a temporary one).
With ``--cpu`` it prints, instead of pyinstrument's wall-clock samples, the CPU time (the
process's, every thread's: polars runs on several) spent in each stage: reading the trace,
each operator, writing the output (JSON lines: the tokens' expressions, and polars' CSV
writer with the kernel's writes into the file).  On a machine shared with other jobs the
wall clock mostly measures the others; CPU time does not.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import SHAPES, count, generate, generate_shape  # not a package


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=count, default=20_000, help="rows per side per batch")
    parser.add_argument("--rows", action="store_true", help="also build the output row dicts")
    parser.add_argument("--html", type=Path, help="write pyinstrument's HTML page here too")
    parser.add_argument("--shape", choices=list(SHAPES), help="an issue 26 workload, columnar")
    parser.add_argument("--batches", type=count, default=6, help="with --shape: batches")
    parser.add_argument("--output-format", choices=["jsonl", "parquet"], default="jsonl")
    parser.add_argument("--output-dir", type=Path, help="with --shape: write the output here")
    parser.add_argument("--cpu", action="store_true", help="with --shape: CPU time per stage")
    opts = parser.parse_args()
    if opts.cpu:
        if opts.shape is None:
            sys.exit("profile_runtime: --cpu needs --shape")
        with tempfile.TemporaryDirectory(prefix="sjoin-profile-", dir=opts.output_dir) as tmp:
            _cpu_per_stage(Path(tmp), opts)
        return
    try:
        from pyinstrument import Profiler
    except ImportError:
        sys.exit("profile_runtime: needs pyinstrument (pip install pyinstrument)")

    from sjoin.api import check_file
    from sjoin.runtime import iter_batches

    if opts.shape is not None:
        profiler = Profiler(interval=0.001)
        with tempfile.TemporaryDirectory(prefix="sjoin-profile-", dir=opts.output_dir) as tmp:
            _profile_shape(profiler, Path(tmp), opts)
        print(profiler.output_text(unicode=True, color=False, show_all=False))
        if opts.html is not None:
            opts.html.write_text(profiler.output_html())
        return
    with tempfile.TemporaryDirectory(prefix="sjoin-profile-") as tmp:
        work = generate(Path(tmp), opts.n)
        plan = check_file(work.spec).plan
        assert plan is not None
        profiler = Profiler(interval=0.0005)
        profiler.start()
        for out in iter_batches(plan, work.trace):
            if opts.rows:
                assert len(out.rows) == out.row_count
        profiler.stop()
    print(profiler.output_text(unicode=True, color=False, show_all=False))
    if opts.html is not None:
        opts.html.write_text(profiler.output_html())


def _profile_shape(profiler: Any, directory: Path, opts: argparse.Namespace) -> None:
    """`sjoin run --engine columnar --backlog --relation R --output ...` in this process."""
    run = _shape_run(directory, opts)
    start = time.perf_counter()
    profiler.start()
    summary = run()
    profiler.stop()
    print(f"{summary.rows:,} output rows in {time.perf_counter() - start:.2f} s", flush=True)


def _shape_run(directory: Path, opts: argparse.Namespace) -> Any:
    """The workload ``opts.shape`` generated under ``directory`` and planned, and the run of
    it that ``sjoin run --engine columnar --backlog`` makes, to call when the clock starts
    (polars is imported before: a run imports it once)."""
    import polars  # noqa: F401

    from sjoin.api import check_file
    from sjoin.runtime import run_to_files

    work = generate_shape(directory / "work", opts.shape, opts.n, opts.batches)
    plan = check_file(work.spec(opts.output_format)).plan
    assert plan is not None
    output = directory / ("out.jsonl" if opts.output_format == "jsonl" else "out")
    return lambda: run_to_files(
        plan,
        work.trace,
        relation=work.shape.relation,
        output=output,
        output_format=opts.output_format,
        engine="columnar",
        backlog=True,
    )


def _cpu_per_stage(directory: Path, opts: argparse.Namespace) -> None:
    """``_profile_shape``'s run, with the CPU time of each stage (``time.process_time``
    around the functions named in ``STAGES``; a stage inside another counts in both)."""
    import importlib

    spent: dict[str, float] = {}

    def timed(owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - start

        setattr(owner, name, wrapper)

    for label, (module, owner, name) in STAGES.items():
        found = importlib.import_module(module)
        timed(getattr(found, owner) if owner else found, name, label)
    run = _shape_run(directory, opts)
    start, cpu = time.perf_counter(), time.process_time()
    summary = run()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"{opts.shape} N={opts.n:,}, {opts.batches} batches, {opts.output_format}: "
        f"{summary.rows:,} output rows; CPU {cpu:.2f} s, wall {wall:.2f} s"
    )
    for label in STAGES:
        if label in spent:
            print(f"  {label:<48} {spent[label]:7.2f} s CPU")


# the stages --cpu times: label -> (module, class or "", function)
STAGES = {
    "read the trace": ("sjoin.runtime.columnar.trace", "", "read_trace_columns"),
    "join (ColumnarJoin.process)": ("sjoin.runtime.columnar.join", "ColumnarJoin", "process"),
    "aggregate (ColumnarAggregate.process)": (
        "sjoin.runtime.columnar.aggregate",
        "ColumnarAggregate",
        "process",
    ),
    "JSON lines (write_json_lines)": ("sjoin.runtime.columnar.frames", "", "write_json_lines"),
    "  their tokens' expressions (_tokens)": ("sjoin.runtime.columnar.frames", "", "_tokens"),
    "  CSV writer and the file's writes (_write_csv)": (
        "sjoin.runtime.columnar.frames",
        "",
        "_write_csv",
    ),
    "Parquet files (ParquetWriter.write)": (
        "sjoin.runtime.columnar.parquet_out",
        "ParquetWriter",
        "write",
    ),
}


if __name__ == "__main__":
    main()
