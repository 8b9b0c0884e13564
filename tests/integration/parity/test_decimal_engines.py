"""DECIMAL on the columnar engine (issue 25): joins and aggregates over DECIMAL columns run
columnar and give the reference engine's rows, errors, JSON lines, Parquet files and
snapshots, over generated values (``runtime/columnar/decimals.py``, ``frames.py``); an
expression whose DECIMAL values the columnar form cannot hold exactly sends its operator,
and only it, to the reference operator with a reason that names the expression."""

from __future__ import annotations

import io
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from sjoin.compiler.planning.plan import Plan
from sjoin.runtime import run_to_files
from sjoin.runtime.columnar.aggregate import ColumnarAggregate
from sjoin.runtime.columnar.frames import json_chunks, to_frame, to_rows
from sjoin.runtime.engine.batches import Rows
from sjoin.runtime.engine.values import json_converter
from sjoin.runtime.errors import QueryError
from sjoin.runtime.io.output import output_line
from sjoin.runtime.operators import columns_of
from sjoin.runtime.query import ColumnarEngine
from sjoin.runtime.rows.aggregate import AggregateOperator

from .scenarios import records, ts
from .test_engines import _plan, assert_engines_agree, assert_runs_columnar

BIG = "9" * 37 + "0"  # a DECIMAL(38, 0) value two of which overflow a sum of DECIMAL(38, 0)

STREAMS = """spark {version}
stream l (k BIGINT, t TIMESTAMP, a DECIMAL(10, 2), c DECIMAL(38, 0)) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, b DECIMAL(10, 2), q DECIMAL(5, 3)) watermark t delay 10 seconds
"""
# a join on a DECIMAL key, with DECIMAL outputs whose scale the expression fixes, and an
# aggregate over it: grouped by a DECIMAL, every function of DECIMAL arguments
JOIN = """join j = l AS L {how} JOIN r AS R
  ON L.k = R.k AND L.a = R.b AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
    AND L.a + R.q > -1000
  SELECT L.k AS k, L.t AS t, L.a AS a, R.b AS b, L.c AS c, R.q AS q, L.a + R.b AS ab,
    L.a - 1.25 AS am, L.a * 3 AS a3, -L.a AS na, CAST(R.q AS DECIMAL(12, 4)) AS q4,
    L.a > 5 AS big, L.a * R.q AS aq, L.a / 3 AS a3d, L.a / (R.q + 100) AS aqd,
    L.a * 0.5 + R.q AS mix
"""
# Spark 3.5 (no ANSI) has no aggregate after a stream-stream join: the same functions over
# the stream itself
OVER_STREAM = """aggregate h = l AS L GROUP BY L.k, L.a
  SELECT L.k AS k, L.a AS a, sum(L.a) AS sa, avg(L.a) AS va, sum(L.c) AS sc, avg(L.c) AS vc,
    min(L.c) AS lc, max(L.a) AS ha, count(L.c) AS nc, approx_count_distinct(L.a) AS da
  OUTPUT MODE {mode}
"""
AGGREGATE = """aggregate g = j AS J GROUP BY J.k, J.a
  SELECT J.k AS k, J.a AS a, sum(J.a) AS sa, avg(J.a) AS va, sum(J.c) AS sc, avg(J.c) AS vc,
    avg(J.q) AS vq, min(J.q) AS lq, max(J.ab) AS hab, count(J.c) AS nc,
    approx_count_distinct(J.q4) AS dq
  OUTPUT MODE {mode}
"""


def spec(version: str = "4.3", how: str = "LEFT OUTER", mode: str = "update") -> str:
    text = STREAMS.format(version=version) + JOIN.format(how=how) + OVER_STREAM.format(mode=mode)
    if version != "3.5" and how == "INNER":  # the only join Spark 4 aggregates in update mode
        text += AGGREGATE.format(mode="update")
    return text


def _decimal(scale: int, digits: int) -> st.SearchStrategy[str]:
    whole = st.integers(-(10 ** (digits - scale)) + 1, 10 ** (digits - scale) - 1)
    frac = st.integers(0, 10**scale - 1)
    return st.builds(lambda w, f: f"{w}.{f:0{scale}d}" if scale else str(w), whole, frac)


_A = st.sampled_from(["0.00", "1.50", "-1.50", "2.25", "99999999.99"]) | _decimal(2, 10)
_C = st.sampled_from(["0", "1", BIG, "-" + BIG]) | _decimal(0, 38)
_Q = st.sampled_from(["0.000", "-0.001", "1.500"]) | _decimal(3, 5)


@st.composite
def batches(draw: st.DrawFn) -> list[dict[str, list[dict[str, Any]]]]:
    out = []
    for n in range(draw(st.integers(1, 4))):
        base = n * 8
        keys = st.integers(1, 3)
        left = [
            {
                "k": draw(keys),
                "t": ts(base + draw(st.integers(0, 6))),
                "a": draw(st.none() | _A),
                "c": draw(st.none() | _C),
            }
            for _ in range(draw(st.integers(0, 4)))
        ]
        # right rows whose b is a left row's a, so that the DECIMAL key matches
        right = [
            {
                "k": draw(keys),
                "t": ts(base + draw(st.integers(0, 9))),
                "b": draw(st.sampled_from([x["a"] for x in left]) if left else _A),
                "q": draw(st.none() | _Q),
            }
            for _ in range(draw(st.integers(0, 4)))
        ]
        out.append({"l": left, "r": right})
    return out


def _parquet(plan: Plan, trace: Any, engine: Any, directory: Path) -> Any:
    """Each Parquet file the run writes, read back (or the error the run stops with)."""
    out = directory / f"{engine}.parquet.d"
    try:
        run_to_files(
            plan,
            trace,
            output=out,
            output_format="parquet",
            engine=engine,
            stderr=io.StringIO(),
        )
    except Exception as err:  # the same error on both engines
        return ("error", type(err).__name__, str(err))
    return {
        str(path.relative_to(out)): (pl.read_parquet(path).schema, pl.read_parquet(path).rows())
        for path in sorted(out.rglob("*.parquet"))
    }


@settings(
    max_examples=int(os.environ.get("SJOIN_ENGINE_CASES", "25")),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    data=batches(),
    version=st.sampled_from(["4.3", "3.5"]),  # ANSI on (4.x) and off (3.5)
    how=st.sampled_from(["INNER", "LEFT OUTER"]),
    mode=st.sampled_from(["update", "complete"]),
)
def test_generated_decimals_agree_on_both_engines(
    data: Any, version: str, how: str, mode: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    text = spec(version, how, mode)
    note(text)
    note(repr(data))
    plan = _plan(text)
    assert_runs_columnar(plan, None, {})
    trace = records(data)
    tmp = tmp_path_factory.mktemp("decimals")
    assert_engines_agree(plan, trace, None, tmp)
    assert _parquet(plan, trace, "columnar", tmp) == _parquet(plan, trace, "reference", tmp)


def test_a_sum_that_overflows_is_the_same_error_or_null_on_both_engines(tmp_path: Path) -> None:
    """Two DECIMAL(38, 0) values of 38 digits overflow a sum (and an avg) of DECIMAL(38, 0):
    ARITHMETIC_OVERFLOW with ANSI (4.x), NULL for good without (3.5), on either engine."""
    left = [{"k": 1, "t": ts(0), "a": "1.00", "c": BIG} for _ in range(2)]
    data = [
        {"l": left, "r": [{"k": 1, "t": ts(1), "b": "1.00", "q": "0.500"}]},
        {"l": [{"k": 1, "t": ts(2), "a": "1.00", "c": "-" + BIG}], "r": []},
    ]
    for version in ("4.3", "3.5"):
        plan = _plan(spec(version, "INNER"))
        assert_runs_columnar(plan, None, {})
        (tmp_path / version).mkdir()
        assert_engines_agree(plan, records(data), None, tmp_path / version)
    rows, error = _run(_plan(spec("3.5", "INNER")), records(data))
    assert error is None
    by_batch = [r for r in rows if r["relation"] == "h"]
    assert [(r["row"]["sc"], r["row"]["vc"]) for r in by_batch] == [(None, None), (None, None)]
    _, error = _run(_plan(spec("4.3", "INNER")), records(data))
    assert error is not None and "ARITHMETIC_OVERFLOW" in error


def _run(plan: Plan, trace: Any) -> tuple[list[dict[str, Any]], str | None]:
    import json

    from sjoin.runtime import RunError, run

    try:
        result = run(plan, trace, engine="columnar")
    except RunError as err:
        return [], str(err)
    return [json.loads(line) for line in result.output_lines()], None


# ------------------------------------------------------------------ what is not columnar

FALLBACK = (
    STREAMS.format(version="4.3")
    + """join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, {select} AS x
"""
)


@pytest.mark.parametrize(
    ("select", "reason"),
    [
        ("L.a", None),
        ("L.a + R.b", None),
        ("L.a - 1.25", None),
        ("L.a * 3", None),
        ("-L.a", None),
        ("CAST(R.q AS DECIMAL(12, 4))", None),
        ("L.a > R.q", None),
        ("CAST(L.a AS DOUBLE)", None),
        ("floor(L.a)", None),
        # arithmetic is rounded to its type's scale (types.arith_type, as Spark's)
        ("L.a * R.q", None),
        ("L.a / R.b", None),
        ("L.a % R.q", None),
        ("L.c * L.c", None),  # DECIMAL(38, 0): NULL or an error when it overflows
        # a value that is one of its arguments: each cast to the call's (widened) type
        ("coalesce(L.a, R.q)", None),
        ("nvl(L.a, R.q)", None),
        ("if(L.k > 0, L.a, R.q)", None),
        ("greatest(L.a, R.q)", None),
        ("least(L.a, 2)", None),
        # results that keep each value's own scale
        ("round(L.a, 1)", "does not derive the scale"),
        ("abs(L.a)", "does not derive the scale"),
        ("CASE WHEN L.k > 0 THEN L.a ELSE R.q END", None),  # each branch cast to the type
    ],
)
def test_an_unfixed_decimal_output_sends_its_join_to_the_reference(
    select: str, reason: str | None
) -> None:
    plan = _plan(FALLBACK.format(select=select))
    fallbacks = ColumnarEngine(plan, None).fallbacks
    if reason is None:
        assert fallbacks == {}
    else:
        assert reason in fallbacks["j"], fallbacks


def test_decimal_keys_of_two_scales_are_not_columnar() -> None:
    text = (
        STREAMS.format(version="4.3")
        + """join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.a = R.q AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
  SELECT L.k AS k
"""
    )
    fallbacks = ColumnarEngine(_plan(text), None).fallbacks
    assert "DECIMAL keys of one scale" in fallbacks["j"]


def test_an_aggregate_over_an_unfixed_relation_falls_back_too() -> None:
    """The aggregate reads `j`, whose `x` holds DECIMALs of another scale than its type's:
    its rows could not become a Decimal column exactly, so it names `j`'s output."""
    text = FALLBACK.format(select="abs(L.a)") + (
        "aggregate g = j AS J GROUP BY J.k SELECT J.k AS k, sum(J.x) AS s OUTPUT MODE update\n"
    )
    fallbacks = ColumnarEngine(_plan(text), None).fallbacks
    assert set(fallbacks) == {"j", "g"}
    assert fallbacks["g"].startswith("it reads `j`'s output `x`")


# ------------------------------------------------------------------ columns and snapshots


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(
    scale=st.integers(0, 38),
    values=st.lists(st.none() | st.integers(-(10**38) + 1, 10**38 - 1), max_size=12),
)
def test_decimal_columns_hold_and_write_the_reference_values(
    scale: int, values: list[int | None]
) -> None:
    """Values at a column's scale cross to a Decimal(38, s) column and back unchanged, and
    its JSON lines are the reference writer's, byte for byte."""
    from sjoin.compiler.vocabulary.types import SqlType

    kind = SqlType("decimal", (38, scale))
    rows = [(None if v is None else Decimal(v).scaleb(-scale, _CONTEXT),) for v in values]
    frame = to_frame(rows, [kind])
    back = to_rows(frame)
    assert [repr(r) for r in back] == [repr(r) for r in rows]
    got = b"".join(json_chunks(frame, 3, "j", [("d", "decimal")])).decode()
    convert = json_converter("decimal")
    expected = "".join(
        output_line(3, "j", {"d": v if v is None or convert is None else convert(v)}) + "\n"
        for (v,) in rows
    )
    assert got == expected


_CONTEXT = __import__("decimal").Context(prec=100)


def test_aggregate_snapshots_with_an_overflowed_sum_resume_on_either_engine() -> None:
    text = (
        "spark 3.5\nstream s (k BIGINT, t TIMESTAMP, c DECIMAL(38, 0), a DECIMAL(6, 2)) "
        "watermark t delay 10 seconds\naggregate g = s AS S GROUP BY S.k SELECT S.k AS k, "
        "sum(S.c) AS sc, avg(S.a) AS va, min(S.a) AS la OUTPUT MODE update\n"
    )
    plan = _plan(text)
    (node,) = plan.aggregates
    source = plan.node("s")
    assert source is not None
    columns = columns_of(source)
    ref = AggregateOperator(node, columns, plan.ansi)
    col = ColumnarAggregate(node, columns, plan.ansi)
    big = Decimal(BIG)
    rows = [
        (1, 0, big, Decimal("1.25")),
        (1, 0, big, Decimal("2.00")),
        (2, 0, Decimal(5), None),
        (3, 0, None, Decimal("-0.01")),
    ]
    expected, _ = ref.process(rows, None, None)
    got, _ = col.process(Rows(rows), None, None)
    assert repr(got.to_rows()) == repr(expected)
    assert expected[0][1] is None  # overflowed: NULL without ANSI
    assert repr(col.snapshot()) == repr(ref.snapshot())
    snapshot = col.snapshot()
    assert snapshot["groups"][0][1][0][0].is_nan()  # kept overflowed, for good
    for first in (ref, col):
        data = first.snapshot()
        fresh_ref = AggregateOperator(node, columns, plan.ansi)
        fresh_col = ColumnarAggregate(node, columns, plan.ansi)
        fresh_ref.restore(data)
        fresh_col.restore(data)
        more = [(1, 0, Decimal("-" + BIG), Decimal("0.01")), (2, 0, Decimal(1), Decimal("3.33"))]
        a, _ = fresh_ref.process(more, None, None)
        b, _ = fresh_col.process(Rows(more), None, None)
        assert repr(b.to_rows()) == repr(a)
        assert a[0][1] is None  # still overflowed, though the total is back in range
        assert repr(fresh_col.snapshot()) == repr(fresh_ref.snapshot())


def test_ansi_overflow_is_raised_when_the_group_is_output() -> None:
    plan = _plan(
        "spark 4.3\nstream s (k BIGINT, t TIMESTAMP, c DECIMAL(38, 0)) "
        "watermark t delay 10 seconds\naggregate g = s AS S GROUP BY S.k SELECT S.k AS k, "
        "sum(S.c) AS sc OUTPUT MODE update\n"
    )
    (node,) = plan.aggregates
    source = plan.node("s")
    assert source is not None
    columns = columns_of(source)
    rows = [(1, 0, Decimal(BIG)), (1, 0, Decimal(BIG))]
    errors = []
    for op in (
        AggregateOperator(node, columns, plan.ansi),
        ColumnarAggregate(node, columns, plan.ansi),
    ):
        with pytest.raises(QueryError) as err:
            op.process(rows if isinstance(op, AggregateOperator) else Rows(rows), None, None)
        errors.append(str(err.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("[ARITHMETIC_OVERFLOW] Overflow in sum of decimals")
