"""Spark parity checking: run a spec on a trace with the reference runtime *and* with the
generated PySpark job on real local Spark, and compare them batch by batch.

``verify(plan, trace)`` returns a ``VerifyReport``.  For each query the runtime would run
(one per sink relation, else one per join/aggregate nothing consumes, or the one named by
``relation``) it

* reads the trace with ``runtime/io/trace.py`` (so bad rows are treated exactly as ``sjoin run``
  treats them) and groups it into its micro-batches;
* runs the runtime on the trace;
* compiles the plan with ``compile_pyspark``, loads the job from a temporary file, runs its
  ``build`` on a ``StreamDriver`` and feeds it one trace batch per Spark micro-batch (the
  no-data batches Spark decides to run follow on their own);
* compares, per executed batch: the root relation's output rows as multisets (normalised),
  the watermark (as an instant), and ``numRowsTotal``, ``numRowsUpdated``,
  ``numRowsRemoved`` and ``numRowsDroppedByWatermark`` of every state operator (Spark lists
  ``stateOperators`` from the root in pre-order, left before right; they are mapped to the
  plan's relations in that order);
* checks the executed plan's ``state cleanup [...]`` of each join against the plan.

pyspark is imported only inside functions (through ``sjoin.jvm.spark_driver``), so importing this
module needs no pyspark; without pyspark or Java ``verify`` raises ``SparkUnavailable``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

from ..api import CheckResult
from ..compiler.planning.plan import JoinNode, Plan, StreamNode, TableNode
from ..compiler.vocabulary.model import SUPPORTED_SPARK, SparkVersion
from ..runtime import RunError, UsageError, run
from ..runtime.engine.values import format_date, format_timestamp, parse_timestamp
from ..runtime.io.trace import (
    BadRow,
    BadRowPolicy,
    Trace,
    read_trace,
    schemas_of,
    table_schemas,
)
from ..runtime.query import query_roots
from .job_as_written import JobNotFed
from .spark_driver import SparkUnavailable, StaticTables

__all__ = [
    "Difference",
    "MetricDifference",
    "Progress",
    "QueryReport",
    "SparkUnavailable",
    "SpecError",
    "VerifyReport",
    "like_local",
    "verify",
    "verify_spec",
]

METRICS = ("numRowsTotal", "numRowsUpdated", "numRowsRemoved", "numRowsDroppedByWatermark")
OPERATOR_NAMES = {"join": "symmetricHashJoin", "aggregate": "stateStoreSave"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US = timedelta(microseconds=1)


# ------------------------------------------------------------------------------ the report


_METRIC_WORDS = {  # what the operator did, and the noun counted ({} is the count and noun)
    "numRowsTotal": ("holds {} in its state after the batch", "row"),
    "numRowsUpdated": ("wrote {} to its state", "row"),
    "numRowsRemoved": ("removed {} from its state", "row"),
    "numRowsDroppedByWatermark": ("dropped {} (behind the watermark)", "late input row"),
}
_OPERATOR_KINDS = {v: k for k, v in OPERATOR_NAMES.items()}


@dataclass(frozen=True)
class MetricDifference:
    """One value both engines report that differs: ``what`` is ``watermark``, ``batch id``,
    ``RELATION.METRIC`` for a state operator metric, ``operators`` (the stateful operators),
    ``RELATION (operator)``, ``join operators`` or ``JOIN.SIDE state cleanup``.
    ``operator`` is ``join`` or ``aggregate`` for a state operator metric."""

    what: str
    spark: Any
    runtime: Any
    operator: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "spark": self.spark,
            "runtime": self.runtime,
            "text": self.sentence(),
        }

    def sentence(self) -> str:
        """What differs, in words."""
        s, r = self.spark, self.runtime
        if self.what == "watermark":
            return f"the watermark is {s} in Spark but {r} in the runtime"
        if self.what == "batch id":
            return f"Spark numbered this batch {s}, the runtime {r}"
        if self.what == "operators":
            return (
                f"Spark ran {_count(len(s), 'stateful operator')} ({', '.join(map(str, s))}), "
                f"the plan has {len(r)} ({', '.join(map(str, r))})"
            )
        if self.what == "join operators":
            return (
                f"the executed plan has {_count(s, 'stream-stream join')}, "
                f"the plan {_count(r, 'join')}"
            )
        if self.what.endswith(" (operator)"):
            relation = self.what.removesuffix(" (operator)")
            return f"Spark ran a {s} operator for `{relation}`, the runtime has none"
        if self.what.endswith(" state cleanup"):
            side = self.what.removesuffix(" state cleanup")
            return (
                f"the executed plan evicts `{side}` state when {_cleanup(s)}, "
                f"the plan says when {_cleanup(r)}"
            )
        relation, _, metric = self.what.rpartition(".")
        words = _METRIC_WORDS.get(metric)
        if relation and words is not None:
            kind = self.operator or "operator"
            said = _count(s, words[1]) if type(s) is int else str(s)
            return (
                f"the {kind} `{relation}` {words[0].format(said)} in Spark, {r} in the runtime "
                f"({metric})"
            )
        return f"{self.what}: {s!r} in Spark, {r!r} in the runtime"


def _count(n: int, noun: str) -> str:
    from ..reports.diagnostics import count

    return count(n, noun)


def _cleanup(rule: Any) -> str:
    if rule is None:
        return "never (no state cleanup)"
    if rule.get("value_ms") is None:
        return f"its {rule['kind']} passes the watermark"
    return f"its {rule['kind']} <= {rule['value_ms']} ms"


@dataclass(frozen=True)
class Difference:
    """The first batch of a query where Spark and the runtime differ.

    ``kind``: ``batch`` (a batch id executed by only one engine, or data in it differs),
    ``state_cleanup`` (the executed plan's cleanup predicate differs from the plan) or
    ``spark_error`` (Spark failed where the runtime ran)."""

    kind: str
    batch: int | None
    only_spark: list[dict[str, Any]] = field(default_factory=list)
    only_runtime: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[MetricDifference] = field(default_factory=list)
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "batch": self.batch,
            "summary": self.summary(),
            "rows_only_in_spark": self.only_spark,
            "rows_only_in_runtime": self.only_runtime,
            "metrics": [m.to_dict() for m in self.metrics],
            "detail": self.detail,
        }

    def summary(self) -> str:
        """One sentence: where the first difference is and what differs there."""
        if self.kind == "spark_error":
            return "Spark failed where the runtime ran"
        if self.kind == "state_cleanup":
            return "the executed plan's state cleanup differs from the plan"
        if self.detail:
            return f"the first difference is in batch {self.batch}: {self.detail}"
        parts: list[str] = []
        if self.only_spark or self.only_runtime:
            parts.append("the output rows")
        whats = [m.what for m in self.metrics]
        if "watermark" in whats:
            parts.append("the watermark")
        if "batch id" in whats:
            parts.append("the batch id")
        operators = sorted(
            {m.what.rpartition(".")[0] for m in self.metrics if m.operator and "." in m.what}
        )
        if operators:
            parts.append("the state of " + ", ".join(f"`{o}`" for o in operators))
        if "operators" in whats or any(w.endswith(" (operator)") for w in whats):
            parts.append("the stateful operators")
        return f"the first difference is in batch {self.batch}, in {_and(parts) or 'the data'}"

    def text(self, query: str) -> list[str]:
        lines = [f"query `{query}`: {self.summary()}"]
        if self.kind == "spark_error" or (self.kind == "state_cleanup" and self.detail):
            lines.append(f"  {self.detail}")
        lines.extend(f"  {m.sentence()}" for m in self.metrics)
        for engine, rows in (("Spark", self.only_spark), ("the runtime", self.only_runtime)):
            if rows:
                lines.append(f"  {_count(len(rows), 'row')} came out only in {engine}:")
                lines.extend(f"    {_row_text(r)}" for r in rows)
        return lines


def _and(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


@dataclass
class QueryReport:
    """One query (root relation) compared on both engines."""

    relation: str
    output_mode: str
    spark_batches: int = 0
    runtime_batches: int = 0
    rows: int = 0  # output rows of the root relation (Spark's count)
    state_cleanup: list[str] = field(default_factory=list)  # what was checked, as text
    difference: Difference | None = None
    seconds: float = 0.0

    @property
    def agree(self) -> bool:
        return self.difference is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "relation": self.relation,
            "output_mode": self.output_mode,
            "agree": self.agree,
            "spark_batches": self.spark_batches,
            "runtime_batches": self.runtime_batches,
            "rows": self.rows,
            "state_cleanup": self.state_cleanup,
            "difference": None if self.difference is None else self.difference.to_dict(),
            "seconds": round(self.seconds, 3),
        }


@dataclass
class VerifyReport:
    """Whether Spark and the runtime agree on every compared query.

    ``target`` is the spec's `spark` version, ``spark_version`` the Spark that ran the job and
    ``compared_as`` the version the runtime followed (``verify_spec``: the running Spark's
    major.minor). ``rejected`` holds the errors when the spec does not plan for that version
    (then nothing ran)."""

    queries: list[QueryReport] = field(default_factory=list)
    trace_batches: int = 0
    bad_rows: list[BadRow] = field(default_factory=list)
    target: str = ""  # the spec's `spark` version
    spark_version: str = ""  # the local Spark that ran the job
    compared_as: str = ""  # the version the runtime followed
    rejected: list[str] = field(default_factory=list)
    note: str = ""  # one line on the versions, when they are not all the same

    @property
    def version_note(self) -> str | None:
        return self.note or None

    @property
    def agree(self) -> bool:
        return not self.rejected and all(q.agree for q in self.queries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agree": self.agree,
            "target": self.target,
            "spark_version": self.spark_version,
            "compared_as": self.compared_as,
            "rejected": self.rejected,
            "version_note": self.version_note,
            "trace_batches": self.trace_batches,
            "bad_rows": [b.to_json() for b in self.bad_rows],
            "queries": [q.to_dict() for q in self.queries],
        }

    def text(self) -> str:
        lines = [f"note: {self.version_note}"] if self.version_note else []
        if self.rejected:
            lines.append(
                f"the spec targets Spark {self.target}, but Spark {self.compared_as}, the "
                "version that runs here, rejects it:"
            )
            lines.extend(f"  {line}" for error in self.rejected for line in error.splitlines())
        for q in self.queries:
            head = (
                f"query `{q.relation}` ({q.output_mode}): "
                f"{_count(q.spark_batches, 'Spark batch')}, "
                f"{_count(q.runtime_batches, 'runtime batch')}, {_count(q.rows, 'output row')}"
            )
            if q.agree:
                lines.append(head + ": Spark and the runtime agree")
                lines.extend(f"  state cleanup {c}: as planned" for c in q.state_cleanup)
            else:
                assert q.difference is not None
                lines.append(head + ": they DIFFER")
                lines.extend(q.difference.text(q.relation))
        return "\n".join(lines)

    def summary(self) -> str:
        if self.rejected:
            return f"nothing compared: the spec does not plan for Spark {self.compared_as}"
        if self.agree:
            return f"Spark and the runtime agree on {_count(len(self.queries), 'query')}"
        differ = sum(not q.agree for q in self.queries)
        return f"Spark and the runtime differ on {differ} of {_count(len(self.queries), 'query')}"


# ------------------------------------------------------------------------------ normalising


def normal_value(value: Any) -> Any:
    """One comparable form for both engines' values: timestamps as the runtime's ISO text,
    windows as {start, end}, decimals as their exact text, dates as ISO text, doubles with
    12 significant digits (sums may add in another order), NaN/Infinity as text."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return format_timestamp((aware - _EPOCH) // _ONE_US)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return float(f"{value:.12g}")
    if isinstance(value, Mapping):
        return {str(k): normal_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normal_value(v) for v in value]
    return str(value)


def normal_row(row: Mapping[str, Any]) -> str:
    """A row as canonical JSON text (sorted keys), so rows compare as multiset members."""
    return json.dumps({k: normal_value(v) for k, v in row.items()}, sort_keys=True)


def _row_text(row: Mapping[str, Any]) -> str:
    return json.dumps(row, sort_keys=True)


def _watermark_ms(text: str | None) -> int | None:
    if text is None:
        return None
    us = parse_timestamp(text)
    return None if us is None else us // 1000


# ------------------------------------------------------------------------------ plan helpers


def pre_order(plan: Plan, root: str) -> list[str]:
    """The stateful operators below ``root`` as Spark lists them: pre-order, left first."""
    return [node.name for node in plan.stateful_operators(root)]


def output_mode(plan: Plan, relation: str) -> str:
    return plan.query_modes.get(relation, "append")


def spark_row(values: tuple[Any, ...], stream: StreamNode | TableNode) -> dict[str, Any]:
    """A trace row (runtime values) of a stream or a static table as the JSON-ready dict the
    driver sends to Spark."""
    out: dict[str, Any] = {}
    for column, value in zip(stream.columns, values, strict=True):
        kind = column.type.name
        if value is None:
            out[column.name] = None
        elif kind == "timestamp":
            out[column.name] = format_timestamp(value)
        elif kind == "date":
            out[column.name] = format_date(value)
        elif isinstance(value, Decimal):
            out[column.name] = format(value, "f")
        else:
            out[column.name] = value
    return out


def write_job(plan: Plan, directory: str) -> Path:
    """The generated PySpark job of ``plan``, written into ``directory``."""
    from ..compiler.backends.pyspark import compile_pyspark
    from ..runtime.io.files import write_owned

    path = Path(directory) / "sjoin_verify_job.py"
    write_owned(path, compile_pyspark(plan, "verify").encode("utf-8"), "verify's folder")
    return path


def load_job(plan: Plan, directory: str) -> ModuleType:
    """The generated PySpark job of ``plan``, written into ``directory`` and imported."""
    path = write_job(plan, directory)
    spec = importlib.util.spec_from_file_location(f"sjoin_verify_job_{id(path)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------ the check


@dataclass(frozen=True)
class Progress:
    """Where a verify run is: query ``index`` (from 1) of ``queries``, rooted at ``query``;
    ``batch`` of the trace's ``batches`` fed to Spark (0: the query starts)."""

    query: str
    index: int
    queries: int
    batch: int
    batches: int


OnProgress = Callable[[Progress], None]


def installed_spark_version() -> str:
    """The version of the pyspark this interpreter imports (no JVM is started)."""
    try:
        import pyspark
    except ImportError as exc:
        raise SparkUnavailable("pyspark is needed to run Spark: it is not installed") from exc
    return str(pyspark.__version__)


class SpecError(RunError):
    """The spec has errors for the query that was asked for (``relation``)."""


def like_local(spec: CheckResult, local: str) -> tuple[CheckResult, str]:
    """The spec planned as the Spark ``local`` (e.g. ``4.3.0``) that runs the job, and a
    one-line note when that is not the spec's target (empty otherwise).

    The runtime follows the plan's version, so comparing it with the Spark that runs is
    comparing like with like.  A local version sjoin does not model keeps the target plan.
    The spec is planned again with the local ``X.Y`` as its ``spark`` (``CheckResult.recheck``:
    it wins over the `spark` statement; the text is not changed, so every diagnostic
    points at the user's lines).  The result may have errors: the spec does not plan for the
    local version."""
    assert spec.plan is not None, "like_local needs a planned spec"
    target = spec.plan.spark
    match = re.match(r"([0-9]{1,4})\.([0-9]{1,4})", local)
    if match is None:
        return spec, f"cannot tell the Spark version that runs here ({local!r})"
    minor = (int(match.group(1)), int(match.group(2)))
    if minor == target.minor_version:
        return spec, ""
    as_text = f"{minor[0]}.{minor[1]}"
    if minor not in SUPPORTED_SPARK:
        supported = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_SPARK)
        return spec, (
            f"Spark {local} runs here, which sjoin does not model (it models {supported}); "
            f"the runtime follows the spec's target, Spark {target}, so version-dependent "
            "behaviour may differ"
        )
    again = spec.recheck(spec.relation, SparkVersion(*minor))
    wanted = f"{target.major}.{target.minor}"
    return again, (
        f"the spec targets Spark {target}; comparing the runtime as Spark {as_text}, "
        f"the version that runs here (pass --spark {wanted} to run Spark {wanted} itself)"
    )


def verify_spec(
    spec: CheckResult,
    trace: str | os.PathLike[str] | Iterable[Any],
    *,
    relation: str | None = None,
    spark: Any = None,
    bad_rows: BadRowPolicy = "stop",
    on_progress: OnProgress | None = None,
    verbose: bool = False,
    make_runner: Callable[..., SparkRunner] | None = None,
) -> VerifyReport:
    """``verify`` of a checked spec, like with like: the runtime follows the Spark version
    that runs the job (``spark``'s, else the installed pyspark's), re-planning the spec for
    it when that is not its target; the report's ``note`` says so.  When the spec does not
    plan for that version, the report lists the errors in ``rejected`` and nothing runs."""
    from ..reports.diagnostics import render_plain

    if spec.plan is None or not spec.ok:
        raise ValueError("verify_spec needs a spec without errors")
    if relation is not None and relation != spec.relation:
        # planned for the query that runs: what its errors are (W010 becomes the error)
        spec = spec.recheck(relation, spec.spark)
        if spec.plan is None or not spec.ok:
            errors = [d for d in spec.diagnostics if d.severity == "error"]
            raise SpecError(
                f"`{relation}` cannot run as its own query:\n"
                + "\n".join(render_plain(d, spec.source) for d in errors)
            )
    assert spec.plan is not None
    local = str(spark.version) if spark is not None else installed_spark_version()
    planned, note = like_local(spec, local)
    target = str(spec.plan.spark)
    if planned.plan is None or not planned.ok:
        errors = [d for d in planned.diagnostics if d.severity == "error"]
        match = re.match(r"[0-9]{1,4}\.[0-9]{1,4}", local)
        return VerifyReport(
            target=target,
            spark_version=local,
            compared_as=match.group(0) if match else local,
            rejected=[render_plain(d, planned.source) for d in errors],
        )
    report = verify(
        planned.plan,
        trace,
        relation=relation,
        spark=spark,
        bad_rows=bad_rows,
        on_progress=on_progress,
        verbose=verbose,
        make_runner=make_runner,
    )
    report.target = target
    report.note = note
    return report


def verify(
    plan: Plan,
    trace: str | os.PathLike[str] | Iterable[Any],
    *,
    relation: str | None = None,
    spark: Any = None,
    bad_rows: BadRowPolicy = "stop",
    on_progress: OnProgress | None = None,
    verbose: bool = False,
    make_runner: Callable[..., SparkRunner] | None = None,
    delta_at_start: Mapping[str, int | None] | None = None,
) -> VerifyReport:
    """Run ``plan`` over ``trace`` on the runtime and on local Spark and compare them.

    ``trace`` is a JSONL path or an iterable of JSON lines or record dicts (as ``run``
    takes), or a directory of Delta tables or Parquet files (the runtime's columnar traces).
    ``relation`` picks one join or aggregate (default: the runtime's queries).
    ``spark`` is a classic SparkSession (default: ``spark_driver.get_spark()``) or a
    ``spark_env.RemoteSpark`` (another interpreter's pyspark, in a child process).
    The runtime follows ``plan.spark`` whatever Spark runs (``verify_spec`` re-plans for the
    Spark that runs); the report's ``note`` says when the two differ.
    ``on_progress`` is called as each query starts and after each trace batch.
    A Spark started here keeps its log quiet (no JVM stderr) unless ``verbose`` (then its
    warnings show).
    ``make_runner(plan, folder)`` makes what runs each query on Spark in place of the job
    fed through memory streams (``kafka_driver.KafkaRunner``: through a real broker); a plan
    with static tables calls ``make_runner(plan, folder, tables)`` (``JobRunner.for_plan``),
    to give the job its tables as DataFrames.
    Raises ``RunError`` (``UsageError`` for a bad relation, ``TraceError`` for bad rows under
    ``stop``) and ``SparkUnavailable`` when Spark cannot run here.
    """
    roots = query_roots(plan, relation)  # UsageError for a stream or unknown relation
    if not isinstance(trace, (str, os.PathLike)):
        trace = list(trace)  # read twice: once here, once by the runtime
    parsed = _read_any_trace(plan, trace, bad_rows, delta_at_start)
    if spark is None:
        from .spark_driver import get_spark

        spark = get_spark(quiet=not verbose)
        if verbose:
            spark.sparkContext.setLogLevel("WARN")
    report = VerifyReport(
        trace_batches=len(parsed.batches),
        bad_rows=list(parsed.bad_rows),
        target=str(plan.spark),
        spark_version=str(spark.version),
        compared_as=str(plan.spark),
    )
    runs = ".".join(report.spark_version.split(".")[:2])
    if runs != ".".join(str(plan.spark).split(".")[:2]):
        report.note = (
            f"the runtime follows Spark {plan.spark} but Spark {spark.version} ran the job, "
            "so version-dependent behaviour may differ"
        )
    tables = static_tables(plan, parsed)
    with tempfile.TemporaryDirectory(prefix="sjoin-verify-") as tmp:
        if make_runner is None:
            runner = _runner(spark, plan, tmp, tables)
        elif tables:  # the job's own sources, its static tables given as DataFrames
            runner = make_runner(plan, tmp, tables)
        else:
            runner = make_runner(plan, tmp)
        for index, root in enumerate(roots, 1):
            started = time.perf_counter()
            query = QueryReport(root, output_mode(plan, root))

            def tick(batch: int, root: str = root, index: int = index) -> None:
                if on_progress is not None:
                    on_progress(Progress(root, index, len(roots), batch, len(parsed.batches)))

            tick(0)
            policy: BadRowPolicy = "skip" if parsed.bad_rows else "stop"
            runtime = run(
                plan, trace, relation=root, bad_rows=policy, delta_at_start=delta_at_start
            )
            _compare_query(plan, root, parsed, runtime, runner, query, tick)
            query.seconds = time.perf_counter() - started
            report.queries.append(query)
    return report


def _read_any_trace(
    plan: Plan,
    trace: str | os.PathLike[str] | list[Any],
    bad_rows: BadRowPolicy,
    delta_at_start: Mapping[str, int | None] | None = None,
) -> Trace:
    """The trace as rows per batch: a JSON-lines trace, or a directory the runtime reads
    (a Delta trace read as the job's Delta source reads it, or a Parquet trace)."""
    if not isinstance(trace, (str, os.PathLike)) or not Path(trace).is_dir():
        return read_trace(trace, {**schemas_of(plan), **table_schemas(plan)}, bad_rows)
    from ..runtime import delta_options
    from ..runtime.columnar.delta import is_delta_trace, read_delta_trace
    from ..runtime.columnar.trace import read_parquet_trace
    from ..runtime.engine.batches import Rows

    directory = Path(trace)
    if is_delta_trace(directory):
        parsed = read_delta_trace(
            directory, schemas_of(plan), delta_options(plan), at_start=delta_at_start
        )
    else:
        parsed = read_parquet_trace(directory, schemas_of(plan))
    for batch in parsed.batches:  # frames (runtime rows where a frame cannot hold a column)
        batch.rows = {n: Rows(v.to_rows()) for n, v in batch.rows.items()}
    return parsed


def static_tables(plan: Plan, trace: Trace) -> StaticTables:
    """Each static table of ``plan`` as the job gets it beside its memory streams: its
    column DDL and its rows (JSON-ready, as a feed's), the trace's lines of it, none without
    any (the runtime's ``TableVersions``). The job gets one DataFrame per table for the whole
    run, so a table whose rows change between batches (a Delta table's versions), or a Delta
    table whose rows start after the first batch, is refused (``UsageError``)."""
    tables: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for table in plan.tables:
        held = [i for i, b in enumerate(trace.batches) if table.name in b.rows]
        late = bool(held) and held[0] > 0 and table.source.format == "delta"
        if len(held) > 1 or late:
            where = ", ".join(str(trace.batches[i].value) for i in held)
            empty = ", and it is empty before that" if late else ""
            raise UsageError(
                f"table `{table.name}` changes during the trace (its rows are in batch "
                f"{where}{empty}): verify gives the job each table as one DataFrame for the "
                "whole run, so give all its rows in the first batch"
            )
        rows = trace.batches[held[0]].rows[table.name].to_rows() if held else []
        ddl = ", ".join(f"`{c.name.replace('`', '``')}` {c.type}" for c in table.columns)
        tables[table.name] = (ddl, [spark_row(r, table) for r in rows])
    return tables


def _runner(
    spark: Any, plan: Plan, directory: str, tables: StaticTables | None = None
) -> SparkRunner:
    """How the generated job of ``plan`` runs a query: in this process on the session
    ``spark``, or in the child process of a ``RemoteSpark``; ``tables`` are the static
    tables it is given (``static_tables``)."""
    from .spark_driver import run_job_query
    from .spark_env import RemoteSpark

    if isinstance(spark, RemoteSpark):
        path = str(write_job(plan, directory))
        return lambda *args: spark.run_query(path, *args, tables=tables)
    job = load_job(plan, directory)
    return lambda *args: run_job_query(spark, job, *args, tables=tables)


# runs one query on Spark: (root, output mode, streams, feeds, confs, tick) -> RunResult
SparkRunner = Callable[
    [str, str, list[str], list[dict[str, Any] | None], dict[str, str], Callable[[int], None]],
    Any,
]


def _compare_query(
    plan: Plan,
    root: str,
    trace: Trace,
    runtime: Any,
    runner: SparkRunner,
    report: QueryReport,
    tick: Callable[[int], None] = lambda batch: None,
) -> None:
    from .spark_driver import parse_join_plan

    plan = plan.for_query(root)  # as Spark plans this query, on its own
    nodes = plan.closure(root)
    streams = {n.name: n for n in nodes if isinstance(n, StreamNode)}
    # the confs results depend on, at the plan's values (what a job sets or assumes), as the
    # planner decided them; the others (partitions, state store provider) change only how
    # the state is laid out
    confs = dict(plan.result_conf)
    feeds: list[dict[str, Any] | None] = [
        {
            name: [spark_row(r, streams[name]) for r in rows.to_rows()]
            for name, rows in batch.rows.items()
            if name in streams
        }
        or None
        for batch in trace.batches
    ]
    try:
        result = runner(root, report.output_mode, list(streams), feeds, confs, tick)
    except Exception as err:  # analysis or execution failure: Spark refused the job
        if isinstance(err, (SparkUnavailable, KeyboardInterrupt, JobNotFed)):
            raise
        message = " ".join(str(err).split())[:600]
        report.runtime_batches = len(runtime.batches)
        report.difference = Difference(
            "spark_error",
            None,
            detail=f"Spark failed where the runtime ran: {type(err).__name__}: {message}",
        )
        return
    spark_batches = result.batches
    report.spark_batches = len(spark_batches)
    report.runtime_batches = len(runtime.batches)
    report.rows = sum(len(b.rows) for b in spark_batches)
    operators = pre_order(plan, root)
    report.difference = _first_batch_difference(root, operators, spark_batches, runtime.batches)
    if result.plan:
        cleanup, difference = _check_state_cleanup(plan, root, parse_join_plan(result.plan))
        report.state_cleanup = cleanup
        if report.difference is None:
            report.difference = difference


def _first_batch_difference(
    root: str, operators: list[str], spark_batches: list[Any], runtime_batches: list[Any]
) -> Difference | None:
    for i in range(max(len(spark_batches), len(runtime_batches))):
        s = spark_batches[i] if i < len(spark_batches) else None
        r = runtime_batches[i] if i < len(runtime_batches) else None
        if s is None or r is None:
            if s is not None:
                batch_id, rows = s.batch_id, list(s.rows)
            else:
                assert r is not None
                batch_id, rows = r.batch, [row for rel, row in r.rows if rel == root]
            engine, other = ("Spark", "the runtime") if s is not None else ("the runtime", "Spark")
            ran = len(runtime_batches) if s is not None else len(spark_batches)
            return Difference(
                "batch",
                batch_id,
                only_spark=[_shown(x) for x in rows] if s is not None else [],
                only_runtime=[_shown(x) for x in rows] if r is not None else [],
                detail=(
                    f"it ran only in {engine} ({other} ran "
                    f"{_count(ran, 'batch')}), with {_count(len(rows), 'output row')}"
                ),
            )
        metrics: list[MetricDifference] = []
        if s.batch_id != r.batch:
            metrics.append(MetricDifference("batch id", s.batch_id, r.batch))
        s_rows = Counter(normal_row(x) for x in s.rows)
        r_rows = Counter(normal_row(x) for rel, x in r.rows if rel == root)
        only_spark = [json.loads(x) for x in (s_rows - r_rows).elements()]
        only_runtime = [json.loads(x) for x in (r_rows - s_rows).elements()]
        if _watermark_ms(s.watermark) != _watermark_ms(r.watermark):
            metrics.append(MetricDifference("watermark", s.watermark, r.watermark))
        metrics.extend(_metric_differences(operators, s.state_operators, r.progress["operators"]))
        if only_spark or only_runtime or metrics:
            return Difference("batch", s.batch_id, only_spark, only_runtime, metrics)
    return None


def _shown(row: Mapping[str, Any]) -> dict[str, Any]:
    shown: dict[str, Any] = json.loads(normal_row(row))
    return shown


def _metric_differences(
    operators: list[str], spark_ops: list[dict[str, Any]], runtime_ops: list[dict[str, Any]]
) -> list[MetricDifference]:
    out: list[MetricDifference] = []
    if len(spark_ops) != len(operators):
        names = [op.get("operatorName") for op in spark_ops]
        return [MetricDifference("operators", names, operators)]
    by_relation = {op["relation"]: op for op in runtime_ops}
    for relation, s_op in zip(operators, spark_ops, strict=True):
        r_op = by_relation.get(relation)
        if r_op is None:
            out.append(MetricDifference(f"{relation} (operator)", s_op.get("operatorName"), None))
            continue
        for metric in METRICS:
            if s_op.get(metric) != r_op.get(metric):
                kind = _OPERATOR_KINDS.get(str(s_op.get("operatorName")), "")
                out.append(
                    MetricDifference(f"{relation}.{metric}", s_op[metric], r_op[metric], kind)
                )
    return out


def _check_state_cleanup(
    plan: Plan, root: str, nodes: list[dict[str, Any]]
) -> tuple[list[str], Difference | None]:
    """The executed plan's `state cleanup [...]` of each join against the plan's rules."""
    joins = [j for j in plan.stateful_operators(root) if isinstance(j, JoinNode)]
    checked: list[str] = []
    if len(nodes) != len(joins):
        return checked, Difference(
            "state_cleanup",
            None,
            metrics=[MetricDifference("join operators", len(nodes), len(joins))],
        )
    for node, join in zip(nodes, joins, strict=True):
        watermark = node["eviction_watermark_ms"]
        for side in (join.left, join.right):
            found = node["state_cleanup"][side.name]
            rule = side.state
            if rule.eviction == "never":
                expected = None
            else:
                value = rule.state_watermark(watermark) if watermark is not None else None
                expected = {"kind": rule.eviction, "value_ms": value}
            label = f"{join.name}.{side.name}"
            checked.append(
                f"{label}: never"
                if expected is None
                else f"{label}: {rule.eviction} <= W{rule.offset_ms:+d} ms"
            )
            if found != expected and not (
                expected is not None
                and found is not None
                and expected["value_ms"] is None
                and found["kind"] == expected["kind"]
            ):
                return checked, Difference(
                    "state_cleanup",
                    None,
                    metrics=[MetricDifference(f"{label} state cleanup", found, expected)],
                    detail=f"the executed plan's eviction watermark is {watermark} ms",
                )
    return checked, None


__all__ += ["RunError", "normal_row", "normal_value", "pre_order"]
