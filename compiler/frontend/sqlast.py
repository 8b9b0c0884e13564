"""Frozen syntax nodes of a pipeline's SQL files (the SQL front end's AST).

What a Spark Declarative Pipelines SQL file says, statement by statement, with spans into
the project's text; `compiler/frontend/sqllower.py` turns it into the .sjoin AST
(`compiler/frontend/ast.py`),
which the one binder binds.  Expressions, select items, column definitions and durations are
the .sjoin AST's own nodes, built by the same transformer methods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from sqlglot import exp

from ..vocabulary.source import Span
from . import ast

JoinHow: TypeAlias = Literal[
    "inner", "cross", "left_outer", "right_outer", "full_outer", "left_semi", "left_anti"
]
DatasetKind: TypeAlias = Literal["streaming_table", "materialized_view", "temporary_view", "view"]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Something the SQL says that sjoin cannot model (or Spark refuses): reported where it is,
    as E033 unless ``code`` says otherwise."""

    message: str
    span: Span
    label: str
    help: str | None = None
    code: str = "E033"  # E014: an interval Spark's parser refuses


@dataclass(frozen=True, slots=True)
class WatermarkClause:
    """``WATERMARK expr [AS name] DELAY OF INTERVAL ...`` of one read."""

    column: exp.Expression
    alias: ast.Ident | None
    delay: ast.Duration | None  # None: the interval is no single duration (refused)
    span: Span


@dataclass(frozen=True, slots=True)
class PathName(ast.Ident):
    """``parquet.`dim/customers``` in FROM: files read in batch (``text`` is the path), the
    source of a static table (a materialized view that reads them, sqllower.py)."""

    format: str


@dataclass(frozen=True, slots=True)
class TableRead:
    """``STREAM(name)``, ``STREAM name`` or a plain ``name`` (a batch read) in FROM."""

    name: ast.Ident
    stream: bool
    watermark: WatermarkClause | None
    alias: ast.Ident | None
    span: Span
    # ``WITH (...)`` / ``OPTIONS (...)`` of the read: a static table's reader options (of a
    # ``fmt.`path``` read); None when a key or value is no text Spark's options hold
    options: tuple[ast.OptionDecl, ...] | None = ()


@dataclass(frozen=True, slots=True)
class SubqueryRead:
    """``(SELECT ...) [WATERMARK ...] [AS] alias`` in FROM."""

    query: Query
    watermark: WatermarkClause | None
    alias: ast.Ident | None
    span: Span


Read: TypeAlias = TableRead | SubqueryRead


@dataclass(frozen=True, slots=True)
class JoinStep:
    """``<how> JOIN <read> [ON cond]`` after the first read."""

    how: JoinHow
    how_span: Span
    read: Read
    on: exp.Expression | None
    span: Span


@dataclass(frozen=True, slots=True)
class Query:
    select: tuple[ast.SelectItem, ...]
    source: Read
    joins: tuple[JoinStep, ...]
    where: exp.Expression | None
    group_by: tuple[exp.Expression, ...] | None
    span: Span
    from_span: Span
    # ``SELECT DISTINCT``: where DISTINCT is written (Spark runs it as an aggregate grouping by
    # every column, ReplaceDistinctWithAggregate)
    distinct: Span | None = None
    # ``... UNION ALL q2 UNION ALL q3``: the queries after this one, in order (nested
    # parentheses flattened; UNION ALL is associative)
    union_all: tuple[Query, ...] = ()

    @property
    def whole_span(self) -> Span:
        """The text of the query with every branch of its UNION ALL."""
        last = self.union_all[-1].span if self.union_all else self.span
        return Span(self.span.start, max(self.span.end, last.end))


@dataclass(frozen=True, slots=True)
class CreateDataset:
    """``CREATE STREAMING TABLE | MATERIALIZED VIEW | [TEMPORARY] VIEW name [(cols)] [AS q]``."""

    kind: DatasetKind
    name: ast.Ident
    columns: tuple[ast.ColumnDecl, ...] | None
    query: Query | None
    span: Span


@dataclass(frozen=True, slots=True)
class CreateFlow:
    """``CREATE FLOW name AS INSERT INTO target [BY NAME] query``."""

    name: ast.Ident
    target: ast.Ident
    by_name: bool
    query: Query
    span: Span


@dataclass(frozen=True, slots=True)
class SetConf:
    """``SET key = value``: a Spark conf for the flows the file defines."""

    key: str
    value: str
    key_span: Span
    value_span: Span
    span: Span


@dataclass(frozen=True, slots=True)
class DedupClause:
    """``-- sjoin: dedup ON (col, ...) [WITHIN WATERMARK]`` before a declaration in
    sjoin-schemas.sql: the dataset is a dedup of its query's one read (its keys), run by a
    Python flow of the pipeline (SDP's SQL has no dropDuplicates)."""

    keys: tuple[ast.Ident, ...]
    within: Span | None  # the `WITHIN WATERMARK` words, when written
    span: Span


@dataclass(frozen=True, slots=True)
class Annotation:
    """A ``-- sjoin: ...`` line: a .sjoin `spark`, `set` or `sink` statement, or a `from`
    clause for the CREATE STREAMING TABLE that follows it, or a `dedup` clause for the
    declaration that follows it."""

    statement: ast.SparkDecl | ast.SetDecl | ast.SinkDecl | ast.FormatDecl | DedupClause
    span: Span


SqlStatement: TypeAlias = CreateDataset | CreateFlow | SetConf


@dataclass(frozen=True, slots=True)
class SqlFile:
    """One SQL file of the pipeline: its statements in order, the annotations, what was
    refused and the names of datasets whose statement did not parse (defined but broken)."""

    path: str
    statements: tuple[SqlStatement, ...]
    annotations: tuple[Annotation, ...]
    # the `from` (or `dedup`) annotation of each statement it precedes (index into
    # ``statements``)
    sources: dict[int, Annotation]
    broken: tuple[str, ...]
    span: Span
