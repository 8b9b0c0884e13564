"""Go to definition, find references and the document outline, read from the index of
names (``editor/names.py``): a relation's definition is its statement's name, an alias's is
where its statement names it, a column's is its stream's or table's declaration or the
select item that makes it."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from ..compiler.frontend import ast
from ..compiler.vocabulary.source import Span
from .diagnostics import lsp_range
from .document import Analysis
from .names import statement_name
from .positions import LineIndex

_SYMBOL_KINDS: dict[type, lsp.SymbolKind] = {
    ast.StreamDecl: lsp.SymbolKind.Event,
    ast.TableDecl: lsp.SymbolKind.Struct,
    ast.JoinDecl: lsp.SymbolKind.Function,
    ast.AggregateDecl: lsp.SymbolKind.Function,
    ast.UnionDecl: lsp.SymbolKind.Function,
    ast.ViewDecl: lsp.SymbolKind.Function,
    ast.DedupDecl: lsp.SymbolKind.Function,
    ast.SinkDecl: lsp.SymbolKind.Interface,
    ast.SetDecl: lsp.SymbolKind.Property,
    ast.SparkDecl: lsp.SymbolKind.Namespace,
}


def definition(analysis: Analysis, uri: str, offset: int) -> lsp.Location | None:
    name = analysis.names.at(offset)
    if name is None:
        return None
    if analysis.project is not None:  # a pipeline's file: the definition may be in another
        found = analysis.project.definition(name.key)
        return None if found is None else _project_location(analysis, uri, found.span)
    target = analysis.names.definition(name.key)
    if target is None:
        return None
    return lsp.Location(uri, lsp_range(analysis.lines, target.span))


def references(
    analysis: Analysis, uri: str, offset: int, include_declaration: bool
) -> list[lsp.Location]:
    name = analysis.names.at(offset)
    if name is None:
        return []
    names = analysis.project if analysis.project is not None else analysis.names
    found = [n for n in names.references(name.key) if include_declaration or not n.definition]
    target = names.definition(name.key)
    if include_declaration and target is not None and target not in found:
        found.insert(0, target)
    if analysis.project is not None:
        return [_project_location(analysis, uri, n.span) for n in found]
    return [lsp.Location(uri, lsp_range(analysis.lines, n.span)) for n in found]


def _project_location(analysis: Analysis, uri: str, span: Span) -> lsp.Location:
    """A place in a pipeline project's text (``span``) as a place in its file: this document
    (``uri``) or another file of the project, its URI made from its path."""
    source = analysis.result.source if analysis.result is not None else None
    if source is None:
        return lsp.Location(uri, lsp_range(analysis.lines, span))
    file, local = source.locate(span)
    here = Path(analysis.path).resolve()
    there = Path(file.path).resolve()
    if there == here:
        return lsp.Location(uri, lsp_range(analysis.lines, local))
    return lsp.Location(
        there.as_uri(), lsp_range(LineIndex(file.text, analysis.lines.encoding), local)
    )


def _statement_title(stmt: ast.Statement) -> tuple[str, str]:
    """(name, detail) of a statement in the outline."""
    kind = type(stmt).__name__.removesuffix("Decl").lower()
    own = statement_name(stmt)
    if own is not None:
        return own.text, kind
    if isinstance(stmt, ast.SinkDecl):
        return f"sink {stmt.relation.text}", stmt.target.format.text
    if isinstance(stmt, ast.SetDecl):
        return f"set {stmt.name.text}", stmt.value.text
    if isinstance(stmt, ast.SparkDecl):
        return f"spark {stmt.version}", "target Spark"
    return kind, ""


def symbols(analysis: Analysis) -> list[lsp.DocumentSymbol]:
    """One symbol per statement of the document (a stream's and a table's columns as its
    children); of a pipeline project, the statements of this file."""
    spec = analysis.result.spec if analysis.result is not None else None
    if spec is None:
        return []
    base, length = analysis.base, len(analysis.text)

    def place(span: Span) -> lsp.Range:
        return lsp_range(analysis.lines, Span(span.start - base, span.end - base))

    out = []
    for stmt in spec.statements:
        if not (base <= stmt.span.start and stmt.span.end <= base + length):
            continue
        title, detail = _statement_title(stmt)
        own = statement_name(stmt)
        whole = place(stmt.span)
        children = None
        if isinstance(stmt, ast.StreamDecl | ast.TableDecl):
            children = [
                lsp.DocumentSymbol(
                    name=c.name.text,
                    kind=lsp.SymbolKind.Field,
                    range=place(c.span),
                    selection_range=place(c.name.span),
                    detail=c.type.name.upper(),
                )
                for c in stmt.columns
            ]
        selection = place(own.span) if own else whole
        if not (whole.start.line, whole.start.character) <= (
            selection.start.line,
            selection.start.character,
        ):
            selection = whole  # a selection must lie inside the symbol's range
        out.append(
            lsp.DocumentSymbol(
                name=title or "?",
                kind=_SYMBOL_KINDS.get(type(stmt), lsp.SymbolKind.Object),
                range=whole,
                selection_range=selection,
                detail=detail,
                children=children,
            )
        )
    return out
