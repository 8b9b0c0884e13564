"""The columnar aggregate (``runtime/columnar/aggregate.py``) against the reference operator
(``runtime/rows/aggregate.py``): the same rows in the same order, the same metrics and errors,
batch by batch, and checkpoints that either engine resumes."""

from __future__ import annotations

import math
import os
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from sjoin.api import check_text
from sjoin.compiler.planning.plan import Plan
from sjoin.runtime.columnar.aggregate import ColumnarAggregate
from sjoin.runtime.columnar.support import aggregate_unsupported as unsupported
from sjoin.runtime.engine.batches import Frame, Rows
from sjoin.runtime.errors import QueryError
from sjoin.runtime.operators import columns_of
from sjoin.runtime.query import ColumnarEngine
from sjoin.runtime.rows.aggregate import AggregateOperator

from ..harness import plan_of

COLUMNS = "k STRING, g BIGINT, t TIMESTAMP, x DOUBLE, i BIGINT, b BOOLEAN, d DECIMAL(6, 2)"
STREAM = f"spark 4.3\nstream s ({COLUMNS}) watermark t delay 10 seconds\n"
WINDOW = "window(S.t, INTERVAL 10 SECONDS)"
SECOND = 1_000_000


def spec(select: str, group_by: str, mode: str, ansi: bool = True) -> str:
    head = STREAM if ansi else STREAM.replace("spark 4.3", "spark 3.5", 1)  # ANSI off before 4
    return head + f"aggregate a = s AS S GROUP BY {group_by} SELECT {select} OUTPUT MODE {mode}\n"


def both(text: str) -> tuple[AggregateOperator, ColumnarAggregate]:
    plan = plan_of(text)
    (node,) = plan.aggregates
    source = plan.node("s")
    assert source is not None
    columns = columns_of(source)
    assert unsupported(node, columns, plan.ansi) is None
    return (
        AggregateOperator(node, columns, plan.ansi),
        ColumnarAggregate(node, columns, plan.ansi),
    )


def srow(
    k: Any = "a",
    seconds: float | None = 1,
    x: float | None = None,
    i: int | None = None,
    g: int | None = 0,
    b: bool | None = None,
) -> tuple[Any, ...]:
    t = None if seconds is None else int(seconds * SECOND)
    return (k, g, t, x, i, b, None)


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and 0.0 different from -0.0 (as JSON writes them)."""
    return repr(a) == repr(b)


def step(
    ref: AggregateOperator,
    col: ColumnarAggregate,
    rows: list[tuple[Any, ...]],
    late: int | None,
    evict: int | None,
) -> list[tuple[Any, ...]]:
    """One batch on both operators; they must agree (rows in order, metrics, error)."""
    try:
        expected, m1 = ref.process(rows, late, evict)
    except QueryError as err:
        with pytest.raises(QueryError) as got:
            col.process(Frame(pl.DataFrame(rows, schema=SCHEMA, orient="row")), late, evict)
        assert str(got.value) == str(err)
        raise
    out, m2 = col.process(Frame(pl.DataFrame(rows, schema=SCHEMA, orient="row")), late, evict)
    assert same(out.to_rows(), expected)
    assert m1 == m2
    return expected


SCHEMA = {
    "c0": pl.String,
    "c1": pl.Int64,
    "c2": pl.Int64,
    "c3": pl.Float64,
    "c4": pl.Int64,
    "c5": pl.Boolean,
    "c6": pl.String,  # the DECIMAL column, always NULL here (no aggregate reads it)
}


# ------------------------------------------------------------------------------ modes


@pytest.mark.parametrize("mode", ["append", "update", "complete"])
def test_modes_emit_the_reference_rows_in_its_order(mode: str) -> None:
    ref, col = both(spec(f"{WINDOW} AS w, S.k AS k, count(*) AS n", f"{WINDOW}, S.k", mode))
    batches = [
        ([srow("b", 101), srow("a", 102), srow("b", 115), srow("c", 95)], 0, 0),
        ([srow("a", 121), srow("z", 103), srow("a", 104)], 0, 100_000),
        ([srow("c", 131)], 100_000, 120_000),
        ([], 120_000, 200_000),
    ]
    seen = [step(ref, col, rows, late, evict) for rows, late, evict in batches]
    assert any(seen)


def test_update_mode_emits_in_first_update_order() -> None:
    ref, col = both(spec("S.k AS k, count(*) AS n", "S.k", "update"))
    out = step(ref, col, [srow("b"), srow("a"), srow("b"), srow("c")], None, None)
    assert [r[0] for r in out] == ["b", "a", "c"]
    out = step(ref, col, [srow("c"), srow("b")], None, None)
    assert out == [("c", 2), ("b", 3)]


def test_complete_mode_emits_in_group_insertion_order() -> None:
    ref, col = both(spec("S.k AS k, count(*) AS n", "S.k", "complete"))
    step(ref, col, [srow("b"), srow("a")], None, None)
    out = step(ref, col, [srow("c"), srow("a")], None, None)
    assert [r[0] for r in out] == ["b", "a", "c"]


# ------------------------------------------------------------------------------ functions


def test_each_function_with_nulls() -> None:
    select = (
        "S.k AS k, count(*) AS n, count(S.x) AS nx, sum(S.x) AS sx, avg(S.x) AS ax, "
        "min(S.x) AS lo, max(S.x) AS hi, sum(S.i) AS si, avg(S.i) AS ai, min(S.i) AS li, "
        "max(S.k) AS hk, min(S.b) AS lb, approx_count_distinct(S.i) AS di, "
        "approx_count_distinct(S.k) AS dk"
    )
    ref, col = both(spec(select, "S.k", "update"))
    step(
        ref,
        col,
        [
            srow("a", x=1.5, i=3),
            srow("a", x=None, i=None, b=True),
            srow(None, x=2.0, i=4, b=False),
            srow("a", x=float("nan"), i=3),
            srow("b"),
        ],
        None,
        None,
    )
    out = step(ref, col, [srow("b", x=0.25, i=-1), srow("a", x=-0.0, i=7)], None, None)
    assert out[0][1:4] == (2, 1, 0.25)


def test_double_sums_add_in_row_order() -> None:
    ref, col = both(spec("S.k AS k, sum(S.x) AS s, avg(S.x) AS m", "S.k", "update"))
    step(ref, col, [srow(x=1e16), srow(x=1.0), srow(x=1.0), srow(x=-1e16)], None, None)
    out = step(ref, col, [srow(x=1.0)] * 3 + [srow(x=0.1)], None, None)
    assert out[0][1] == ((((1e16 + 1.0 + 1.0 - 1e16) + 1.0) + 1.0) + 1.0) + 0.1


def test_min_max_keep_the_first_zero_and_order_nan_last() -> None:
    ref, col = both(spec("S.k AS k, min(S.x) AS lo, max(S.x) AS hi", "S.k", "update"))
    nan = float("nan")
    out = step(ref, col, [srow(x=nan), srow(x=-0.0), srow(x=0.0)], None, None)
    assert repr(out[0][1]) == "-0.0" and math.isnan(out[0][2])
    out = step(ref, col, [srow("b", x=0.0), srow("b", x=-0.0), srow("c", x=nan)], None, None)
    assert repr(out[0][1]) == "0.0" and repr(out[0][2]) == "0.0" and math.isnan(out[1][1])


# ------------------------------------------------------------------------------ watermarks


def test_late_keys_are_dropped_and_counted_once_per_key() -> None:
    ref, col = both(spec(f"{WINDOW} AS w, count(*) AS n", WINDOW, "update"))
    rows = [srow(seconds=101), srow(seconds=102), srow(seconds=95), srow(seconds=125)]
    out = step(ref, col, rows, 110_000, 0)
    assert [r[1] for r in out] == [1]
    _, m = col.process(Rows(rows), 110_000, 0)
    assert m.num_rows_dropped_by_watermark == 2  # windows [90,100) and [100,110)


class Recorder:
    """An ``aggregate_core.AggregateObserver`` that writes down what it is told, rows and
    output batches by value."""

    def __init__(self) -> None:
        self.told: list[tuple[Any, ...]] = []

    def arrived(self, data: Any, late_ms: int | None, evict_ms: int | None) -> None:
        rows = data if isinstance(data, list) else data.to_rows()
        self.told.append(("arrived", repr(rows), late_ms, evict_ms))

    def late(self, dropped: Any, late_ms: int | None) -> None:
        self.told.append(("late", repr(dropped.rows), dropped.times, dropped.groups, late_ms))

    def grouped(self, pairs: Any) -> None:
        self.told.append(("grouped", repr(list(pairs))))

    def emitted(self, out: Any, keys: Any) -> None:
        rows = out if isinstance(out, list) else out.to_rows()
        self.told.append(("emitted", repr(list(zip(rows, keys, strict=True)))))


@pytest.mark.parametrize("mode", ["append", "update", "complete"])
def test_the_core_reports_alike_on_both_storages(mode: str) -> None:
    """The observer hooks (``sjoin why``'s) are the core's: each storage reports the same
    arrivals, late rows with their groups, rows folded into groups and output groups."""
    ref, col = both(spec(f"{WINDOW} AS w, S.k AS k, count(*) AS n", f"{WINDOW}, S.k", mode))
    ref.observer, col.observer = Recorder(), Recorder()
    batches = [
        ([srow("b", 101), srow("a", 102), srow("b", 115), srow("c", 95)], 0, 0),
        ([srow("a", 121), srow("z", 95), srow("a", 104)], 100_000, 110_000),
        ([], 110_000, 130_000),
    ]
    for rows, late, evict in batches:
        step(ref, col, rows, late, evict)
    assert ref.observer.told == col.observer.told
    kinds = [t[0] for t in ref.observer.told]
    assert kinds.count("arrived") == 3 and "grouped" in kinds and "emitted" in kinds
    assert ("late" in kinds) == (mode != "complete")


def test_null_window_times_make_no_group() -> None:
    ref, col = both(spec(f"{WINDOW} AS w, count(*) AS n", WINDOW, "update"))
    out = step(ref, col, [srow(seconds=None), srow(seconds=101)], 0, 0)
    assert len(out) == 1


def test_eviction_order_is_window_then_creation() -> None:
    """Groups made over two batches and evicted together come out by window, then in the
    order they were made (not batch by batch: a resumed run, whose index holds them
    together, must give the same order; issue 23, item 5)."""
    ref, col = both(spec(f"{WINDOW} AS w, S.k AS k, count(*) AS n", f"{WINDOW}, S.k", "append"))
    step(ref, col, [srow("a", 125), srow("b", 105)], 0, 0)
    step(ref, col, [srow("c", 101), srow("d", 126)], 0, 0)
    out = step(ref, col, [], 0, 130_000)
    assert [r[1] for r in out] == ["b", "c", "a", "d"]


# ------------------------------------------------------------------------------ overflow


def test_bigint_overflow_raises_under_ansi() -> None:
    ref, col = both(spec("S.k AS k, sum(S.i) AS s, avg(S.i) AS m", "S.k", "update"))
    step(ref, col, [srow(i=2**62), srow(i=2**62 - 1)], None, None)
    with pytest.raises(QueryError, match="ARITHMETIC_OVERFLOW"):
        step(ref, col, [srow(i=1), srow("b", i=1)], None, None)


def test_overflow_reports_the_first_accumulator_that_overflows() -> None:
    ref, col = both(spec("S.k AS k, avg(S.i) AS m, sum(S.i) AS s", "S.k", "update"))
    with pytest.raises(QueryError, match=r"avg\(\)"):
        step(ref, col, [srow(i=2**63 - 1), srow(i=1)], None, None)


def test_bigint_sums_wrap_without_ansi() -> None:
    ref, col = both(spec("S.k AS k, sum(S.i) AS s, avg(S.i) AS m", "S.k", "update", ansi=False))
    step(ref, col, [srow(i=2**63 - 1), srow(i=2)], None, None)
    out = step(ref, col, [srow(i=-(2**63)), srow(i=-5)], None, None)
    assert out[0][1] == ((2**63 - 1 + 2 - 2**63 - 5 + 2**63) % 2**64) - 2**63


# ------------------------------------------------------------------------------ checkpoints


@pytest.mark.parametrize("first", ["reference", "columnar"])
def test_a_snapshot_resumes_on_the_other_engine(first: str) -> None:
    text = spec(
        f"{WINDOW} AS w, S.k AS k, count(*) AS n, avg(S.x) AS m, "
        "approx_count_distinct(S.g) AS dg, max(S.k) AS hk",
        f"{WINDOW}, S.k",
        "append",
    )
    ref, col = both(text)
    rows = [srow("a", 101, 1.0, g=1), srow("b", 103, None, g=2), srow("a", 112, 2.0, g=1)]
    step(ref, col, rows, 0, 0)
    step(ref, col, [srow("a", 102, 3.0, g=5)], 0, 0)
    data = ref.snapshot() if first == "reference" else col.snapshot()
    assert col.snapshot() == ref.snapshot()
    ref2, col2 = both(text)
    ref2.restore(data)
    col2.restore(data)
    assert col2.snapshot() == ref2.snapshot()
    step(ref2, col2, [srow("c", 104, g=3), srow("a", 101, g=9)], 0, 0)
    out = step(ref2, col2, [], 0, 200_000)
    assert [r[1] for r in out] == ["a", "b", "c", "a"]


# ------------------------------------------------------------------------------ fallbacks


@pytest.mark.parametrize(
    ("select", "group_by", "reason"),
    [
        (
            "window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS) AS w, count(*) AS n",
            "window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS)",
            "sliding",
        ),
        ("S.x AS x, count(*) AS n", "S.x", "double"),
        ("upper(S.k) AS k, count(*) AS n", "upper(S.k)", "computed"),
        ("S.k AS k, abs(sum(S.d)) AS s", "S.k", "does not derive the scale"),
        ("S.k AS k, sum(S.i + 1) AS s", "S.k", "computed"),
        ("S.k AS k, approx_count_distinct(S.x) AS n", "S.k", "NaN"),
    ],
)
def test_unsupported_aggregates_fall_back_with_a_reason(
    select: str, group_by: str, reason: str
) -> None:
    plan = plan_of(spec(select, group_by, "complete"))
    engine = ColumnarEngine(plan)
    assert reason in engine.fallbacks["a"]


def test_output_expressions_use_the_reference_evaluator() -> None:
    ref, col = both(
        spec("upper(S.k) AS k, sum(S.x) / count(*) AS mean, count(*) + 1 AS n1", "S.k", "update")
    )
    assert not col.store.fast
    out = step(ref, col, [srow("a", x=2.0), srow("a", x=4.0)], None, None)
    assert out == [("A", 3.0, 3)]


# ------------------------------------------------------------------------------ random batches

SELECTS = [
    "count(*) AS n",
    "count(S.x) AS nx",
    "sum(S.x) AS sx",
    "avg(S.x) AS ax",
    "min(S.x) AS lx",
    "max(S.x) AS hx",
    "sum(S.i) AS si",
    "avg(S.i) AS ai",
    "min(S.i) AS li",
    "max(S.k) AS hk",
    "min(S.b) AS lb",
    "approx_count_distinct(S.k) AS dk",
    "approx_count_distinct(S.i) AS di",
    "sum(S.i) * 2 AS s2",
]
GROUPINGS = [
    ("S.k", "S.k AS k"),
    ("S.g", "S.g AS g"),
    (WINDOW, f"{WINDOW} AS w"),
    (f"{WINDOW}, S.k", f"S.k AS k, {WINDOW} AS w"),
    ("S.t, S.b", "S.t AS t, S.b AS b"),
]
FLOATS = st.one_of(
    st.none(),
    st.sampled_from([0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e16, 1.0, 0.1]),
    st.floats(allow_nan=True, allow_infinity=True),
)
INTS = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.sampled_from([2**62, 2**63 - 1, -(2**63), -(2**62)]),
    st.integers(-(2**63), 2**63 - 1),
)
ROWS = st.tuples(
    st.one_of(st.none(), st.sampled_from(["a", "b", "c", "é"])),
    st.one_of(st.none(), st.integers(0, 3)),
    st.one_of(st.none(), st.integers(0, 60).map(lambda s: s * SECOND // 2)),
    FLOATS,
    INTS,
    st.one_of(st.none(), st.booleans()),
    st.none(),
)


def _plan(text: str) -> Plan | None:
    result = check_text(text, "random.sjoin")
    return result.plan if result.ok else None


@settings(
    max_examples=int(os.environ.get("SJOIN_AGGREGATE_CASES", "120")),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    grouping=st.sampled_from(GROUPINGS),
    selects=st.lists(st.sampled_from(SELECTS), min_size=1, max_size=5, unique=True),
    mode=st.sampled_from(["append", "update", "complete"]),
    ansi=st.booleans(),
    batches=st.lists(
        st.tuples(st.lists(ROWS, max_size=8), st.integers(0, 20), st.integers(0, 20)),
        max_size=6,
    ),
    cut=st.integers(0, 6),
    restore_on_columnar=st.booleans(),
)
def test_random_batches_agree_with_the_reference(
    grouping: tuple[str, str],
    selects: list[str],
    mode: str,
    ansi: bool,
    batches: list[tuple[list[tuple[Any, ...]], int, int]],
    cut: int,
    restore_on_columnar: bool,
) -> None:
    group_by, keys = grouping
    text = spec(f"{keys}, {', '.join(selects)}", group_by, mode, ansi)
    note(text)
    plan = _plan(text)
    if plan is None:
        return
    ref, col = both(text)
    late = evict = 0
    for n, (rows, dl, de) in enumerate(batches):
        if n == cut:  # checkpoint: resume each engine from the other's snapshot
            assert same(col.snapshot(), ref.snapshot())
            ref2, col2 = both(text)
            data = ref.snapshot() if restore_on_columnar else col.snapshot()
            ref2.restore(data)
            col2.restore(data)
            ref, col = ref2, col2
        evict += de * 1000
        late = min(late + dl * 1000, evict)
        try:
            step(ref, col, rows, late, evict)
        except QueryError:
            return
