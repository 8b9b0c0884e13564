"""Hover: what sjoin knows of the word under the cursor, as Markdown.

A join (its name anywhere, or its join keywords): its plan as `sjoin plan` prints it (the
keys, the filters before and after it, each side's state and how long it keeps rows, when
its null-padded rows come out; ``explain.node_text``, never derived again here).  Any other
relation: its plan lines too (a stream's watermark, an aggregate's results) and its
columns.  A column: its type, its relation and side.  An alias: the relation it names.  A
setting, a function: its documentation.  A diagnostic code (``W001`` in a comment, say): its
title and explanation from the table of codes.
"""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from ..compiler.describe.explain import node_text
from ..compiler.diagnostics.codes import CODES
from ..compiler.diagnostics.diagnostics import excerpt
from ..compiler.frontend import ast
from ..compiler.vocabulary import functions, settings
from ..compiler.vocabulary.source import Span
from ..compiler.vocabulary.sql import spark_sql
from .diagnostics import lsp_range
from .document import Analysis
from .names import Name, inputs_of

_CODE = re.compile(r"\b[EW]\d{3}\b")


def hover(analysis: Analysis, offset: int) -> lsp.Hover | None:
    text = _code_at(analysis, offset)
    if text is not None:
        return text
    name = analysis.names.at(offset)
    if name is not None:
        shown = _name(analysis, name)
        if shown:
            return lsp.Hover(
                contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=shown),
                range=lsp_range(analysis.lines, name.span),
            )
    join = _join_keyword(analysis, offset)
    if join is not None:
        shown = _relation(analysis, join.name.text)
        if shown:
            return lsp.Hover(
                contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=shown),
                range=lsp_range(analysis.lines, _moved(join.how_span, analysis.base)),
            )
    return None


def _moved(span: Span, base: int) -> Span:
    return Span(span.start - base, span.end - base)


def _code_at(analysis: Analysis, offset: int) -> lsp.Hover | None:
    lines = analysis.lines
    line, _ = lines.position(offset)
    start = lines.offset(line, 0)
    for m in _CODE.finditer(lines.text, start, lines.line_end(line)):
        if m.start() <= offset <= m.end() and m[0] in CODES:
            code = CODES[m[0]]
            value = f"**{code.id}** ({code.severity}): {code.title}\n\n{code.explain}"
            return lsp.Hover(
                contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=value),
                range=lsp.Range(
                    lsp.Position(*lines.position(m.start())), lsp.Position(*lines.position(m.end()))
                ),
            )
    return None


def _join_keyword(analysis: Analysis, offset: int) -> ast.JoinDecl | None:
    spec = analysis.result.spec if analysis.result is not None else None
    for stmt in spec.statements if spec is not None else ():
        at = offset + analysis.base
        if isinstance(stmt, ast.JoinDecl) and stmt.how_span.start <= at <= stmt.how_span.end:
            return stmt
    return None


def _name(analysis: Analysis, name: Name) -> str | None:
    if name.kind == "relation":
        return _relation(analysis, name.key[1])
    if name.kind == "alias":
        spec = analysis.result.spec if analysis.result is not None else None
        target = analysis.names.definition(name.key)
        relation = None
        if spec is not None and target is not None:
            stmt = spec.statements[name.statement]
            relation = next(
                (r.name.text for r in inputs_of(stmt) if r.alias is not None
                 and r.alias.span == target.span),
                None,
            )  # fmt: skip
        if relation is None:
            return f"alias `{name.key[2]}`"
        body = _relation(analysis, relation)
        return f"alias `{name.key[2]}` of `{relation}`" + (f"\n\n{body}" if body else "")
    if name.kind == "column":
        _, relation, column = name.key
        kind = name.type
        if kind is None:
            definition = analysis.names.definition(name.key)
            kind = definition.type if definition is not None else None
        side = f", {name.side} side" if name.side in ("left", "right") else ""
        lines = [f"`{column}`: **{kind}**" if kind else f"`{column}`"]
        lines.append(f"column of `{relation}`{side}" + _origin(analysis, relation, column))
        marked = _watermark(analysis, relation, column)
        if marked:
            lines.append(marked)
        return "\n\n".join(lines)
    if name.kind == "setting":
        setting = settings.SETTINGS.get(name.key[1])
        if setting is None:
            return None
        default = setting.default if setting.default is not None else "the target Spark's"
        conf = f" (`{setting.spark_conf}`)" if setting.spark_conf else ""
        choices = f"; one of {', '.join(setting.choices)}" if setting.choices else ""
        return f"setting `{setting.name}`{conf}: {setting.doc}\n\ndefault: {default}{choices}"
    if name.kind == "function":
        fn = functions.lookup(name.key[1])
        if fn is None:
            return None
        return f"function `{fn.name}`" + (f": {fn.doc}" if fn.doc else "")
    return None


def _origin(analysis: Analysis, relation: str, column: str) -> str:
    """``, from `impressions.ad_id```: where a relation's column comes from, when elsewhere."""
    bound = analysis.result.bound if analysis.result is not None else None
    rel = bound.relation(relation) if bound is not None else None
    found = next((c for c in rel.columns if c.name == column), None) if rel is not None else None
    if found is not None and found.origin and found.origin != f"{relation}.{column}":
        return f", from `{found.origin}`"
    item = next((o for o in getattr(rel, "output", ()) if o.name == column), None)
    return f", made as `{excerpt(spark_sql(item.expr), 80)}`" if item is not None else ""


def _watermark(analysis: Analysis, relation: str, column: str) -> str | None:
    plan = analysis.result.plan if analysis.result is not None else None
    node = plan.node(relation) if plan is not None else None
    if plan is not None and node is not None and getattr(node, "watermark_column", None) == column:
        return "event time: " + " ".join(node_text(plan, relation))
    return None


def _relation(analysis: Analysis, relation: str) -> str | None:
    result = analysis.result
    if result is None:
        return None
    plan = result.plan
    planned = node_text(plan, relation) if plan is not None else []
    rel = result.bound.relation(relation) if result.bound is not None else None
    parts = []
    if planned:
        parts.append("```text\n" + "\n".join(planned) + "\n```")
    elif rel is not None:
        parts.append(f"`{relation}` (not planned: the spec has errors)")
    if rel is not None and rel.columns:
        cols = ", ".join(f"`{c.name}` {c.type}" for c in rel.columns[:40])
        more = f" and {len(rel.columns) - 40} more" if len(rel.columns) > 40 else ""
        parts.append(f"columns: {cols}{more}")
    return "\n\n".join(parts) or None
