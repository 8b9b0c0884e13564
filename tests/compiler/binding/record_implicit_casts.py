"""Re-record ``spark_implicit_casts.json``: the casts Spark's analyzer inserts where a
comparison or an arithmetic operator meets a STRING and another type (and, for reference,
two numbers of different types), with ``spark.sql.ansi.enabled`` on (Spark 4's default:
AnsiTypeCoercion, AnsiStringPromotionTypeCoercion) and off (Spark 3's default: TypeCoercion,
PromoteStrings and findCommonTypeForBinaryComparison); and what a comparison of a number with
strings that cast, cast differently or do not cast at all gives (a value, or the error).
Also numbers of different types (Spark's numeric widening: ``NUMBER_PAIRS``, and what a
comparison that widens to a floating type gives past that type's exact range: ``WIDENED``),
and unary minus of each type (``NEGATED``) with the values of ``-'text'``.

    .venv/bin/python -m tests.compiler.binding.record_implicit_casts

Each expression is read from the analyzed plan of ``SELECT <expr> FROM v`` over a view whose
columns ``a`` and ``b`` have the operand types (attribute ids dropped).
``test_implicit_casts.py`` checks the binder's casts against every row.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).with_name("spark_implicit_casts.json")

# operand type -> a value of it
TYPES: dict[str, str] = {
    "INT": "CAST(1 AS INT)",
    "BIGINT": "CAST(1 AS BIGINT)",
    "SMALLINT": "CAST(1 AS SMALLINT)",
    "DOUBLE": "CAST(1 AS DOUBLE)",
    "FLOAT": "CAST(1 AS FLOAT)",
    "DECIMAL(10,2)": "CAST(1 AS DECIMAL(10,2))",
    "DECIMAL(20,0)": "CAST(1 AS DECIMAL(20,0))",
    "BOOLEAN": "true",
    "DATE": "DATE '2026-01-01'",
    "TIMESTAMP": "TIMESTAMP '2026-01-01 00:00:00'",
    "STRING": "'1'",
}
NUMBER_PAIRS = (
    ("INT", "BIGINT"),
    ("INT", "DOUBLE"),
    ("BIGINT", "DOUBLE"),
    ("BIGINT", "DECIMAL(10,2)"),
    ("DECIMAL(10,2)", "DOUBLE"),
    ("INT", "FLOAT"),
    ("BIGINT", "FLOAT"),
    ("SMALLINT", "DOUBLE"),
    ("DECIMAL(10,2)", "FLOAT"),
    ("DECIMAL(20,0)", "DOUBLE"),
    ("DOUBLE", "FLOAT"),
)
# comparisons that widen to DOUBLE or FLOAT, with values past the floating type's exact
# range (or not exactly held by it): equal or not after the cast
WIDENED = (
    "CAST(9007199254740993 AS BIGINT) = CAST(9007199254740992 AS DOUBLE)",
    "CAST(9007199254740993 AS BIGINT) = CAST(9007199254740992 AS BIGINT)",
    "CAST(0.10 AS DECIMAL(10,2)) = CAST(0.1 AS DOUBLE)",
    "CAST(16777217 AS INT) = CAST(16777216 AS FLOAT)",
    "CAST(16777217 AS INT) = CAST(16777216 AS DOUBLE)",
    "CAST(12345678901234567891 AS DECIMAL(20,0)) = CAST(12345678901234567890 AS DOUBLE)",
)
# unary minus of each type, and of these strings
NEGATED = ("STRING", "INT", "DECIMAL(10,2)", "BOOLEAN", "DATE")
NEGATED_STRINGS = ("5", " 5 ", "1.5", "1e3", "x", "")
# pairs that are no string promotion: which Spark refuses, which it casts
OTHER_PAIRS = (
    ("BOOLEAN", "INT"),
    ("BIGINT", "DATE"),
    ("TIMESTAMP", "BIGINT"),
    ("DATE", "TIMESTAMP"),
)
# (`<=>`, sjoin's since the shared expression grammar, is not recorded here)
COMPARISONS = ("=", "<>", "<", ">=")
ARITHMETIC = ("+", "-", "*", "/")
# forms beside the binary operators: `{a}` and `{b}` are the operands
FORMS = ("{a} IN ({b})", "{a} BETWEEN {b} AND {b}")
# strings compared with the number 1 of each type (and `true`): which match, which do not
# cast (NULL without ANSI, an error with it)
STRINGS = ("1", "01", " 1 ", "1.0", "1.5", "1e0", "+1", "abc", "", "true", "99999999999")
VALUE_TYPES = ("INT", "BIGINT", "DOUBLE", "DECIMAL(10,2)", "BOOLEAN")


def _pairs() -> list[tuple[str, str]]:
    others = [t for t in TYPES if t != "STRING"]
    return [
        *(("STRING", t) for t in others),
        *((t, "STRING") for t in others),
        *NUMBER_PAIRS,
        *OTHER_PAIRS,
    ]


def _analyzed(spark: Any, expr: str) -> str:
    """The analyzed expression of ``expr``: attribute ids and the alias dropped; a BETWEEN
    (Spark 4: a RuntimeReplaceable ``between(a, b, c)``) as the comparisons it stands for."""
    plan = spark.sql(f"SELECT {expr} AS r FROM v")._jdf.queryExecution().analyzed()
    node = plan.expressions().head().child()
    text = str(node.toString())
    if node.getClass().getSimpleName() == "Between":
        text = str(node.replacement().toString())
    return readable(re.sub(r"#\d+L?", "", text))


_COMMON = re.compile(
    r"^with\((.*), commonexpressiondef\((\w+), CommonExpressionId\((\d+),false\)\)\)$"
)


def readable(text: str) -> str:
    """Spark 4's BETWEEN replacement ``with(... commonexpressionref(id, type, nullable) ...,
    commonexpressiondef(a, id))`` with each reference written as the operand it names."""
    found = _COMMON.match(text)
    if found is None:
        return text
    body, operand, number = found.groups()
    ref = re.compile(
        rf"commonexpressionref\(CommonExpressionId\({number},false\), [^,()]+(?:\([0-9,]+\))?, "
        r"(?:true|false)\)"
    )
    return ref.sub(operand, body)


def _try(spark: Any, sql: str, analyzed: bool) -> str:
    """The analyzed expression (or the value) of ``sql``, or ``error: CLASS``."""
    try:
        if analyzed:
            return _analyzed(spark, sql)
        return repr(spark.sql(f"SELECT {sql}").collect()[0][0])
    except Exception as err:  # every Spark failure is the row's result
        found = re.search(r"\[([A-Z_]+)(?:\.[A-Z_]+)?\]", str(err))
        return "error: " + (found.group(1) if found else type(err).__name__)


def main() -> None:
    from sjoin.jvm.spark_driver import get_spark

    spark = get_spark("record-implicit-casts", quiet=True)
    rows: list[list[str]] = []
    values: list[list[str]] = []
    widened: list[list[str]] = []
    negated: list[list[str | None]] = []
    for ansi in ("true", "false"):
        spark.conf.set("spark.sql.ansi.enabled", ansi)
        for left, right in _pairs():
            spark.sql(f"SELECT {TYPES[left]} AS a, {TYPES[right]} AS b").createOrReplaceTempView(
                "v"
            )
            for op in (*COMPARISONS, *ARITHMETIC):
                rows.append([ansi, left, op, right, _try(spark, f"a {op} b", True)])
            for form in FORMS:
                rows.append([ansi, left, form, right, _try(spark, form.format(a="a", b="b"), True)])
        for kind in VALUE_TYPES:
            for text in STRINGS:
                literal = "'" + text.replace("'", "''") + "'"
                spark.sql(f"SELECT {TYPES[kind]} AS a, {literal} AS b").createOrReplaceTempView("v")
                values.append([ansi, kind, text, _try(spark, "a = b FROM v", False)])
        for sql in WIDENED:
            widened.append([ansi, sql, _try(spark, sql, False)])
        for kind in NEGATED:
            spark.sql(f"SELECT {TYPES[kind]} AS a").createOrReplaceTempView("v")
            negated.append([ansi, kind, None, _try(spark, "-a", True)])
        for text in NEGATED_STRINGS:
            literal = "'" + text.replace("'", "''") + "'"
            negated.append([ansi, "STRING", text, _try(spark, f"-{literal}", False)])
    spark.conf.unset("spark.sql.ansi.enabled")
    RECORDED.write_text(
        json.dumps(
            {
                "spark": spark.version,
                "rows": rows,
                "values": values,
                "widened": widened,
                "negated": negated,
            },
            indent=1,
        )
        + "\n"
    )
    print(
        f"{len(rows)} rows, {len(values)} values, {len(widened)} widenings and {len(negated)} "
        f"negations recorded from Spark {spark.version}"
    )


if __name__ == "__main__":
    main()
