"""Plan -> the text of a PySpark job (`sjoin compile`).

The job needs only pyspark.  It defines ``build(spark, inputs)`` (every relation by name;
watermarks, window projections, the join condition, LEFT ANTI's filter and the projections
live there), ``read_inputs(spark)`` (the spec's `from` sources) and ``main()`` (settings,
sinks, checkpoints).  The code is laid out as ruff formats it (line length 100).

User text reaches the code only through ``pytext``: SQL text (from sqlglot's Spark generator,
which quotes identifiers and strings for Spark), names, options and paths become string
literals with ``literal`` (a column name the DataFrame API parses as a path, with
``column_ref``), and everything shown to the reader becomes one-line comments with
``comment`` or docstring lines with ``docstring_line``.  No other f-string here interpolates
user text, so user text never becomes code (``tests/compiler/backends/test_injection.py``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable
from functools import singledispatch

from sqlglot import exp

from ...version import __version__
from ..describe.explain import predicate_text
from ..planning.plan import (
    AggregateNode,
    DedupNode,
    InputWatermark,
    JoinNode,
    Plan,
    PlanNode,
    Side,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..vocabulary import annotate
from ..vocabulary.expr import conjuncts
from ..vocabulary.model import JOIN_KINDS, KAFKA_RECORD_OPTIONS, Column, SparkVersion
from ..vocabulary.sql import spark_sql, written_sql
from ..vocabulary.types import exact_duration
from .connectors import DELTA_RELEASES, packages
from .pytext import column_ref, comment, docstring_line, literal

ANTI_MARKER = "__sjoin_matched"
SQL_WIDTH = 76  # split SQL text into several string pieces beyond this
PIECE_WIDTH = 86  # the longest piece: with 12 spaces of indentation and quotes, 100 columns


def spark_duration(us: int) -> str:
    """A duration as the interval string Spark parses, in the largest exact unit."""
    n, unit = exact_duration(us)
    return f"{n} {unit}"


def job_sql(node: exp.Expression) -> str:
    """Spark SQL for the generated job: window() durations become string literals, the only
    form Spark's window function accepts."""

    def fix(sub: exp.Expression) -> exp.Expression:
        if annotate.is_call(sub, "window"):
            args = [sub.expressions[0].copy()]
            for arg in sub.expressions[1:]:  # the binder gave each duration its micros
                args.append(exp.Literal.string(spark_duration(annotate.interval_micros(arg))))
            return exp.Anonymous(this="window", expressions=args)
        return sub  # pragma: no cover - specs write window() only as a whole key or item

    if not any(annotate.function(w) == "window" for w in node.find_all(exp.Anonymous)):
        return spark_sql(node)
    return spark_sql(node.transform(fix))


def _window_field_arithmetic(node: exp.Expression) -> exp.Expression:
    """``window(t, D).start`` / ``.end`` as arithmetic on ``t``, for join conditions: Spark
    cannot resolve window() inside a join condition (TimeWindowing rewrites only operators
    with one child; a join fails with an INTERNAL_ERROR), and a projected window struct
    would be a second event-time column.  TimeWindowing's tumbling start is
    ``t - pmod(t - offset, D)`` in microseconds."""

    def fix(sub: exp.Expression) -> exp.Expression:
        if not (isinstance(sub, exp.Dot) and annotate.is_call(sub.this, "window")):
            return sub
        args = sub.this.expressions
        duration = annotate.interval_micros(args[1])
        offset = annotate.interval_micros(args[3]) if len(args) > 3 else 0
        micros = exp.Anonymous(this="unix_micros", expressions=[args[0].copy()])
        shifted: exp.Expression = micros.copy()
        if offset:
            shifted = exp.Paren(this=exp.Sub(this=shifted, expression=exp.Literal.number(offset)))
        since = exp.Anonymous(this="pmod", expressions=[shifted, exp.Literal.number(duration)])
        start: exp.Expression = exp.Sub(this=micros, expression=since)
        if sub.expression.name.lower() == "end":
            start = exp.Add(this=start, expression=exp.Literal.number(duration))
        return exp.Anonymous(this="timestamp_micros", expressions=[start])

    if not any(annotate.is_call(dot.this, "window") for dot in node.find_all(exp.Dot)):
        return node  # nothing to rewrite: no copy of each of 100,000 conjuncts
    return node.transform(fix)


def condition_literal(node: exp.Expression) -> str:
    """The join condition as a string literal; a long one as implicitly concatenated pieces,
    one conjunct per line (ruff keeps that layout)."""
    parts = []
    for part in conjuncts(node):
        sql = job_sql(_window_field_arithmetic(part))
        parts.append(f"({sql})" if isinstance(part, exp.Or) else sql)
    whole = " AND ".join(parts)
    if len(whole) <= SQL_WIDTH:
        return literal(whole)
    pieces = [parts[0], *(" AND " + p for p in parts[1:])]
    return " ".join(literal(chunk) for p in pieces for chunk in _wrapped(p))


def sql_literal(sql: str) -> str:
    """Spark SQL text as a string literal; a long one as implicitly concatenated pieces, so
    that no line of the job passes ruff's line length."""
    return " ".join(literal(chunk) for chunk in _wrapped(sql))


def _wrapped(text: str) -> list[str]:
    """``text`` cut before spaces into pieces of at most PIECE_WIDTH characters where it can
    be (a longer word stays whole); the pieces concatenate to ``text`` exactly."""
    pieces: list[str] = []
    start = 0  # of the rest (an index, not a slice: a long text is not copied per piece)
    while len(text) - start > PIECE_WIDTH:
        cut = text.rfind(" ", start + 1, start + PIECE_WIDTH)
        if cut <= start:
            cut = text.find(" ", start + PIECE_WIDTH)
            if cut < 0:
                break
        pieces.append(text[start:cut])
        start = cut
    return [*pieces, text[start:]]


# ---------------------------------------------------------------------- build()


@singledispatch
def emit(node: PlanNode) -> list[str]:
    raise NotImplementedError(type(node).__name__)  # pragma: no cover


@emit.register
def _(node: StreamNode) -> list[str]:
    cols = ", ".join(column_ref(c.name) for c in node.columns)
    title = f"stream {node.name}"
    df = f"inputs[{literal(node.name)}].select({cols})"
    if node.watermark_column is not None:
        delay = spark_duration((node.delay_ms or 0) * 1000)
        title += f": watermark {node.watermark_column} delay {delay}"
        df += f".withWatermark({column_ref(node.watermark_column)}, {literal(delay)})"
    return [comment(title), f"rels[{literal(node.name)}] = {df}", ""]


def _side_comment(side: Side) -> list[str]:
    rule = side.state
    if rule.eviction == "never":
        state = f"never evicted: {rule.reason}"
    else:
        state = f"evicted when {predicate_text(side)}"
    return [comment(f"  {side.name} state ({side.alias}): {state}")]


def _recomputed(time_column: str) -> str:
    """Spark SQL that recomputes a time column beside its projected window, the same
    instant without the watermark metadata: the window struct is then the side's one
    event-time column (Spark 3.5+ fails with MULTIPLE_EVENT_TIME_COLUMNS on two).

    Re-aliasing the column with empty metadata (``F.col(t).alias(t, metadata={})``) is not
    enough: an alias whose child is a bare attribute lets the optimizer's
    ``PushDownLeftSemiAntiJoin`` push a LEFT SEMI join below that Project, onto the column
    that still carries the mark (checked on Spark 4.3.0; docs/language.md, "Window keys").
    A computed expression keeps the Project, and the join, where they are written."""
    column = exp.column(time_column)
    micros = exp.Anonymous(this="unix_micros", expressions=[column])
    return spark_sql(exp.Anonymous(this="timestamp_micros", expressions=[micros]))


def _marked(relation: str, mark: InputWatermark | None) -> str:
    """An operator's input: the relation, with ``.withWatermark`` on it where the plan defines
    a watermark on its output (Spark's EventTimeWatermark: it marks this column only)."""
    source = f"rels[{literal(relation)}]"
    if mark is None:
        return source
    delay = spark_duration(mark.delay_ms * 1000)
    return source + f".withWatermark({column_ref(mark.column)}, {literal(delay)})"


def _mark_comment(relation: str, mark: InputWatermark | None) -> list[str]:
    if mark is None:
        return []
    delay = spark_duration(mark.delay_ms * 1000)
    return [comment(f"  watermark {mark.column} delay {delay} on {relation}")]


def _side_frame(side: Side, anti_marker: bool) -> list[str]:
    """The expression of one join input: projected windows, stripped time columns, alias."""
    steps = [_marked(side.relation, side.input_watermark)]
    for window in side.windows:
        args = [column_ref(window.time_column), literal(spark_duration(window.duration_us))]
        if window.slide_us:
            args.append(literal(spark_duration(window.slide_us)))
        steps.append(f".withColumn({literal(window.name)}, F.window({', '.join(args)}))")
    for time_column in dict.fromkeys(w.time_column for w in side.windows):
        steps.append(
            f".withColumn({literal(time_column)}, F.expr({literal(_recomputed(time_column))}))"
        )
    if anti_marker:
        steps.append(f".withColumn({literal(ANTI_MARKER)}, F.lit(True))")
    steps.append(f".alias({literal(side.alias)})")
    return ["".join(steps)]


@emit.register
def _(node: JoinNode) -> list[str]:
    kind = node.kind.keyword
    keys = ", ".join(f"{written_sql(a)} = {written_sql(b)}" for a, b in node.keys)
    lines = [
        comment(
            f"join {node.name} = {node.left.relation} AS {node.left.alias} {kind} JOIN "
            f"{node.right.relation} AS {node.right.alias}"
        ),
        comment(f"  keys: {keys or '(none)'}"),
        *_side_comment(node.left),
        *_side_comment(node.right),
        *_mark_comment(node.left.relation, node.left.input_watermark),
        *_mark_comment(node.right.relation, node.right.input_watermark),
    ]
    if node.kind.drops_matched:
        lines.append(
            comment("  LEFT ANTI: a left outer join that keeps only the unmatched left rows,")
        )
        lines.append(comment("  each emitted when the left state evicts it."))
    left = _side_frame(node.left, False)
    right = _side_frame(node.right, node.kind.drops_matched)
    lines.append("left = " + left[0])
    lines.extend(left[1:])
    lines.append("right = " + right[0])
    lines.extend(right[1:])
    condition = condition_literal(node.condition)
    how = node.executed_as  # DataFrame.join's `how` names are sjoin's join types
    lines.append("joined = left.join(")
    lines.append("    right,")
    lines.append(f"    F.expr({condition}),")
    lines.append(f"    {literal(how)},")
    lines.append(")")
    if node.kind.drops_matched:
        marker = column_ref(node.right.alias, ANTI_MARKER)
        lines.append(f"joined = joined.where(F.col({marker}).isNull())")
    if node.where is not None:  # Spark's optimizer places its conjuncts, as the plan says
        lines.append(f"joined = joined.where(F.expr({condition_literal(node.where)}))")
    lines.append(f"rels[{literal(node.name)}] = joined.select(")
    for column in node.output:
        sql = sql_literal(job_sql(column.expr))
        lines.append(f"    F.expr({sql}).alias({literal(column.name)}),")
    lines.append(")")
    lines.append("")
    return lines


@emit.register
def _(node: AggregateNode) -> list[str]:
    lines = [comment(f"aggregate {node.name} = {node.input} ({node.mode} output mode)")]
    keys = []
    for i, key in enumerate(node.group_by):
        item = next((o for o in node.output if o.expr == key), None)
        name = item.name if item is not None else f"__key_{i}"
        keys.append(f"F.expr({sql_literal(job_sql(key))}).alias({literal(name)})")
    aggs = [
        f"F.expr({sql_literal(job_sql(o.expr))}).alias({literal(o.name)})"
        for o in node.output
        if not any(o.expr == key for key in node.group_by)
    ]
    lines.extend(_mark_comment(node.input, node.input_watermark))
    source = _marked(node.input, node.input_watermark)
    source = f"{source}.alias({literal(node.alias)})"
    if node.where is not None:  # a Filter below the aggregate: Spark's optimizer places it
        source += f".where(F.expr({sql_literal(job_sql(node.where.condition))}))"
    lines.append(f"grouped = {source}.groupBy(")
    lines.extend(f"    {k}," for k in keys)
    lines.append(")")
    lines.append("rels[" + literal(node.name) + "] = grouped.agg(")
    lines.extend(f"    {a}," for a in aggs)
    lines.append(").select(" + ", ".join(column_ref(o.name) for o in node.output) + ")")
    lines.append("")
    return lines


@emit.register
def _(node: DedupNode) -> list[str]:
    """``dropDuplicates`` / ``dropDuplicatesWithinWatermark``: the dedup columns are names
    (Spark resolves each against the input's columns, never parsing it), so each is a
    Python string literal."""
    method = "dropDuplicatesWithinWatermark" if node.within_watermark else "dropDuplicates"
    within = " WITHIN WATERMARK" if node.within_watermark else ""
    lines = [
        comment(f"dedup {node.name} = {node.input} ON ({', '.join(node.keys)}){within}"),
        comment(f"  state: {_dedup_state(node)}"),
        *_mark_comment(node.input, node.input_watermark),
    ]
    source = _marked(node.input, node.input_watermark)
    keys = ", ".join(literal(k) for k in node.keys)
    lines.append(f"rels[{literal(node.name)}] = {source}.{method}([{keys}])")
    lines.append("")
    return lines


@emit.register
def _(node: UnionNode) -> list[str]:
    """``DataFrame.union``: by position, the first input's names and metadata (the binder
    checked the inputs have the same names and types in the same order, so ``unionByName``
    would read the same); each input keeps its own watermark node below it."""
    first, *rest = node.relations
    df = f"rels[{literal(first)}]" + "".join(f".union(rels[{literal(r)}])" for r in rest)
    pushed = []
    if node.pushed_join is not None:  # the joins Spark's optimizer would make of the written one
        join = node.pushed_join
        pushed = [
            comment(f"  {JOIN_KINDS[join.how].keyword} JOIN {node.name} over union {join.union},"),
            comment(f"  one join per input of {join.union} as Spark's {join.rule} runs it"),
        ]
    return [
        comment(f"union {node.name} = {' UNION ALL '.join(node.relations)}"),
        *pushed,
        f"rels[{literal(node.name)}] = {df}",
        "",
    ]


@emit.register
def _(node: ViewNode) -> list[str]:
    """A view: its input under its alias, ``.where`` with its whole WHERE (Spark's optimizer
    places each conjunct, as the plan says), then ``.select`` of its items."""
    lines = [comment(f"view {node.name} = {node.input} AS {node.alias}")]
    lines.extend(_mark_comment(node.input, node.input_watermark))
    source = f"{_marked(node.input, node.input_watermark)}.alias({literal(node.alias)})"
    if node.where is not None:
        source += f".where(F.expr({sql_literal(job_sql(node.where))}))"
    lines.append(f"rels[{literal(node.name)}] = {source}.select(")
    for column in node.output:
        lines.append(
            f"    F.expr({sql_literal(job_sql(column.expr))}).alias({literal(column.name)}),"
        )
    lines.append(")")
    lines.append("")
    return lines


@emit.register
def _(node: TableNode) -> list[str]:
    """A table in a pipeline's Python flow (no DELTA_SCHEMAS there): its columns selected."""
    return _table_lines(node, False)


def _table_lines(node: TableNode, typed: bool) -> list[str]:
    """A static table: ``spark.read`` of its source, or the DataFrame ``inputs`` gives it
    (a test's, `sjoin verify`'s); Spark plans the read again in each micro-batch.  A Delta
    table refuses a declared schema and reads its own: ``typed`` (Spark 3.4+) reconciles it
    to the spec's columns and types (``_typed_read``), else its columns are selected."""
    name = literal(node.name)
    delta = node.source.format == "delta"
    reader = [
        f"spark.read.format({literal(node.source.format)})",
        *([] if delta else [f".schema({literal(_schema(node))})"]),
        *(f".option({literal(k)}, {literal(v)})" for k, v in node.source.options),
        ".load()",
        *(_typed_read(node, typed) if delta else []),
    ]
    return [
        comment(f"table {node.name}: static, read in batch from {node.source.format}"),
        f"rels[{name}] = inputs[{name}] if {name} in inputs else (",
        *(f"    {part}" for part in reader),
        ")",
        "",
    ]


@emit.register
def _(node: StaticJoinNode) -> list[str]:
    keys = ", ".join(f"{written_sql(a)} = {written_sql(b)}" for a, b in node.keys)
    lines = [
        comment(
            f"join {node.name} = {node.left.relation} AS {node.left.alias} "
            f"{node.kind.keyword} JOIN {node.right.relation} AS {node.right.alias}"
        ),
        comment(f"  stream-static (the table on the {node.static_side}): no state, no watermark"),
        comment(f"  keys: {keys or '(none)'}"),
        f"left = rels[{literal(node.left.relation)}].alias({literal(node.left.alias)})",
        f"right = rels[{literal(node.right.relation)}].alias({literal(node.right.alias)})",
        "joined = left.join(",
        "    right,",
        f"    F.expr({condition_literal(node.condition)}),",
        f"    {literal(node.join_type)},",
        ")",
        f"rels[{literal(node.name)}] = joined.select(",
    ]
    for column in node.output:
        sql = sql_literal(job_sql(column.expr))
        lines.append(f"    F.expr({sql}).alias({literal(column.name)}),")
    lines.append(")")
    lines.append("")
    return lines


# ---------------------------------------------------------------------- the module


def _schema(node: StreamNode | TableNode) -> str:
    return ", ".join(f"`{c.name.replace('`', '``')}` {c.type}" for c in node.columns)


def _long_literal(text: str, width: int = 60) -> str:
    """A string literal; a long one as implicitly concatenated pieces cut after '.', ',' or
    ' ' (ruff lays the pieces out one per line), so no line of the job is too long."""
    if len(text) <= width:
        return literal(text)
    pieces, start = [], 0
    while len(text) - start > width:
        cut = max(text.rfind(sep, start, start + width) for sep in (". ", ".", ", ", " "))
        cut = start + width if cut <= start else cut + 1
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return "(" + " ".join(literal(p) for p in pieces) + ")"


def _assumed_conf_lines(plan: Plan) -> list[str]:
    """ASSUMED_CONF: each result-changing conf the spec leaves to the cluster, with the value
    the plan was made for and the `set` statement that would pin it (main() checks them)."""
    lines = [
        "# the confs the results depend on that the spec leaves to the cluster: the value sjoin",
        "# planned for, and the `set` statement that pins it; main() warns where they differ",
        "ASSUMED_CONF: dict[str, tuple[str, str]] = {",
    ]
    for key, (value, pin) in plan.assumed_conf.items():
        lines.append(f"    {literal(key)}: ({_long_literal(value)}, {literal(pin)}),")
    lines.append("}")
    lines.append("# names of UTC that a cluster may report for spark.sql.session.timeZone")
    lines.append('UTC_NAMES = {"UTC", "Etc/UTC", "GMT", "Etc/GMT", "Z", "+00:00", "UCT", "Zulu"}')
    return lines


def _dict_lines(name: str, items: Iterable[tuple[str, str]]) -> list[str]:
    lines = [f"{name} = {{"]
    lines.extend(f"    {literal(k)}: {_long_literal(v)}," for k, v in items)
    lines.append("}")
    return lines


def _read_input(node: StreamNode, typed: bool) -> list[str]:
    src = node.source
    name = literal(node.name)
    assert src is not None  # a stream without one: read_inputs raises, a pipeline refuses it
    options = dict(src.options)
    fmt = src.format
    out = [comment(f"{node.name}: {fmt}")]
    if fmt == "kafka":
        servers = options.pop("bootstrap_servers", None) or options.pop(
            "kafka.bootstrap.servers", ""
        )
        topic = options.pop("topic", None)
        payload = options.pop("format", "json")
        for own in KAFKA_RECORD_OPTIONS:  # sjoin's own: never an option of Spark's source
            options.pop(own, None)
        reader = [
            'spark.readStream.format("kafka")',
            f'.option("kafka.bootstrap.servers", {literal(servers)})',
        ]
        if topic is not None:
            reader.append(f'.option("subscribe", {literal(topic)})')
        reader.extend(f".option({literal(k)}, {literal(v)})" for k, v in options.items())
        reader.append(".load()")
        reader.extend(_kafka_columns(node, payload))
        mapped = src.record_columns()
        if mapped:
            said = ", ".join(f"{column} = {field}" for column, field in mapped.items())
            out.append(comment(f"  from each record: {said}; the rest from its value"))
    elif fmt in ("socket",):
        reader = ['spark.readStream.format("socket")']
        reader.extend(f".option({literal(k)}, {literal(v)})" for k, v in options.items())
        reader.append(".load()")
        reader.append(f'.select(F.from_json("value", SCHEMAS[{name}]).alias("row"))')
        reader.append('.select("row.*")')
    elif fmt == "rate":
        reader = ['spark.readStream.format("rate")']
        reader.extend(f".option({literal(k)}, {literal(v)})" for k, v in options.items())
        reader.append(".load()")
    else:
        path = options.pop("path", None)
        table = options.pop("table", None)
        reader = [f"spark.readStream.format({literal(fmt)})"]
        if fmt != "delta":  # Delta refuses a schema: the table's own (_typed_read)
            reader.append(f".schema(SCHEMAS[{name}])")
        reader.extend(f".option({literal(k)}, {literal(v)})" for k, v in options.items())
        reader.append(
            f".table({literal(table)})" if table is not None else f".load({literal(path or '')})"
        )
        if fmt == "delta":
            if typed:
                reader.extend(_typed_read(node, typed))
            else:
                out.append(comment("  Delta reads the table's own schema; build() selects columns"))
    out.append(f"inputs[{name}] = (")
    out.extend("    " + r for r in reader)
    out.append(")")
    return out


def _kafka_columns(node: StreamNode, payload: str) -> list[str]:
    """The stream's columns from Kafka's records: the value parsed with ``from_json`` (or
    ``from_csv``) by the schema of the columns it holds, and the columns the source maps to
    the record's ``timestamp`` and ``key`` (the key as UTF-8 text) taken from there."""
    mapped = node.source.record_columns() if node.source is not None else {}
    name = literal(node.name)
    schema = f"VALUE_SCHEMAS[{name}]" if mapped else f"SCHEMAS[{name}]"
    function = "F.from_json" if payload == "json" else "F.from_csv"
    parse = f'{function}(F.col("value").cast("string"), {schema}).alias("row")'
    if not mapped:
        return [f".select({parse})", '.select("row.*")']
    values = [c for c in node.columns if c.name not in mapped]
    fields = {"timestamp": 'F.col("timestamp")', "key": 'F.col("key").cast("string")'}
    items = [parse] if values else []
    items += [f"{fields[field]}.alias({literal(column)})" for column, field in mapped.items()]
    kept = (['"row.*"'] if values else []) + [column_ref(column) for column in mapped]
    return [
        ".select(",
        *(f"    {item}," for item in items),
        ")",
        f".select({', '.join(kept)})",
    ]


def _value_schema(node: StreamNode) -> str:
    """The schema of the columns a Kafka stream reads from the record's value."""
    mapped = node.source.record_columns() if node.source is not None else {}
    return ", ".join(
        f"`{c.name.replace('`', '``')}` {c.type}" for c in node.columns if c.name not in mapped
    )


def _sink_lines(plan: Plan) -> list[str]:
    lines: list[str] = []
    trigger = plan.settings.trigger
    for sink in plan.sinks:
        options = dict(sink.target.options)
        fmt = sink.target.format
        if fmt == "kafka":
            servers = options.pop("bootstrap_servers", None)
            if servers is not None:
                options["kafka.bootstrap.servers"] = servers
        writer = [f"rels[{literal(sink.relation)}]"]
        if fmt == "kafka":
            # each row as one record: the JSON of every column; the `key` option's column as
            # the record key (text), else no key
            key = options.pop("key", None)
            value = 'F.to_json(F.struct("*")).alias("value")'
            if key is not None:
                writer.append(
                    f'.select(F.col({column_ref(key)}).cast("string").alias("key"), {value})'
                )
            else:
                writer.append(f".select({value})")
        writer.append(".writeStream")
        writer.append(f".format({literal(fmt)})")
        writer.append(f".outputMode({literal(sink.mode)})")
        writer.extend(
            f".option({literal(k)}, {literal(v)})"
            for k, v in options.items()
            if not (fmt == "delta" and k == "table")
        )
        if sink.checkpoint is not None:
            writer.append(f'.option("checkpointLocation", {literal(sink.checkpoint)})')
        if trigger == "available_now":
            writer.append(".trigger(availableNow=True)")
        elif trigger == "once":
            writer.append(".trigger(once=True)")
        elif trigger:
            writer.append(f".trigger(processingTime={literal(trigger)})")
        writer.append(f".queryName({literal(sink.relation)})")
        table = options.get("table") if fmt == "delta" else None
        writer.append(f".toTable({literal(table)})" if table is not None else ".start()")
        lines.append("queries.append(")
        lines.extend("    " + w for w in writer)
        lines.append(")")
    return lines


def job_formats(plan: Plan) -> set[str]:
    """The formats of the spec's sources and sinks."""
    formats = {s.source.format for s in plan.streams if s.source is not None}
    formats |= {t.source.format for t in plan.tables}
    return formats | {sink.target.format for sink in plan.sinks}


def job_packages(plan: Plan) -> list[str]:
    """The Maven packages the job needs beyond pyspark, for the Spark version it targets."""
    return packages(str(plan.spark), job_formats(plan))


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _packages_note(plan: Plan, needs: list[str]) -> list[str]:
    lines = []
    if needs:
        lines += [
            f"Needs these Maven packages on Spark {plan.spark} (pyspark ships none; use the",
            "connector of your cluster's exact Spark version):",
            *(f"  {p}" for p in needs),
            f"Run it with: spark-submit --packages {','.join(needs)} job.py",
        ]
    if "delta" in job_formats(plan) and not any(p.startswith("io.delta:") for p in needs):
        lines.append(
            f"Delta Lake has no release built on Spark {plan.spark}: "
            f"its newest release is built on Spark {max(DELTA_RELEASES, key=_version_key)}."
        )
    if "delta" in job_formats(plan):
        lines += [
            "Delta Lake reads and writes only in a session started with its SQL extension",
            "and catalog; main() starts the session with DELTA_SESSION_CONF, which names them.",
        ]
    return lines


# Delta Lake refuses every read and write (even by path) in a session without these; they
# are static confs, so they are set when the session starts.
DELTA_SESSION_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def compile_pyspark(plan: Plan, spec_path: str = "<spec>", formatted: bool = True) -> str:
    """The text of the PySpark job for ``plan`` (laid out by ruff unless ``formatted`` is
    false, which property tests use to stay fast): its docstring, imports and constants,
    then ``build``, ``read_inputs``, ``start_sinks``, ``check_conf`` and ``main``."""
    needs = job_packages(plan)
    delta = "delta" in job_formats(plan)
    sinks = _sink_lines(plan)
    out = [
        _job_docstring(plan, spec_path, needs),
        "",
        "# the Spark this job was planned for, which `sjoin check job.py` reads back",
        comment(f"sjoin: spark {plan.spark}"),
        "",
        *_IMPORTS,
        *_constant_lines(plan, needs, delta),
        "",
        *_build_lines(plan),
        "",
        "",
        *_read_inputs_lines(plan),
        "",
        "",
        "def start_sinks(rels: dict[str, DataFrame]) -> list[StreamingQuery]:",
        '    """Start the query of every sink of the spec."""',
        "    queries: list[StreamingQuery] = []",
        *("    " + line for line in sinks),
        "    return queries",
        "",
        "",
        *_CHECK_CONF,
        "",
        "",
        *_main_lines(spec_path, delta, bool(sinks)),
        "",
        "",
        'if __name__ == "__main__":',
        "    main()",
        "",
    ]
    for unused, uses in ((_F_IMPORT, _USES_F), (_T_IMPORT, _USES_T)):
        code = [line for line in out if line != unused]
        if not any(uses.search(line) for line in code):  # e.g. F in a job of dedups alone
            out = code
    text = "\n".join(out)
    return format_python(text) if formatted else text


_F_IMPORT = "from pyspark.sql import functions as F"
_USES_F = re.compile(r"(?<![\w.])F\.")
_T_IMPORT = "from pyspark.sql import types as T"
_USES_T = re.compile(r"(?<![\w.])T\.")

_IMPORTS = [
    "from __future__ import annotations",
    "",
    "import sys",
    "",
    "from pyspark.sql import DataFrame, SparkSession",
    _F_IMPORT,
    _T_IMPORT,
    "from pyspark.sql.streaming import StreamingQuery",
    "",
]

# the job's check_conf, the same in every job
_CHECK_CONF = [
    "def check_conf(spark: SparkSession) -> None:",
    '    """Warn, on stderr, about each conf of ASSUMED_CONF whose value here differs',
    '    from the one sjoin planned for: results would differ from `sjoin run`\'s."""',
    "    for key, (planned, pin) in ASSUMED_CONF.items():",
    "        found = spark.conf.get(key, None)",
    "        if found is None or found.lower() == planned.lower():",
    "            continue",
    '        if key == "spark.sql.session.timeZone" and {found, planned} <= UTC_NAMES:',
    "            continue",
    "        print(",
    '            f"sjoin: warning: {key} is {found!r} on this cluster, but the spec was "',
    '            f"planned and tested for {planned!r}; add `{pin}` to the spec to pin it",',
    "            file=sys.stderr,",
    "        )",
]


def _dedup_state(node: DedupNode) -> str:
    state = node.state
    if state.eviction == "never":
        return f"never evicted: {state.reason}"
    if state.eviction == "key":
        return f"a key is evicted when {state.column} <= watermark"
    return f"a key expires at {state.column} + {spark_duration((state.offset_ms or 0) * 1000)}"


def _dedup_facts(plan: Plan) -> list[str]:
    """The docstring's lines of each dedup's state (none without a dedup: a job without one
    is as before)."""
    if not plan.dedups:
        return []
    return ["State of each dedup:", *(f"  {d.name}: {_dedup_state(d)}" for d in plan.dedups)]


def _job_docstring(plan: Plan, spec_path: str, needs: list[str]) -> str:
    """The job's docstring: where it comes from, its target Spark, each join side's state,
    the pipeline checks and the packages it needs."""
    facts = []
    for join in plan.joins:
        for side in (join.left, join.right):
            what = (
                f"never evicted ({side.state.reason})"
                if side.state.eviction == "never"
                else f"evicted when {predicate_text(side)}"
            )
            facts.append(f"  {join.name}, {side.alias}: {what}")
    header = [
        f"Generated by sjoin {__version__} from {spec_path}; do not edit, recompile the spec.",
        "",
        f"Target: Spark {plan.spark}. State of each join side:",
        *facts,
        *_dedup_facts(plan),
        "Pipeline checks:",
        *(f"  [{c.verdict}] {c.name}: {c.detail}" for c in plan.checks),
        *_packages_note(plan, needs),
    ]
    return '"""' + "\n".join(docstring_line(h) for h in header).rstrip() + '\n"""'


def _constant_lines(plan: Plan, needs: list[str], delta: bool) -> list[str]:
    """The job's constants: SPARK_CONF, ASSUMED_CONF, DELTA_SESSION_CONF (when it reads or
    writes Delta), PACKAGES, SCHEMAS and VALUE_SCHEMAS (when a Kafka value is read as other
    columns than the stream's)."""
    streams = plan.streams
    valued = [s for s in streams if s.source is not None and _value_schema(s) != _schema(s)]
    valued = [s for s in valued if _value_schema(s)]  # a value read at all
    out = [
        "# the Spark confs the spec sets (its `set` statements); the cluster keeps its own",
        "# value of every other conf (shuffle partitions, state store provider, ...)",
        *_dict_lines("SPARK_CONF", plan.spark_conf.items()),
        "",
        *_assumed_conf_lines(plan),
        "",
    ]
    if delta:
        out += [
            "# Delta Lake's SQL extension and catalog, which its reads and writes need",
            *_dict_lines("DELTA_SESSION_CONF", DELTA_SESSION_CONF.items()),
            "",
        ]
    out += [
        "# Maven packages for spark-submit --packages (see the docstring)",
        "PACKAGES: list[str] = [" + ", ".join(literal(p) for p in needs) + "]",
        "",
        *_dict_lines("SCHEMAS", ((s.name, _schema(s)) for s in streams)),
        "",
    ]
    if valued:
        out += [
            "# what Kafka sources read from each record's value (the other columns come",
            "# from the record's timestamp or key)",
            *_dict_lines("VALUE_SCHEMAS", ((s.name, _value_schema(s)) for s in valued)),
            "",
        ]
    sources: list[StreamNode | TableNode] = [*streams, *plan.tables]
    deltas = [n for n in sources if n.source is not None and n.source.format == "delta"]
    if deltas and _typed_reads(plan):
        out += [
            "# each Delta source's columns and types in the spec: a Delta table carries its own",
            "# schema, whose columns DataFrame.to casts to these (and fails on an unsafe cast)",
            "DELTA_SCHEMAS = {",
            *(f"    {literal(n.name)}: {_struct_type(n.columns)}," for n in deltas),
            "}",
            "",
        ]
    return out


# a declared column's type (``SqlType.name``) as its pyspark.sql.types class
_TYPE_CLASSES = {
    "boolean": "BooleanType",
    "tinyint": "ByteType",
    "smallint": "ShortType",
    "int": "IntegerType",
    "bigint": "LongType",
    "float": "FloatType",
    "double": "DoubleType",
    "decimal": "DecimalType",
    "string": "StringType",
    "date": "DateType",
    "timestamp": "TimestampType",
    "binary": "BinaryType",
}


def _struct_type(columns: Iterable[Column]) -> str:
    """The columns as a ``StructType`` built in Python (``StructType.fromDDL`` would ask a
    server to parse the DDL: a job read offline has none)."""
    fields = []
    for c in columns:
        kind = _TYPE_CLASSES[c.type.name]  # every type a column can be declared with
        params = ", ".join(map(str, c.type.params))
        fields.append(f"T.StructField({literal(c.name)}, T.{kind}({params}))")
    return "T.StructType([" + ", ".join(fields) + "])"


def _build_lines(plan: Plan) -> list[str]:
    """The job's ``build``: every relation from the streams' DataFrames, in plan order."""
    typed = _typed_reads(plan)
    body = [
        line
        for node in plan.nodes
        for line in (_table_lines(node, typed) if isinstance(node, TableNode) else emit(node))
    ]
    return [
        "def build(spark: SparkSession, inputs: dict[str, DataFrame]) -> dict[str, DataFrame]:",
        '    """Every relation of the spec by name, from streaming DataFrames of its streams."""',
        "    rels: dict[str, DataFrame] = {}",
        *("    " + line if line else "" for line in body),
        "    return rels",
    ]


def _typed_reads(plan: Plan) -> bool:
    """Whether the job gives a Delta read the spec's types with ``DataFrame.to`` (Spark
    3.4+; a job for 3.3 selects the table's columns as they are)."""
    version = SparkVersion.parse(str(plan.spark))
    return version is not None and version.at_least(3, 4)


def _typed_read(node: StreamNode | TableNode, typed: bool) -> list[str]:
    """After the read of a source that carries its own schema (Delta): a ``.select`` of the
    spec's columns (Spark fails the query when the table lacks one), then, with ``typed``
    (Spark 3.4+), ``.to(...)`` of their types, so that the DataFrame has the types the plan
    was made for (Spark fails the query on a type it cannot cast safely) and `sjoin check
    job.py` reads them back with no server.  Both, since ``.to`` alone reads a missing
    column as nulls (checked on Spark 4.3: tests/integration/spark/test_typed_read_on_spark.py)."""
    select = f".select({', '.join(column_ref(c.name) for c in node.columns)})"
    return [select, f".to(DELTA_SCHEMAS[{literal(node.name)}])"] if typed else [select]


def _read_inputs_lines(plan: Plan) -> list[str]:
    """The job's ``read_inputs``: each stream's source, or an error naming the streams
    without one."""
    out = [
        "def read_inputs(spark: SparkSession) -> dict[str, DataFrame]:",
        '    """The streaming sources named by the spec\'s `from` clauses."""',
    ]
    missing = [s.name for s in plan.streams if s.source is None]
    if missing:
        out.append("    missing = [" + ", ".join(literal(name) for name in missing) + "]")
        out.append('    raise RuntimeError(f"streams without a `from` source: {missing}")')
        return out
    out.append("    inputs: dict[str, DataFrame] = {}")
    typed = _typed_reads(plan)
    out.extend("    " + line for node in plan.streams for line in _read_input(node, typed))
    out.append("    return inputs")
    return out


def _main_lines(spec_path: str, delta: bool, sinks: bool) -> list[str]:
    """The job's ``main``: the session with the spec's confs, the sinks started."""
    out = [
        "def main() -> None:",
        '    """Start every sink of the spec and wait."""',
        "    builder = SparkSession.builder.appName(" + literal(f"sjoin {spec_path}") + ")",
        "    for key, value in SPARK_CONF.items():",
        "        builder = builder.config(key, value)",
    ]
    if delta:
        out += [
            "    for key, value in DELTA_SESSION_CONF.items():",
            "        builder = builder.config(key, value)",
        ]
    out += [
        "    spark = builder.getOrCreate()",
        "    check_conf(spark)",
        "    rels = build(spark, read_inputs(spark))",
    ]
    if sinks:
        out.append("    for query in start_sinks(rels):")
        out.append("        query.awaitTermination()")
    else:
        out.append('    print("the spec declares no sink; relations:", sorted(rels))')
    return out


def _ruff() -> list[str]:
    """The ruff command: its binary, as ruff's own finder locates it (``python -m ruff``
    finds it the same way, in a new interpreter that costs a cold compile 20 ms more),
    else ``python -m ruff``."""
    try:
        from ruff import find_ruff_bin  # type: ignore[import-untyped]  # no py.typed

        return [find_ruff_bin()]
    except (ImportError, OSError):  # not installed, or its binary not found (RuffNotFound)
        return [sys.executable, "-m", "ruff"]


def format_python(text: str) -> str:
    """Lay the module out as ``ruff format`` does (line length 100).  ruff is a dependency of
    sjoin; the text is valid Python either way, so a missing formatter is not fatal."""
    try:
        done = subprocess.run(
            [
                *_ruff(),
                "format",
                "--line-length",
                "100",
                "--no-cache",
                "--stdin-filename",
                "job.py",
                "-",
            ],
            input=text,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return text
    return done.stdout
