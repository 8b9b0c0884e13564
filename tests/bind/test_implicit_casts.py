"""The casts the binder inserts where a STRING (or, without ANSI, a BOOLEAN in `=`) meets
another type, against every row of the table recorded from Spark 4.3.0
(``spark_implicit_casts.json``, written by ``record_implicit_casts.py``): the analyzed
expression Spark makes of ``a OP b`` with ``spark.sql.ansi.enabled`` on (sjoin's rule for a
Spark 4 target) and off (a Spark 3 target), and what ``number = string`` gives for strings
that cast, cast to the same number, or do not cast (a value, NULL, or the error) on both
engines' evaluator."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

import pytest
from sqlglot import exp

from sjoin.api import check_text
from sjoin.compiler import annotate
from sjoin.compiler import types as t
from sjoin.runtime.errors import QueryError
from sjoin.runtime.eval import Layout, compile_expr

from .record_implicit_casts import RECORDED

DATA = json.loads(RECORDED.read_text())

COLUMNS = {
    "INT": "c_int",
    "BIGINT": "c_bigint",
    "SMALLINT": "c_smallint",
    "DOUBLE": "c_double",
    "FLOAT": "c_float",
    "DECIMAL(10,2)": "c_dec",
    "BOOLEAN": "c_bool",
    "DATE": "c_date",
    "TIMESTAMP": "c_ts",
    "STRING": "c_str",
}
DECLARED = (
    "k BIGINT, t TIMESTAMP, c_int INT, c_bigint BIGINT, c_smallint SMALLINT, c_double DOUBLE, "
    "c_float FLOAT, c_dec DECIMAL(10, 2), c_bool BOOLEAN, c_date DATE, c_ts TIMESTAMP, "
    "c_str STRING"
)
FORMS = {
    "{a} IN ({b})": "{a} IN ({b})",
    "{a} BETWEEN {b} AND {b}": "{a} BETWEEN {b} AND {b}",
}
_SYMBOLS = {
    exp.EQ: "=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.Add: "+",
    exp.Sub: "-",
    exp.Mul: "*",
    exp.Div: "/",
}


def spark_text(node: exp.Expression) -> str:
    """A bound expression written as Spark prints an analyzed one (the left operand `a`,
    the right `b`; a BETWEEN as the comparisons it stands for)."""
    if isinstance(node, exp.Paren):
        return spark_text(node.this)
    if isinstance(node, exp.Column):
        return "a" if annotate.side(node) == "left" else "b"
    if isinstance(node, exp.Cast):
        kind = annotate.sql_type(node)
        assert kind is not None
        return f"cast({spark_text(node.this)} as {str(kind).lower().replace(' ', '')})"
    if isinstance(node, exp.NEQ):
        return f"NOT ({spark_text(node.this)} = {spark_text(node.expression)})"
    if isinstance(node, exp.In):
        items = ", ".join(spark_text(e) for e in node.expressions)
        return f"{spark_text(node.this)} IN ({items})"
    if isinstance(node, exp.Between):
        v, lo, hi = (spark_text(node.args[k]) for k in ("this", "low", "high"))
        return f"(({v} >= {lo}) AND ({v} <= {hi}))"
    symbol = _SYMBOLS[type(node)]
    return f"({spark_text(node.this)} {symbol} {spark_text(node.expression)})"


def bound(ansi: str, left: str, op: str, right: str) -> tuple[exp.Expression | None, list[str]]:
    """The planned expression of ``A.left OP B.right`` in a join's SELECT for a Spark 4.3
    (ANSI) or 3.5 (no ANSI) target, or None, with the codes of the errors."""
    a, b = f"A.{COLUMNS[left]}", f"B.{COLUMNS[right]}"
    text = FORMS[op].format(a=a, b=b) if op in FORMS else f"{a} {op} {b}"
    spec = (
        f"spark {'4.3' if ansi == 'true' else '3.5'}\n"
        f"stream x ({DECLARED}) watermark t delay 1 second\n"
        f"stream y ({DECLARED}) watermark t delay 1 second\n"
        f"join j = x AS A INNER JOIN y AS B ON A.k = B.k SELECT {text} AS out\n"
    )
    result = check_text(spec, "casts.sjoin")
    errors = [d.code for d in result.diagnostics if d.severity == "error"]
    if errors or result.plan is None:
        return None, errors
    return result.plan.joins[0].output[0].expr, errors


def _refused_by_contract(left: str, right: str) -> bool:
    """TIMESTAMP or DATE against a STRING: sjoin refuses it (E011 in a comparison, E012 in
    `-`; the language's contract: a typo would be NULL or fail the query), where Spark casts
    the STRING."""
    return {left, right} & {"TIMESTAMP", "DATE"} != set() and "STRING" in (left, right)


def _spark_type(name: str) -> str:
    return name.lower().replace(" ", "")


def _without_noop_casts(text: str, left: str, right: str) -> str:
    """``text`` without the casts of an operand to its own type, which IN writes
    (``cast(b as bigint)`` of a BIGINT ``b``)."""
    for operand, kind in (("a", left), ("b", right)):
        text = text.replace(f"cast({operand} as {_spark_type(kind)})", operand)
    return text


def _string_casts(text: str, left: str, right: str) -> list[str | None]:
    """The type each STRING operand is cast to first (None: not cast)."""
    found = []
    for operand, kind in (("a", left), ("b", right)):
        if kind == "STRING":
            cast = re.search(rf"cast\({operand} as ([a-z]+(?:\(\d+,\d+\))?)\)", text)
            found.append(cast.group(1) if cast else None)
    return found


def test_the_table_covers_the_grid() -> None:
    assert DATA["spark"].startswith("4.")
    assert {r[0] for r in DATA["rows"]} == {"true", "false"}
    assert len(DATA["rows"]) == 560
    assert len(DATA["values"]) == 110


@pytest.mark.parametrize(
    ("ansi", "left", "op", "right", "spark"), DATA["rows"], ids=lambda v: str(v)
)
def test_casts_are_sparks(ansi: str, left: str, op: str, right: str, spark: str) -> None:
    node, errors = bound(ansi, left, op, right)
    if spark.startswith("error: "):
        assert node is None and errors, f"Spark refuses it ({spark}); sjoin accepts it"
        return
    if _refused_by_contract(left, right):
        assert errors in (["E011"], ["E012"])
        return
    assert node is not None, f"Spark runs {spark}; sjoin says {errors}"
    mine = spark_text(node)
    if op == "/" and "STRING" in (left, right):
        # a quotient is DOUBLE: Spark casts each operand to DOUBLE after the promotion, and
        # the engines divide as DOUBLEs without that cast (plans keep their text): the STRING
        # operands are cast as Spark casts them first, and the result is Spark's DOUBLE
        assert _string_casts(mine, left, right) == _string_casts(spark, left, right)
        assert annotate.sql_type(node) == t.DOUBLE
    elif {left, right} & {"STRING", "BOOLEAN"}:
        assert mine == _without_noop_casts(spark, left, right)
    else:
        # two numbers (or a DATE and a TIMESTAMP): the engines compare and compute exactly
        # without the widening casts Spark writes, which sjoin leaves out so that plans
        # keep their text; the types are the decimal tables' (test_decimal_*)
        assert spark_text(node) == _uncast(spark)


def _uncast(text: str) -> str:
    """``text`` without its casts (``cast(cast(a as bigint) as double)`` is ``a``)."""
    while True:
        shorter = re.sub(r"cast\((\w+) as [a-z]+(?:\(\d+,\d+\))?\)", r"\1", text)
        if shorter == text:
            return text
        text = shorter


ONE = {"INT": 1, "BIGINT": 1, "DOUBLE": 1.0, "DECIMAL(10,2)": Decimal("1.00"), "BOOLEAN": True}
LAYOUT_COLUMNS = [
    (name, kind.split("(")[0].lower())
    for name, kind in (part.split(" ", 1) for part in re.split(r", (?=[a-z_]+ )", DECLARED))
]


def _equals(ansi: str, kind: str, text: str) -> Any:
    """``A.c = B.c_str`` with ``A.c`` the 1 (true) of ``kind`` and ``B.c_str`` = ``text``,
    planned for the target and run by the runtime's evaluator (which both engines run)."""
    node, errors = bound(ansi, kind, "=", "STRING")
    assert node is not None, errors
    layout = Layout.of(("left", LAYOUT_COLUMNS), ("right", LAYOUT_COLUMNS))
    test = compile_expr(node, layout, ansi=ansi == "true")
    names = [name for name, _ in LAYOUT_COLUMNS]
    left = tuple(ONE[kind] if n == COLUMNS[kind] else None for n in names)
    right = tuple(text if n == "c_str" else None for n in names)
    return test(left, right)


@pytest.mark.parametrize(("ansi", "kind", "text", "spark"), DATA["values"], ids=lambda v: str(v))
def test_values_are_sparks(ansi: str, kind: str, text: str, spark: str) -> None:
    """``1 = 'text'`` (``true = 'text'``) on the runtime's evaluator, as Spark gave it."""
    if spark.startswith("error: "):
        with pytest.raises(QueryError, match=spark.removeprefix("error: ")):
            _equals(ansi, kind, text)
        return
    assert repr(_equals(ansi, kind, text)) == spark
