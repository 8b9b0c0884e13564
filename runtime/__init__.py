"""The pure-Python reference runtime: run a plan over a trace with Spark's micro-batch
semantics and get, per executed batch (no-data batches included), the output rows, the
watermark and the state metrics Spark would report (language brief §7).

* ``run(plan, trace)`` returns a ``RunResult`` in memory;
* ``iter_batches(plan, trace)`` yields one batch at a time and keeps none;
* ``run_to_files(plan, trace, output=..., progress=...)`` streams the §7 JSON lines out as
  each batch completes (what ``sjoin run`` calls);
* ``output_line`` / ``progress_line`` format single lines.

It reads only the plan (never the front end) and never imports pyspark.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import IO, Any, Literal

from sjoin.compiler.plan import Plan

from .checkpoint import Checkpoint, fingerprint, pause_for_test
from .choice import EngineName, TraceShape, choose_engine, scan_trace
from .errors import (
    CheckpointError,
    QueryError,
    RunError,
    UnsafeFileError,
    UnsupportedExpression,
    UsageError,
)
from .files import Place, check_places, folder_name
from .join import Row
from .query import BatchResult, Engine, columns_of
from .snapshot import SnapshotError, check_snapshot
from .trace import (
    BadRow,
    BadRowPolicy,
    Trace,
    TraceError,
    bad_rows_policy,
    read_trace,
    schemas_of,
)
from .values import dumps, format_watermark, json_converter

__all__ = [
    "ENGINES",
    "OUTPUT_FORMATS",
    "BadRow",
    "BatchOutput",
    "CheckpointError",
    "EngineChoice",
    "EngineName",
    "OutputFormat",
    "Place",
    "QueryError",
    "RunError",
    "RunResult",
    "RunSummary",
    "TraceError",
    "TraceShape",
    "UnsafeFileError",
    "UnsupportedExpression",
    "UsageError",
    "choose_engine",
    "iter_batches",
    "output_line",
    "progress_line",
    "run",
    "run_to_files",
    "scan_trace",
]

# a trace file (or a Parquet trace's folder), lines or record dicts, or a trace already read
# (``kafka_trace.read_kafka``: a replayed topic)
TraceInput = str | os.PathLike[str] | Iterable[Any] | Trace
OutputFormat = Literal["jsonl", "parquet", "delta"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("jsonl", "parquet", "delta")


def delta_options(plan: Plan) -> dict[str, dict[str, str]]:
    """The ``from delta`` options of each stream that has them (a Delta trace's limits)."""
    return {
        s.name: dict(s.source.options)
        for s in plan.streams
        if s.source is not None and s.source.format == "delta"
    }


ENGINES: tuple[EngineName, ...] = ("columnar", "reference")
# what a caller may ask for: an engine, or "auto" (``choose_engine``)
EngineChoice = Literal["auto", "columnar", "reference"]


OutputRows = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True, eq=False)
class BatchOutput:
    """One executed micro-batch: ``rows`` are (relation, JSON-ready row dict) pairs in output
    order; ``counts`` the number of output rows per relation; ``progress`` the §7 progress
    record.  The row dicts are built on first use of ``rows``: a consumer that only counts
    them (a progress bar, a report, a benchmark's discarding sink) never pays for them."""

    batch: int
    query: str
    watermark: str | None
    data: bool
    counts: dict[str, int]
    progress: dict[str, Any]
    make_rows: Callable[[], OutputRows] = field(repr=False)
    # each join's state rows per side (left, right) after the batch; the progress record
    # has only their sum (numRowsTotal), as Spark's has
    state_sides: dict[str, tuple[int, int]] = field(default_factory=dict)
    # the trace batch whose step ran it (its data batch, or a no-data batch after it)
    trace_batch: int | None = None
    # the output lines as UTF-8 text chunks, written straight from the columns (columnar
    # engine; the argument: the trace batch to add to each line, or None), used while the
    # row dicts have not been built
    make_text: Callable[[int | None], Iterator[bytes]] | None = field(default=None, repr=False)
    # each relation's raw output (a frame or runtime rows), kept for a Parquet or Delta
    # output only
    make_outputs: Callable[[], dict[str, Any]] | None = field(default=None, repr=False)

    @classmethod
    def of(
        cls,
        batch: int,
        query: str,
        watermark: str | None,
        data: bool,
        rows: OutputRows,
        progress: dict[str, Any],
        state_sides: dict[str, list[int] | tuple[int, int]] | None = None,
        trace_batch: int | None = None,
    ) -> BatchOutput:
        """A batch whose rows are already built (e.g. read back from a checkpoint)."""
        counts: dict[str, int] = {}
        for relation, _ in rows:
            counts[relation] = counts.get(relation, 0) + 1
        sides = {name: (int(n[0]), int(n[1])) for name, n in (state_sides or {}).items()}
        if trace_batch is not None and type(trace_batch) is not int:
            raise TypeError("trace_batch must be an integer")
        return cls(
            batch, query, watermark, data, counts, progress, lambda: rows, sides, trace_batch
        )

    @cached_property
    def rows(self) -> OutputRows:
        return self.make_rows()

    @property
    def row_count(self) -> int:
        return sum(self.counts.values())

    def output_lines(self, trace_batches: bool = False) -> list[str]:
        """The §7 output lines; with ``trace_batches`` each also has ``"trace_batch"``."""
        if self._from_columns(trace_batches):
            text = b"".join(self.output_text(trace_batches)).decode("utf-8")
            return text.split("\n")[:-1]
        if trace_batches:
            return [
                output_line(self.batch, relation, row, trace_batch=self.trace_batch)
                for relation, row in self.rows
            ]
        return [output_line(self.batch, relation, row) for relation, row in self.rows]

    def _from_columns(self, trace_batches: bool) -> bool:
        """Whether the lines come from the columns: the rows are not built yet (else those
        are at hand) and a ``"trace_batch"`` asked for is known (else it is written null)."""
        return (
            self.make_text is not None
            and "rows" not in self.__dict__
            and not (trace_batches and self.trace_batch is None)
        )

    def output_text(self, trace_batches: bool = False) -> Iterator[bytes]:
        """The §7 output lines as UTF-8, each ending in LF, in chunks that a sink writes as
        they come: the columnar engine makes them from its columns, a chunk at a time, so a
        batch of millions of rows never exists as Python strings."""
        if self.make_text is not None and self._from_columns(trace_batches):
            yield from self.make_text(self.trace_batch if trace_batches else None)
            return
        lines = self.output_lines(trace_batches)
        if lines:
            yield "".join(line + "\n" for line in lines).encode("utf-8")

    def progress_line(self, trace_batches: bool = False) -> str:
        """The §7 progress line; with ``trace_batches`` it also has ``"trace_batch"``."""
        if not trace_batches:
            return progress_line(self.progress)
        batch, *rest = self.progress.items()
        return progress_line(dict([batch, ("trace_batch", self.trace_batch), *rest]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BatchOutput):
            return NotImplemented
        mine = (
            self.batch,
            self.query,
            self.watermark,
            self.data,
            self.progress,
            self.rows,
            self.trace_batch,
        )
        return mine == (
            other.batch,
            other.query,
            other.watermark,
            other.data,
            other.progress,
            other.rows,
            other.trace_batch,
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass
class RunResult:
    batches: list[BatchOutput] = field(default_factory=list)
    bad_rows: list[BadRow] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)

    def rows(self, relation: str | None = None) -> list[dict[str, Any]]:
        """Every output row (of one relation), in output order."""
        return [r for b in self.batches for rel, r in b.rows if relation in (None, rel)]

    def rows_by_batch(self, relation: str | None = None) -> dict[int, list[dict[str, Any]]]:
        out: dict[int, list[dict[str, Any]]] = {}
        for b in self.batches:
            out.setdefault(b.batch, []).extend(r for rel, r in b.rows if relation in (None, rel))
        return out

    def output_lines(self) -> list[str]:
        return [line for b in self.batches for line in b.output_lines()]

    def progress_lines(self) -> list[str]:
        return [b.progress_line() for b in self.batches]


@dataclass(frozen=True)
class RunSummary:
    batches: int
    rows: int
    bad_rows: int


_NO_TRACE_BATCH: Any = object()


def output_line(
    batch: int, relation: str, row: dict[str, Any], trace_batch: int | None = _NO_TRACE_BATCH
) -> str:
    """``{"batch": 0, "relation": "attributed", "row": {...}}``; given ``trace_batch``,
    ``{"batch": 2, "trace_batch": 1, "relation": ..., "row": ...}`` (`--trace-batches`)."""
    if trace_batch is _NO_TRACE_BATCH:
        return dumps({"batch": batch, "relation": relation, "row": row})
    return dumps({"batch": batch, "trace_batch": trace_batch, "relation": relation, "row": row})


def progress_line(progress: dict[str, Any]) -> str:
    """``{"batch": 2, "watermark": "...", "operators": [...]}``"""
    return dumps(progress)


def run(
    plan: Plan,
    trace: TraceInput,
    *,
    relation: str | None = None,
    bad_rows: BadRowPolicy = "stop",
    checkpoint: str | os.PathLike[str] | None = None,
    on_batch: Callable[[BatchOutput, int], None] | None = None,
    engine: EngineChoice = "auto",
    backlog: bool | None = None,
) -> RunResult:
    """Run ``plan`` over a trace (a JSONL path, or an iterable of JSON lines or record
    dicts) and return every executed batch.  With ``checkpoint`` the run resumes from the
    directory's state and returns the batches it ran (plus the last one of a killed run if
    that one was never returned).  ``on_batch`` is called as in ``run_to_files``.
    ``engine``: ``"reference"`` (row at a time), ``"columnar"`` (polars; same results) or
    ``"auto"`` (``choose_engine``: columnar for a trace of large batches).  ``backlog``: run the
    batches back to back, as Spark runs batches that were all waiting when it started (None:
    as the trace says, ``Trace.backlog``; a trace file is fed a batch at a time)."""
    runner = _Runner(
        plan,
        trace,
        relation,
        bad_rows,
        checkpoint,
        sinks=[_MemorySink()],
        engine=engine,
        backlog=backlog,
    )
    result = RunResult(bad_rows=list(runner.trace.bad_rows), relations=runner.relations)
    total = len(runner.trace.batches)
    with _collector_paused():
        for out in runner.run():
            result.batches.append(out)
            if on_batch is not None:
                on_batch(out, total)
    return result


def iter_batches(
    plan: Plan,
    trace: TraceInput,
    *,
    relation: str | None = None,
    engine: EngineChoice = "auto",
) -> Iterator[BatchOutput]:
    """Like ``run`` but yields each executed batch as it completes and keeps none: memory
    stays at the state plus one batch, however long the trace.  A bad trace row raises
    ``TraceError`` before the first batch.  (The cyclic garbage collector stays paused
    until the iteration ends or the iterator is closed.)"""
    runner = _Runner(plan, trace, relation, "stop", None, sinks=[_MemorySink()], engine=engine)
    with _collector_paused():
        yield from runner.run()


def run_to_files(
    plan: Plan,
    trace: TraceInput,
    *,
    relation: str | None = None,
    output: str | os.PathLike[str] | None = None,
    progress: str | os.PathLike[str] | None = None,
    bad_rows: BadRowPolicy = "stop",
    checkpoint: str | os.PathLike[str] | None = None,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    on_batch: Callable[[BatchOutput, int], None] | None = None,
    trace_batches: bool = False,
    show_rows: Callable[[BatchOutput], None] | None = None,
    engine: EngineChoice = "auto",
    notes: Callable[[str], None] | None = None,
    output_format: OutputFormat = "jsonl",
    also_read: Sequence[Place] = (),
    also_written: Sequence[Place] = (),
    backlog: bool | None = None,
) -> RunSummary:
    """``sjoin run``: stream output lines to ``output`` (default ``stdout``) and progress
    lines to ``progress`` as each batch completes.  Skipped bad rows are reported on
    ``stderr``.  ``on_batch(batch, data_batches_in_trace)`` is called after each executed
    batch (the CLI's progress bar).  With ``trace_batches`` every output and progress line
    also has ``"trace_batch"``, the trace batch whose step ran that batch.  Without
    ``output``, ``show_rows(batch)`` (if given) shows each batch's rows instead of the JSON
    lines on stdout (``sjoin run --format table``).  ``engine`` as in ``run``; ``notes``
    receives a line per operator that the columnar engine runs on the reference operator,
    and why.  With ``output_format="parquet"``, ``output`` is a directory that gets a file per
    relation per batch (``<relation>/batch-NNNN.parquet``); with ``"delta"``, a directory
    that gets a Delta table per relation, a commit per batch.  ``also_read`` and
    ``also_written`` name the caller's other files (the spec, a report): no file the run
    writes may be one of them (``files.check_places``).  ``backlog`` as in ``run``.  Raises
    ``RunError`` (``UsageError`` for a wrong relation or option) with a message fit for the
    user."""
    out_stream = stdout if stdout is not None else sys.stdout
    err_stream = stderr if stderr is not None else sys.stderr
    if output_format not in OUTPUT_FORMATS:
        raise UsageError(f"unknown output format {output_format!r}; choose jsonl, parquet or delta")
    if output_format != "jsonl" and output is None:
        raise UsageError(
            f"--output-format {output_format} writes a directory: give it with --output"
        )
    if output is not None and output_format == "parquet":
        row_sink: _Sink = _ParquetSink(Path(output))
    elif output is not None and output_format == "delta":
        row_sink = _DeltaSink(Path(output))
    elif output is not None:
        row_sink = _path_sink(Path(output), "rows", "--output")
    elif show_rows is not None:
        row_sink = _ShowSink(show_rows)
    else:
        row_sink = _StreamSink(out_stream, "rows")
    sinks: list[_Sink] = [row_sink]
    if progress is not None:
        sinks.append(_path_sink(Path(progress), "progress", "--progress"))
    for sink in sinks:
        sink.trace_batches = trace_batches
    runner = _Runner(
        plan,
        trace,
        relation,
        bad_rows,
        checkpoint,
        sinks,
        engine=engine,
        also_read=also_read,
        also_written=also_written,
        backlog=backlog,
    )
    count = rows = 0
    with contextlib.closing(runner):
        if notes is not None:
            for line in runner.engine_notes():
                notes(line)
        for bad in runner.trace.bad_rows:
            print(f"{bad.located(runner.trace.source)} (skipped)", file=err_stream)
        total = len(runner.trace.batches)
        with _collector_paused():
            for out in runner.run():
                count += 1
                rows += out.row_count
                if on_batch is not None:
                    on_batch(out, total)
    return RunSummary(count, rows, len(runner.trace.bad_rows))


# ---------------------------------------------------------------------------- internals


class _Sink:
    kind: str  # "rows" or "progress"
    rewindable = False
    needs_outputs = False  # keeps each batch's raw outputs (a frame or rows per relation)

    @property
    def offset_key(self) -> str:
        """The key of this sink's position in a checkpoint's offsets."""
        return self.kind

    trace_batches = False  # add "trace_batch" to each line (`sjoin run --trace-batches`)

    def text(self, out: BatchOutput) -> Iterable[bytes]:
        """What the sink writes of a batch: UTF-8 lines, each ending in LF, in chunks."""
        if self.kind == "rows":
            return out.output_text(self.trace_batches)
        return [(out.progress_line(self.trace_batches) + "\n").encode("utf-8")]

    def start(self, offset: int | None) -> None: ...

    def size(self) -> int | None:
        return None

    def write(self, chunks: Iterable[bytes]) -> None: ...

    def deliver(self, out: BatchOutput) -> None:
        self.write(self.text(out))

    def bind(self, plan: Plan, relations: Sequence[str]) -> None:
        """Learn the run's output relations (before ``start``)."""

    def places(self, relations: Sequence[str]) -> list[Place]:
        """The paths the sink writes (``files.check_places``)."""
        return []

    def close(self) -> None: ...


class _MemorySink(_Sink):
    """``run()``'s sink: the caller gets the batches themselves, no text."""

    kind = "rows"

    def text(self, out: BatchOutput) -> Iterable[bytes]:
        return []


class _ShowSink(_Sink):
    """The rows shown by the caller (``show_rows``), batch by batch, instead of as lines."""

    kind = "rows"

    def __init__(self, show: Callable[[BatchOutput], None]) -> None:
        self.show = show

    def text(self, out: BatchOutput) -> Iterable[bytes]:
        self.show(out)
        return []


class _StreamSink(_Sink):
    def __init__(self, stream: IO[str], kind: str) -> None:
        self.stream = stream
        self.kind = kind

    def write(self, chunks: Iterable[bytes]) -> None:
        binary = getattr(self.stream, "buffer", None)  # a text stream's bytes underneath
        if binary is not None:
            self.stream.flush()  # what was written as text goes first
        for chunk in chunks:
            if binary is not None:
                binary.write(chunk)
            else:
                self.stream.write(chunk.decode("utf-8"))
        (binary or self.stream).flush()


class _PipeSink(_StreamSink):
    """A device or a pipe (``/dev/stderr``, a FIFO): written as a stream, it cannot be
    rewound, like stdout.  Opened at ``start``, once every path of the run is checked."""

    def __init__(self, path: Path, kind: str, option: str) -> None:
        self.path = path
        self.option = option
        self.kind = kind

    def places(self, relations: Sequence[str]) -> list[Place]:
        return [Place(self.option, self.path)]

    def start(self, offset: int | None) -> None:
        try:
            self.stream = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - close()
        except OSError as err:
            raise UsageError(f"cannot write {self.path}: {err}") from None

    def close(self) -> None:
        if hasattr(self, "stream"):
            self.stream.close()


def _path_sink(path: Path, kind: str, option: str) -> _Sink:
    """A sink for ``--output`` / ``--progress PATH``.  A path that is this process's own
    stdout or stderr (``/dev/stderr``, even when stderr is redirected to a file) is written
    through that stream, so that both share one file offset and interleave whole lines;
    opening the file anew would write over what the stream writes."""
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        try:
            if os.path.samestat(os.stat(path), os.fstat(fd)):
                return _StreamSink(stream, kind)
        except (OSError, ValueError):
            continue
    if path.exists() and not path.is_file():
        return _PipeSink(path, kind, option)
    return _FileSink(path, kind, option)


class _FileSink(_Sink):
    """An output file written so that it can be rewound to the end of a committed batch."""

    rewindable = True

    def __init__(self, path: Path, kind: str, option: str) -> None:
        self.path = path
        self.kind = kind
        self.option = option
        self.handle: io.BufferedWriter | None = None

    def places(self, relations: Sequence[str]) -> list[Place]:
        return [Place(self.option, self.path)]

    def start(self, offset: int | None) -> None:
        try:
            handle = open(self.path, "r+b" if self.path.exists() else "w+b")  # noqa: SIM115
        except OSError as err:
            raise UsageError(f"cannot write {self.path}: {err}") from None
        end = handle.seek(0, os.SEEK_END)
        if offset is not None and end < offset:
            handle.close()
            raise CheckpointError(
                f"{self.path} is shorter than the checkpoint recorded ({end} < {offset} bytes): "
                "restart with the same output files, or with a new checkpoint directory"
            )
        handle.truncate(offset or 0)
        handle.seek(offset or 0)
        self.handle = handle  # type: ignore[assignment]

    def size(self) -> int | None:
        assert self.handle is not None
        return self.handle.tell()

    def write(self, chunks: Iterable[bytes]) -> None:
        assert self.handle is not None
        for chunk in chunks:
            self.handle.write(chunk)
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


class _ParquetSink(_Sink):
    """``--output-format parquet``: a file per relation per batch under a directory
    (``columnar/parquet_out.py``).  A new run removes the batch files of an earlier one; a
    restart keeps them and writes the pending batch again, replacing its files."""

    kind = "rows"
    rewindable = True
    needs_outputs = True
    offset_key = "parquet"  # type: ignore[assignment]  # files written, not bytes

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.files = 0

    def bind(self, plan: Plan, relations: Sequence[str]) -> None:
        from .columnar.delta import relation_columns
        from .columnar.parquet_out import ParquetWriter

        self.writer = ParquetWriter(self.directory, relation_columns(plan, relations))

    def places(self, relations: Sequence[str]) -> list[Place]:
        return _folder_places(self.directory, relations)

    def start(self, offset: int | None) -> None:
        if offset is None:
            self.writer.clear()
        else:
            self.writer.remove_temporaries()
        self.files = offset or 0

    def size(self) -> int | None:
        return self.files

    def deliver(self, out: BatchOutput) -> None:
        assert out.make_outputs is not None
        self.files += self.writer.write(out.batch, out.make_outputs())

    def close(self) -> None:
        if hasattr(self, "writer"):
            self.writer.close()


def _folder_places(directory: Path, relations: Sequence[str]) -> list[Place]:
    """An output directory (the user's) and each relation's folder in it (sjoin's): the
    places of a Parquet or Delta output."""
    return [
        Place("--output", directory),
        *(Place("--output", directory / folder_name(r), tree=True) for r in relations),
    ]


class _DeltaSink(_Sink):
    """``--output-format delta``: a Delta table per relation under a directory, a commit per
    batch that gives it rows (``columnar/delta.py``).  A new run replaces the tables' rows;
    a restart writes the pending batch again where its commit is not there yet."""

    kind = "rows"
    rewindable = True
    needs_outputs = True
    offset_key = "delta"  # type: ignore[assignment]  # commits made, not bytes

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.commits = 0
        self.again = False

    def bind(self, plan: Plan, relations: Sequence[str]) -> None:
        from .columnar.delta import DeltaWriter, relation_columns

        self.writer = DeltaWriter(self.directory, relation_columns(plan, relations))

    def places(self, relations: Sequence[str]) -> list[Place]:
        return _folder_places(self.directory, relations)

    def start(self, offset: int | None) -> None:
        if offset is None:
            self.writer.clear()
        self.commits = offset or 0
        self.again = offset is not None  # the pending batch may be written already

    def size(self) -> int | None:
        return self.commits

    def deliver(self, out: BatchOutput) -> None:
        assert out.make_outputs is not None
        self.commits += self.writer.write(out.batch, out.make_outputs(), again=self.again)
        self.again = False


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a whole run.  The runtime builds only acyclic
    rows, which reference counting frees; but every collector pass would scan all the rows
    kept in state, and with a large state those passes cost more than the join itself."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


class _Runner:
    """One run: the trace, the engine, the sinks and the checkpoint protocol."""

    def __init__(
        self,
        plan: Plan,
        trace: TraceInput,
        relation: str | None,
        bad_rows: BadRowPolicy,
        checkpoint: str | os.PathLike[str] | None,
        sinks: list[_Sink],
        engine: EngineChoice = "auto",
        also_read: Sequence[Place] = (),
        also_written: Sequence[Place] = (),
        backlog: bool | None = None,
    ) -> None:
        self.plan = plan
        self.checkpoint: Checkpoint | None = None
        self.sinks = sinks
        bad_rows = bad_rows_policy(bad_rows)
        if engine not in ("auto", *ENGINES):
            raise UsageError(f"unknown engine {engine!r}; choose auto, columnar or reference")
        self.engine_reason = "asked for"
        if engine == "auto":
            engine, self.engine_reason = choose_engine(
                plan, trace, checkpoint=checkpoint is not None
            )
        self.engine_name: EngineName = engine
        if engine == "columnar":
            from .columnar.query import ColumnarEngine

            self.engine: Engine = ColumnarEngine(plan, relation)
        else:
            self.engine = Engine(plan, relation)
        self.relation = relation
        self.relations = self.engine.output_relations()
        directory = isinstance(trace, (str, os.PathLike)) and Path(trace).is_dir()
        if isinstance(trace, Trace) and checkpoint is not None:
            raise UsageError(
                f"a checkpoint needs a trace file, and {trace.source} is read anew by each "
                "run: write it to a file with `sjoin capture`, then run that file with "
                "--checkpoint"
            )
        if directory and engine != "columnar":
            raise UsageError(
                f"{trace} is a directory: a Parquet trace (<stream>/batch-NNNN.parquet) or a "
                "Delta trace (<stream>/ Delta tables) is read by the columnar engine only; "
                "run without --engine reference"
            )

        def read() -> Trace:
            """The trace: one already read (a replayed topic), a Delta trace, a Parquet
            trace or JSON lines (in bulk on the columnar engine)."""
            if isinstance(trace, Trace):
                return trace
            if directory:
                from .columnar.delta import is_delta_trace, read_delta_trace

                assert isinstance(trace, (str, os.PathLike))
                if is_delta_trace(Path(trace)):
                    return read_delta_trace(
                        Path(trace),
                        schemas_of(plan),
                        delta_options(plan),
                        digests=checkpoint is not None,
                    )
            reader = read_trace
            if engine == "columnar":  # JSON lines in bulk, and Parquet traces
                from .columnar.trace import read_trace_columns as reader
            return reader(trace, schemas_of(plan), bad_rows, digests=checkpoint is not None)

        for sink in sinks:
            sink.bind(plan, self.relations)
        reads = [*also_read]
        if isinstance(trace, (str, os.PathLike)):
            reads.append(Place("--trace", Path(trace), tree=Path(trace).is_dir()))
        writes = [*also_written, *(p for sink in sinks for p in sink.places(self.relations))]
        if not isinstance(bad_rows, str):
            writes.append(Place("--bad-rows", Path(bad_rows)))
        if checkpoint is not None:
            writes.append(Place("--checkpoint", Path(checkpoint), tree=True))
        check_places(reads, writes)
        # the checkpoint is locked before anything is written (the bad rows, as the trace
        # is read), and released by ``close``
        self.checkpoint = Checkpoint(checkpoint) if checkpoint is not None else None
        try:
            self.trace: Trace = read()
        except BaseException:
            self.close()
            raise
        if backlog is not None and backlog != self.trace.backlog:
            self.trace = replace(self.trace, backlog=backlog)
        self.keep_outputs = any(sink.needs_outputs for sink in sinks)
        # running SHA-256 over the digests of the trace batches consumed so far
        self.consumed_hash = hashlib.sha256()
        self.consumed = 0
        self.multiple = len(self.engine.queries) > 1
        self.converters: dict[str, tuple[list[str], list[tuple[int, Any]]]] = {}
        for name in self.relations:
            node = plan.node(name)
            assert node is not None
            columns = columns_of(node)
            self.converters[name] = (
                [c for c, _ in columns],
                [
                    (i, f)
                    for i, (_, kind) in enumerate(columns)
                    if (f := json_converter(kind)) is not None
                ],
            )
        self.step = 0

    def engine_notes(self) -> list[str]:
        """What ``--verbose`` says about the engine: which operators run on which."""
        why = f": {self.engine_reason}"
        if self.engine_name == "reference":
            return [f"engine: reference (row at a time){why}"]
        fallbacks: dict[str, str] = getattr(self.engine, "fallbacks", {})
        lines = [f"engine: columnar (polars){why}"]
        operators: list[str] = []
        for query in self.engine.queries:
            for node in self.plan.stateful_operators(query.root):
                if node.name not in operators:
                    operators.append(node.name)
        for name in operators:
            reason = fallbacks.get(name)
            if reason is None:
                lines.append(f"`{name}` runs columnar")
            else:
                lines.append(f"`{name}` runs on the reference engine: {reason}")
        lines += [
            f"`{name}` runs on the reference engine: {reason}"
            for name, reason in fallbacks.items()
            if name not in operators
        ]
        return lines

    def run(self) -> Iterator[BatchOutput]:
        try:
            yield from self._run()
        finally:
            self.close()

    def close(self) -> None:
        """Close the sinks and release the checkpoint (again: no harm)."""
        for sink in self.sinks:
            sink.close()
        if self.checkpoint is not None:
            self.checkpoint.close()

    def _run(self) -> Iterator[BatchOutput]:
        pending: BatchOutput | None = None
        offsets: dict[str, int | None] = {}
        redeliver = False
        if self.checkpoint is not None:
            saved = self.checkpoint.load()
            if saved is not None:
                self._check_saved(saved)
                pending, offsets = self._restore(saved)
                self.step = saved["step"] + 1
                redeliver = self.checkpoint.delivered() < saved["step"]
            self.checkpoint.reset_trace_batches(self._trace_entries(0, self.consumed))
        for sink in self.sinks:
            sink.start(offsets.get(sink.offset_key) if sink.rewindable else None)
        if pending is not None:
            for sink in self.sinks:
                if sink.rewindable or redeliver:
                    sink.deliver(pending)
            if redeliver:
                self._delivered(self.step - 1)
                yield pending
        for result in self.engine.batches(self.trace):
            out = self._output(result)
            if self.checkpoint is not None:
                self._commit(out)
                pause_for_test("committed", self.step)
            for sink in self.sinks:
                sink.deliver(out)
            self._delivered(self.step)
            pause_for_test("emitted", self.step)
            self.step += 1
            yield out

    def _check_saved(self, saved: dict[str, Any]) -> None:
        """Refuse a checkpoint of another spec, or a trace whose consumed part differs from
        the one the checkpoint consumed; on success the running hash stands where it was."""
        if saved["fingerprint"] != fingerprint(self.plan, self.relation):
            raise CheckpointError(
                f"the checkpoint in {self.checkpoint_dir} belongs to another spec or "
                "relation; use a new checkpoint directory"
            )
        backlog = saved.get("backlog")
        if type(backlog) is not bool:
            raise CheckpointError(self._malformed("its record of the run's schedule (backlog)"))
        if backlog is not self.trace.backlog:
            made = "with" if backlog else "without"
            raise CheckpointError(
                f"the checkpoint in {self.checkpoint_dir} was made by a run {made} --backlog, "
                "which schedules the batches otherwise; resume it the same way, or use a new "
                "checkpoint directory"
            )
        consumed, want = saved["trace"].get("batches"), saved["trace"].get("sha256")
        if type(consumed) is not int or not 0 <= consumed < 2**63 or type(want) is not str:
            raise CheckpointError(self._malformed("its record of the consumed trace"))
        batches = self.trace.batches
        found = hashlib.sha256()
        for batch in batches[:consumed]:
            assert batch.digest is not None
            found.update(batch.digest)
        if len(batches) < consumed or found.hexdigest() != want:
            raise CheckpointError(
                f"the trace does not match the checkpoint in {self.checkpoint_dir}: "
                f"{self._first_difference(consumed)}; restart with the same trace (more "
                "batches may follow), or use a new checkpoint directory"
            )
        self.consumed_hash, self.consumed = found, consumed

    def _first_difference(self, consumed: int) -> str:
        """Which trace batch differs from the one the checkpoint consumed at its place."""
        assert self.checkpoint is not None
        recorded = self.checkpoint.trace_batches()
        batches = self.trace.batches
        for index in range(consumed):
            old = recorded.get(index)
            if old is None:
                break
            where = _batch_at(old.get("batch"), old.get("line"))
            if index >= len(batches):
                return (
                    f"it has {len(batches)} batch(es), but the checkpoint consumed {consumed}: "
                    f"the first one missing is the checkpoint's {where}"
                )
            new = batches[index]
            assert new.digest is not None
            if old.get("sha256") != new.digest.hex():
                return (
                    f"its {_batch_at(new.value, new.first_line)} differs from the "
                    f"checkpoint's {where}, the {_ordinal(index + 1)} batch it consumed"
                )
        if len(batches) < consumed:
            return f"it has {len(batches)} batch(es), but the checkpoint consumed {consumed}"
        return f"one of its first {consumed} batches differs from the one the checkpoint consumed"

    def _restore(self, saved: dict[str, Any]) -> tuple[BatchOutput, dict[str, int | None]]:
        """Load the engine's state and the pending batch; a snapshot whose parts do not fit
        is refused as a whole."""
        offsets = saved["offsets"]
        if not all(v is None or (type(v) is int and v >= 0) for v in offsets.values()):
            raise CheckpointError(self._malformed("its output offsets"))
        names = {"parquet": "Parquet", "delta": "Delta tables"}
        made = next((names[k] for k in names if k in offsets), "JSON lines")
        now = next((names[s.offset_key] for s in self.sinks if s.offset_key in names), "JSON lines")
        parquet = made != "JSON lines"
        if made != now or (parquet and "pending_outputs" not in saved):
            raise CheckpointError(
                f"{self.checkpoint_dir} was made by a run writing {made}; resume it with the "
                f"same --output-format (not {now}), or start a new checkpoint directory"
            )
        reference = self.engine if type(self.engine) is Engine else Engine(self.plan, self.relation)
        try:
            check_snapshot(saved, reference, self.keep_outputs)
        except SnapshotError as err:
            raise CheckpointError(
                f"the checkpoint in {self.checkpoint_dir} is malformed: its `{err.where}` "
                f"cannot be used ({err.problem}); use a new checkpoint directory"
            ) from None
        try:
            self.engine.restore(saved["engine"])
            pending = BatchOutput.of(**saved["pending"])
            if parquet:
                outputs = {str(k): list(v) for k, v in saved["pending_outputs"].items()}
                pending = replace(pending, make_outputs=lambda: outputs)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            raise CheckpointError(
                self._malformed(f"its state ({type(err).__name__}: {err})")
            ) from None
        if type(saved["step"]) is not int or saved["step"] < 0:
            raise CheckpointError(self._malformed("its step"))
        cursor = self.engine.cursor
        if not (
            type(cursor.trace_index) is int
            and type(cursor.query_index) is int
            and type(cursor.data_done) is bool
            and 0 <= cursor.trace_index <= self.consumed
            and 0 <= cursor.query_index <= len(self.engine.queries)
        ):
            raise CheckpointError(self._malformed("its trace position"))
        return pending, offsets

    def _malformed(self, what: str) -> str:
        return (
            f"the checkpoint in {self.checkpoint_dir} is malformed: {what} cannot be used; "
            "use a new checkpoint directory"
        )

    def _trace_entries(self, start: int, end: int) -> list[dict[str, Any]]:
        entries = []
        for index in range(start, end):
            batch = self.trace.batches[index]
            assert batch.digest is not None
            entries.append(
                {
                    "index": index,
                    "batch": batch.value,
                    "line": batch.first_line,
                    "sha256": batch.digest.hex(),
                }
            )
        return entries

    def _commit(self, out: BatchOutput) -> None:
        assert self.checkpoint is not None
        cursor = self.engine.cursor
        consumed = min(
            cursor.trace_index + (1 if cursor.query_index or cursor.data_done else 0),
            len(self.trace.batches),
        )
        if consumed > self.consumed:
            for batch in self.trace.batches[self.consumed : consumed]:
                assert batch.digest is not None
                self.consumed_hash.update(batch.digest)
            self.checkpoint.add_trace_batches(self._trace_entries(self.consumed, consumed))
            self.consumed = consumed
        self.checkpoint.commit(
            {
                "fingerprint": fingerprint(self.plan, self.relation),
                "backlog": self.trace.backlog,
                "step": self.step,
                "trace": {"batches": self.consumed, "sha256": self.consumed_hash.hexdigest()},
                "engine": self.engine.snapshot(),
                "pending": {
                    "batch": out.batch,
                    "query": out.query,
                    "watermark": out.watermark,
                    "data": out.data,
                    "rows": out.rows,
                    "progress": out.progress,
                    "state_sides": out.state_sides,
                    "trace_batch": out.trace_batch,
                },
                "offsets": {s.offset_key: s.size() for s in self.sinks if s.rewindable},
                **({"pending_outputs": self._raw_outputs(out)} if self.keep_outputs else {}),
            }
        )

    @property
    def checkpoint_dir(self) -> str:
        return str(self.checkpoint.directory) if self.checkpoint is not None else ""

    def _delivered(self, step: int) -> None:
        if self.checkpoint is not None and not all(s.rewindable for s in self.sinks):
            self.checkpoint.mark_delivered(step)

    def _output(self, result: BatchResult) -> BatchOutput:
        outputs = result.outputs
        counts = {relation: len(values) for relation, values in outputs.items()}
        held = [outputs]

        keep = self.keep_outputs

        def make_rows() -> OutputRows:  # called once (BatchOutput caches the rows)
            rows = self._json_ready(held[0])
            if not keep:
                held[0] = {}  # the raw tuples are not needed any more
            return rows

        make_text = None
        if any(not isinstance(values, list) for values in outputs.values()):

            def make_text(trace_batch: int | None) -> Iterator[bytes]:
                return self._column_text(result.batch_id, held[0], trace_batch)

        output = self._batch_output(result, counts, make_rows, make_text)
        if keep:
            return replace(output, make_outputs=lambda: held[0])
        return output

    @staticmethod
    def _raw_outputs(out: BatchOutput) -> dict[str, list[Row]]:
        """A batch's outputs as runtime rows (plain data for the checkpoint)."""
        assert out.make_outputs is not None
        return {
            relation: values if isinstance(values, list) else values.rows()
            for relation, values in out.make_outputs().items()
        }

    def _column_text(
        self, batch: int, outputs: dict[str, Any], trace_batch: int | None
    ) -> Iterator[bytes]:
        """The lines of a batch whose outputs are frames: from the columns, no row dict and
        no tuple (relations the reference operator made are lists of rows)."""
        from .columnar.frames import json_chunks

        for relation, values in outputs.items():
            if isinstance(values, list):
                lines = [
                    output_line(batch, relation, row)
                    if trace_batch is None
                    else output_line(batch, relation, row, trace_batch=trace_batch)
                    for _, row in self._json_ready({relation: values})
                ]
                if lines:
                    yield "".join(line + "\n" for line in lines).encode("utf-8")
            elif len(values):
                node = self.plan.node(relation)
                assert node is not None
                yield from json_chunks(values, batch, relation, columns_of(node), trace_batch)

    def _json_ready(self, outputs: dict[str, list[Row]]) -> OutputRows:
        """Output rows as (relation, row dict) pairs with JSON-ready values."""
        rows: OutputRows = []
        for relation, values in outputs.items():
            names, converters = self.converters[relation]
            if not isinstance(values, list):  # a frame of the columnar engine
                from .columnar.frames import to_rows

                values = to_rows(values)
            if not converters:
                rows.extend([(relation, dict(zip(names, row, strict=True))) for row in values])
                continue
            for row in values:
                cells = list(row)
                for i, convert in converters:
                    value = cells[i]
                    if value is not None:
                        cells[i] = convert(value)
                rows.append((relation, dict(zip(names, cells, strict=True))))
        return rows

    def _batch_output(
        self,
        result: BatchResult,
        counts: dict[str, int],
        make_rows: Callable[[], OutputRows],
        make_text: Callable[[int | None], Iterator[bytes]] | None = None,
    ) -> BatchOutput:
        watermark = None if result.watermark_ms is None else format_watermark(result.watermark_ms)
        progress: dict[str, Any] = {"batch": result.batch_id}
        if self.multiple:
            progress["query"] = result.query
        progress["watermark"] = watermark
        progress["operators"] = [
            {
                "relation": r.relation,
                "numRowsTotal": r.num_rows_total,
                "numRowsUpdated": r.num_rows_updated,
                "numRowsRemoved": r.num_rows_removed,
                "numRowsDroppedByWatermark": r.num_rows_dropped_by_watermark,
            }
            for r in result.operators
        ]
        sides = {r.relation: r.side_rows for r in result.operators if r.side_rows is not None}
        return BatchOutput(
            result.batch_id,
            result.query,
            watermark,
            result.data,
            counts,
            progress,
            make_rows,
            sides,
            result.trace_batch,
            make_text,
        )


def _batch_at(batch: Any, line: Any) -> str:
    """ "batch 3 (line 9)"; a Parquet trace's batches have no line (0)."""
    return f"batch {batch} (line {line})" if line else f"batch {batch}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
