"""`sjoin check job.py`: how long a PySpark job takes to check, split where the time goes.

The child process that runs the job under the offline Spark Connect session (pyspark's import
is most of it) is timed once per job; then sjoin's own part, lowering the captured plans,
binding, planning and judging (``api.check_pyspark`` with the child's answer given), is timed
``--runs`` times in this process, and so is ``check_text`` of the job's hand-written `.sjoin`
twin where it has one.  CPU time (user + system of this process) is printed beside the wall
time: on a busy machine it is what a quiet machine's wall time would be.

    .venv/bin/python benchmarks/check_job.py [--runs 20] [--markdown docs/benchmarks.md] [JOB ...]

Without JOB: every job of tests/compiler/frontend/pyspark/jobs/ that sjoin reads.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JOBS = ROOT / "tests" / "compiler" / "frontend" / "pyspark" / "jobs"
sys.path.insert(0, str(ROOT / "benchmarks"))

from workload import count  # noqa: E402 - the benchmark folder is not a package

from sjoin import api  # noqa: E402
from sjoin.compiler.frontend import pyspark as front  # noqa: E402

START, END = "<!-- check_job:start -->", "<!-- check_job:end -->"


def _timed(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``runs`` calls."""
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def measure(job: Path, runs: int) -> dict[str, float | str] | None:
    start = time.perf_counter()
    captured = front.read_job(job)
    child = time.perf_counter() - start
    if captured.failure is not None or not captured.queries:
        return None  # a job sjoin cannot read (E042): nothing after the child to time
    real = front.read_job
    front.read_job = lambda path, entry=None: captured  # type: ignore[assignment]
    try:
        result = api.check_pyspark(job)
        own_wall, own_cpu = _timed(lambda: api.check_pyspark(job), runs)
    finally:
        front.read_job = real  # type: ignore[assignment]
    row: dict[str, float | str] = {
        "job": job.name,
        "verdict": "ok" if result.ok else "errors",
        "child": child,
        "own_wall": own_wall,
        "own_cpu": own_cpu,
    }
    twin = job.with_suffix(".sjoin")
    if twin.exists():
        text = twin.read_text()
        row["twin_wall"], row["twin_cpu"] = _timed(lambda: api.check_text(text, str(twin)), runs)
    return row


def table(rows: list[dict[str, float | str]], runs: int) -> str:
    def num(row: dict[str, float | str], key: str) -> str:
        value = row.get(key)
        return f"{value:.3f}" if isinstance(value, float) else "-"

    lines = [
        f"seconds; sjoin's own part and the twin: median of {runs} runs in one process "
        f"(wall, CPU); load average {os.getloadavg()[0]:.1f} at the end",
        "",
        "| job | verdict | child (run offline, once) | sjoin's own part | CPU | twin `.sjoin` "
        "| CPU |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| `{row['job']}` | {row['verdict']} | {num(row, 'child')} | "
            f"{num(row, 'own_wall')} | {num(row, 'own_cpu')} | {num(row, 'twin_wall')} | "
            f"{num(row, 'twin_cpu')} |"
        )
    own = [float(r["own_cpu"]) for r in rows]
    lines += [
        "",
        f"sjoin's own part, CPU: median {statistics.median(own):.3f} s, "
        f"largest {max(own):.3f} s over {len(rows)} jobs.",
    ]
    return "\n".join(lines)


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__)
    args.add_argument("jobs", nargs="*", type=Path)
    args.add_argument("--runs", type=count, default=20)
    args.add_argument("--markdown", type=Path, help="write the table between its markers")
    opts = args.parse_args()
    jobs = opts.jobs or sorted(JOBS.glob("*.py"))
    rows = [row for job in jobs if (row := measure(job, opts.runs)) is not None]
    text = table(rows, opts.runs)
    print(text)
    if opts.markdown is not None:
        doc = opts.markdown.read_text()
        command = f"`.venv/bin/python benchmarks/check_job.py --markdown {opts.markdown}`"
        block = f"{START}\nCommand: {command}.\n\n{text}\n{END}"
        doc = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: block, doc, flags=re.S)
        opts.markdown.write_text(doc)


if __name__ == "__main__":
    main()
