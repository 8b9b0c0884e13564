"""Peak memory of ``sjoin run`` against the trace's length (issue 40).

Generates the uniform inner range join (``workload.generate_shape``: keys uniform, the state
steady after a few batches) as a Parquet trace of N batches at ROWS rows per side per batch,
runs ``sjoin run --engine columnar`` on it in a subprocess (Parquet output, ``--backlog``)
and prints its peak RSS (``getrusage(RUSAGE_CHILDREN).ru_maxrss``, one fresh process per run)
for each N.  The state is the same size whatever N, so a runtime that streams its input has
a peak that does not grow with N; one that reads the whole trace first grows by a batch's
worth per batch.

    python benchmarks/memory_per_batch.py [--rows 100000] [--batches 10 20 40]
        [--format parquet|jsonl] [--engine columnar|reference] [--shape uniform|outer]

``--shape outer``: the LEFT OUTER join (unique left keys, at most one match each), whose
output grows with the rows per batch, where the uniform join's keys stay in 1..10,000 and
its output per batch grows with their square (at 500,000 rows per side, about 37 million
rows a batch).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import generate_shape


def peak_of_run(args: list[str]) -> tuple[float, float]:
    """The peak RSS (MB) and wall time (s) of one command, run alone in a fresh process: a
    helper process that runs it and reports its own children's peak."""
    probe = (
        "import resource, subprocess, sys, json\n"
        "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps({'rc': done.returncode, 'kb': peak}))\n"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], check=True, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    report = json.loads(done.stdout)
    if report["rc"] != 0:
        raise SystemExit(f"sjoin run exited {report['rc']}: {' '.join(args)}")
    return report["kb"] / 1024, wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows per side per batch")
    parser.add_argument("--batches", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--format", choices=("parquet", "jsonl"), default="parquet")
    parser.add_argument("--engine", choices=("columnar", "reference"), default="columnar")
    parser.add_argument("--shape", choices=("uniform", "outer"), default="uniform")
    options = parser.parse_args(argv)
    print(
        f"# {options.shape}: {options.rows:,} rows per side per batch, {options.format} trace, "
        f"{options.engine}"
    )
    print("| batches | peak RSS (MB) | wall (s) |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="sjoin-memory-") as scratch:
        for batches in options.batches:
            work = generate_shape(
                Path(scratch) / f"w{batches}",
                options.shape,
                options.rows,
                batches,
                jsonl=options.format == "jsonl",
            )
            trace = work.trace if options.format == "parquet" else work.jsonl_trace
            out = Path(scratch) / f"out{batches}"
            args = [
                sys.executable,
                "-m",
                "sjoin",
                "run",
                str(work.spec("parquet")),
                "--trace",
                str(trace),
                "--engine",
                options.engine,
                "--relation",
                work.shape.relation,
                "--backlog",
                "--output",
                str(out),
                "--output-format",
                "parquet",
            ]
            peak, wall = peak_of_run(args)
            print(f"| {batches} | {peak:,.0f} | {wall:.1f} |", flush=True)
            subprocess.run(["rm", "-rf", str(work.directory), str(out)], check=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
