"""Large specs: `sjoin check`, `plan` and `compile` on a flat list of AND conjuncts and on a
chain of joins must take time linear in their length (issue 13).  Prints the seconds per
size and the CPU seconds per 1,000 units; a size whose CPU cost per unit is more than twice
the smallest size's fails the run (exit 1).  The test suite checks the same shapes at small
sizes, and the structure that makes them linear (tests/grammar/test_limits.py); timings
live here.

    .venv/bin/python benchmarks/parser_limits.py          # 10k/50k/100k conjuncts, 500-2000 joins
    .venv/bin/python benchmarks/parser_limits.py --quick  # 2k/5k/10k conjuncts, 100-400 joins

Each size runs in a new process (`sjoin check|plan|compile FILE`), as a user runs it, so a
figure includes the interpreter's start-up (about 0.3 s).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SJOIN = Path(sys.executable).with_name("sjoin")


def conjuncts(n: int) -> str:
    """A join whose ON is the key equality, a range, and ``n`` more conjuncts, one per line:
    left-only, right-only and two-sided in turn (pushed filters and the post-join filter)."""
    head = (
        "stream a (k BIGINT, x BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        "stream b (k BIGINT, y BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        "join j = a INNER JOIN b\n"
        "    ON  a.k = b.k\n"
        "    AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE\n"
    )
    terms = ("a.x <> {i}", "b.y <> {i}", "a.x + b.y <> {i}")
    body = "".join(f"    AND {terms[i % 3].format(i=i)}\n" for i in range(n))
    return head + body + "    SELECT a.k, a.t, b.y\n"


def join_chain(n: int) -> str:
    """``n`` join statements, each joining the previous relation with a new stream on a key
    and an event-time range; the first joins two streams."""
    lines = ["stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 minute"]
    previous = "s"
    for i in range(n):
        lines.append(f"stream x{i} (k{i} BIGINT, t{i} TIMESTAMP) watermark t{i} delay 1 minute")
        lines.append(
            f"join j{i} = {previous} AS l INNER JOIN x{i} AS r ON l.k = r.k{i} "
            f"AND r.t{i} BETWEEN l.t AND l.t + INTERVAL 1 MINUTE SELECT l.k, l.t"
        )
        previous = f"j{i}"
    return "\n".join(lines) + "\n"


def timed(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system) and stderr's last line of one `sjoin`
    process, which must succeed.  The verdict uses CPU time: on a shared machine the wall
    clock also counts other processes' turns."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, cpu, (done.stderr.strip().splitlines() or [""])[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--commands", default="check,plan,compile")
    args = parser.parse_args()
    shapes = {
        "conjuncts": (
            conjuncts,
            (2_000, 5_000, 10_000) if args.quick else (10_000, 50_000, 100_000),
        ),
        "joins": (join_chain, (100, 200, 400) if args.quick else (500, 1_000, 2_000)),
    }
    os.environ["NO_COLOR"] = "1"
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for shape, (make, sizes) in shapes.items():
            for command in args.commands.split(","):
                per_unit = []
                for n in sizes:
                    spec = Path(tmp) / f"{shape}_{n}.sjoin"
                    spec.write_text(make(n), encoding="utf-8")
                    cmd = [str(SJOIN), command, str(spec)]
                    if command == "compile":
                        cmd += ["-o", str(Path(tmp) / "job.py")]
                    elif command == "plan":
                        cmd += ["--format", "json"]
                    wall, cpu, last = timed(cmd)
                    per_unit.append(cpu / n * 1000)
                    print(
                        f"{command:8} {n:>7,} {shape:10} {wall:7.2f} s wall {cpu:7.2f} s CPU"
                        f"  {per_unit[-1]:6.3f} CPU s per 1,000  ({last[:40]})",
                        flush=True,
                    )
                ratio = per_unit[-1] / per_unit[0]
                verdict = "linear" if ratio <= 2 else "NOT linear"
                failed |= ratio > 2
                print(
                    f"{command:8} {shape}: cost per unit at {sizes[-1]:,} / at {sizes[0]:,} "
                    f"= {ratio:.2f} ({verdict})\n",
                    flush=True,
                )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
