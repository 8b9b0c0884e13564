"""sjoin's SQL types and durations.

Types are the few Spark SQL types the binder needs to judge expressions; durations are exact
integers of milliseconds, as Spark's watermarks are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from sqlglot import exp


@dataclass(frozen=True, slots=True)
class SqlType:
    """A Spark SQL type: ``name`` is canonical lower case, ``params`` e.g. (10, 2) for DECIMAL."""

    name: str
    params: tuple[int, ...] = ()

    def __copy__(self) -> SqlType:  # immutable: copies of typed expressions share it
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SqlType:
        return self

    def __str__(self) -> str:
        if self.params:
            return f"{self.name.upper()}({', '.join(map(str, self.params))})"
        return self.name.upper()

    @property
    def is_numeric(self) -> bool:
        return self.name in NUMERIC

    @property
    def is_temporal(self) -> bool:
        return self.name in ("timestamp", "date")

    def to_sqlglot(self) -> exp.DataType:
        return exp.DataType.build(str(self), dialect="spark")


NUMERIC: Final = ("tinyint", "smallint", "int", "bigint", "float", "double", "decimal")

BOOLEAN: Final = SqlType("boolean")
INT: Final = SqlType("int")
BIGINT: Final = SqlType("bigint")
DOUBLE: Final = SqlType("double")
STRING: Final = SqlType("string")
DATE: Final = SqlType("date")
TIMESTAMP: Final = SqlType("timestamp")
BINARY: Final = SqlType("binary")
INTERVAL: Final = SqlType("interval")  # a day-time interval (fixed length)
WINDOW: Final = SqlType("window")  # struct<start: timestamp, end: timestamp>
# approx_count_distinct's aggregation buffer: its HyperLogLog++ sketch, BIGINT words
SKETCH: Final = SqlType("sketch")
ARRAY_STRING: Final = SqlType("array<string>")  # split()'s result, read by element_at()
NULL: Final = SqlType("null")  # the type of the NULL literal: fits anywhere
UNKNOWN: Final = SqlType("unknown")  # after an error: fits anywhere, reports nothing more

# Spark SQL type names (and synonyms) -> canonical name, number of parameters allowed.
TYPE_NAMES: Final[dict[str, tuple[str, tuple[int, ...]]]] = {
    "boolean": ("boolean", (0,)),
    "bool": ("boolean", (0,)),
    "tinyint": ("tinyint", (0,)),
    "byte": ("tinyint", (0,)),
    "smallint": ("smallint", (0,)),
    "short": ("smallint", (0,)),
    "int": ("int", (0,)),
    "integer": ("int", (0,)),
    "bigint": ("bigint", (0,)),
    "long": ("bigint", (0,)),
    "float": ("float", (0,)),
    "real": ("float", (0,)),
    "double": ("double", (0,)),
    "decimal": ("decimal", (0, 1, 2)),
    "dec": ("decimal", (0, 1, 2)),
    "numeric": ("decimal", (0, 1, 2)),
    "string": ("string", (0,)),
    "varchar": ("string", (1,)),
    "char": ("string", (1,)),
    "date": ("date", (0,)),
    "timestamp": ("timestamp", (0,)),
    "timestamp_ltz": ("timestamp", (0,)),
    "binary": ("binary", (0,)),
}


def lookup_type(name: str, params: tuple[int, ...]) -> SqlType | None:
    """The SqlType for a declared type name, or None when unknown or badly parameterised."""
    entry = TYPE_NAMES.get(name.lower())
    if entry is None or len(params) not in entry[1]:
        return None
    canonical, _ = entry
    if canonical == "decimal":
        precision, scale = ((*params, 10, 0))[:2] if len(params) < 2 else params
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            return None
        return SqlType("decimal", (precision, scale))
    return SqlType(canonical)


MAX_DECIMAL_PRECISION: Final = 38


def decimal_bounded(precision: int, scale: int) -> SqlType:
    """Spark's ``DecimalType.bounded``: each of precision and scale capped at 38."""
    return SqlType(
        "decimal", (min(precision, MAX_DECIMAL_PRECISION), min(scale, MAX_DECIMAL_PRECISION))
    )


def sum_type(arg: SqlType) -> SqlType:
    """The type of ``sum(arg)`` (Spark's ``Sum.resultType``): BIGINT of an integer,
    DOUBLE of a floating number, DECIMAL(p + 10, s) of a DECIMAL(p, s), bounded to 38."""
    if arg.name == "decimal" and len(arg.params) == 2:
        return decimal_bounded(arg.params[0] + 10, arg.params[1])
    if arg.name in ("float", "double"):
        return DOUBLE
    if arg.name in ("tinyint", "smallint", "int", "bigint"):
        return BIGINT
    return arg  # NULL or UNKNOWN


def avg_type(arg: SqlType) -> SqlType:
    """The type of ``avg(arg)`` (Spark's ``Average.resultType``): DECIMAL(p + 4, s + 4) of
    a DECIMAL(p, s), bounded to 38; DOUBLE of any other number."""
    if arg.name == "decimal" and len(arg.params) == 2:
        return decimal_bounded(arg.params[0] + 4, arg.params[1] + 4)
    return DOUBLE


INTEGER_PRECISION: Final = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}
MIN_ADJUSTED_SCALE: Final = 6  # Spark's DecimalType.MINIMUM_ADJUSTED_SCALE


def adjust_precision_scale(precision: int, scale: int) -> SqlType:
    """Spark's ``DecimalType.adjustPrecisionScale`` (spark.sql.decimalOperations.
    allowPrecisionLoss, true by default): a DECIMAL of more than 38 digits keeps its integer
    digits and gives up scale, down to at least min(scale, 6) digits of it."""
    if precision <= MAX_DECIMAL_PRECISION:
        return SqlType("decimal", (precision, scale))
    int_digits = precision - scale
    min_scale = min(scale, MIN_ADJUSTED_SCALE)
    return SqlType(
        "decimal", (MAX_DECIMAL_PRECISION, max(MAX_DECIMAL_PRECISION - int_digits, min_scale))
    )


def _decimal_operand(arg: SqlType, literal_digits: int | None) -> tuple[int, int] | None:
    """(precision, scale) an operand takes part as in DECIMAL arithmetic (Spark's
    ``DecimalPrecision``): a DECIMAL its own; an integer literal DECIMAL(its digits, 0)
    (``DecimalType.fromLiteral``); another integer DECIMAL(10, 0) for INT, (20, 0) for
    BIGINT, (5, 0) for SMALLINT, (3, 0) for TINYINT."""
    if arg.name == "decimal" and len(arg.params) == 2:
        return arg.params[0], arg.params[1]
    if arg.name in INTEGER_PRECISION:
        if literal_digits is not None:
            return max(literal_digits, 1), 0
        return INTEGER_PRECISION[arg.name], 0
    return None


def arith_type(
    op: str,
    a: SqlType,
    b: SqlType,
    a_literal_digits: int | None = None,
    b_literal_digits: int | None = None,
) -> SqlType | None:
    """The type of ``a op b`` for numbers (op one of ``+ - * / %``), as Spark 3.4+/4.x types
    it, or None when an operand is not a number.  A DOUBLE or FLOAT operand makes a DOUBLE;
    integers give the wider integer, and a quotient of integers a DOUBLE; with a DECIMAL
    operand (an integer one taking part as ``_decimal_operand`` says; ``*_literal_digits``:
    the digits of an integer literal operand) the result is a DECIMAL:

    - ``+`` ``-``: (max(s1, s2) + max(p1 - s1, p2 - s2) + 1, max(s1, s2))
    - ``*``: (p1 + p2 + 1, s1 + s2)
    - ``/``: (p1 - s1 + s2 + max(6, s1 + p2 + 1), max(6, s1 + p2 + 1))
    - ``%``: (min(p1 - s1, p2 - s2) + max(s1, s2), max(s1, s2))

    each adjusted to at most 38 digits by ``adjust_precision_scale``.  Recorded from Spark
    in tests/compiler/binding/spark_decimal_arith.json."""
    if not (a.is_numeric and b.is_numeric):
        return None
    if {a.name, b.name} & {"float", "double"}:
        return DOUBLE
    if "decimal" not in (a.name, b.name):
        if op == "/":
            return DOUBLE
        return a if NUMERIC.index(a.name) >= NUMERIC.index(b.name) else b
    left, right = _decimal_operand(a, a_literal_digits), _decimal_operand(b, b_literal_digits)
    if left is None or right is None:
        return None
    (p1, s1), (p2, s2) = left, right
    if op in ("+", "-"):
        scale = max(s1, s2)
        return adjust_precision_scale(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op == "*":
        return adjust_precision_scale(p1 + p2 + 1, s1 + s2)
    if op == "/":
        scale = max(MIN_ADJUSTED_SCALE, s1 + p2 + 1)
        return adjust_precision_scale(p1 - s1 + s2 + scale, scale)
    if op == "%":
        scale = max(s1, s2)
        return adjust_precision_scale(min(p1 - s1, p2 - s2) + scale, scale)
    raise ValueError(f"not an arithmetic operator: {op!r}")


def literal_decimal(text: str) -> SqlType:
    """The DECIMAL type Spark gives a number literal with a point (``1.5``, ``0.05``):
    precision = its significant digits (leading zeros do not count), at least its scale."""
    whole, _, frac = text.partition(".")
    digits = (whole + frac).lstrip("0")
    return SqlType("decimal", (max(len(digits), len(frac), 1), len(frac)))


def wider_decimal_type(a: SqlType, b: SqlType) -> SqlType | None:
    """The DECIMAL two numbers, one at least a DECIMAL, are combined as (Spark's
    ``DecimalPrecision.widerDecimalType``): an integer taking part as DECIMAL(10, 0) for INT,
    (20, 0) BIGINT, (5, 0) SMALLINT, (3, 0) TINYINT (an integer literal too, by its type),
    scale = max(s1, s2), DECIMAL(max(p1 - s1, p2 - s2) + scale, scale); of more than 38
    digits it keeps its integer digits and gives up scale, down to 0
    (``DecimalType.boundedPreferIntegralDigits``, Spark 3.5+ unless
    spark.sql.legacy.decimal.retainFractionDigitsOnTruncate): DECIMAL(38, 10) with
    DECIMAL(38, 0) is DECIMAL(38, 0).  Recorded from Spark in
    tests/compiler/binding/spark_decimal_common.json.  None when an operand is not a DECIMAL or
    integer."""
    left, right = _decimal_operand(a, None), _decimal_operand(b, None)
    if left is None or right is None:
        return None
    (p1, s1), (p2, s2) = left, right
    scale = max(s1, s2)
    precision = max(p1 - s1, p2 - s2) + scale
    if precision <= MAX_DECIMAL_PRECISION:
        return SqlType("decimal", (precision, scale))
    return SqlType(
        "decimal", (MAX_DECIMAL_PRECISION, max(0, scale - (precision - MAX_DECIMAL_PRECISION)))
    )


def common_type(a: SqlType, b: SqlType) -> SqlType | None:
    """The type two operands are compared or combined as (a CASE's or coalesce's value, both
    sides of a comparison), or None when incompatible.  Two numbers with a DECIMAL among them
    widen to ``wider_decimal_type``."""
    if a == b or b in (NULL, UNKNOWN):
        return a
    if a in (NULL, UNKNOWN):
        return b
    if a.is_numeric and b.is_numeric:
        order = NUMERIC
        if "double" in (a.name, b.name) or "float" in (a.name, b.name):
            return DOUBLE
        if a.name == "decimal" or b.name == "decimal":
            wider = wider_decimal_type(a, b)  # None for a DECIMAL without its (p, s)
            return wider if wider is not None else (a if a.name == "decimal" else b)
        return a if order.index(a.name) >= order.index(b.name) else b
    if a.is_temporal and b.is_temporal:
        return TIMESTAMP
    return None


INTEGRAL: Final = ("tinyint", "smallint", "int", "bigint")
FLOAT: Final = SqlType("float")


def floating_common_type(kinds: Sequence[SqlType], ansi: bool) -> SqlType | None:
    """The floating type Spark compares numbers of ``kinds`` as, when one of them is a DOUBLE
    or a FLOAT and another is not of that type (None otherwise: integers and DECIMALs widen
    exactly, ``common_type``).  A DOUBLE makes DOUBLE.  A FLOAT makes FLOAT beside integers
    without ANSI (TypeCoercion.findTightestCommonType: the higher of the numeric
    precedence), DOUBLE with ANSI (AnsiTypeCoercion widens a FLOAT to DOUBLE) and beside a
    DECIMAL (DecimalPrecision: a DECIMAL meets a FLOAT or a DOUBLE as DOUBLE).  Recorded in
    tests/compiler/binding/spark_implicit_casts.json."""
    names = {k.name for k in kinds}
    if len(names) < 2 or not names & {"double", "float"}:
        return None
    if "double" in names or "decimal" in names or ansi:
        return DOUBLE
    return FLOAT


def widening_loses_exactness(kind: SqlType, target: SqlType) -> bool:
    """A value of ``kind`` cast to the floating ``target`` can become another number, so
    that distinct values compare equal: a BIGINT (past 2^53) or a DECIMAL of more than 15
    digits to DOUBLE; an INT or a BIGINT (past 2^24), a DECIMAL of more than 6 digits to
    FLOAT."""
    if kind.name == "decimal":
        digits = kind.params[0] if kind.params else MAX_DECIMAL_PRECISION
        return digits > (15 if target == DOUBLE else 6)
    if target == DOUBLE:
        return kind.name == "bigint"
    return kind.name in ("int", "bigint")


def string_promotion(
    a: SqlType, b: SqlType, ansi: bool, arithmetic: bool = False
) -> SqlType | None:
    """The type Spark casts both operands of a comparison (or, ``arithmetic``, of ``+ - * /``)
    to when exactly one of them is a STRING and the other a number or a BOOLEAN (an operand
    already of that type is not cast), or None when no such rule applies.

    - ANSI on (Spark 4's default; AnsiStringPromotionTypeCoercion.findWiderTypeForString):
      a STRING meets an integer as BIGINT (so INT = STRING casts both sides to BIGINT), a
      DOUBLE, FLOAT or DECIMAL as DOUBLE, a BOOLEAN as BOOLEAN.
    - ANSI off (Spark 3's default; TypeCoercion.findCommonTypeForBinaryComparison): the
      STRING is cast to the other side's type, but a DECIMAL with a scale meets it as DOUBLE
      (a DECIMAL(p, 0) is the type the STRING is cast to, as recorded on Spark 4.3); in
      arithmetic (PromoteStrings) the STRING is cast to DOUBLE.  (IN is another rule
      without ANSI: its operands are compared as STRINGs, ``Binder._promote_strings``.)

    TIMESTAMP and DATE against a STRING are refused by sjoin (E011: a typo would silently
    be NULL, or fail the query), so they have no rule here.  Recorded from Spark in
    tests/compiler/binding/spark_implicit_casts.json."""
    if (a == STRING) == (b == STRING):
        return None
    other = b if a == STRING else a
    if not (other.is_numeric or (other == BOOLEAN and not arithmetic)):
        return None
    if ansi:
        if other.name in INTEGRAL:
            return BIGINT
        if other.is_numeric:
            return DOUBLE
        return other
    if arithmetic or (other.name == "decimal" and (not other.params or other.params[-1] > 0)):
        return DOUBLE
    return other


# ---------------------------------------------------------------------------- durations

MS_PER_UNIT: Final[dict[str, int]] = {
    "ms": 1,
    "millisecond": 1,
    "milliseconds": 1,
    "second": 1000,
    "seconds": 1000,
    "sec": 1000,
    "secs": 1000,
    "minute": 60_000,
    "minutes": 60_000,
    "min": 60_000,
    "mins": 60_000,
    "hour": 3_600_000,
    "hours": 3_600_000,
    "day": 86_400_000,
    "days": 86_400_000,
    "week": 604_800_000,
    "weeks": 604_800_000,
}
VARIABLE_UNITS: Final = ("month", "months", "year", "years")
# The unit words Spark's SQL parser reads in an interval (SqlBaseParser's unitInMultiUnits,
# and IntervalUtils.stringToInterval in `INTERVAL '30 minutes'` and window() durations), by
# the unit sjoin reads for each of them.  sjoin's own short spellings (`ms`, `sec`, `secs`,
# `min`, `mins`) are none of them: Spark fails on `INTERVAL 30 MINS` with PARSE_SYNTAX_ERROR
# (checked on Spark 4.3, tests/integration/spark/test_interval_units.py), so generated SQL carries
# `spark_unit`'s word instead.
SPARK_UNITS: Final[dict[str, str]] = {
    "ms": "MILLISECONDS",
    "millisecond": "MILLISECOND",
    "milliseconds": "MILLISECONDS",
    "sec": "SECOND",
    "secs": "SECONDS",
    "second": "SECOND",
    "seconds": "SECONDS",
    "min": "MINUTE",
    "mins": "MINUTES",
    "minute": "MINUTE",
    "minutes": "MINUTES",
    "hour": "HOUR",
    "hours": "HOURS",
    "day": "DAY",
    "days": "DAYS",
    "week": "WEEK",
    "weeks": "WEEKS",
}
SPARK_UNIT_WORDS: Final = frozenset(w.lower() for w in SPARK_UNITS.values()) | frozenset(
    {"microsecond", "microseconds", "month", "months", "year", "years"}
)


def spark_unit(unit: str) -> str:
    """The word Spark's parser reads for a unit sjoin reads (``mins`` -> ``MINUTES``); a word
    sjoin does not read comes back upper-cased, as written."""
    return SPARK_UNITS.get(unit.lower(), unit.upper())


def exact_duration(us: int) -> tuple[int, str]:
    """A duration in microseconds as (amount, unit) in the largest unit that holds it
    exactly, the unit a word Spark's interval parser reads (``days`` ... ``microseconds``,
    singular for 1)."""
    for unit, size in (
        ("days", 86_400_000_000),
        ("hours", 3_600_000_000),
        ("minutes", 60_000_000),
        ("seconds", 1_000_000),
        ("milliseconds", 1000),
        ("microseconds", 1),
    ):
        if us % size == 0:
            n = us // size
            return n, unit[:-1] if n == 1 else unit
    raise AssertionError("unreachable")  # pragma: no cover - microseconds divide it


def spark_interval_problem(amount: str, unit: str) -> str | None:
    """Why Spark's parser refuses ``amount unit`` in an interval (None: it reads it): a unit
    word it does not know (sjoin's `mins`), or a fraction of any unit but seconds (Spark 4.3:
    INVALID_INTERVAL_FORMAT.INVALID_FRACTION, `minutes cannot have fractional part`)."""
    word = unit.lower()
    if word not in SPARK_UNIT_WORDS:
        return f"it reads no unit `{unit}`"
    if "." in amount and word not in ("second", "seconds"):
        return f"it reads a fraction only of seconds, not of {word}"
    return None


MAX_DURATION_DIGITS: Final = 12  # ~30,000 years in seconds; longer text is a mistake


def is_digits(text: str) -> bool:
    """``text`` is one or more of the ASCII digits 0-9, as Spark reads a number.  Every number
    a user writes (amounts, settings, versions) is checked with this (or ``is_number_text``)
    before ``int``: ``str.isdigit`` also takes ``²`` (which ``int`` rejects) and ``٣`` or the
    full-width 3 (which ``int`` reads as 3), and a regex's ``\\d`` takes every Unicode digit."""
    return text.isascii() and text.isdigit()


def is_number_text(text: str) -> bool:
    """``text`` is ASCII digits with at most one ``.`` between digits (``10``, ``1.5``)."""
    whole, dot, frac = text.partition(".")
    return is_digits(whole) and (not dot or is_digits(frac))


def duration_ms(amount: str, unit: str) -> int | None:
    """Milliseconds of ``amount unit`` (amount may be a decimal; sub-millisecond parts are
    truncated, as Spark's watermark delay keeps milliseconds), or None when the unit is
    unknown or the amount is not a number of at most MAX_DURATION_DIGITS digits."""
    per = MS_PER_UNIT.get(unit.lower())
    whole, _, frac = amount.partition(".")
    if (
        per is None
        or not is_number_text(amount)
        or len(whole) > MAX_DURATION_DIGITS
        or len(frac) > 9
    ):
        return None
    micros = int(whole) * per * 1000
    if frac:
        micros += int(frac) * per * 1000 // (10 ** len(frac))
    return micros // 1000


def format_ms(ms: int) -> str:
    """A duration as the shortest exact text, e.g. 3600001 -> '1 hour 1 millisecond'."""
    if ms == 0:
        return "0 ms"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    parts = []
    for unit, size in (
        ("day", 86_400_000),
        ("hour", 3_600_000),
        ("minute", 60_000),
        ("second", 1000),
        ("ms", 1),
    ):
        n, ms = divmod(ms, size)
        if n:
            parts.append(f"{n} {unit}" + ("s" if n > 1 and unit != "ms" else ""))
    return sign + " ".join(parts)


def multi_unit_micros(parts: Sequence[tuple[str, str]]) -> int | tuple[int, str]:
    """The microseconds of a multi-unit interval ``[(amount, unit), ...]`` (``3 MINUTES 30
    SECONDS``; an amount may carry a sign and a fraction), summed exactly as Spark's
    interval parser sums them; or (index of the part, why not) for a part that has no fixed
    length (months, years: E013) or is no amount of a unit sjoin reads."""
    total = 0
    for i, (amount, unit) in enumerate(parts):
        word = unit.lower()
        if word in VARIABLE_UNITS:
            return i, f"`{amount} {unit}` has no fixed length"
        per_ms = MS_PER_UNIT.get(word)
        sign, digits = (-1, amount[1:]) if amount[:1] == "-" else (1, amount.lstrip("+"))
        whole, _, frac = digits.partition(".")
        if word in ("microsecond", "microseconds") and is_digits(digits):
            if len(digits) > MAX_DURATION_DIGITS + 6:
                return i, f"`{amount}` has too many digits"
            total += sign * int(digits)
            continue
        if per_ms is None:
            return i, f"`{unit}` is no unit of a duration"
        if not is_number_text(digits) or len(whole) > MAX_DURATION_DIGITS or len(frac) > 9:
            return i, f"`{amount}` is no amount sjoin reads"
        micros = int(whole) * per_ms * 1000
        if frac:
            scaled = int(frac) * per_ms * 1000
            if scaled % 10 ** len(frac):
                return i, f"`{amount} {unit}` is no whole number of microseconds"
            micros += scaled // 10 ** len(frac)
        total += sign * micros
    return total
