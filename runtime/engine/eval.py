"""Plan expressions -> Python closures, compiled once per operator.

A compiled expression is a function ``f(a, b)`` of two row tuples: ``a`` is the left (or
only) input row, ``b`` the right one (``None`` when there is no second row).  A ``Layout``
says where each column lives.  Evaluation follows Spark SQL: NULL propagates through
operators and comparisons, AND/OR/NOT are three-valued, ``/`` is a double (or decimal)
division, timestamps and intervals are microseconds, and with ANSI mode (Spark 4.0+'s
default) overflow, division by zero and invalid casts fail the query like Spark does.

Dispatch is a table keyed by sqlglot node class (``_COMPILERS``); a node or function
without a rule raises ``UnsupportedExpression`` naming it.  Nothing is ever ``eval``'d.
"""

from __future__ import annotations

import math
import operator
import random
import re
import struct
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any, Final, TypeAlias

from sqlglot import exp

from ...compiler.vocabulary import annotate, javatext
from ...compiler.vocabulary.functions import ALIASES, FUNCTIONS
from ...compiler.vocabulary.types import SqlType, arith_type
from ..errors import QueryError, UnsupportedExpression
from .values import (
    US_PER_DAY,
    US_PER_SECOND,
    format_date,
    format_timestamp,
    parse_date,
    parse_timestamp,
)

Getter: TypeAlias = Callable[[Any, Any], Any]
Resolver: TypeAlias = Callable[[exp.Expression], "Getter | None"]

DECIMAL_CONTEXT: Final = Context(prec=200)
# The most bytes a Spark string holds (a Java byte array: ByteArrayMethods.
# MAX_ROUNDED_ARRAY_LENGTH); a function that would make a longer one fails.
MAX_STRING_BYTES: Final = 2**31 - 1 - 15
# The most bytes of a string a function builds in sjoin's runtime (both engines evaluate
# functions here): lpad, rpad, concat and regexp_replace make a longer value fail the run with
# SJOIN_STRING_TOO_LONG, before it is built (docs/language.md). Spark builds up to
# MAX_STRING_BYTES, but a test engine that held 20 rows of lpad(v, 100000000, 'xy') would
# need 4 GB and end in a MemoryError; 64 MiB is 64 times Kafka's default message size.
MAX_BUILT_STRING_BYTES: Final = 2**26
_INT_BITS: Final = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
INT_PRECISION: Final = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
_FLOATS: Final = ("double", "float")
_BOOLEAN_NODES: Final = (
    exp.And,
    exp.Or,
    exp.Not,
    exp.EQ,
    exp.NEQ,
    exp.NullSafeEQ,
    exp.NullSafeNEQ,
    exp.LT,
    exp.LTE,
    exp.GT,
    exp.GTE,
    exp.Between,
    exp.Is,
    exp.In,
    exp.Like,
    exp.Boolean,
)


@dataclass(frozen=True)
class Layout:
    """Where columns live: ``(side, name) -> (argument, index)`` with argument 0 (``a``) or
    1 (``b``); ``types`` gives each column's SQL type name (for columns whose node lacks
    one)."""

    slots: Mapping[tuple[str, str], tuple[int, int]]
    types: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def of(cls, *sides: tuple[str, Sequence[tuple[str, str]]]) -> Layout:
        """``Layout.of(("left", [(name, type), ...]), ("right", [...]))``."""
        slots: dict[tuple[str, str], tuple[int, int]] = {}
        types: dict[tuple[str, str], str] = {}
        for arg, (side, columns) in enumerate(sides):
            for index, (name, kind) in enumerate(columns):
                slots[(side, name)] = (arg, index)
                types[(side, name)] = kind
        return cls(slots, types)


@dataclass(frozen=True)
class CompileContext:
    layout: Layout
    ansi: bool
    resolve: Resolver | None = None


def compile_expr(
    node: exp.Expression, layout: Layout, *, ansi: bool, resolve: Resolver | None = None
) -> Getter:
    """Compile ``node`` once; the result is called per row (pair).

    ``resolve`` may claim a node first (an aggregate's keys and aggregate calls).
    """
    return _compile(node, CompileContext(layout, ansi, resolve))


def kind_of(node: exp.Expression, layout: Layout | None = None) -> str:
    """The canonical SQL type name of a bound node ('unknown' when it cannot be told)."""
    found = annotate.sql_type(node)
    if isinstance(found, SqlType):
        return found.name
    if isinstance(node, _BOOLEAN_NODES):
        return "boolean"
    if isinstance(node, exp.Paren):
        return kind_of(node.this, layout)
    if isinstance(node, exp.Column) and layout is not None:
        return layout.types.get((annotate.side(node), node.name), "unknown")
    if isinstance(node, exp.Null):
        return "null"
    if isinstance(node, exp.Interval):
        return "interval"
    if isinstance(node, exp.Literal):
        if node.is_string:
            return "string"
        return "int" if node.this.isdigit() else "decimal"
    return "unknown"


def decimal_shape(node: exp.Expression, kind: str) -> tuple[int, int]:
    """(precision, scale) of a numeric operand as Spark's DecimalPrecision sees it."""
    found = annotate.sql_type(node)
    if kind == "decimal" and isinstance(found, SqlType) and found.params:
        return found.params[0], found.params[1]
    if isinstance(node, exp.Literal) and not node.is_string:
        digits = node.this.replace(".", "").lstrip("0") or "0"
        scale = len(node.this.partition(".")[2])
        return max(len(digits), scale, 1), scale
    return INT_PRECISION.get(kind, 38), 0


# ------------------------------------------------------------------------------ compile


def _compile(node: exp.Expression, ctx: CompileContext) -> Getter:
    if ctx.resolve is not None:
        claimed = ctx.resolve(node)
        if claimed is not None:
            return claimed
    rule = _COMPILERS.get(type(node))
    if rule is None:
        raise UnsupportedExpression(
            f"the runtime cannot evaluate `{node.sql(dialect='spark')}` "
            f"({type(node).__name__} expressions are not supported)"
        )
    return rule(node, ctx)


def _const(value: Any) -> Getter:
    def const(a: Any, b: Any) -> Any:
        return value

    const.constant = value  # type: ignore[attr-defined]
    return const


def _is_const(g: Getter) -> bool:
    return hasattr(g, "constant")


def _column(node: exp.Column, ctx: CompileContext) -> Getter:
    key = (annotate.side(node), node.name)
    slot = ctx.layout.slots.get(key)
    if slot is None:
        matches = [s for (side, name), s in ctx.layout.slots.items() if name == node.name]
        if len(matches) != 1:
            raise UnsupportedExpression(f"column `{node.sql(dialect='spark')}` is not available")
        slot = matches[0]
    arg, index = slot
    if arg == 0:

        def left(a: Any, b: Any) -> Any:
            return a[index]

        left.column = slot  # type: ignore[attr-defined]
        return left

    def right(a: Any, b: Any) -> Any:
        return b[index]

    right.column = slot  # type: ignore[attr-defined]
    return right


def _literal(node: exp.Literal, ctx: CompileContext) -> Getter:
    if node.is_string:
        return _const(node.this)
    kind = annotate.sql_type(node)
    if kind is not None and kind.name in _FLOATS:
        # a number literal compared with a DOUBLE or FLOAT: Spark's folded CAST of it
        value = float(node.this)
        return _const(to_float32(value) if kind.name == "float" else value)
    if node.this.isdigit():
        return _const(int(node.this))
    return _const(Decimal(node.this))


def _interval(node: exp.Interval, ctx: CompileContext) -> Getter:
    micros = annotate.micros(node)
    if micros is None:
        raise UnsupportedExpression(f"interval `{node.sql(dialect='spark')}` has no fixed length")
    return _const(int(micros))


def _paren(node: exp.Paren, ctx: CompileContext) -> Getter:
    return _compile(node.this, ctx)


# ------------------------------------------------------------------------------ logic


def _and(node: exp.And, ctx: CompileContext) -> Getter:
    fa, fb = _compile(node.this, ctx), _compile(node.expression, ctx)
    fused = _range_of(fa, fb)
    if fused is not None:
        return fused

    def and_(a: Any, b: Any) -> Any:
        x = fa(a, b)
        if x is False:
            return False
        y = fb(a, b)
        if y is False:
            return False
        if x is None or y is None:
            return None
        return True

    return and_


def _or(node: exp.Or, ctx: CompileContext) -> Getter:
    fa, fb = _compile(node.this, ctx), _compile(node.expression, ctx)

    def or_(a: Any, b: Any) -> Any:
        x = fa(a, b)
        if x is True:
            return True
        y = fb(a, b)
        if y is True:
            return True
        if x is None or y is None:
            return None
        return False

    return or_


def _not(node: exp.Not, ctx: CompileContext) -> Getter:
    f = _compile(node.this, ctx)

    def not_(a: Any, b: Any) -> Any:
        x = f(a, b)
        return None if x is None else not x

    return not_


def _is(node: exp.Is, ctx: CompileContext) -> Getter:
    if not isinstance(node.expression, exp.Null):
        raise UnsupportedExpression(f"`{node.sql(dialect='spark')}`: only IS [NOT] NULL")
    f = _compile(node.this, ctx)

    def is_null(a: Any, b: Any) -> Any:
        return f(a, b) is None

    return is_null


# ------------------------------------------------------------------------------ comparisons


def _comparable(nodes: Sequence[exp.Expression], ctx: CompileContext) -> list[Getter]:
    """Operands compiled and coerced to one comparable form (dates meet timestamps as µs)."""
    kinds = [kind_of(n, ctx.layout) for n in nodes]
    getters = [_compile(n, ctx) for n in nodes]
    if "timestamp" in kinds and "date" in kinds:
        getters = [
            _coerce(g, k, "timestamp", ctx.ansi) if k == "date" else g
            for g, k in zip(getters, kinds, strict=True)
        ]
    return getters


def _float_aware(nodes: Sequence[exp.Expression], ctx: CompileContext) -> bool:
    return any(kind_of(n, ctx.layout) in _FLOATS for n in nodes)


def _nan_key(x: Any) -> Any:
    """Spark orders NaN above every number and NaN = NaN."""
    if isinstance(x, float) and x != x:
        return (1, 0.0)
    return (0, x)


_COMPARE_OPS: Final[dict[type[exp.Expression], Callable[[Any, Any], bool]]] = {
    exp.EQ: operator.eq,
    exp.NEQ: operator.ne,
    exp.LT: operator.lt,
    exp.LTE: operator.le,
    exp.GT: operator.gt,
    exp.GTE: operator.ge,
}


def _compare(node: exp.Expression, ctx: CompileContext) -> Getter:
    op = _COMPARE_OPS[type(node)]
    fa, fb = _comparable([node.this, node.expression], ctx)
    if _float_aware([node.this, node.expression], ctx):
        cmp = op

        def op(x: Any, y: Any) -> bool:
            return cmp(_nan_key(x), _nan_key(y))

    fast = _linear_compare(op, fa, fb)
    if fast is not None:
        return fast
    if _is_const(fb):
        y = fb.constant  # type: ignore[attr-defined]
        if y is None:
            return _const(None)

        def compare_const(a: Any, b: Any) -> Any:
            x = fa(a, b)
            if x is None:
                return None
            return op(x, y)

        return compare_const

    def compare(a: Any, b: Any) -> Any:
        x = fa(a, b)
        if x is None:
            return None
        y = fb(a, b)
        if y is None:
            return None
        return op(x, y)

    return compare


def _null_safe_equal(node: exp.Expression, ctx: CompileContext) -> Getter:
    """``a <=> b`` (Spark's EqualNullSafe): true when both are NULL, false when one is,
    else ``a = b`` (NaN equals NaN); never NULL.  ``a IS DISTINCT FROM b`` is its negation."""
    fa, fb = _comparable([node.this, node.expression], ctx)
    floats = _float_aware([node.this, node.expression], ctx)
    negated = isinstance(node, exp.NullSafeNEQ)

    def null_safe_equal(a: Any, b: Any) -> bool:
        x, y = fa(a, b), fb(a, b)
        if x is None or y is None:
            same = x is None and y is None
        elif floats:
            same = _nan_key(x) == _nan_key(y)
        else:
            same = x == y
        return same is not negated

    return null_safe_equal


def _linear_of(g: Getter) -> tuple[int, int, int] | None:
    """(argument, index, offset) when ``g`` reads a timestamp column plus a constant."""
    found = getattr(g, "linear", None)
    if found is not None:
        return found  # type: ignore[no-any-return]
    slot = column_slot(g)
    return None if slot is None else (slot[0], slot[1], 0)


def _linear_compare(op: Callable[[Any, Any], bool], fa: Getter, fb: Getter) -> Getter | None:
    """One closure for `col1 + c1 <op> col2 + c2` over timestamps/intervals (the range
    conditions of time-interval joins), instead of four nested calls."""
    la, lb = getattr(fa, "linear", None), getattr(fb, "linear", None)
    if la is None and lb is None:
        return None
    la, lb = _linear_of(fa), _linear_of(fb)
    if la is None or lb is None:
        return None
    (ia, xa, ca), (ib, xb, cb) = la, lb
    shift = cb - ca
    if ia == 1 and ib == 0 and op in _FLIPPED:  # read as `left <flipped op> right - shift`
        (ia, xa), (ib, xb), shift, op = (ib, xb), (ia, xa), -shift, _FLIPPED[op]

    def compare_linear(a: Any, b: Any) -> Any:
        x = a[xa] if ia == 0 else b[xa]
        if x is None:
            return None
        y = b[xb] if ib == 1 else a[xb]
        if y is None:
            return None
        return op(x, y + shift)

    compare_linear.linear_compare = (ia, xa, ib, xb, op, shift)  # type: ignore[attr-defined]
    return compare_linear


_FLIPPED: Final[dict[Callable[[Any, Any], bool], Callable[[Any, Any], bool]]] = {
    operator.lt: operator.gt,
    operator.le: operator.ge,
    operator.gt: operator.lt,
    operator.ge: operator.le,
    operator.eq: operator.eq,
    operator.ne: operator.ne,
}


def _range_of(fa: Getter, fb: Getter) -> Getter | None:
    """One closure for the AND of two linear comparisons of the same left and right columns
    (`L.t >= R.t - 5s AND L.t <= R.t + 10s`, the time range of an interval join): each
    value is read once.  Both comparisons see the same two values, so the result is NULL
    exactly when one of them is NULL, as SQL's AND of the two would be."""
    pa, pb = getattr(fa, "linear_compare", None), getattr(fb, "linear_compare", None)
    if pa is None or pb is None or pa[:4] != pb[:4] or (pa[0], pa[2]) != (0, 1):
        return None
    _, xa, _, xb, op1, s1 = pa
    _, _, _, _, op2, s2 = pb

    def range_(a: Any, b: Any) -> Any:
        x = a[xa]
        if x is None:
            return None
        y = b[xb]
        if y is None:
            return None
        return op1(x, y + s1) and op2(x, y + s2)

    return range_


def _between(node: exp.Between, ctx: CompileContext) -> Getter:
    fv, flo, fhi = _comparable([node.this, node.args["low"], node.args["high"]], ctx)
    floats = _float_aware([node.this, node.args["low"], node.args["high"]], ctx)
    key = _nan_key if floats else None

    def between(a: Any, b: Any) -> Any:
        v = fv(a, b)
        lo = flo(a, b)
        hi = fhi(a, b)
        if key is not None:
            v, lo, hi = (None if x is None else key(x) for x in (v, lo, hi))
        ge = None if v is None or lo is None else v >= lo
        if ge is False:
            return False
        le = None if v is None or hi is None else v <= hi
        if le is False:
            return False
        if ge is None or le is None:
            return None
        return True

    return between


def _in(node: exp.In, ctx: CompileContext) -> Getter:
    items = list(node.expressions)
    getters = _comparable([node.this, *items], ctx)
    fv, rest = getters[0], getters[1:]
    floats = _float_aware([node.this, *items], ctx)
    if all(_is_const(g) for g in rest):
        values = [g.constant for g in rest]  # type: ignore[attr-defined]
        has_null = any(v is None for v in values)
        present = [v for v in values if v is not None]
        if floats:
            present = [_nan_key(v) for v in present]
        try:
            lookup: Any = frozenset(present)
        except TypeError:
            lookup = present

        def in_const(a: Any, b: Any) -> Any:
            v = fv(a, b)
            if v is None:
                return None
            if (_nan_key(v) if floats else v) in lookup:
                return True
            return None if has_null else False

        return in_const

    def in_list(a: Any, b: Any) -> Any:
        v = fv(a, b)
        if v is None:
            return None
        if floats:
            v = _nan_key(v)
        has_null = False
        for g in rest:
            x = g(a, b)
            if x is None:
                has_null = True
            elif (_nan_key(x) if floats else x) == v:
                return True
        return None if has_null else False

    return in_list


def _like_matcher(pattern: str) -> Callable[[str], bool]:
    try:
        return javatext.like_matcher(pattern)
    except javatext.LikeError as err:
        raise QueryError(err.error_class, str(err)) from None


def _like(node: exp.Like, ctx: CompileContext) -> Getter:
    """Spark's LIKE in time linear in the value times the pattern (javatext.like_matcher),
    for a pattern written in the spec as for one read from the trace."""
    fv, fp = _compile(node.this, ctx), _compile(node.expression, ctx)
    if _is_const(fp):
        if fp.constant is None:  # type: ignore[attr-defined]
            return _const(None)
        matches = _like_matcher(fp.constant)  # type: ignore[attr-defined]

        def like_const(a: Any, b: Any) -> Any:
            v = fv(a, b)
            return None if v is None else matches(v)

        return like_const
    cache: dict[str, Callable[[str], bool]] = {}

    def like(a: Any, b: Any) -> Any:
        v, p = fv(a, b), fp(a, b)
        if v is None or p is None:
            return None
        matcher = cache.get(p)
        if matcher is None:
            if len(cache) > 1000:
                cache.clear()
            matcher = cache[p] = _like_matcher(p)
        return matcher(v)

    return like


# ------------------------------------------------------------------------------ arithmetic


def _check_int(value: int, kind: str, ansi: bool, what: str) -> int:
    bits = _INT_BITS.get(kind, 64)
    limit = 1 << (bits - 1)
    if -limit <= value < limit:
        return value
    if ansi:
        raise QueryError("ARITHMETIC_OVERFLOW", f"{what} caused overflow of {kind.upper()}")
    return ((value + limit) % (1 << bits)) - limit


def _as_float(x: Any) -> float:
    return float(x)


def _as_decimal(x: Any) -> Decimal:
    return x if isinstance(x, Decimal) else Decimal(x)


def unsigned_zero(d: Decimal) -> Decimal:
    """A DECIMAL result as Spark holds it: Java's BigDecimal has no negative zero (Python's
    Decimal has: -1.00 * 0.00 is -0.0000), so a zero is written without a sign."""
    return d if d else d.copy_abs()


def _divide_by_zero(ansi: bool) -> None:
    if ansi:
        raise QueryError("DIVIDE_BY_ZERO", "Division by zero. Use `try_divide` to tolerate it")


def _java_mod(x: Any, y: Any) -> Any:
    """Remainder with the sign of the dividend (Java's %)."""
    if isinstance(x, float) or isinstance(y, float):
        return math.fmod(x, y)
    if isinstance(x, Decimal) or isinstance(y, Decimal):
        return unsigned_zero(DECIMAL_CONTEXT.remainder(_as_decimal(x), _as_decimal(y)))
    r = abs(x) % abs(y)
    return -r if x < 0 else r


_SYMBOLS: Final[dict[type[exp.Expression], str]] = {
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
    exp.Mod: "%",
}


def decimal_arith_shape(node: exp.Expression) -> tuple[int, int]:
    """(precision, scale) of the DECIMAL result of arithmetic ``node``: the type the binder
    gave it (``types.arith_type``, Spark's ``DecimalPrecision`` with precision loss allowed),
    or, on an expression the binder did not type, that rule over its operands' shapes."""
    found = annotate.sql_type(node)
    if isinstance(found, SqlType) and found.name == "decimal" and len(found.params) == 2:
        return found.params[0], found.params[1]
    left, right = node.this, node.expression
    result = arith_type(
        _SYMBOLS[type(node)],
        SqlType("decimal", decimal_shape(left, kind_of(left))),
        SqlType("decimal", decimal_shape(right, kind_of(right))),
    )
    assert result is not None and len(result.params) == 2
    return result.params[0], result.params[1]


def _arith(node: exp.Expression, ctx: CompileContext) -> Getter:
    left, right = node.this, node.expression
    ka, kb = kind_of(left, ctx.layout), kind_of(right, ctx.layout)
    kr = kind_of(node, ctx.layout)
    fa, fb = _compile(left, ctx), _compile(right, ctx)
    op_type = type(node)
    ansi = ctx.ansi
    temporal = {"timestamp", "date"}
    if ka in temporal or kb in temporal or "interval" in (ka, kb):
        return _temporal_arith(op_type, fa, fb, ka, kb, ansi, node)
    if op_type is exp.Div and kr not in ("decimal",) and "decimal" not in (ka, kb):
        kr = "double"
    if op_type is exp.Div and "decimal" in (ka, kb) and not ({ka, kb} & set(_FLOATS)):
        kr = "decimal"
    fn: Callable[[Any, Any], Any]
    if kr in _FLOATS:
        fn = _float_op(op_type, ansi)
    elif kr == "decimal":
        fn = _decimal_op(op_type, ansi, *decimal_arith_shape(node))
    elif kr in _INT_BITS:
        fn = _int_op(op_type, kr, ansi)
    elif kr in ("null", "unknown"):
        return _const(None)
    else:
        raise UnsupportedExpression(f"cannot compute `{node.sql(dialect='spark')}` ({kr})")

    def arith(a: Any, b: Any) -> Any:
        x = fa(a, b)
        if x is None:
            return None
        y = fb(a, b)
        if y is None:
            return None
        return fn(x, y)

    return arith


def _float_op(op_type: type[exp.Expression], ansi: bool) -> Callable[[Any, Any], Any]:
    if op_type is exp.Add:
        return lambda x, y: float(x) + float(y)
    if op_type is exp.Sub:
        return lambda x, y: float(x) - float(y)
    if op_type is exp.Mul:
        return lambda x, y: float(x) * float(y)

    def div(x: Any, y: Any) -> Any:
        if y == 0:
            _divide_by_zero(ansi)
            return None
        if op_type is exp.Mod:
            return math.fmod(float(x), float(y))
        return float(x) / float(y)

    return div


def _decimal_op(
    op_type: type[exp.Expression], ansi: bool, precision: int, scale: int
) -> Callable[[Any, Any], Any]:
    """DECIMAL arithmetic as Spark computes it: the exact result (a quotient to 200 digits)
    rounded HALF_UP to the result type's scale (``decimal_arith_shape``), and when it does
    not fit the type's precision NULL, or with ANSI NUMERIC_VALUE_OUT_OF_RANGE (checked on
    Spark 4.3: ``tests/compiler/binding/test_decimal_arith_types.py``)."""
    c = DECIMAL_CONTEXT
    quantum = Decimal(1).scaleb(-scale)

    def fit(d: Decimal) -> Decimal | None:
        d = d.quantize(quantum, rounding=ROUND_HALF_UP, context=c)
        if d and d.adjusted() >= precision - scale:
            if ansi:
                raise QueryError(
                    "NUMERIC_VALUE_OUT_OF_RANGE",
                    f"{d} cannot be represented as DECIMAL({precision}, {scale})",
                )
            return None
        return unsigned_zero(d)

    if op_type is exp.Add:
        return lambda x, y: fit(c.add(_as_decimal(x), _as_decimal(y)))
    if op_type is exp.Sub:
        return lambda x, y: fit(c.subtract(_as_decimal(x), _as_decimal(y)))
    if op_type is exp.Mul:
        return lambda x, y: fit(c.multiply(_as_decimal(x), _as_decimal(y)))

    def div(x: Any, y: Any) -> Any:
        if y == 0:
            _divide_by_zero(ansi)
            return None
        if op_type is exp.Mod:
            return fit(_java_mod(_as_decimal(x), _as_decimal(y)))
        return fit(c.divide(_as_decimal(x), _as_decimal(y)))

    return div


def _int_op(op_type: type[exp.Expression], kind: str, ansi: bool) -> Callable[[Any, Any], Any]:
    if op_type is exp.Add:
        return lambda x, y: _check_int(x + y, kind, ansi, "addition")
    if op_type is exp.Sub:
        return lambda x, y: _check_int(x - y, kind, ansi, "subtraction")
    if op_type is exp.Mul:
        return lambda x, y: _check_int(x * y, kind, ansi, "multiplication")

    def mod(x: Any, y: Any) -> Any:
        if y == 0:
            _divide_by_zero(ansi)
            return None
        return _java_mod(x, y)

    return mod


def _temporal_arith(
    op_type: type[exp.Expression],
    fa: Getter,
    fb: Getter,
    ka: str,
    kb: str,
    ansi: bool,
    node: exp.Expression,
) -> Getter:
    if ka == "date":
        fa = _coerce(fa, "date", "timestamp", ansi)
    if kb == "date":
        fb = _coerce(fb, "date", "timestamp", ansi)
    fn: Callable[[Any, Any], Any]
    if op_type in (exp.Add, exp.Sub) and {ka, kb} <= {"timestamp", "date", "interval"}:
        fn = operator.add if op_type is exp.Add else operator.sub
    elif op_type is exp.Mul and "interval" in (ka, kb):

        def fn(x: Any, y: Any) -> Any:
            return _round_half_up(
                _as_decimal(x) * _as_decimal(y)
                if not isinstance(x, float) and not isinstance(y, float)
                else Decimal(repr(float(x) * float(y)))
            )

    elif op_type is exp.Div and ka == "interval":

        def fn(x: Any, y: Any) -> Any:
            if y == 0:
                raise QueryError("DIVIDE_BY_ZERO", "Division by zero")
            return _round_half_up(
                DECIMAL_CONTEXT.divide(
                    _as_decimal(x), _as_decimal(y if not isinstance(y, float) else Decimal(repr(y)))
                )
            )

    else:
        raise UnsupportedExpression(
            f"cannot compute `{node.sql(dialect='spark')}` ({ka} with {kb})"
        )

    def temporal(a: Any, b: Any) -> Any:
        x = fa(a, b)
        if x is None:
            return None
        y = fb(a, b)
        if y is None:
            return None
        return fn(x, y)

    if op_type in (exp.Add, exp.Sub) and ka != "date" and kb != "date":
        base, offset = (
            (fa, fb) if _is_const(fb) else (fb, fa) if op_type is exp.Add else (None, None)
        )
        slot = column_slot(base) if base is not None and offset is not None else None
        if slot is not None and offset is not None and _is_const(offset):
            value = offset.constant  # type: ignore[attr-defined]
            if isinstance(value, int) and not isinstance(value, bool):
                sign = -1 if op_type is exp.Sub else 1
                temporal.linear = (slot[0], slot[1], sign * value)  # type: ignore[attr-defined]
    return temporal


def _round_half_up(d: Decimal) -> int:
    return int(d.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=DECIMAL_CONTEXT))


def _neg(node: exp.Neg, ctx: CompileContext) -> Getter:
    f = _compile(node.this, ctx)
    kind = kind_of(node.this, ctx.layout)
    ansi = ctx.ansi
    if _is_const(f) and f.constant is not None:  # type: ignore[attr-defined]
        value = -f.constant  # type: ignore[attr-defined]
        return _const(_check_int(value, kind, ansi, "negation") if kind in _INT_BITS else value)

    def neg(a: Any, b: Any) -> Any:
        x = f(a, b)
        if x is None:
            return None
        if kind in _INT_BITS:
            return _check_int(-x, kind, ansi, "negation")
        return -x

    return neg


# ------------------------------------------------------------------------------ CASE


def _case(node: exp.Case, ctx: CompileContext) -> Getter:
    kr = _result_type(node, ctx)
    operand = node.this
    branches: list[tuple[Getter, Getter]] = []
    for when in node.args.get("ifs") or []:
        result = _coerced(when.args["true"], kr, ctx)
        if operand is not None:
            fo, fw = _comparable([operand, when.this], ctx)

            def test(a: Any, b: Any, fo: Getter = fo, fw: Getter = fw) -> Any:
                x = fo(a, b)
                y = fw(a, b)
                return None if x is None or y is None else x == y

            branches.append((test, result))
        else:
            branches.append((_compile(when.this, ctx), result))
    default_node = node.args.get("default")
    default = _coerced(default_node, kr, ctx) if default_node is not None else _const(None)

    def case(a: Any, b: Any) -> Any:
        for test, result in branches:
            if test(a, b) is True:
                return result(a, b)
        return default(a, b)

    return case


# ------------------------------------------------------------------------------ CAST


def _cast_node(node: exp.Cast, ctx: CompileContext) -> Getter:
    target = kind_of(node, ctx.layout)
    if annotate.is_typed_literal(node):
        text = node.this.name
        value = parse_timestamp(text) if target == "timestamp" else parse_date(text)
        if value is None:
            raise UnsupportedExpression(f"invalid {target.upper()} literal {text!r}")
        return _const(value)
    source = kind_of(node.this, ctx.layout)
    found = annotate.sql_type(node)
    params = found.params if isinstance(found, SqlType) else ()
    f = _compile(node.this, ctx)
    return _coerce(f, source, target, ctx.ansi, params)


def _try_cast_node(node: exp.TryCast, ctx: CompileContext) -> Getter:
    """``try_cast(x AS T)``: the CAST of ANSI mode whatever the session's mode, NULL where
    that CAST fails (a malformed string, an overflow): Spark's Cast in its TRY mode."""
    target = kind_of(node, ctx.layout)
    source = kind_of(node.this, ctx.layout)
    found = annotate.sql_type(node)
    params = found.params if isinstance(found, SqlType) else ()
    f = _compile(node.this, ctx)
    if source in ("null", "unknown") or target in ("unknown", "null"):
        return f
    if source == target and (target != "decimal" or not params):
        return f
    strict = (
        _to_decimal_as_is
        if target == "decimal" and not params
        else cast_function(source, target, True, params)
    )

    def convert(value: Any) -> Any:
        try:
            return strict(value)
        except QueryError:
            return None

    if _is_const(f):
        value = f.constant  # type: ignore[attr-defined]
        return _const(None if value is None else convert(value))

    def try_cast(a: Any, b: Any) -> Any:
        x = f(a, b)
        return None if x is None else convert(x)

    return try_cast


def _coerce(
    f: Getter, source: str, target: str, ansi: bool, params: tuple[int, ...] = ()
) -> Getter:
    """``f`` with its values cast from ``source`` to ``target`` (NULL stays NULL).  A
    DECIMAL target without (precision, scale) keeps the value's own scale."""
    if (source == target and (target != "decimal" or not params)) or target in (
        "unknown",
        "null",
    ):
        return f
    if source in ("null", "unknown"):
        return f
    convert: Callable[[Any], Any]
    if target == "decimal" and not params:
        convert = _to_decimal_as_is
    else:
        convert = cast_function(source, target, ansi, params)
    if _is_const(f):
        value = f.constant  # type: ignore[attr-defined]
        return _const(None if value is None else convert(value))

    def cast(a: Any, b: Any) -> Any:
        x = f(a, b)
        return None if x is None else convert(x)

    return cast


def _to_decimal_as_is(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(repr(value))
    return value if isinstance(value, Decimal) else Decimal(value)


def _result_type(node: exp.Expression, ctx: CompileContext) -> tuple[str, tuple[int, ...]]:
    found = annotate.sql_type(node)
    params = found.params if isinstance(found, SqlType) else ()
    return kind_of(node, ctx.layout), params


def _coerced(sub: exp.Expression, to: tuple[str, tuple[int, ...]], ctx: CompileContext) -> Getter:
    """``sub`` compiled and cast to the type ``to`` of the expression it is a branch of."""
    return _coerce(_compile(sub, ctx), kind_of(sub, ctx.layout), to[0], ctx.ansi, to[1])


# What Spark's casts from STRING to a number trim first: U+0000 to U+0020 (Java's
# String.trim), and U+007F too for the integral types (UTF8String.toLong skips Java's
# whitespace and ISO controls); not U+00A0, U+2003 or U+0085, which Python's str.strip and
# \s also take (checked on Spark 4.3.0, tests/runtime/engine/test_cast_text.py).
_SPARK_TRIM = "".join(map(chr, range(0x21)))
_SPARK_TRIM_INTEGRAL = _SPARK_TRIM + "\x7f"
# an integral number as Spark's UTF8String.toLong reads it: ASCII digits only (not \d, which
# takes `٣`), a sign, an optional fraction that is dropped
_INTEGRAL = re.compile(r"([+-]?[0-9]+)(?:\.[0-9]*)?")
_INTEGRAL_DIGITS = 25  # more digits than any integral type holds, whatever their value


def _invalid(ansi: bool, value: Any, target: str) -> None:
    if ansi:
        raise QueryError(
            "CAST_INVALID_INPUT",
            f"The value {value!r} cannot be cast to {target.upper()} because it is malformed",
        )


def cast_function(
    source: str, target: str, ansi: bool, params: tuple[int, ...] = ()
) -> Callable[[Any], Any]:
    """Spark's CAST from ``source`` to ``target`` for a non-NULL value."""
    if target == "string":
        return lambda v: to_spark_string(v, source)
    if target in _INT_BITS:
        return _cast_to_int(source, target, ansi)
    if target == "float" and source != "float":
        to_double = _cast_to_float(source, ansi)

        def to_float(v: Any) -> Any:
            found = to_double(v)
            return None if found is None else to_float32(found)

        return to_float
    if target in _FLOATS:
        return _cast_to_float(source, ansi)
    if target == "decimal":
        precision, scale = params if len(params) == 2 else (10, 0)
        return _cast_to_decimal(source, precision, scale, ansi)
    if target == "boolean":
        return _cast_to_boolean(source, ansi)
    if target == "timestamp":
        return _cast_to_timestamp(source, ansi)
    if target == "date":
        return _cast_to_date(source, ansi)
    raise UnsupportedExpression(f"the runtime cannot cast {source.upper()} to {target.upper()}")


def _cast_to_int(source: str, target: str, ansi: bool) -> Callable[[Any], Any]:
    bits = _INT_BITS[target]
    limit = 1 << (bits - 1)

    def fit(value: int, raw: Any) -> Any:
        if -limit <= value < limit:
            return value
        if ansi:
            raise QueryError("CAST_OVERFLOW", f"{raw!r} cannot be cast to {target.upper()}")
        return ((value + limit) % (1 << bits)) - limit

    if source == "string":

        def from_string(v: Any) -> Any:
            m = _INTEGRAL.fullmatch(v.strip(_SPARK_TRIM_INTEGRAL))
            if m is None or (ansi and "." in v):
                _invalid(ansi, v, target)
                return None
            sign, digits = ("-" if m[1][0] == "-" else ""), m[1].lstrip("+-").lstrip("0")
            # int() refuses more than 4300 digits; that many is out of range anyway
            value = int(sign + (digits or "0")) if len(digits) <= _INTEGRAL_DIGITS else limit
            if not -limit <= value < limit:
                if ansi:
                    raise QueryError("CAST_OVERFLOW", f"{v!r} cannot be cast to {target.upper()}")
                return None
            return value

        return from_string
    if source == "boolean":
        return lambda v: 1 if v else 0
    if source == "timestamp":
        return lambda v: fit(v // US_PER_SECOND, v)
    if source == "date":
        raise UnsupportedExpression(f"the runtime cannot cast DATE to {target.upper()}")
    if source in _FLOATS:

        def from_float(v: Any) -> Any:
            if v != v or v in (math.inf, -math.inf):
                if ansi:
                    raise QueryError("CAST_OVERFLOW", f"{v!r} cannot be cast to {target.upper()}")
                return 0 if v != v else (limit - 1 if v > 0 else -limit)
            value = int(v)
            if -limit <= value < limit:
                return value
            if ansi:
                raise QueryError("CAST_OVERFLOW", f"{v!r} cannot be cast to {target.upper()}")
            if bits == 64 or bits == 32:
                return limit - 1 if value > 0 else -limit  # Java's saturating (long)/(int)
            return ((int(max(min(value, 2**31 - 1), -(2**31))) + limit) % (1 << bits)) - limit

        return from_float
    if source == "decimal":
        return lambda v: fit(int(v), v)
    return lambda v: fit(int(v), v)


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest FLOAT (Java's ``(float)`` of a double: past the
    largest FLOAT it is infinite), as Spark's CAST to FLOAT gives it: CAST(16777217 AS FLOAT)
    is 16777216."""
    try:
        rounded: float = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return rounded


def _cast_to_float(source: str, ansi: bool) -> Callable[[Any], Any]:
    if source == "string":

        def from_string(v: Any) -> Any:
            text = v.strip(_SPARK_TRIM)
            special = {
                "nan": math.nan,
                "infinity": math.inf,
                "+infinity": math.inf,
                "-infinity": -math.inf,
                "inf": math.inf,
                "-inf": -math.inf,
            }
            if text.lower() in special:
                return special[text.lower()]
            if not text.isascii() or "_" in text or text != text.strip():
                _invalid(ansi, v, "double")  # Python's float takes `٣`, `1_000` and U+00A0
                return None
            try:
                return float(text.rstrip("dDfF"))
            except ValueError:
                _invalid(ansi, v, "double")
                return None

        return from_string
    if source == "timestamp":
        return lambda v: v / US_PER_SECOND
    if source == "boolean":
        return lambda v: 1.0 if v else 0.0
    return float


def _cast_to_decimal(source: str, precision: int, scale: int, ansi: bool) -> Callable[[Any], Any]:
    quantum = Decimal(1).scaleb(-scale)

    def fit(d: Decimal, raw: Any) -> Any:
        try:
            q = d.quantize(quantum, rounding=ROUND_HALF_UP, context=DECIMAL_CONTEXT)
        except InvalidOperation:
            q = None
        if q is None or (q != 0 and q.adjusted() >= precision - scale):
            if ansi:
                raise QueryError(
                    "NUMERIC_VALUE_OUT_OF_RANGE",
                    f"{raw!r} cannot be represented as DECIMAL({precision}, {scale})",
                )
            return None
        return unsigned_zero(q)

    def convert(v: Any) -> Any:
        if source == "string":
            text = v.strip(_SPARK_TRIM)
            # Java's BigDecimal, as Python's Decimal, takes every script's digits (`٣`), but
            # not `1_000` nor U+00A0 around the number, which Decimal also takes
            if "_" in text or text != text.strip():
                _invalid(ansi, v, "decimal")
                return None
            try:
                d = Decimal(text)
            except InvalidOperation:
                _invalid(ansi, v, "decimal")
                return None
            if not d.is_finite():
                _invalid(ansi, v, "decimal")
                return None
            return fit(d, v)
        if source == "boolean":
            return fit(Decimal(1 if v else 0), v)
        if source == "timestamp":
            return fit(Decimal(v) / US_PER_SECOND, v)
        if isinstance(v, float):
            if v != v or v in (math.inf, -math.inf):
                if ansi:
                    raise QueryError("NUMERIC_VALUE_OUT_OF_RANGE", f"{v!r} is not a decimal")
                return None
            return fit(Decimal(repr(v)), v)
        return fit(Decimal(v), v)

    return convert


def _cast_to_boolean(source: str, ansi: bool) -> Callable[[Any], Any]:
    if source == "string":
        true = {"t", "true", "y", "yes", "1"}
        false = {"f", "false", "n", "no", "0"}

        def from_string(v: Any) -> Any:
            text = v.strip().lower()
            if text in true:
                return True
            if text in false:
                return False
            _invalid(ansi, v, "boolean")
            return None

        return from_string
    if source == "timestamp":
        return lambda v: v != 0
    return lambda v: v != 0


def _cast_to_timestamp(source: str, ansi: bool) -> Callable[[Any], Any]:
    if source == "string":

        def from_string(v: Any) -> Any:
            us = parse_timestamp(v)
            if us is None:
                _invalid(ansi, v, "timestamp")
            return us

        return from_string
    if source == "date":
        return lambda v: v * US_PER_DAY
    if source in _FLOATS:

        def from_float(v: Any) -> Any:
            if v != v or v in (math.inf, -math.inf):
                return None
            return int(v * US_PER_SECOND)

        return from_float
    if source == "decimal":
        return lambda v: int(v * US_PER_SECOND)
    if source in _INT_BITS:
        return lambda v: v * US_PER_SECOND
    raise UnsupportedExpression(f"the runtime cannot cast {source.upper()} to TIMESTAMP")


def _cast_to_date(source: str, ansi: bool) -> Callable[[Any], Any]:
    if source == "string":

        def from_string(v: Any) -> Any:
            days = parse_date(v)
            if days is None:
                us = parse_timestamp(v)
                days = None if us is None else us // US_PER_DAY
            if days is None:
                _invalid(ansi, v, "date")
            return days

        return from_string
    if source == "timestamp":
        return lambda v: v // US_PER_DAY
    raise UnsupportedExpression(f"the runtime cannot cast {source.upper()} to DATE")


def to_spark_string(value: Any, kind: str) -> str:
    """A value as Spark's CAST(... AS STRING) writes it (session time zone UTC)."""
    if kind == "timestamp":
        text = format_timestamp(value)[:-1].replace("T", " ")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if kind == "date":
        return format_date(value)
    if kind == "window":
        return (
            "{"
            + to_spark_string(value[0], "timestamp")
            + ", "
            + to_spark_string(value[1], "timestamp")
            + "}"
        )
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _java_double(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def _java_double(x: float) -> str:
    """Java's Double.toString: plain between 1e-3 and 1e7, else d.dddE±n."""
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        text = repr(x)
        return text if "." in text or "e" in text else text + ".0"
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    assert isinstance(exponent, int)
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    power = exponent + len(digits) - 1
    mantissa = ds[0] + "." + (ds[1:] or "0")
    return f"{'-' if sign else ''}{mantissa}E{power}"


# ------------------------------------------------------------------------------ functions


def window_spans(
    ts: int, duration_us: int, slide_us: int | None, start_us: int = 0
) -> list[tuple[int, int]]:
    """The windows containing ``ts`` (µs), latest first, as Spark's TimeWindowing computes
    them: ``lastStart = ts - ((ts - start) mod slide)``, then every ``slide`` back while the
    window still contains ``ts``."""
    slide = slide_us or duration_us
    last = ts - (ts - start_us) % slide
    if slide == duration_us:
        return [(last, last + duration_us)]
    spans = []
    count = -(-duration_us // slide)
    for i in range(count):
        begin = last - i * slide
        if begin + duration_us > ts:
            spans.append((begin, begin + duration_us))
    return spans


def window_arguments(node: exp.Expression) -> tuple[int, int | None, int]:
    """(duration, slide or None, start) in µs of a bound ``window(...)`` call."""
    args = list(node.expressions)
    found = [annotate.micros(a) for a in args[1:]]
    micros = [m for m in found if m is not None]
    if not micros or len(micros) < len(found):
        raise UnsupportedExpression(
            f"`{node.sql(dialect='spark')}`: window durations must be constant intervals"
        )
    duration = micros[0]
    slide = micros[1] if len(micros) > 1 else None
    start = micros[2] if len(micros) > 2 else 0
    return duration, (None if slide == duration else slide), start


def _function_name(node: exp.Anonymous) -> str:
    name = str(annotate.function(node) or node.this).lower()
    return ALIASES.get(name, name)


def _function(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    name = _function_name(node)
    rule = _FUNCTIONS.get(name)
    if rule is None:
        known = sorted(n for n, f in FUNCTIONS.items() if not f.aggregate)
        what = (
            "an aggregate, only allowed in an `aggregate` statement"
            if (name in FUNCTIONS and FUNCTIONS[name].aggregate)
            else "not supported by the runtime"
        )
        raise UnsupportedExpression(
            f"function `{name}` is {what}; supported functions: {', '.join(known)}"
        )
    return rule(node, ctx)


def _args(node: exp.Anonymous, ctx: CompileContext) -> list[Getter]:
    return [_compile(a, ctx) for a in node.expressions]


def _strict(fn: Callable[..., Any], getters: Sequence[Getter]) -> Getter:
    """Call ``fn`` on the argument values; NULL when any argument is NULL."""
    if len(getters) == 1:
        (g,) = getters

        def one(a: Any, b: Any) -> Any:
            x = g(a, b)
            return None if x is None else fn(x)

        return one
    if len(getters) == 2:
        g1, g2 = getters

        def two(a: Any, b: Any) -> Any:
            x = g1(a, b)
            if x is None:
                return None
            y = g2(a, b)
            return None if y is None else fn(x, y)

        return two

    def many(a: Any, b: Any) -> Any:
        values = [g(a, b) for g in getters]
        return None if any(v is None for v in values) else fn(*values)

    return many


def _f_window(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    duration, slide, start = window_arguments(node)
    if slide is not None:
        raise UnsupportedExpression(
            f"`{node.sql(dialect='spark')}`: a sliding window() makes several rows per input "
            "row; the runtime supports it only as a join key or a GROUP BY key"
        )
    time = _coerce(
        _compile(node.expressions[0], ctx),
        kind_of(node.expressions[0], ctx.layout),
        "timestamp",
        ctx.ansi,
    )

    def window(a: Any, b: Any) -> Any:
        ts = time(a, b)
        if ts is None:
            return None
        begin = ts - (ts - start) % duration
        return (begin, begin + duration)

    return window


def _window_field(node: exp.Dot, ctx: CompileContext) -> Getter:
    """``window(...).start`` / ``.end`` (the binder allows no other field)."""
    window = _compile(node.this, ctx)
    index = 0 if node.expression.name.lower() == "start" else 1

    def field(a: Any, b: Any) -> Any:
        value = window(a, b)
        return None if value is None else value[index]

    return field


def _text_args(node: exp.Anonymous, ctx: CompileContext) -> list[Getter]:
    return [
        _coerce(_compile(a, ctx), kind_of(a, ctx.layout), "string", ctx.ansi)
        for a in node.expressions
    ]


def _f_substring(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    getters = _args(node, ctx)

    def substring(s: str, pos: int, length: int = 2**31 - 1) -> str:
        pos, length = int(pos), int(length)
        n = len(s)
        start = pos - 1 if pos > 0 else (n + pos if pos < 0 else 0)
        end = n if length == 2**31 - 1 else start + length
        start = max(start, 0)
        if start >= end:
            return ""
        return s[start : min(end, n)]

    return _strict(substring, getters)


def _first_non_null(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    kr = _result_type(node, ctx)
    getters = [_coerced(a, kr, ctx) for a in node.expressions]

    def coalesce(a: Any, b: Any) -> Any:
        for g in getters:
            x = g(a, b)
            if x is not None:
                return x
        return None

    return coalesce


def _f_if(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    kr = _result_type(node, ctx)
    cond = _compile(node.expressions[0], ctx)
    yes, no = (_coerced(a, kr, ctx) for a in node.expressions[1:])

    def if_(a: Any, b: Any) -> Any:
        return yes(a, b) if cond(a, b) is True else no(a, b)

    return if_


def _extreme(pick: Callable[..., Any]) -> Callable[[exp.Anonymous, CompileContext], Getter]:
    def rule(node: exp.Anonymous, ctx: CompileContext) -> Getter:
        kr = _result_type(node, ctx)
        getters = [_coerced(a, kr, ctx) for a in node.expressions]
        floats = kr[0] in _FLOATS

        def extreme(a: Any, b: Any) -> Any:
            values = [x for g in getters if (x := g(a, b)) is not None]
            if not values:
                return None
            return pick(values, key=_nan_key) if floats else pick(values)

        return extreme

    return rule


def _round_value(value: Any, digits: int, kind: str) -> Any:
    if isinstance(value, float):
        if value != value or value in (math.inf, -math.inf):
            return value
        d = Decimal(repr(value))
    else:
        d = Decimal(value)
    exponent = d.as_tuple().exponent
    assert isinstance(exponent, int)
    if digits >= -exponent:  # no digit to drop: the value as it is, whatever the scale
        rounded = d
    elif d.is_zero() or -digits > d.adjusted() + 1:  # every digit dropped, none rounds up
        rounded = Decimal(0)
    else:
        rounded = d.quantize(
            Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP, context=DECIMAL_CONTEXT
        )
    if kind in _FLOATS:
        return float(rounded)
    if kind in _INT_BITS:
        return int(rounded)
    return unsigned_zero(
        rounded if digits >= 0 else rounded.quantize(Decimal(1), context=DECIMAL_CONTEXT)
    )


def _f_round(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    kind = kind_of(node.expressions[0], ctx.layout)
    value = _compile(node.expressions[0], ctx)
    digits = 0
    if len(node.expressions) > 1:
        scale = _compile(node.expressions[1], ctx)
        if not _is_const(scale) or scale.constant is None:  # type: ignore[attr-defined]
            raise UnsupportedExpression("round(): the scale must be a constant")
        digits = int(scale.constant)  # type: ignore[attr-defined]
    return _strict(lambda v: _round_value(v, digits, kind), [value])


def _floor_or_ceil(up: bool) -> Callable[[exp.Anonymous, CompileContext], Getter]:
    def rule(node: exp.Anonymous, ctx: CompileContext) -> Getter:
        def fn(v: Any) -> Any:
            if isinstance(v, float):
                if v != v or v in (math.inf, -math.inf):
                    return None
                return math.ceil(v) if up else math.floor(v)
            if isinstance(v, Decimal):
                return int(v.to_integral_value(rounding="ROUND_CEILING" if up else ROUND_FLOOR))
            return v

        return _strict(fn, _args(node, ctx))

    return rule


_TRUNC_UNITS: Final = {
    "year": "year", "yyyy": "year", "yy": "year",
    "quarter": "quarter",
    "month": "month", "mm": "month", "mon": "month",
    "week": "week",
    "day": "day", "dd": "day",
    "hour": "hour",
    "minute": "minute",
    "second": "second",
    "millisecond": "millisecond",
    "microsecond": "microsecond",
}  # fmt: skip
_FIXED_TRUNC: Final = {
    "day": US_PER_DAY,
    "hour": 3_600 * US_PER_SECOND,
    "minute": 60 * US_PER_SECOND,
    "second": US_PER_SECOND,
    "millisecond": 1000,
    "microsecond": 1,
}


def date_trunc(unit: str, us: int) -> int | None:
    """Spark's date_trunc in UTC; None for an unknown unit."""
    level = _TRUNC_UNITS.get(unit.lower())
    if level is None:
        return None
    if level in _FIXED_TRUNC:
        size = _FIXED_TRUNC[level]
        return us - us % size

    day = date(1970, 1, 1) + timedelta(days=us // US_PER_DAY)
    if level == "week":
        day -= timedelta(days=day.weekday())
    elif level == "month":
        day = day.replace(day=1)
    elif level == "quarter":
        day = day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
    else:
        day = day.replace(month=1, day=1)
    return (day - date(1970, 1, 1)).days * US_PER_DAY


def _timestamp_args(node: exp.Anonymous, ctx: CompileContext) -> list[Getter]:
    return [
        _coerce(_compile(a, ctx), kind_of(a, ctx.layout), "timestamp", ctx.ansi)
        if kind_of(a, ctx.layout) == "date"
        else _compile(a, ctx)
        for a in node.expressions
    ]


def _f_date_trunc(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    unit, ts = _compile(node.expressions[0], ctx), _timestamp_args(node, ctx)[1]
    return _strict(lambda u, t: date_trunc(u, t), [unit, ts])


def _timestamp_from(scale: int, name: str) -> Callable[[exp.Anonymous, CompileContext], Getter]:
    def rule(node: exp.Anonymous, ctx: CompileContext) -> Getter:
        ansi = ctx.ansi

        def fn(v: Any) -> Any:
            if isinstance(v, float):
                if v != v or v in (math.inf, -math.inf):
                    return None
                return int(v * scale)
            return _check_int(int(v * scale), "bigint", ansi, name)

        return _strict(fn, _args(node, ctx))

    return rule


def _on_timestamp(fn: Callable[[int], Any]) -> Callable[[exp.Anonymous, CompileContext], Getter]:
    def rule(node: exp.Anonymous, ctx: CompileContext) -> Getter:
        return _strict(fn, _timestamp_args(node, ctx))

    return rule


def _f_rand(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    seed = 0
    if node.expressions:
        g = _compile(node.expressions[0], ctx)
        seed = int(g.constant) if _is_const(g) and g.constant is not None else 0  # type: ignore[attr-defined]
    generator = random.Random(seed)
    return lambda a, b: generator.random()


def _f_concat(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    return _strict(_built_concat, _text_args(node, ctx))


def _simple(fn: Callable[..., Any]) -> Callable[[exp.Anonymous, CompileContext], Getter]:
    def rule(node: exp.Anonymous, ctx: CompileContext) -> Getter:
        return _strict(fn, _args(node, ctx))

    return rule


def _f_abs(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    kind = kind_of(node.expressions[0], ctx.layout)
    ansi = ctx.ansi
    return _strict(
        lambda v: _check_int(abs(v), kind, ansi, "abs") if kind in _INT_BITS else abs(v),
        _args(node, ctx),
    )


# ------------------------------------------------ text, pattern and math functions (Spark 3.5+)


_EPOCH_DAY: Final = date(1970, 1, 1)


def _constant_text(node: exp.Expression) -> str | None:
    """The text of a string-literal argument (the binder requires patterns to be literals);
    None for a NULL literal, which makes the whole call NULL."""
    node = node.this if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.Literal) and node.is_string:
        return str(node.this)
    if isinstance(node, exp.Null):
        return None
    raise UnsupportedExpression(f"`{node.sql(dialect='spark')}` must be a string literal")


def _f_date_format(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    text = _constant_text(node.expressions[1])
    if text is None:
        return _const(None)
    pattern = javatext.date_pattern(text)
    return _strict(pattern.format, _timestamp_args(node, ctx)[:1])


def _f_split(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    text = _constant_text(node.expressions[1])
    if text is None:
        return _const(None)
    value = _compile(node.expressions[0], ctx)
    if len(node.expressions) < 3:
        return _strict(lambda s: javatext.java_split(s, text, -1), [value])
    limit = _compile(node.expressions[2], ctx)
    return _strict(lambda s, n: javatext.java_split(s, text, int(n)), [value, limit])


def _f_regexp_extract(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    text = _constant_text(node.expressions[1])
    if text is None:
        return _const(None)
    regex = javatext.java_regex(text)
    getters = [_compile(node.expressions[0], ctx)]
    if len(node.expressions) > 2:
        getters.append(_compile(node.expressions[2], ctx))

    def extract(s: str, group: int = 1) -> str:
        if not 0 <= group <= regex.groups:
            raise QueryError(
                "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX",
                f"regexp_extract expects group index between 0 and {regex.groups}, but got {group}",
            )
        found = regex.search(s)
        if found is None:
            return ""
        start, end = found[group]
        return "" if start < 0 else s[start:end]

    return _strict(extract, getters)


def _f_regexp_replace(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    text, replacement = (_constant_text(a) for a in node.expressions[1:3])
    if text is None or replacement is None:
        return _const(None)
    regex = javatext.java_regex(text)
    replace = javatext.java_replacement(replacement, regex.groups)

    def replace_all(s: str) -> str:
        out = javatext.replace_all(regex, s, replace, MAX_BUILT_STRING_BYTES)
        if out is None:  # more characters than that: at least as many bytes
            _check_built("regexp_replace", MAX_BUILT_STRING_BYTES, more_than=True)
            raise AssertionError("unreachable")  # pragma: no cover
        if len(out) > MAX_BUILT_STRING_BYTES // 4:
            _check_built("regexp_replace", _utf8_size(out))
        return out

    return _strict(replace_all, [_compile(node.expressions[0], ctx)])


def _pad(left: bool) -> Callable[[exp.Anonymous, CompileContext], Getter]:
    """Spark's lpad/rpad (UTF8String.lpad): no padding with an empty pad, and a string
    longer than the length is cut to it."""

    name = "lpad" if left else "rpad"

    def rule(node: exp.Anonymous, ctx: CompileContext) -> Getter:
        first = node.expressions[0]  # a number is padded as its text, as Spark casts it
        text = _coerce(_compile(first, ctx), kind_of(first, ctx.layout), "string", ctx.ansi)
        second = node.expressions[1]  # the length is an INT: Spark casts a BIGINT to it
        length = _coerce(_compile(second, ctx), kind_of(second, ctx.layout), "int", ctx.ansi)
        getters = [text, length, *_args(node, ctx)[2:]]
        if len(getters) == 2:
            getters.append(_const(" "))

        def pad(s: str, length: int, fill: str) -> str:
            spaces = length - len(s)
            if spaces <= 0 or not fill:
                return s[: max(length, 0)]
            count, rest = divmod(spaces, len(fill))
            size = _utf8_size(s) + count * _utf8_size(fill) + _utf8_size(fill[:rest])
            _check_built(f"{name} to {length} characters", size)
            padding = fill * count + fill[:rest]
            return padding + s if left else s + padding

        return _strict(pad, getters)

    return rule


def _check_built(what: str, size: int, more_than: bool = False) -> None:
    """A string of ``size`` UTF-8 bytes (``more_than``: more than ``size``) that a function
    is about to build: over Spark's string size it fails as Spark fails; over the runtime's
    MAX_BUILT_STRING_BYTES the run stops, saying Spark would build it."""
    said = f"more than {size:,}" if more_than else f"{size:,}"
    if size > MAX_STRING_BYTES:
        raise QueryError(
            "SJOIN_STRING_TOO_LONG",
            f"{what} makes a string of {said} bytes; Spark's strings hold at most "
            f"{MAX_STRING_BYTES:,} (Spark fails too, with java.lang.OutOfMemoryError or "
            "ArithmeticException: integer overflow)",
        )
    if size > MAX_BUILT_STRING_BYTES or (more_than and size == MAX_BUILT_STRING_BYTES):
        raise QueryError(
            "SJOIN_STRING_TOO_LONG",
            f"{what} makes a string of {said} bytes; sjoin's runtime builds strings of at "
            f"most {MAX_BUILT_STRING_BYTES:,} bytes (64 MiB; Spark's hold up to 2 GiB: run "
            "such values on Spark, docs/language.md)",
        )


def _built_concat(*parts: str) -> str:
    """``concat``: the parts joined, their size checked before (``_check_built``)."""
    if sum(map(len, parts)) > MAX_BUILT_STRING_BYTES // 4:  # may be over: count the bytes
        _check_built("concat", sum(map(_utf8_size, parts)))
    return "".join(parts)


def _utf8_size(s: str) -> int:
    return len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass"))


def _double(fn: Callable[..., float | None]) -> Callable[[exp.Anonymous, CompileContext], Getter]:
    """A math function on DOUBLE arguments (Spark casts numbers to DOUBLE for these)."""

    def rule(node: exp.Anonymous, ctx: CompileContext) -> Getter:
        getters = [
            _coerce(_compile(a, ctx), kind_of(a, ctx.layout), "double", ctx.ansi)
            for a in node.expressions
        ]
        return _strict(fn, getters)

    return rule


def _day_of(us: int) -> date:
    """The UTC calendar day of a timestamp (µs since the epoch)."""
    return _EPOCH_DAY + timedelta(days=us // US_PER_DAY)


def _sign(x: float) -> float:
    return x if x != x else float((x > 0) - (x < 0))


def _f_pmod(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    kr = _result_type(node, ctx)
    getters = [_coerced(a, kr, ctx) for a in node.expressions]
    ansi = ctx.ansi

    def pmod(x: Any, y: Any) -> Any:
        if y == 0:
            if ansi:
                raise QueryError("REMAINDER_BY_ZERO", "Remainder by zero. Use `try_mod`")
            return None
        r = _java_mod(x, y)
        return _java_mod(r + y, y) if r < 0 else r

    return _strict(pmod, getters)


def _f_nullif(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    first, second = node.expressions
    value = _compile(first, ctx)
    equal = exp.EQ(this=first.copy(), expression=second.copy())
    same = _compare(equal, ctx)

    def nullif(a: Any, b: Any) -> Any:
        return None if same(a, b) is True else value(a, b)

    return nullif


def _f_element_at(node: exp.Anonymous, ctx: CompileContext) -> Getter:
    ansi = ctx.ansi

    def element_at(items: list[Any], index: int) -> Any:
        index = int(index)
        if index == 0:
            raise QueryError(
                "INVALID_INDEX_OF_ZERO",
                "The index 0 is invalid. An index shall be either < 0 or > 0 "
                "(the first element has index 1)",
            )
        if abs(index) > len(items):
            if ansi:
                raise QueryError(
                    "INVALID_ARRAY_INDEX_IN_ELEMENT_AT",
                    f"The index {index} is out of bounds. The array has {len(items)} elements",
                )
            return None
        return items[index - 1] if index > 0 else items[index]

    return _strict(element_at, _args(node, ctx))


_FUNCTIONS: Final[dict[str, Callable[[exp.Anonymous, CompileContext], Getter]]] = {
    "window": _f_window,
    "lower": _simple(str.lower),
    "upper": _simple(str.upper),
    "trim": _simple(lambda s: s.strip(" ")),
    "length": _simple(len),
    "concat": _f_concat,
    "substring": _f_substring,
    "coalesce": _first_non_null,
    "nvl": _first_non_null,
    "if": _f_if,
    "abs": _f_abs,
    "round": _f_round,
    "floor": _floor_or_ceil(False),
    "ceil": _floor_or_ceil(True),
    "greatest": _extreme(max),
    "least": _extreme(min),
    "date_trunc": _f_date_trunc,
    "unix_timestamp": _on_timestamp(lambda us: us // US_PER_SECOND),
    "unix_millis": _on_timestamp(lambda us: us // 1000),
    "unix_micros": _on_timestamp(lambda us: us),
    "timestamp_seconds": _timestamp_from(US_PER_SECOND, "timestamp_seconds"),
    "timestamp_millis": _timestamp_from(1000, "timestamp_millis"),
    "timestamp_micros": _timestamp_from(1, "timestamp_micros"),
    "to_date": _on_timestamp(lambda us: us // US_PER_DAY),
    "hour": _on_timestamp(lambda us: us % US_PER_DAY // (3600 * US_PER_SECOND)),
    "minute": _on_timestamp(lambda us: us % (3600 * US_PER_SECOND) // (60 * US_PER_SECOND)),
    "second": _on_timestamp(lambda us: us % (60 * US_PER_SECOND) // US_PER_SECOND),
    "rand": _f_rand,
    "uuid": lambda node, ctx: lambda a, b: str(uuid.uuid4()),
    "date_format": _f_date_format,
    "split": _f_split,
    "regexp_extract": _f_regexp_extract,
    "regexp_replace": _f_regexp_replace,
    "lpad": _pad(left=True),
    "rpad": _pad(left=False),
    "sqrt": _double(lambda x: math.sqrt(x) if x >= 0 or x != x else math.nan),
    "signum": _double(_sign),
    "year": _on_timestamp(lambda us: _day_of(us).year),
    "quarter": _on_timestamp(lambda us: (_day_of(us).month - 1) // 3 + 1),
    "month": _on_timestamp(lambda us: _day_of(us).month),
    "dayofmonth": _on_timestamp(lambda us: _day_of(us).day),
    "dayofweek": _on_timestamp(lambda us: (_day_of(us).weekday() + 1) % 7 + 1),
    "dayofyear": _on_timestamp(lambda us: _day_of(us).timetuple().tm_yday),
    "weekofyear": _on_timestamp(lambda us: _day_of(us).isocalendar()[1]),
    "pmod": _f_pmod,
    "nullif": _f_nullif,
    "element_at": _f_element_at,
}

_COMPILERS: Final[dict[type[exp.Expression], Callable[[Any, CompileContext], Getter]]] = {
    exp.Column: _column,
    exp.Literal: _literal,
    exp.Boolean: lambda node, ctx: _const(bool(node.this)),
    exp.Null: lambda node, ctx: _const(None),
    exp.Interval: _interval,
    exp.Paren: _paren,
    exp.And: _and,
    exp.Or: _or,
    exp.Not: _not,
    exp.Is: _is,
    exp.EQ: _compare,
    exp.NEQ: _compare,
    exp.NullSafeEQ: _null_safe_equal,
    exp.NullSafeNEQ: _null_safe_equal,
    exp.LT: _compare,
    exp.LTE: _compare,
    exp.GT: _compare,
    exp.GTE: _compare,
    exp.Between: _between,
    exp.In: _in,
    exp.Like: _like,
    exp.Add: _arith,
    exp.Sub: _arith,
    exp.Mul: _arith,
    exp.Div: _arith,
    exp.Mod: _arith,
    exp.Neg: _neg,
    exp.Case: _case,
    exp.Cast: _cast_node,
    exp.TryCast: _try_cast_node,
    exp.Anonymous: _function,
    exp.Dot: lambda node, ctx: _window_field(node, ctx),
}


def column_slot(getter: Getter) -> tuple[int, int] | None:
    """(argument, index) when ``getter`` just reads a column (used to build fast projections)."""
    return getattr(getter, "column", None)
