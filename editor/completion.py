"""Completion: what may come at the cursor, from the text before it and the document's
newest check.

After `ALIAS.` (an alias or a relation name of the statement the cursor is in): that
input's columns with their types.  After `set `: the settings, with their documentation.
After a number (`delay 5 `, `INTERVAL 1 `): the duration units.  Inside a stream's or a
table's column list, after a column's name: the types.  Elsewhere: the keywords, the
relations defined so far, the aliases of the statement, and the functions with their
arity and documentation.

The statement being typed rarely parses, so its aliases are read from its text; the
columns come from the newest check, whose bound model holds every statement that parsed.
"""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from ..compiler.binding.bound import Input
from ..compiler.vocabulary import functions, settings
from ..compiler.vocabulary import types as t
from .document import Analysis

# the words of the .sjoin grammar (grammar/sjoin.lark) and of the SQL it embeds, as a
# spec writes them (tests/editor/test_completion.py checks each against the grammar)
STATEMENTS = (
    "stream", "table", "join", "aggregate", "view", "union", "dedup", "sink", "set", "spark",
)  # fmt: skip
KEYWORDS = (
    "AS", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "SEMI", "ANTI", "JOIN", "ON", "SELECT",
    "WHERE", "GROUP", "BY", "OUTPUT", "MODE", "UNION", "ALL", "WITHIN", "WATERMARK", "FROM",
    "TO", "CHECKPOINT", "DELAY", "AND", "OR", "NOT", "NULL", "IS", "BETWEEN", "INTERVAL",
    "CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "TRUE", "FALSE", "DISTINCT",
)  # fmt: skip
UNITS = ("millisecond", "milliseconds", "second", "seconds", "minute", "minutes",
         "hour", "hours", "day", "days", "week", "weeks")  # fmt: skip

_STATEMENT_START = re.compile(r"^(?:" + "|".join(STATEMENTS) + r")\b", re.IGNORECASE | re.MULTILINE)
_QUALIFIED = re.compile(r"([A-Za-z_]\w*)\.(\w*)$")
_SET = re.compile(r"^\s*set\s+\w*$", re.IGNORECASE)
_AFTER_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\s+\w*$")
_INPUT = re.compile(
    r"(?:=|\bJOIN|\bFROM)\s+([A-Za-z_]\w*)(?:\s+(?:AS\s+)?([A-Za-z_]\w*))?", re.IGNORECASE
)
_COLUMN_TYPE = re.compile(r"[(,]\s*[A-Za-z_]\w*\s+\w*$")
_NOT_ALIAS = frozenset(k.lower() for k in (*KEYWORDS, "watermark"))


def statement_text(text: str, offset: int) -> str:
    """The text of the statement the cursor is in, up to the cursor: from the last line
    that starts with a statement's keyword."""
    starts = [m.start() for m in _STATEMENT_START.finditer(text, 0, offset)]
    return text[starts[-1] if starts else 0 : offset]


def aliases(statement: str) -> dict[str, str]:
    """The aliases (and input relations) of a statement's text: alias -> relation."""
    found: dict[str, str] = {}
    # the inputs come after the statement's name (`join j = ...`): its own keyword is none
    for m in _INPUT.finditer(statement, max(0, statement.find("="))):
        relation, alias = m[1], m[2]
        if relation.lower() in _NOT_ALIAS:
            continue
        found.setdefault(relation, relation)
        if alias and alias.lower() not in _NOT_ALIAS:
            found[alias] = relation
    return found


def complete(analysis: Analysis, offset: int) -> lsp.CompletionList:
    text = analysis.text
    line, _ = analysis.lines.position(offset)
    before = text[analysis.lines.offset(line, 0) : offset]
    statement = statement_text(text, offset)
    items: list[lsp.CompletionItem]
    qualified = _QUALIFIED.search(before)
    if qualified is not None:
        relation = aliases(statement).get(qualified[1]) or _bound_alias(
            analysis, qualified[1], offset
        )
        items = _columns(analysis, relation or qualified[1])
    elif _SET.match(before):
        items = [
            lsp.CompletionItem(
                s.name,
                kind=lsp.CompletionItemKind.Property,
                detail=s.spark_conf or None,
                documentation=s.doc,
            )
            for s in settings.SETTINGS.values()
        ]
    elif _AFTER_NUMBER.search(before):
        items = [lsp.CompletionItem(u, kind=lsp.CompletionItemKind.Unit) for u in UNITS]
    elif _in_column_list(statement) and _COLUMN_TYPE.search(statement):
        items = [
            lsp.CompletionItem(name.upper(), kind=lsp.CompletionItemKind.TypeParameter)
            for name in t.TYPE_NAMES
        ]
    else:
        items = _general(analysis, statement)
    return lsp.CompletionList(is_incomplete=False, items=items)


def _bound_alias(analysis: Analysis, alias: str, offset: int) -> str | None:
    """The relation ``alias`` names in the checked statement at ``offset`` (a pipeline's SQL,
    whose FROM clauses the text patterns above do not read), else in any statement."""
    bound = analysis.result.bound if analysis.result is not None else None
    found = None
    at = offset + analysis.base
    for rel in bound.relations if bound is not None else ():
        for attr in ("left", "right", "input"):
            inp = getattr(rel, attr, None)
            if isinstance(inp, Input) and inp.alias == alias:
                if rel.span.start <= at <= rel.span.end:
                    return inp.relation
                found = found or inp.relation
    return found


def _in_column_list(statement: str) -> bool:
    head = statement.lstrip().split(None, 1)[0].lower() if statement.strip() else ""
    return head in ("stream", "table") and statement.count("(") > statement.count(")")


def _columns(analysis: Analysis, relation: str) -> list[lsp.CompletionItem]:
    bound = analysis.result.bound if analysis.result is not None else None
    rel = bound.relation(relation) if bound is not None else None
    if rel is None:
        return []
    return [
        lsp.CompletionItem(
            c.name,
            kind=lsp.CompletionItemKind.Field,
            detail=f"{c.type}" + (" (event time)" if c.event_time else ""),
            documentation=f"column of `{relation}`",
        )
        for c in rel.columns
    ]


def _signature(fn: functions.Function) -> str:
    if fn.max_args is None:
        arity = f"{fn.min_args} or more arguments"
    elif fn.min_args == fn.max_args:
        arity = f"{fn.min_args} argument{'s' if fn.min_args != 1 else ''}"
    else:
        arity = f"{fn.min_args} to {fn.max_args} arguments"
    kind = "aggregate, " if fn.aggregate else ""
    return f"{fn.name}(...): {kind}{arity}"


def _general(analysis: Analysis, statement: str) -> list[lsp.CompletionItem]:
    items = [lsp.CompletionItem(k, kind=lsp.CompletionItemKind.Keyword) for k in STATEMENTS]
    items += [lsp.CompletionItem(k, kind=lsp.CompletionItemKind.Keyword) for k in KEYWORDS]
    bound = analysis.result.bound if analysis.result is not None else None
    for rel in bound.relations if bound is not None else ():
        items.append(
            lsp.CompletionItem(
                rel.name,
                kind=lsp.CompletionItemKind.Class,
                detail=type(rel).__name__.lower(),
            )
        )
    for alias, relation in aliases(statement).items():
        if alias != relation:
            items.append(
                lsp.CompletionItem(
                    alias, kind=lsp.CompletionItemKind.Variable, detail=f"alias of {relation}"
                )
            )
    for fn in functions.FUNCTIONS.values():
        items.append(
            lsp.CompletionItem(
                fn.name,
                kind=lsp.CompletionItemKind.Function,
                detail=_signature(fn),
                documentation=fn.doc or None,
            )
        )
    return items
