"""The Spark rules both engines run (``runtime/engine/spark_rules.py``): each rule's own cases, and
each scalar rule held equal to its vectorised twin (``runtime/columnar/spark_rules_vec.py``)
over generated inputs."""

from __future__ import annotations

import math
from decimal import Context, Decimal
from typing import Any, Literal

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sjoin.compiler.planning.plan import StateRule
from sjoin.compiler.planning.planner import evicted_rows_skipped
from sjoin.compiler.vocabulary.model import Bound
from sjoin.runtime.columnar.spark_rules_vec import (
    bigint_overflows_vec,
    bigint_wrapped_vec,
    decimal_sum_vec,
    double_sum_vec,
    float_max_vec,
    float_min_vec,
    in_eviction_order_vec,
    observed_max_ms_vec,
    stored_vec,
    watermark_passed_vec,
)
from sjoin.runtime.engine.index import EvictionIndex
from sjoin.runtime.engine.spark_rules import (
    DECIMAL_OVERFLOW,
    Skipped,
    bigint_adder,
    bigint_overflows,
    bigint_wrapped,
    decimal_adder,
    decimal_average,
    decimal_result,
    double_add,
    drop_late,
    eviction_order,
    max_step,
    min_step,
    observed_max_ms,
    rows_removed,
    state_threshold_us,
    stored,
    watermark_passed,
)
from sjoin.runtime.errors import QueryError

_INT64 = st.integers(-(2**63), 2**63 - 1)
_EXACT = Context(prec=200)
_TIMES = st.one_of(
    _INT64,
    st.integers(-5_000, 5_000),  # around 0: the floor of negative times
    st.sampled_from([0, -1, 999, 1_000, -999, -1_000, -1_001, 1_767_225_600_000_000]),
)

# ------------------------------------------------------------------ 1. state threshold

_KEY = StateRule("key", column="t", offset_ms=0, key_index=0)
_VALUE = StateRule(
    "value",
    column="t",
    offset_ms=-10_001,
    bounds=(Bound(1, -10_000_000.0, False, "a"), Bound(1, -5_000_000.0, True, "b")),
)
_NEVER = StateRule("never", reason="no watermark on the other side")


@pytest.mark.parametrize(
    ("rule", "evict_ms", "expected"),
    [
        (_KEY, None, None),  # no watermark yet: nothing is evicted
        (_VALUE, None, None),
        (_NEVER, None, None),
        (_NEVER, 60_000, None),  # a side that is never evicted
        (_KEY, 0, 0),
        (_KEY, 60_000, 60_000_000),  # the key watermark is the eviction watermark, in µs
        (_VALUE, 60_000, 49_999_000),  # the smallest bound: 60 s - 10 s - 1 ms (not strict)
        (_VALUE, 0, -10_001_000),
    ],
)
def test_state_threshold_is_the_side_state_watermark_in_us(
    rule: StateRule, evict_ms: int | None, expected: int | None
) -> None:
    assert state_threshold_us(rule, evict_ms) == expected


# ------------------------------------------------------------------ 2. watermark observation


@pytest.mark.parametrize(
    ("times", "expected"),
    [
        ([], None),  # no rows: nothing observed
        ([None], 0),  # a NULL time reads as 0
        ([None, -5_000_000], 0),  # ... so it can be the maximum
        ([None, 100_999_999], 100_999),  # floored to ms
        ([-1], -1),  # floored, not truncated: -1 µs is in ms -1
        ([-1_000], -1),
        ([-1_001], -2),
        ([3_000, 2_999_999, 7], 2_999),
    ],
)
def test_observed_max_ms(times: list[int | None], expected: int | None) -> None:
    assert observed_max_ms(times) == expected
    assert observed_max_ms_vec(pl.Series(times, dtype=pl.Int64)) == expected


@given(st.lists(st.one_of(st.none(), _TIMES), max_size=30))
def test_observed_max_ms_vec_is_observed_max_ms(times: list[int | None]) -> None:
    assert observed_max_ms_vec(pl.Series(times, dtype=pl.Int64)) == observed_max_ms(times)


# ------------------------------------------------------------------ 3. the late-row test


@pytest.mark.parametrize(
    ("t", "watermark", "expected"),
    [
        (None, 0, False),  # a NULL time is never late (nor evicted)
        (None, -(2**63), False),
        (5_000, 5_000, True),  # at the watermark: passed
        (4_999, 5_000, True),
        (5_001, 5_000, False),
        (-1, 0, True),
    ],
)
def test_watermark_passed(t: int | None, watermark: int, expected: bool) -> None:
    assert watermark_passed(t, watermark) is expected
    frame = pl.DataFrame({"t": pl.Series([t], dtype=pl.Int64)})
    assert frame.select(watermark_passed_vec(pl.col("t"), watermark)).item() is expected


@given(st.lists(st.one_of(st.none(), _TIMES), max_size=30), _TIMES)
def test_watermark_passed_vec_is_watermark_passed(times: list[int | None], watermark: int) -> None:
    frame = pl.DataFrame({"t": pl.Series(times, dtype=pl.Int64)})
    vec = frame.select(watermark_passed_vec(pl.col("t"), watermark)).to_series().to_list()
    assert vec == [watermark_passed(t, watermark) for t in times]


@given(st.lists(st.one_of(st.none(), _TIMES), max_size=30), _TIMES)
def test_drop_late_keeps_the_rows_the_watermark_has_not_passed(
    times: list[int | None], watermark: int
) -> None:
    rows = [(t, i) for i, t in enumerate(times)]
    kept, dropped = drop_late(rows, lambda row: row[0], watermark)
    assert kept == [r for r in rows if not watermark_passed(r[0], watermark)]
    assert dropped == len(rows) - len(kept)


# ------------------------------------------------------------------ 4. append rule, removals


@pytest.mark.parametrize(
    ("append_rule", "side", "preserved", "expected"),
    [
        # before SPARK-49829: no row this batch evicts is stored, on either side
        (False, "left", False, "all"),
        (False, "left", True, "all"),
        (False, "right", False, "all"),
        (False, "right", True, "all"),
        # after: a left row is always stored; a right row unless it is preserved and unmatched
        (True, "left", False, "none"),
        (True, "left", True, "none"),
        (True, "right", False, "all"),
        (True, "right", True, "matched"),
    ],
)
def test_evicted_rows_skipped_is_the_append_rule(
    append_rule: bool, side: Literal["left", "right"], preserved: bool, expected: Skipped
) -> None:
    assert evicted_rows_skipped(append_rule, side, preserved) == expected


def test_stored_by_policy() -> None:
    table = {
        (skipped, passed, matched): stored(skipped, passed, matched)
        for skipped in ("none", "matched", "all")
        for passed in (False, True)
        for matched in (False, True)
    }
    assert [k for k, v in table.items() if not v] == [
        ("matched", True, True),  # an outer side's row that matched: no outer row to emit
        ("all", True, False),
        ("all", True, True),
    ]


@given(
    st.sampled_from(["none", "matched", "all"]),
    st.lists(st.tuples(st.booleans(), st.booleans()), max_size=20),
)
def test_stored_vec_is_stored(skipped: Skipped, flags: list[tuple[bool, bool]]) -> None:
    frame = pl.DataFrame(
        {
            "passed": pl.Series([p for p, _ in flags], dtype=pl.Boolean),
            "matched": pl.Series([m for _, m in flags], dtype=pl.Boolean),
        }
    )
    # (with_columns: a literal, the "none" policy's, is one value per row)
    got = frame.with_columns(stored_vec(skipped, pl.col("passed"), pl.col("matched")).alias("s"))
    assert got.get_column("s").to_list() == [stored(skipped, p, m) for p, m in flags]


@pytest.mark.parametrize(
    ("count_all", "expected"),
    [(False, 3), (True, 7)],  # 4.3+ counts an outer side's evictions
)
def test_rows_removed(count_all: bool, expected: int) -> None:
    assert rows_removed(3, 4, count_all) == expected


# ------------------------------------------------------------------ 5. aggregate arithmetic


def _fold(step: Any, values: list[Any]) -> Any:
    """The reference's accumulation: NULLs skipped, the state NULL until the first value."""
    state = None
    for v in values:
        if v is not None:
            state = step(state, v)
    return state


def _vec(expr: Any, values: list[Any], dtype: Any) -> Any:
    return pl.DataFrame({"v": pl.Series(values, dtype=dtype)}).select(expr(pl.col("v"))).item()


def _same_float(a: float | None, b: float | None) -> bool:
    """Equal as Spark shows them: NaN is NaN, and -0.0 is not 0.0."""
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


_DOUBLES = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, -1.0, 1e308]),
)


@pytest.mark.parametrize(
    ("values", "smallest", "largest"),
    [
        ([0.0, -0.0], 0.0, 0.0),  # equal values: the first stays
        ([-0.0, 0.0], -0.0, -0.0),
        ([math.nan, 1.0], 1.0, math.nan),  # NaN is above every number
        ([math.nan, math.inf], math.inf, math.nan),
        ([math.nan], math.nan, math.nan),
        ([None, None], None, None),
    ],
)
def test_nan_ordering(values: list[Any], smallest: Any, largest: Any) -> None:
    assert _same_float(_fold(min_step, values), smallest)
    assert _same_float(_fold(max_step, values), largest)
    assert _same_float(_vec(float_min_vec, values, pl.Float64), smallest)
    assert _same_float(_vec(float_max_vec, values, pl.Float64), largest)


@given(st.lists(_DOUBLES, max_size=12))
def test_float_min_max_vec_are_the_folds(values: list[float | None]) -> None:
    assert _same_float(_vec(float_min_vec, values, pl.Float64), _fold(min_step, values))
    assert _same_float(_vec(float_max_vec, values, pl.Float64), _fold(max_step, values))


@pytest.mark.parametrize(
    ("values", "total"),
    [([-0.0], 0.0), ([-0.0, -0.0], 0.0), ([-0.0, 0.0], 0.0), ([0.0, -0.0], 0.0), ([], None)],
)
def test_negative_zero_sums(values: list[float], total: float | None) -> None:
    assert _same_float(_fold(double_add, values), total)
    if values:  # (a group without values never reaches the twin: its state stays NULL)
        assert _same_float(_vec(double_sum_vec, values, pl.Float64), total)


@given(st.lists(_DOUBLES, max_size=12).filter(lambda vs: any(v is not None for v in vs)))
def test_double_sum_vec_is_the_fold(values: list[float | None]) -> None:
    assert _same_float(_vec(double_sum_vec, values, pl.Float64), _fold(double_add, values))


@pytest.mark.parametrize(
    ("total", "overflows", "wrapped"),
    [
        (2**63 - 1, False, 2**63 - 1),
        (2**63, True, -(2**63)),
        (-(2**63), False, -(2**63)),
        (-(2**63) - 1, True, 2**63 - 1),
        (2**64 + 5, True, 5),
    ],
)
def test_bigint_overflow_and_wraparound(total: int, overflows: bool, wrapped: int) -> None:
    assert bigint_overflows(total) is overflows
    assert bigint_wrapped(total) == wrapped
    frame = pl.DataFrame({"t": pl.Series([total], dtype=pl.Int128)})
    assert frame.select(bigint_overflows_vec(pl.col("t"))).item() is overflows
    assert frame.select(bigint_wrapped_vec(pl.col("t"))).item() == wrapped


_BIGINTS = st.one_of(
    st.none(),
    _INT64,
    st.sampled_from([2**63 - 1, -(2**63), 1, -1, 0, 2**62]),
)


@given(st.lists(_BIGINTS, max_size=12), st.booleans())
def test_bigint_sum_vec_is_the_fold(values: list[int | None], ansi: bool) -> None:
    """The columnar sum (Int128 prefix sums: the first overflowing row in ANSI mode, else the
    wrapped total) against ``bigint_adder``'s step folded row by row."""
    first_overflow: int | None = None
    state: int | None = None
    add = bigint_adder(ansi, "sum")
    for i, v in enumerate(values):
        if v is None:
            continue
        try:
            state = v if state is None else add(state, v)
        except QueryError as error:
            assert error.error_class == "ARITHMETIC_OVERFLOW"
            first_overflow = i
            break
    frame = pl.DataFrame({"v": pl.Series(values, dtype=pl.Int64)}).with_row_index("_row")
    cs = pl.col("v").cast(pl.Int128).cum_sum()
    got = frame.select(
        bigint_wrapped_vec(cs.drop_nulls().last()).alias("total"),
        pl.col("_row").filter(bigint_overflows_vec(cs)).min().alias("first"),
    ).row(0)
    if ansi:
        assert got[1] == first_overflow
        if first_overflow is None:
            assert got[0] == state
    else:
        assert first_overflow is None
        assert got[0] == state


# ------------------------------------------------------------------ the order of evicted rows


def test_eviction_order_is_by_time_then_id() -> None:
    assert eviction_order([5, 3, 5, 3], [1, 9, 0, 2]) == [3, 1, 2, 0]


@given(
    st.lists(
        st.tuples(st.integers(-5, 5), st.integers(0, 1_000)), max_size=40, unique_by=lambda e: e[1]
    )
)
def test_in_eviction_order_vec_is_eviction_order(entries: list[tuple[int, int]]) -> None:
    times, idents = [t for t, _ in entries], [i for _, i in entries]
    frame = pl.DataFrame({"_t": times, "_id": idents}, schema={"_t": pl.Int64, "_id": pl.Int64})
    expected = [idents[i] for i in eviction_order(times, idents)]
    assert in_eviction_order_vec(frame, "_t", "_id").get_column("_id").to_list() == expected


@given(
    st.lists(
        st.lists(st.integers(0, 20), max_size=8),  # the times each batch stores
        max_size=6,
    ),
    st.lists(st.integers(-1, 25), max_size=6),  # a threshold after each batch
)
def test_the_index_pops_in_eviction_order_across_runs(
    batches: list[list[int]], thresholds: list[int]
) -> None:
    """However the stored entries fall into runs (one per batch that stores between two
    evictions), what the index pops in a batch is in ``eviction_order``: the order depends
    only on the entries, as a restored checkpoint (one run) has them."""
    index, ident = EvictionIndex(), 0
    for times, threshold in zip(batches, thresholds + [-1] * len(batches), strict=False):
        for t in times:
            index.add(t, ident, ident)
            ident += 1
        popped, _, _ = index.pop_upto(threshold)
        pairs = sorted((t, i) for i, t in enumerate(t for times in batches for t in times))
        time_of = dict((i, t) for t, i in pairs)
        times_popped = [time_of[i] for i in popped]
        assert popped == [popped[i] for i in eviction_order(times_popped, popped)]


# ------------------------------------------------------------------ DECIMAL sums

_PRECISIONS = st.sampled_from([(38, 0), (38, 2), (16, 2), (12, 4), (1, 0)])


@st.composite
def _decimal_values(draw: st.DrawFn) -> tuple[int, int, list[int | None]]:
    """A sum's DECIMAL(precision, scale) and values (unscaled) of its argument's type,
    DECIMAL(precision - 10, scale) bounded as ``types.sum_type`` makes it the other way."""
    precision, scale = draw(_PRECISIONS)
    bound = 10 ** min(38, max(precision - 10, 1)) - 1
    values = draw(
        st.lists(
            st.none() | st.integers(-bound, bound) | st.sampled_from([bound, -bound, 0]),
            max_size=10,
        )
    )
    return precision, scale, values


@given(_decimal_values(), st.booleans())
def test_decimal_sum_vec_is_the_fold(
    found: tuple[int, int, list[int | None]], before: bool
) -> None:
    """The columnar DECIMAL sum (Int128 prefix sums, a flag once a prefix leaves the sum's
    type) against ``decimal_adder`` folded row by row, from a group already overflowed or
    not; an overflowed group's result is NULL or ARITHMETIC_OVERFLOW alike."""
    precision, scale, values = found
    add = decimal_adder(precision, scale)
    state: Decimal | None = DECIMAL_OVERFLOW if before else None
    for v in values:
        if v is not None:
            state = add(state, Decimal(v).scaleb(-scale, _EXACT))
    frame = pl.DataFrame({"v": pl.Series(values, dtype=pl.Int128)})
    gone, total = decimal_sum_vec(pl.col("v"), pl.lit(before), precision)
    got_gone, got_total = frame.select(gone.alias("g"), total.alias("t")).row(0)
    assert got_gone == (state is not None and state.is_nan())
    if not got_gone:
        expected = None if state is None else int(state.scaleb(scale, _EXACT))
        assert got_total == expected
    else:
        assert got_total is None
        assert state is not None
        assert decimal_result(state, precision, scale, ansi=False, call="sum") is None
        with pytest.raises(QueryError, match="ARITHMETIC_OVERFLOW"):
            decimal_result(state, precision, scale, ansi=True, call="sum")


@pytest.mark.parametrize(
    ("total", "count", "scale", "expected"),
    [
        (Decimal("1.00"), 3, 6, Decimal("0.333333")),
        (Decimal("2.00"), 3, 6, Decimal("0.666667")),  # HALF_UP
        (Decimal("-2.00"), 3, 6, Decimal("-0.666667")),  # away from zero
        (Decimal("-0.00"), 3, 6, Decimal("0.000000")),  # no negative zero
        (Decimal("0.05"), 2, 2, Decimal("0.03")),
    ],
)
def test_decimal_average_rounds_half_up_to_its_scale(
    total: Decimal, count: int, scale: int, expected: Decimal
) -> None:
    got = decimal_average(total, count, scale)
    assert repr(got) == repr(expected)
