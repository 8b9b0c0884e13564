"""What a generated job will need that the spec does not give it: the warnings of
`sjoin compile` (W008, W009), with spans on the spec; and what the pipeline target cannot
express (`sjoin compile --target pipeline`: E032).  `check` does not report them: a spec
without sources and sinks is fine for `sjoin run` and tests, only a job run by
`spark-submit` needs them.  Like ``hazards``, it reads only the Plan."""

from __future__ import annotations

import re
from functools import singledispatch

from ..diagnostics.diagnostics import Diagnostic
from ..planning.plan import (
    AggregateNode,
    DedupNode,
    JoinNode,
    Plan,
    PlanNode,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..vocabulary.source import Span

# SessionCatalog.validateName: a table's name in Spark's session catalog, checked on Spark
# 4.3.0 (`my.s one` fails with INVALID_SCHEMA_OR_RELATION_NAME when the pipeline runs)
TABLE_NAME = re.compile(r"[A-Za-z0-9_]+")


def job_warnings(plan: Plan) -> list[Diagnostic]:
    """W008 for each stream without `from`, W009 for each query root without a sink."""
    out: list[Diagnostic] = []
    for stream in plan.streams:
        if stream.source is None:
            out.append(
                Diagnostic(
                    "W008",
                    f"stream `{stream.name}` has no `from` source: the job's main() cannot "
                    f'read it; build(spark, inputs) expects inputs["{stream.name}"] as a '
                    "streaming DataFrame",
                    stream.name_span,
                    "no `from` clause",
                    "add e.g. `from kafka (topic = '...', bootstrap_servers = '...')`, or "
                    "call build() with your own input",
                )
            )
    sunk = {s.relation for s in plan.sinks}
    for root in plan.query_roots:
        head = plan.node(root)
        if root in sunk or head is None or isinstance(head, StreamNode):
            continue
        out.append(
            Diagnostic(
                "W009",
                f"`{root}` has no sink: the job's main() starts no query for it (build() "
                "still returns it by name)",
                name_span(head),
                "no `sink` writes it",
                f"add e.g. `sink {root} to parquet (path = 'out/{root}') checkpoint 'chk/{root}'`",
            )
        )
    return out


def pipeline_refusals(plan: Plan) -> list[Diagnostic]:
    """E032 for each part of the spec that a Spark Declarative Pipeline cannot express."""
    out: list[Diagnostic] = []
    # Spark Declarative Pipelines and SQL's WATERMARK clause (SPARK-53687) are both in Spark
    # 4.1.0 and later (the clause's parser rule is in spark-sql-api 4.1.0's jar, not in 4.0.1's)
    if not plan.spark.at_least(4, 1):
        out.append(
            Diagnostic(
                "E032",
                f"the spec targets Spark {plan.spark}: Spark Declarative Pipelines (and SQL's "
                "WATERMARK clause their joins are written with) need Spark 4.1 or later",
                plan.spark_span or Span(0, 0),
                "before Spark 4.1",
                "plan for the Spark that runs the pipeline: `spark 4.1` or later (`sjoin diff "
                f"SPEC --spark {plan.spark} --to 4.1` lists what changes)",
            )
        )
    for node in plan.nodes:
        span = name_span(node)
        if not TABLE_NAME.fullmatch(node.name):
            out.append(
                Diagnostic(
                    "E032",
                    f"`{node.name}` cannot name a table or view of a pipeline: Spark's session "
                    "catalog takes only letters, digits and `_` in a table name",
                    span,
                    "not a table name",
                    "rename it to letters, digits and `_`",
                )
            )
    for stream in plan.streams:
        if stream.source is None:
            out.append(
                Diagnostic(
                    "E032",
                    f"stream `{stream.name}` has no `from` source: a pipeline's streaming table "
                    "needs a query that reads it",
                    stream.name_span,
                    "no `from` clause",
                    "add e.g. `from json (path = '...')` or `from kafka (topic = '...', "
                    "bootstrap_servers = '...')`",
                )
            )
    for agg in plan.aggregates:
        written = agg.analysis.written_mode
        if written != "append":  # an SDP flow appends
            out.append(
                Diagnostic(
                    "E032",
                    f"aggregate `{agg.name}` uses OUTPUT MODE {written}: a pipeline's streaming "
                    "tables and sinks are appended to, so only OUTPUT MODE append runs in one",
                    agg.analysis.mode_span or agg.analysis.name_span,
                    f"{written} output mode",
                    "use OUTPUT MODE append (with a watermark on a grouping key), or "
                    "`--target pyspark`",
                )
            )
    for join in plan.joins:
        if join.mode != "append":  # an SDP flow appends; a join's Update rows are Append's
            out.append(
                Diagnostic(
                    "E032",
                    f"join `{join.name}` uses OUTPUT MODE {join.mode}: a pipeline's streaming "
                    "tables and sinks are appended to, so only OUTPUT MODE append runs in one",
                    join.analysis.mode_span or join.analysis.name_span,
                    f"{join.mode} output mode",
                    "drop the OUTPUT MODE (a join emits the same rows in Append mode), or "
                    "`--target pyspark`",
                )
            )
    for sink in plan.sinks:
        fmt = sink.target.format
        if fmt == "memory":
            out.append(
                Diagnostic(
                    "E032",
                    f"the sink of `{sink.relation}` writes to the memory format: an SDP sink "
                    "runs in the pipeline's server, where no one can query an in-memory table",
                    sink.target.span,
                    "memory sink",
                    "write to a path (json, parquet, ...) or to Kafka",
                )
            )
        elif fmt == "delta" and sink.target.option("table") is not None:
            out.append(
                Diagnostic(
                    "E032",
                    f"the sink of `{sink.relation}` writes a Delta table by name: an SDP sink "
                    "writes to a path or a topic, and the pipeline's own tables are its "
                    "streaming tables",
                    sink.target.span,
                    "Delta table by name",
                    "give the sink a `path`, or drop the sink: the relation is a streaming table "
                    "of the pipeline",
                )
            )
    trigger = plan.settings.trigger
    if trigger not in ("", "available_now"):
        out.append(
            Diagnostic(
                "E032",
                f"`set trigger = '{trigger}'`: `spark-pipelines run` runs each flow once over "
                "the data available when it starts; a pipeline sets no other trigger",
                plan.setting_spans.get("trigger", Span(0, 0)),
                "trigger of a pipeline",
                "remove the `set trigger` statement (or set it to 'available_now')",
            )
        )
    return out


@singledispatch
def name_span(node: PlanNode) -> Span:
    """Where a relation's name is written in the spec."""
    raise TypeError(f"no name span for a plan node of kind {type(node).__name__}")


@name_span.register(StreamNode)
@name_span.register(DedupNode)
@name_span.register(UnionNode)
@name_span.register(ViewNode)
@name_span.register(TableNode)
@name_span.register(StaticJoinNode)
def _(node: StreamNode | DedupNode | UnionNode | ViewNode | TableNode | StaticJoinNode) -> Span:
    return node.name_span


@name_span.register(JoinNode)
@name_span.register(AggregateNode)
def _(node: JoinNode | AggregateNode) -> Span:
    return node.analysis.name_span  # the planner's analysis holds a stateful operator's spans
