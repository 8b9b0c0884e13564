"""A spec run as `sjoin run` runs it: the options as one typed request (``RunRequest``), the
checks made before anything is written (option combinations, every path the user named, the
spec's own files once it is read), and the run itself (``RunRequest.run``: the HTML report
fed batch by batch, a Delta trace's start, then ``runtime.run_to_files``).

The command (``cli/main.py``) parses the options into a request, reads the spec, prints;
everything between is here.  A Kafka trace arrives already read (``source``): replaying the
topics prints notes as it goes, which is the command's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from .api import CheckResult
    from .compiler.planning.plan import Plan
    from .reports.run_page import Report
    from .runtime import BatchOutput, Place, RunProgress, RunSummary
    from .runtime.io.trace import BadRowPolicy


@dataclass(frozen=True)
class RunRequest:
    """`sjoin run`'s options, as its command takes them (``RunRequest(**options)``)."""

    spec: Path
    trace: Path | str  # a trace file or folder, or kafka://HOST:PORT
    relation: str | None = None
    output: Path | None = None
    progress: Path | None = None
    bad_rows: str = "stop"
    late_rows: Path | None = None
    checkpoint: Path | None = None
    report: Path | None = None
    fmt: str | None = None  # how stdout shows the rows: json, table (None: the default)
    output_format: str = "jsonl"
    trace_batches: bool = False
    engine: str = "auto"
    max_offsets: int | None = None
    starting_offsets: str | None = None
    delta_at_start: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()  # --table NAME=PATH, as written
    backlog: bool | None = None
    verbose: bool = False
    entry: str | None = None  # --entry: a PySpark job's function to call (docs/pyspark.md)

    @property
    def url(self) -> str | None:
        """The Kafka URL the trace is, if it is one."""
        return self.trace if isinstance(self.trace, str) else None

    @property
    def trace_file(self) -> Path | None:
        """The trace when it is a file (the SQL front end infers Python streams' columns
        from it)."""
        return None if isinstance(self.trace, str) or self.trace.is_dir() else self.trace

    @property
    def policy(self) -> BadRowPolicy:
        """``--bad-rows`` read: stop, skip or a ``Path`` (``UsageError`` for a bad one)."""
        from .runtime.io.trace import bad_rows_policy

        return bad_rows_policy(self.bad_rows)

    def refused(self) -> str | None:
        """Why these options cannot go together (a usage error), or None."""
        if self.url is None and (self.max_offsets is not None or self.starting_offsets):
            return (
                "--max-offsets-per-trigger and --starting-offsets apply to "
                "--trace kafka://HOST:PORT"
            )
        if self.url is not None and self.checkpoint is not None:
            return (
                "--checkpoint needs a trace file: a replay reads the topics anew each run; "
                "write them to a file with `sjoin capture`, then run that file with "
                "--checkpoint --backlog"
            )
        if self.fmt == "table" and self.output is not None:
            return "--format table shows rows on stdout; --output writes JSON lines"
        if self.output_format != "jsonl" and self.output is None:
            return f"--output-format {self.output_format} writes a directory: give it with --output"
        return None

    def written(self) -> list[Place]:
        """Every path the run writes that the user named."""
        from .runtime import Place

        policy = self.policy
        named = [
            ("--report", self.report, False),
            ("--output", self.output, False),
            ("--progress", self.progress, False),
            ("--late-rows", self.late_rows, False),
            ("--bad-rows", policy if isinstance(policy, Path) else None, False),
            ("--checkpoint", self.checkpoint, True),
        ]
        return [Place(what, path, tree=tree) for what, path, tree in named if path is not None]

    def check_places(self, result: CheckResult | None = None) -> None:
        """No path the run writes is one it reads or another it writes: checked before
        anything is written (the report's own check makes its file), and again with each
        file of a pipeline once the spec is read (``UsageError``)."""
        from .runtime import Place
        from .runtime.io.files import check_places

        reads = spec_places(self.spec, result)
        reads += [Place("--table", path) for path in self.table_files.values()]
        if not isinstance(self.trace, str):
            reads.append(Place("--trace", self.trace, tree=self.trace.is_dir()))
        check_places(reads, self.written())

    def report_page(self, result: CheckResult) -> Report | None:
        """The HTML report's collector (``--report``), its file checked and made;
        ``ReportError`` when matplotlib is missing or the file cannot be written."""
        if self.report is None or result.plan is None:
            return None
        from .reports import run_page

        run_page.require_matplotlib()
        run_page.check_target(self.report)
        return run_page.Report.for_run(result.plan, spec=self.spec.as_posix(), trace=self.trace)

    @property
    def table_files(self) -> dict[str, Path]:
        """``--table NAME=PATH`` read: the file of each table's rows (``UsageError`` for a
        malformed one or a table named twice)."""
        from .runtime.errors import UsageError

        found: dict[str, Path] = {}
        for given in self.tables:
            name, eq, path = given.partition("=")
            if not eq or not name or not path:
                raise UsageError(f"--table {given!r}: expected NAME=PATH (a table of the spec)")
            if name in found:
                raise UsageError(f"--table names `{name}` twice")
            found[name] = Path(path)
        return found

    def delta_start(self, plan: Plan) -> dict[str, int | None] | None:
        """``--delta-at-start`` read against the plan's streams (``UsageError``)."""
        if not self.delta_at_start:
            return None
        from .runtime.columnar.delta import delta_start

        return delta_start(self.delta_at_start, (s.name for s in plan.streams))

    def run(
        self,
        result: CheckResult,
        source: Any,
        *,
        stdout: IO[str],
        on_batch: Callable[[BatchOutput, int], None] | None = None,
        show_rows: Callable[[BatchOutput], None] | None = None,
        note: Callable[[str], None] | None = None,
        page: Report | None = None,
        delta_at_start: Mapping[str, int | None] | None = None,
        on_progress: Callable[[RunProgress], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> RunSummary:
        """Run ``result``'s plan over ``source`` (the trace, or the Kafka replay's) and write
        what the options ask for; ``page`` gets each batch too, ``note`` the engine's notes
        (with ``verbose``); ``delta_at_start`` is ``delta_start``'s; ``on_progress`` and
        ``stop`` as ``run_to_files`` takes them (the progress line, Ctrl-C).  ``UsageError`` and
        ``RunError`` as the runtime raises them."""
        from .runtime import EngineChoice, OutputFormat, Place, run_to_files

        plan = result.plan
        assert plan is not None

        def each(batch: BatchOutput, total: int) -> None:
            if on_batch is not None:
                on_batch(batch, total)
            if page is not None:
                page.add(batch)

        return run_to_files(
            plan,
            source,
            relation=self.relation,
            output=self.output,
            progress=self.progress,
            bad_rows=self.policy,
            checkpoint=self.checkpoint,
            on_batch=each,
            stdout=stdout,
            trace_batches=self.trace_batches,
            show_rows=show_rows,
            engine=cast("EngineChoice", self.engine),
            output_format=cast("OutputFormat", self.output_format),
            notes=note if self.verbose else None,
            also_read=spec_places(self.spec, result),
            also_written=[Place("--report", self.report)] if self.report is not None else [],
            backlog=self.backlog,
            late_rows=self.late_rows,
            delta_at_start=delta_at_start,
            tables=self.table_files,
            on_progress=on_progress,
            stop=stop,
            warn=note,
        )


def spec_places(spec: Path, result: CheckResult | None = None) -> list[Place]:
    """Every file a command read, for ``files.check_places``: the spec (a project's folder
    as a tree) and, once it is loaded, each file of a pipeline (its spark-pipeline.yml,
    every SQL and Python file it includes, sjoin-schemas.sql), wherever they lie, so that
    no output is written over any of them."""
    from .runtime.io.files import Place

    places = [Place("the spec", spec, tree=spec.is_dir())]
    for _, part in getattr(result.source, "parts", ()) if result is not None else ():
        places.append(Place("the pipeline's file", Path(part.path)))
    return places
