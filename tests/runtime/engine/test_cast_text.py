"""CAST of trace text to a number, as Spark 4.3 does it: which digits count (ASCII ones for
integers and doubles, every script's for decimals, as Java's BigDecimal reads them), what is
trimmed (U+0000 to U+0020, and U+007F for integers; not U+00A0 or U+2003), no `_` separators, and a
5000-digit string is out of range, not an internal error (Python's `int` stops at 4300
digits).  The table is Spark's: ``test_the_table_is_sparks`` checks it on real Spark."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest

from sjoin.runtime.errors import QueryError

from .test_eval import ev

N = None
TARGETS = ("INT", "BIGINT", "SMALLINT", "DOUBLE", "FLOAT", "DECIMAL(10,2)")
D = Decimal
# text -> Spark's try_cast to each of TARGETS (None: Spark cannot cast it)
CASTS: dict[str, tuple[Any, ...]] = {
    "5": (5, 5, 5, 5.0, 5.0, D("5.00")),
    "\u0663": (N, N, N, N, N, D("3.00")),  # ARABIC-INDIC DIGIT THREE
    "\u00b3": (N, N, N, N, N, N),  # SUPERSCRIPT THREE
    "\uff15": (N, N, N, N, N, D("5.00")),  # FULLWIDTH DIGIT FIVE
    " 5": (5, 5, 5, 5.0, 5.0, D("5.00")),
    "5 ": (5, 5, 5, 5.0, 5.0, D("5.00")),
    "\t5\n": (5, 5, 5, 5.0, 5.0, D("5.00")),
    "\x015": (5, 5, 5, 5.0, 5.0, D("5.00")),
    "5\x01": (5, 5, 5, 5.0, 5.0, D("5.00")),
    "5\x7f": (5, 5, 5, N, N, N),  # DELETE: trimmed for integers only
    "\x7f5": (5, 5, 5, N, N, N),
    " 5\x00": (5, 5, 5, 5.0, 5.0, D("5.00")),
    "\u00a05": (N, N, N, N, N, N),  # NO-BREAK SPACE
    "\u20035": (N, N, N, N, N, N),  # EM SPACE
    "\x855": (N, N, N, N, N, N),  # NEXT LINE
    "9" * 5000: (N, N, N, math.inf, math.inf, N),
    "-" + "9" * 5000: (N, N, N, -math.inf, -math.inf, N),
    "0" * 5000 + "7": (7, 7, 7, 7.0, 7.0, D("7.00")),
    "+5": (5, 5, 5, 5.0, 5.0, D("5.00")),
    "-0": (0, 0, 0, -0.0, -0.0, D("0.00")),
    "1_000": (N, N, N, N, N, N),
    "1e3": (N, N, N, 1000.0, 1000.0, D("1000.00")),
    "NaN": (N, N, N, math.nan, math.nan, N),
    "inf": (N, N, N, math.inf, math.inf, N),
    "5.": (N, N, N, 5.0, 5.0, D("5.00")),
    ".5": (N, N, N, 0.5, 0.5, D("0.50")),
    "0x10": (N, N, N, N, N, N),
    "": (N, N, N, N, N, N),
}


def same(got: Any, want: Any) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, float):
        return (
            isinstance(got, float)
            and got == want
            and math.copysign(1, got) == math.copysign(1, want)
        )
    return type(got) is type(want) and got == want


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("text", list(CASTS), ids=lambda t: repr(t[:6]) + f"x{len(t)}")
def test_the_runtime_casts_text_as_spark(text: str, target: str) -> None:
    """Spark 4 (ANSI): a value Spark casts comes out the same; one it cannot fails the query.
    Spark 3.5 (no ANSI): the same values, and NULL for the rest (``5.`` is 5 for integers)."""
    want = CASTS[text][TARGETS.index(target)]
    expression = f"CAST(A.s AS {target})"
    if want is None:
        with pytest.raises(QueryError):
            ev(expression, {"s": text})
    else:
        assert same(ev(expression, {"s": text}), want)
    old = ev(expression, {"s": text}, spark="3.5")
    if text == "5." and target in ("INT", "BIGINT", "SMALLINT"):
        assert old == 5  # without ANSI, Spark drops an integer's fraction
    else:
        assert (old is None) if want is None else same(old, want)


@pytest.mark.spark
def test_the_table_is_sparks(spark: Any) -> None:
    """Every row of CASTS, cast by Spark 4.3 itself (``try_cast``: NULL where the cast fails),
    in one query."""
    texts = list(CASTS)
    frame = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i INT, s STRING")
    columns = [f"try_cast(s AS {target}) AS c{n}" for n, target in enumerate(TARGETS)]
    rows = sorted(frame.selectExpr("i", *columns).collect())
    for row in rows:
        text = texts[row[0]]
        for n, want in enumerate(CASTS[text]):
            got = row[n + 1]
            if isinstance(want, float) and isinstance(got, float) and TARGETS[n] == "FLOAT":
                assert same(got, want) or (math.isinf(want) and math.isinf(got)), (text, n, got)
            else:
                assert (got is None and want is None) or same(got, want), (
                    repr(text),
                    TARGETS[n],
                    got,
                )
