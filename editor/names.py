"""The names of one checked .sjoin document and where each is defined and used: relations,
aliases, columns and settings, each occurrence with its span.  Go to definition, find
references, the outline and hover all read this index; it is built once per check from the
AST (``CheckResult.spec``) and the bound model (``CheckResult.bound``), which already
resolved every column to its relation and type.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from sqlglot import exp

from ..api import CheckResult
from ..compiler.binding.bound import Relation
from ..compiler.frontend import ast
from ..compiler.vocabulary import annotate
from ..compiler.vocabulary.source import Span
from ..compiler.vocabulary.types import SqlType

Kind = Literal["relation", "alias", "column", "setting", "function"]
# what a name names: ("relation", name), ("alias", statement index, alias),
# ("column", relation, column), ("setting", name), ("function", name)
Key = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Name:
    kind: Kind
    key: Key
    span: Span
    definition: bool
    statement: int  # the index of the statement it is in
    type: SqlType | None = None  # a column's type, where the binder typed it
    side: str = ""  # a join column's side (left, right), an aggregate's input (input)


@dataclass
class Names:
    """Every name occurrence of a document, by place, and the definitions by what they name."""

    items: list[Name] = field(default_factory=list)
    definitions: dict[Key, Name] = field(default_factory=dict)
    _starts: list[int] = field(default_factory=list)

    def add(self, name: Name) -> None:
        self.items.append(name)
        if name.definition:
            self.definitions.setdefault(name.key, name)

    def define(self, name: Name) -> None:
        """A definition that is not a place of its own (an output column named by the
        column it selects): found by ``definition``, never by ``at``."""
        self.definitions.setdefault(name.key, name)

    def done(self) -> Names:
        # at one place the innermost (shortest) occurrence wins: a column inside a select item
        self.items.sort(key=lambda n: (n.span.start, -(n.span.end - n.span.start)))
        self._starts = [n.span.start for n in self.items]
        return self

    def at(self, offset: int) -> Name | None:
        """The name whose span holds ``offset`` (its end included: the cursor just after a
        word is on it)."""
        i = bisect.bisect_right(self._starts, offset)
        best: Name | None = None
        for n in reversed(self.items[max(0, i - 64) : i]):
            if n.span.start <= offset <= n.span.end and (
                best is None or n.span.end - n.span.start < best.span.end - best.span.start
            ):
                best = n
        return best

    def within(self, base: int, length: int) -> Names:
        """The names of one file of a pipeline project, whose text starts at ``base`` of the
        project's and is ``length`` long, with their spans made the file's own."""

        def moved(n: Name) -> Name | None:
            if not (base <= n.span.start and n.span.end <= base + length):
                return None
            return replace(n, span=Span(n.span.start - base, n.span.end - base))

        out = Names()
        for n in self.items:
            if (found := moved(n)) is not None:
                out.items.append(found)
        for key, n in self.definitions.items():
            if (found := moved(n)) is not None:
                out.definitions[key] = found
        return out.done()

    def definition(self, key: Key) -> Name | None:
        return self.definitions.get(key)

    def references(self, key: Key) -> list[Name]:
        return [n for n in self.items if n.key == key]


_NAMED = (
    ast.StreamDecl,
    ast.TableDecl,
    ast.JoinDecl,
    ast.AggregateDecl,
    ast.UnionDecl,
    ast.ViewDecl,
    ast.DedupDecl,
)


def statement_name(stmt: ast.Statement) -> ast.Ident | None:
    """The name a statement defines (a relation's), or None (spark, set, sink)."""
    return stmt.name if isinstance(stmt, _NAMED) else None


def inputs_of(stmt: ast.Statement) -> tuple[ast.RelRef, ...]:
    if isinstance(stmt, ast.JoinDecl):
        return (stmt.left, stmt.right)
    if isinstance(stmt, ast.AggregateDecl | ast.ViewDecl | ast.DedupDecl):
        return (stmt.input,)
    return ()


def expressions_of(stmt: ast.Statement) -> Iterator[exp.Expression]:
    if isinstance(stmt, ast.JoinDecl):
        yield stmt.on
    if isinstance(stmt, ast.JoinDecl | ast.AggregateDecl | ast.ViewDecl):
        if stmt.where is not None:
            yield stmt.where
        for item in stmt.select or ():
            yield item.expr
    if isinstance(stmt, ast.AggregateDecl):
        yield from stmt.group_by


def _bound_expressions(rel: Relation) -> Iterator[exp.Expression]:
    for attr in ("condition", "where"):
        found = getattr(rel, attr, None)
        if isinstance(found, exp.Expression):
            yield found
    for item in getattr(rel, "output", ()):
        yield item.expr
    yield from getattr(rel, "group_by", ())


def index(result: CheckResult) -> Names:
    """The names of a checked .sjoin document (empty when it did not parse at all)."""
    names = Names()
    spec, bound = result.spec, result.bound
    if spec is None:
        return names.done()
    # the bound columns by span: their relation, type and side, as the binder resolved them
    columns: dict[tuple[int, int], exp.Column] = {}
    if bound is not None:
        for rel in bound.relations:
            for e in _bound_expressions(rel):
                for col in e.find_all(exp.Column):
                    where = annotate.span(col)
                    if where is not None and annotate.relation(col) is not None:
                        columns[(where.start, where.end)] = col
    for i, stmt in enumerate(spec.statements):
        _statement(names, i, stmt, columns, result)
    return names.done()


def _statement(
    names: Names,
    i: int,
    stmt: ast.Statement,
    columns: dict[tuple[int, int], exp.Column],
    result: CheckResult,
) -> None:
    own = statement_name(stmt)
    if own is not None:
        names.add(Name("relation", ("relation", own.text), own.span, True, i))
    if isinstance(stmt, ast.SetDecl):
        names.add(Name("setting", ("setting", stmt.name.text.lower()), stmt.name.span, False, i))
    if isinstance(stmt, ast.StreamDecl | ast.TableDecl):
        for col in stmt.columns:
            key = ("column", stmt.name.text, col.name.text)
            kind = _declared_type(result, stmt.name.text, col.name.text)
            names.add(Name("column", key, col.name.span, True, i, kind))
    if isinstance(stmt, ast.StreamDecl) and stmt.watermark is not None:
        marked = stmt.watermark.column
        key = ("column", stmt.name.text, marked.text)
        names.add(Name("column", key, marked.span, False, i, _declared_type(result, *key[1:])))
    aliases: dict[str, str] = {}  # alias -> relation, in this statement
    for ref in inputs_of(stmt):
        names.add(Name("relation", ("relation", ref.name.text), ref.name.span, False, i))
        if ref.alias is not None:
            aliases[ref.alias.text] = ref.name.text
            names.add(Name("alias", ("alias", str(i), ref.alias.text), ref.alias.span, True, i))
        else:
            aliases.setdefault(ref.name.text, ref.name.text)
        if ref.watermark is not None:
            marked = ref.watermark.column
            key = ("column", ref.name.text, marked.text)
            names.add(Name("column", key, marked.span, False, i))
    if isinstance(stmt, ast.UnionDecl):
        for ident in stmt.inputs:
            names.add(Name("relation", ("relation", ident.text), ident.span, False, i))
    if isinstance(stmt, ast.SinkDecl):
        ident = stmt.relation
        names.add(Name("relation", ("relation", ident.text), ident.span, False, i))
    if isinstance(stmt, ast.DedupDecl):
        for key_ident in stmt.keys:
            key = ("column", stmt.input.name.text, key_ident.text)
            names.add(Name("column", key, key_ident.span, False, i))
    for e in expressions_of(stmt):
        for used in e.find_all(exp.Column):
            _column(names, i, used, aliases, columns)
        for call in e.find_all(exp.Anonymous):
            where = annotate.name_span(call)
            if where is not None:
                names.add(Name("function", ("function", str(call.this).lower()), where, False, i))
    if isinstance(stmt, ast.JoinDecl | ast.AggregateDecl | ast.ViewDecl) and own is not None:
        for item in stmt.select or ():
            _output(names, i, own.text, item, result)


def _declared_type(result: CheckResult, relation: str, column: str) -> SqlType | None:
    rel = result.bound.relation(relation) if result.bound is not None else None
    if rel is None:
        return None
    return next((c.type for c in rel.columns if c.name == column), None)


def _column(
    names: Names,
    i: int,
    col: exp.Column,
    aliases: dict[str, str],
    columns: dict[tuple[int, int], exp.Column],
) -> None:
    where = annotate.span(col)
    if where is None or isinstance(col.this, exp.Star):
        return
    bound = columns.get((where.start, where.end))
    relation = annotate.relation(bound) if bound is not None else None
    qualifier = col.table
    if qualifier and where.end - where.start == len(qualifier) + 1 + len(col.name):
        q_span = Span(where.start, where.start + len(qualifier))
        if qualifier in aliases and aliases[qualifier] != qualifier:
            names.add(Name("alias", ("alias", str(i), qualifier), q_span, False, i))
        elif qualifier in aliases:
            names.add(Name("relation", ("relation", qualifier), q_span, False, i))
        relation = relation or aliases.get(qualifier)
        name_span = Span(where.end - len(col.name), where.end)
    elif not qualifier and where.end - where.start == len(col.name):
        name_span = where
    else:
        name_span = where  # quoted: the whole reference
    if relation is None:
        return
    kind = annotate.sql_type(bound) if bound is not None else None
    side = annotate.side(bound) if bound is not None else ""
    names.add(Name("column", ("column", relation, col.name), name_span, False, i, kind, side))


def _output(names: Names, i: int, relation: str, item: ast.SelectItem, result: CheckResult) -> None:
    """A select item's output column: its alias is its definition, or the column it names."""
    if item.alias is not None:
        kind = _declared_type(result, relation, item.alias.text)
        key = ("column", relation, item.alias.text)
        names.add(Name("column", key, item.alias.span, True, i, kind))
    elif isinstance(item.expr, exp.Column) and not isinstance(item.expr.this, exp.Star):
        where = annotate.span(item.expr)
        if where is not None:
            kind = _declared_type(result, relation, item.expr.name)
            names.define(Name("column", ("column", relation, item.expr.name), where, True, i, kind))
