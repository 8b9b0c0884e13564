"""Text -> AST.

Lark parses (LALR); a Transformer builds frozen AST nodes and sqlglot expressions, each with
its span.  Syntax errors become E001 diagnostics.  After a syntax error the file is parsed
again statement by statement, so that every broken statement is reported in one run and the
good ones still reach the binder.
"""

from __future__ import annotations

import bisect
import difflib
import re
from typing import TYPE_CHECKING, Any

from lark import Token, Transformer_NonRecursive, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.tree import Meta
from sqlglot import exp

from ...grammar import parser
from ..diagnostics.diagnostics import Diagnostics, Fix
from ..vocabulary import annotate
from ..vocabulary import types as t
from ..vocabulary.source import BIDI_CONTROLS, HOSTILE, Source, Span, char_name
from ..vocabulary.types import is_digits
from . import ast
from .limits import MAX_NESTING

if TYPE_CHECKING:
    from .sqlast import Refusal

COMPARISONS: dict[str, type[exp.Expression]] = {
    "=": exp.EQ,
    "==": exp.EQ,
    "<>": exp.NEQ,
    "!=": exp.NEQ,
    "<": exp.LT,
    "<=": exp.LTE,
    ">": exp.GT,
    ">=": exp.GTE,
}
ARITHMETIC: dict[str, type[exp.Expression]] = {
    "+": exp.Add,
    "-": exp.Sub,
    "*": exp.Mul,
    "/": exp.Div,
    "%": exp.Mod,
}


def unquote_string(token: str) -> str:
    """``'it''s'`` -> ``it's`` (sqlglot's Spark reader would make a CONCAT of it)."""
    return token[1:-1].replace("''", "'")


def _spanned(node: exp.Expression, span: Span) -> exp.Expression:
    annotate.set_span(node, span)
    return node


class ToAst(Transformer_NonRecursive[Token, Any]):
    """One method per grammar rule, each returning a typed node that keeps its span.

    Methods never raise on user input: whatever is odd is kept for the binder to judge.
    The walk is not recursive (a list of 100,000 conjuncts or a deep tree costs no stack).
    """

    # the code of a form sjoin does not model (``_refuse``): in a .sjoin spec it is not part
    # of the language; the SQL front end's subclass says E033 (valid Spark SQL)
    REFUSED = "E001"

    def __init__(self, offset: int = 0) -> None:
        super().__init__()
        self.offset = offset
        self.refusals: list[Refusal] = []

    def _within(self, span: Span) -> None:
        """Forget the refusals inside ``span``: what holds them is refused whole."""
        self.refusals = [
            r for r in self.refusals if not (span.start <= r.span.start and r.span.end <= span.end)
        ]

    def _refuse(
        self, message: str, span: Span, label: str, help: str | None = None, code: str = ""
    ) -> exp.Expression:
        """Collect a refusal (reported by the caller, which leaves the statement out) and
        put a NULL in the tree in its place."""
        from .sqlast import Refusal  # the SQL front end's record; a .sjoin spec rarely needs it

        self.refusals.append(Refusal(message, span, label, help, code or self.REFUSED))
        node = exp.Null()
        annotate.set_span(node, span)
        return node

    def _span(self, meta: Meta) -> Span:
        return Span.of(meta, self.offset)

    def _tok_span(self, tok: Token) -> Span:
        return Span(tok.start_pos + self.offset, tok.end_pos + self.offset)  # type: ignore[operator]

    # -------------------------------------------------------------- names and values
    def plain_name(self, kids: list[Token]) -> ast.Ident:
        return ast.Ident(str(kids[0]), self._tok_span(kids[0]))

    def quoted_name(self, kids: list[Token]) -> ast.Ident:
        text = str(kids[0])[1:-1].replace("``", "`")
        return ast.Ident(text, self._tok_span(kids[0]))

    @v_args(meta=True)
    def version(self, meta: Meta, kids: list[Token]) -> ast.SparkDecl:
        return ast.SparkDecl(".".join(str(k) for k in kids), self._span(meta))

    # -------------------------------------------------------------- statements
    @v_args(meta=True)
    def start(self, meta: Meta, kids: list[Any]) -> ast.SpecFile:
        return ast.SpecFile(tuple(kids), self._span(meta))

    @v_args(meta=True)
    def spark_stmt(self, meta: Meta, kids: list[Any]) -> ast.SparkDecl:
        return ast.SparkDecl(kids[0].version, self._span(meta))

    @v_args(meta=True)
    def set_stmt(self, meta: Meta, kids: list[Any]) -> ast.SetDecl:
        name, value = kids
        return ast.SetDecl(name, _as_value(value), self._span(meta))

    @v_args(meta=True)
    def stream_stmt(self, meta: Meta, kids: list[Any]) -> ast.StreamDecl:
        name, *columns, watermark, source = kids
        return ast.StreamDecl(name, tuple(columns), watermark, source, self._span(meta))

    @v_args(meta=True)
    def table_stmt(self, meta: Meta, kids: list[Any]) -> ast.TableDecl:
        name, *columns, source = kids
        return ast.TableDecl(name, tuple(columns), source, self._span(meta))

    @v_args(meta=True)
    def column_def(self, meta: Meta, kids: list[Any]) -> ast.ColumnDecl:
        return ast.ColumnDecl(kids[0], kids[1], self._span(meta))

    @v_args(meta=True)
    def simple_type(self, meta: Meta, kids: list[Any]) -> ast.TypeRef:
        name, *params = kids
        # a parameter that is not a small whole number can match no type: -1 fails lookup
        numbers = tuple(
            int(p) if is_digits(str(p)) and len(p) <= 4 else -1 for p in params if p is not None
        )
        return ast.TypeRef(str(name), numbers, self._span(meta))

    @v_args(meta=True)
    def watermark_clause(self, meta: Meta, kids: list[Any]) -> ast.WatermarkDecl:
        return ast.WatermarkDecl(kids[0], kids[1], self._span(meta))

    @v_args(meta=True)
    def duration(self, meta: Meta, kids: list[Any]) -> ast.Duration:
        _interval, *words = kids
        amount, unit = words[0], words[1]
        unit_ident = ast.Ident(str(unit), self._tok_span(unit))
        if len(words) > 2:  # `3 minutes 30 seconds`: one duration, or the part the binder refuses
            parts = [(str(a), str(u)) for a, u in zip(words[::2], words[1::2], strict=True)]
            found = t.multi_unit_micros(parts)
            if isinstance(found, tuple):
                bad = 2 * found[0]
                amount, unit = words[bad], words[bad + 1]
                unit_ident = ast.Ident(str(unit), self._tok_span(unit))
            else:
                # milliseconds kept, as Spark's delay keeps them (getDelayMs: microseconds / 1000)
                n, word = t.exact_duration(found // 1000 * 1000)
                span = Span(self._tok_span(words[1]).start, self._tok_span(words[-1]).end)
                return ast.Duration(str(n), ast.Ident(word, span), self._span(meta))
        return ast.Duration(str(amount), unit_ident, self._span(meta))

    rel_watermark = watermark_clause
    rel_duration = duration
    view_watermark = watermark_clause
    view_duration = duration
    agg_watermark = watermark_clause
    agg_duration = duration

    @v_args(meta=True)
    def from_clause(self, meta: Meta, kids: list[Any]) -> ast.FormatDecl:
        fmt, options = kids
        return ast.FormatDecl(fmt, tuple(options or ()), self._span(meta))

    def options(self, kids: list[Any]) -> list[ast.OptionDecl]:
        return [k for k in kids if k is not None]

    @v_args(meta=True)
    def option(self, meta: Meta, kids: list[Any]) -> ast.OptionDecl:
        return ast.OptionDecl(kids[0], _as_value(kids[1]), self._span(meta))

    @v_args(meta=True)
    def join_stmt(self, meta: Meta, kids: list[Any]) -> ast.JoinDecl:
        name, left, (how, how_span), right, on, where, select, mode = kids
        return ast.JoinDecl(
            name,
            left,
            how,
            right,
            on,
            select,
            self._span(meta),
            how_span or Span.of(meta),
            where,
            mode,
        )

    def where_clause(self, kids: list[Any]) -> exp.Expression:
        return kids[0]  # type: ignore[no-any-return]

    view_where = where_clause
    agg_where = where_clause

    @v_args(meta=True)
    def view_stmt(self, meta: Meta, kids: list[Any]) -> ast.ViewDecl:
        name, select, source, where = kids
        return ast.ViewDecl(name, select, source, where, self._span(meta))

    @v_args(meta=True)
    def rel_ref(self, meta: Meta, kids: list[Any]) -> ast.RelRef:
        return ast.RelRef(kids[0], kids[1], self._span(meta), kids[2])

    view_ref = rel_ref
    agg_ref = rel_ref

    def _join_type(how: str) -> Any:  # type: ignore[misc]
        @v_args(meta=True)
        def method(self: ToAst, meta: Meta, kids: list[Any]) -> tuple[str, Span | None]:
            return how, (None if meta.empty else self._span(meta))

        return method

    inner = _join_type("inner")
    left_outer = _join_type("left_outer")
    right_outer = _join_type("right_outer")
    full_outer = _join_type("full_outer")
    left_semi = _join_type("left_semi")
    left_anti = _join_type("left_anti")

    def select_clause(self, kids: list[Any]) -> tuple[ast.SelectItem, ...]:
        return tuple(kids)

    @v_args(meta=True)
    def select_item(self, meta: Meta, kids: list[Any]) -> ast.SelectItem:
        expr, alias = ([*kids, None])[:2]
        return ast.SelectItem(expr, alias, self._span(meta))

    @v_args(meta=True)
    def star(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        (qualifier,) = kids
        if qualifier is None:
            return _spanned(exp.Star(), self._span(meta))
        node = exp.Column(this=exp.Star(), table=_identifier(qualifier))
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def aggregate_stmt(self, meta: Meta, kids: list[Any]) -> ast.AggregateDecl:
        name, source, where, *group_by, select, mode = kids
        return ast.AggregateDecl(
            name, source, tuple(group_by), select, mode, self._span(meta), where
        )

    @v_args(meta=True)
    def dedup_stmt(self, meta: Meta, kids: list[Any]) -> ast.DedupDecl:
        name, source, *keys, within = kids
        return ast.DedupDecl(name, source, tuple(keys), within, self._span(meta))

    @v_args(meta=True)
    def within_watermark(self, meta: Meta, kids: list[Any]) -> Span:
        return self._span(meta)

    @v_args(meta=True)
    def union_stmt(self, meta: Meta, kids: list[Any]) -> ast.UnionDecl:
        name, *inputs = kids
        found = tuple(k for k in inputs if isinstance(k, ast.Ident))  # UNION_ALL tokens aside
        return ast.UnionDecl(name, found, self._span(meta))

    def union_input(self, kids: list[Any]) -> ast.Ident:
        return kids[0]  # type: ignore[no-any-return]

    def output_mode(self, kids: list[Any]) -> ast.Ident:
        return kids[0]  # type: ignore[no-any-return]

    @v_args(meta=True)
    def sink_stmt(self, meta: Meta, kids: list[Any]) -> ast.SinkDecl:
        relation, fmt, options, checkpoint = kids
        fmt_span = fmt.span if options is None else fmt.span.cover(options_span(options, fmt))
        target = ast.FormatDecl(fmt, tuple(options or ()), fmt_span)
        return ast.SinkDecl(relation, target, checkpoint, self._span(meta))

    @v_args(meta=True)
    def checkpoint(self, meta: Meta, kids: list[Token]) -> ast.Value:
        return ast.Value(unquote_string(str(kids[0])), "string", self._tok_span(kids[0]))

    # -------------------------------------------------------------- expressions
    def or_(self, kids: list[Any]) -> exp.Expression:
        return balanced(exp.Or, kids)

    def and_(self, kids: list[Any]) -> exp.Expression:
        return balanced(exp.And, kids)

    @v_args(meta=True)
    def not_(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return _spanned(exp.Not(this=kids[1]), self._span(meta))

    @v_args(meta=True)
    def compare(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        left, op, right = kids
        node = COMPARISONS[op](this=left, expression=right)
        return _spanned(node, self._span(meta))

    def comp_op(self, kids: list[Token]) -> str:
        return str(kids[0])

    add_op = comp_op
    mul_op = comp_op

    @v_args(meta=True)
    def binop(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        left, op, right = kids
        return _spanned(ARITHMETIC[op](this=left, expression=right), self._span(meta))

    def _negate(self, negated: Any, node: exp.Expression, span: Span) -> exp.Expression:
        _spanned(node, span)
        return _spanned(exp.Not(this=node), span) if negated is not None else node

    @v_args(meta=True)
    def between(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        value, negated, low, high = kids
        node = exp.Between(this=value, low=low, high=high)
        return self._negate(negated, node, self._span(meta))

    @v_args(meta=True)
    def is_null(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        value, negated = kids
        node = exp.Is(this=value, expression=exp.Null())
        return self._negate(negated, node, self._span(meta))

    @v_args(meta=True)
    def in_list(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        value, negated, *items = kids
        node = exp.In(this=value, expressions=items)
        return self._negate(negated, node, self._span(meta))

    @v_args(meta=True)
    def like(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        value, negated, pattern = kids
        node = exp.Like(this=value, expression=pattern)
        return self._negate(negated, node, self._span(meta))

    @v_args(meta=True)
    def null_safe_equal(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        """``a <=> b``: Spark's EqualNullSafe (NULL <=> NULL is true, NULL <=> 1 false)."""
        left, _op, right = kids
        return _spanned(exp.NullSafeEQ(this=left, expression=right), self._span(meta))

    @v_args(meta=True)
    def distinct_from(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        """``a IS NOT DISTINCT FROM b`` is Spark's EqualNullSafe, as ``a <=> b`` is;
        ``a IS DISTINCT FROM b`` is its negation (Spark's parser: Not(EqualNullSafe))."""
        left, negated, right = kids
        span = self._span(meta)
        if negated is not None:
            node = _spanned(exp.NullSafeEQ(this=left, expression=right), span)
            annotate.set_spelling(node, "is not distinct from")
            return node
        return _spanned(exp.NullSafeNEQ(this=left, expression=right), span)

    @v_args(meta=True)
    def concat_op(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        """``a || b`` is Spark's Concat, the function ``concat(a, b)`` (its parser's
        CONCAT_PIPE), so it binds, plans and runs as that call."""
        left, op, right = kids
        node = exp.Anonymous(this="concat", expressions=[left, right])
        annotate.set_name_span(node, self._tok_span(op))
        annotate.set_spelling(node, "||")
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def colon_cast(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        """``x::T`` is ``CAST(x AS T)`` (Spark's castByColon)."""
        node: exp.Expression = self.cast_expr(meta, kids)
        annotate.set_spelling(node, "::")
        return node

    @v_args(meta=True)
    def try_cast(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        """``try_cast(x AS T)``: the CAST of ANSI mode, NULL where that one fails."""
        value, type_ref = kids
        node = exp.TryCast(this=value, to=exp.DataType.build("unknown"), safe=True)
        annotate.set_type_ref(node, type_ref)
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def neg(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        """``-x``; but ``-128::TINYINT`` casts the number -128: Spark's grammar reads a sign
        before digits as part of the number literal (``number: MINUS? INTEGER_VALUE``),
        so `::` applies to the signed number, while ``-x::TINYINT`` is -(CAST(x AS TINYINT))
        (checked on Spark 4.3.0)."""
        span = self._span(meta)
        inner, cast = kids[0], None
        while isinstance(inner, exp.Cast) and annotate.spelling(inner) == "::":
            cast, inner = inner, inner.this
        if cast is not None and isinstance(inner, exp.Literal) and not inner.is_string:
            start = annotate.span(inner)
            signed = exp.Neg(this=inner)
            _spanned(signed, Span(span.start, start.end if start else span.end))
            cast.set("this", signed)
            return _spanned(kids[0], span)
        return _spanned(exp.Neg(this=kids[0]), span)

    def unary(self, kids: list[Any]) -> exp.Expression:  # unary plus
        return kids[0]  # type: ignore[no-any-return]

    @v_args(meta=True)
    def paren(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return _spanned(exp.Paren(this=kids[0]), self._span(meta))

    @v_args(meta=True)
    def column(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        first, second, third = kids
        node: exp.Expression
        if second is None:
            node = exp.Column(this=_identifier(first))
        elif third is None:
            node = exp.Column(this=_identifier(second), table=_identifier(first))
        else:  # alias.column.field: a field of a struct-valued column (a window's start)
            inner_span = Span(first.span.start, second.span.end)
            inner = exp.Column(this=_identifier(second), table=_identifier(first))
            node = exp.Dot(this=_spanned(inner, inner_span), expression=_identifier(third))
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def func_call(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        name, args = kids
        if isinstance(args, _Distinct):  # f(DISTINCT ...)
            return self._refuse(
                f"{name.text}(DISTINCT ...)",
                self._span(meta),
                "not modelled",
                "Spark refuses distinct aggregates in a streaming query",
            )
        node = exp.Anonymous(this=name.text.lower(), expressions=list(args or ()))
        annotate.set_name_span(node, name.span)
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def named_argument(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return self._refuse(
            f"the named argument `{kids[0].text} => ...`",
            self._span(meta),
            "not modelled",
            "sjoin's functions take their arguments in order",
        )

    def distinct_args(self, kids: list[Any]) -> _Distinct:
        return _Distinct(kids)

    @v_args(meta=True)
    def complex_type(self, meta: Meta, kids: list[Any]) -> ast.TypeRef:
        """``ARRAY<INT>``, ``STRUCT<a: INT>``: kept by name for the binder (E007)."""
        return ast.TypeRef(f"{kids[0]}<...>", (), self._span(meta))

    def type_argument(self, kids: list[Any]) -> Any:
        return kids[-1]

    def _unsupported(what: str, help: str) -> Any:  # type: ignore[misc]
        @v_args(meta=True)
        def method(self: ToAst, meta: Meta, kids: list[Any]) -> exp.Expression:
            return self._refuse(what, self._span(meta), "not modelled", help)

        return method

    regex_match = _unsupported(
        "RLIKE / REGEXP / ILIKE", "sjoin reads LIKE, and regexp_extract() in an expression"
    )
    is_truth = _unsupported("IS [NOT] TRUE / FALSE / UNKNOWN", "write the condition itself")

    @v_args(meta=True)
    def field_access(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        """``window(t, ...).start``: a field of a struct-valued call."""
        call, name = kids
        field = _identifier(name)
        return _spanned(exp.Dot(this=call, expression=field), self._span(meta))

    def func_args(self, kids: list[Any]) -> list[exp.Expression]:
        return kids

    def count_star(self, kids: list[Any]) -> list[exp.Expression]:
        return [exp.Star()]

    @v_args(meta=True)
    def case_expr(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        operand, *whens, default = kids
        node = exp.Case(this=operand, ifs=whens, default=default)
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def when_clause(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return _spanned(exp.If(this=kids[0], true=kids[1]), self._span(meta))

    @v_args(meta=True)
    def interval(self, meta: Meta, kids: list[Token]) -> exp.Expression:
        _kw, *words = kids
        amounts = [unquote_string(str(a)) if a.type == "STRING" else str(a) for a in words[::2]]
        units = words[1::2]
        amount, unit, unit_span = amounts[0], str(units[0]), self._tok_span(units[0])
        if len(units) > 1:  # INTERVAL 3 MINUTES 30 SECONDS: their sum, in the largest unit
            found = t.multi_unit_micros(
                [(a.strip(), str(u)) for a, u in zip(amounts, units, strict=True)]
            )
            at = Span(self._tok_span(words[0]).start, self._tok_span(words[-1]).end)
            if isinstance(found, tuple):
                i, why = found
                part = Span(self._tok_span(words[2 * i]).start, self._tok_span(units[i]).end)
                code = "E013" if str(units[i]).lower() in t.VARIABLE_UNITS else "E014"
                return self._refuse(
                    f"this interval as one duration: {why}",
                    part,
                    "not a fixed length" if code == "E013" else "not read",
                    "write a fixed length in weeks, days, hours, minutes, seconds or milliseconds",
                    code=code,
                )
            if found < 0 or found % 1000:
                return self._refuse(
                    "this interval: "
                    + (
                        "its parts sum to a negative duration"
                        if found < 0
                        else f"its parts sum to {found:,} microseconds, and sjoin counts time in "
                        "whole milliseconds"
                    ),
                    at,
                    "not a whole number of milliseconds" if found >= 0 else "negative",
                    "write a whole number of milliseconds",
                    code="E014",
                )
            n, word = t.exact_duration(found)
            amount, unit, unit_span = str(n), word, Span(self._tok_span(units[0]).start, at.end)
        node = exp.Interval(this=exp.Literal.string(amount), unit=exp.Var(this=unit.upper()))
        annotate.set_unit_span(node, unit_span)
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def cast_expr(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        value, type_ref = kids
        node = exp.Cast(this=value, to=exp.DataType.build("unknown"))
        annotate.set_type_ref(node, type_ref)
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def typed_literal(self, meta: Meta, kids: list[Token]) -> exp.Expression:
        kind, text = kids
        node = exp.Cast(
            this=exp.Literal.string(unquote_string(str(text))), to=exp.DataType.build("unknown")
        )
        annotate.set_type_ref(
            node, ast.TypeRef(str(kind), (), self._tok_span(kind)), typed_literal=True
        )
        return _spanned(node, self._span(meta))

    @v_args(meta=True)
    def number(self, meta: Meta, kids: list[Token]) -> exp.Expression:
        return _spanned(exp.Literal.number(str(kids[0])), self._span(meta))

    @v_args(meta=True)
    def string(self, meta: Meta, kids: list[Token]) -> exp.Expression:
        return _spanned(exp.Literal.string(unquote_string(str(kids[0]))), self._span(meta))

    @v_args(meta=True)
    def true(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return _spanned(exp.Boolean(this=True), self._span(meta))

    @v_args(meta=True)
    def false(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return _spanned(exp.Boolean(this=False), self._span(meta))

    @v_args(meta=True)
    def null(self, meta: Meta, kids: list[Any]) -> exp.Expression:
        return _spanned(exp.Null(), self._span(meta))


def balanced(kind: type[exp.And] | type[exp.Or], terms: list[exp.Expression]) -> exp.Expression:
    """``t1 AND t2 AND ... AND tn`` as a balanced tree, ceil(log2 n) deep, terms left to right.

    AND and OR are associative (in SQL's three-valued logic too), and evaluated left to
    right with short-circuit a balanced tree takes the terms in the same order, so it means
    what the left-deep tree means; Spark gets the same text (``a AND b AND c``: connectors
    print flat).  A left-deep tree of 100,000 conjuncts would be as deep as that, and every
    recursive walk of it (the binder's, the runtime's) would run out of stack."""
    level = list(terms)
    while len(level) > 1:
        paired = []
        for left, right in zip(level[::2], level[1::2], strict=False):
            span = Span(ast.span_of(left).start, ast.span_of(right).end)
            paired.append(_spanned(kind(this=left, expression=right), span))
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def options_span(options: list[ast.OptionDecl], fmt: ast.Ident) -> Span:
    spans = [o.span for o in options] or [fmt.span]
    return Span(spans[0].start, spans[-1].end)


class _Distinct(list[Any]):
    """The arguments of ``f(DISTINCT ...)`` (refused by ``ToAst.func_call``)."""


def _identifier(name: ast.Ident) -> exp.Identifier:
    quoted = not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.text)
    ident = exp.Identifier(this=name.text, quoted=quoted)
    annotate.set_span(ident, name.span)
    return ident


def _as_value(node: Any) -> ast.Value:
    """A setting or option value from an identifier or a literal expression."""
    if isinstance(node, ast.Ident):
        return ast.Value(node.text, "name", node.span)
    span = annotate.span(node) or Span(0, 0)
    if isinstance(node, exp.Boolean):
        return ast.Value("true" if node.this else "false", "bool", span)
    if isinstance(node, exp.Null):
        return ast.Value("null", "null", span)
    return ast.Value(str(node.this), "string" if node.is_string else "number", span)


# ------------------------------------------------------------------ errors and recovery

# Where a statement may start, for re-parsing statement by statement after a syntax error.
# a line that starts with a statement keyword misspelt (`strem clicks (`), at the left
# margin: a statement of its own, when the file does not parse
_MISSPELT_START = re.compile(r"^([A-Za-z]{3,10})[ \t]+(?:\w+|`[^`\n]*`)", re.MULTILINE)
# the name a statement declares: `stream NAME`, `join NAME =`, ..., or a misspelt keyword's
_DECLARED = re.compile(r"\s*([A-Za-z]+)[ \t]+(\w+|`[^`\n]*`)")
_DECLARING = ("stream", "join", "aggregate", "dedup", "union", "view", "table")


def _near_keyword(word: str, words: tuple[str, ...] = (*_DECLARING, "sink")) -> bool:
    """``word`` is one of ``words`` (statement keywords), or a near spelling of one."""
    lower = word.lower()
    return lower in words or bool(difflib.get_close_matches(lower, words, n=1, cutoff=0.75))


_STATEMENT_START = re.compile(
    r"^[ \t]*(?:(?:spark|set|stream|sink|table)\b"
    r"|(?:join|aggregate|dedup|union|view)[ \t]+(?:\w+|`[^`\n]*`)[ \t]*=)",
    re.IGNORECASE | re.MULTILINE,
)

_TOKEN_NAMES = {
    "NAME": "a name",
    "QUOTED_NAME": "a quoted name",
    "NUMBER": "a number",
    "STRING": "a string",
    "$END": "the end of the file",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "COMMA": "`,`",
    "DOT": "`.`",
    "EQUAL": "`=`",
    "STAR": "`*`",
    "MINUS": "`-`",
    "PLUS": "`+`",
    # Lark's names for the other one-character punctuation the expression grammar holds
    "LESSTHAN": "`<`",
    "MORETHAN": "`>`",
    "COLON": "`:`",
    "SEMICOLON": "`;`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "SLASH": "`/`",
    "PERCENT": "`%`",
    "VBAR": "`|`",
    "AMPERSAND": "`&`",
    "CIRCUMFLEX": "`^`",
    "TILDE": "`~`",
    "BANG": "`!`",
}


def _describe_expected(expected: set[str]) -> str:
    names = set()
    for term in expected:
        if term in _TOKEN_NAMES:
            names.add(_TOKEN_NAMES[term])
        elif term.startswith("__") or term.startswith("_"):
            continue
        else:
            names.add(f"`{term}`")
    ordered = sorted(names)
    if len(ordered) > 8:
        ordered = [*ordered[:8], "..."]
    return ", ".join(ordered)


def _syntax_error(
    err: UnexpectedInput, chunk: str, offset: int, at_file_end: bool, diags: Diagnostics
) -> None:
    """Report one Lark error of ``chunk`` (which starts at ``offset`` in the file)."""
    end_pos = offset + len(chunk.rstrip())
    pos = offset + err.pos_in_stream if err.pos_in_stream is not None else end_pos
    if isinstance(err, UnexpectedToken) and err.token.type == "$END":
        pos = end_pos
        expected = _describe_expected(err.expected)
        where = "end of file" if at_file_end else "end of the statement"
        diags.add(
            "E001",
            f"unexpected {where}; expected {expected}",
            Span(pos, pos),
            "the statement is not finished",
        )
    elif isinstance(err, UnexpectedToken) and chunk.startswith("/*", pos - offset):
        diags.add(
            "E001",
            "unterminated block comment",
            Span(pos, pos + 2),
            "this comment is never closed",
            "close it with */",
        )
    elif isinstance(err, UnexpectedToken):
        tok = str(err.token)
        span = Span(pos, pos + max(1, len(tok)))
        expected = _describe_expected(err.expected)
        hint = _habit_hint(tok, err.expected, chunk, pos - offset) or _hint_for(tok, err.expected)
        fix = None
        if hint == BARE_OUTER:
            fix = Fix(Span(pos, pos), "LEFT ")
        elif (keyword := _misspelt_keyword(tok)) is not None and hint == _mean(keyword):
            fix = Fix(span, keyword if not tok.islower() else keyword.lower())  # the user's case
        diags.add(
            "E001", f"unexpected `{tok}`; expected {expected}", span, "unexpected here", hint, fix
        )
    elif isinstance(err, UnexpectedCharacters):
        rest = chunk[pos - offset :]
        ch = rest[:1]
        if ch == "'":
            diags.add(
                "E001",
                "unterminated string literal",
                Span(pos, pos + 1),
                "this quote is never closed",
                "close the string on the same line; write '' for a quote inside it",
            )
        elif rest.startswith("/*"):
            diags.add(
                "E001",
                "unterminated block comment",
                Span(pos, pos + 2),
                "this comment is never closed",
                "close it with */",
            )
        elif ch == "`":
            diags.add(
                "E001",
                "unterminated quoted name",
                Span(pos, pos + 1),
                "this back-quote is never closed",
                "close the name with `",
            )
        else:
            # an invisible or blank character is named by its code point
            shown = f"`{ch}`" if ch.isprintable() and not ch.isspace() else char_name(ch)
            diags.add(
                "E001",
                f"unexpected character {shown}",
                Span(pos, pos + 1),
                "not part of the language",
                "write numbers with the digits 0-9"
                if ch.isdigit()
                else SEMICOLON_HELP
                if ch == ";"
                else None,
            )
    elif isinstance(err, UnexpectedEOF):
        pos = end_pos
        diags.add("E001", "unexpected end of file", Span(pos, pos), "the statement is not finished")
    else:  # pragma: no cover - lark has no other kinds
        diags.add("E001", "syntax error", Span(pos, pos + 1))


JOIN_WORDS = frozenset(
    {"OUTER", "LEFT", "RIGHT", "FULL", "INNER", "SEMI", "ANTI", "CROSS", "JOIN", "ON"}
)
CROSS_JOIN = (
    "a CROSS JOIN of two streams is not supported: Spark joins streams only on an equality "
    "between the sides (its state is kept per key); join on a key with `ON a.k = b.k`"
)
WHERE_HELP = (
    "WHERE is written after a join's ON condition (before its SELECT), after an aggregate's "
    "input (before GROUP BY: `aggregate a = j AS x WHERE x.n > 0 GROUP BY ...`), or in a "
    "view: `view v = SELECT ... FROM a WHERE ...` filters any relation (see docs/language.md)"
)
ON_BEFORE_WHERE = (
    "a join's condition is written in ON: `a AS x INNER JOIN b AS y ON x.k = y.k`; a WHERE "
    "(a filter of the join's output) may follow the ON condition (see docs/language.md)"
)
BARE_OUTER = "`OUTER` needs `LEFT`, `RIGHT` or `FULL` before it: `a LEFT OUTER JOIN b`"
SEMICOLON_HELP = (
    "remove the `;`: a .sjoin statement ends where the next one begins (a pipeline's .sql "
    "file, read by `sjoin check p.sql`, ends its statements with `;`)"
)


# words of the language and of the SQL it embeds, for a did-you-mean on a misspelt one
_KEYWORDS = (
    "AGGREGATE", "AND", "ANTI", "AS", "BETWEEN", "BY", "CASE", "CAST", "CHECKPOINT", "DELAY",
    "ELSE", "END", "FROM", "FULL", "GROUP", "INNER", "INTERVAL", "JOIN", "LEFT", "LIKE",
    "NOT", "NULL", "OUTER", "OUTPUT", "RIGHT", "SELECT", "SEMI", "SINK", "SPARK", "STREAM",
    "THEN", "UNION", "VIEW", "WATERMARK", "WHEN", "WHERE",
)  # fmt: skip
_FLINK_WATERMARK = re.compile(r"\bWATERMARK\s+FOR\s*$", re.IGNORECASE)
_SQL_JOIN = re.compile(
    r"SELECT\s+(?P<items>.+?)\s+FROM\s+(?P<a>\w+)(?:\s+(?:AS\s+)?(?P<x>\w+))??"
    r"\s+(?P<kind>(?:(?:LEFT|RIGHT|FULL)(?:\s+OUTER)?|INNER|LEFT\s+SEMI|LEFT\s+ANTI)\s+)?"
    r"JOIN\s+(?P<b>\w+)(?:\s+(?:AS\s+)?(?P<y>\w+))?\s+ON\s+(?P<on>.+)",
    re.IGNORECASE | re.DOTALL,
)


_FLINK_TABLE = re.compile(
    r"CREATE\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?P<name>\w+)\s*"
    r"\((?P<body>.*?)\)\s*(?:WITH\s*\((?P<with>[^()]*)\))?\s*;?",
    re.IGNORECASE | re.DOTALL,
)
_FLINK_WATERMARK_ITEM = re.compile(
    r"WATERMARK\s+FOR\s+(?P<col>\w+)\s+AS\s+(?P=col)"
    r"(?:\s*-\s*INTERVAL\s+'?(?P<n>[0-9]+)'?\s+(?P<unit>[A-Za-z]+))?\s*",
    re.IGNORECASE,
)
_FLINK_COLUMN = re.compile(r"(?P<name>\w+)\s+(?P<type>\w+(?:\s*\([0-9,\s]*\))?)\s*", re.I)
_FLINK_OPTION = re.compile(r"'(?P<key>[^']*)'\s*=\s*'(?P<value>[^']*)'")
_FLINK_OPTIONS = {
    "topic": "topic",
    "properties.bootstrap.servers": "bootstrap_servers",
    "format": "format",
    "path": "path",
}


def _top_level_items(body: str) -> list[str]:
    """``body`` split at the commas outside parentheses."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            items.append(body[start:i].strip())
            start = i + 1
    items.append(body[start:].strip())
    return [item for item in items if item]


def _flink_table(chunk: str) -> str:
    """Help for Flink's `CREATE TABLE name (cols, WATERMARK FOR t AS t - INTERVAL ...) WITH
    (...)`: the user's own table as a .sjoin stream when it is that simple, else the form."""
    general = (
        "sjoin declares a stream, not a table, with its watermark after the column list "
        "(Flink's `WATERMARK FOR t AS t - INTERVAL '5' SECOND`): `stream s (..., t TIMESTAMP) "
        "watermark t delay 5 seconds from kafka (topic = '...', bootstrap_servers = '...')`"
    )
    text = chunk.strip()
    found = _FLINK_TABLE.fullmatch(text) if len(text) <= 5000 else None  # a table, not a file
    if found is None:
        return general
    columns, watermark = [], ""
    for item in _top_level_items(found["body"]):
        mark = _FLINK_WATERMARK_ITEM.fullmatch(item)
        column = _FLINK_COLUMN.fullmatch(item)
        if mark is not None:
            unit = (mark["unit"] or "seconds").lower()
            unit = unit if unit.endswith("s") else unit + "s"
            watermark = f" watermark {mark['col']} delay {mark['n'] or 0} {unit}"
        elif column is not None:
            kind = re.sub(r"\s+", "", column["type"]).upper()
            if kind.startswith(("TIMESTAMP", "TIMESTAMP_LTZ")):
                kind = "TIMESTAMP"  # Flink's precision: Spark's are microseconds
            columns.append(f"{column['name']} {kind}")
        elif not item.upper().startswith("PRIMARY KEY"):
            return general  # a computed column or a constraint: no rewrite
    source = ""
    options = dict(
        (m["key"].lower(), m["value"]) for m in _FLINK_OPTION.finditer(found["with"] or "")
    )
    if options.get("connector", "").startswith("kafka"):
        given = {_FLINK_OPTIONS[k]: v for k, v in options.items() if k in _FLINK_OPTIONS}
        for needed in ("topic", "bootstrap_servers"):
            given.setdefault(needed, "...")
        said = [f"{k} = '{v}'" for k, v in given.items()]
        source = f" from kafka ({', '.join(said)})"
    rewrite = f"stream {found['name']} ({', '.join(columns)}){watermark}{source}"
    if not columns or len(rewrite) > 400:
        return general
    return f"sjoin declares a stream, its watermark after the column list: `{rewrite}`"


def _habit_hint(token: str, expected: set[str], chunk: str, at: int) -> str | None:
    """Help for habits from other SQL engines: Flink's `WATERMARK FOR` in the column list and
    its `CREATE TABLE` (rewritten as a stream), a plain `SELECT ... FROM a JOIN b ON ...`
    (with the user's own text rewritten), and a misspelt keyword (did you mean)."""
    if token.upper() == "CREATE" and "STREAM" in expected:  # where a statement starts
        return _flink_table(chunk[at:])
    if _FLINK_WATERMARK.search(chunk[max(0, at - 40) : at]):
        return (
            "sjoin declares a watermark after the column list, not inside it (Flink's "
            "`WATERMARK FOR t AS t - INTERVAL ...`): `stream s (..., t TIMESTAMP) watermark t "
            "delay 5 seconds`"
        )
    if token.upper() == "SELECT" and "STREAM" in expected:  # where a statement starts
        found = _SQL_JOIN.match(chunk[at:].strip())
        if found is not None:
            kind = " ".join((found["kind"] or "INNER").upper().split())
            x, y = found["x"] or found["a"], found["y"] or found["b"]
            on = " ".join(found["on"].split())
            items = " ".join(found["items"].split())
            rewrite = (
                f"join j = {found['a']} AS {x} {kind} JOIN {found['b']} AS {y} ON {on} "
                f"SELECT {items}"
            )
            if len(rewrite) <= 300:  # the user's own text, when it is short enough to show
                return f"a join is a named statement, its SELECT last: `{rewrite}`"
        return "a join is a named statement: `join NAME = a AS x INNER JOIN b AS y ON ...`"
    keyword = _misspelt_keyword(token)
    return _mean(keyword) if keyword is not None else None


def _misspelt_keyword(token: str) -> str | None:
    """The keyword ``token`` is likely a misspelling of, or None."""
    if token.isidentifier() and token.upper() not in _KEYWORDS:
        close = difflib.get_close_matches(token.upper(), _KEYWORDS, n=1, cutoff=0.8)
        if close:
            return close[0]
    return None


def _mean(keyword: str) -> str:
    return f"did you mean `{keyword}`?"


def _hint_for(token: str, expected: set[str]) -> str | None:
    if token.lower() in ("where",):
        return ON_BEFORE_WHERE if "ON" in expected else WHERE_HELP
    if token.upper() == "OUTER":
        return BARE_OUTER
    if token.upper() == "CROSS":
        return CROSS_JOIN
    if "ON" in expected:
        return "a join needs `ON <condition>` after its second relation"
    if "JOIN" in expected and "LEFT" in expected:
        return "write the join type before JOIN, e.g. `a AS x LEFT OUTER JOIN b AS y`"
    return None


_NOT_CODE = re.compile(r"--[^\r\n]*|/\*.*?(?:\*/|\Z)|'(?:[^'\r\n]|'')*+'?|`[^`\r\n]*`?", re.DOTALL)


def _mask_comments_and_strings(text: str) -> str:
    """``text`` with comments, strings and quoted names blanked (line breaks kept, a lone CR
    as LF), so that statement starts are only looked for in code, at the start of a line; an
    unclosed ``/*`` blanks the rest."""
    masked = _NOT_CODE.sub(lambda m: re.sub(r"[^\r\n]", " ", m.group()), text)
    return masked.replace("\r", "\n")


# ------------------------------------------------------------------ characters

# The lexemes whose insides the lexer takes as text: comments, strings and quoted names, as
# the grammar's terminals match them, except that a closed string or name may hold a lone CR
# here (the grammar ends lines there), so that the CR is reported where it is.
_TEXT_LEXEMES = re.compile(
    r"(?P<comment>--[^\r\n]*|/\*.*?(?:\*/|\Z))"
    r"|(?P<string>'(?:[^'\n]|'')*+')"
    r"|(?P<name>`(?:[^`\n]|``)++`)",
    re.DOTALL,
)
# What each lexeme may not hold besides the HOSTILE characters: a line break in a string,
# a line break or a TAB in a name.
_ALSO_BANNED = {"string": re.compile(r"\r"), "name": re.compile(r"[\t\r]")}
_TOKENS = ("name", "string")
_WHERE = {
    "name": "in a quoted name",
    "string": "in a string literal",
    "comment": "in a comment",
    None: "between tokens",
}
MAX_CHARACTER_ERRORS = 100  # then one summary: a UTF-16 file read as UTF-8 has thousands


def _character_help(ch: str, kind: str | None) -> tuple[str, str]:
    """(label, help) for a character that ``kind`` of text may not hold; the help names it."""
    name = char_name(ch)
    if ch in BIDI_CONTROLS:
        return "bidirectional control", (
            f"remove the {name}: it makes the text display in another order than sjoin "
            'reads it ("Trojan Source"); no part of a spec needs it'
        )
    if ch in "\u2028\u2029":
        fix = "a name or a string cannot span lines" if kind in _TOKENS else "break lines with LF"
        return "invisible line break", (
            f"remove the {name}: editors disagree on whether it breaks the line; {fix}"
        )
    if "\ud800" <= ch <= "\udfff":
        return "lone surrogate", (
            f"remove the {name}: it is half of a UTF-16 surrogate pair, not a character "
            "(the text was decoded wrongly)"
        )
    if ch == "\r":
        what = "quoted name" if kind == "name" else "string"
        return "line break", f"a {what} cannot hold a line break ({name}): close it on its line"
    if kind == "name":
        return "control character", f"remove the {name}: a name cannot hold control characters"
    if kind == "string":
        return "control character", (
            f"remove the {name}: strings have no escape sequences, so a string cannot hold a "
            "control character other than TAB"
        )
    if kind == "comment":
        return "control character", (
            f"remove the {name}: a comment cannot hold a control character other than TAB"
        )
    return "control character", (
        f"remove the {name}: between tokens only spaces, TABs and line breaks are allowed"
    )


def check_characters(text: str, diags: Diagnostics) -> str:
    """Report each character the spec may not hold (E008, at the character) and return the
    text with each of them replaced by a space, so that the parser reports nothing twice.

    Linear: two regex scans of the text, and a lookup per reported character."""
    found = [m.start() for m in HOSTILE.finditer(text)]
    lexemes = [(m.start(), m.end(), m.lastgroup) for m in _TEXT_LEXEMES.finditer(text)]
    for start, end, kind in lexemes:
        banned = _ALSO_BANNED.get(kind or "")
        if banned is not None and (kind == "name" or "\r" in text[start:end]):
            found.extend(m.start() for m in banned.finditer(text, start, end))
    if not found:
        return text
    found.sort()
    starts = [start for start, _, _ in lexemes]
    chars = list(text)
    for count, pos in enumerate(found):
        i = bisect.bisect_right(starts, pos) - 1
        kind = lexemes[i][2] if i >= 0 and pos < lexemes[i][1] else None
        ch = text[pos]
        chars[pos] = " "
        if count < MAX_CHARACTER_ERRORS:
            label, help = _character_help(ch, kind)
            message = f"{char_name(ch)} is not allowed {_WHERE[kind]}"
            diags.add("E008", message, Span(pos, pos + 1), label, help)
        elif count == MAX_CHARACTER_ERRORS:
            diags.add(
                "E008",
                f"{len(found) - count} more characters that are not allowed, "
                "not reported one by one",
                Span(pos, pos + 1),
                char_name(ch),
                "is the file UTF-16? save it as UTF-8" if "\x00" in text else None,
            )
    return "".join(chars)


# ------------------------------------------------------------------ nesting

# How deeply expressions may nest, in both front ends alike.  Each of these adds a level:
# parentheses, a function call, CASE, CAST (and `::`, try_cast), NOT, unary minus, a
# comparison or predicate, a field of a call, and each operator of an arithmetic or `||`
# chain (a + b + c is (a + b) + c); in a pipeline's SQL also a subquery.  A list of ANDs or
# ORs adds only the depth of its balanced tree (log2 of its length), so flat lists of any
# length are accepted.  Later stages (the binder, the planner, sqlglot's SQL generator, the
# back end, the runtime's expression compiler) walk expressions recursively, a few Python
# frames per level: at 100 levels every one of them stays far below Python's recursion limit
# (1000), with room for the caller's own stack (tests/compiler/frontend/test_limits.py checks each
# construct at the limit).  MAX_NESTING (100) lives with the other limits in
# compiler/frontend/limits.py.  The rules are grammar/expr.lark's (the shared expressions) and the
# few that pipeline_sql.lark adds.
LEVELS = frozenset(
    {"not_", "compare", "null_safe_equal", "distinct_from", "between", "is_null", "in_list"}
    | {"like", "binop", "concat_op", "neg", "paren", "func_call", "field_access"}
    | {"case_expr", "cast_expr", "colon_cast", "try_cast"}
    | {"regex_match", "is_truth", "paren_query", "subquery_read"}  # pipeline_sql.lark's own
)


def _nesting_error(statement: Tree[Token]) -> Tree[Token] | None:
    """The first node (in source order) of ``statement`` nested more than MAX_NESTING
    levels deep, or None; a walk without recursion (both front ends: ``LEVELS``)."""
    stack: list[tuple[Tree[Token], int]] = [(statement, 0)]
    while stack:
        node, level = stack.pop()
        kids = node.children
        if node.data in ("and_", "or_"):
            level += (len(kids) - 1).bit_length()  # the depth of the balanced tree
        elif node.data in LEVELS:
            level += 1
        if level > MAX_NESTING:
            return node
        stack += [(k, level) for k in reversed(kids) if isinstance(k, Tree)]
    return None


def _limit_nesting(tree: Tree[Token], offset: int, diags: Diagnostics) -> Tree[Token]:
    """``tree`` without the statements whose expressions nest too deeply, each reported
    (E001) where the nesting passes the limit: at that parenthesis, minus, NOT, CASE, ...
    Dropped like a statement with a syntax error, so that no later stage meets them."""
    kept = []
    for statement in tree.children:
        node = _nesting_error(statement) if isinstance(statement, Tree) else None
        if node is None:
            kept.append(statement)
            continue
        nesting_refused(Span.of(node.meta, offset).start, diags)
    return Tree(tree.data, kept, tree.meta)


def nesting_refused(start: int, diags: Diagnostics) -> None:
    """The E001 of an expression nested more than MAX_NESTING levels, at ``start`` (both
    syntaxes say it alike)."""
    diags.add(
        "E001",
        f"the spec nests expressions too deeply (more than {MAX_NESTING} levels)",
        Span(start, start + 1),
        f"level {MAX_NESTING + 1} starts here",
        "split it: compute part of it in the SELECT of an earlier join; a list of "
        "conditions joined by AND or OR is not nesting, however long",
    )


def parse(source: Source, diags: Diagnostics) -> ast.SpecFile:
    """Parse a whole file; on syntax errors, report each broken statement and keep the rest."""
    text = check_characters(source.text, diags)
    try:
        tree = parser().parse(text)
    except UnexpectedInput:
        pass
    else:
        whole = _transform(tree, 0, diags)
        _check_join_word_aliases(whole, text, diags)
        return whole
    masked = _mask_comments_and_strings(text)
    starts = sorted(
        {
            0,
            *(m.start() for m in _STATEMENT_START.finditer(masked)),
            *(m.start() for m in _MISSPELT_START.finditer(masked) if _near_keyword(m[1])),
        }
    )
    statements: list[ast.Statement] = []
    broken: list[str] = []
    for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
        chunk = text[begin:end]
        try:
            tree = parser().parse(chunk)
        except UnexpectedInput as err:
            _syntax_error(err, chunk, begin, end == len(text), diags)
            declared = _DECLARED.match(masked[begin:end])
            if declared is not None and _near_keyword(declared[1], _DECLARING):
                broken.append(declared[2].strip("`"))
            continue
        part = _transform(tree, begin, diags)
        statements.extend(part.statements)
        broken.extend(part.broken)
    spec = ast.SpecFile(tuple(statements), Span(0, len(text)), tuple(broken))
    _check_join_word_aliases(spec, text, diags)
    return spec


def _transform(tree: Tree[Token], offset: int, diags: Diagnostics) -> ast.SpecFile:
    """The AST of a parse tree at ``offset`` of the text, without the statements that nest
    too deeply or hold an expression form sjoin does not model (RLIKE, IS TRUE, ...: the
    shared grammar reads Spark's every form, ``ToAst._refuse``), each reported."""
    transformer = ToAst(offset)
    spec: ast.SpecFile = transformer.transform(_limit_nesting(tree, offset, diags))
    if not transformer.refusals:
        return spec
    kept, broken = [], list(spec.broken)
    for stmt in spec.statements:
        inside = [
            r
            for r in transformer.refusals
            if stmt.span.start <= r.span.start and r.span.end <= stmt.span.end
        ]
        for r in inside:
            code = r.code if r.code != ToAst.REFUSED else "E001"
            diags.add(code, f"sjoin does not read {r.message}", r.span, r.label, r.help)
        if not inside:
            kept.append(stmt)
        elif isinstance(getattr(stmt, "name", None), ast.Ident):
            broken.append(stmt.name.text)  # type: ignore[union-attr]
    return ast.SpecFile(tuple(kept), spec.span, tuple(broken))


def _check_join_word_aliases(spec: ast.SpecFile, text: str, diags: Diagnostics) -> None:
    """A join keyword written where an alias may stand (`a OUTER JOIN b`) parses as an alias,
    and the join silently runs as INNER: an error, unless the name is back-quoted."""
    for stmt in spec.statements:
        refs = (
            (stmt.left, stmt.right)
            if isinstance(stmt, ast.JoinDecl)
            else (stmt.input,)
            if isinstance(stmt, ast.AggregateDecl | ast.DedupDecl | ast.ViewDecl)
            else ()
        )
        for ref in refs:
            alias = ref.alias
            if alias is None or text[alias.span.start : alias.span.start + 1] == "`":
                continue
            word = alias.text.upper()
            if word not in JOIN_WORDS:
                continue
            if word == "OUTER":
                message, help_ = f"`{alias.text}` is not an alias here", BARE_OUTER
            elif word == "CROSS":
                message, help_ = "cross joins of streams are not supported", CROSS_JOIN
            else:
                message = f"`{alias.text}` is a join keyword, not an alias"
                help_ = (
                    "write the join type between the two relations, e.g. "
                    "`a AS x LEFT OUTER JOIN b AS y`; back-quote the word to use it as a name"
                )
            # `a OUTER JOIN b`: the fix writes `LEFT` before the word read as an alias
            before = Span(alias.span.start, alias.span.start)
            fix = Fix(before, "LEFT ") if word == "OUTER" else None
            diags.add("E001", message, alias.span, "a join keyword", help_, fix)
