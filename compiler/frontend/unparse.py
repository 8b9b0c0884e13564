"""The .sjoin AST -> .sjoin text (`sjoin fmt --to sjoin`).

Every statement kind and every expression node the parsers build (``compiler/frontend/parse.py``,
``compiler/frontend/sqlparse.py``) is written back in the language's own syntax, with parentheses
wherever operator precedence needs them; names and strings pass through
``backends/sjointext.py``, the one way user text reaches .sjoin text (text the language
cannot hold raises ``Unwritable``).  Reading the text back gives the same AST, spans aside.
"""

from __future__ import annotations

from sqlglot import exp

from ..vocabulary import annotate
from ..vocabulary.model import JOIN_KINDS
from ..vocabulary.sjointext import Unwritable, name, string
from . import ast

__all__ = ["Unwritable", "spec_text"]

_COMPARE: dict[type[exp.Expression], str] = {
    exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">=",
}  # fmt: skip
_ARITH: dict[type[exp.Expression], str] = {
    exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%",
}  # fmt: skip
# precedence: or 1, and 2, not 3, predicate 4, sum 5, product 6, unary 7, atom 8
_LEVEL: dict[type[exp.Expression], int] = {exp.Or: 1, exp.And: 2, exp.Not: 3, exp.Neg: 7}
_LEVEL.update({exp.Add: 5, exp.Sub: 5, exp.Mul: 6, exp.Div: 6, exp.Mod: 6})
for _kind in (*_COMPARE, exp.NullSafeEQ, exp.NullSafeNEQ, exp.Between, exp.Is, exp.In, exp.Like):
    _LEVEL[_kind] = 4


def _level(node: exp.Expression) -> int:
    if annotate.spelling(node) == "||":
        return 5  # `a || b` stands with + and - (grammar/expr.lark)
    return _LEVEL.get(type(node), 8)  # `x::T` binds as tightly as an atom


def expression(node: exp.Expression, needed: int = 0) -> str:
    """``node`` in .sjoin syntax, in parentheses when its precedence is below ``needed``."""
    text = _expression(node)
    return f"({text})" if _level(node) < needed else text


def _expression(node: exp.Expression) -> str:
    kind = type(node)
    if kind in (exp.Or, exp.And):
        word = " OR " if kind is exp.Or else " AND "
        level = _level(node)
        return word.join(expression(part, level + 1) for part in _flat(node, kind))
    if kind is exp.Not:
        inner = node.this
        if isinstance(inner, exp.Between):
            return (
                f"{expression(inner.this, 5)} NOT BETWEEN {expression(inner.args['low'], 5)} "
                f"AND {expression(inner.args['high'], 5)}"
            )
        if isinstance(inner, exp.Is):
            return f"{expression(inner.this, 5)} IS NOT NULL"
        if isinstance(inner, exp.In):
            items = ", ".join(expression(i) for i in inner.expressions)
            return f"{expression(inner.this, 5)} NOT IN ({items})"
        if isinstance(inner, exp.Like):
            return f"{expression(inner.this, 5)} NOT LIKE {expression(inner.expression, 5)}"
        return f"NOT {expression(inner, 3)}"
    if kind in _COMPARE:
        return f"{expression(node.this, 5)} {_COMPARE[kind]} {expression(node.expression, 5)}"
    if kind is exp.NullSafeEQ:
        word = "IS NOT DISTINCT FROM" if annotate.spelling(node) else "<=>"
        return f"{expression(node.this, 5)} {word} {expression(node.expression, 5)}"
    if kind is exp.NullSafeNEQ:
        return f"{expression(node.this, 5)} IS DISTINCT FROM {expression(node.expression, 5)}"
    if kind is exp.Between:
        return (
            f"{expression(node.this, 5)} BETWEEN {expression(node.args['low'], 5)} AND "
            f"{expression(node.args['high'], 5)}"
        )
    if kind is exp.Is:
        return f"{expression(node.this, 5)} IS NULL"
    if kind is exp.In:
        items = ", ".join(expression(i) for i in node.expressions)
        return f"{expression(node.this, 5)} IN ({items})"
    if kind is exp.Like:
        return f"{expression(node.this, 5)} LIKE {expression(node.expression, 5)}"
    if kind in _ARITH:
        level = _level(node)
        return (
            f"{expression(node.this, level)} {_ARITH[kind]} "
            f"{expression(node.expression, level + 1)}"
        )
    if kind is exp.Neg:
        inner = expression(node.this, 7)
        return f"- {inner}" if inner.startswith("-") else f"-{inner}"
    if kind is exp.Paren:
        return f"({expression(node.this)})"
    if isinstance(node, exp.Column):
        if isinstance(node.this, exp.Star):
            return f"{name(node.table)}.*" if node.table else "*"
        column = name(node.name)
        return f"{name(node.table)}.{column}" if node.table else column
    if kind is exp.Star:
        return "*"
    if kind is exp.Dot:
        return f"{expression(node.this, 8)}.{name(node.expression.name)}"
    if kind is exp.Literal:
        return string(node.this) if node.is_string else str(node.this)
    if kind is exp.Boolean:
        return "TRUE" if node.this else "FALSE"
    if kind is exp.Null:
        return "NULL"
    if isinstance(node, exp.Interval):
        amount = node.this.name
        unit = node.unit.name if node.unit else ""
        shown = amount if ast_number(amount) else string(amount)
        return f"INTERVAL {shown} {unit}"
    if kind in (exp.Cast, exp.TryCast):
        ref = annotate.type_ref(node)
        assert isinstance(ref, ast.TypeRef), "the parsers give every CAST its written type"
        if annotate.is_typed_literal(node):
            return f"{ref.name} {string(node.this.name)}"
        if kind is exp.TryCast:
            return f"TRY_CAST({expression(node.this)} AS {_type(ref)})"
        if annotate.spelling(node) == "::":
            inner = node.this
            if isinstance(inner, exp.Neg) and isinstance(inner.this, exp.Literal):
                return f"-{expression(inner.this)}::{_type(ref)}"  # a signed number's cast
            return f"{expression(inner, 8)}::{_type(ref)}"
        return f"CAST({expression(node.this)} AS {_type(ref)})"
    if kind is exp.Anonymous and annotate.spelling(node) == "||" and len(node.expressions) == 2:
        left, right = node.expressions
        return f"{expression(left, 5)} || {expression(right, 6)}"
    if kind is exp.Anonymous:
        args = ", ".join(expression(a) for a in node.expressions)
        return f"{name(node.name)}({args})"
    if kind is exp.Case:
        parts = ["CASE"]
        if node.this is not None:
            parts.append(expression(node.this))
        for when in node.args.get("ifs") or []:
            parts.append(f"WHEN {expression(when.this)} THEN {expression(when.args['true'])}")
        if node.args.get("default") is not None:
            parts.append(f"ELSE {expression(node.args['default'])}")
        parts.append("END")
        return " ".join(parts)
    raise Unwritable(f"sjoin has no .sjoin text for the expression {node.sql()[:40]!r}")


def ast_number(text: str) -> bool:
    head, _, tail = text.partition(".")
    return head.isascii() and head.isdigit() and (not tail or (tail.isascii() and tail.isdigit()))


def _flat(node: exp.Expression, kind: type) -> list[exp.Expression]:
    out, todo = [], [node]
    while todo:
        cur = todo.pop()
        if type(cur) is kind:
            todo += [cur.expression, cur.this]
        else:
            out.append(cur)
    return out


def _type(ref: ast.TypeRef) -> str:
    if ref.params:
        return f"{ref.name}({', '.join(str(p) for p in ref.params)})"
    return ref.name


def _value(value: ast.Value) -> str:
    if value.kind == "string":
        return string(value.text)
    if value.kind == "name":
        return name(value.text)
    return value.text


def _options(options: tuple[ast.OptionDecl, ...]) -> str:
    return ", ".join(f"{name(o.key.text)} = {_value(o.value)}" for o in options)


def _format(decl: ast.FormatDecl) -> str:
    text = name(decl.format.text)
    return f"{text} ({_options(decl.options)})" if decl.options else text


def _rel(ref: ast.RelRef) -> str:
    text = name(ref.name.text)
    if ref.alias is not None:
        text += f" AS {name(ref.alias.text)}"
    if ref.watermark is not None:
        text += " " + _watermark(ref.watermark)
    return text


def _watermark(decl: ast.WatermarkDecl) -> str:
    delay = decl.delay
    return f"watermark {name(decl.column.text)} delay {delay.amount} {delay.unit.text.lower()}"


def _items(items: tuple[ast.SelectItem, ...]) -> str:
    lines = []
    for item in items:
        text = expression(item.expr)
        if item.alias is not None:
            text += f" AS {name(item.alias.text)}"
        lines.append(text)
    return ",\n           ".join(lines)


def statement(stmt: ast.Statement) -> str:
    if isinstance(stmt, ast.SparkDecl):
        return f"spark {stmt.version}"
    if isinstance(stmt, ast.SetDecl):
        return f"set {name(stmt.name.text)} = {_value(stmt.value)}"
    if isinstance(stmt, ast.StreamDecl):
        width = max(len(name(c.name.text)) for c in stmt.columns)
        cols = ",\n".join(
            f"    {name(c.name.text).ljust(width)}  {_type(c.type)}" for c in stmt.columns
        )
        text = f"stream {name(stmt.name.text)} (\n{cols}\n)"
        if stmt.watermark is not None:
            text += "\n" + _watermark(stmt.watermark)
        if stmt.source is not None:
            text += f"\nfrom {_format(stmt.source)}"
        return text
    if isinstance(stmt, ast.TableDecl):
        width = max(len(name(c.name.text)) for c in stmt.columns)
        cols = ",\n".join(
            f"    {name(c.name.text).ljust(width)}  {_type(c.type)}" for c in stmt.columns
        )
        return f"table {name(stmt.name.text)} (\n{cols}\n)\nfrom {_format(stmt.source)}"
    if isinstance(stmt, ast.JoinDecl):
        keyword = JOIN_KINDS[stmt.how].keyword
        text = (
            f"join {name(stmt.name.text)} = {_rel(stmt.left)} {keyword} JOIN "
            f"{_rel(stmt.right)}\n    ON  {_condition(stmt.on)}"
        )
        if stmt.where is not None:
            text += f"\n    WHERE {_condition(stmt.where)}"
        if stmt.select is not None:
            text += f"\n    SELECT {_items(stmt.select)}"
        if stmt.mode is not None:
            text += f"\n    OUTPUT MODE {stmt.mode.text.lower()}"
        return text
    if isinstance(stmt, ast.AggregateDecl):
        keys = ", ".join(expression(g) for g in stmt.group_by)
        where = "" if stmt.where is None else f"\n    WHERE {_condition(stmt.where)}"
        text = (
            f"aggregate {name(stmt.name.text)} = {_rel(stmt.input)}{where}\n"
            f"    GROUP BY {keys}\n    SELECT {_items(stmt.select)}"
        )
        if stmt.mode is not None:
            text += f"\n    OUTPUT MODE {stmt.mode.text.lower()}"
        return text
    if isinstance(stmt, ast.DedupDecl):
        keys = ", ".join(name(k.text) for k in stmt.keys)
        text = f"dedup {name(stmt.name.text)} = {_rel(stmt.input)} ON ({keys})"
        return text + (" WITHIN WATERMARK" if stmt.within is not None else "")
    if isinstance(stmt, ast.UnionDecl):
        inputs = " UNION ALL ".join(name(i.text) for i in stmt.inputs)
        return f"union {name(stmt.name.text)} = {inputs}"
    if isinstance(stmt, ast.ViewDecl):
        text = (
            f"view {name(stmt.name.text)} =\n    SELECT {_items(stmt.select)}\n"
            f"    FROM {_rel(stmt.input)}"
        )
        if stmt.where is not None:
            text += f"\n    WHERE {_condition(stmt.where)}"
        return text
    if isinstance(stmt, ast.SinkDecl):
        text = f"sink {name(stmt.relation.text)} to {_format(stmt.target)}"
        if stmt.checkpoint is not None:
            text += f" checkpoint {string(stmt.checkpoint.text)}"
        return text
    raise AssertionError(f"unknown statement {type(stmt).__name__}")  # pragma: no cover


def _condition(node: exp.Expression) -> str:
    if type(node) is exp.And:
        return "\n    AND ".join(expression(p, 3) for p in _flat(node, exp.And))
    return expression(node)


def spec_text(spec: ast.SpecFile, header: str = "") -> str:
    """The .sjoin text of ``spec``: its statements in order, a blank line between them."""
    parts = [header.rstrip("\n")] if header else []
    parts.extend(statement(s) for s in spec.statements)
    return "\n\n".join(parts) + "\n"
