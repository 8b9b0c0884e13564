"""The query text of a job's ``spark.sql("...")`` -> the SQL front end's query node
(``sqlast.Query``), parsed with the pipeline SQL grammar's query rule (``query_statement``:
a bare query) and its transformer, so a job's SQL reads as a pipeline's does.

Spans are places in the job: the string literal's when the job writes the query as one
(``Locator.string_argument``), else every node is at the ``spark.sql(`` call.  Comments are
blanked as a pipeline's are; trailing ``;`` are Spark's (``singleStatement``).  What sjoin
does not read is E041 at its place (``lower.py`` says which queries it lowers).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lark import v_args
from lark.exceptions import UnexpectedInput
from lark.tree import Meta

from ....grammar import sql_parser
from ...diagnostics.diagnostics import Diagnostics
from ...vocabulary.source import Span
from .. import ast, sqlast
from ..parse import _nesting_error, nesting_refused
from ..sqlparse import SqlToAst, _blanked, _Scan, _sql_syntax_error
from .exprs import respanned

GLOBAL_TEMP = "global_temp"  # Spark's spark.sql.globalTempDatabase (its default)


class JobSqlToAst(SqlToAst):
    """The pipeline SQL transformer, for one query of a job: a bare query is the result (not
    refused, as a pipeline's is), ``global_temp.v`` names a global temporary view, and what
    sjoin does not read is E041 (not modelled in a PySpark job)."""

    REFUSED = "E041"

    @v_args(meta=True)
    def query_statement(self, meta: Meta, kids: list[Any]) -> Any:
        return kids[0]

    @v_args(meta=True)
    def table_name(self, meta: Meta, kids: list[ast.Ident]) -> ast.Ident:
        if len(kids) == 2 and kids[0].text.lower() == GLOBAL_TEMP:
            return ast.Ident(f"{GLOBAL_TEMP}.{kids[1].text}", self._span(meta))
        if len(kids) > 1 and not (len(kids) == 2 and kids[0].text.lower() in _FORMATS):
            self._refuse(
                "a qualified name in spark.sql",
                self._span(meta),
                "not a temporary view",
                "sjoin reads the job's temporary views by their names, and global ones as "
                f"{GLOBAL_TEMP}.name",
            )
            return ast.Ident(kids[-1].text, self._span(meta))
        found: ast.Ident = SqlToAst.table_name(self, meta, kids)  # type: ignore[arg-type]
        return found


_FORMATS = frozenset({"json", "csv", "parquet", "orc", "text", "avro", "delta", "binaryfile"})


def parse_query(
    text: str, offset: int | None, whole: Span, diags: Diagnostics
) -> sqlast.Query | None:
    """``text`` (one query) parsed at ``offset`` in the job (None: every span ``whole``).
    E001 for what does not parse, E041 for a statement that is no query and for what the
    transformer refuses; None then."""
    local = Diagnostics()
    found = _parse(text, offset or 0, local)
    if isinstance(found, sqlast.CreateDataset | sqlast.CreateFlow):
        local.add(
            "E041",
            "a statement other than a query (SELECT ...) in spark.sql in a PySpark job",
            found.span,
            "not modelled",
            'sjoin reads spark.sql("SELECT ...") over temporary views the job makes with '
            "createOrReplaceTempView",
        )
        found = None
    for d in local.items:
        diags.add(d.code, d.message, d.span if offset is not None else whole, d.label, d.help)
    if local.items or not isinstance(found, sqlast.Query):
        return None
    return found if offset is not None else _respanned_query(found, whole)


def _parse(text: str, base: int, diags: Diagnostics) -> Any:
    scan = _Scan(text, 0, len(text))
    for at, what in scan.unterminated:
        diags.add("E001", f"an unterminated {what}", Span(base + at, base + at + 1), "not closed")
    if scan.unterminated:
        return None
    chunk = _blanked(text, scan.comments)
    # `SELECT ...;` (and `;;`): Spark's singleStatement reads trailing semicolons
    pieces = scan.statements
    if len(pieces) > 1 and all(not chunk[a:b].strip() for a, b in pieces[1:]):
        chunk = _blanked(chunk, [(b, b + 1) for _, b in pieces[:-1]])
    try:
        tree = sql_parser().parse(chunk)
    except UnexpectedInput as err:
        _sql_syntax_error(err, chunk, base, diags)
        return None
    deep = _nesting_error(tree)
    if deep is not None:
        nesting_refused(Span.of(deep.meta, base).start, diags)
        return None
    transformer = JobSqlToAst(base)
    found = transformer.transform(tree)
    for r in transformer.refusals:
        code = "E041" if r.code in ("E033", "E041") else r.code
        message = r.message if code != "E041" else f"{r.message} (spark.sql in a PySpark job)"
        diags.add(code, message, r.span, r.label, r.help)
    return found


def _respanned_query(query: sqlast.Query, where: Span) -> sqlast.Query:
    """``query`` with every span ``where`` (the ``spark.sql(`` call of a query that is no
    string literal of the job)."""

    def expr(node: Any) -> Any:
        return (
            respanned(ast.SelectItem(node, None, where), where).expr if node is not None else None
        )

    def ident(name: ast.Ident | None) -> ast.Ident | None:
        return dataclasses.replace(name, span=where) if name is not None else None

    def read(r: sqlast.Read) -> sqlast.Read:
        if isinstance(r, sqlast.TableRead):
            name = dataclasses.replace(r.name, span=where)
            return dataclasses.replace(r, name=name, alias=ident(r.alias), span=where)
        return dataclasses.replace(r, alias=ident(r.alias), span=where)

    return dataclasses.replace(
        query,
        select=tuple(respanned(i, where) for i in query.select),
        source=read(query.source),
        joins=tuple(
            dataclasses.replace(j, read=read(j.read), on=expr(j.on), how_span=where, span=where)
            for j in query.joins
        ),
        where=expr(query.where),
        group_by=tuple(expr(g) for g in query.group_by) if query.group_by is not None else None,
        span=where,
        from_span=where,
    )
