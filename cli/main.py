"""The `sjoin` command line: check, plan, compile, fmt, run, why, capture, produce, verify,
diff, init and jars.

No logic lives here: commands parse their options, call the API (``api``, ``runs``,
``reports``, ``jvm``), print through ``printer.Printer`` and exit 0 (clean, warnings
allowed), 1 (the spec has errors) or 2 (usage error).  Any unexpected exception still ends
in a one-line message and exit 1, never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, TypeVar

import click

from .. import __version__
from ..reports.diagnostics import count, summary, to_dict
from ..runs import spec_places
from .printer import Printer

if TYPE_CHECKING:
    from ..api import CheckResult
    from ..compiler.planning.plan import Plan
    from ..runs import RunRequest
    from ..runtime.io.files import Place

F = TypeVar("F", bound=Callable[..., Any])

FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
COLOR = click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Color the text output (NO_COLOR is honoured).",
)
# a .sjoin spec, or a pipeline: a .sql file, or a project (its directory or spark-pipeline.yml),
# or a PySpark job (a .py file)
SPEC = click.argument("spec", type=click.Path(path_type=Path))
ENTRY = click.option(
    "--entry",
    metavar="NAME",
    help="A PySpark job's function to call with the session [default: build, when the job "
    "defines it; else the job runs as a script] (docs/pyspark.md).",
)


def exit_status(results: list[CheckResult]) -> int:
    """0 clean, 1 errors, 2 an input that could not be read (a PySpark job's E042)."""
    from ..api import input_error

    if any(input_error(r) for r in results):
        return 2
    return 0 if all(r.ok for r in results) else 1


TRACE = click.option(
    "--trace",
    "trace",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='Input rows, JSON Lines: {"batch": 0, "stream": ..., "row": {...}}.',
)


class TraceSource(click.ParamType):  # type: ignore[type-arg]  # generic in click >= 8.3 only
    """A trace file or folder that exists, or a Kafka URL (``kafka://HOST:PORT``, kept as
    text: the replay reads the spec's topics there)."""

    name = "trace"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.startswith("kafka://"):
            return value
        return click.Path(exists=True, path_type=Path).convert(value, param, ctx)


RUN_TRACE = click.option(
    "--trace",
    "trace",
    required=True,
    type=TraceSource(),
    help='Input rows, JSON Lines: {"batch": 0, "stream": ..., "row": {...}}; or (columnar '
    "engine) a directory of Parquet files, <stream>/batch-NNNN.parquet, one per stream per "
    "batch; or a directory of Delta tables, <stream>/, read as the job's Delta source reads "
    "them (--delta-at-start; docs/kafka.md, Delta Lake); or kafka://HOST:PORT: replay the "
    "spec's Kafka topics there, cut into micro-batches as Spark's Kafka source cuts them "
    "(docs/kafka.md).",
)
MAX_OFFSETS = click.option(
    "--max-offsets-per-trigger",
    "max_offsets",
    type=click.IntRange(min=1),
    help="Replaying Kafka: cut every source's batches as Spark's maxOffsetsPerTrigger does "
    "[default: each source's own maxOffsetsPerTrigger; without one, a source reads all it "
    "holds in one batch].",
)
STARTING_OFFSETS = click.option(
    "--starting-offsets",
    metavar="earliest|latest|JSON",
    help="Replaying Kafka: where each topic's replay starts, as Spark's startingOffsets "
    '(JSON: {"topic": {"0": 23, "1": -2}}) [default: the spec\'s startingOffsets when it '
    "names offsets or earliest, else earliest].",
)


def last_resort(fn: F) -> F:
    """Turn a stray exception into `error[E999]` and exit 1; keep click's own exits."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("sjoin: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:  # e.g. `sjoin run ... | head`: the reader has all it wants
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except MemoryError:  # a limit of the machine, not a defect: said as such
            click.echo(
                "sjoin: error: out of memory: the input needs more memory than this process "
                "may use (values or batches too large for it; docs/language.md#limits)",
                err=True,
            )
            sys.exit(1)
        except OSError as err:
            if err.filename is not None or err.errno not in _FULL:
                raise _internal(err) from None
            # a write that names no file: stdout's (`sjoin plan > /dev/full`); every file
            # sjoin opens itself names its path (runtime/io/files.py)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            click.echo(f"sjoin: error: cannot write stdout: {err.strerror}", err=True)
            sys.exit(1)
        except Exception as err:
            raise _internal(err) from None

    return wrapper  # type: ignore[return-value]


_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}  # writes only


def _internal(err: Exception) -> SystemExit:
    """Say `error[E999]` for ``err``; the exit to raise."""
    click.echo(
        f"sjoin: error[E999]: internal error: {type(err).__name__}: {err} (please report it)",
        err=True,
    )
    return SystemExit(1)


def _load_compiler() -> None:
    """Import the compiler (``api.py``: sqlglot, lark and sjoin's own modules, about 200,000
    objects, none of them garbage) the first time in this process with the cyclic garbage
    collector paused, then freeze what it loaded (``gc.freeze``): the collections its
    allocations would set off, and the one at exit, would walk those objects for nothing
    (6% of a cold `sjoin check`).  Only the first time: a process that runs many commands
    (tests) freezes no garbage of its own later."""
    if f"{__package__.rpartition('.')[0]}.api" in sys.modules:
        return
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        from .. import api  # noqa: F401 - loaded for the commands
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def load(
    path: Path, relation: str | None = None, trace: Path | None = None, entry: str | None = None
) -> CheckResult:
    """Read and check one spec (planned for the query rooted at ``relation``, when given);
    an unreadable file is a usage error (exit 2).  A .sql file, a spark-pipeline.yml or a
    directory is a Spark Declarative Pipeline, read by the SQL front end
    (``api.check_pipeline``; with ``trace``, the columns of the streams it defines in Python
    and does not declare are inferred from it).  A .py file is a PySpark job
    (``api.check_pyspark``; ``entry``: the function to call, `--entry`)."""
    _load_compiler()
    from ..api import check_pipeline, check_pyspark, check_text, read_spec
    from ..compiler.vocabulary.source import is_pipeline, is_pyspark_job

    if is_pyspark_job(path) and not path.is_dir():
        try:
            return check_pyspark(path, relation, entry=entry)
        except FileNotFoundError:
            raise click.UsageError(f"no such job file: {path}") from None
        except UnicodeDecodeError as err:
            raise click.UsageError(f"{path} is not UTF-8 text (byte {err.start})") from None
        except OSError as err:
            raise click.UsageError(f"cannot read {path}: {err.strerror}") from None
    if entry is not None:
        _entry_goes_with([path], entry)
    if is_pipeline(path):
        from ..compiler.vocabulary.source import PipelineError

        try:
            return check_pipeline(path, relation, trace=trace)
        except PipelineError as err:
            raise click.UsageError(str(err)) from None
    try:
        text = read_spec(path)
    except FileNotFoundError:
        raise click.UsageError(f"no such spec file: {path}") from None
    except IsADirectoryError:
        raise click.UsageError(f"{path} is a directory, not a spec file") from None
    except UnicodeDecodeError as err:
        raise click.UsageError(f"{path} is not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise click.UsageError(f"cannot read {path}: {err.strerror}") from None
    return check_text(text, str(path), relation)


def _is_job(path: Path) -> bool:
    """Whether ``path`` is read as a PySpark job (a .py file, not a directory)."""
    return path.suffix.lower() == ".py" and not path.is_dir()


def _entry_goes_with(paths: list[Path], entry: str | None) -> None:
    """`--entry NAME` names a function of a PySpark job: a usage error (exit 2) when none of
    ``paths`` is a job, before anything is read.  With a job among them it is that job's
    (every job's) entry; a .sjoin spec or a pipeline beside it is read as it is."""
    if entry is None or any(_is_job(p) for p in paths):
        return
    named = " and ".join(str(p) for p in paths)
    raise click.UsageError(
        f"--entry goes with a PySpark job (a .py file), and {named} "
        f"{'is not one' if len(paths) == 1 else 'are not'}"
    )


def _job_entry(path: Path, entry: str | None) -> str | None:
    """The entry ``load`` gets for ``path``: ``entry`` for a job, None for a spec."""
    return entry if _is_job(path) else None


def _stop(results: list[CheckResult]) -> NoReturn:
    """Exit for specs that cannot go on (errors, or no plan): 2 when an input could not be
    read at all (a PySpark job's E042), else 1."""
    sys.exit(exit_status(results) or 1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sjoin")
def main() -> None:
    """sjoin: declarative stream-stream joins for Spark.

    Write a .sjoin spec; `check` it, `plan` it to see what Spark will do with each join.
    """


@main.command()
@click.option(
    "--debounce-ms",
    type=click.IntRange(0, 10_000),
    default=150,
    show_default=True,
    help="Check a document this long after the user's last change.",
)
def lsp(debounce_ms: int) -> None:
    """Run the language server (LSP) over stdin and stdout, for editors (docs/editors.md).

    Needs the `lsp` extra: pip install 'sjoin[lsp]'. Exit status: 0 when the client ends it,
    2 when pygls or lsprotocol is not installed.
    """
    try:
        import lsprotocol.types  # noqa: F401
        import pygls.lsp.server  # noqa: F401
    except ImportError as e:
        click.echo(
            f"sjoin lsp: the language server needs pygls and lsprotocol ({e.name or e} is not "
            "installed); install them with: pip install 'sjoin[lsp]'",
            err=True,
        )
        sys.exit(2)
    from ..editor.server import serve

    serve(debounce_ms / 1000)


@main.command()
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
@FORMAT
@ENTRY
@COLOR
@last_resort
def check(specs: tuple[Path, ...], fmt: str, entry: str | None, color: str) -> None:
    """Check SPECS for errors and hazards (a .sjoin spec, a pipeline, or a PySpark job.py).

    Exit status: 0 no errors (warnings allowed), 1 errors, 2 usage error (or a PySpark job
    that could not be run).
    """
    _entry_goes_with(list(specs), entry)
    printer = Printer(color)
    results = [load(p, entry=_job_entry(p, entry)) for p in specs]
    if fmt == "json":
        printer.json(
            {"diagnostics": [to_dict(d, r.source) for r in results for d in r.diagnostics]}
        )
    else:
        printer.diagnostics((d, r.source) for r in results for d in r.diagnostics)
        for r in results:
            counts = summary(r.diagnostics)
            verdict = "ok" if r.ok else "failed"
            printer.note(
                f"{r.source.path}: {verdict}" + (f" ({counts})" if counts else ""),
                "green" if r.ok else "red",
            )
    sys.exit(exit_status(results))


@main.command()
@SPEC
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "mermaid"]),
    default="text",
    show_default=True,
    help="Output format (mermaid: a flowchart of the pipeline).",
)
@click.option(
    "--rates",
    metavar="STREAM=ROWS/UNIT,...",
    help="Predict each stateful operator's state at these input rates, e.g. "
    "impressions=5000/s,clicks=200/s (UNIT s, min, h or d): state rows and bytes (a join's per "
    "side, an aggregate's groups), bytes per partition, null-padded rows' and windows' latency, "
    "output rows per second, growth (docs/capacity.md).",
)
@click.option(
    "--keys",
    metavar="N|COLUMN=N,...",
    help="With --rates: the number of distinct join keys, and of an aggregate's grouping "
    "values besides its window, uniformly spread; per column, e.g. "
    "order_id=5000000,merchant_id=5000 (a plain N beside them: the columns not named) "
    "[default: every row its own key; output rows, and an aggregate of a join, are then not "
    "predicted].",
)
@click.option(
    "--trigger",
    metavar="DURATION",
    help="With --rates: the time between micro-batches, e.g. 10s or 500ms [default: the "
    "spec's trigger setting, else batches back to back].",
)
@click.option(
    "--string-bytes",
    metavar="N",
    help="With --rates: the average UTF-8 length of a string value [default: 16].",
)
@ENTRY
@COLOR
@last_resort
def plan(
    spec: Path,
    fmt: str,
    color: str,
    rates: str | None,
    keys: str | None,
    trigger: str | None,
    string_bytes: str | None,
    entry: str | None,
) -> None:
    """Show what Spark will do with each join of SPEC: keys, filters, state eviction,
    outer rows, and the pipeline checks; with --rates, how big its state will get.

    Exit status: 0 planned (warnings allowed), 1 the spec has errors, 2 usage error (or a
    PySpark job that could not be read).
    """
    from ..compiler.describe.capacity import (
        DEFAULT_STRING_BYTES,
        CapacityError,
        capacity_json,
        capacity_text,
        parse_count,
        parse_keys,
        parse_rates,
        parse_trigger,
        predict,
    )

    printer = Printer(color)
    extra = [
        n
        for n, v in (("--keys", keys), ("--trigger", trigger), ("--string-bytes", string_bytes))
        if v is not None
    ]
    if rates is None and extra:
        raise click.UsageError(f"{extra[0]} goes with --rates (the input rates to predict at)")
    if rates is not None and fmt == "mermaid":
        raise click.UsageError("--rates prints with --format text or json, not mermaid")
    try:
        parsed = None if rates is None else parse_rates(rates)
        n_keys, key_columns = (None, {}) if keys is None else parse_keys(keys)
        trigger_ms = None if trigger is None else parse_trigger(trigger)
        n_bytes = (
            DEFAULT_STRING_BYTES
            if string_bytes is None
            else parse_count("--string-bytes", string_bytes, 9)
        )
    except CapacityError as err:
        raise click.UsageError(str(err)) from None
    result = load(spec, entry=entry)
    capacity = None
    if parsed is not None and result.plan is not None and result.ok:
        try:
            capacity = predict(
                result.plan,
                parsed,
                keys=n_keys,
                trigger_ms=trigger_ms,
                string_bytes=n_bytes,
                key_columns=key_columns,
            )
        except CapacityError as err:
            raise click.UsageError(str(err)) from None
    if fmt == "json":
        if result.plan is None:
            printer.json({"diagnostics": [to_dict(d, result.source) for d in result.diagnostics]})
        else:
            data = result.plan_json()
            if capacity is not None:
                data["capacity"] = capacity_json(capacity)
            printer.json(data)
    else:
        printer.diagnostics((d, result.source) for d in result.diagnostics)
        if result.plan is not None and result.ok:
            from ..compiler.describe.diagram import mermaid
            from ..compiler.describe.explain import plan_text

            text = mermaid(result.plan) if fmt == "mermaid" else plan_text(result.plan)
            if capacity is not None:
                text += "\n\n" + "\n".join(capacity_text(capacity))
            printer.result(text)
    sys.exit(exit_status([result]))


@main.command(name="compile")
@SPEC
@click.option(
    "--target",
    type=click.Choice(["pyspark", "pipeline"]),
    default="pyspark",
    show_default=True,
    help="pyspark: one PySpark job (job.py); pipeline: a Spark Declarative Pipelines project "
    "directory for `spark-pipelines run` (Spark 4.1+, docs/pipelines.md).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write the job here instead of stdout (--target pipeline: the project's directory, "
    "required).",
)
@ENTRY
@COLOR
@last_resort
def compile_(spec: Path, target: str, output: Path | None, entry: str | None, color: str) -> None:
    """Compile SPEC to a PySpark job (build, read_inputs, main) that runs on any Spark, or
    with --target pipeline to a Spark Declarative Pipelines project.

    Exit status: 0 compiled (warnings allowed), 1 the spec has errors, 2 usage error (or a
    PySpark job that could not be read).
    """
    printer = Printer(color)
    if target == "pipeline" and output is None:
        raise click.UsageError("--target pipeline writes a project directory: give it with -o DIR")
    result = load(spec, entry=entry)
    from ..api import target_diagnostics

    extra = target_diagnostics(result, target)
    found = sorted(
        [*result.diagnostics, *extra],
        key=lambda d: (d.span.start, d.severity != "error", d.code),
    )
    printer.diagnostics((d, result.source) for d in found)
    if not result.ok or result.plan is None or any(d.severity == "error" for d in extra):
        _stop([result])
    if target == "pipeline":
        assert output is not None
        _write_pipeline(printer, result.plan, spec, output, spec_places(spec, result))
        return
    if output is not None and output.is_dir():
        raise click.UsageError(f"--output {output} is a directory: give the job's file name")
    from ..compiler.backends.pyspark import compile_pyspark, job_packages

    code = compile_pyspark(result.plan, spec.as_posix())
    needs = job_packages(result.plan)
    if needs:
        job = output.as_posix() if output is not None else "job.py"
        printer.note(
            f"the job needs Spark's connector packages: spark-submit --packages "
            f"{','.join(needs)} {job} (docs/kafka.md)",
            "yellow",
        )
        printer.note(_jars_line("spark-submit", spec, shlex.quote(job)), "yellow")
    if output is None:
        click.echo(code, nl=False)
        return
    from ..runtime import Place, RunError
    from ..runtime.io.files import check_places, write_named

    try:
        check_places(spec_places(spec, result), [Place("--output", output)])
        write_named(output, code)
    except RunError as err:
        raise click.UsageError(str(err)) from None
    printer.note(f"{output}: PySpark job for {spec}", "green")


def _write_pipeline(
    printer: Printer, plan: Plan, spec: Path, output: Path, reads: list[Place]
) -> None:
    """`sjoin compile --target pipeline -o DIR`: the project's files under DIR (made if
    missing; files of an earlier compile are replaced, nothing else in DIR is touched)."""
    from ..compiler.backends.pipeline import compile_pipeline, pipeline_notes
    from ..runtime import Place, RunError
    from ..runtime.io.files import check_places, write_tree

    try:
        check_places(reads, [Place("--output", output)])
    except RunError as err:
        raise click.UsageError(str(err)) from None
    if output.exists() and not output.is_dir():
        raise click.UsageError(f"--output {output} is a file: --target pipeline writes a directory")
    root = output.resolve()
    files = compile_pipeline(plan, spec.stem, (root / "pipeline-storage").as_uri(), spec.as_posix())
    try:  # DIR is the user's; nothing under it is written through a link (files.py)
        check_places(reads, [Place("--output", output / relative) for relative in files])
        write_tree(
            output,
            {relative: text.encode("utf-8") for relative, text in files.items()},
            "the pipeline project directory",
        )
    except RunError as err:
        raise click.UsageError(str(err)) from None
    for note in pipeline_notes(plan):
        printer.note(note, "yellow")
    from ..compiler.backends.pyspark import job_packages

    if job_packages(plan):
        printer.note(_jars_line("spark-pipelines", spec, "run", absolute=True), "yellow")
    printer.note(
        f"{output}: Spark Declarative Pipelines project for {spec} "
        f"({len(files)} files; run it from the folder the spec's relative paths are "
        f"relative to: spark-pipelines run --spec {output / 'spark-pipeline.yml'})",
        "green",
    )


@main.command(name="fmt")
@SPEC
@click.option(
    "--to",
    "to",
    type=click.Choice(["sjoin", "sql"]),
    required=True,
    help="sjoin: a .sjoin spec (of a pipeline's SQL or a PySpark job, or a spec laid out "
    "anew); sql: one Spark Declarative Pipelines SQL file (docs/pipelines.md).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write it here instead of stdout.",
)
@ENTRY
@COLOR
@last_resort
def fmt_(spec: Path, to: str, output: Path | None, entry: str | None, color: str) -> None:
    """Convert SPEC between the two syntaxes: a pipeline's SQL (a .sql file, or a project
    directory) or a PySpark job (job.py) into a .sjoin spec with --to sjoin, a .sjoin spec
    into a pipeline SQL file with --to sql. Either reads back to the same plan.

    Exit status: 0 converted, 1 SPEC has errors or holds text the other syntax cannot
    hold, 2 usage error (or a PySpark job that could not be read).
    """
    from ..compiler.vocabulary.sjointext import Unwritable

    printer = Printer(color)
    result = load(spec, entry=entry)
    printer.diagnostics((d, result.source) for d in result.diagnostics)
    if not result.ok or result.spec is None or result.plan is None:
        _stop([result])
    try:
        if to == "sjoin":
            from ..api import spec_text
            from ..compiler.backends.pytext import comment

            entered = f" --entry {entry}" if entry is not None and _is_job(spec) else ""
            made = f"converted by `sjoin fmt --to sjoin` from {spec}{entered}"
            header = "-- " + comment(made)[2:]
            text = spec_text(result, header)
        else:
            from ..compiler.backends.pipeline import pipeline_sql

            text = pipeline_sql(result.plan, spec.as_posix())
    except Unwritable as err:
        printer.note(f"sjoin fmt: error: {err}", "red")
        sys.exit(1)
    if output is None:
        click.echo(text, nl=False)
        return
    from ..runtime import Place, RunError
    from ..runtime.io.files import check_places, write_named

    try:
        check_places(spec_places(spec, result), [Place("--output", output)])
        write_named(output, text)
    except RunError as err:
        raise click.UsageError(str(err)) from None
    printer.note(f"{output}: {'.sjoin spec' if to == 'sjoin' else 'pipeline SQL'} of {spec}",
                 "green")  # fmt: skip


@main.command()
@SPEC
@TRACE
@click.option("--relation", help="Compare only this join or aggregate (default: the queries run).")
@click.option(
    "--spark",
    "spark_version",
    metavar="X.Y",
    help="Run the job on Spark X.Y, in an environment sjoin makes once and caches "
    "(a venv with pyspark==X.Y.* under ~/.cache/sjoin).",
)
@click.option(
    "--python",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Run the job with this Python interpreter, which has pyspark.",
)
@click.option(
    "--kafka",
    metavar="ADDRESS|local",
    help="Run the job's own Kafka sources through a real broker (HOST:PORT, or `local`: a "
    "broker sjoin starts for the run): each trace batch is produced into the spec's topics "
    "(topics of this run) and read by the job's read_inputs as one micro-batch. Spark gets "
    "the Kafka connector of its own version (with --spark/--python too), fetched once with "
    "Maven into ~/.cache/sjoin/jvm.",
)
@click.option("--verbose", is_flag=True, help="Show Spark's own log (quiet by default).")
@click.option(
    "--generated",
    is_flag=True,
    help="For a PySpark job: run the job sjoin generates from its plan, not the job as "
    "written (which is what --spark, --python and --kafka run).",
)
@ENTRY
@FORMAT
@COLOR
@last_resort
def verify(
    spec: Path,
    trace: Path,
    relation: str | None,
    spark_version: str | None,
    python: Path | None,
    kafka: str | None,
    verbose: bool,
    generated: bool,
    entry: str | None,
    fmt: str,
    color: str,
) -> None:
    """Run SPEC on TRACE with the reference runtime and with the generated PySpark job on
    local Spark, one trace batch per micro-batch, and compare them batch by batch: output
    rows, watermark, state metrics, and each join's state cleanup in the executed plan.

    The runtime follows the Spark version that runs (re-planning the spec for it when its
    `spark` statement names another; a note says so), so like is compared with like. That is
    the installed pyspark, or Spark X.Y with --spark X.Y, or the pyspark of --python PATH.

    With --kafka the job's own Kafka sources read the trace from a broker; the streams the
    queries read must all be `from kafka`. With --spark or --python as well, the job runs in
    the child process and this process produces each trace batch while the child holds the
    queries' progress locks, so it is still one micro-batch per trace batch.

    A PySpark job (job.py) runs as written on the installed pyspark: its own code builds each
    query, on a local session whose streaming reads are fed the trace and whose query starts
    start nothing (docs/pyspark.md). --generated runs the job sjoin generates from its plan
    instead, as --spark, --python and --kafka do.

    Exit status: 0 they agree, 1 they differ, the spec or the trace has errors, the spec does
    not plan for that Spark, or Spark (pyspark and Java 17+), Spark's Kafka connector,
    confluent-kafka or the broker is not available (the command that fetches what is
    missing is shown); 2 usage error, or the environment for --spark cannot be made here
    (the command that makes it is shown).
    """
    from ..compiler.vocabulary.source import is_pyspark_job
    from ..jvm.job_as_written import JobNotFed
    from ..jvm.verify import SparkUnavailable, verify_spec
    from ..runtime import RunError, UsageError

    if spark_version is not None and python is not None:
        raise click.UsageError("pass --spark or --python, not both")
    if spark_version is not None:
        spark_version = _spark_option(spark_version)
    if kafka is not None and kafka != "local" and not _KAFKA_ADDRESS.fullmatch(kafka):
        raise click.UsageError(f"--kafka takes HOST:PORT or `local`, not {kafka!r}")
    printer = Printer(color)
    result = load(spec, relation, trace, entry)
    printer.diagnostics((d, result.source) for d in result.diagnostics)
    if not result.ok or result.plan is None:
        _stop([result])
    if kafka is not None:
        _kafka_sources_only(printer, result.plan, relation)
    interpreter = _verify_python(printer, spark_version, python)
    job = is_pyspark_job(spec)
    as_written = job and not generated and kafka is None and interpreter is None
    if job and not as_written:
        printer.note(
            f"note: Spark runs the job sjoin generates from {spec.name}'s plan, not {spec.name} "
            "as written" + ("" if generated else " (that runs only on the installed pyspark)"),
            "yellow",
        )
    try:
        with contextlib.ExitStack() as stack:
            spark, make_runner = _verify_spark(printer, stack, kafka, verbose, interpreter)
            if as_written:
                from ..jvm.job_as_written import JobAsWritten

                make_runner = JobAsWritten.maker(None, spec, entry)
            on_progress = stack.enter_context(_verify_progress(printer))
            report = verify_spec(
                result,
                trace,
                relation=relation,
                spark=spark,
                on_progress=on_progress,
                verbose=verbose,
                make_runner=make_runner,
            )
    except UsageError as err:
        raise click.UsageError(str(err)) from None
    except RunError as err:
        printer.note(f"sjoin verify: {err}", "red")
        sys.exit(1)
    except SparkUnavailable as err:
        printer.note(f"Spark is needed for verify: {err}", "red")
        sys.exit(1)
    except JobNotFed as err:
        printer.note(
            f"sjoin verify: {spec.name} cannot run as written on the trace: {err}; "
            "--generated runs the job sjoin generates from its plan",
            "red",
        )
        sys.exit(1)
    if fmt == "json":
        printer.json(report.to_dict())
    else:
        printer.result(report.text())
        printer.note(report.summary(), "green" if report.agree else "red")
    sys.exit(0 if report.agree else 1)


_KAFKA_ADDRESS = re.compile(r"[A-Za-z0-9.\-\[\]:]+:[0-9]{1,5}")


def _kafka_sources_only(printer: Printer, plan: Any, relation: str | None) -> None:
    """verify --kafka's checks before anything starts: every stream the queries read is read
    `from kafka` (else exit 2), and confluent-kafka, which produces the trace, is here (else
    exit 1 with the command that installs it)."""
    from ..jvm.kafka_driver import not_from_kafka
    from ..runtime import UsageError
    from ..runtime.query import query_roots

    try:
        roots = query_roots(plan, relation)
    except UsageError as err:
        raise click.UsageError(str(err)) from None
    other = not_from_kafka(plan, roots)
    if other:
        raise click.UsageError(
            "--kafka feeds the job's own Kafka sources, and these streams are not read "
            f"`from kafka`: {', '.join(other)}; verify them without --kafka, or one query "
            "with --relation"
        )
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        printer.note(
            "sjoin verify: --kafka produces the trace with confluent-kafka, which is not "
            f"installed; install it with:\n  {shlex.quote(sys.executable)} -m pip install "
            "'sjoin[kafka]'",
            "red",
        )
        sys.exit(1)


def _verify_spark(
    printer: Printer,
    stack: contextlib.ExitStack,
    kafka: str | None,
    verbose: bool,
    interpreter: str | None,
) -> tuple[Any, Any]:
    """The Spark that runs the job (None: this process's, made by ``verify_spec``) and what
    runs each query (None: the trace fed as memory sources), ``--kafka``'s, or a child
    process's under ``interpreter``."""
    if kafka is not None:
        return _verify_kafka(printer, stack, kafka, verbose, interpreter)
    if interpreter is None:
        return None, None
    from ..jvm.spark_env import RemoteSpark

    return stack.enter_context(RemoteSpark(interpreter, verbose=verbose)), None


def _verify_kafka(
    printer: Printer,
    stack: contextlib.ExitStack,
    address: str,
    verbose: bool,
    interpreter: str | None,
) -> tuple[Any, Any]:
    """The Spark that runs the job, with Spark's Kafka connector for its version, and what
    runs each query through the broker at ``address`` (``local``: one started here until the
    run ends). That Spark is this process's, or, with ``interpreter`` (--spark X.Y,
    --python), the child process's under it: this process then produces each trace batch
    while the child holds the queries' progress locks. Exit 1 with the command that fetches
    the connector (or the broker's jars) when it cannot be had."""
    from ..jvm.jars import JarsUnavailable, connector_jars
    from ..jvm.kafka_broker import BrokerError, KafkaBroker
    from ..jvm.kafka_driver import KafkaRunner
    from ..jvm.spark_driver import check_java, get_spark

    if interpreter is None:
        try:
            import pyspark
        except ImportError:
            printer.note("Spark is needed for verify: pyspark is not installed", "red")
            sys.exit(1)
        version: str | None = pyspark.__version__
        spark_jars: Path | None = Path(pyspark.__file__).parent / "jars"
        where = "this Python"
    else:
        from ..jvm.spark_env import pyspark_jars_dir, pyspark_version

        version = pyspark_version(interpreter)
        spark_jars = pyspark_jars_dir(interpreter)
        where = interpreter
    if version is None:
        printer.note(f"Spark is needed for verify: {where} cannot import pyspark", "red")
        sys.exit(1)
    check_java()  # Maven and the broker need Java too: say so before either runs
    try:
        jars = connector_jars(version, ["kafka"], spark_jars, say=printer.note)
        if jars.note:
            printer.note(f"note: {jars.note}", "yellow")
        if address == "local":
            broker = stack.enter_context(KafkaBroker())
            address = broker.bootstrap
            printer.note(f"a Kafka broker on {address} for this run")
    except JarsUnavailable as err:
        printer.note(f"sjoin verify: {err}; fetch them with:\n  {err.command}", "red")
        sys.exit(1)
    except BrokerError as err:
        printer.note(f"sjoin verify: {err}", "red")
        sys.exit(1)
    paths = [str(p) for p in jars.paths]
    spark: Any
    if interpreter is None:
        spark = get_spark("sjoin-verify", quiet=not verbose, jars=paths)
    else:
        from ..jvm.spark_env import RemoteSpark

        spark = stack.enter_context(RemoteSpark(interpreter, verbose=verbose, jars=paths))
    runner = KafkaRunner(spark, address, with_sinks=False)
    return spark, runner.for_plan


def _spark_option(text: str) -> str:
    """verify's ``--spark X.Y``: MAJOR.MINOR in ASCII digits, else a usage error (exit 2)."""
    from ..compiler.vocabulary.model import SparkVersion
    from ..reports.diagnostics import shown_value

    version = SparkVersion.parse(text)
    if version is None or version.patch is not None:
        raise click.UsageError(
            f"--spark takes MAJOR.MINOR in the digits 0-9, e.g. 3.5, not {shown_value(text)}"
        )
    return str(version)


def _verify_python(printer: Printer, version: str | None, python: Path | None) -> str | None:
    """The interpreter that runs the job (None: this one, in process): --python's, or the
    cached environment of --spark X.Y (made when missing; exit 2 with the command that makes
    it when that fails)."""
    from ..jvm.spark_env import EnvError, ensure_env, pyspark_version

    if python is not None:
        if pyspark_version(python) is None:
            raise click.UsageError(f"{python} cannot import pyspark")
        return str(python)
    if version is None:
        return None
    here = None
    try:
        from ..jvm.verify import installed_spark_version

        here = installed_spark_version()
    except Exception:
        pass
    if here is not None and here.startswith(f"{version}."):
        return None  # the installed pyspark is that version: run it in process
    from ..jvm.spark_driver import SparkUnavailable, check_java
    from ..jvm.spark_env import env_command, env_dir

    try:
        check_java()
        return str(ensure_env(version, printer.note))
    except (EnvError, SparkUnavailable) as err:
        printer.note(f"sjoin verify: Spark {version} cannot run here: {err}", "red")
        made = pyspark_version(env_dir(version) / "bin" / "python") or ""
        if not made.startswith(f"{version}."):
            printer.note(f"make its environment with:\n  {env_command(version)}")
        sys.exit(2)


@contextmanager
def _verify_progress(printer: Printer) -> Iterator[Callable[[Any], None]]:
    """verify's progress on stderr: on a terminal a bar per query over its trace batches;
    elsewhere one line as each query starts."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):

        def line(p: Any) -> None:
            if p.batch == 0:
                printer.note(
                    f"verifying query `{p.query}` ({p.index} of {p.queries}): "
                    f"{p.batches} trace batches"
                )

        yield line
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress

    with Progress(console=Console(file=sys.stderr), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def advance(p: Any) -> None:
            if p.query not in tasks:
                tasks[p.query] = bar.add_task(  # a description is rich markup: `[/]` is a name
                    f"query `{escape(p.query)}` ({p.index} of {p.queries})", total=p.batches
                )
            bar.update(tasks[p.query], completed=p.batch)

        yield advance


@main.command()
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", required=False, type=click.Path(path_type=Path))
@click.option("--spark", "from_spark", metavar="A", help="With one SPEC: the Spark it runs on now.")
@click.option("--to", "to_spark", metavar="B", help="With one SPEC: the Spark to upgrade to.")
@click.option(
    "--trace",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Also run both on the reference runtime over this trace and show the first "
    "batches whose output differs.",
)
@click.option(
    "--entry",
    "entries",
    metavar="NAME",
    multiple=True,
    help="The function to call with the session in each PySpark job of OLD and NEW; given "
    "twice, OLD's then NEW's (two functions of one job compared) [default: build, when the "
    "job defines it; else the job runs as a script] (docs/pyspark.md).",
)
@FORMAT
@COLOR
@last_resort
def diff(
    old: Path,
    new: Path | None,
    from_spark: str | None,
    to_spark: str | None,
    trace: Path | None,
    entries: tuple[str, ...],
    fmt: str,
    color: str,
) -> None:
    """Compare two specs, or one spec on two Spark versions.

    `sjoin diff OLD NEW`: can a query running OLD restart from its checkpoint with NEW?
    For each stateful operator: resumes, fails at restart (with Spark's error), or resumes
    but behaves differently, with the reasons.

    `sjoin diff SPEC --spark A --to B`: every behaviour of SPEC that differs between Spark
    A and Spark B, with the reason and the Spark issue.

    Exit status: 0 it resumes unchanged (no behaviour differs), 1 something differs or
    fails, or a spec has errors; 2 usage error (or a PySpark job that could not be read).
    """
    from ..reports.diffing import DiffUsageError, diff_change, diff_upgrade, parse_version
    from ..runtime import UsageError

    upgrade = from_spark is not None or to_spark is not None
    if new is not None and upgrade:
        raise click.UsageError("give OLD NEW, or one SPEC with --spark A --to B, not both")
    if new is None and (from_spark is None or to_spark is None):
        raise click.UsageError("give OLD NEW, or one SPEC with --spark A --to B")
    versions: list[str] = []
    try:
        if from_spark is not None and to_spark is not None:
            versions = [parse_version(from_spark, "--spark"), parse_version(to_spark, "--to")]
    except DiffUsageError as err:
        raise click.UsageError(str(err)) from None
    paths = [p for p in (old, new) if p is not None]
    per_path = _diff_entries(paths, entries)
    printer = Printer(color)
    results = [load(p, entry=e) for p, e in zip(paths, per_path, strict=True)]
    printer.diagnostics((d, r.source) for r in results for d in r.diagnostics)
    if not all(r.ok and r.plan is not None for r in results):
        if fmt == "json":
            printer.json(
                {"diagnostics": [to_dict(d, r.source) for r in results for d in r.diagnostics]}
            )
        _stop(results)
    report: Any
    try:
        if new is None:
            report = diff_upgrade(results[0], versions[0], versions[1], trace)
            same = not report.diff.count
        else:
            report = diff_change(results[0], results[1], trace)
            same = report.diff.verdict == "resumes"
    except (DiffUsageError, UsageError) as err:
        raise click.UsageError(str(err)) from None
    if report.trace is not None and not report.trace.same:
        same = False
    if fmt == "json":
        printer.json(report.to_dict())
    else:
        printer.result(report.text())
    sys.exit(0 if same else 1)


def _diff_entries(paths: list[Path], entries: tuple[str, ...]) -> list[str | None]:
    """diff's ``--entry`` for each of OLD and NEW: one NAME is every job's among them; two
    are OLD's, then NEW's (each of them a job).  Usage errors before anything is read."""
    if not entries:
        return [None] * len(paths)
    if len(entries) == 1:
        _entry_goes_with(paths, entries[0])
        return [_job_entry(p, entries[0]) for p in paths]
    if len(entries) != len(paths):
        raise click.UsageError(
            f"--entry is given {len(entries)} times: give it once (every job's), or twice "
            "with OLD NEW (OLD's, then NEW's)"
        )
    for path, entry in zip(paths, entries, strict=True):
        _entry_goes_with([path], entry)
    return list(entries)


@main.command()
@SPEC
@RUN_TRACE
@click.option("--relation", help="Output only this join or aggregate (default: all).")
@click.option(
    "--output",
    type=click.Path(path_type=Path),
    help="Write output rows here (default: stdout): a file, or a directory with "
    "--output-format parquet or delta.",
)
@click.option(
    "--progress",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write one progress line per executed batch here.",
)
@click.option(
    "--bad-rows",
    default="stop",
    show_default=True,
    help="What to do with a bad trace row: stop, skip, or a FILE to write them to.",
)
@click.option(
    "--late-rows",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write every row an operator dropped as late here, a JSON line each: its batch, "
    "operator and input, stream and trace line, event time and the watermark that dropped "
    "it (docs/late-rows.md). Per batch they are numRowsDroppedByWatermark. With --checkpoint "
    "a resumed run continues the file as one run would have written it; a file the "
    "checkpoint's run did not write is refused.",
)
@click.option(
    "--checkpoint",
    type=click.Path(file_okay=False, path_type=Path),
    help="Persist state after each batch; a restart resumes after the last one.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write an HTML page of the run here: watermark, state rows and output rows "
    "per batch, plotted (needs sjoin[report]).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "table"]),
    default=None,
    help="How stdout shows the rows: JSON lines, or aligned tables batch by batch "
    "[default: table on a terminal, else json; --output files are always JSON lines].",
)
@click.option(
    "--output-format",
    type=click.Choice(["jsonl", "parquet", "delta"]),
    default="jsonl",
    show_default=True,
    help="jsonl: --output is a file of JSON lines; parquet: --output is a directory that gets "
    "<relation>/batch-NNNN.parquet per batch (the layout of a Parquet trace); delta: "
    "--output is a directory that gets a Delta table per relation, <relation>/, a commit per "
    "batch (needs sjoin[delta]).",
)
@click.option(
    "--trace-batches",
    is_flag=True,
    help='Add "trace_batch" (the trace batch whose step ran the batch) to every output and '
    "progress line, beside Spark's batch id.",
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "columnar", "reference"]),
    default="auto",
    show_default=True,
    help="columnar: a batch at a time on polars; reference: the row-at-a-time runtime; "
    "auto: columnar for a Parquet or Delta trace, or a trace file whose batches are large "
    "enough on average to pay for polars' start-up and cost per batch (about 1,000 rows per "
    "batch and operator run columnar, twice that when the file cannot be read in bulk; "
    "--verbose states the figures), reference otherwise. Both give the same output.",
)
@MAX_OFFSETS
@STARTING_OFFSETS
@click.option(
    "--delta-at-start",
    "delta_at_start",
    metavar="VERSION|STREAM=VERSION",
    multiple=True,
    help="A Delta trace: the job started when the tables were at this version (a number or "
    "latest; STREAM=VERSION for one table): its first micro-batch reads them as they were "
    "then, and each later version arrives as a micro-batch of its own; 0 replays every "
    "commit one at a time [default: latest, the job starts on the tables as they are].",
)
@click.option(
    "--table",
    "tables",
    metavar="NAME=PATH",
    multiple=True,
    help="A static table's rows from a file of JSON lines, one object of its columns a line "
    "(repeat for each table): the table holds them from the first batch on, until the trace "
    "gives it rows (a Delta table's next version).",
)
@click.option(
    "--backlog/--no-backlog",
    default=None,
    help="Run the trace's batches back to back, as Spark runs batches that were all waiting "
    "when it started: no no-data batches between them [default: on for --trace kafka://, "
    "off for a file, whose batches each arrive after the one before has run].",
)
@click.option(
    "--verbose",
    is_flag=True,
    help="Say which engine runs and why, and which operators the columnar engine leaves "
    "to the reference operator; replaying Kafka, the offsets of each batch.",
)
@ENTRY
@COLOR
@last_resort
def run(color: str, **options: Any) -> None:
    """Run SPEC on TRACE with the runtime: Spark's micro-batch semantics, batch by batch
    (no-data batches included), without Spark.

    Batch ids are Spark's: the no-data batches Spark runs after a watermark advance are
    numbered too, so trace batch 1 may come out as batch 2 (--trace-batches shows both).

    With --trace kafka://HOST:PORT the spec's Kafka topics there are the trace: read from
    the starting offsets to what they hold now, cut into micro-batches as Spark's Kafka
    source cuts a backlog, each record's value read as the job's from_json reads it.

    On a terminal a progress line shows the trace batches done and to go, rows per second,
    the watermark, the rows in state and the time left. Ctrl-C stops after the current
    batch, every file consistent (with --checkpoint, run the same command again to resume);
    a second Ctrl-C aborts at once.

    Exit status: 0 ran, 1 the spec or the trace has errors, 2 usage error (or a PySpark job
    that could not be read), 130 stopped by Ctrl-C.
    """
    from ..reports.run_page import ReportError
    from ..runs import RunRequest
    from ..runtime import RunError, UsageError

    request = RunRequest(**options)
    refused = request.refused()
    if refused is not None:
        raise click.UsageError(refused)
    stdout = sys.stdout
    show_rows = _table_rows(request, color, stdout)
    printer = Printer(color)
    result, page, at_start = _run_ready(printer, request)
    source: Any = request.trace
    if request.url is not None:
        source = _replay(
            printer,
            "run",
            result.plan,
            request.url,
            request.relation,
            request.max_offsets,
            request.starting_offsets,
            request.policy,
            request.verbose,
        ).trace
    from .progress import Interrupt

    # the line is cleared (the context left) before an error is printed
    try:
        with Interrupt() as interrupt, _progress_line(request, color, stdout, interrupt) as line:
            summary = request.run(
                result,
                source,
                stdout=stdout,
                show_rows=show_rows,
                note=lambda text: (line.note if line is not None else printer.note)(
                    f"sjoin run: {text}"
                ),
                page=page,
                delta_at_start=at_start,
                on_progress=line.update if line is not None else None,
                stop=interrupt,
            )
    except UsageError as err:
        raise click.UsageError(str(err)) from None
    except RunError as err:
        printer.note(f"sjoin run: {err}", "red")
        sys.exit(1)
    printer.note(_run_summary(summary, request.late_rows))
    if request.report is not None and page is not None:
        from ..reports.run_page import write

        try:
            write(request.report, page.html())
        except ReportError as err:
            raise click.UsageError(str(err)) from None
        printer.note(f"report: {request.report}")
    if summary.stopped:
        printer.note(_stopped(summary, request.checkpoint), "red")
        sys.exit(130)


@contextmanager
def _progress_line(
    request: RunRequest, color: str, stdout: TextIO, interrupt: Any
) -> Iterator[Any]:
    """The progress line (``cli/progress.py``) when stderr is a terminal and the rows do not
    go to one (tables and JSON lines on a terminal show the run's pace themselves, and a
    line redrawn beside them would break theirs); else None: no line at all."""
    if not sys.stderr.isatty() or (request.output is None and stdout.isatty()):
        yield None
        return
    from rich.console import Console

    from .progress import ProgressLine

    colored = not os.environ.get("NO_COLOR") and color != "never"
    console = Console(file=sys.stderr, force_terminal=True, no_color=not colored, highlight=False)
    with ProgressLine(console, interrupt) as line:
        yield line


def _stopped(summary: Any, checkpoint: Path | None) -> str:
    """What `sjoin run` says when Ctrl-C stopped it: how far it got and how to resume."""
    if summary.last_batch is None:
        where = "before its first batch; nothing was run"
    else:
        where = (
            f"after batch {summary.last_batch} (trace batch {summary.trace_done:,} of "
            f"{summary.trace_total:,}); every output holds the batches up to it"
        )
    if checkpoint is not None and summary.last_batch is None:
        then = "run the same command again to run it"
    elif checkpoint is not None:
        then = (
            f"the checkpoint in {checkpoint} holds it: run the same command again to resume "
            "at the next batch"
        )
    else:
        then = (
            "a run without --checkpoint cannot resume: run with --checkpoint DIR to stop and "
            "resume a long replay"
        )
    return f"sjoin run: interrupted: stopped {where}; {then}"


def _table_rows(request: RunRequest, color: str, stdout: TextIO) -> Callable[[Any], None] | None:
    """``--format table`` (the default on a terminal with no --output): what shows each
    batch's rows as tables; None: the rows are written as JSON lines."""
    if request.fmt is None and (request.output is not None or not stdout.isatty()):
        return None
    if request.fmt == "json":
        return None
    from .table import TableWriter

    colored = {"always": True, "never": False}.get(
        color, stdout.isatty() and not os.environ.get("NO_COLOR")
    )
    return TableWriter(stdout, colored).show


def _run_ready(printer: Printer, request: RunRequest) -> tuple[CheckResult, Any, Any]:
    """`sjoin run` up to its first batch: every path the user named checked before anything
    is written, the spec read and checked (its diagnostics printed; exit 1 on errors), then
    the paths again with a pipeline's every file, the report's page (its file made) and a
    Delta trace's start. Returns the checked spec, the page (or None) and the start."""
    from ..reports.run_page import ReportError, ReportUnavailable
    from ..runtime import UsageError

    try:
        request.check_places()
        result = load(request.spec, request.relation, request.trace_file, request.entry)
        printer.diagnostics((d, result.source) for d in result.diagnostics)
        if not result.ok or result.plan is None:
            _stop([result])
        request.check_places(result)
        return result, request.report_page(result), request.delta_start(result.plan)
    except UsageError as err:
        raise click.UsageError(str(err)) from None
    except ReportUnavailable as err:
        printer.note(f"sjoin run: {err}", "red")
        sys.exit(2)
    except ReportError as err:
        raise click.UsageError(str(err)) from None


def _run_summary(summary: Any, late_rows: Path | None) -> str:
    """The line `sjoin run` ends with: batches, output rows, bad rows skipped, late rows."""
    late = ""
    if summary.late_rows:
        where = f"in {late_rows}" if late_rows is not None else "--late-rows FILE lists them"
        late = f", {count(summary.late_rows, 'late row')} dropped by the watermark ({where})"
    return (
        f"{count(summary.batches, 'batch')}, {count(summary.rows, 'output row')}"
        + (f", {count(summary.bad_rows, 'bad row')} skipped" if summary.bad_rows else "")
        + late
    )


@main.command()
@SPEC
@TRACE
@click.argument("row")
@click.option(
    "--with",
    "other",
    metavar="ROW2",
    help="Say why ROW and ROW2 did or did not join (the first reason that applies).",
)
@click.option("--relation", help="Run only the query of this join or aggregate.")
@ENTRY
@FORMAT
@COLOR
@last_resort
def why(
    spec: Path,
    trace: Path,
    row: str,
    other: str | None,
    relation: str | None,
    entry: str | None,
    fmt: str,
    color: str,
) -> None:
    """The life of one trace ROW, batch by batch: the batch it arrived in and the watermark
    then; dropped as late (by which watermark) or by a filter (the conjunct, below or above
    the watermark node); stored in state and until when (evicted in which batch, by which
    rule and threshold); every match, naming the other row's line and batch; when a
    preserved outer row came out null-padded, and why then; a dedup's verdict (passed, or a
    duplicate of which earlier row, by its key); the union input it came through; the table
    rows a stream-static join matched; and, downstream, the same for the output rows it is
    part of.

    ROW is FILE:LINE (a line of the trace), LINE, or a stream and a condition that exactly
    one row meets, e.g. "clicks: ad_id = 7 AND user_id = 'u1'" (column = value, joined by
    AND; IS NULL and IS NOT NULL too). With --with ROW2: why the two rows did or did not
    join, the first reason that applies (a key differs; the time range is false; the other
    row was evicted before this one arrived; it arrived late; a filter failed). The trace
    runs on the reference engine, observed (docs/why.md).

    Exit status: 0 told, 1 the spec or the trace has errors, 2 usage error (a ROW that
    names no row, or several).
    """
    from ..reports.why import Teller
    from ..runtime import RunError, UsageError
    from ..runtime.engine.values import dumps
    from ..runtime.observe.lineage import trace_run
    from . import why_row as explain

    printer = Printer(color)
    result = load(spec, relation, entry=entry)
    printer.diagnostics((d, result.source) for d in result.diagnostics)
    if not result.ok or result.plan is None:
        _stop([result])
    try:
        log, read = trace_run(result.plan, trace, relation)
    except UsageError as err:
        raise click.UsageError(str(err)) from None
    except RunError as err:
        printer.note(f"sjoin why: {err}", "red")
        sys.exit(1)
    try:
        line = explain.locate(row, trace, result.plan, log, read, "ROW")
        other_line = (
            None if other is None else explain.locate(other, trace, result.plan, log, read, "ROW2")
        )
    except explain.WhyError as err:  # (a control character of the argument as its escape)
        message = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(err))
        raise click.UsageError(message) from None
    teller = Teller(result.plan, log)
    found = teller.life(line) if other_line is None else teller.pair(line, other_line)
    if fmt == "json":  # (exact decimals, and NaN as Spark's JSON writes it: values.dumps)
        printer.result(dumps(found))
    else:
        printer.result(explain.text(found))


def _replay(
    printer: Printer,
    command: str,
    plan: Any,
    url: str,
    relation: str | None,
    max_offsets: int | None,
    starting: str | None,
    policy: Any,
    verbose: bool,
) -> Any:
    """Read the spec's Kafka topics at ``url`` (``runtime.kafka_trace``), with the notes on
    stderr: a bad URL, option, broker or topic is a usage error (exit 2), bad records under
    ``--bad-rows stop`` exit 1."""
    from ..runtime import RunError, UsageError
    from ..runtime.io.kafka_trace import read_kafka

    try:
        replay = read_kafka(
            plan,
            url,
            relation=relation,
            max_offsets=max_offsets,
            starting=starting,
            bad_rows=policy,
        )
    except UsageError as err:
        raise click.UsageError(str(err)) from None
    except RunError as err:
        printer.note(f"sjoin {command}: {err}", "red")
        sys.exit(1)
    for note in replay.notes:
        printer.note(f"sjoin {command}: {note}")
    if verbose:
        for source in replay.sources.values():
            printer.note(f"sjoin {command}: reading {source.describe()}")
        for line in replay.describe_batches():
            printer.note(f"sjoin {command}: {line}")
    return replay


@main.command()
@SPEC
@click.option(
    "--from",
    "url",
    required=True,
    metavar="kafka://HOST:PORT",
    help="The brokers holding the spec's topics (kafka:// alone: the spec's bootstrap_servers).",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The trace file to write (JSON lines).",
)
@click.option("--relation", help="Read only the streams of this join or aggregate's query.")
@MAX_OFFSETS
@STARTING_OFFSETS
@click.option(
    "--bad-rows",
    default="stop",
    show_default=True,
    help="What to do with a record Spark's job reads with a fault: stop, skip, or a FILE to "
    "write them to.",
)
@click.option("--verbose", is_flag=True, help="Show each source and each batch's offsets.")
@ENTRY
@COLOR
@last_resort
def capture(
    spec: Path,
    url: str,
    output: Path,
    relation: str | None,
    max_offsets: int | None,
    starting_offsets: str | None,
    bad_rows: str,
    verbose: bool,
    entry: str | None,
    color: str,
) -> None:
    """Write SPEC's Kafka topics at kafka://HOST:PORT to a trace file that `sjoin run` reads:
    the records from the starting offsets to what the topics hold now, cut into
    micro-batches as Spark's Kafka source cuts a backlog (maxOffsetsPerTrigger), each value
    read as the generated job's from_json reads it. `sjoin run SPEC --trace FILE --backlog`
    then runs exactly what `sjoin run SPEC --trace kafka://...` runs.

    Exit status: 0 written, 1 the spec has errors or a record is bad (--bad-rows stop),
    2 usage error (a URL, option, broker or topic that cannot be used).
    """
    from ..runtime import Place, RunError
    from ..runtime.io.files import check_places
    from ..runtime.io.kafka_trace import is_kafka_url, write_trace

    if not is_kafka_url(url):
        raise click.UsageError(f"--from takes kafka://HOST:PORT, not {url!r}")
    printer = Printer(color)
    result = load(spec, relation, entry=entry)
    printer.diagnostics((d, result.source) for d in result.diagnostics)
    if not result.ok or result.plan is None:
        _stop([result])
    policy = bad_rows if bad_rows in ("stop", "skip") else Path(bad_rows)
    try:
        check_places(
            spec_places(spec, result),
            [
                Place("--output", output),
                *([Place("--bad-rows", policy)] if isinstance(policy, Path) else []),
            ],
        )
    except RunError as err:
        raise click.UsageError(str(err)) from None
    replay = _replay(
        printer,
        "capture",
        result.plan,
        url,
        relation,
        max_offsets,
        starting_offsets,
        policy,
        verbose,
    )
    trace = replay.trace
    for bad in trace.bad_rows:
        printer.note(f"{bad.located(trace.source)} (skipped)")
    try:  # the batches read from the brokers one at a time, as they are written
        lines = write_trace(result.plan, trace, output)
    except RunError as err:
        raise click.UsageError(str(err)) from None
    finally:
        close = getattr(trace.batches, "close", None)
        if close is not None:
            close()
    skipped = f", {count(len(trace.bad_rows), 'bad row')} skipped" if trace.bad_rows else ""
    printer.note(
        f"{output}: {count(lines, 'row')} in {count(len(trace.batches), 'batch')} from "
        f"{trace.source}{skipped}; "
        f"run it as the replay runs it: sjoin run {spec} --trace {output} --backlog",
        "green",
    )


@main.command()
@SPEC
@TRACE
@click.option(
    "--to",
    "url",
    required=True,
    metavar="kafka://HOST:PORT",
    help="The brokers to write the spec's topics on (kafka:// alone: the spec's "
    "bootstrap_servers).",
)
@click.option(
    "--partitions",
    type=click.IntRange(1, 1000),
    default=2,
    show_default=True,
    help="The partitions of a topic made now (an existing topic keeps its own).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 300),
    default=10.0,
    show_default=True,
    help="Seconds to wait for the brokers to answer before giving up.",
)
@ENTRY
@COLOR
@last_resort
def produce(
    spec: Path,
    trace: Path,
    url: str,
    partitions: int,
    timeout: float,
    entry: str | None,
    color: str,
) -> None:
    """Write the rows of trace T into the topics of SPEC's Kafka sources at
    kafka://HOST:PORT, as `sjoin verify --kafka` writes them: each trace batch in order, a
    stream's row i into partition i mod n of its topic, keyed by i (or by its key_column),
    stamped with its timestamp_column's time (else the producer's clock), the value the JSON
    the job's from_json reads. Then run your compiled job against the broker, or `sjoin run
    SPEC --trace kafka://HOST:PORT`. Topics that do not exist are made (--partitions, no
    time retention). Rows of streams not read from kafka are not produced, and said.

    Exit status: 0 produced, 1 the spec or the trace has errors, a row no record can carry
    (nothing produced) or a record the broker refused, 2 usage error (a URL, broker, topic
    or source that cannot be used: nothing produced).
    """
    from ..runtime import RunError, UsageError
    from ..runtime.io.kafka_trace import is_kafka_url

    if not is_kafka_url(url):
        raise click.UsageError(f"--to takes kafka://HOST:PORT, not {url!r}")
    printer = Printer(color)
    result = load(spec, entry=entry)
    printer.diagnostics((d, result.source) for d in result.diagnostics)
    if not result.ok or result.plan is None:
        _stop([result])
    from ..jvm.produce import produce_trace, summary, targets
    from ..runtime.io.trace import read_trace, schemas_of

    try:
        targets(result.plan, url)  # the URL and the sources first: before reading the trace
        if not trace.is_file():  # (a device such as /dev/zero has no end, a FIFO waits)
            raise UsageError(f"trace {trace} is not a regular file: give a JSON-lines trace")
        read = read_trace(trace, schemas_of(result.plan))
        produced = produce_trace(result.plan, read, url, partitions=partitions, timeout_s=timeout)
    except UsageError as err:
        raise click.UsageError(str(err)) from None
    except RunError as err:
        printer.note(f"sjoin produce: {err}", "red")
        sys.exit(1)
    for line in summary(produced):
        printer.note(f"sjoin produce: {line}")
    printer.note(
        f"sjoin produce: {sum(r for *_, r in produced.streams.values())} rows produced; read "
        f"them back with: sjoin run {shlex.quote(spec.as_posix())} --trace {shlex.quote(url)}",
        "green",
    )


@main.command()
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where to write the files.",
)
@COLOR
@last_resort
def init(name: str, directory: Path, color: str) -> None:
    """Scaffold NAME.sjoin, NAME.trace.jsonl and test_NAME.py for a new join.

    Then: `sjoin plan NAME.sjoin`, `pytest test_NAME.py --snapshot-update`,
    `pytest test_NAME.py` (only the scaffold's tests, wherever you are).
    Exit status: 0 written, 2 a file exists already or NAME is not a valid name.
    """
    from .scaffold import ScaffoldError, scaffold

    try:
        files = scaffold(name, directory)
    except ScaffoldError as err:
        raise click.UsageError(str(err)) from None
    except OSError as err:
        raise click.UsageError(f"cannot write into {directory}: {err.strerror}") from None
    printer = Printer(color)
    for path in files:
        printer.note(f"wrote {path}", "green")
    printer.note(
        f"wrote {directory / (name + '_input')}/ (the trace's rows as the job's JSON input)",
        "green",
    )
    import shlex

    sjoin, pytest = _tool("sjoin"), _tool("pytest")
    test = shlex.quote(str(files[2]))
    printer.note(
        f"next: {sjoin} plan {shlex.quote(str(files[0]))}; "
        f"{pytest} {test} --snapshot-update; {pytest} {test}"
    )


def _jars_line(command: str, spec: Path, rest: str, absolute: bool = False) -> str:
    """The connector line that works on this machine, beside the cluster's ``--packages``
    one: that names the spec's Spark version's connector, which the registry may not serve
    (``sjoin jars`` falls back to the newest release it serves, and fetches it once).
    ``absolute``: the paths as run from another folder (a pipeline project's)."""
    tool = _tool("sjoin")
    if absolute:
        beside = Path(sys.executable).with_name("sjoin")
        tool = shlex.quote(str(beside.resolve())) if "/" in tool else tool
        spec = spec.resolve()
    jars = f"{tool} jars {shlex.quote(spec.as_posix())}"
    return f'with this machine\'s pyspark: {command} --jars "$({jars})" {rest} (sjoin jars)'


def _tool(name: str) -> str:
    """How to call the command ``name`` of this installation: its path beside the running
    Python (relative to here when under it) unless the shell finds that same file by name."""
    import shlex
    import shutil

    beside = Path(sys.executable).with_name(name)
    if not beside.exists():
        return name
    found = shutil.which(name)
    if found is not None and Path(found).resolve() == beside.resolve():
        return name
    try:
        shown = beside.relative_to(Path.cwd())
    except ValueError:
        shown = beside
    return shlex.quote(str(shown))


@main.command()
@SPEC
@ENTRY
@COLOR
@last_resort
def jars(spec: Path, entry: str | None, color: str) -> None:
    """Print the connector jars a job of SPEC needs on this machine's Spark, for
    `spark-submit --jars "$(sjoin jars SPEC)" job.py`.

    Spark's Kafka connector and Delta Lake are Maven packages that pyspark does not ship:
    they are fetched once with Maven into sjoin's cache (~/.cache/sjoin/jvm) for the
    version of the pyspark sjoin runs with. Prints nothing when the job needs none.
    Exit status: 0 printed, 1 the spec has errors or the jars cannot be had (the command
    that fetches them is printed), 2 usage error (or a PySpark job that could not be read).
    """
    printer = Printer(color)
    result = load(spec, entry=entry)
    printer.diagnostics((d, result.source) for d in result.diagnostics if d.severity == "error")
    if not result.ok or result.plan is None:
        _stop([result])
    from ..compiler.backends.pyspark import job_formats

    formats = job_formats(result.plan) & {"kafka", "delta"}
    if not formats:
        printer.note(f"{spec}: the job needs no connector beyond pyspark")
        return
    try:
        import pyspark
    except ImportError:
        printer.note("sjoin: pyspark is not installed here; install it to run jobs", "red")
        sys.exit(1)
    from ..jvm.jars import JarsUnavailable, connector_jars

    try:
        found = connector_jars(
            pyspark.__version__,
            sorted(formats),
            Path(pyspark.__file__).parent / "jars",
            say=lambda text: printer.note(text),
        )
    except JarsUnavailable as err:
        printer.note(f"sjoin: {err}; fetch them with:\n  {err.command}", "red")
        sys.exit(1)
    if found.note:
        printer.note(f"note: {found.note}", "yellow")
    click.echo(found.spark_jars())


if __name__ == "__main__":
    main()
