"""The public entry points: check and plan a spec from text or a file.

Checking runs every stage that judges meaning (parse, bind, plan): Spark's analysis rules
live in the planner, so `sjoin check` reports them too.  These functions never raise on user
input: every problem is a diagnostic in the result.  An unexpected exception inside a stage
becomes one E999 diagnostic (an sjoin bug), never a traceback.
"""

from __future__ import annotations

import dataclasses
import gc
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from sqlglot import exp

from .compiler.binding.bind import bind
from .compiler.binding.bound import BoundSpec
from .compiler.checks.judge import judge
from .compiler.describe.explain import plan_json
from .compiler.diagnostics.diagnostics import Diagnostic, Diagnostics, shown
from .compiler.frontend import limits
from .compiler.frontend.ast import SpecFile
from .compiler.frontend.cascades import without_cascades
from .compiler.frontend.parse import parse
from .compiler.planning.plan import Plan
from .compiler.planning.planner import plan_spec
from .compiler.vocabulary import annotate
from .compiler.vocabulary.model import SUPPORTED_SPARK, SparkVersion
from .compiler.vocabulary.source import Source, Span


@dataclass
class CheckResult:
    source: Source
    diagnostics: list[Diagnostic] = field(default_factory=list)
    bound: BoundSpec | None = None
    plan: Plan | None = None
    spec: SpecFile | None = None  # the AST the binder read (of a .sjoin text or a pipeline)
    relation: str | None = None  # the query root the plan was made for (`--relation`)
    spark: SparkVersion | None = None  # the version it was planned for over its `spark` line
    # whether a warning fails ``ok`` too (``check_dataframe(df, warnings_ok=False)``)
    strict: bool = False
    # how to check the same input again, for another query root or Spark version (a
    # pipeline's files are read again; a .sjoin spec's text is checked again)
    again: Callable[[str | None, SparkVersion | None], CheckResult] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def ok(self) -> bool:
        """No error (and, when ``strict``, no warning either)."""
        failing = ("error", "warning") if self.strict else ("error",)
        return not any(d.severity in failing for d in self.diagnostics)

    def recheck(self, relation: str | None, spark: SparkVersion | None) -> CheckResult:
        """The same spec (or pipeline) checked again, planned for the query rooted at
        ``relation`` and for Spark ``spark`` (over its own `spark` statement)."""
        if self.again is not None:
            return self.again(relation, spark)
        return check_text(self.source.text, self.source.path, relation, spark)

    def plan_json(self) -> dict[str, Any]:
        """The plan JSON of the language brief (§5); requires a plan."""
        from .reports.diagnostics import to_dict

        assert self.plan is not None
        with _collector_paused():
            return plan_json(self.plan, [to_dict(d, self.source) for d in self.diagnostics])


def check_text(
    text: str,
    path: str = "<spec>",
    relation: str | None = None,
    spark: SparkVersion | None = None,
) -> CheckResult:
    """Parse, bind and plan ``text``; returns every diagnostic, in source order.  With
    ``relation`` (`--relation NAME`), the plan is made for the query rooted at that join or
    aggregate: the errors it has when it runs as its own query are errors (W010 otherwise).

    With ``spark``, the spec is bound and planned for that Spark version, which wins over its
    `spark` statement (`verify` on another Spark, `diff --spark A --to B`): every diagnostic
    that depends on the version (the analysis rules, the output modes, ANSI casts, the
    watermark late rows are judged by) is the one of ``spark``, the plan's ``spark`` is it,
    and the text is checked as written (its `spark` statement is still checked, E002/E016),
    so every span points into ``text``.  Without it, the statement's version (wherever it
    stands in the file), else the newest supported one (``DEFAULT_SPARK``).  A ``spark``
    that sjoin does not model is the caller's error (ValueError), not the spec's.

    A spec past a size limit (``compiler/frontend/limits.py``) is refused: its one diagnostic is the
    E031 where it passes the limit, and it is neither bound nor planned.  Each limit is
    checked before the work it bounds (the text before parsing, the number of relations
    before binding, the number of columns as they are bound)."""
    _supported(spark, "check_text")
    # past the length limit only one more character is kept: the place of the refusal
    source = Source(path, text[: limits.MAX_SPEC_CHARS + 1])
    diags = Diagnostics()

    def read() -> SpecFile | None:
        if limits.refuse_text(source.text, diags):
            return None
        return parse(source, diags)

    return _check(source, diags, read, relation, spark)


def _supported(spark: SparkVersion | None, caller: str) -> None:
    if spark is not None and spark.minor_version not in SUPPORTED_SPARK:
        supported = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_SPARK)
        raise ValueError(f"{caller}: sjoin models Spark {supported}, not {spark}")


def _check(
    source: Source,
    diags: Diagnostics,
    read: Callable[[], SpecFile | None],
    relation: str | None,
    spark: SparkVersion | None,
) -> CheckResult:
    """Bind and plan the AST ``read`` gives (None: refused past a size limit)."""
    result = CheckResult(source, relation=relation, spark=spark)
    spec: SpecFile | None = None
    try:
        with _collector_paused():
            spec = result.spec = read()
            if spec is None or limits.refuse_statements(spec, diags):
                return _refused(result, diags)
            result.bound = bind(spec, source, diags, spark)
            if any(d.code == "E031" for d in diags.items):
                return _refused(result, diags)
            result.plan = judge(plan_spec(result.bound, diags, relation), diags)
    except RecursionError:
        # The parser's nesting limit (MAX_NESTING) keeps every stage below Python's limit
        # unless the caller's own stack is already deep: say where the spec nests most.
        start = _deepest_expression(spec)
        diags.add(
            "E001",
            "the spec nests expressions too deeply (Python's recursion limit was reached)",
            Span(start, start + 1),
            "the deepest expression",
            "split the expression into smaller ones",
        )
        result.plan = None
    except Exception as err:
        diags.add(
            "E999",
            f"internal error: {type(err).__name__}: {err}",
            Span(0, 0),
            help="please report this spec to the sjoin developers",
        )
        result.plan = None
    bound = result.bound
    result.diagnostics = without_cascades(
        _without_cascades(
            diags.sorted(),
            bound is not None and bool(bound.broken),
            bound is not None and bool(bound.broken_watermarks),
        ),
        spec,
        (bound.broken | bound.broken_watermarks) if bound is not None else (),
    )
    return result


def check_pipeline(
    path: str | Path,
    relation: str | None = None,
    spark: SparkVersion | None = None,
    trace: str | Path | None = None,
) -> CheckResult:
    """THE entry point of the SQL front end: the pipeline at ``path`` (a Spark Declarative
    Pipelines SQL file, or a project: its directory or its spark-pipeline.yml) read into the
    same AST a .sjoin spec parses to, then bound and planned as ``check_text`` does.  Every
    diagnostic's span is a place in one of its files (``result.source.locate``).

    ``trace``: a JSON-lines trace from which the columns of a stream the pipeline defines in
    Python, and the schema file does not declare, are inferred (W012 says so).

    Never raises on what the files say; a path that is no pipeline (missing, unreadable,
    not UTF-8, a directory without spark-pipeline.yml) raises ``PipelineError``."""
    from .compiler.frontend.project import read_pipeline
    from .compiler.frontend.sqllower import lower, sql_help

    _supported(spark, "check_pipeline")
    diags = Diagnostics()
    project = read_pipeline(path, diags)
    source = project.source

    def read() -> SpecFile | None:
        if project.refused:  # past a size limit (read_pipeline reported the E031)
            return None
        if trace is not None:
            from .compiler.frontend.inference import infer_streams

            project.given.inferred = infer_streams(project.given, Path(trace), diags)
        return lower(project.given, diags)

    result = _check(source, diags, read, relation, spark)
    result.diagnostics = [  # the help in the pipeline's own terms; no text of a file
        # outside the project's folder (diagnostics.shown)
        shown(dataclasses.replace(d, help=sql_help(d.help)), source)
        for d in result.diagnostics
    ]
    result.again = lambda again_relation, again_spark: check_pipeline(
        path, again_relation, again_spark, trace
    )
    return result


def check_pyspark(
    path: str | Path,
    relation: str | None = None,
    spark: SparkVersion | None = None,
    entry: str | None = None,
) -> CheckResult:
    """THE entry point of the PySpark front end (docs/pyspark.md): the job at ``path`` (a
    Python module that builds streaming DataFrames) run offline in a child process, its
    ``build(spark)`` (or ``entry``) called when it defines one, else the module run as a
    script; each query it starts is captured, not started, and the DataFrames are lowered
    into the same AST a .sjoin spec parses to, then bound and planned as ``check_text``
    does.  Every span is a place in the job's file.

    A job that cannot be read (it raised, exited, needed a Spark server, has no ``entry``,
    timed out) is one E042 at its line: ``input_error`` then says so (exit 2).  Raises
    OSError and UnicodeDecodeError for a file that cannot be read, as ``read_spec``."""
    from .compiler.frontend.pyspark import read_job
    from .compiler.frontend.pyspark.lower import lower
    from .compiler.frontend.pyspark.sites import Locator

    _supported(spark, "check_pyspark")
    text = read_spec(path)
    source = Source(str(path), text)
    diags = Diagnostics()
    job = read_job(path, entry)
    failures = []
    if job.failure is not None:
        failures.append((job.failure.message, job.failure.sites))
    failures += [
        (f"{r.what} needs a Spark server: sjoin reads a job offline", r.sites) for r in job.refused
    ]
    if job.failure is not None and job.failure.kind == "pyspark":
        diags.add(
            "E042",
            job.failure.message,
            Span(0, 0),
            "the job was not run",
            f"install it with: {shlex.quote(sys.executable)} -m pip install 'sjoin[spark]'",
        )
    elif failures:
        locator = Locator(job.path, text)
        for message, sites in failures:
            diags.add(
                "E042",
                message,
                locator.span(locator.first(sites)),
                "the job stopped here",
                "give --entry a function the job defines at its top level, one that takes the "
                "session"
                if job.failure is not None and job.failure.kind == "entry"
                else "sjoin runs the job without Spark: build the DataFrames and start the "
                "queries without reading data or asking Spark for a schema",
            )
    if failures:
        result = CheckResult(source, diags.sorted(), relation=relation, spark=spark)
        result.again = lambda r, s: check_pyspark(path, r, s, entry)
        return result
    if not job.queries:
        diags.add(
            "E042",
            "the job started no streaming query (writeStream ... start() or toTable())",
            Span(0, 0),
            "nothing captured",
            "define build(spark) to start the queries, or name the function with --entry",
        )
        return CheckResult(source, diags.sorted(), relation=relation, spark=spark)
    result = _check(source, diags, lambda: lower(job, text, diags), relation, spark)
    result.again = lambda r, s: check_pyspark(path, r, s, entry)
    return result


def check_dataframe(
    df: Any,
    *,
    name: str | None = None,
    warnings_ok: bool = True,
    spark: SparkVersion | None = None,
) -> CheckResult:
    """A streaming DataFrame built in this process (docs/pyspark.md, "In your own tests"):
    a Spark Connect DataFrame (its plan is read from the client, no server asked) or a
    classic one (its analyzed plan, read from its JVM), lowered as a job's query with no
    sink, then bound and planned as ``check_text`` does.

    Every diagnostic is placed at the line that called this function (the caller's file is
    the result's source); the DataFrame's relation is named ``name``, else after the
    caller's variable that holds it, else ``df``.  What sjoin does not model is E041; a
    DataFrame whose plan cannot be read is one E042 (``input_error``).  With
    ``warnings_ok=False``, ``result.ok`` is false on a warning too.  Never raises for what
    the DataFrame holds."""
    from .compiler.frontend.pyspark.dataframe import (
        caller_frame,
        lower_dataframe,
        read_dataframe,
    )

    _supported(spark, "check_dataframe")
    frame = caller_frame()
    try:
        given = read_dataframe(df, name, frame)
    finally:
        del frame
    source = Source(given.path, given.text)
    diags = Diagnostics()
    if given.job is None:
        from .compiler.frontend.pyspark.sites import Locator

        diags.add(
            "E042",
            given.failure or "the DataFrame could not be read",
            Locator(given.path, given.text).span(given.site),
            f"`{given.root}` was checked here",
            "hand check_dataframe a streaming DataFrame built with readStream",
        )
        return CheckResult(source, diags.sorted(), spark=spark, strict=not warnings_ok)
    result = _check(source, diags, lambda: lower_dataframe(given, diags), None, spark)
    result.strict = not warnings_ok
    result.again = lambda r, s: _rechecked(result, r, s)
    return result


def _rechecked(
    result: CheckResult, relation: str | None, spark: SparkVersion | None
) -> CheckResult:
    """A DataFrame's check for another query root or Spark version: its AST again."""
    spec = result.spec
    diags = Diagnostics()
    again = _check(result.source, diags, lambda: spec, relation, spark)
    again.strict = result.strict
    return again


def input_error(result: CheckResult) -> bool:
    """Whether the input could not be read at all (a PySpark job's E042): exit 2."""
    return any(d.code == "E042" for d in result.diagnostics)


def check_any(
    path: str | Path,
    relation: str | None = None,
    spark: SparkVersion | None = None,
    trace: str | Path | None = None,
    entry: str | None = None,
) -> CheckResult:
    """A .sjoin spec, a pipeline (``check_pipeline``) when ``path`` is a .sql file, a
    spark-pipeline.yml or a directory, or a PySpark job (``check_pyspark``) when it is a
    .py file."""
    from .compiler.vocabulary.source import is_pipeline, is_pyspark_job

    if is_pyspark_job(path):
        return check_pyspark(path, relation, spark, entry)
    if is_pipeline(path):
        return check_pipeline(path, relation, spark, trace)
    return check_file(path, relation, spark)


def _refused(result: CheckResult, diags: Diagnostics) -> CheckResult:
    """``result`` of a spec past a size limit: the E031, and nothing bound or planned."""
    result.diagnostics = [d for d in diags.sorted() if d.code == "E031"]
    result.bound = None
    result.plan = None
    return result


# Warnings that judge the spec by what reads a stream: after an error the broken statement
# may be the reader (a join that did not parse, or one left out because a stream it reads is
# broken), so they would be false (`the watermark of payments is unused` when the join that
# reads it is the broken statement).
CONSUMER_WARNINGS = frozenset({"W002"})
# What follows from a stream having no watermark: after that stream's watermark failed to
# bind (its error is reported), these judge a watermark the user did write.
WATERMARK_CONSEQUENCES = frozenset({"W001", "W002", "E021", "E028"})


def _without_cascades(
    found: list[Diagnostic], broken: bool, broken_watermark: bool
) -> list[Diagnostic]:
    """``found`` less the consumer warnings when a statement is broken (``broken``: one did
    not parse, or one was left undefined by its own error), and less what follows from a
    missing watermark when a stream's watermark failed to bind."""
    dropped: set[str] = set()
    if broken or any(d.code == "E001" for d in found):
        dropped |= CONSUMER_WARNINGS
    if broken_watermark:
        dropped |= WATERMARK_CONSEQUENCES
    return [d for d in found if d.code not in dropped]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while a spec is checked: a check allocates
    millions of small objects (parse trees, expression copies) and frees few of them before
    it ends, so each collection would walk them all again for nothing (it halves the time of
    checking 50,000 conjuncts; the peak memory is the same)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _deepest_expression(spec: SpecFile | None) -> int:
    """The offset of the most deeply nested expression node of ``spec`` (0 without one):
    every walk is iterative, since the recursive ones just failed."""
    best_depth, best_start = -1, 0
    todo: list[Any] = [spec] if spec is not None else []
    while todo:  # AST nodes (frozen dataclasses), tuples of them, expressions
        node = todo.pop()
        if isinstance(node, exp.Expression):
            stack = [(node, 0)]
            while stack:
                sub, depth = stack.pop()
                span = annotate.span(sub)
                if isinstance(span, Span) and depth > best_depth:
                    best_depth, best_start = depth, span.start
                stack += [(k, depth + 1) for k in sub.iter_expressions()]
        elif isinstance(node, tuple):
            todo += node
        elif is_dataclass(node):
            todo += [getattr(node, f.name) for f in fields(node)]
    return best_start


def read_spec(path: str | Path) -> str:
    """A spec file's text (UTF-8), line breaks as written: a CR where the text may not hold
    one (in a quoted name, say) is reported there, not turned into a LF; ``Source`` counts
    LF, CRLF and a lone CR as line breaks alike.  A UTF-8-encoded lone surrogate (the bytes
    ED A0 80 for U+D800, as CESU-8 and Java's modified UTF-8 write them) is decoded too, so
    that the checker reports it at its line and column.  OSError and UnicodeDecodeError (any
    other invalid UTF-8) are for the caller.  A file longer than the size limit is read up to
    one character past it, which is all ``check_text`` reads of it before refusing it."""
    with open(path, encoding="utf-8", errors="surrogatepass", newline="") as f:
        return f.read(limits.MAX_SPEC_CHARS + 1)


def check_file(
    path: str | Path, relation: str | None = None, spark: SparkVersion | None = None
) -> CheckResult:
    return check_text(read_spec(path), str(path), relation, spark)


def target_diagnostics(result: CheckResult, target: str) -> list[Diagnostic]:
    """What the checked spec lacks for a generated job (``target`` "pyspark": a ``from``
    per stream, a ``sink`` per query, W008 and W009) or cannot express as a Spark
    Declarative Pipelines project ("pipeline": E032), read from its plan; none without
    one, and a pipeline's only when the spec has no error."""
    from .compiler.checks.job_warnings import job_warnings, pipeline_refusals

    if result.plan is None:
        return []
    if target == "pyspark":
        return job_warnings(result.plan)
    return pipeline_refusals(result.plan) if target == "pipeline" and result.ok else []


def spec_text(result: CheckResult, header: str) -> str:
    """The checked spec as .sjoin text (`sjoin fmt --to sjoin`), ``header`` its first
    lines; raises ``Unwritable`` for a name or string the language cannot hold."""
    from .compiler.frontend.unparse import spec_text as unparse

    assert result.spec is not None, "a spec that did not parse has no text"
    return unparse(result.spec, header)


# A plan is the by-product of a check: the same call, named for what the caller wants.
plan_text = check_text
plan_file = check_file
