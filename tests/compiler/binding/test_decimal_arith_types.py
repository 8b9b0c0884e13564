"""The binder's types of arithmetic on numbers (``compiler.types.arith_type``) against every
row of the table recorded from Spark (``spark_decimal_arith.json``, written by
``record_decimal_arith.py`` on local Spark 4.3.0), and the binder using it on a spec."""

from __future__ import annotations

import json
import re

import pytest

from sjoin.compiler.binding.bind import SYMBOLS
from sjoin.compiler.vocabulary import types as t

from .record_decimal_arith import OPERANDS, RECORDED

DATA = json.loads(RECORDED.read_text())


def _operand(name: str) -> tuple[t.SqlType, int | None]:
    """The type sjoin's binder gives an operand of the table, and its digits when it is an
    integer literal."""
    if name.startswith("literal "):
        text = name.removeprefix("literal ")
        if "." in text:
            return t.literal_decimal(text), None
        return (t.INT if int(text) <= 2**31 - 1 else t.BIGINT), len(text)
    found = re.fullmatch(r"(\w+)(?:\((\d+),(\d+)\))?", name)
    assert found is not None
    params = tuple(int(p) for p in found.groups()[1:] if p is not None)
    sql_type = t.lookup_type(found.group(1), params)
    assert sql_type is not None
    return sql_type, None


def test_the_table_covers_the_grid() -> None:
    assert DATA["spark"].startswith("4.")
    assert DATA["allowPrecisionLoss"] == "true"
    assert len(DATA["rows"]) == 1535
    assert {r[1] for r in DATA["rows"]} == {"+", "-", "*", "/", "%"}
    assert set(OPERANDS) == {r[0] for r in DATA["rows"]}


@pytest.mark.parametrize("name", [n for n in DATA["literals"]])
def test_literal_types(name: str) -> None:
    sql_type, _ = _operand(name)
    assert str(sql_type).lower().replace(" ", "") == DATA["literals"][name]


@pytest.mark.parametrize(
    ("left", "op", "right", "spark"), [tuple(r) for r in DATA["rows"]], ids=lambda v: str(v)
)
def test_arith_type_is_sparks(left: str, op: str, right: str, spark: str) -> None:
    (a, da), (b, db) = _operand(left), _operand(right)
    got = t.arith_type(op, a, b, da, db)
    assert got is not None
    assert str(got).lower().replace(" ", "") == spark


@pytest.mark.parametrize(
    ("precision", "scale", "expected"),
    [(38, 10, (38, 10)), (39, 10, (38, 9)), (50, 20, (38, 8)), (60, 4, (38, 4)), (77, 38, (38, 6))],
)
def test_adjust_precision_scale(precision: int, scale: int, expected: tuple[int, int]) -> None:
    assert t.adjust_precision_scale(precision, scale).params == expected


def test_every_operator_symbol_is_typed() -> None:
    for symbol in SYMBOLS.values():
        assert t.arith_type(symbol, t.SqlType("decimal", (12, 2)), t.INT) is not None
    with pytest.raises(ValueError):
        t.arith_type("^", t.SqlType("decimal", (12, 2)), t.INT)


SPEC = (
    "stream a (k BIGINT, t TIMESTAMP, amount DECIMAL(12, 2), n INT) watermark t delay 10 seconds\n"
    "stream b (k BIGINT, t TIMESTAMP, price DECIMAL(38, 10), qty BIGINT, w DOUBLE) "
    "watermark t delay 10 seconds\n"
)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("a.amount * b.price", "DECIMAL(38, 6)"),
        ("a.amount / b.qty", "DECIMAL(33, 23)"),
        ("a.amount + 1", "DECIMAL(13, 2)"),
        ("a.amount * -2", "DECIMAL(14, 2)"),
        ("a.amount * (20)", "DECIMAL(15, 2)"),
        ("a.amount / 3", "DECIMAL(16, 6)"),
        ("a.amount - 0.05", "DECIMAL(13, 2)"),
        ("a.amount * 0.05", "DECIMAL(15, 4)"),
        ("a.amount % a.n", "DECIMAL(12, 2)"),
        ("a.amount + b.w", "DOUBLE"),
        ("a.n / b.qty", "DOUBLE"),
        ("a.n * b.qty", "BIGINT"),
        ("a.n + 1", "INT"),
        ("(a.amount + b.price) * 2", "DECIMAL(38, 7)"),
    ],
)
def test_the_binder_types_arithmetic_as_spark(expression: str, expected: str) -> None:
    from sjoin.api import check_text
    from sjoin.compiler.binding.bound import Join

    result = check_text(
        SPEC + f"join j = a JOIN b ON a.k = b.k AND a.t >= b.t - INTERVAL 5 SECONDS "
        f"SELECT {expression} AS x",
        "t.sjoin",
    )
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert not errors, [f"{d.code} {d.message}" for d in errors]
    assert result.bound is not None
    j = result.bound.relation("j")
    assert isinstance(j, Join)
    assert str(j.columns[0].type) == expected
