"""The type of a value that is one of two numbers with a DECIMAL among them
(``compiler.types.common_type``, Spark's ``DecimalPrecision.widerDecimalType``) against every
row of the table recorded from Spark (``spark_decimal_common.json``, written by
``record_decimal_common.py`` on local Spark 4.3.0), and the binder using it on a spec."""

from __future__ import annotations

import json
import re

import pytest

from sjoin.compiler.vocabulary import types as t

from .record_decimal_common import FORMS, OPERANDS, RECORDED

DATA = json.loads(RECORDED.read_text())


def _operand(name: str) -> t.SqlType:
    """The type sjoin's binder gives an operand of the table (an integer literal: INT)."""
    if name.startswith("literal "):
        return t.INT
    found = re.fullmatch(r"(\w+)(?:\((\d+),(\d+)\))?", name)
    assert found is not None
    params = tuple(int(p) for p in found.groups()[1:] if p is not None)
    sql_type = t.lookup_type(found.group(1), params)
    assert sql_type is not None
    return sql_type


def test_the_table_covers_the_grid() -> None:
    assert DATA["spark"].startswith("4.")
    assert len(DATA["rows"]) == 130
    assert {r[0] for r in DATA["rows"]} == set(FORMS)
    assert set(OPERANDS) == {r[1] for r in DATA["rows"]}


@pytest.mark.parametrize(
    ("form", "left", "right", "spark"), [tuple(r) for r in DATA["rows"]], ids=lambda v: str(v)
)
def test_common_type_is_sparks(form: str, left: str, right: str, spark: str) -> None:
    got = t.common_type(_operand(left), _operand(right))
    assert got is not None
    assert str(got).lower().replace(" ", "") == spark


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((38, 10), (38, 0), (38, 0)),  # integer digits kept, scale given up to 0
        ((38, 38), (38, 0), (38, 0)),
        ((30, 20), (30, 5), (38, 13)),  # 25 integer digits + 20 of scale: 7 over
        ((20, 10), (15, 5), (20, 10)),
    ],
)
def test_wider_decimal_type_keeps_integer_digits(
    a: tuple[int, int], b: tuple[int, int], expected: tuple[int, int]
) -> None:
    got = t.wider_decimal_type(t.SqlType("decimal", a), t.SqlType("decimal", b))
    assert got is not None and got.params == expected
    assert t.wider_decimal_type(t.SqlType("decimal", a), t.DOUBLE) is None


SPEC = (
    "stream a (k BIGINT, t TIMESTAMP, amount DECIMAL(12, 2), n INT) watermark t delay 10 seconds\n"
    "stream b (k BIGINT, t TIMESTAMP, rate DECIMAL(10, 4), price DECIMAL(38, 10), qty BIGINT, "
    "w DOUBLE) watermark t delay 10 seconds\n"
)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("CASE WHEN a.n > 0 THEN a.amount ELSE b.rate END", "DECIMAL(14, 4)"),
        ("CASE WHEN a.n > 0 THEN b.rate WHEN a.n < 0 THEN a.amount END", "DECIMAL(14, 4)"),
        ("CASE a.n WHEN 1 THEN a.amount ELSE b.qty END", "DECIMAL(22, 2)"),
        ("coalesce(a.amount, b.rate)", "DECIMAL(14, 4)"),
        ("coalesce(b.rate, a.n)", "DECIMAL(14, 4)"),
        ("coalesce(a.amount, 2)", "DECIMAL(12, 2)"),
        ("coalesce(b.price, a.amount)", "DECIMAL(38, 10)"),
        ("if(a.n > 0, a.amount, b.rate)", "DECIMAL(14, 4)"),
        ("greatest(a.amount, b.rate)", "DECIMAL(14, 4)"),
        ("coalesce(a.amount, b.w)", "DOUBLE"),
        ("CASE WHEN a.n > 0 THEN a.amount ELSE NULL END", "DECIMAL(12, 2)"),
    ],
)
def test_the_binder_widens_a_value_of_decimals(expression: str, expected: str) -> None:
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
