"""The Spark rules both engines run (``runtime/spark_rules.py``): each rule's own cases, and
each scalar rule held equal to its vectorised twin (``runtime/columnar/spark_rules_vec.py``)
over generated inputs."""

from __future__ import annotations

from typing import Literal

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sjoin.compiler.model import Bound
from sjoin.compiler.plan import StateRule
from sjoin.runtime.columnar.spark_rules_vec import (
    observed_max_ms_vec,
    stored_vec,
    watermark_passed_vec,
)
from sjoin.runtime.spark_rules import (
    Skipped,
    drop_late,
    evicted_rows_skipped,
    observed_max_ms,
    rows_removed,
    state_threshold_us,
    stored,
    watermark_passed,
)

_INT64 = st.integers(-(2**63), 2**63 - 1)
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
