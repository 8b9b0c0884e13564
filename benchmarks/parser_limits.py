"""Large specs: `sjoin check`, `plan` and `compile` on every shape of a large spec (issues 13
and 24), with the time and the peak memory each size costs, on both sides of the limits past
which sjoin refuses a spec (E031, `compiler/frontend/limits.py`; E001 for nesting).

Shapes: a flat list of AND conjuncts, a chain of joins (with SELECT, and without it, when
the columns pile up), an IN list, a long string literal, nested parentheses, an arithmetic
chain, many streams, many columns, a long name and many SELECT items.  Each size runs in a
new process (`sjoin check|plan|compile FILE`, as a user runs it, so a figure includes the
interpreter's start-up, about 0.3 s) under a memory cap (RLIMIT_AS, 4 GiB) and a timeout,
and prints one row: seconds (wall and CPU), peak RSS (its own, from wait4), exit status and
the first error code.  The sizes of each shape straddle its limit: the small ones must be
processed, the large ones refused.

Verdicts (exit 1 if any fails):
- linear: among the sizes processed, the CPU seconds per unit (less the start-up) at the
  largest size are at most twice those at the smallest that has 0.2 s of work;
- refused fast: a size past a limit is refused within REFUSAL_SECONDS of CPU and
  REFUSAL_MIB of peak memory, whatever its size;
- nothing else: no timeout, no crash, no other exit status.

    .venv/bin/python benchmarks/parser_limits.py                   # all shapes, all sizes
    .venv/bin/python benchmarks/parser_limits.py --quick           # small sizes
    .venv/bin/python benchmarks/parser_limits.py --shapes conjuncts,joins --commands check
    .venv/bin/python benchmarks/parser_limits.py --markdown        # rows for docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SJOIN = Path(sys.executable).with_name("sjoin")
MEMORY_CAP = 4 << 30  # bytes of address space per `sjoin` process
TIMEOUT = 180.0  # seconds per `sjoin` process
# A refusal before parsing costs a scan of the text; one after it (relations, columns,
# nesting) also costs the parse, which the token limit bounds.
REFUSAL_SECONDS = 2.0  # CPU seconds a refusal may take, start-up included
REFUSAL_MIB = 200  # peak RSS a refusal may take

HEAD = (
    "stream a (k BIGINT, x BIGINT, s STRING, t TIMESTAMP) watermark t delay 1 minute\n"
    "stream b (k BIGINT, y BIGINT, s STRING, t TIMESTAMP) watermark t delay 1 minute\n"
)
ON = "ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE"


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


def wide_chain(n: int) -> str:
    """A chain of ``n`` joins without SELECT: each keeps every column below it, so the
    relations hold 3, 5, 7, ... columns (n² in all), and each carries one more event-time
    column (an E025 per join, each naming them all)."""
    lines = ["stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 minute"]
    previous = "s"
    for i in range(n):
        lines.append(f"stream x{i} (k{i} BIGINT, t{i} TIMESTAMP) watermark t{i} delay 1 minute")
        lines.append(
            f"join j{i} = {previous} AS l INNER JOIN x{i} AS r ON l.k = r.k{i} "
            f"AND r.t{i} BETWEEN l.t AND l.t + INTERVAL 1 MINUTE"
        )
        previous = f"j{i}"
    return "\n".join(lines) + "\n"


def in_list(n: int) -> str:
    """``a.x IN (0, 1, ..., n - 1)`` in a join's ON."""
    items = ", ".join(str(i) for i in range(n))
    return HEAD + f"join j = a JOIN b {ON}\n    AND a.x IN ({items})\n    SELECT a.k, a.t, b.y\n"


def literal(n: int) -> str:
    """A string literal of ``n`` characters (a quote doubled every 100), in ON and SELECT."""
    text = ("x" * 99 + "''") * (n // 100) + "x" * (n % 100)
    return (
        HEAD + f"join j = a JOIN b {ON}\n    AND a.s <> '{text}'\n"
        f"    SELECT a.k, a.t, concat(b.s, '{text}') AS s\n"
    )


def parentheses(n: int) -> str:
    """``n`` nested parentheses around a comparison in ON."""
    return HEAD + f"join j = a JOIN b {ON}\n    AND {'(' * n}b.y > 1{')' * n}\n"


def arithmetic(n: int) -> str:
    """``b.y + 1 + 1 ... > 1``: an arithmetic chain of ``n`` terms nests n levels."""
    return HEAD + f"join j = a JOIN b {ON}\n    AND b.y{' + 1' * n} > 1\n"


def streams(n: int) -> str:
    """``n`` streams, the first two joined (the others unused: a W002 each)."""
    lines = [f"stream s{i} (k BIGINT, t TIMESTAMP) watermark t delay 1 minute" for i in range(n)]
    lines.append(
        "join j = s0 AS a JOIN s1 AS b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE"
    )
    return "\n".join(lines) + "\n"


def columns(n: int) -> str:
    """Two streams of ``n`` columns each, joined without SELECT: 2n output columns."""
    cols = "".join(f"    c{i} BIGINT,\n" for i in range(n))
    return (
        f"stream a (\n{cols}    k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        f"stream b (\n{cols}    k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        f"join j = a JOIN b {ON}\n"
    )


def identifier(n: int) -> str:
    """A column whose name is ``n`` characters long, declared, joined on and selected."""
    name = "c" * n
    return (
        f"stream a (k BIGINT, {name} BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        f"stream b (k BIGINT, {name} BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        f"join j = a JOIN b {ON} AND a.{name} = b.{name}\n    SELECT a.k, a.t, a.{name}\n"
    )


def select_items(n: int) -> str:
    """``n`` SELECT items, each a computed column."""
    items = "".join(f",\n        a.x + {i} AS c{i}" for i in range(n))
    return HEAD + f"join j = a JOIN b {ON}\n    SELECT a.k, a.t{items}\n"


@dataclass(frozen=True)
class Shape:
    make: Callable[[int], str]
    unit: str
    sizes: tuple[int, ...]
    quick: tuple[int, ...]


# sizes straddle each limit: the last ones are refused (E031, or E001 for nesting)
SHAPES: dict[str, Shape] = {
    "conjuncts": Shape(conjuncts, "conjuncts", (1_000, 3_000, 6_500, 100_000), (1_000, 3_000)),
    "joins": Shape(join_chain, "joins", (10, 100, 499, 999), (10, 100)),
    "wide-joins": Shape(wide_chain, "joins", (10, 50, 100, 999), (10, 50)),
    "in-list": Shape(in_list, "IN items", (1_000, 10_000, 24_000, 100_000), (1_000, 3_000)),
    "literal": Shape(
        literal, "characters", (10_000, 100_000, 1_000_000, 10_000_000), (10_000, 100_000)
    ),
    "parentheses": Shape(parentheses, "levels", (50, 97, 1_000, 100_000), (50, 1_000)),
    "arithmetic": Shape(arithmetic, "terms", (50, 97, 1_000, 100_000), (50, 1_000)),
    "streams": Shape(streams, "streams", (100, 500, 999, 10_000), (100, 500)),
    "columns": Shape(columns, "columns", (100, 1_000, 4_998, 10_000), (100, 1_000)),
    "identifier": Shape(identifier, "characters", (100, 1_000, 1_001, 1_000_000), (1_000, 1_001)),
    "select": Shape(select_items, "items", (100, 1_000, 5_000, 20_000), (100, 1_000)),
}


@dataclass(frozen=True)
class Figure:
    wall: float
    cpu: float
    rss_mib: float
    status: int | str  # the exit status, or "timeout"
    code: str  # the first error code, "ok" without one


def measure(command: list[str]) -> Figure:
    """One `sjoin` process under the memory cap and the timeout: its own CPU time and peak
    RSS (from wait4, not the sum over all children), its exit status and first error."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
        os.setsid()

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, preexec_fn=limits)
        status: int | str
        while True:
            pid, wait_status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(wait_status)
                break
            if time.perf_counter() - start > TIMEOUT:
                os.killpg(proc.pid, signal.SIGKILL)
                _, _, usage = os.wait4(proc.pid, 0)
                status = "timeout"
                break
            time.sleep(0.02)
        proc.returncode = -1  # reaped above: keep Popen from waiting again
        wall = time.perf_counter() - start
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
        out.seek(0)
        stdout = out.read(1 << 20).decode("utf-8", "replace")  # `plan --format json`
    found = re.search(r"error\[(E\d{3})\]", stderr) or re.search(r'"code": "(E\d{3})"', stdout)
    code = found.group(1) if found else "ok"
    if found is None and status not in (0, 1):
        code = (stderr.strip().splitlines() or ["?"])[-1][:60]
    return Figure(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, status, code)


def command_line(command: str, spec: Path, tmp: Path) -> list[str]:
    line = [str(SJOIN), command, str(spec)]
    if command == "compile":
        line += ["-o", str(tmp / "job.py")]
    elif command == "plan":
        line += ["--format", "json"]
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the small sizes only")
    parser.add_argument("--commands", default="check,plan,compile")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args()
    os.environ["NO_COLOR"] = "1"
    failed = False
    if args.markdown:
        print("| command | shape | size | spec | wall s | CPU s | peak RSS MiB | result |")
        print("|---|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        empty = tmp / "empty.sjoin"
        empty.write_text("stream s (k BIGINT)\n", encoding="utf-8")
        startup = measure([str(SJOIN), "check", str(empty)]).cpu
        for name in args.shapes.split(","):
            shape = SHAPES[name]
            sizes = shape.quick if args.quick else shape.sizes
            for command in args.commands.split(","):
                processed: list[tuple[int, float]] = []
                for n in sizes:
                    spec = tmp / f"{name}_{n}.sjoin"
                    text = shape.make(n)
                    spec.write_text(text, encoding="utf-8")
                    size = len(text.encode("utf-8"))
                    del text
                    fig = measure(command_line(command, spec, tmp))
                    refused = fig.code in ("E031", "E001")
                    result = f"exit {fig.status}, {fig.code}"
                    if refused and (fig.cpu > REFUSAL_SECONDS or fig.rss_mib > REFUSAL_MIB):
                        result += " (refusal too slow or too big)"
                        failed = True
                    elif fig.status in (0, 1) and not refused:
                        processed.append((n, fig.cpu - startup))
                    elif not refused:
                        failed = True
                    if args.markdown:
                        print(
                            f"| {command} | {name} | {n:,} {shape.unit} | {size / 1e6:.2f} MB "
                            f"| {fig.wall:.2f} | {fig.cpu:.2f} | {fig.rss_mib:,.0f} | {result} |",
                            flush=True,
                        )
                    else:
                        print(
                            f"{command:8} {name:12} {n:>10,} {shape.unit:10} {size / 1e6:8.2f} MB"
                            f" {fig.wall:7.2f} s wall {fig.cpu:7.2f} s CPU "
                            f"{fig.rss_mib:7,.0f} MiB  {result}",
                            flush=True,
                        )
                # the smallest size with 0.2 s of work past the start-up is the base: below
                # that the figure is mostly noise
                bases = [p for p in processed[:-1] if p[1] >= 0.2]
                if bases:
                    (n0, c0), (n1, c1) = bases[0], processed[-1]
                    ratio = (c1 / n1) / (c0 / n0)
                    failed |= ratio > 2
                    print(
                        f"{command:8} {name}: CPU per unit at {n1:,} / at {n0:,} = "
                        f"{ratio:.2f} ({'linear' if ratio <= 2 else 'NOT linear'})\n",
                        file=sys.stderr if args.markdown else sys.stdout,
                        flush=True,
                    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
