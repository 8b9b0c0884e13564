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
from sjoin.compiler.vocabulary import annotate
from sjoin.compiler.vocabulary import types as t
from sjoin.runtime.engine.eval import Layout, compile_expr
from sjoin.runtime.errors import QueryError

from .record_implicit_casts import RECORDED

DATA = json.loads(RECORDED.read_text())

COLUMNS = {
    "INT": "c_int",
    "BIGINT": "c_bigint",
    "SMALLINT": "c_smallint",
    "DOUBLE": "c_double",
    "FLOAT": "c_float",
    "DECIMAL(10,2)": "c_dec",
    "DECIMAL(20,0)": "c_dec20",
    "BOOLEAN": "c_bool",
    "DATE": "c_date",
    "TIMESTAMP": "c_ts",
    "STRING": "c_str",
}
DECLARED = (
    "k BIGINT, t TIMESTAMP, c_int INT, c_bigint BIGINT, c_smallint SMALLINT, c_double DOUBLE, "
    "c_float FLOAT, c_dec DECIMAL(10, 2), c_dec20 DECIMAL(20, 0), c_bool BOOLEAN, c_date DATE, "
    "c_ts TIMESTAMP, c_str STRING"
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
    if isinstance(node, exp.Neg):
        return f"-{spark_text(node.this)}"
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
    assert len(DATA["rows"]) == 700
    assert len(DATA["values"]) == 110
    assert len(DATA["widened"]) == 12
    assert len(DATA["negated"]) == 22


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
    elif op in ARITHMETIC:
        # two numbers (or a DATE and a TIMESTAMP) in arithmetic: the engines compute as
        # Spark does without the widening casts Spark writes, which sjoin leaves out so that
        # plans keep their text; the types are the decimal tables' (test_decimal_*)
        assert spark_text(node) == _uncast(spark)
    else:
        # two numbers compared: sjoin writes Spark's cast of an integer or a DECIMAL to
        # DOUBLE or FLOAT (which changes which values are equal), and leaves out the exact
        # widenings (an integer to BIGINT or DECIMAL, a FLOAT to DOUBLE)
        assert spark_text(node) == _floating_casts_only(spark, left, right)


ARITHMETIC = ("+", "-", "*", "/")


def _floating_casts_only(text: str, left: str, right: str) -> str:
    """``text`` with only the casts of a non-floating operand to DOUBLE or FLOAT kept."""
    kinds = {"a": left, "b": right}
    cast = re.compile(r"cast\((\w+) as ([a-z]+(?:\(\d+,\d+\))?)\)")

    def keep(found: re.Match[str]) -> str:
        operand, kind = found.groups()
        floating = kind in ("double", "float")
        source = kinds.get(operand, "")
        if floating and source and source not in ("DOUBLE", "FLOAT"):
            return f"cast({operand} as {kind})"
        return operand

    while True:  # innermost casts first: a kept one is left as it is
        shorter = cast.sub(keep, text)
        if shorter == text:
            return text
        text = shorter


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


def _select(ansi: str, text: str) -> tuple[exp.Expression | None, list[Any]]:
    """The planned expression ``text`` in a join's SELECT for Spark 4.3 with
    `set ansi_enabled` from ``ansi``, or None, with the diagnostics."""
    spec = (
        f"spark 4.3\nset ansi_enabled = {ansi}\n"
        f"stream x ({DECLARED}) watermark t delay 1 second\n"
        f"stream y ({DECLARED}) watermark t delay 1 second\n"
        f"join j = x AS A INNER JOIN y AS B ON A.k = B.k SELECT {text} AS out\n"
    )
    result = check_text(spec, "casts.sjoin")
    if result.plan is None or any(d.severity == "error" for d in result.diagnostics):
        return None, list(result.diagnostics)
    return result.plan.joins[0].output[0].expr, list(result.diagnostics)


def _evaluate(node: exp.Expression, ansi: str, text: str | None = None) -> Any:
    layout = Layout.of(("left", LAYOUT_COLUMNS), ("right", LAYOUT_COLUMNS))
    test = compile_expr(node, layout, ansi=ansi == "true")
    names = [name for name, _ in LAYOUT_COLUMNS]
    row = tuple(text if n == "c_str" else None for n in names)
    return test(row, row)


@pytest.mark.parametrize(("ansi", "sql", "spark"), DATA["widened"], ids=lambda v: str(v))
def test_widened_comparisons_are_sparks(ansi: str, sql: str, spark: str) -> None:
    """Numbers compared as DOUBLE or FLOAT past its exact range (2^53 + 1 against 2^53.0):
    the cast sjoin writes makes the evaluator agree with Spark, and where the cast loses
    exactness W013 says so."""
    node, diags = _select(ansi, sql)
    assert node is not None, diags
    assert repr(_evaluate(node, ansi)) == spark
    lossy = ("BIGINT) = CAST" in sql and "DOUBLE" in sql) or "DECIMAL(20,0)" in sql
    lossy = lossy or ("INT) = CAST" in sql and "FLOAT" in sql and ansi == "false")
    assert ("W013" in [d.code for d in diags]) == lossy, [d.message for d in diags]


@pytest.mark.parametrize(("ansi", "kind", "text", "spark"), DATA["negated"], ids=lambda v: str(v))
def test_negation_is_sparks(ansi: str, kind: str, text: str | None, spark: str) -> None:
    """Unary minus (``text`` None: of a column of ``kind``, as Spark's analyzer writes it;
    else of a STRING holding ``text``, its value): Spark casts a STRING to DOUBLE with ANSI
    on and off, and a value that does not cast fails the query (ANSI) or is NULL; a
    BOOLEAN or a DATE it refuses."""
    node, diags = _select(ansi, f"-A.{COLUMNS[kind]}")
    if spark.startswith("error: ") and text is None:
        assert node is None and "E012" in [d.code for d in diags]
        return
    assert node is not None, [d.message for d in diags]
    if text is None:
        assert spark_text(node) == spark
        assert ("W013" in [d.code for d in diags]) == (kind == "STRING")
        return
    layout = Layout.of(("left", LAYOUT_COLUMNS), ("right", LAYOUT_COLUMNS))
    test = compile_expr(node, layout, ansi=ansi == "true")
    row = tuple(text if n == "c_str" else None for n, _ in LAYOUT_COLUMNS)
    if spark.startswith("error: "):
        with pytest.raises(QueryError, match=spark.removeprefix("error: ")):
            test(row, row)
        return
    assert repr(test(row, row)) == spark


def test_ansi_is_a_setting_that_wins_over_the_versions_default() -> None:
    """`set ansi_enabled = false` on Spark 4.3 binds STRING = BIGINT as Spark does without
    ANSI (the STRING to BIGINT alone, not both; a bad value is NULL, not an error), the plan
    says ANSI is off, and the generated job sets the conf."""
    from sjoin.compiler.backends.pyspark import compile_pyspark

    spec = (
        "spark 4.3\n"
        "stream o (id INT, t TIMESTAMP) watermark t delay 1 second\n"
        "stream p (ref STRING, t TIMESTAMP) watermark t delay 1 second\n"
        "join j = o INNER JOIN p ON o.id = p.ref AND p.t BETWEEN o.t AND o.t + INTERVAL 1 "
        "MINUTE SELECT o.id, p.ref\n"
        "set ansi_enabled = false\n"  # after the join: it still governs it
    )
    off, on = check_text(spec), check_text(spec.replace("set ansi_enabled = false\n", ""))
    assert off.plan is not None and on.plan is not None
    (key_off,), (key_on,) = off.plan.joins[0].keys, on.plan.joins[0].keys
    assert [e.sql(dialect="spark") for e in key_off] == ["o.id", "CAST(p.ref AS INT)"]
    assert [e.sql(dialect="spark") for e in key_on] == [
        "CAST(o.id AS BIGINT)",
        "CAST(p.ref AS BIGINT)",
    ]
    assert (off.plan.ansi, on.plan.ansi) == (False, True)
    assert off.plan.settings.ansi_enabled is False
    warning = next(d.message for d in off.diagnostics if d.code == "W013")
    assert "no ANSI, Spark 4.3" in warning and "is NULL" in warning
    job = compile_pyspark(off.plan, "casts.sjoin")
    conf = job[job.index("SPARK_CONF = {") : job.index("}", job.index("SPARK_CONF = {"))]
    assert '"spark.sql.ansi.enabled": "false"' in conf
    # a spec that leaves it alone: the job checks the cluster's value against the plan's
    assert '"spark.sql.ansi.enabled": ("true", "set ansi_enabled = true")' in compile_pyspark(
        on.plan, "casts.sjoin"
    )
    # a bad value: NULL without ANSI, the query's failure with it
    node = off.plan.joins[0].keys[0][1]
    layout = Layout.of(("right", [("ref", "string"), ("t", "timestamp")]))
    assert compile_expr(node, layout, ansi=False)(("x", None), None) is None
    with pytest.raises(QueryError, match="CAST_INVALID_INPUT"):
        compile_expr(on.plan.joins[0].keys[0][1], layout, ansi=True)(("x", None), None)


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_a_number_literal_beside_a_double_is_read_as_spark_folds_its_cast(ansi: str) -> None:
    """`d = 0.1` with `d` a DOUBLE: Spark analyzes it as `d = CAST(0.1 AS DOUBLE)` and folds
    the cast (checked on Spark 4.3: `(dbl = cast(0.1 as double))`), so the DOUBLE 0.1 equals
    it; sjoin keeps the literal's text and reads it as that DOUBLE (a DECIMAL 0.1 would not
    equal the DOUBLE 0.1 exactly), with no warning."""
    node, diags = _select(ansi, "A.c_double = 0.1 AND A.c_double > -(0.05)")
    assert node is not None, diags
    assert node.sql(dialect="spark") == "A.c_double = 0.1 AND A.c_double > -(0.05)"
    assert [d.code for d in diags if d.code == "W013"] == []
    layout = Layout.of(("left", LAYOUT_COLUMNS), ("right", LAYOUT_COLUMNS))
    row = tuple(0.1 if n == "c_double" else None for n, _ in LAYOUT_COLUMNS)
    assert compile_expr(node, layout, ansi=ansi == "true")(row, row) is True
