"""The functions a spec may call: arity, result type, and whether Spark treats them as
aggregate or non-deterministic.  The binder types calls with this table; back ends and the
runtime support exactly these names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from . import types as t
from .types import SqlType

# A result rule gets the argument types and returns the result type, or an error message.
ResultRule = Callable[[Sequence[SqlType]], "SqlType | str"]


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    min_args: int
    max_args: int | None  # None: variadic
    result: ResultRule
    aggregate: bool = False
    deterministic: bool = True
    doc: str = ""


def _fixed(result: SqlType, *wants: str) -> ResultRule:
    """Each argument i must be of kind wants[i] (or the last kind for the rest)."""

    def rule(args: Sequence[SqlType]) -> SqlType | str:
        for i, arg in enumerate(args):
            want = wants[min(i, len(wants) - 1)] if wants else "any"
            if not _fits(arg, want):
                return f"argument {i + 1} must be {want}, not {arg}"
        return result

    return rule


def _fits(arg: SqlType, want: str) -> bool:
    if arg in (t.NULL, t.UNKNOWN) or want == "any":
        return True
    if want == "numeric":
        return arg.is_numeric
    if want == "timestamp":  # a DATE is cast to one
        return arg.name in ("timestamp", "date")
    if want == "timestamp (a DATE is not cast)":  # Spark 4.3 refuses a DATE (UNEXPECTED_INPUT_TYPE)
        return arg.name == "timestamp"
    if want == "text":  # a string, or a number Spark casts to its text
        return arg.name == "string" or arg.is_numeric
    if want == "integer":
        return arg.name in ("tinyint", "smallint", "int", "bigint")
    if want == "array":
        return arg == t.ARRAY_STRING
    if want == "duration":
        return arg.name in ("interval", "string")
    return arg.name == want


def _same_as_first(kind: str) -> ResultRule:
    def rule(args: Sequence[SqlType]) -> SqlType | str:
        if args and not _fits(args[0], kind):
            return f"argument 1 must be {kind}, not {args[0]}"
        return args[0] if args else t.UNKNOWN

    return rule


def _aggregate_of_number(result: Callable[[SqlType], SqlType]) -> ResultRule:
    """A numeric aggregate whose type follows from its argument's (``types.sum_type``,
    ``types.avg_type``)."""

    def rule(args: Sequence[SqlType]) -> SqlType | str:
        if args and not _fits(args[0], "numeric"):
            return f"argument 1 must be numeric, not {args[0]}"
        return result(args[0]) if args else t.UNKNOWN

    return rule


def _common(args: Sequence[SqlType]) -> SqlType | str:
    result = t.NULL
    for arg in args:
        joined = t.common_type(result, arg)
        if joined is None:
            return f"arguments of types {result} and {arg} have no common type"
        result = joined
    return result


def _common_numeric(args: Sequence[SqlType]) -> SqlType | str:
    for i, arg in enumerate(args):
        if not _fits(arg, "numeric"):
            return f"argument {i + 1} must be numeric, not {arg}"
    return _common(args)


def _nullif(args: Sequence[SqlType]) -> SqlType | str:
    if t.common_type(args[0], args[1]) is None:
        return f"cannot compare {args[0]} with {args[1]}"
    return args[0]


def _if(args: Sequence[SqlType]) -> SqlType | str:
    if not _fits(args[0], "boolean"):
        return f"argument 1 must be boolean, not {args[0]}"
    return _common(args[1:])


FUNCTIONS: Final[dict[str, Function]] = {
    f.name: f
    for f in (
        Function(
            "window",
            2,
            4,
            _fixed(t.WINDOW, "timestamp", "duration"),
            doc="tumbling or sliding event-time window: window(ts, INTERVAL 10 SECONDS)",
        ),
        Function("lower", 1, 1, _fixed(t.STRING, "string")),
        Function("upper", 1, 1, _fixed(t.STRING, "string")),
        Function("trim", 1, 1, _fixed(t.STRING, "string")),
        Function("length", 1, 1, _fixed(t.INT, "string")),
        Function("concat", 1, None, _fixed(t.STRING, "any")),
        Function("substring", 2, 3, _fixed(t.STRING, "string", "numeric")),
        Function("coalesce", 1, None, _common),
        Function("nvl", 2, 2, _common),
        Function("if", 3, 3, _if),
        Function("abs", 1, 1, _same_as_first("numeric")),
        Function("round", 1, 2, _same_as_first("numeric")),
        Function("floor", 1, 1, _fixed(t.BIGINT, "numeric")),
        Function("ceil", 1, 1, _fixed(t.BIGINT, "numeric")),
        Function("greatest", 2, None, _common),
        Function("least", 2, None, _common),
        Function("date_trunc", 2, 2, _fixed(t.TIMESTAMP, "string", "timestamp")),
        Function("unix_timestamp", 1, 1, _fixed(t.BIGINT, "timestamp")),
        # (as Spark 4.3: unix_millis/micros of a DATE, timestamp_millis/micros of a DOUBLE or
        # DECIMAL are UNEXPECTED_INPUT_TYPE; tests/runtime/engine/test_eval_vs_spark.py)
        Function("unix_millis", 1, 1, _fixed(t.BIGINT, "timestamp (a DATE is not cast)")),
        Function("unix_micros", 1, 1, _fixed(t.BIGINT, "timestamp (a DATE is not cast)")),
        Function("timestamp_seconds", 1, 1, _fixed(t.TIMESTAMP, "numeric")),
        Function("timestamp_millis", 1, 1, _fixed(t.TIMESTAMP, "integer")),
        Function("timestamp_micros", 1, 1, _fixed(t.TIMESTAMP, "integer")),
        Function("to_date", 1, 1, _fixed(t.DATE, "timestamp")),
        Function("hour", 1, 1, _fixed(t.INT, "timestamp")),
        Function("minute", 1, 1, _fixed(t.INT, "timestamp")),
        Function("second", 1, 1, _fixed(t.INT, "timestamp")),
        Function(
            "date_format",
            2,
            2,
            _fixed(t.STRING, "timestamp", "string"),
            doc="date_format(ts, 'yyyy-MM-dd HH:mm:ss.SSS'): the pattern is a string literal",
        ),
        Function(
            "split",
            2,
            3,
            _fixed(t.ARRAY_STRING, "string", "string", "integer"),
            doc="split(text, 'regex' [, limit]): an ARRAY<STRING>, read with element_at",
        ),
        Function(
            "regexp_extract",
            2,
            3,
            _fixed(t.STRING, "string", "string", "integer"),
            doc="regexp_extract(text, 'regex' [, group]): the group of the first match, or ''",
        ),
        Function(
            "regexp_replace",
            3,
            3,
            _fixed(t.STRING, "string"),
            doc="regexp_replace(text, 'regex', 'replacement with $1')",
        ),
        Function("lpad", 2, 3, _fixed(t.STRING, "text", "integer", "string")),
        Function("rpad", 2, 3, _fixed(t.STRING, "text", "integer", "string")),
        Function("sqrt", 1, 1, _fixed(t.DOUBLE, "numeric")),
        Function("signum", 1, 1, _fixed(t.DOUBLE, "numeric")),
        Function("pmod", 2, 2, _common_numeric),
        Function("nullif", 2, 2, _nullif),
        Function(
            "element_at",
            2,
            2,
            _fixed(t.STRING, "array", "integer"),
            doc="element_at(split(...), i): 1 is the first element, -1 the last",
        ),
        Function("year", 1, 1, _fixed(t.INT, "timestamp")),
        Function("quarter", 1, 1, _fixed(t.INT, "timestamp")),
        Function("month", 1, 1, _fixed(t.INT, "timestamp")),
        Function("dayofmonth", 1, 1, _fixed(t.INT, "timestamp")),
        Function("dayofweek", 1, 1, _fixed(t.INT, "timestamp"), doc="1 = Sunday ... 7 = Saturday"),
        Function("dayofyear", 1, 1, _fixed(t.INT, "timestamp")),
        Function("weekofyear", 1, 1, _fixed(t.INT, "timestamp"), doc="the ISO 8601 week"),
        Function("rand", 0, 1, _fixed(t.DOUBLE, "numeric"), deterministic=False),
        Function("uuid", 0, 0, _fixed(t.STRING), deterministic=False),
        # aggregates
        Function("count", 1, 1, _fixed(t.BIGINT, "any"), aggregate=True),
        Function("sum", 1, 1, _aggregate_of_number(t.sum_type), aggregate=True),
        Function("avg", 1, 1, _aggregate_of_number(t.avg_type), aggregate=True),
        Function("min", 1, 1, _common, aggregate=True),
        Function("max", 1, 1, _common, aggregate=True),
        Function("approx_count_distinct", 1, 1, _fixed(t.BIGINT, "any"), aggregate=True),
    )
}
ALIASES: Final = {
    "substr": "substring",
    "ifnull": "nvl",
    "ceiling": "ceil",
    "mean": "avg",
    "sign": "signum",
    "day": "dayofmonth",
}


# Spark SQL functions that sjoin does not support, and why: E017 says so instead of
# suggesting a look-alike.  Spark computes these with java.lang.StrictMath (fdlibm), whose
# last bit the runtime's C library does not always reproduce (exp(1) is 2.7182818284590455 in
# Spark and 2.718281828459045 in C), and sjoin's runtime matches Spark exactly or not at all.
_FDLIBM = (
    "Spark computes it with java.lang.StrictMath (fdlibm), whose last bit sjoin's runtime "
    "does not reproduce yet; sqrt, signum, pmod, abs, round, floor and ceil are exact"
)
NOT_SUPPORTED: Final[dict[str, str]] = {
    **dict.fromkeys(
        ("exp", "expm1", "ln", "log", "log10", "log2", "log1p", "pow", "power", "cbrt",
         "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
         "degrees", "radians", "hypot"),
        _FDLIBM,
    ),
    **dict.fromkeys(
        ("size", "array", "array_contains", "explode", "map", "struct", "from_json",
         "to_json", "get_json_object", "named_struct"),
        "sjoin's types are scalars (and split()'s array, read with element_at)",
    ),
    **dict.fromkeys(
        ("to_timestamp", "from_unixtime", "date_add", "date_sub", "datediff",
         "add_months", "months_between", "last_day", "concat_ws", "replace", "instr", "locate",
         "initcap", "reverse", "repeat", "translate", "format_number", "format_string",
         "md5", "sha1", "sha2", "hash", "xxhash64", "crc32", "base64", "bround", "try_divide",
         "try_add", "try_element_at", "mod", "current_timestamp", "now"),
        "not yet supported by sjoin",
    ),
}  # fmt: skip


def lookup(name: str) -> Function | None:
    return FUNCTIONS.get(ALIASES.get(name, name))
