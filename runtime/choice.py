"""The engine ``--engine auto`` runs (``choose_engine``), decided before the trace is read,
from what each engine's costs depend on (docs/benchmarks.md, "Which engine `auto` runs").

The reference engine pays per input row.  The columnar one pays a fixed cost (polars' import
and first calls), a cost per batch and operator (a batch's frames, a few dozen polars calls),
and then much less per row when it reads the trace in bulk.  So over a trace of ``rows`` rows
in ``batches`` data batches, with ``k`` operators run columnar, the columnar engine is faster
when its batches hold on average

    rows / batches  >=  F * (COLUMNAR_ROWS_PER_BATCH * k + COLUMNAR_FIXED_ROWS / batches)

rows, with F = 1 when the columnar reader reads the trace in bulk (canonical lines) and
``ROW_BY_ROW_FACTOR`` when it reads it row by row.  The costs add up batch by batch, so the
totals decide (the largest batch does not enter).  The trace's facts come from
``scan_trace``: its lines counted, its batch boundaries found by bisection (a trace's batch
numbers ascend), a few lines read per batch; the plan's from ``plan_facts``.

A Parquet or Delta trace runs columnar (only that engine reads them), rows given in memory
or a trace already read (a replayed Kafka topic) on the reference engine, and a plan none of
whose operators runs columnar on the reference engine.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..compiler.planning.plan import Plan
from .io.trace import Trace
from .operators import EngineName, Placement, place

# what a caller may ask for: an engine, or "auto" (``choose_engine``)
EngineChoice = Literal["auto", "columnar", "reference"]

# The columnar engine's extra costs in rows of its saving per row, fitted on `sjoin run` over
# the grid of benchmarks/engine_crossover.py (docs/benchmarks.md): its cost per batch and
# operator run columnar (13-31 ms; 730-1,350 rows), and its fixed cost (0.4-0.8 s; 25,000-
# 53,000 rows).
COLUMNAR_ROWS_PER_BATCH = 1_000
COLUMNAR_FIXED_ROWS = 40_000
# read row by row (not canonical, or for a checkpoint's digests) the columnar engine saves
# only what its operators save per row: the break-even is this many times higher (fitted 1.1
# on three operators, 6.5 on one join; 2 keeps both within 1.3x of the faster engine)
ROW_BY_ROW_FACTOR = 2.0

_CHUNK = 1 << 20
# a line whose batch cannot be read is skipped; this many in a row end a probe (a file of
# another kind is not read through line by line)
_SKIP = 64
# the lines read to count batches before the count may stop where the verdict is certain
# (``enough``): a trace of many small batches would take a few probes per batch
_PROBES = 8192
# the lines read that are tested against the canonical form (the first; bisection spreads
# them over the file)
_TESTED = 256
# a line longer than this is not parsed as JSON to find its batch
_JSON_LINE = 1 << 20
_BOM = b"\xef\xbb\xbf"
# the batch number at the start of a record, as json.dumps and `sjoin capture` write it
_HEAD = re.compile(rb'[ \t]*\{[ \t]*"batch"[ \t]*:[ \t]*(-?[0-9]{1,19})[ \t]*[,}]')


@dataclass(frozen=True)
class TraceShape:
    """What ``scan_trace`` found: ``lines`` (rows, with any bad or blank line), ``batches``
    (data batches: runs of one batch number in file order; a lower bound if ``at_least``),
    how many lines it read to find them (``probes``), and the number of a line among those
    that does not match ``canonical`` (the columnar engine then reads the file row by
    row)."""

    lines: int
    batches: int
    probes: int
    at_least: bool = False
    # a line read that is not in the canonical form (the first in the file of those read)
    not_canonical: int | None = None


def scan_trace(
    path: str | os.PathLike[str],
    enough: Callable[[int], int] | None = None,
    canonical: re.Pattern[bytes] | None = None,
) -> TraceShape | None:
    """Count the lines of a JSON-lines trace file and its batches, cheaply: the lines by a
    pass over the bytes (a memory map, a megabyte at a time), the batches by bisection on
    byte offsets, reading one line at each probe (its ``"batch"``: from the record's start,
    or the whole line parsed as JSON when the batch is not first).  The batch numbers of a
    trace ascend, so where the lines at two offsets are of one batch, so is every line
    between them.  ``enough``: given the number of lines, the number of batches from which
    counting may stop (``at_least``), once ``_PROBES`` lines have been read.
    ``canonical``: the pattern the lines read are tested against (the first ``_TESTED``;
    ``TraceShape.not_canonical``).

    None when the path is not a regular file that can be read (a pipe is not read here: the
    run reads it once).  Nothing else raises: a line whose batch cannot be read (bad JSON,
    no batch) just counts as a line, and batches out of order only make the count low; the
    trace readers report each bad line when the run reads them."""
    try:
        # not opened unless regular: opening a pipe would wait for its writer
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size == 0:
                return TraceShape(0, 0, 0)
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _scan(data, size, enough, canonical)
    except (OSError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class _Line:
    start: int
    next: int  # the start of the following line (size at the end)
    batch: int


class _Scan:
    def __init__(self, data: mmap.mmap, size: int, canonical: re.Pattern[bytes] | None) -> None:
        self.data = data
        self.size = size
        self.probes = 0
        self.head = 3 if data[:3] == _BOM else 0
        self.canonical = canonical
        self.tested = 0
        self.odd: int | None = None  # the offset of the first line read not canonical

    def not_canonical(self) -> int | None:
        """The number of the first line read that is not canonical."""
        if self.odd is None:
            return None
        return (
            sum(
                self.data[i : min(i + _CHUNK, self.odd)].count(b"\n")
                for i in range(0, self.odd, _CHUNK)
            )
            + 1
        )

    def line_start(self, offset: int) -> int:
        """The start of the first line at or after ``offset``."""
        if offset <= self.head:
            return self.head
        if self.data[offset - 1] == 0x0A:
            return offset
        found = self.data.find(b"\n", offset)
        return self.size if found < 0 else found + 1

    def record(self, offset: int, before: int) -> _Line | None:
        """The first line starting at or after ``offset`` and before ``before`` whose batch
        can be read (at most ``_SKIP`` lines are tried)."""
        start = self.line_start(offset)
        for _ in range(_SKIP):
            if start >= before:
                return None
            end = self.data.find(b"\n", start)
            end = self.size if end < 0 else end
            self.probes += 1
            batch = self.batch_of(start, end)
            if batch is not None:
                return _Line(start, min(end + 1, self.size), batch)
            start = end + 1
        return None

    def last_record(self) -> _Line | None:
        """The last line whose batch can be read (of the last ``_SKIP`` lines)."""
        end = self.size - 1 if self.data[self.size - 1] == 0x0A else self.size
        for _ in range(_SKIP):
            if end <= self.head:
                return None
            start = max(self.data.rfind(b"\n", self.head, end) + 1, self.head)
            self.probes += 1
            batch = self.batch_of(start, end)
            if batch is not None:
                return _Line(start, min(end + 1, self.size), batch)
            end = start - 1
        return None

    def batch_of(self, start: int, end: int) -> int | None:
        if self.canonical is not None and self.tested < _TESTED:
            self.tested += 1
            if (self.odd is None or start < self.odd) and not self.canonical.fullmatch(
                self.data[start:end]
            ):
                self.odd = start
        found = _HEAD.match(self.data, start, min(end, start + 256))
        if found is not None:
            return int(found.group(1))
        if end - start > _JSON_LINE:
            return None
        try:
            record: Any = json.loads(self.data[start:end])
        except (ValueError, RecursionError):
            return None
        batch = record.get("batch") if isinstance(record, dict) else None
        return batch if type(batch) is int else None


def _scan(
    data: mmap.mmap,
    size: int,
    enough: Callable[[int], int] | None,
    canonical: re.Pattern[bytes] | None,
) -> TraceShape:
    lines = sum(data[i : i + _CHUNK].count(b"\n") for i in range(0, size, _CHUNK))
    if data[size - 1] != 0x0A:
        lines += 1
    stop = enough(lines) if enough is not None else None
    scan = _Scan(data, size, canonical)
    first = scan.record(0, size)
    last = scan.last_record()
    if first is None or last is None:
        return TraceShape(lines, 0, scan.probes, not_canonical=scan.not_canonical())
    batches = 1
    pending = [(first, last)] if first.batch != last.batch and first.start < last.start else []
    while pending:
        # each pair still to split holds at least one boundary
        if stop is not None and batches + len(pending) >= stop and scan.probes >= _PROBES:
            return TraceShape(
                lines, batches + len(pending), scan.probes, True, scan.not_canonical()
            )
        low, high = pending.pop()
        middle = scan.record((low.next + high.start) // 2, high.start)
        if middle is None:  # nothing readable from the middle on: the next line after low
            middle = scan.record(low.next, high.start)
        if middle is None:  # adjacent (or nothing readable between): one boundary
            batches += 1
            continue
        # the lower half is counted first (popped last): push the upper half first
        if middle.batch != high.batch:
            pending.append((middle, high))
        if middle.batch != low.batch:
            pending.append((low, middle))
    return TraceShape(lines, batches, scan.probes, not_canonical=scan.not_canonical())


@dataclass(frozen=True)
class PlanFacts:
    """What the plan says about the columnar engine's costs: how many operators it runs
    columnar (of ``operators``), and why it cannot read a trace file in bulk (None: it can,
    if the lines are canonical)."""

    columnar: int
    operators: int
    row_by_row: str | None
    pattern: re.Pattern[bytes] | None  # a canonical line of any stream


def plan_facts(
    plan: Plan, checkpoint: bool = False, placements: Mapping[str, Placement] | None = None
) -> PlanFacts:
    """The plan's facts, from the plan alone (no polars): the operators that run columnar
    (``operators.place``, or ``placements`` when the run has them), the first column
    without a canonical form, and the pattern of a canonical line of any stream
    (``checkpoint``: the run keeps one, so the columnar engine reads the trace row by row,
    for each batch's digest)."""
    from .columnar.support import canonical_line_pattern, has_canonical_form

    placements = place(plan) if placements is None else placements
    operators = list(placements)
    columnar = sum(1 for where in placements.values() if where.columnar)
    patterns = []
    row_by_row = "a checkpoint keeps each batch's digest" if checkpoint else None
    for stream in plan.streams:
        columns = [c.name for c in stream.columns]
        pattern = canonical_line_pattern(stream.name, columns, [c.type for c in stream.columns])
        if pattern is None:
            column = next(c for c in stream.columns if not has_canonical_form(c.type))
            row_by_row = row_by_row or f"column `{stream.name}.{column.name}` is {column.type}"
        else:
            patterns.append(f"(?:{pattern})")
    compiled = None
    if row_by_row is None and patterns:
        compiled = re.compile("|".join(patterns).encode("utf-8", "surrogatepass"))
    return PlanFacts(columnar, len(operators), row_by_row, compiled)


def rows_needed(batches: int, columnar: int, bulk: bool) -> float:
    """The rows from which ``batches`` data batches run faster on the columnar engine (with
    ``columnar`` operators run columnar; ``bulk``: the trace is read in bulk)."""
    rows = COLUMNAR_FIXED_ROWS + COLUMNAR_ROWS_PER_BATCH * columnar * batches
    return rows if bulk else rows * ROW_BY_ROW_FACTOR


def choose_engine(
    plan: Plan,
    trace: Any,
    *,
    checkpoint: bool = False,
    placements: Mapping[str, Placement] | None = None,
) -> tuple[EngineName, str]:
    """The engine ``"auto"`` runs, and why (``--verbose`` shows the reason).  Both give the
    same output, so the choice only moves time.  ``checkpoint``: the run keeps one (the
    columnar engine then reads a trace file row by row, for the batches' digests);
    ``placements``: the operators' placements the run has decided (``operators.place``)."""
    if isinstance(trace, (str, os.PathLike)) and Path(trace).is_dir():
        from .columnar.delta import is_delta_trace

        # only the columnar engine reads these (its operators fall back where they must)
        return "columnar", "a Delta trace" if is_delta_trace(Path(trace)) else "a Parquet trace"
    facts = plan_facts(plan, checkpoint, placements)
    if facts.operators and not facts.columnar:
        return "reference", "no operator of the plan runs columnar"
    if isinstance(trace, Trace):
        return "reference", f"the trace was read from {trace.source}"
    if not isinstance(trace, (str, os.PathLike)):
        return "reference", "the trace rows are given in memory"
    columnar = max(facts.columnar, 1)  # a plan of streams alone: the reading decides

    def enough(lines: int) -> int:
        """The batches from which ``lines`` rows run faster on the reference engine, read
        in bulk or not: no need to count further."""
        per_batch = COLUMNAR_ROWS_PER_BATCH * columnar
        return max(int((lines - COLUMNAR_FIXED_ROWS) // per_batch) + 1, 1)

    shape = scan_trace(trace, enough=enough, canonical=facts.pattern)
    return decide(shape, facts)


def decide(shape: TraceShape | None, facts: PlanFacts) -> tuple[EngineName, str]:
    """The rule on the facts of the plan and of ``scan_trace``."""
    if shape is None:
        return "reference", "the trace is not a regular file that can be scanned"
    if shape.batches == 0:
        return "reference", f"no batch number read in the trace's {_n(shape.lines, 'line')}"
    row_by_row = facts.row_by_row
    if row_by_row is None and shape.not_canonical is not None:
        row_by_row = f"line {shape.not_canonical:,} is not in the canonical form"
    columnar = max(facts.columnar, 1)
    # whole rows per batch: the reason's figures compare as the rule does
    threshold = math.ceil(rows_needed(shape.batches, columnar, row_by_row is None) / shape.batches)
    mean = shape.lines // shape.batches
    operators = _n(facts.columnar, "columnar operator")
    if facts.columnar < facts.operators:
        operators += f" of {facts.operators}"
    read = "read in bulk" if row_by_row is None else f"read row by row: {row_by_row}"
    least, most = ("at least ", "at most ") if shape.at_least else ("", "")
    text = f"{least}{_n(shape.batches, 'batch')} of {most}{mean:,} rows on average"
    if mean >= threshold and not shape.at_least:
        return "columnar", f"{text} (>= {threshold:,} rows/batch for {operators}, {read})"
    return "reference", f"{text} (< {threshold:,} rows/batch for {operators}, {read})"


def _n(count: int, word: str) -> str:
    plural = word + ("es" if word.endswith("ch") else "s")
    return f"{count:,} {word if count == 1 else plural}"
