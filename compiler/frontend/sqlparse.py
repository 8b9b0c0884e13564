"""A pipeline's SQL file -> its SQL syntax nodes (``compiler/frontend/sqlast.py``).

The file is read as Spark Declarative Pipelines reads it: split at each `;` outside string
literals, quoted names and comments (``SqlGraphRegistrationContext.splitSqlTextBySemicolon``:
block comments nest, a backslash escapes the next character in a string), each piece one
statement.  Comments are blanked (line breaks kept) before a statement is parsed, so every
span is a place in the file.  `SET key = value` is read as Spark reads it (the rest of the
statement is the value); every other statement is parsed with ``grammar/pipeline_sql.lark``.

String literals mean what Spark's lexer and ``unescapeSQLString`` make of them: `\\`
escapes (``\\n``, ``\\t``, ``\\uXXXX``, ``\\UXXXXXXXX``, three octal digits, ``\\%`` and
``\\_`` kept with their backslash, any other character as itself), a doubled quote for one,
raw strings ``r'...'``, and adjacent literals joined (``'a' 'b'`` is ``ab``).

A line comment ``-- sjoin: ...`` holds a .sjoin statement for what SQL has no words for: the
target Spark (``-- sjoin: spark 4.1``), a setting without a Spark conf (``-- sjoin: set
allow_unemitted_outer_rows = true``), a sink, or the source of the CREATE STREAMING TABLE it
stands before (``-- sjoin: from kafka (topic = 'orders', ...)``).  It is parsed with the
.sjoin grammar, at its place in the file.

Problems are diagnostics: E001 (syntax), E008 (characters no SQL file of sjoin may hold) and
E033 (SQL that sjoin cannot model), each at its place; a statement with any of them is left
out (its dataset's name is kept as broken, so nothing that reads it cascades).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import replace as dc_replace
from decimal import Decimal, InvalidOperation
from typing import Any

from lark import Token, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.tree import Meta
from sqlglot import exp

from ...grammar import clause_parser, parser, sql_parser
from ..diagnostics.diagnostics import Diagnostics
from ..vocabulary import annotate
from ..vocabulary import types as t
from ..vocabulary.source import BIDI_CONTROLS, HOSTILE, Span, char_name
from . import ast, sqlast
from .parse import ToAst, _describe_expected, _nesting_error, _syntax_error, nesting_refused

ANNOTATION = re.compile(r"--[ \t]*sjoin:", re.IGNORECASE)
_FILE_FORMATS = frozenset({"json", "csv", "parquet", "orc", "text", "avro", "delta", "binaryfile"})
NO_SQL_SOURCE = (
    "open-source Spark's SQL has no streaming reader of files or Kafka (checked on Spark "
    "4.3.0: STREAM(json.`dir`) reads a batch, and read_files is no function): define the "
    "stream in Python (@dp.table returning spark.readStream...) and declare its columns "
    "with CREATE STREAMING TABLE name (col TYPE, ...) in sjoin-schemas.sql "
    "(docs/pipelines.md)"
)


# ------------------------------------------------------------------ splitting


class _Scan:
    """One pass over a file's text: the statements (split at `;` as SDP splits), the
    comments (to blank), the string literals and quoted names (for the character check),
    and each unterminated literal or comment (E001)."""

    def __init__(self, text: str, start: int, end: int) -> None:
        self.statements: list[tuple[int, int]] = []
        self.comments: list[tuple[int, int]] = []
        self.literals: list[tuple[int, int]] = []
        self.unterminated: list[tuple[int, str]] = []
        self._run(text, start, end)

    def _run(self, text: str, start: int, end: int) -> None:
        i, begin = start, start
        while i < end:
            ch = text[i]
            two = text[i : i + 2]
            if two == "--":
                stop = _line_end(text, i, end)
                self.comments.append((i, stop))
                i = stop
            elif two == "/*":
                closed = _block_comment_end(text, i, end)
                if closed is None:
                    self.unterminated.append((i, "comment"))
                    self.comments.append((i, end))
                    i = end
                else:
                    self.comments.append((i, closed))
                    i = closed
            elif ch in "'\"`":
                raw = ch != "`" and i > start and text[i - 1] in "rR" and _word_start(text, i - 1)
                quoted = _quoted_end(text, i, end, ch, raw or ch == "`")
                if quoted is None:
                    self.unterminated.append((i, "name" if ch == "`" else "string"))
                    self.literals.append((i, end))
                    i = end
                else:
                    self.literals.append((i, quoted))
                    i = quoted
            elif ch == ";":
                self.statements.append((begin, i))
                begin = i = i + 1
            else:
                i += 1
        self.statements.append((begin, end))


def _word_start(text: str, i: int) -> bool:
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")


def _line_end(text: str, i: int, end: int) -> int:
    m = re.compile(r"[\r\n]").search(text, i, end)
    return end if m is None else m.start()


def _block_comment_end(text: str, i: int, end: int) -> int | None:
    depth, i = 0, i
    while i < end:
        two = text[i : i + 2]
        if two == "/*":
            depth += 1
            i += 2
        elif two == "*/":
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return None


def _quoted_end(text: str, i: int, end: int, quote: str, raw: bool) -> int | None:
    j = i + 1
    while j < end:
        ch = text[j]
        if ch == "\\" and not raw:
            j += 2
        elif ch == quote:
            if j + 1 < end and text[j + 1] == quote and not (raw and quote != "`"):
                j += 2
            else:
                return j + 1
        else:
            j += 1
    return None


# ------------------------------------------------------------------ string literals

_SINGLE_ESCAPES = {"0": "\0", "'": "'", '"': '"', "b": "\b", "n": "\n", "r": "\r", "t": "\t"}
_SINGLE_ESCAPES.update({"Z": "\x1a", "\\": "\\", "%": "\\%", "_": "\\_"})


def unescape(token: str) -> str:
    """The value of one Spark string literal token (quotes included), as Spark's
    ``unescapeSQLString`` reads it (checked on Spark 4.3.0: tests/integration/spark)."""
    if token[0] in "rR":
        return token[2:-1]
    quote, body = token[0], token[1:-1]
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch == "\\" and i + 1 < n:
            nxt = body[i + 1]
            octal = body[i + 1 : i + 4]
            if re.fullmatch(r"[0-3][0-7][0-7]", octal):
                out.append(chr(int(octal, 8)))
                i += 4
            elif nxt == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", body[i + 2 : i + 6]):
                out.append(chr(int(body[i + 2 : i + 6], 16)))
                i += 6
            elif nxt == "U" and re.fullmatch(r"[0-9A-Fa-f]{8}", body[i + 2 : i + 10]):
                code = int(body[i + 2 : i + 10], 16)
                out.append(chr(code) if code <= 0x10FFFF else body[i : i + 10])
                i += 10
            else:
                out.append(_SINGLE_ESCAPES.get(nxt, nxt))
                i += 2
        elif ch == quote and body[i + 1 : i + 2] == quote:
            out.append(quote)
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# ------------------------------------------------------------------ durations

_UNIT_MICROS: dict[str, int] = {
    "microsecond": 1,
    "millisecond": 1000,
    "second": 1_000_000,
    "minute": 60_000_000,
    "hour": 3_600_000_000,
    "day": 86_400_000_000,
    "week": 7 * 86_400_000_000,
}
_UNIT_WORDS = {
    "week": "WEEKS",
    "day": "DAYS",
    "hour": "HOURS",
    "minute": "MINUTES",
    "second": "SECONDS",
    "millisecond": "MILLISECONDS",
}
_INTERVAL_TEXT = re.compile(r"\s*(?:interval\s+)?((?:[+-]?\s*[0-9]+(?:\.[0-9]+)?\s*[A-Za-z]+\s*)+)")
_INTERVAL_PART = re.compile(r"([+-]?)\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)")


def _unit_help(amount: str, unit: str) -> str:
    """How to write ``amount unit`` so that Spark's interval parser reads it."""
    word = t.SPARK_UNITS.get(unit.lower(), unit).lower()
    if word not in t.SPARK_UNIT_WORDS:
        close = difflib.get_close_matches(unit.lower(), sorted(t.SPARK_UNIT_WORDS), n=1)
        return (
            f"did you mean `{close[0]}`? " if close else ""
        ) + "Spark reads microseconds, milliseconds, seconds, minutes, hours, days and weeks"
    if word != unit.lower():
        return f"did you mean `{amount} {word}`?"
    ms = t.duration_ms(amount, word) if "." in amount else None
    if ms is not None and ms > 0:
        n, exact = t.exact_duration(ms * 1000)
        return f"write it in a smaller unit: `{n} {exact}`"
    return "write it in a smaller unit, or in seconds, which take a fraction"


def _singular(unit: str) -> str:
    word = unit.lower()
    return word[:-1] if word.endswith("s") else word


def single_unit(parts: list[tuple[str, str]]) -> tuple[str, str] | str:
    """``[(amount, unit), ...]`` of a multi-unit interval as one ``(amount, UNIT)`` in the
    largest unit that holds it exactly (``1 HOUR 30 MINUTES`` is ``90 MINUTES``), or the
    reason it has none (a month or a year: no fixed length; microseconds that are no whole
    number of milliseconds)."""
    if len(parts) == 1:
        return parts[0][0], parts[0][1].upper()  # as written: the binder judges it
    total = Decimal(0)
    for amount, unit in parts:
        word = _singular(unit)
        if word not in _UNIT_MICROS:
            return (
                f"`{unit}` has no fixed length"
                if word in ("month", "year")
                else (f"`{unit}` is no unit of an interval")
            )
        try:
            total += Decimal(amount) * _UNIT_MICROS[word]
        except InvalidOperation:
            return f"`{amount}` is no number"
    if total != total.to_integral_value():
        return "the interval is no whole number of microseconds"
    micros = int(total)
    if micros < 0:
        return "the interval is negative"
    if micros % 1000:
        return "sjoin counts time in whole milliseconds"
    for word in ("week", "day", "hour", "minute", "second", "millisecond"):
        size = _UNIT_MICROS[word]
        if micros % size == 0:
            return str(micros // size), _UNIT_WORDS[word]
    raise AssertionError("unreachable")  # pragma: no cover - milliseconds divide it


# ------------------------------------------------------------------ the transformer


class _Tail:
    """``[OPTIONS (...)] [WATERMARK ...] [[AS] alias]`` of a read."""

    def __init__(
        self,
        watermark: sqlast.WatermarkClause | None,
        alias: ast.Ident | None,
        options: tuple[ast.OptionDecl, ...] | _Unreadable,
    ) -> None:
        self.watermark = watermark
        self.alias = alias
        self.options = None if isinstance(options, _Unreadable) else options
        self.unreadable = options.span if isinstance(options, _Unreadable) else None


class _Unreadable:
    """A read's ``WITH (...)`` with a value Spark's options hold as no text (NULL, a name)."""

    def __init__(self, span: Span) -> None:
        self.span = span


# a property whose value Spark's options hold as no text
_UNREADABLE = object()


class _Distinct:
    """``SELECT DISTINCT``'s word."""

    def __init__(self, span: Span) -> None:
        self.span = span


class _Clause:
    def __init__(self, kind: str, value: Any, span: Span) -> None:
        self.kind, self.value, self.span = kind, value, span


class SqlToAst(ToAst):
    """The one expression transformer (``parse.ToAst``) with Spark's literals, and the
    statement rules of pipeline SQL.

    What sjoin cannot model is collected in ``refusals`` (a placeholder stands in the tree),
    never raised: the caller reports each one and leaves the statement out."""

    REFUSED = "E033"  # valid Spark SQL that sjoin does not model

    # -------------------------------------------------------------- literals
    @v_args(meta=True)
    def string(self, meta: Meta, kids: list[Token]) -> exp.Expression:
        node = exp.Literal.string("".join(unescape(str(k)) for k in kids))
        annotate.set_span(node, self._span(meta))
        return node

    @v_args(meta=True)
    def number(self, meta: Meta, kids: list[Token]) -> exp.Expression:
        text = str(kids[0])
        span = self._span(meta)
        m = re.fullmatch(
            r"(?P<whole>[0-9]*)(?:(?P<dot>\.)(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]+))?"
            r"(?P<suffix>[bB][dD]|[lLsSyYdDfF])?",
            text,
        )
        assert m is not None  # the NUMBER terminal's own shape
        whole, frac, power = m["whole"], m["frac"] or "", m["exp"]
        suffix = (m["suffix"] or "").upper()
        plain = (whole or "0") + (f".{frac}" if frac else "")
        if not suffix and power is None and whole and (m["dot"] is None or frac):
            return _spanned(exp.Literal.number(text), span)
        if power is not None and suffix not in ("", "D", "F", "BD"):
            return self._refuse(
                f"`{text}`: an exponent with the suffix {suffix}",
                span,
                "not a Spark literal",
            )
        if suffix == "BD" or (not suffix and power is None):
            value = Decimal(plain if power is None else f"{plain}e{power}")
            _sign, digits, exponent = value.as_tuple()
            scale = max(0, -int(exponent))
            precision = max(len(digits), scale, 1)
            if precision > 38:
                return self._refuse(
                    f"`{text}` has more than 38 digits", span, "out of range",
                    "Spark's widest number is DECIMAL(38)",
                )  # fmt: skip
            kind = ast.TypeRef("DECIMAL", (precision, scale), span)
            literal = exp.Literal.number(format(value, "f"))
        else:
            names = {"L": "BIGINT", "S": "SMALLINT", "Y": "TINYINT", "F": "FLOAT", "D": "DOUBLE"}
            kind = ast.TypeRef(names.get(suffix, "DOUBLE"), (), span)
            literal = (
                exp.Literal.string(f"{plain}e{power}")
                if power is not None
                else exp.Literal.number(plain)
            )
        annotate.set_span(literal, span)
        node = exp.Cast(this=literal, to=exp.DataType.build("unknown"))
        annotate.set_type_ref(node, kind)
        return _spanned(node, span)

    @v_args(meta=True)
    def typed_literal(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        kind, text = kids
        node = exp.Cast(this=exp.Literal.string(text.this), to=exp.DataType.build("unknown"))
        annotate.set_type_ref(
            node, ast.TypeRef(str(kind), (), self._tok_span(kind)), typed_literal=True
        )
        return _spanned(node, self._span(meta))

    # -------------------------------------------------------------- intervals
    def _interval_node(
        self, parts: list[tuple[str, str]], span: Span, unit_span: Span
    ) -> exp.Expression:
        for amount, unit in parts:  # the SQL runs on Spark as written: Spark's rules
            problem = t.spark_interval_problem(amount, unit)
            if problem is not None:
                return self._refuse(
                    f"Spark's parser refuses this interval: {problem}",
                    span,
                    "Spark's parser fails here",
                    _unit_help(amount, unit),
                    code="E014",
                )
        found = single_unit(parts)
        if isinstance(found, str):
            return self._refuse(
                f"this interval is no single duration: {found}",
                span,
                "not a duration sjoin can hold",
                "write a fixed length in weeks, days, hours, minutes, seconds or milliseconds",
            )
        amount, unit = found
        node = exp.Interval(this=exp.Literal.string(amount), unit=exp.Var(this=unit))
        annotate.set_unit_span(node, unit_span)
        return _spanned(node, span)

    @v_args(meta=True)
    def interval(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        parts = [p for p in kids[1:]]
        span = self._span(meta)
        unit_span = Span(parts[0][2].start, parts[-1][2].end)
        return self._interval_node([(a, u) for a, u, _ in parts], span, unit_span)

    @v_args(meta=True)
    def interval_part(self, meta: Meta, kids: list[Any]) -> tuple[str, str, Span]:
        amount, unit = kids
        text = unescape(str(amount)).strip() if amount.type == "STRING" else str(amount)
        return text.replace(" ", ""), str(unit[0]), self._tok_span(unit[0])

    def unit(self, kids: list[Token]) -> list[Token]:
        return kids

    @v_args(meta=True)
    def interval_text(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        text = kids[1].this
        span = self._span(meta)
        m = _INTERVAL_TEXT.fullmatch(text)
        if m is None:
            return self._refuse(
                f"`INTERVAL '{text[:40]}'` is no interval sjoin reads",
                span,
                "not read",
                "write e.g. INTERVAL 10 SECONDS",
            )
        parts = []
        for sign, amount, unit in _INTERVAL_PART.findall(m[1]):
            parts.append((sign + amount, unit))
        return self._interval_node(parts, span, annotate.span(kids[1]) or span)

    @v_args(meta=True)
    def interval_unit_to_unit(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return self._refuse(
            "an interval from one unit to another (`HOUR TO MINUTE`)",
            self._span(meta),
            "not read",
            "write it in one unit, e.g. INTERVAL 90 MINUTES",
        )

    # -------------------------------------------------------------- other expressions
    @v_args(meta=True)
    def func_call(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        name, _args = kids
        call: exp.Expression = super().func_call(meta, kids)
        if name.text.lower() == "window" and isinstance(call, exp.Anonymous):
            for arg in call.expressions[1:]:  # durations as text: Spark's interval parser
                if not (isinstance(arg, exp.Literal) and arg.is_string):
                    continue
                for sign, amount, unit in _INTERVAL_PART.findall(arg.this):
                    problem = t.spark_interval_problem(sign + amount, unit)
                    if problem is not None:
                        return self._refuse(
                            f"Spark's parser refuses this window duration: {problem}",
                            annotate.span(arg) or self._span(meta),
                            "Spark's parser fails here",
                            _unit_help(amount, unit),
                            code="E014",
                        )
        return call

    # -------------------------------------------------------------- names
    @v_args(meta=True)
    def table_name(self, meta: Meta, kids: list[ast.Ident]) -> ast.Ident:
        span = self._span(meta)
        if len(kids) > 1:
            qualifier = kids[0].text.lower()
            if len(kids) == 2 and qualifier in _FILE_FORMATS:
                # a batch read of files: a static table's source, or refused where it is read
                return sqlast.PathName(kids[1].text, span, qualifier)
            else:
                self._refuse(
                    "a qualified name: sjoin reads the pipeline's datasets by their own names",
                    span,
                    "qualified name",
                    f"write `{kids[-1].text}`: the pipeline's catalog and database hold its "
                    "datasets (spark-pipeline.yml)",
                )
        return ast.Ident(kids[-1].text, span if len(kids) == 1 else kids[-1].span)

    # -------------------------------------------------------------- statements
    def start(self, kids: list[Any]) -> Any:  # type: ignore[override]
        return kids[0]

    def streaming_table(self, kids: list[Any]) -> str:
        return "streaming_table"

    def materialized_view(self, kids: list[Any]) -> str:
        return "materialized_view"

    def persisted(self, kids: list[Any]) -> str:
        return "view"

    def temporary(self, kids: list[Any]) -> str:
        return "temporary_view"

    global_temporary = temporary

    def if_not_exists(self, kids: list[Any]) -> bool:
        return True

    def or_replace(self, kids: list[Any]) -> bool:
        return True

    def as_query(self, kids: list[Any]) -> sqlast.Query:
        return kids[0]  # type: ignore[no-any-return]

    def storage_clause(self, kids: list[Any]) -> None:
        return None

    def properties(self, kids: list[Any]) -> tuple[ast.OptionDecl, ...] | None:
        """The properties as options (a read's ``WITH (...)``: a static table's reader
        options); None when one of them is no text (a storage clause reads past them)."""
        found = [k for k in kids if k is not None]
        if any(k is _UNREADABLE for k in found):
            return None
        return tuple(found)

    @v_args(meta=True)
    def property(self, meta: Meta, kids: list[Any]) -> ast.OptionDecl | object:
        """``key [=] value`` as Spark's ``visitPropertyKeyValues`` reads it: a string's
        value, a number's or a boolean's text (a boolean in lower case); any other value
        (a name, a typed number, NULL) is no option value."""
        key, value = kids[0], kids[-1]
        text: str | None = None
        kind = "string"
        if isinstance(value, exp.Literal) and value.is_string:
            text = value.this
        elif isinstance(value, exp.Literal):
            text, kind = value.this, "number"
        elif isinstance(value, exp.Boolean):
            text, kind = ("true" if value.this else "false"), "bool"
        if key is None or text is None:
            return _UNREADABLE
        span = annotate.span(value) or self._span(meta)
        return ast.OptionDecl(key, ast.Value(text, kind, span), self._span(meta))  # type: ignore[arg-type]

    @v_args(meta=True)
    def property_key(self, meta: Meta, kids: list[Any]) -> ast.Ident:
        """A property's key: a string's value, or the dotted names (``a.b``)."""
        span = self._span(meta)
        if len(kids) == 1 and isinstance(kids[0], Token):
            return ast.Ident(unescape(str(kids[0])), span)
        return ast.Ident(".".join(k.text for k in kids), span)

    def comment_clause(self, kids: list[Any]) -> None:
        return None

    @v_args(meta=True)
    def create_dataset(self, meta: Meta, kids: list[Any]) -> sqlast.CreateDataset:
        kind, _ine, name, columns, *_clauses, query = kids
        self._not_a_path(name, False)
        return sqlast.CreateDataset(kind, name, columns, query, self._span(meta))

    @v_args(meta=True)
    def create_view(self, meta: Meta, kids: list[Any]) -> sqlast.CreateDataset:
        _replace, kind, _ine, name, renamed, *_clauses, query = kids
        self._not_a_path(name, False)
        if renamed is not None:
            self._refuse(
                "a view's column list",
                renamed,
                "not modelled",
                "name the columns in the view's SELECT with AS",
            )
        return sqlast.CreateDataset(kind, name, None, query, self._span(meta))

    @v_args(meta=True)
    def view_columns(self, meta: Meta, kids: list[Any]) -> Span:
        return self._span(meta)

    @v_args(meta=True)
    def create_flow(self, meta: Meta, kids: list[Any]) -> sqlast.CreateFlow:
        name, _comment, (target, by_name), query = kids
        self._not_a_path(name, False)
        self._not_a_path(target, False)
        return sqlast.CreateFlow(name, target, by_name, query, self._span(meta))

    def insert_into(self, kids: list[Any]) -> tuple[ast.Ident, bool]:
        return kids[0], kids[1] is not None

    def by_name(self, kids: list[Any]) -> bool:
        return True

    @v_args(meta=True)
    def query_statement(self, meta: Meta, kids: list[Any]) -> None:
        self._refuse(
            "a query that defines no dataset",
            self._span(meta),
            "no CREATE",
            "a pipeline's SQL file holds CREATE STREAMING TABLE, CREATE MATERIALIZED VIEW, "
            "CREATE TEMPORARY VIEW and CREATE FLOW statements",
        )

    @v_args(meta=True)
    def table_elements(self, meta: Meta, kids: list[Any]) -> tuple[ast.ColumnDecl, ...]:
        return tuple(kids)

    @v_args(meta=True)
    def table_element(self, meta: Meta, kids: list[Any]) -> ast.ColumnDecl:
        name, kind, *_options = kids
        return ast.ColumnDecl(name, kind, self._span(meta))

    @v_args(meta=True)
    def not_null(self, meta: Meta, kids: list[Any]) -> None:
        self._refuse(
            "NOT NULL on a column",
            self._span(meta),
            "not modelled",
            "sjoin's columns may hold NULL, as a stream's columns do; remove NOT NULL",
        )

    def column_comment(self, kids: list[Any]) -> None:
        return None

    @v_args(meta=True)
    def column_default(self, meta: Meta, kids: list[Any]) -> None:
        self._refuse("a column's DEFAULT", self._span(meta), "not modelled", "remove it")

    @v_args(meta=True)
    def generated_column(self, meta: Meta, kids: list[Any]) -> None:
        self._refuse(
            "a generated column",
            self._span(meta),
            "not modelled",
            "compute the value in the SELECT of the query that reads the table",
        )

    # -------------------------------------------------------------- queries
    def paren_query(self, kids: list[Any]) -> sqlast.Query:
        return kids[0]  # type: ignore[no-any-return]

    def query(self, kids: list[Any]) -> sqlast.Query:
        """A query, or the branches of its UNION ALL (flattened: UNION ALL is associative)."""
        first: sqlast.Query = kids[0]
        if len(kids) == 1:
            return first
        branches: list[sqlast.Query] = []
        for kid in kids[::2]:
            branches.append(dc_replace(kid, union_all=()))
            branches.extend(kid.union_all)
        return dc_replace(branches[0], union_all=tuple(branches[1:]))

    def union_all(self, kids: list[Any]) -> None:
        return None

    @v_args(meta=True)
    def union_distinct(self, meta: Meta, kids: list[Any]) -> None:
        self._refuse(
            "UNION (without ALL) of streams",
            self._span(meta),
            "not modelled",
            "UNION is UNION ALL followed by SELECT DISTINCT: write UNION ALL in a temporary "
            "view, and SELECT DISTINCT * FROM STREAM(view) (a streaming aggregate, with a "
            "watermark on its time column)",
        )

    @v_args(meta=True)
    def select_body(self, meta: Meta, kids: list[Any]) -> sqlast.Query:
        distinct = next((k for k in kids if isinstance(k, _Distinct)), None)
        items = tuple(k for k in kids if isinstance(k, ast.SelectItem))
        clauses = {k.kind: k for k in kids if isinstance(k, _Clause)}
        source, joins, from_span = clauses["from"].value
        where = clauses.get("where")
        group = clauses.get("group")
        for kind, what, help in (
            ("having", "HAVING", "filter the aggregate's rows where its table is read"),
            ("order", "ORDER BY", "a streaming query's rows have no order: remove it"),
        ):
            if kind in clauses:
                self._refuse(f"{what} in a streaming query", clauses[kind].span, "not modelled",
                             help)  # fmt: skip
        return sqlast.Query(
            items,
            source,
            joins,
            where.value if where is not None else None,
            tuple(group.value) if group is not None else None,
            self._span(meta),
            from_span,
            distinct.span if distinct is not None else None,
        )

    @v_args(meta=True)
    def distinct(self, meta: Meta, kids: list[Any]) -> _Distinct:
        return _Distinct(self._span(meta))

    def all_rows(self, kids: list[Any]) -> None:
        return None

    @v_args(meta=True)
    def from_clause(self, meta: Meta, kids: list[Any]) -> _Clause:
        if len(kids) > 1:
            self._refuse(
                "relations separated by commas (a cross join)",
                self._span(meta),
                "not modelled",
                "join streams on an equality between them: `a AS x JOIN b AS y ON x.k = y.k`",
            )
        source, joins = kids[0]
        return _Clause("from", (source, joins, self._span(meta)), self._span(meta))

    def relation(self, kids: list[Any]) -> tuple[sqlast.Read, tuple[sqlast.JoinStep, ...]]:
        return kids[0], tuple(kids[1:])

    @v_args(meta=True)
    def join_step(self, meta: Meta, kids: list[Any]) -> sqlast.JoinStep:
        (how, how_span), read, on = kids
        span = self._span(meta)
        how_span = how_span or Span(span.start, span.start + 4)
        if how == "cross":
            self._refuse(
                "a CROSS JOIN of streams",
                how_span,
                "not modelled",
                "Spark joins streams only on an equality between the sides (its state is kept "
                "per key): join on a key with `ON a.k = b.k`",
            )
        elif on is None:
            self._refuse(
                "a join without ON (a cross join)",
                span,
                "no condition",
                "join streams on an equality between them: `ON x.k = y.k`",
            )
        return sqlast.JoinStep(how, how_span, read, on, span)

    cross = ToAst._join_type("cross")  # type: ignore[attr-defined]

    def on_condition(self, kids: list[Any]) -> exp.Expression:
        return kids[0]  # type: ignore[no-any-return]

    @v_args(meta=True)
    def using_columns(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return self._refuse(
            "JOIN ... USING (...)",
            self._span(meta),
            "not modelled",
            "write the condition with ON: `ON x.k = y.k`",
        )

    def _not_a_path(self, name: ast.Ident, stream: bool) -> None:
        """A read of files where sjoin reads none: ``STREAM(json.`dir`)`` (a batch read in
        Spark's SQL), or files named as a dataset."""
        if isinstance(name, sqlast.PathName):
            self._refuse(
                f"`{name.format}.`...`` reads files as a batch table",
                name.span,
                "no streaming source" if stream else "a batch read of files",
                NO_SQL_SOURCE,
            )

    @v_args(meta=True)
    def stream_read(self, meta: Meta, kids: list[Any]) -> sqlast.TableRead:
        name, tail = kids
        self._not_a_path(name, True)
        return sqlast.TableRead(name, True, tail.watermark, tail.alias, self._span(meta))

    @v_args(meta=True)
    def table_read(self, meta: Meta, kids: list[Any]) -> sqlast.TableRead:
        name, tail = kids
        if isinstance(name, sqlast.PathName) and tail.unreadable is not None:
            self._refuse(
                "an option of a read of files whose value is no text",
                tail.unreadable,
                "not an option value",
                "write each option as 'key' = 'value': Spark's options of a read are strings, "
                "numbers and booleans",
            )
        return sqlast.TableRead(
            name, False, tail.watermark, tail.alias, self._span(meta), tail.options
        )

    @v_args(meta=True)
    def subquery_read(self, meta: Meta, kids: list[Any]) -> sqlast.SubqueryRead:
        query, tail = kids
        return sqlast.SubqueryRead(query, tail.watermark, tail.alias, self._span(meta))

    @v_args(meta=True)
    def stream_function(self, meta: Meta, kids: list[Any]) -> sqlast.TableRead:
        call, tail = kids
        span = self._span(meta)
        self._within(span)  # the call is refused whole: not its arguments one by one
        self._refuse(
            f"a table-valued function as a streaming source ({call.name}(...))",
            span,
            "no streaming source sjoin reads",
            NO_SQL_SOURCE,
        )
        return sqlast.TableRead(ast.Ident(call.name, span), True, tail.watermark, tail.alias, span)

    @v_args(meta=True)
    def function_read(self, meta: Meta, kids: list[Any]) -> sqlast.TableRead:
        call, tail = kids
        span = self._span(meta)
        self._within(span)  # the call is refused whole: not its arguments one by one
        self._refuse(
            f"a table-valued function in FROM ({call.name}(...))",
            span,
            "a batch source",
            "a stream-stream join reads both sides with STREAM(name)",
        )
        return sqlast.TableRead(ast.Ident(call.name, span), False, tail.watermark, tail.alias, span)

    def rel_tail(self, kids: list[Any]) -> _Tail:
        options, watermark, alias = kids  # options: None without WITH (...)
        return _Tail(watermark, alias, options or ())

    @v_args(meta=True)
    def options_clause(
        self, meta: Meta, kids: list[Any]
    ) -> tuple[ast.OptionDecl, ...] | _Unreadable:
        """``WITH ('header' = 'true')`` on a read: of a ``fmt.`path``` read, the options of
        the reader (a static table's source, sqllower.py); of a stream (``WITH
        ('maxFilesPerTrigger' = '1')``), how the source cuts its input into micro-batches,
        which a trace says for sjoin (its batches): read past there."""
        return _Unreadable(self._span(meta)) if kids[0] is None else kids[0]

    def table_alias(self, kids: list[Any]) -> ast.Ident:
        return kids[0]  # type: ignore[no-any-return]

    @v_args(meta=True)
    def watermark_clause(self, meta: Meta, kids: list[Any]) -> sqlast.WatermarkClause:
        column, alias, delay = kids
        return sqlast.WatermarkClause(column, alias, _duration(delay), self._span(meta))

    @v_args(meta=True)
    def where_clause(self, meta: Meta, kids: list[Any]) -> _Clause:
        return _Clause("where", kids[0], self._span(meta))

    @v_args(meta=True)
    def group_by(self, meta: Meta, kids: list[Any]) -> _Clause:
        return _Clause("group", kids, self._span(meta))

    @v_args(meta=True)
    def having_clause(self, meta: Meta, kids: list[Any]) -> _Clause:
        return _Clause("having", kids, self._span(meta))

    @v_args(meta=True)
    def order_by(self, meta: Meta, kids: list[Any]) -> _Clause:
        return _Clause("order", kids, self._span(meta))


def _spanned(node: exp.Expression, span: Span) -> exp.Expression:
    annotate.set_span(node, span)
    return node


def _duration(node: exp.Expression) -> ast.Duration | None:
    """The .sjoin duration of a WATERMARK clause's single-unit interval (None: refused)."""
    if not isinstance(node, exp.Interval) or node.unit is None:
        return None
    span = annotate.span(node) or Span(0, 0)
    unit_span = annotate.unit_span(node) or span
    return ast.Duration(node.this.name, ast.Ident(node.unit.name, unit_span), span)


# ------------------------------------------------------------------ the file


def parse_sql(text: str, start: int, end: int, path: str, diags: Diagnostics) -> sqlast.SqlFile:
    """The SQL file at ``text[start:end]`` (``text`` is the project's whole text: every span
    is a place in it)."""
    scan = _Scan(text, start, end)
    for pos, kind in scan.unterminated:
        what = {"comment": "block comment", "name": "quoted name", "string": "string literal"}
        close = {"comment": "*/", "name": "`", "string": text[pos]}
        diags.add(
            "E001",
            f"unterminated {what[kind]}",
            Span(pos, pos + (2 if kind == "comment" else 1)),
            "never closed",
            f"close it with {close[kind]}",
        )
    masked = _check_characters(text, start, end, scan, diags)
    annotations, sources = _annotations(text, scan, diags)
    statements: list[sqlast.SqlStatement] = []
    froms: dict[int, sqlast.Annotation] = {}
    broken: list[str] = []
    blank = _blanked(masked, scan.comments)
    for begin, stop in scan.statements:
        chunk = blank[begin:stop]
        if not chunk.strip():
            continue
        lead = begin + len(chunk) - len(chunk.lstrip())
        if any(begin <= pos < stop for pos, _ in scan.unterminated):
            declared = _DECLARED.match(chunk)  # reported above; its name is broken
            if declared is not None:
                broken.append(_unquote(declared[1]))
            continue
        found = _statement(chunk, begin, diags, broken)
        for ann in sources.pop(lead, []):
            if isinstance(ann.statement, sqlast.DedupClause):
                if isinstance(found, sqlast.CreateDataset) and found.query is not None:
                    froms[len(statements)] = ann
                elif found is not None:
                    _stray_from(ann, diags)
            elif isinstance(found, sqlast.CreateDataset) and found.kind == "streaming_table":
                froms[len(statements)] = ann
            elif found is not None:
                _stray_from(ann, diags)
        if found is not None:
            statements.append(found)
    for leftover in sources.values():
        for ann in leftover:
            _stray_from(ann, diags)
    return sqlast.SqlFile(
        path, tuple(statements), tuple(annotations), froms, tuple(broken), Span(start, end)
    )


def _stray_from(ann: sqlast.Annotation, diags: Diagnostics) -> None:
    if isinstance(ann.statement, sqlast.DedupClause):
        diags.add(
            "E033",
            "a `-- sjoin: dedup` line stands before no declaration of a dedup",
            ann.span,
            "annotates nothing",
            "write it in sjoin-schemas.sql, on the line right before the declaration of the "
            "dataset a Python flow deduplicates: CREATE TEMPORARY VIEW name AS SELECT * FROM "
            "STREAM(input) [WATERMARK ...]",
        )
        return
    diags.add(
        "E033",
        "a `-- sjoin: from` line stands before no CREATE STREAMING TABLE",
        ann.span,
        "annotates nothing",
        "write it on the line right before the CREATE STREAMING TABLE it gives a source",
    )


_DECLARED = re.compile(
    r"\s*create\s+(?:or\s+replace\s+)?(?:(?:global\s+)?temporary\s+)?"
    r"(?:streaming\s+table|materialized\s+view|view|flow)\s+"
    r"(?:if\s+not\s+exists\s+)?(\w+|`(?:[^`]|``)+`)",
    re.IGNORECASE,
)


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def _blanked(text: str, ranges: list[tuple[int, int]]) -> str:
    """``text`` with each range replaced by spaces, its line breaks kept."""
    if not ranges:
        return text
    parts = []
    last = 0
    for a, b in ranges:
        parts.append(text[last:a])
        parts.append(re.sub(r"[^\r\n]", " ", text[a:b]))
        last = b
    parts.append(text[last:])
    return "".join(parts)


def _check_characters(text: str, start: int, end: int, scan: _Scan, diags: Diagnostics) -> str:
    """E008 for each character no SQL file of sjoin may hold (controls but TAB and line
    breaks, lone surrogates, the line and paragraph separators, bidirectional controls),
    anywhere in the file, each replaced by a space in the text returned."""
    found = [m.start() for m in HOSTILE.finditer(text, start, end)]
    # a CR inside a string or a quoted name: a line break a message quoting it would carry
    # to the terminal (an LF is kept: Spark's names and strings may span lines)
    for a, b in scan.literals:
        found.extend(i for i in range(a, b) if text[i] == "\r")
    found.sort()
    if not found:
        return text
    chars = list(text)
    for count, pos in enumerate(found):
        ch = text[pos]
        chars[pos] = " "
        if count >= 100:
            continue
        if ch == "\r":
            label = "line break"
            help = (
                "a string or a quoted name of sjoin cannot hold a CR: write it as \\r in a string"
            )
        elif ch in BIDI_CONTROLS:
            label = "bidirectional control"
            help = (
                f"remove the {char_name(ch)}: it makes the text display in another order than "
                'Spark reads it ("Trojan Source")'
            )
        else:
            label = "not allowed"
            help = (
                f"remove the {char_name(ch)}; in a string literal, write it as an escape "
                f"(\\u{ord(ch):04X})"
                if ord(ch) <= 0xFFFF and not 0xD800 <= ord(ch) <= 0xDFFF
                else f"remove the {char_name(ch)}"
            )
        where = " in a string or a quoted name" if ch == "\r" else ""
        diags.add(
            "E008",
            f"{char_name(ch)} is not allowed{where} in a pipeline's SQL file",
            Span(pos, pos + 1),
            label,
            help,
        )
    return "".join(chars)


def _annotations(
    text: str, scan: _Scan, diags: Diagnostics
) -> tuple[list[sqlast.Annotation], dict[int, list[sqlast.Annotation]]]:
    """The ``-- sjoin: ...`` lines: the statements, and the `from` clauses by the offset of
    the first token after them (the statement they annotate)."""
    found: list[sqlast.Annotation] = []
    sources: dict[int, list[sqlast.Annotation]] = {}
    comments = scan.comments
    for index, (a, b) in enumerate(comments):
        m = ANNOTATION.match(text, a, b)
        if m is None:
            continue
        body_start = m.end()
        body = text[body_start:b]
        if not body.strip():
            continue
        first = body_start + len(body) - len(body.lstrip())
        span = Span(a, b)
        word = re.match(r"\s*(\w+)", body)
        if word is not None and word[1].lower() in ("from", "dedup"):
            clause = _parse_clause(text[first:b], first, diags, word[1].lower())
            if clause is None:
                continue
            ann = sqlast.Annotation(clause, span)
            following = _next_code(text, comments, index, b, scan)
            sources.setdefault(following, []).append(ann)
            continue
        parsed = _parse_sjoin(text[first:b], first, diags)
        for statement in parsed:
            if isinstance(statement, (ast.SparkDecl, ast.SetDecl, ast.SinkDecl)):
                found.append(sqlast.Annotation(statement, span))
            else:
                diags.add(
                    "E033",
                    "a `-- sjoin:` line holds a `spark`, `set` or `sink` statement, or a "
                    "`from` clause",
                    statement.span,
                    "not here",
                    "declare a stream with CREATE STREAMING TABLE name (col TYPE, ...), a join "
                    "or aggregate with CREATE STREAMING TABLE ... AS SELECT",
                )
    return found, sources


def _next_code(
    text: str, comments: list[tuple[int, int]], index: int, after: int, scan: _Scan
) -> int:
    """The offset of the first character after ``after`` that is neither blank nor in a
    comment (-1 at the end of the file)."""
    pos = after
    following = iter(comments[index + 1 :])
    nxt = next(following, None)
    end = scan.statements[-1][1]
    while pos < end:
        if nxt is not None and pos == nxt[0]:
            pos = nxt[1]
            nxt = next(following, None)
            continue
        if text[pos].isspace():
            pos += 1
            continue
        return pos
    return -1


def _parse_clause(
    body: str, offset: int, diags: Diagnostics, word: str = "from"
) -> ast.FormatDecl | sqlast.DedupClause | None:
    """A `-- sjoin: from ...` clause, or a `-- sjoin: dedup ON (...) [WITHIN WATERMARK]`
    one (``word``)."""
    try:
        tree = clause_parser().parse(body, start=f"{word}_clause")
    except UnexpectedInput as err:
        _syntax_error(err, body, offset, False, diags)
        return None
    found = ToAst(offset).transform(tree)
    if isinstance(found, ast.FormatDecl):
        return found
    # ToAst has no rule of its own for the clause: its tree, the names and WITHIN's span in it
    keys = tuple(k for k in found.children if isinstance(k, ast.Ident))
    within = next((k for k in found.children if isinstance(k, Span)), None)
    return sqlast.DedupClause(keys, within, Span(offset, offset + len(body.rstrip())))


def _parse_sjoin(body: str, offset: int, diags: Diagnostics) -> tuple[ast.Statement, ...]:
    try:
        tree = parser().parse(body)
    except UnexpectedInput as err:
        _syntax_error(err, body, offset, False, diags)
        return ()
    spec: ast.SpecFile = ToAst(offset).transform(tree)
    return spec.statements


_SET = re.compile(r"\s*set\b", re.IGNORECASE)
_SET_KEY = re.compile(r"\s*set\s+(?P<key>[A-Za-z_][\w.\-]*|`[^`]*`)\s*(?:=\s*(?P<value>.*?))?\s*\Z",
                      re.IGNORECASE | re.DOTALL)  # fmt: skip
_IGNORED = re.compile(r"\s*(use|set\s+catalog)\b", re.IGNORECASE)
_RESET = re.compile(r"\s*reset\b", re.IGNORECASE)


def _statement(
    chunk: str, offset: int, diags: Diagnostics, broken: list[str]
) -> sqlast.SqlStatement | None:
    """One statement (comments blanked), or None when it is left out (reported)."""
    lead = offset + len(chunk) - len(chunk.lstrip())
    span = Span(lead, offset + len(chunk.rstrip()))
    if _IGNORED.match(chunk):
        return None  # USE / SET CATALOG: where the tables live, not what they compute
    if _RESET.match(chunk):
        diags.add("E033", "RESET in a pipeline's SQL file", span, "not modelled",
                  "set each conf once, with SET key = value")  # fmt: skip
        return None
    if _SET.match(chunk):
        m = _SET_KEY.match(chunk)
        if m is None or m["value"] is None:
            diags.add(
                "E033",
                "a SET statement that sets no conf",
                span,
                "not modelled",
                "write SET key = value",
            )
            return None
        key = m["key"].strip("`")
        value = set_value(m["value"])
        return sqlast.SetConf(
            key,
            value,
            Span(offset + m.start("key"), offset + m.end("key")),
            Span(offset + m.start("value"), offset + m.end("value")),
            span,
        )
    try:
        tree = sql_parser().parse(chunk)
    except UnexpectedInput as err:
        _sql_syntax_error(err, chunk, offset, diags)
        declared = _DECLARED.match(chunk)
        if declared is not None:
            broken.append(_unquote(declared[1]))
        return None
    deep = _nesting_error(tree)
    if deep is not None:  # the same limit as a .sjoin spec's (limits.MAX_NESTING)
        nesting_refused(Span.of(deep.meta, offset).start, diags)
        declared = _DECLARED.match(chunk)
        if declared is not None:
            broken.append(_unquote(declared[1]))
        return None
    transformer = SqlToAst(offset)
    found = transformer.transform(tree)
    for refusal in transformer.refusals:
        diags.add(refusal.code, refusal.message, refusal.span, refusal.label, refusal.help)
    if transformer.refusals or found is None:
        name = getattr(found, "name", None)
        if isinstance(found, sqlast.CreateFlow):
            name = found.target
        if isinstance(name, ast.Ident):
            broken.append(name.text)
        return None
    return found  # type: ignore[no-any-return]


def set_value(written: str) -> str:
    """The value Spark's ``SET key = value`` sets: the text after ``=`` as written (trimmed;
    quotes are part of it: ``SET k = 'UTC'`` sets ``'UTC'``), but a value that is one
    back-quoted name is that name (``SET k = `a``b``` sets ``a`b``; checked on Spark
    4.3.0)."""
    text = written.strip()
    m = re.fullmatch(r"`((?:[^`]|``)*)`", text)
    return m[1].replace("``", "`") if m else text


def _sql_syntax_error(err: UnexpectedInput, chunk: str, offset: int, diags: Diagnostics) -> None:
    end = offset + len(chunk.rstrip())
    pos = offset + err.pos_in_stream if err.pos_in_stream is not None else end
    if isinstance(err, UnexpectedToken) and err.token.type == "$END":
        diags.add(
            "E001",
            "unexpected end of the statement; expected " + _describe_expected(err.expected),
            Span(end, end),
            "the statement is not finished",
        )
    elif isinstance(err, UnexpectedToken):
        tok = str(err.token)
        word = tok.upper()
        help = _HINTS.get(word)
        if help is None and word in ("WITH",) and pos - offset < 20:
            help = "sjoin reads no common table expressions: define a temporary view instead"
        before = chunk[max(0, pos - offset - 200) : pos - offset]
        if (
            help is None
            and word.lower() in t.SPARK_UNITS
            and word.lower() not in t.SPARK_UNIT_WORDS
            and _AFTER_INTERVAL_AMOUNT.search(before)
        ):
            help = (
                f"did you mean `{t.spark_unit(word)}`? Spark's interval grammar reads only "
                "whole unit words"
            )
        diags.add(
            "E001",
            f"unexpected `{tok[:40]}`; expected " + _describe_expected(err.expected),
            Span(pos, pos + max(1, len(tok))),
            "unexpected here",
            help,
        )
    elif isinstance(err, UnexpectedCharacters):
        ch = chunk[pos - offset : pos - offset + 1]
        shown = f"`{ch}`" if ch.isprintable() and not ch.isspace() else char_name(ch)
        diags.add("E001", f"unexpected character {shown}", Span(pos, pos + 1),
                  "not part of Spark SQL as sjoin reads it")  # fmt: skip
    elif isinstance(err, UnexpectedEOF):  # pragma: no cover - LALR reports $END tokens
        diags.add("E001", "unexpected end of the statement", Span(end, end))


_AFTER_INTERVAL_AMOUNT = re.compile(r"(?is)\binterval\b.*(?:[0-9]|')\s+$")
_HINTS = {
    "LIMIT": "a streaming query's rows have no order to limit",
    "LATERAL": "sjoin reads no lateral views",
    "NATURAL": "write the join's condition with ON",
    "AUTO": "AUTO CDC flows are not modelled",
}


def iter_statement_spans(text: str) -> Iterator[tuple[int, int]]:
    """Each statement's ``(start, end)`` in ``text``, split as SDP splits (tests)."""
    scan = _Scan(text, 0, len(text))
    yield from scan.statements
