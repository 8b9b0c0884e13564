"""Frozen syntax nodes of a .sjoin file.

The AST says only what was written; meaning (names, types, plans) comes later.  Expressions
are sqlglot trees (the IR every later stage shares); each sqlglot node built by the parser
keeps its source span (``annotate.span``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from sqlglot import exp

from ..vocabulary import annotate
from ..vocabulary.model import JOIN_KINDS, JoinType
from ..vocabulary.source import Span

JOIN_KEYWORDS: dict[str, str] = {k: kind.keyword for k, kind in JOIN_KINDS.items()}


@dataclass(frozen=True, slots=True)
class Ident:
    """A name as written (back-quotes removed), with its own span."""

    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class Value:
    """A literal value of a setting or an option: ``kind`` is string, number, bool or name."""

    text: str
    kind: Literal["string", "number", "bool", "name", "null"]
    span: Span


@dataclass(frozen=True, slots=True)
class SparkDecl:
    version: str
    span: Span


@dataclass(frozen=True, slots=True)
class SetDecl:
    name: Ident
    value: Value
    span: Span


@dataclass(frozen=True, slots=True)
class TypeRef:
    name: str
    params: tuple[int, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ColumnDecl:
    name: Ident
    type: TypeRef
    span: Span


@dataclass(frozen=True, slots=True)
class Duration:
    amount: str  # as written: "2", "1.5"
    unit: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class WatermarkDecl:
    column: Ident
    delay: Duration
    span: Span


@dataclass(frozen=True, slots=True)
class OptionDecl:
    key: Ident
    value: Value
    span: Span


@dataclass(frozen=True, slots=True)
class FormatDecl:
    """``FORMAT (opt = 'v', ...)`` of a source or a sink."""

    format: Ident
    options: tuple[OptionDecl, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class StreamDecl:
    name: Ident
    columns: tuple[ColumnDecl, ...]
    watermark: WatermarkDecl | None
    source: FormatDecl | None
    span: Span


@dataclass(frozen=True, slots=True)
class RelRef:
    """A relation used as an input, with its alias (defaults to the relation's name), and
    a watermark defined on it (``j AS a watermark t delay 10 seconds``: Spark's
    ``withWatermark`` on a join's or aggregate's output, docs/language.md)."""

    name: Ident
    alias: Ident | None
    span: Span
    watermark: WatermarkDecl | None = None
    # (time column, window column): a pipeline's SQL subquery (``SELECT *, window(t, ...)
    # AS w``) or a job's side (``withColumn("w", F.window(t, ...))``) that keeps a stream's
    # time column with its watermark mark beside a window of it, so that both reach the
    # join as event-time columns when the time is read after it (E025, judged by hazards
    # for the Spark the plan is made for).  No .sjoin text writes it: a .sjoin window of a
    # side's time takes the mark off the time column
    time_beside_window: tuple[str, str] | None = None

    @property
    def alias_text(self) -> str:
        return (self.alias or self.name).text


@dataclass(frozen=True, slots=True)
class SelectItem:
    """``expr [AS name]``; a star (``*`` or ``a.*``) is an ``exp.Star`` / ``exp.Column``."""

    expr: exp.Expression
    alias: Ident | None
    span: Span


@dataclass(frozen=True, slots=True)
class JoinDecl:
    name: Ident
    left: RelRef
    how: JoinType
    right: RelRef
    on: exp.Expression
    select: tuple[SelectItem, ...] | None
    span: Span
    how_span: Span
    # ``WHERE cond`` after ON: a filter of the join's output (docs/language.md)
    where: exp.Expression | None = None
    # ``OUTPUT MODE m``: the mode of the query the join ends (its sink's), as an aggregate's
    mode: Ident | None = None


@dataclass(frozen=True, slots=True)
class AggregateDecl:
    name: Ident
    input: RelRef
    group_by: tuple[exp.Expression, ...]
    select: tuple[SelectItem, ...]
    mode: Ident | None
    span: Span
    # ``WHERE cond`` before GROUP BY: a filter of the input's rows before they are grouped
    where: exp.Expression | None = None


@dataclass(frozen=True, slots=True)
class UnionDecl:
    """``union NAME = A UNION ALL B [UNION ALL C ...]``: the inputs' names, in order."""

    name: Ident
    inputs: tuple[Ident, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class ViewDecl:
    """``view NAME = SELECT item, ... FROM REL [[AS] A] [WHERE cond]``: a stateless filter
    and projection of one relation."""

    name: Ident
    select: tuple[SelectItem, ...]
    input: RelRef
    where: exp.Expression | None
    span: Span


@dataclass(frozen=True, slots=True)
class SinkDecl:
    relation: Ident
    target: FormatDecl
    checkpoint: Value | None
    span: Span


@dataclass(frozen=True, slots=True)
class DedupDecl:
    """``dedup NAME = REL [[AS] A] ON (col, ...) [WITHIN WATERMARK]``: Spark's
    ``dropDuplicates(cols)`` or ``dropDuplicatesWithinWatermark(cols)``."""

    name: Ident
    input: RelRef
    keys: tuple[Ident, ...]
    within: Span | None  # the `WITHIN WATERMARK` words, when written
    span: Span


@dataclass(frozen=True, slots=True)
class TableDecl:
    """``table NAME (col TYPE, ...) from FORMAT (...)``: a static table Spark reads in batch
    (``spark.read``), one side of a stream-static join."""

    name: Ident
    columns: tuple[ColumnDecl, ...]
    source: FormatDecl
    span: Span


Statement: TypeAlias = (
    SparkDecl
    | SetDecl
    | StreamDecl
    | JoinDecl
    | AggregateDecl
    | UnionDecl
    | ViewDecl
    | SinkDecl
    | DedupDecl
    | TableDecl
)


@dataclass(frozen=True, slots=True)
class SpecFile:
    statements: tuple[Statement, ...]
    span: Span
    # names that statements which did not parse declare (`strem clicks (`, a join whose text
    # is broken): the binder treats them as defined-but-broken, so nothing that reads them
    # says they are unknown
    broken: tuple[str, ...] = ()
    # a pipeline's SQL: each read of a stream writes its own WATERMARK clause, which Spark
    # resolves to an EventTimeWatermark of its own (ResolveEventTimeWatermark gives each a
    # fresh nodeId), where a .sjoin spec's and a PySpark job's streams have one
    # ``withWatermark`` that every read shares (``Plan.shared_watermarks``)
    watermark_per_read: bool = False


def span_of(node: exp.Expression) -> Span:
    """The span of an expression built by the parser (or of its nearest spanned child)."""
    span = annotate.span(node)
    if isinstance(span, Span):
        return span
    for child in node.iter_expressions():
        return span_of(child)
    return Span(0, 0)
