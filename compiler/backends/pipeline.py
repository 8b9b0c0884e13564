"""Plan -> a Spark Declarative Pipelines project (`sjoin compile --target pipeline`).

The project (docs/pipelines.md) is a dict of relative file path -> text:

- ``spark-pipeline.yml``: the pipeline's name, storage, the Spark confs the spec sets (the
  plan's ``spark_conf``, nothing else) and the ``transformations/**`` glob;
- ``transformations/pipeline.py``: one streaming table per stream, read from its `from`
  source (``@dp.table`` over ``spark.readStream``, the readers of the PySpark back end),
  each dedup as a Python flow (``dedups_lines``: SDP's SQL has no dropDuplicates), and
  each `sink` as an SDP sink and the append flow into it;
- ``transformations/relation_NNN.sql``: each static table as a materialized view of its
  files (``table_sql``: the one form the SQL front end reads too), each join, aggregate,
  view, union and stream-static join, its streams read with SQL's ``WATERMARK`` clause
  (SPARK-53687, Spark 4.1.0+: SDP's own first release), a static table by its name
  (without STREAM(): a batch read);
- ``sjoin-schemas.sql`` (for sjoin only): the streams' columns and sources, each dedup's
  declaration (``dedup_declaration``), the target Spark and the sinks.

A relation that another relation reads is a temporary view, so the chain up to each
query root stays one streaming query, as in the PySpark job (a streaming table between two
stateful operators would cut the watermark's propagation); every other one is a streaming
table.

What a pipeline cannot express is refused before this runs (``job_warnings.pipeline_refusals``,
E032).

User text reaches the files only through the escaping functions: SQL text through
``sql.spark_sql`` (identifiers back-quoted where needed, strings escaped), Python string
literals through ``pytext.literal`` / ``column_ref`` / ``table_ref``, comments through
``pytext.comment`` (one line, every line break and control character escaped), and YAML
scalars through ``pytext.literal`` too: its escapes (``\\\\``, ``\\"``, ``\\n``, ``\\xNN``,
``\\uNNNN``, ``\\UNNNNNNNN``) are YAML's double-quoted escapes, read back to the same text.
File names hold no user text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import singledispatch

from sqlglot import exp

from ..planning.plan import (
    AggregateNode,
    DedupNode,
    InputWatermark,
    JoinNode,
    Plan,
    PlanNode,
    Side,
    SinkNode,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..vocabulary.expr import conjuncts
from ..vocabulary.model import JOIN_KINDS, Format
from ..vocabulary.sjointext import Unwritable, string
from ..vocabulary.sjointext import name as sjoin_name
from ..vocabulary.sjointext import string as sjoin_string
from ..vocabulary.sql import spark_sql
from .pyspark import (
    ANTI_MARKER,
    _dict_lines,
    _read_input,
    _recomputed,
    _schema,
    _value_schema,
    _window_field_arithmetic,
    emit,
    format_python,
    job_packages,
    job_sql,
    spark_duration,
)
from .pytext import column_ref, comment, docstring_line, literal, table_ref

# ---------------------------------------------------------------------- names


def _sql_name(name: str) -> str:
    """A relation's name in SQL text: an identifier, back-quoted where needed."""
    return spark_sql(exp.to_identifier(name))


def sink_names(plan: Plan) -> list[str]:
    """One SDP sink name per sink: ``sink_N``, with underscores added until no relation of the
    spec has the name."""
    taken = {n.name.lower() for n in plan.nodes}
    names = []
    for i in range(len(plan.sinks)):
        name = f"sink_{i}"
        while name.lower() in taken or f"{name}_flow".lower() in taken:
            name += "_"
        names.append(name)
    return names


# ---------------------------------------------------------------------- SQL (4.1+)


def _interval(ms: int) -> str:
    amount, unit = spark_duration(ms * 1000).split(" ")
    return f"INTERVAL {amount} {unit.upper()}"


def _stream_read(plan: Plan, relation: str) -> str:
    """How a relation of the pipeline reads ``relation`` in FROM (``_read_sql``)."""
    return _read_sql(plan.node(relation), relation)


@singledispatch
def _read_sql(node: PlanNode | None, relation: str) -> str:
    """``STREAM(name)``: a streaming read of a relation the pipeline defines (a view carries
    its inputs' watermarks)."""
    return f"STREAM({_sql_name(relation)})"


@_read_sql.register
def _(node: StreamNode, relation: str) -> str:
    """``STREAM(name)``, with the stream's WATERMARK clause when it has a watermark."""
    text = f"STREAM({_sql_name(relation)})"
    if node.watermark_column is not None:
        column = _sql_name(node.watermark_column)
        text += f" WATERMARK {column} DELAY OF {_interval(node.delay_ms or 0)}"
    return text


@_read_sql.register
def _(node: TableNode, relation: str) -> str:
    """A static table by its name alone (a batch read, read whole in each micro-batch)."""
    return _sql_name(relation)


def _side_sql(plan: Plan, side: Side, anti_marker: bool) -> str:
    """One join input in FROM: the stream (its watermark) or view, and where the side projects
    windows or needs LEFT ANTI's marker, a subquery that adds them as the PySpark job's
    withColumn calls do (a recomputed time column in its place, new columns at the end)."""
    read = _marked_read(plan, side.relation, side.input_watermark)
    alias = _sql_name(side.alias)
    if not side.windows and not anti_marker:
        return f"{read} AS {alias}"
    recomputed = {w.time_column for w in side.windows}
    items = []
    for column in side.columns:
        name = _sql_name(column.name)
        items.append(f"{_recomputed(column.name)} AS {name}" if column.name in recomputed else name)
    for window in side.windows:
        args: list[exp.Expression] = [
            exp.column(window.time_column),
            exp.Literal.string(spark_duration(window.duration_us)),
        ]
        if window.slide_us:
            args.append(exp.Literal.string(spark_duration(window.slide_us)))
        call = spark_sql(exp.Anonymous(this="window", expressions=args))
        items.append(f"{call} AS {_sql_name(window.name)}")
    if anti_marker:
        items.append(f"TRUE AS {_sql_name(ANTI_MARKER)}")
    inner = ",\n    ".join(items)
    return f"(\n  SELECT\n    {inner}\n  FROM {read}\n) AS {alias}"


def _condition_sql(condition: exp.Expression) -> str:
    """A join's ON (or WHERE) condition, one conjunct a line (window fields as arithmetic)."""
    parts = []
    for part in conjuncts(condition):
        sql = job_sql(_window_field_arithmetic(part))
        parts.append(f"({sql})" if isinstance(part, exp.Or) else sql)
    return "\n  AND ".join(parts)


def _alias(expr: exp.Expression, name: str) -> str:
    return f"{job_sql(expr)} AS {_sql_name(name)}"


def _create(node: PlanNode, view: bool) -> str:
    what = "TEMPORARY VIEW" if view else "STREAMING TABLE"
    return f"CREATE {what} {_sql_name(node.name)} AS"


def relation_sql(plan: Plan, node: PlanNode, view: bool) -> str | None:
    """The SQL statement of a relation of the pipeline's SQL files, None for one written in
    Python (a stream, a dedup)."""
    return _relation_sql(node, plan, view)


@singledispatch
def _relation_sql(node: PlanNode, plan: Plan, view: bool) -> str | None:
    raise TypeError(f"no pipeline SQL for a {type(node).__name__}")  # pragma: no cover


@_relation_sql.register(StreamNode)
@_relation_sql.register(DedupNode)
def _(node: StreamNode | DedupNode, plan: Plan, view: bool) -> str | None:
    # pipeline.py writes it: a streaming table (``streams_lines``), a flow (``dedups_lines``)
    return None


@_relation_sql.register
def _(node: TableNode, plan: Plan, view: bool) -> str | None:
    return table_sql(node)


@_relation_sql.register
def join_sql(node: JoinNode, plan: Plan, view: bool) -> str:
    kind = node.kind
    lines = [
        "-- "
        + comment(
            f"join {node.name}: {node.left.relation} AS {node.left.alias} "
            f"{kind.keyword} JOIN {node.right.relation} AS {node.right.alias}"
        )[2:],
    ]
    for side in (node.left, node.right):
        rule = side.state
        state = rule.reason if rule.eviction == "never" else side.retention
        lines.append("-- " + comment(f"  {side.name} state ({side.alias}): {state}")[2:])
    if kind.drops_matched:
        lines.append("-- LEFT ANTI: a left outer join that keeps only the unmatched left rows,")
        lines.append("-- each emitted when the left state evicts it.")
    lines.append(_create(node, view))
    lines.append("SELECT")
    lines.append(",\n".join(f"  {_alias(c.expr, c.name)}" for c in node.output))
    lines.append("FROM " + _side_sql(plan, node.left, False))
    executed = JOIN_KINDS[node.executed_as].keyword
    lines.append(f"{executed} JOIN " + _side_sql(plan, node.right, kind.drops_matched))
    lines.append("ON " + _condition_sql(node.condition))
    where = []
    if kind.drops_matched:
        where.append(spark_sql(exp.column(ANTI_MARKER, table=node.right.alias)) + " IS NULL")
    if node.where is not None:  # above the join, as written: Spark's optimizer places it
        where.append(_condition_sql(node.where))
    if where:
        lines.append("WHERE " + "\n  AND ".join(where))
    return "\n".join(lines) + "\n"


def _marked_read(plan: Plan, relation: str, mark: InputWatermark | None) -> str:
    """An operator's input in FROM: with the watermark defined on a view's output, the
    WATERMARK clause on that view's read (Spark runs it with allowMultiple=false, which
    spark-pipeline.yml's configuration then holds)."""
    if mark is None:
        return _stream_read(plan, relation)
    column = _sql_name(mark.column)
    return f"STREAM({_sql_name(relation)}) WATERMARK {column} DELAY OF {_interval(mark.delay_ms)}"


@_relation_sql.register
def aggregate_sql(node: AggregateNode, plan: Plan, view: bool) -> str:
    lines = [
        "-- " + comment(f"aggregate {node.name} = {node.input} ({node.mode} output mode)")[2:],
        _create(node, view),
        "SELECT",
        ",\n".join(f"  {_alias(c.expr, c.name)}" for c in node.output),
        f"FROM {_marked_read(plan, node.input, node.input_watermark)} AS {_sql_name(node.alias)}",
    ]
    if node.where is not None:  # a Filter below the aggregate: Spark's optimizer places it
        lines.append("WHERE " + _condition_sql(node.where.condition))
    if node.group_by:
        lines.append("GROUP BY " + ", ".join(job_sql(k) for k in node.group_by))
    return "\n".join(lines) + "\n"


@_relation_sql.register
def view_sql(node: ViewNode, plan: Plan, view: bool) -> str:
    """A view: its items over its input under its alias, with its whole WHERE (Spark's
    optimizer places each conjunct, as the plan says)."""
    lines = [
        "-- " + comment(f"view {node.name} = {node.input} AS {node.alias}")[2:],
        _create(node, view),
        "SELECT",
        ",\n".join(f"  {_alias(c.expr, c.name)}" for c in node.output),
        f"FROM {_marked_read(plan, node.input, node.input_watermark)} AS {_sql_name(node.alias)}",
    ]
    if node.where is not None:
        lines.append("WHERE " + _condition_sql(node.where))
    return "\n".join(lines) + "\n"


@_relation_sql.register
def union_sql(node: UnionNode, plan: Plan, view: bool) -> str:
    """A union: ``UNION ALL`` of its inputs' every column, by position (the binder checked
    they have the same names and types in the same order), each stream input read with its
    own WATERMARK clause (each input keeps its own watermark node, as in the PySpark job)."""
    selects = [f"SELECT * FROM {_stream_read(plan, r)}" for r in node.relations]
    return (
        "\n".join(
            [
                "-- " + comment(f"union {node.name} = {' UNION ALL '.join(node.relations)}")[2:],
                _create(node, view),
                "\nUNION ALL\n".join(selects),
            ]
        )
        + "\n"
    )


@_relation_sql.register
def static_join_sql(node: StaticJoinNode, plan: Plan, view: bool) -> str:
    """A stream-static join: the stream side read with STREAM() (its watermark), the table
    by its name (a batch read), joined by the type as written (no LEFT ANTI marker: Spark
    runs a stream-static LEFT ANTI JOIN itself)."""
    lines = [
        "-- "
        + comment(
            f"join {node.name}: {node.left.relation} AS {node.left.alias} "
            f"{node.kind.keyword} JOIN {node.right.relation} AS {node.right.alias}"
        )[2:],
        f"-- stream-static (the table on the {node.static_side}): no state, no watermark",
        _create(node, view),
        "SELECT",
        ",\n".join(f"  {_alias(c.expr, c.name)}" for c in node.output),
        f"FROM {_stream_read(plan, node.left.relation)} AS {_sql_name(node.left.alias)}",
        f"{node.kind.keyword} JOIN {_stream_read(plan, node.right.relation)} "
        f"AS {_sql_name(node.right.alias)}",
        "ON " + _condition_sql(node.condition),
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- streams and sinks


def _python_header(title: str, spec_path: str) -> list[str]:
    return [
        '"""'
        + docstring_line(f"{title} Generated by sjoin from {spec_path}; do not edit.")
        + '"""',
        "",
        "from pyspark import pipelines as dp",
        "from pyspark.sql import DataFrame",
        "from pyspark.sql import functions as F",
        "",
        "# `spark` is the pipeline's session: spark-pipelines sets it in each module it loads",
        "",
    ]


def streams_lines(plan: Plan) -> list[str]:
    out: list[str] = []
    valued = [s for s in plan.streams if s.source is not None and _value_schema(s) != _schema(s)]
    valued = [s for s in valued if _value_schema(s)]
    out.extend(_dict_lines("SCHEMAS", ((s.name, _schema(s)) for s in plan.streams)))
    out.append("")
    if valued:
        out.extend(_dict_lines("VALUE_SCHEMAS", ((s.name, _value_schema(s)) for s in valued)))
        out.append("")
    for i, stream in enumerate(plan.streams):
        cols = ", ".join(column_ref(c.name) for c in stream.columns)
        out.extend(
            [
                "",
                f"@dp.table(name={table_ref(stream.name)})",
                f"def stream_{i}() -> DataFrame:",
                "    inputs: dict[str, DataFrame] = {}",
                *(
                    "    " + line
                    for line in (_read_input(stream, typed=False) if stream.source else [])
                ),
                f"    return inputs[{literal(stream.name)}].select({cols})",
                "",
            ]
        )
    return out


def dedup_method(node: DedupNode) -> str:
    return "dropDuplicatesWithinWatermark" if node.within_watermark else "dropDuplicates"


def dedups_lines(plan: Plan) -> list[str]:
    """Each dedup as a Python flow: SDP's SQL has no dropDuplicates on chosen columns (its
    SELECT DISTINCT deduplicates on every column) nor dropDuplicatesWithinWatermark.  A
    temporary view where a relation of the pipeline reads it (the chain up to the query
    root stays one streaming query, as for a join), else a streaming table.

    The flow builds the dedup and everything below it from the sources, as the PySpark
    job's build() does (the back end's own ``emit``), never from the pipeline's datasets:
    Spark Connect's planner analyses a Deduplicate's input (and a WithWatermark's) when the
    flow is registered, before any dataset of the pipeline exists, and a read of one fails
    there with TABLE_OR_VIEW_NOT_FOUND (checked on Spark 4.3.0;
    SparkConnectPlanner.transformDeduplicate).  sjoin reads the flow back from its
    declaration in sjoin-schemas.sql (``dedup_declaration``), which it checks against the
    flow's last dropDuplicates call."""
    out: list[str] = []
    for i, node in enumerate(plan.dedups):
        decorator = "temporary_view" if plan.readers(node.name) else "table"
        below = plan.closure(node.name)
        body = ["inputs: dict[str, DataFrame] = {}"]
        for stream in below:
            if isinstance(stream, StreamNode) and stream.source is not None:
                body.extend(_read_input(stream, typed=False))
        body.append("rels: dict[str, DataFrame] = {}")
        for relation in below:
            body.extend(emit(relation))
        body.append(f"return rels[{literal(node.name)}]")
        out.extend(
            [
                "",
                comment(f"dedup {node.name}: {dedup_method(node)}, built from the sources"),
                f"@dp.{decorator}(name={table_ref(node.name)})",
                f"def dedup_{i}() -> DataFrame:",
                *(f"    {line}" if line else "" for line in body),
                "",
            ]
        )
    return out


def sinks_lines(plan: Plan) -> list[str]:
    out: list[str] = []
    out.append("# SDP keeps each flow's checkpoint under the pipeline's storage: a sink's")
    out.append("# `checkpoint` clause is not used")
    for i, (sink, name) in enumerate(zip(plan.sinks, sink_names(plan), strict=True)):
        options = dict(sink.target.options)
        fmt = sink.target.format
        select = ""
        if fmt == "kafka":
            servers = options.pop("bootstrap_servers", None)
            if servers is not None:
                options["kafka.bootstrap.servers"] = servers
            key = options.pop("key", None)
            value = 'F.to_json(F.struct("*")).alias("value")'
            if key is not None:
                select = f'.select(F.col({column_ref(key)}).cast("string").alias("key"), {value})'
            else:
                select = f".select({value})"
        out.append("")
        out.append(comment(f"sink {i}: {sink.relation} to {fmt}"))
        out.append("dp.create_sink(")
        out.append(f"    name={literal(name)},")
        out.append(f"    format={literal(fmt)},")
        out.append("    options={")
        out.extend(f"        {literal(k)}: {literal(v)}," for k, v in options.items())
        out.append("    },")
        out.append(")")
        out.append("")
        out.append("")
        out.append(f"@dp.append_flow(target={literal(name)}, name={literal(name + '_flow')})")
        out.append(f"def {name}_flow() -> DataFrame:")
        out.append(f"    return spark.readStream.table({table_ref(sink.relation)}){select}")
        out.append("")
    return out


# ---------------------------------------------------------------------- the project


# How to run the project, as docs/pipelines.md says it (checked on Spark 4.3.0 by running a
# project moved after it was compiled, from another folder: SDP reads the libraries glob
# from this file's folder, the Spark server resolves the spec's relative paths against the
# folder `spark-pipelines` runs in, and refuses a relative `storage` with
# PIPELINE_STORAGE_ROOT_INVALID, so `storage` is the one absolute path of the project)
PIPELINE_YML_HEADER = (
    "# Run it from the folder the spec's relative paths are relative to:",
    "#   spark-pipelines run --spec PATH/TO/THIS/spark-pipeline.yml",
    "# (`spark-pipelines run` alone finds this file in the folder it runs in, or above it).",
    "# The project may be moved; `storage` may not be relative (SDP refuses it): it is",
    "# where the flows' checkpoints are kept, under the folder sjoin wrote; change it to keep",
    "# them elsewhere (a cluster's storage: s3a://..., hdfs://...).",
)


def pipeline_yml(plan: Plan, name: str, storage: str, spec_path: str) -> str:
    lines = [
        "# " + docstring_line(f"Generated by sjoin from {spec_path}; do not edit, recompile.")[:96],
        *PIPELINE_YML_HEADER,
        f"name: {literal(name)}",
        f"storage: {literal(storage)}",
    ]
    if plan.spark_conf:
        lines.append("# the Spark confs the spec sets (its `set` statements); nothing else")
        lines.append("configuration:")
        lines.extend(f"  {literal(k)}: {literal(v)}" for k, v in plan.spark_conf.items())
    lines += ["libraries:", "  - glob:", "      include: transformations/**"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- what SQL cannot say

SCHEMA_FILE = "sjoin-schemas.sql"


def _format_text(fmt: Format) -> str:
    """A source's or sink's format and options as .sjoin writes them."""
    options = ", ".join(f"{sjoin_name(k)} = {sjoin_string(v)}" for k, v in fmt.options)
    return f"{sjoin_name(fmt.format)} ({options})" if options else sjoin_name(fmt.format)


def _annotation(make: Callable[[], str], what: str, strict: bool) -> str:
    """One ``-- sjoin:`` line.  Text the .sjoin language cannot hold (a line break, a
    control character) raises ``Unwritable`` when ``strict``; else the line says, escaped,
    what it leaves out."""
    try:
        return "-- sjoin: " + make()
    except Unwritable as err:
        if strict:
            raise
        return "-- " + comment(f"not written ({what}): {err}")[2:]


def sjoin_lines(plan: Plan, strict: bool = True) -> list[str]:
    """The ``-- sjoin:`` lines of what a pipeline's SQL has no words for: the target Spark,
    the settings that are no Spark conf, and each sink."""
    lines = [f"-- sjoin: spark {plan.spark}"]
    for statement in plan.set_statements:

        def setting(statement: str = statement) -> str:
            string(statement)  # its text is .sjoin text: no line break, no control character
            return statement

        lines.append(_annotation(setting, "a setting", strict))
    for sink in plan.sinks:

        def written(sink: SinkNode = sink) -> str:
            text = f"sink {sjoin_name(sink.relation)} to {_format_text(sink.target)}"
            if sink.checkpoint is not None:
                text += f" checkpoint {sjoin_string(sink.checkpoint)}"
            return text

        lines.append(_annotation(written, f"the sink of {sink.relation}", strict))
    return lines


def stream_sql(stream: StreamNode, strict: bool = True) -> str:
    """A stream as the pipeline's SQL declares it: ``CREATE STREAMING TABLE name (cols)``,
    after a ``-- sjoin: from ...`` line for its source."""
    lines = []
    source = stream.source
    if source is not None:
        what = f"the source of {stream.name}"
        lines.append(_annotation(lambda: f"from {_format_text(source)}", what, strict))
    lines.append(f"CREATE STREAMING TABLE {_sql_name(stream.name)} (")
    cols = [f"  {_sql_name(c.name)} {c.type}" for c in stream.columns]
    lines.append(",\n".join(cols))
    lines.append(")")
    return "\n".join(lines) + "\n"


def table_sql(table: TableNode) -> str:
    """A static table as the pipeline's SQL defines it, the one form SDP runs and the SQL
    front end reads back (``sqllower._table_source``)::

        CREATE MATERIALIZED VIEW name (col TYPE, ...) AS
        SELECT CAST(col AS TYPE) AS col, ...
        FROM fmt.`path` WITH ('option' = 'value', ...)

    a batch dataset of the files, read without STREAM() by the stream-static joins.  Each
    column is cast to its declared type: SDP refuses a materialized view whose query's
    schema is not its declared one (USER_SPECIFIED_AND_INFERRED_SCHEMA_NOT_COMPATIBLE,
    checked on Spark 4.3.0: a CSV file's columns are strings, a JSON file's integers
    BIGINT), and the file's other columns are left out, as the PySpark job selects the
    declared ones.  The path is a back-quoted name (Spark's ``fmt.`path``` read of files,
    ResolveSQLOnFile), the other options of the source Spark's ``WITH (...)`` options of the
    read (passed to the reader: a CSV file's ``header``, checked on Spark 4.3.0); each
    through ``sql.spark_sql``.  The path is never an option too: Spark would read both."""
    fmt = table.source
    path = fmt.option("path")
    assert path is not None  # the binder requires a table's path (TABLE_FORMATS)
    lines = [
        "-- " + comment(f"table {table.name}: static, read in batch from {fmt.format}")[2:],
        f"CREATE MATERIALIZED VIEW {_sql_name(table.name)} (",
        ",\n".join(f"  {_sql_name(c.name)} {c.type}" for c in table.columns),
        ") AS",
        "SELECT",
        ",\n".join(
            f"  CAST({_sql_name(c.name)} AS {c.type}) AS {_sql_name(c.name)}" for c in table.columns
        ),
    ]
    read = f"FROM {_sql_name(fmt.format)}.{spark_sql(exp.Identifier(this=path, quoted=True))}"
    options = [(k, v) for k, v in fmt.options if k != "path"]
    if options:
        pairs = ", ".join(
            f"{spark_sql(exp.Literal.string(k))} = {spark_sql(exp.Literal.string(v))}"
            for k, v in options
        )
        read += f" WITH ({pairs})"
    lines.append(read)
    return "\n".join(lines) + "\n"


def dedup_declaration(plan: Plan, node: DedupNode, strict: bool = True) -> str:
    """A dedup as ``sjoin-schemas.sql`` declares the Python flow that runs it, for sjoin to
    read back (SDP never reads the file; ``sqllower.Lowering._dedup_declaration``)::

        -- sjoin: dedup ON (key, ...) [WITHIN WATERMARK]
        CREATE TEMPORARY VIEW name AS
        SELECT * FROM STREAM(input) [WATERMARK col DELAY OF INTERVAL ...] AS alias

    the flow's dataset as its decorator makes it (a temporary view where a relation reads
    the dedup, else a streaming table), reading its input as the SQL of a relation would
    (the stream's watermark, or a watermark on a view's output); the keys pass through
    ``sjointext.name``, the rest through ``sql.spark_sql``.  sjoin checks the declared keys
    against the flow's ``dropDuplicates`` call."""
    keys = ", ".join
    within = " WITHIN WATERMARK" if node.within_watermark else ""
    lines = [
        _annotation(
            lambda: f"dedup ON ({keys(sjoin_name(k) for k in node.keys)}){within}",
            f"the keys of {node.name}",
            strict,
        ),
        _create(node, bool(plan.readers(node.name))),
        f"SELECT * FROM {_marked_read(plan, node.input, node.input_watermark)} "
        f"AS {_sql_name(node.alias)}",
    ]
    return "\n".join(lines) + "\n"


def schema_sql(plan: Plan, spec_path: str) -> str:
    """``sjoin-schemas.sql`` of a compiled project: the target Spark, the settings that are
    no Spark conf, each stream's columns and source, each dedup of a Python flow
    (``dedup_declaration``), and the sinks, for sjoin to read the project back (`sjoin check
    DIR`); SDP never reads it (no libraries glob matches it).
    What a ``-- sjoin:`` line cannot hold is left out, and the file says so."""
    parts = [
        "-- " + comment(f"Generated by sjoin from {spec_path}: the streams' columns for sjoin")[2:],
        "-- (`sjoin check DIR` reads it; spark-pipelines does not: no libraries glob matches it)",
        *sjoin_lines(plan, strict=False),
        "",
    ]
    text = "\n".join(parts) + "\n"
    declared = [stream_sql(s, strict=False) for s in plan.streams]
    declared += [dedup_declaration(plan, d, strict=False) for d in plan.dedups]
    streams = ";\n\n".join(d.rstrip("\n") for d in declared)
    return text + (streams + ";\n" if streams else "")


_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.:/+\-]+")


def set_value_sql(value: str) -> str:
    """``value`` as the text after ``SET key =`` that Spark reads back as exactly ``value``:
    as written when it is plain (letters, digits, ``_ . : / + -``), else as one back-quoted
    name (``sql.spark_sql``), which Spark's SET unquotes (``SET k = `a``b``` sets ``a`b``)
    and SDP's statement splitter skips (a `;` or a quote in it ends nothing; checked on
    Spark 4.3.0).  Raw, Spark would keep the quotes of ``'UTC'``, trim spaces, and split a
    `;`; ``sqlparse.set_value`` reads it back."""
    if _PLAIN_VALUE.fullmatch(value):
        return value
    return spark_sql(exp.Identifier(this=value, quoted=True))


def pipeline_sql(plan: Plan, spec_path: str) -> str:
    """The whole spec as one pipeline SQL file (`sjoin fmt --to sql`): the settings (a SET
    per Spark conf), each stream and static table declared by its columns (``table_sql``),
    each join, aggregate, view, union and stream-static join as ``compile --target
    pipeline`` writes it, in the spec's order, and ``-- sjoin:`` lines for the rest.  Raises
    ``sjointext.Unwritable`` for text a ``-- sjoin:`` line or a SET cannot hold, and for a
    dedup (SQL has no dropDuplicates: the compiled project writes it in Python).  Nothing
    of the spec is left out silently."""
    head = [
        "-- " + comment(f"Generated by sjoin from {spec_path} (sjoin fmt --to sql)")[2:],
        *sjoin_lines(plan),
    ]
    statements = []
    for conf, value in plan.spark_conf.items():
        string(value)  # no line break, no control character
        statements.append(f"SET {conf} = {set_value_sql(value)}\n")
    statements += [_statement_sql(node, plan) for node in plan.nodes]
    body = ";\n\n".join(s.rstrip("\n") for s in statements)
    return "\n".join(head) + "\n\n" + body + ";\n"


@singledispatch
def _statement_sql(node: PlanNode, plan: Plan) -> str:
    """A relation's statement in the one pipeline SQL file: what ``compile --target pipeline``
    writes in its SQL files (``relation_sql``), for every kind but these."""
    text = relation_sql(plan, node, bool(plan.readers(node.name)))
    assert text is not None  # only a stream's and a dedup's is None: theirs follow
    return text


@_statement_sql.register
def _(node: StreamNode, plan: Plan) -> str:
    return stream_sql(node)  # declared by its columns


@_statement_sql.register
def _(node: DedupNode, plan: Plan) -> str:
    raise Unwritable(
        f"dedup `{node.name}` has no pipeline SQL: SQL's SELECT DISTINCT deduplicates "
        "on every column, and dropDuplicates on chosen columns (or within the "
        "watermark) needs a Python flow (`sjoin compile --target pipeline` writes one)"
    )


def compile_pipeline(
    plan: Plan, name: str, storage: str, spec_path: str = "<spec>", formatted: bool = True
) -> dict[str, str]:
    """The files of the SDP project for ``plan``: relative path -> text.  ``name`` is the
    pipeline's name, ``storage`` its storage root (an absolute URI: SDP keeps the flows'
    checkpoints there, and refuses a relative one; the rest of the project may move,
    ``PIPELINE_YML_HEADER``).  The plan must have no ``pipeline_refusals``.  ``formatted``: lay
    the Python module out with ruff (tests of many projects skip it).

    The joins and aggregates are SQL files, never Python flows: a Python flow's
    ``withWatermark`` analyses its input when the flow is registered, before any pipeline
    dataset exists, and fails with TABLE_OR_VIEW_NOT_FOUND (checked on Spark 4.3.0); SQL
    files are resolved with the whole graph, in any order.  A dedup, which SQL cannot write,
    is a Python flow built from the sources (``dedups_lines``)."""
    files = {"spark-pipeline.yml": pipeline_yml(plan, name, storage, spec_path)}
    files[SCHEMA_FILE] = schema_sql(plan, spec_path)
    module = [
        *_python_header("The pipeline's streams, sinks and flows.", spec_path),
        "",
        comment("---- one streaming table per stream, read from its `from` source"),
        *streams_lines(plan),
    ]
    if plan.dedups:
        module += [
            "",
            comment("---- each dedup: a Python flow (SDP's SQL has no dropDuplicates)"),
            *dedups_lines(plan),
        ]
    if plan.sinks:
        module += [
            "",
            comment("---- each sink: an SDP sink and the flow into it"),
            *sinks_lines(plan),
        ]
    text = "\n".join(module).rstrip() + "\n"
    files["transformations/pipeline.py"] = format_python(text) if formatted else text
    written: list[str] = []
    for node in plan.nodes:
        sql = relation_sql(plan, node, bool(plan.readers(node.name)))
        if sql is None:  # a stream or a dedup: the module above writes it
            continue
        written.append(sql)
    for i, sql in enumerate(written):
        files[f"transformations/relation_{i:03d}.sql"] = sql
    return files


def pipeline_notes(plan: Plan) -> list[str]:
    """What to know before running the project (`sjoin compile` prints it)."""
    notes = []
    for dedup in plan.dedups:
        notes.append(
            f"dedup `{dedup.name}` is {dedup_method(dedup)} on ({', '.join(dedup.keys)}): a "
            "pipeline's SQL has no such operator (its SELECT DISTINCT deduplicates on every "
            "column), so the project writes it as a Python flow in transformations/pipeline.py"
        )
    for name in plan.shared_watermarks:
        notes.append(
            f"stream `{name}` is read at several places of one query: the plan counts its "
            "watermark once, at the highest of its reads, as Spark 4.0+ does for a PySpark "
            "job's one withWatermark (Plan.shared_watermarks); the project's SQL writes a "
            "WATERMARK clause on each read, which Spark counts apart, so with the min policy "
            "the read whose filters keep the oldest rows holds the global watermark back, and "
            "rows can leave state and come out later than `sjoin run` shows"
        )
    needs = job_packages(plan)
    if needs:
        notes.append(
            "the pipeline needs Spark's connector packages (spark-submit's options come before "
            "`run`): spark-pipelines --packages " + ",".join(needs) + " run"
        )
    return notes
