"""One run of a plan over a trace: the ``Runner`` reads the trace, picks the engine, checks
every path the run reads and writes, feeds each executed batch to the sinks and commits it to
the checkpoint; ``run``, ``iter_batches`` and ``run_to_files`` are the three ways to call it
(the runtime's API, handed on by ``runtime/__init__.py``)."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from ..compiler.diagnostics.diagnostics import did_you_mean
from ..compiler.planning.plan import Plan
from .checkpoints.checkpoint import Checkpoint, pause_for_test
from .checkpoints.recovery import DIGEST, Recovery
from .checkpoints.snapshot import SnapshotError, check_delta_start
from .choice import EngineChoice, choose_engine
from .engine.late import LateRecords
from .errors import CheckpointError, UsageError
from .io.emit import Emitter
from .io.files import Place, check_places
from .io.output import BatchOutput, RunResult, RunSummary
from .io.sinks import (
    OUTPUT_FORMATS,
    DeltaSink,
    FileSink,
    MemorySink,
    OutputFormat,
    ParquetSink,
    ShowSink,
    Sink,
    StreamSink,
    path_sink,
)
from .io.trace import (
    BadRowPolicy,
    StreamedBatches,
    StreamSchema,
    Trace,
    bad_rows_policy,
    batch_facts,
    read_table_file,
    read_trace,
    schemas_of,
    table_schemas,
)
from .memory import watch_state
from .operators import ENGINES, EngineName, place
from .progress import Meter, RunProgress
from .query import BatchResult, Engine

# a trace file (or a Parquet trace's folder), lines or record dicts, or a trace already read
# (``kafka_trace.read_kafka``: a replayed topic)
TraceInput = str | os.PathLike[str] | Iterable[Any] | Trace


def delta_options(plan: Plan) -> dict[str, dict[str, str]]:
    """The ``from delta`` options of each stream that has them (a Delta trace's limits)."""
    return {
        s.name: dict(s.source.options)
        for s in plan.streams
        if s.source is not None and s.source.format == "delta"
    }


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
    late_rows: bool = False,
    delta_at_start: Mapping[str, int | None] | None = None,
) -> RunResult:
    """Run ``plan`` over a trace (a JSONL path, or an iterable of JSON lines or record
    dicts) and return every executed batch.  With ``checkpoint`` the run resumes from the
    directory's state and returns the batches it ran (plus the last one of a killed run if
    that one was never returned).  ``on_batch`` is called as in ``run_to_files``.
    ``engine``: ``"reference"`` (row at a time), ``"columnar"`` (polars; same results) or
    ``"auto"`` (``choose_engine``: columnar for a trace of large batches).  ``backlog``: run the
    batches back to back, as Spark runs batches that were all waiting when it started (None:
    as the trace says, ``Trace.backlog``; a trace file is fed a batch at a time).
    ``late_rows``: give each batch the rows its operators dropped as late
    (``BatchOutput.late``).  ``delta_at_start``: a Delta trace's tables' versions when the
    job starts (``columnar.delta.read_delta_trace``; default: each table's latest)."""
    runner = Runner(
        plan,
        trace,
        relation,
        bad_rows,
        checkpoint,
        sinks=[MemorySink()],
        engine=engine,
        backlog=backlog,
        late_rows=late_rows,
        delta_at_start=delta_at_start,
    )
    result = RunResult(bad_rows=list(runner.trace.bad_rows), relations=runner.relations)
    total = len(runner.trace.batches)
    with collector_paused():
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
    runner = Runner(plan, trace, relation, "stop", None, sinks=[MemorySink()], engine=engine)
    with collector_paused():
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
    late_rows: str | os.PathLike[str] | None = None,
    delta_at_start: Mapping[str, int | None] | None = None,
    tables: Mapping[str, Path] | None = None,
    on_progress: Callable[[RunProgress], None] | None = None,
    stop: Callable[[], bool] | None = None,
    warn: Callable[[str], None] | None = None,
    memory: int | None = None,
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
    writes may be one of them (``files.check_places``).  ``backlog`` as in ``run``.
    ``late_rows``: a file that gets one JSON line per row an operator dropped as late
    (``late.py``).  ``tables``: a static table's rows from a JSON-lines file, by table
    (``--table NAME=PATH``; ``read_table_file``), held until the trace gives it rows.
    ``on_progress`` gets the run's ``RunProgress`` after each batch (the CLI's progress
    line); ``stop()`` is asked before each batch: True ends the run there, every file closed
    and consistent, the checkpoint's last commit that batch's (``RunSummary.stopped``; the
    CLI's Ctrl-C).  ``warn`` gets the run's one warning that its state is heading past
    memory (``memory.StateWatch``; default: a line on ``stderr``), ``memory`` the bytes the run
    may use (default: the machine's available memory).  Raises
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
        row_sink: Sink = ParquetSink(Path(output))
    elif output is not None and output_format == "delta":
        row_sink = DeltaSink(Path(output))
    elif output is not None:
        row_sink = path_sink(Path(output), "rows", "--output", durable=checkpoint is not None)
    elif show_rows is not None:
        row_sink = ShowSink(show_rows)
    else:
        row_sink = StreamSink(out_stream, "rows")
    sinks: list[Sink] = [row_sink]
    if progress is not None:
        sinks.append(
            path_sink(Path(progress), "progress", "--progress", durable=checkpoint is not None)
        )
    if late_rows is not None:
        sinks.append(
            path_sink(Path(late_rows), "late", "--late-rows", durable=checkpoint is not None)
        )
    for sink in sinks:
        sink.trace_batches = trace_batches
    runner = Runner(
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
        late_rows=late_rows is not None,
        delta_at_start=delta_at_start,
        tables=tables,
    )
    count = rows = late = 0
    last: int | None = None
    with contextlib.closing(runner):
        if notes is not None:
            for line in [*runner.engine_notes(), *runner.trace.notes]:
                notes(line)
        for bad in runner.trace.bad_rows:
            print(f"{bad.located(runner.trace.source)} (skipped)", file=err_stream)
        total = len(runner.trace.batches)
        watched = watch_state(
            plan, warn or (lambda text: print(f"sjoin run: {text}", file=err_stream)), memory
        )

        def observe(progress: RunProgress) -> None:
            watched(progress)
            if on_progress is not None:
                on_progress(progress)

        with collector_paused():
            for out in runner.run(stop, observe):
                count += 1
                rows += out.row_count
                late += late_count(out)
                last = out.batch
                if on_batch is not None:
                    on_batch(out, total)
    return RunSummary(
        count,
        rows,
        len(runner.trace.bad_rows),
        late,
        stopped=runner.stopped,
        last_batch=last,
        trace_done=runner.trace_done,
        trace_total=total,
    )


def table_files(plan: Plan, tables: Mapping[str, Path]) -> dict[str, StreamSchema]:
    """The schema of each table named by ``--table NAME=PATH`` (``UsageError`` for a name
    that is no table of the spec)."""
    schemas = table_schemas(plan)
    for name in tables:
        if name not in schemas:
            hint = did_you_mean(name, list(schemas))
            raise UsageError(
                f"--table {name}=...: the spec has no table `{name}` (tables: "
                f"{', '.join(sorted(schemas)) or 'none'})" + (f"; {hint}" if hint else "")
            )
    return {name: schemas[name] for name in tables}


def late_count(out: BatchOutput) -> int:
    """The rows a batch's operators dropped as late (their ``numRowsDroppedByWatermark``)."""
    return sum(op["numRowsDroppedByWatermark"] for op in out.progress["operators"])


@contextmanager
def collector_paused() -> Iterator[None]:
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


class Runner:
    """One run: the trace, the engine, the sinks and the checkpoint protocol."""

    def __init__(
        self,
        plan: Plan,
        trace: TraceInput,
        relation: str | None,
        bad_rows: BadRowPolicy,
        checkpoint: str | os.PathLike[str] | None,
        sinks: list[Sink],
        engine: EngineChoice = "auto",
        also_read: Sequence[Place] = (),
        also_written: Sequence[Place] = (),
        backlog: bool | None = None,
        late_rows: bool = False,
        delta_at_start: Mapping[str, int | None] | None = None,
        tables: Mapping[str, Path] | None = None,
    ) -> None:
        self.plan = plan
        self.checkpoint: Checkpoint | None = None
        self.sinks = sinks
        bad_rows = bad_rows_policy(bad_rows)
        if engine not in ("auto", *ENGINES):
            raise UsageError(f"unknown engine {engine!r}; choose auto, columnar or reference")
        self.engine_reason = "asked for"
        # where each operator runs, decided once for the choice and the engine
        placements = place(plan)
        if engine == "auto":
            engine, self.engine_reason = choose_engine(
                plan, trace, checkpoint=checkpoint is not None, placements=placements
            )
        self.engine_name: EngineName = engine
        if engine == "columnar":
            from .query import ColumnarEngine

            self.engine: Engine = ColumnarEngine(plan, relation, placements=placements)
        else:
            self.engine = Engine(plan, relation, placements=placements)
        given = table_files(plan, tables or {})
        self.relation = relation
        self.relations = self.engine.output_relations()
        if late_rows:
            self.engine.keep_late_rows()
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
            if directory:
                from .columnar.delta import is_delta_trace, read_delta_trace

                assert isinstance(trace, (str, os.PathLike))
                if is_delta_trace(Path(trace)):
                    return read_delta_trace(
                        Path(trace),
                        schemas_of(plan),
                        delta_options(plan),
                        at_start=self._delta_start(delta_at_start, checkpoint),
                        digests=checkpoint is not None,
                        stream=True,
                    )
            if delta_at_start:
                raise UsageError(
                    f"--delta-at-start applies to a Delta trace (<stream>/ Delta tables), "
                    f"and {getattr(trace, 'source', trace)} is none"
                )
            if isinstance(trace, Trace):
                return trace
            reader = read_trace
            if engine == "columnar":  # JSON lines in bulk, and Parquet traces
                from .columnar.trace import read_trace_columns as reader
            return reader(
                trace,
                {**schemas_of(plan), **table_schemas(plan)},
                bad_rows,
                digests=checkpoint is not None,
                lines=late_rows,
                stream=True,
            )

        for sink in sinks:
            sink.bind(plan, self.relations)
            if checkpoint is not None and isinstance(sink, FileSink):
                sink.checkpoint = f"the checkpoint in {checkpoint}"
        reads = [*also_read, *(Place("--table", path) for path in (tables or {}).values())]
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
        self._saved: dict[str, Any] | None = None  # the snapshot, if read before the trace
        try:
            self.engine.given_tables = {
                name: read_table_file(p, given[name]) for name, p in (tables or {}).items()
            }
            self.trace: Trace = read()
        except BaseException:
            self.close()
            raise
        if backlog is not None and backlog != self.trace.backlog:
            self.trace = replace(self.trace, backlog=backlog)
        self.keep_outputs = any(sink.needs_outputs for sink in sinks)
        self.recovery = (
            Recovery(
                self.checkpoint,
                plan,
                relation,
                self.engine,
                self.trace,
                sinks,
                self.keep_outputs,
                late_rows,
                saved=self._saved,
            )
            if self.checkpoint is not None
            else None
        )
        multiple = len(self.engine.queries) > 1
        self.emitter = Emitter(
            plan,
            self.relations,
            multiple,
            self.keep_outputs,
            self._late_records(multiple) if late_rows else None,
        )
        self.step = 0
        self.stopped = False  # ``run`` ended at a ``stop()`` before the trace's end

    def _delta_start(
        self, asked: Mapping[str, int | None] | None, checkpoint: object
    ) -> Mapping[str, int | None] | None:
        """Each Delta table's version when the job started: a restart takes the versions its
        checkpoint recorded, as Spark resumes from the offsets in its checkpoint whatever the
        table holds now (a table that grew since would otherwise be read anew); an explicit
        ``--delta-at-start`` that differs from them is refused."""
        if self.checkpoint is None:
            return asked
        self._saved = self.checkpoint.load()
        if self._saved is None:
            return asked
        recorded = self._saved["trace"].get("delta_start")
        if recorded is None:  # made before checkpoints kept it, or by a run of another trace
            return asked
        try:
            check_delta_start(recorded)
        except SnapshotError as err:
            raise CheckpointError(
                f"the checkpoint in {checkpoint} has a malformed record of the Delta tables' "
                f"start versions ({err}); use a new checkpoint directory"
            ) from None
        for stream, version in sorted((asked or {}).items()):
            named = list(recorded) if stream == "*" else [stream]
            differs = [s for s in named if version is not None and recorded.get(s) != version]
            if differs:
                raise UsageError(
                    f"--delta-at-start {stream}={version}: the checkpoint in {checkpoint} "
                    f"started `{differs[0]}` at version {recorded.get(differs[0])}, and a "
                    "restarted query reads on from its checkpoint (Spark ignores where a table "
                    "stands then): drop the option, or use a new checkpoint directory"
                )
        streams = set(schemas_of(self.plan))  # another spec's: its fingerprint refuses it
        return {s: v for s, v in recorded.items() if s in streams}

    def _late_records(self, multiple: bool) -> Callable[[BatchResult], list[dict[str, Any]]]:
        """A batch's late rows as ``--late-rows`` records, each traced to its trace line."""
        records = LateRecords(self.plan)
        batches = self.trace.batches
        # each batch's index by its value (a streamed trace's batch is read when asked for)
        by_value = {batch_facts(batches, i)[0]: i for i in range(len(batches))}

        def make(result: BatchResult) -> list[dict[str, Any]]:
            value = result.trace_batch
            index = by_value.get(value) if result.data and value is not None else None
            batch = None if index is None else batches[index]
            query = result.query if multiple else None
            return records.records(result.late, result.batch_id, result.trace_batch, batch, query)

        return make

    def engine_notes(self) -> list[str]:
        """What ``--verbose`` says about the engine: which operators run on which."""
        why = f": {self.engine_reason}"
        if self.engine_name == "reference":
            return [f"engine: reference (row at a time){why}"]
        fallbacks = self.engine.fallbacks
        lines = [f"engine: columnar (polars){why}"]
        operators: list[str] = []
        for query in self.engine.queries:
            for node in self.plan.for_query(query.root).stateful_operators(query.root):
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

    def run(
        self,
        stop: Callable[[], bool] | None = None,
        observe: Callable[[RunProgress], None] | None = None,
    ) -> Iterator[BatchOutput]:
        """Every executed batch, each yielded once the sinks have it (and the checkpoint,
        before them).  ``stop()`` is asked before each batch the engine runs: when it says
        True the run ends there, consistent (``stopped`` is then True; a checkpoint resumes
        at the next batch).  ``observe`` gets the run's ``RunProgress`` after each batch."""
        try:
            yield from self._run(stop, observe)
        finally:
            self.close()

    def close(self) -> None:
        """Close the sinks and release the checkpoint (again: no harm); every one is
        closed even when one fails (a full disk), and the first failure is raised."""
        failure: BaseException | None = None
        for sink in self.sinks:
            try:
                sink.close()
            except Exception as err:
                failure = failure or err
        if self.checkpoint is not None:
            self.checkpoint.close()
        batches = getattr(getattr(self, "trace", None), "batches", None)
        if isinstance(batches, StreamedBatches):  # a replayed topic's consumers
            try:
                batches.close()
            except Exception as err:
                failure = failure or err
        if failure is not None:
            raise failure

    def _run(
        self,
        stop: Callable[[], bool] | None = None,
        observe: Callable[[RunProgress], None] | None = None,
    ) -> Iterator[BatchOutput]:
        pending: BatchOutput | None = None
        offsets: dict[str, Any] = {}
        redeliver = False
        if self.recovery is not None:
            pending, offsets, self.step, redeliver = self.recovery.resume()
        # every file is checked against the checkpoint before any is cut back to it
        marks = [
            (offsets.get(s.offset_key), offsets.get(f"{s.offset_key}{DIGEST}"))
            if s.rewindable
            else (None, None)
            for s in self.sinks
        ]
        for sink, (offset, digest) in zip(self.sinks, marks, strict=True):
            sink.verify(offset, digest)
        for sink, (offset, digest) in zip(self.sinks, marks, strict=True):
            sink.start(offset, digest)
        if pending is not None:
            for sink in self.sinks:
                if sink.rewindable or redeliver:
                    sink.deliver(pending)
            if redeliver:
                self._delivered(self.step - 1)
                yield pending
        meter = Meter(len(self.trace.batches))
        meter.start(self.trace_done)
        results = self.engine.batches(self.trace)
        while True:
            if stop is not None and stop():
                self.stopped = True
                return
            result = next(results, None)
            if result is None:
                return
            out = self.emitter.output(result)
            if self.recovery is not None:
                self.recovery.commit(out, self.step)
                pause_for_test("committed", self.step)
            for sink in self.sinks:
                sink.deliver(out)
            self._delivered(self.step)
            pause_for_test("emitted", self.step)
            self.step += 1
            if observe is not None:
                observe(meter.measure(out, self.trace_done, self._rows_of))
            yield out

    @property
    def trace_done(self) -> int:
        """The trace batches begun: those whose data batch has run (for the first query)."""
        cursor = self.engine.cursor
        begun = cursor.trace_index + (1 if cursor.query_index or cursor.data_done else 0)
        return min(begun, len(self.trace.batches))

    def _rows_of(self, index: int) -> int:
        """Trace batch ``index``'s rows; 0 for a streamed batch no longer held, which no query
        ran (the engine holds the batches it runs), so it is not read again to count it."""
        batches = self.trace.batches
        if isinstance(batches, StreamedBatches) and index not in batches.held:
            return 0
        return sum(len(rows) for rows in batches[index].rows.values())

    def _delivered(self, step: int) -> None:
        if self.recovery is not None:
            self.recovery.delivered(step)
