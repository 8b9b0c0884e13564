"""A Connect expression (proto JSON, as ``capture.py`` hands it back) -> the .sjoin AST's
expression: the sqlglot tree the SQL front end's transformer (``SqlToAst``) builds, so the
binder reads a PySpark job's columns as it reads a pipeline's.

Each expression is written as Spark SQL text (a Column's functions and operators by name,
``F.expr``/``selectExpr``/``filter(str)`` strings as written) and parsed with the pipeline
SQL grammar: one grammar, one transformer, no second reading of Spark's expression syntax.
Spans: text from a string literal of the job is parsed at its place in the job (a
diagnostic inside ``expr("...")`` points into the string); every node of a Column
expression gets the span of the call that made it.

A column taken from a DataFrame (``df["k"]``, ``df.k``) carries that DataFrame's plan_id;
``Sides`` says which alias of a join it belongs to (the side whose subtree holds the id).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from typing import Any

from lark.exceptions import UnexpectedInput
from sqlglot import exp

from ....grammar import sql_parser
from ...diagnostics.diagnostics import Diagnostics
from ...vocabulary import annotate
from ...vocabulary.source import Span
from .. import ast, sqlast
from ..sqlparse import SqlToAst
from .sites import Locator, Site, parse_call_site

# Column operators (the names the Connect client gives them) -> Spark SQL
_BINARY = {
    "==": "=",
    "!=": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
    "<=>": "<=>",
    "+": "+",
    "-": "-",
    "*": "*",
    "/": "/",
    "%": "%",
    "and": "AND",
    "or": "OR",
    "like": "LIKE",
    "rlike": "RLIKE",
}
_PROTO_TYPES = {
    "string": "STRING",
    "integer": "INT",
    "long": "BIGINT",
    "short": "SMALLINT",
    "byte": "TINYINT",
    "double": "DOUBLE",
    "float": "FLOAT",
    "boolean": "BOOLEAN",
    "timestamp": "TIMESTAMP",
    "timestamp_ntz": "TIMESTAMP_NTZ",
    "date": "DATE",
    "binary": "BINARY",
}
_SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PREFIX = "CREATE TEMPORARY VIEW v AS SELECT "
_SUFFIX = "\nFROM t"


class Unmodelled(Exception):
    """An expression sjoin cannot read (a UDF, a literal kind it lacks): E041 at ``site``."""

    def __init__(self, what: str, site: Site | None) -> None:
        super().__init__(what)
        self.what = what
        self.site = site


# plan_id -> the alias of the join side whose subtree holds it (None: not a join's column)
Sides = Callable[[int], str | None]


def quote(name: str) -> str:
    """A name as Spark SQL reads it: back-quoted unless it is a plain identifier."""
    return name if _SIMPLE_NAME.match(name) else "`" + name.replace("`", "``") + "`"


def string_literal(text: str) -> str:
    """``text`` as a Spark SQL string literal (Spark's backslash escapes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def site_of(node: dict[str, Any]) -> Site | None:
    """Where the job made an expression (``sites.install`` put it into its origin)."""
    origin = node.get("common", {}).get("origin", {}).get("python_origin", {})
    call_site = origin.get("call_site")
    return parse_call_site(call_site) if call_site else None


def sql_text(node: dict[str, Any], sides: Sides | None = None) -> str:
    """The Spark SQL text of a Connect expression, with the parentheses precedence needs and
    no others, so that the parser builds the tree a spec's author would write."""
    return _sql(node, sides)[0]


# operator precedence, lowest first (Spark's SqlBaseParser): OR, AND, NOT, comparisons,
# + -, * / %, unary minus, then atoms
_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "cmp": 4, "add": 5, "mul": 6, "neg": 7, "atom": 9}
_BINARY_LEVEL = {
    "OR": 1,
    "AND": 2,
    "=": 4,
    "!=": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "<=>": 4,
    "LIKE": 4,
    "RLIKE": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
}
_NODE_LEVEL: tuple[tuple[type[exp.Expression], int], ...] = (
    (exp.Or, 1),
    (exp.And, 2),
    (exp.Not, 3),
    (exp.EQ, 4),
    (exp.NEQ, 4),
    (exp.GT, 4),
    (exp.GTE, 4),
    (exp.LT, 4),
    (exp.LTE, 4),
    (exp.NullSafeEQ, 4),
    (exp.Between, 4),
    (exp.In, 4),
    (exp.Is, 4),
    (exp.Like, 4),
    (exp.Add, 5),
    (exp.Sub, 5),
    (exp.Mul, 6),
    (exp.Div, 6),
    (exp.Mod, 6),
    (exp.Neg, 7),
)


def _wrap(part: tuple[str, int], least: int) -> str:
    text, level = part
    return text if level >= least else f"({text})"


def _sql(node: dict[str, Any], sides: Sides | None) -> tuple[str, int]:
    kind = next(k for k in node if k != "common")
    body = node[kind]
    atom = _PRECEDENCE["atom"]
    if kind == "unresolved_attribute":
        name: str = body["unparsed_identifier"]
        if body.get("is_metadata_column"):
            raise Unmodelled(f"the metadata column `{name}`", site_of(node))
        parts = _name_parts(name)
        if "plan_id" in body and sides is not None:
            alias = sides(int(body["plan_id"]))
            if alias is not None:
                return ".".join(quote(p) for p in (alias, *parts[-1:])), atom
        return ".".join(quote(p) for p in parts), atom
    if kind == "unresolved_function":
        return _function(body, node, sides)
    if kind == "expression_string":
        text = str(body["expression"])
        return text, _text_level(text)
    if kind == "literal":
        return _literal(body, node), atom
    if kind == "cast":
        target = body["type_str"] if "type_str" in body else _proto_type(body.get("type", {}), node)
        return f"CAST({sql_text(body['expr'], sides)} AS {target})", atom
    if kind == "alias":
        names = body.get("name", [])
        if len(names) != 1:
            raise Unmodelled("an alias of several names", site_of(node))
        return f"{sql_text(body['expr'], sides)} AS {quote(names[0])}", 0
    if kind == "unresolved_extract_value":  # a struct's field: df.window.start
        field = body.get("extraction", {}).get("literal", {}).get("string")
        if field is None:
            raise Unmodelled("an extraction of other than a named field", site_of(node))
        child = _sql(body["child"], sides)
        return f"{_wrap(child, atom)}.{quote(str(field))}", atom
    if kind == "unresolved_star":
        target = body.get("unparsed_target")
        return (str(target) if target else "*"), atom
    if kind == "common_inline_user_defined_function":
        name = body.get("function_name", "a UDF")
        raise Unmodelled(f"the Python UDF `{name}`", site_of(node))
    raise Unmodelled(f"a `{kind}` expression", site_of(node))


def _text_level(text: str) -> int:
    """The precedence of an ``expr("...")`` string's top operator (parsed alone)."""
    item = parse_item(text, None, Span(0, 0), Diagnostics())
    if item is None:
        return 0
    node = item.expr
    if item.alias is not None:
        return 0
    return next((level for kind, level in _NODE_LEVEL if isinstance(node, kind)), 9)


def _name_parts(name: str) -> list[str]:
    """``a.b`` -> [a, b]; back-quoted parts as written (``\\`a.b\\```)."""
    parts: list[str] = []
    for m in re.finditer(r"`((?:[^`]|``)*)`|([^.`]+)", name):
        parts.append(m[1].replace("``", "`") if m[1] is not None else m[2])
    return parts or [name]


def _function(body: dict[str, Any], node: dict[str, Any], sides: Sides | None) -> tuple[str, int]:
    fn: str = body["function_name"]
    args = [_sql(a, sides) for a in body.get("arguments", [])]
    if fn in _BINARY and len(args) == 2:
        op = _BINARY[fn]
        level = _BINARY_LEVEL[op]
        if level <= 2:  # AND, OR: associative
            return f"{_wrap(args[0], level)} {op} {_wrap(args[1], level)}", level
        if level == 4:  # comparisons do not chain
            return f"{_wrap(args[0], 5)} {op} {_wrap(args[1], 5)}", level
        return f"{_wrap(args[0], level)} {op} {_wrap(args[1], level + 1)}", level
    if fn in ("not", "!") and len(args) == 1:
        return f"NOT {_wrap(args[0], 4)}", 3
    if fn in ("isNull", "isnull") and len(args) == 1:
        return f"{_wrap(args[0], 5)} IS NULL", 4
    if fn in ("isNotNull", "isnotnull") and len(args) == 1:
        return f"{_wrap(args[0], 5)} IS NOT NULL", 4
    if fn in ("negative", "-") and len(args) == 1:
        return f"- {_wrap(args[0], 8)}", 7
    if fn in ("in", "isin") and args:
        rest = ", ".join(a[0] for a in args[1:])
        return f"{_wrap(args[0], 5)} IN ({rest})", 4
    distinct = "DISTINCT " if body.get("is_distinct") else ""
    return f"{fn}({distinct}{', '.join(a[0] for a in args)})", 9


def _literal(body: dict[str, Any], node: dict[str, Any]) -> str:
    kind = next((k for k in body if k != "common"), "null")
    value: Any = body.get(kind)
    if kind == "string":
        return string_literal(str(value))
    if kind in ("integer", "long", "short", "byte"):
        return str(int(value))
    if kind in ("double", "float"):
        return repr(float(value))
    if kind == "boolean":
        return "TRUE" if value else "FALSE"
    if kind == "null":
        return "NULL"
    if kind == "decimal":
        return f"{value['value']}BD"
    raise Unmodelled(f"a {kind} literal", site_of(node))


def _proto_type(data_type: dict[str, Any], node: dict[str, Any]) -> str:
    kind = next(iter(data_type), "")
    if kind in _PROTO_TYPES:
        return _PROTO_TYPES[kind]
    if kind == "decimal":
        d = data_type["decimal"]
        return f"DECIMAL({d.get('precision', 10)}, {d.get('scale', 0)})"
    raise Unmodelled(f"a cast to {kind or 'an unknown type'}", site_of(node))


def parse_item(
    text: str, offset: int | None, whole: Span, diags: Diagnostics
) -> ast.SelectItem | None:
    """``text`` (one select item: an expression with an optional alias) parsed with the
    pipeline SQL grammar.  ``offset``: where ``text`` stands in the job (a string literal
    of it), so every node keeps its own place; None: every node gets the span ``whole``
    (a Column expression: the call that made it).  E001 (and the transformer's refusals)
    at their place; None then."""
    base = (offset if offset is not None else 0) - len(_PREFIX)
    try:
        tree = sql_parser().parse(_PREFIX + text + _SUFFIX)
    except UnexpectedInput as err:
        at = whole
        if offset is not None and err.pos_in_stream is not None:
            pos = min(max(err.pos_in_stream - len(_PREFIX), 0), len(text))
            at = Span(offset + pos, offset + pos + 1)
        shown = " ".join(text.split())
        diags.add("E001", f"Spark SQL that sjoin cannot read: `{shown[:80]}`", at, "not read here")
        return None
    transformer = SqlToAst(base)
    found = transformer.transform(tree)
    for refusal in transformer.refusals:
        at = refusal.span if offset is not None else whole
        diags.add(refusal.code, refusal.message, at, refusal.label, refusal.help)
    if transformer.refusals or not isinstance(found, sqlast.CreateDataset):
        return None
    query = found.query
    if query is None or len(query.select) != 1:
        diags.add("E001", f"not one expression: `{text[:80]}`", whole, "here")
        return None
    item = query.select[0]
    if offset is None:
        return respanned(item, whole)
    return item


def respanned(item: ast.SelectItem, where: Span) -> ast.SelectItem:
    """``item`` with every span (of its nodes, names, units, types and alias) ``where``."""
    for node in item.expr.walk():
        if annotate.span(node) is not None:
            annotate.set_span(node, where)
        if annotate.name_span(node) is not None:
            annotate.set_name_span(node, where)
        if annotate.unit_span(node) is not None:
            annotate.set_unit_span(node, where)
        ref = annotate.type_ref(node)
        if isinstance(ref, ast.TypeRef):
            annotate.set_type_ref(
                node,
                dataclasses.replace(ref, span=where),
                typed_literal=annotate.is_typed_literal(node),
            )
    alias = dataclasses.replace(item.alias, span=where) if item.alias is not None else None
    return ast.SelectItem(item.expr, alias, where)


def lower_item(
    node: dict[str, Any],
    locator: Locator,
    diags: Diagnostics,
    fallback: Span,
    sides: Sides | None = None,
) -> ast.SelectItem | None:
    """One Connect expression -> a select item of the .sjoin AST (None: reported).  An
    ``expr("...")`` string keeps its place in the job's string literal."""
    site = site_of(node)
    whole = locator.span(site) if site is not None else fallback
    kind = next((k for k in node if k != "common"), "")
    if kind == "expression_string":
        text = node[kind]["expression"]
        return parse_item(text, locator.string_argument(site, text), whole, diags)
    try:
        text = sql_text(node, sides)
    except Unmodelled as err:
        at = locator.span(err.site) if err.site is not None else whole
        diags.add(
            "E041",
            f"{err.what} in a PySpark job",
            at,
            "not modelled",
            "sjoin models Column expressions of Spark SQL functions and operators, "
            "and expr() strings",
        )
        return None
    return parse_item(text, None, whole, diags)


def struct_ddl(data_type: dict[str, Any]) -> str | None:
    """A StructType proto (``DataFrame.to``'s schema) as DDL, or None when it is no struct
    or a field has a type no column can be declared with."""
    fields = data_type.get("struct", {}).get("fields") if isinstance(data_type, dict) else None
    if not isinstance(fields, list) or not fields:
        return None
    out = []
    for f in fields:
        kind = next(iter(f.get("data_type") or {}), "")
        if kind == "timestamp_ntz" or (kind not in _PROTO_TYPES and kind != "decimal"):
            return None
        out.append(f"{quote(str(f.get('name', '')))} {_proto_type(f['data_type'], f)}")
    return ", ".join(out)


def schema_text(literal: str) -> str:
    """A ``from_json`` / ``.schema(...)`` schema as DDL: a StructType's JSON as
    ``name TYPE, ...``; DDL as written."""
    text = literal.strip()
    if not text.startswith("{"):
        return text
    data = json.loads(text)
    return ", ".join(f"{quote(f['name'])} {_json_type(f['type'])}" for f in data.get("fields", []))


def _json_type(data_type: Any) -> str:
    if isinstance(data_type, str):
        m = re.fullmatch(r"decimal\((\d+),\s*(\d+)\)", data_type)
        if m:
            return f"DECIMAL({m[1]}, {m[2]})"
        return _PROTO_TYPES.get(data_type, data_type.upper())
    return str(data_type.get("type", "struct")).upper() + "<...>"
