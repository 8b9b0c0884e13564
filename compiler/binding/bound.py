"""The bound model: the spec with every name resolved and every expression typed.

It is what the planner reads.  Expressions are sqlglot trees in which every column is
qualified by its input's alias and annotated in ``meta``: ``side`` (``left``/``right`` of a
join, ``input`` of an aggregate), ``type`` (a SqlType) and ``event_time`` (the column carries
Spark's watermark metadata).  Every typed node carries ``meta["type"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeAlias

from sqlglot import exp

from ..vocabulary.model import (
    Column,
    Format,
    JoinType,
    OutputMode,
    SparkVersion,
)
from ..vocabulary.source import Source, Span
from ..vocabulary.sql import spark_sql
from ..vocabulary.types import SqlType


@dataclass(frozen=True, slots=True)
class Watermark:
    column: str
    delay_ms: int
    span: Span


@dataclass(frozen=True, slots=True)
class Stream:
    name: str
    columns: tuple[Column, ...]
    watermark: Watermark | None
    source: Format | None
    span: Span
    name_span: Span

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """A stream reads no relation."""
        return ()


@dataclass(frozen=True, slots=True)
class Input:
    """A relation used as a join side or an aggregate's input, under an alias."""

    relation: str
    alias: str
    columns: tuple[Column, ...]
    span: Span
    # a watermark defined on a join's or aggregate's output where it is read (Spark's
    # withWatermark on it): ``columns`` carry its mark, on its column only
    watermark: Watermark | None = None
    # ``ast.RelRef.time_beside_window``: a time column kept with its mark beside its window
    time_beside_window: tuple[str, str] | None = None
    # the first column of each name: a lookup per column reference must not cost a scan
    # of thousands of columns
    _by_name: dict[str, Column] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Column] = {}
        for c in self.columns:
            by_name.setdefault(c.name, c)
        object.__setattr__(self, "_by_name", by_name)

    def column(self, name: str) -> Column | None:
        return self._by_name.get(name)

    @property
    def event_time_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.event_time)


@dataclass(frozen=True, slots=True)
class OutputItem:
    """One output column of a join or an aggregate and the expression that computes it."""

    name: str
    expr: exp.Expression
    type: SqlType
    event_time: bool
    span: Span

    @property
    def column(self) -> Column:
        return Column(self.name, self.type, self.event_time)


@dataclass(frozen=True, slots=True)
class Join:
    name: str
    how: JoinType
    left: Input
    right: Input
    condition: exp.Expression
    output: tuple[OutputItem, ...]
    span: Span
    name_span: Span
    how_span: Span
    # ``WHERE cond``: a filter of the join's output, over its output sides' columns
    where: exp.Expression | None = None
    # ``OUTPUT MODE``: the mode of the query the join ends (append when not written)
    mode: OutputMode = "append"
    mode_span: Span | None = None

    @property
    def columns(self) -> tuple[Column, ...]:
        return tuple(o.column for o in self.output)

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads), as the plan's ``JoinNode.inputs``; the input
        name is what ``annotate.side`` says of a column of that input."""
        return (("left", self.left.relation), ("right", self.right.relation))


@dataclass(frozen=True, slots=True)
class Aggregate:
    name: str
    input: Input
    group_by: tuple[exp.Expression, ...]
    output: tuple[OutputItem, ...]
    mode: OutputMode
    mode_span: Span | None
    span: Span
    name_span: Span
    # ``WHERE cond`` before GROUP BY: a filter of the input's rows, over its columns
    where: exp.Expression | None = None

    @property
    def columns(self) -> tuple[Column, ...]:
        return tuple(o.column for o in self.output)

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads), as the plan's ``AggregateNode.inputs``."""
        return (("input", self.input.relation),)


@dataclass(frozen=True, slots=True)
class Dedup:
    """``dedup NAME = REL ON (col, ...) [WITHIN WATERMARK]``: its output is its input's
    columns, the event-time marks kept (Spark's Deduplicate passes its child's output)."""

    name: str
    input: Input
    keys: tuple[str, ...]  # the dedup columns, each once, in the order written
    key_spans: tuple[Span, ...]
    within: Span | None  # `WITHIN WATERMARK`: dropDuplicatesWithinWatermark
    span: Span
    name_span: Span

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.input.columns

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads), as the plan's ``DedupNode.inputs``."""
        return (("input", self.input.relation),)


@dataclass(frozen=True, slots=True)
class Union:
    """``union NAME = A UNION ALL B ...``: the rows of its inputs, in order.  ``columns`` are
    the first input's (Spark's ``Union.mergeChildOutputs`` keeps the first child's names and
    metadata, so a column is an event-time column exactly when it is one in the first
    input); the binder checked that every input has the same names and types."""

    name: str
    relations: tuple[str, ...]
    columns: tuple[Column, ...]
    span: Span
    name_span: Span
    input_spans: tuple[Span, ...]

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads): ``"0"``, ``"1"``, ... in the written order,
        as the plan's ``UnionNode.inputs``."""
        return tuple((str(i), r) for i, r in enumerate(self.relations))


@dataclass(frozen=True, slots=True)
class View:
    """``view NAME = SELECT ... FROM REL [WHERE cond]``: a stateless filter (``where``)
    and projection (``output``) of one relation."""

    name: str
    input: Input
    where: exp.Expression | None
    output: tuple[OutputItem, ...]
    span: Span
    name_span: Span

    @property
    def columns(self) -> tuple[Column, ...]:
        return tuple(o.column for o in self.output)

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads), as the plan's ``ViewNode.inputs``."""
        return (("input", self.input.relation),)


@dataclass(frozen=True, slots=True)
class Table:
    """A static table read in batch (``table NAME (...) from FORMAT (...)``): no watermark,
    no streaming source; one side of a stream-static join (compiler/planning/tables.py)."""

    name: str
    columns: tuple[Column, ...]
    source: Format
    span: Span
    name_span: Span

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """A table reads no relation."""
        return ()


Relation: TypeAlias = Stream | Join | Aggregate | Dedup | Union | View | Table


@dataclass(frozen=True, slots=True)
class Sink:
    relation: str
    target: Format
    checkpoint: str | None
    span: Span


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    value: str | int | bool
    span: Span


@dataclass(frozen=True)
class BoundSpec:
    source: Source
    spark: SparkVersion
    spark_span: Span | None
    settings: dict[str, Setting] = field(default_factory=dict)
    relations: tuple[Relation, ...] = ()
    sinks: tuple[Sink, ...] = ()
    broken: frozenset[str] = frozenset()  # relations whose statement failed (not defined)
    broken_watermarks: frozenset[str] = frozenset()  # streams whose watermark failed to bind
    # each read of a stream has a watermark node of its own to Spark (a pipeline's SQL:
    # ``SpecFile.watermark_per_read``)
    watermark_per_read: bool = False

    def relation(self, name: str) -> Relation | None:
        return self._by_name.get(name)

    @cached_property
    def _by_name(self) -> dict[str, Relation]:
        """Relations by name (the first of a name), so that a lookup does not cost a scan:
        a chain of 2,000 joins looks names up millions of times."""
        index: dict[str, Relation] = {}
        for r in self.relations:
            index.setdefault(r.name, r)
        return index

    def setting(self, name: str, default: str | int | bool) -> str | int | bool:
        found = self.settings.get(name)
        return default if found is None else found.value


def pretty(spec: BoundSpec) -> str:
    """A stable, readable dump of the bound model (for snapshot tests and debugging)."""

    def cols(columns: tuple[Column, ...]) -> str:
        return ", ".join(
            f"{c.name} {c.type}{' (event time)' if c.event_time else ''}" for c in columns
        )

    def sql(node: exp.Expression) -> str:
        return spark_sql(node)

    lines = [f"spark {spec.spark}"]
    lines.extend(f"set {s.name} = {s.value}" for s in spec.settings.values())
    for rel in spec.relations:
        if isinstance(rel, Stream):
            wm = (
                f" watermark {rel.watermark.column} delay {rel.watermark.delay_ms} ms"
                if rel.watermark
                else ""
            )
            src = f" from {rel.source.format}{dict(rel.source.options)}" if rel.source else ""
            lines.append(f"stream {rel.name} ({cols(rel.columns)}){wm}{src}")
        elif isinstance(rel, Table):
            lines.append(
                f"table {rel.name} ({cols(rel.columns)}) "
                f"from {rel.source.format}{dict(rel.source.options)}"
            )
        elif isinstance(rel, Join):
            lines.append(
                f"join {rel.name} = {rel.left.relation} AS {rel.left.alias} "
                f"{rel.how} {rel.right.relation} AS {rel.right.alias}"
            )
            lines.append(f"  on {sql(rel.condition)}")
            if rel.where is not None:
                lines.append(f"  where {sql(rel.where)}")
            for item in rel.output:
                lines.append(
                    f"  -> {item.name} {item.type}"
                    f"{' (event time)' if item.event_time else ''} = {sql(item.expr)}"
                )
        elif isinstance(rel, View):
            lines.append(f"view {rel.name} = {rel.input.relation} AS {rel.input.alias}")
            if rel.where is not None:
                lines.append(f"  where {sql(rel.where)}")
            for item in rel.output:
                lines.append(
                    f"  -> {item.name} {item.type}"
                    f"{' (event time)' if item.event_time else ''} = {sql(item.expr)}"
                )
        elif isinstance(rel, Dedup):
            within = " within watermark" if rel.within is not None else ""
            lines.append(
                f"dedup {rel.name} = {rel.input.relation} AS {rel.input.alias} "
                f"on ({', '.join(rel.keys)}){within}"
            )
        elif isinstance(rel, Union):
            lines.append(f"union {rel.name} = {' UNION ALL '.join(rel.relations)}")
            lines.append(f"  ({cols(rel.columns)})")
        else:
            lines.append(
                f"aggregate {rel.name} = {rel.input.relation} AS {rel.input.alias} [{rel.mode}]"
            )
            if rel.where is not None:
                lines.append(f"  where {sql(rel.where)}")
            lines.append("  group by " + ", ".join(sql(g) for g in rel.group_by))
            for item in rel.output:
                lines.append(
                    f"  -> {item.name} {item.type}"
                    f"{' (event time)' if item.event_time else ''} = {sql(item.expr)}"
                )
    for sink in spec.sinks:
        lines.append(
            f"sink {sink.relation} to {sink.target.format}"
            f"{dict(sink.target.options)} checkpoint {sink.checkpoint}"
        )
    return "\n".join(lines) + "\n"
