"""Windows in the columnar join (issue 25): a join on a window key, or one whose output or
condition reads a window, runs on ``ColumnarJoin`` with the reference operator's results.

* ``windows.py`` against the reference: a side's windows projected from its rows (NULL
  times, tumbling and sliding windows, start offsets, times before 1970) are the reference
  ``SideInput``'s rows; window values cross between tuples and struct columns unchanged;
* the operator against ``JoinOperator``, batch by batch, on every join type with a window
  key (tumbling and sliding), window fields in the output of a null-padded side and in a
  condition, over generated batches and watermarks: NULL window times, rows whose window
  ends before the late-events watermark (dropped) or the state watermark (not stored, or
  evicted at once), outer rows emitted by (window end, arrival): output rows in order,
  metrics, and the state after each batch (snapshots equal); a snapshot of either operator
  restores the other mid-run, and both go on alike.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sjoin.compiler.planning.plan import JoinNode
from sjoin.compiler.vocabulary.model import SUPPORTED_SPARK
from sjoin.runtime import output_line
from sjoin.runtime.columnar import support
from sjoin.runtime.columnar.frames import json_chunks, to_frame
from sjoin.runtime.columnar.join import ColumnarJoin, SideFilters
from sjoin.runtime.columnar.windows import (
    WINDOW,
    project_windows,
    rows_of,
    window_series,
)
from sjoin.runtime.engine.batches import Frame, Rows
from sjoin.runtime.engine.eval import window_arguments
from sjoin.runtime.engine.values import MAX_TIMESTAMP_US, MIN_TIMESTAMP_US, json_converter
from sjoin.runtime.rows.join import JoinOperator, SideInput

from ..harness import plan_of

STREAMS = """spark {version}
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
"""
WL = "window(L.t, INTERVAL 10 SECONDS)"
WR = "window(R.t, INTERVAL 10 SECONDS)"
SL = "window(L.t, INTERVAL 10 SECONDS, INTERVAL 4 SECONDS)"
SR = "window(R.t, INTERVAL 10 SECONDS, INTERVAL 4 SECONDS)"
OL = "window(L.t, INTERVAL 10 SECONDS, INTERVAL 10 SECONDS, INTERVAL 3 SECONDS)"
OR = "window(R.t, INTERVAL 10 SECONDS, INTERVAL 10 SECONDS, INTERVAL 3 SECONDS)"
RANGE = "L.t BETWEEN R.t - INTERVAL 10 SECONDS AND R.t + INTERVAL 5 SECONDS"


def _key_join(how: str, left: str = WL, right: str = WR) -> str:
    select = (
        f"SELECT L.k AS k, L.t AS lt, {left} AS w, L.v AS lv"
        if how in ("LEFT SEMI", "LEFT ANTI")
        else f"SELECT L.k AS k, {left} AS w, {right} AS rw, L.v AS lv, R.v AS rv"
    )
    return f"join j = l AS L {how} JOIN r AS R ON L.k = R.k AND {left} = {right}\n  {select}\n"


# (name, join statement): every join type on a window key, sliding windows and a start
# offset, window fields of a null-padded side in the output, a window field in a condition
JOINS = {
    **{
        f"{how.lower().replace(' ', '_')}_window_key": _key_join(how)
        for how in ("INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER", "LEFT SEMI", "LEFT ANTI")
    },
    "full_outer_sliding_key": _key_join("FULL OUTER", SL, SR),
    "left_semi_sliding_key": _key_join("LEFT SEMI", SL, SR),
    "left_outer_offset_key": _key_join("LEFT OUTER", OL, OR),
    # (E030, accepted: Spark runs it as LEFT OUTER, R's rows null-padded beside L's window)
    "full_outer_window_of_one_side": (
        f"join j = l AS L FULL OUTER JOIN r AS R ON L.k = R.k AND {RANGE}\n"
        f"  SELECT L.k AS k, {WL}.start AS ws, {WL} AS w, R.t AS rt, R.v AS rv\n"
    ),
    "right_outer_window_field_select": (
        f"join j = l AS L RIGHT OUTER JOIN r AS R ON L.k = R.k AND {RANGE}\n"
        f"  SELECT R.k AS k, {WR}.start AS ws, {WR}.end AS we, L.t AS lt\n"
    ),
    "left_outer_window_field_condition": (
        f"join j = l AS L LEFT OUTER JOIN r AS R ON L.k = R.k AND {RANGE} AND R.t >= {WL}.start\n"
        f"  SELECT L.k AS k, {WL}.start AS ws, {WL} AS w, R.t AS rt\n"
    ),
}
SECOND = 1_000_000
VERSIONS = ["3.5", "4.1", "4.3"]  # the append rules and LeftSemi orders that differ


def _plan(name: str, version: str = "4.3") -> Any:
    header = "set allow_unemitted_outer_rows = true\n" if name.endswith("_one_side") else ""
    return plan_of(STREAMS.format(version=version) + header + JOINS[name])


def _node(plan: Any) -> JoinNode:
    node = plan.node("j")
    assert isinstance(node, JoinNode)
    return node


@pytest.mark.parametrize("name", JOINS)
def test_each_window_join_runs_columnar(name: str) -> None:
    plan = _plan(name)
    assert support.join_unsupported(_node(plan), plan.ansi) is None


def test_the_joins_cover_window_keys_fields_and_null_padding() -> None:
    """The cases above hold what they are meant to: window keys evicted by the window's end
    (tumbling, sliding, with a start offset), window outputs beside null-padded rows (the
    plan's window times), a condition that reads a window."""
    nodes = {name: _node(_plan(name)) for name in JOINS}
    keyed = [n for n in nodes.values() if n.left.windows]
    assert len(keyed) == 9
    assert all(n.left.state.window and n.right.state.window for n in keyed)
    sizes = {window_arguments(w.expr) for n in keyed for w in n.left.windows}
    assert sizes == {
        (10 * SECOND, None, 0),
        (10 * SECOND, 4 * SECOND, 0),
        (10 * SECOND, None, 3 * SECOND),
    }
    assert nodes["full_outer_window_of_one_side"].window_times
    assert nodes["full_outer_window_of_one_side"].left.preserved
    assert nodes["full_outer_window_of_one_side"].executed_as == "left_outer"
    assert nodes["right_outer_window_field_select"].window_times
    condition = nodes["left_outer_window_field_condition"].post_join_filter
    assert condition is not None and "WINDOW" in condition.sql().upper()


# ------------------------------------------------------------------------ windows.py

TIMES = st.one_of(
    st.none(),
    st.integers(-30 * SECOND, 30 * SECOND),  # around 1970, before it too
    st.sampled_from([0, -1, 3 * SECOND, 10 * SECOND - 1, 10 * SECOND, -10 * SECOND]),
)
SIZES = st.sampled_from(
    [
        (10 * SECOND, None, 0),
        (10 * SECOND, None, 3 * SECOND),
        (10 * SECOND, 4 * SECOND, 0),
        (10 * SECOND, 5 * SECOND, -2 * SECOND),
        (3 * SECOND, 5 * SECOND, 0),  # a slide longer than the window: some times have none
        (7, 3, 1),
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(TIMES, TIMES), max_size=12),
    first=SIZES,
    second=st.none() | SIZES,
)
def test_windows_are_projected_as_the_reference_projects_them(
    rows: list[tuple[Any, Any]], first: Any, second: Any
) -> None:
    """``project_windows`` of a frame of two time columns against ``SideInput``'s
    ``filter_above`` (its ``windows``: time column, duration, slide, start) of the rows."""
    windows = [(0, *first)] + ([] if second is None else [(1, *second)])
    side = SideInput.__new__(SideInput)
    side.above = []
    side.windows = windows
    expected = side.filter_above(rows)
    frame = project_windows(to_frame(rows, ["timestamp", "timestamp"]), windows, 2)
    names = [f"c{i}" for i in range(2 + len(windows))]
    assert rows_of(frame, names, range(2, len(names))) == expected


def test_window_values_cross_unchanged() -> None:
    values = [(0, 10), None, (-20 * SECOND, -10 * SECOND), [5, 15]]  # a list: JSON read back
    column = window_series("w", values)
    assert column.dtype == WINDOW
    frame = pl.DataFrame([column, pl.Series("x", [1, 2, 3, 4])])
    assert rows_of(frame, ["x", "w"], [1]) == [
        (1, (0, 10)),
        (2, None),
        (3, (-20 * SECOND, -10 * SECOND)),
        (4, (5, 15)),
    ]
    assert rows_of(frame.head(0), ["x", "w"], [1]) == []
    assert rows_of(frame, ["x"], []) == [(1,), (2,), (3,), (4,)]


def test_side_filters_use_the_plans_window_arguments() -> None:
    node = _node(_plan("left_outer_offset_key"))
    filters = SideFilters(node.left, ansi=False)
    assert filters.windows == [(1, *window_arguments(node.left.windows[0].expr))]
    assert filters.windows == [(1, 10 * SECOND, None, 3 * SECOND)]


# ------------------------------------------------------------------------ the operator

ROW = st.tuples(
    st.sampled_from([1, 2, None]),
    st.one_of(st.none(), st.integers(0, 60).map(lambda s: s * SECOND // 2)),
    st.sampled_from(["a", "b", None]),
)
BATCH = st.tuples(st.lists(ROW, max_size=4), st.lists(ROW, max_size=4))


@st.composite
def runs(draw: st.DrawFn) -> list[tuple[list[Any], list[Any], int | None, int | None]]:
    """Batches of both sides with the late-events and eviction watermarks (ms) of each:
    each watermark rises (or stays), the eviction one at most the late one, and often cuts
    through the batch's windows (rows 0-30 s; windows of 10 s)."""
    out = []
    late = evict = None
    for left, right in draw(st.lists(BATCH, min_size=1, max_size=6)):
        if draw(st.booleans()):
            late = max(late or 0, draw(st.integers(0, 40)) * 1000)
            evict = max(evict or 0, min(late, draw(st.integers(0, 40)) * 1000))
        out.append((left, right, late, evict))
    return out


def _snapshot(op: Any) -> Any:
    data = op.snapshot()
    return {
        side: (part["next_id"], sorted(part["values"], key=lambda v: v[1]))
        for side, part in data.items()
    }


def _step(op: Any, left: list[Any], right: list[Any], late: Any, evict: Any) -> Any:
    out, metrics = op.step([Rows(left), Rows(right)], [None, None], late, evict)
    return out.to_rows(), metrics


CASES = [(name, "4.3") for name in JOINS] + [
    (name, version)
    for name in ("left_semi_window_key", "full_outer_window_key", "left_anti_window_key")
    for version in VERSIONS
    if version != "4.3"
]


@pytest.mark.parametrize(("name", "version"), CASES, ids=lambda x: x)
@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(batches=runs(), swap_at=st.integers(0, 6))
def test_the_columnar_join_is_the_reference_join(
    name: str, version: str, batches: Any, swap_at: int
) -> None:
    """Batch by batch: the same output rows in the same order, the same metrics, the same
    late rows (each with the window end it was dropped by) and the same state.  After batch
    ``swap_at`` each operator is replaced by one of the other engine restored from its
    snapshot (a checkpoint written by one engine, resumed by the other)."""
    assert f"{int(version[0])}.{int(version[2])}" in {f"{a}.{b}" for a, b in SUPPORTED_SPARK}
    plan = _plan(name, version)
    node = _node(plan)
    reference: Any = JoinOperator(node, plan.ansi)
    columnar: Any = ColumnarJoin(node, plan.ansi)
    for i, (left, right, late, evict) in enumerate(batches):
        reference.late_rows, columnar.late_rows = [], []  # (`sjoin run --late-rows`)
        want, want_metrics = _step(reference, left, right, late, evict)
        got, got_metrics = _step(columnar, left, right, late, evict)
        assert got == want, (i, late, evict)
        assert got_metrics == want_metrics, i
        assert columnar.late_rows == reference.late_rows, i
        assert _snapshot(columnar) == _snapshot(reference), i
        if i == swap_at:
            ref_state, col_state = reference.snapshot(), columnar.snapshot()
            reference, columnar = JoinOperator(node, plan.ansi), ColumnarJoin(node, plan.ansi)
            reference.restore(col_state)
            columnar.restore(ref_state)


def test_a_window_output_is_a_frame_whose_rows_hold_tuples() -> None:
    """A join that outputs a window gives a frame whose window columns are structs, named in
    ``Frame.windows``: its rows hold the reference's tuples (and NULL for a NULL window)."""
    s = SECOND
    batch = ([(1, 2 * s, "a"), (1, None, "n")], [(1, 3 * s, "b")])
    plan = _plan("inner_window_key")
    out, _ = ColumnarJoin(_node(plan), plan.ansi).step(
        [Rows(batch[0]), Rows(batch[1])], [None, None], None, None
    )
    assert isinstance(out, Frame) and out.windows == (1, 2)
    assert out.frame.schema["c1"] == WINDOW
    assert out.to_rows() == [(1, (0, 10 * s), (0, 10 * s), "a", "b")]
    frame = pl.DataFrame([pl.Series("c0", [1, 2]), window_series("c1", [(0, 5), None])])
    assert Frame(frame, (1,)).to_rows() == [(1, (0, 5)), (2, None)]
    assert Frame(frame.head(0), (1,)).to_rows() == []


WINDOW_TIMES = st.one_of(
    st.integers(MIN_TIMESTAMP_US, MAX_TIMESTAMP_US - 10 * SECOND),
    st.integers(-(2**61), 2**61),  # arithmetic may leave years 0001..9999
    st.sampled_from([0, -1, 1_767_225_600_000_000, 1_767_225_600_000_001]),
)


@settings(max_examples=200, deadline=None)
@given(
    starts=st.lists(st.none() | WINDOW_TIMES, min_size=1, max_size=12),
    length=st.sampled_from([1, 10 * SECOND, 999_999]),
)
def test_window_lines_are_the_reference_lines(starts: list[int | None], length: int) -> None:
    """JSON lines written from a window column are the reference writer's, byte for byte:
    ``{"start": ..., "end": ...}`` with each time as a TIMESTAMP is written, NULL as null."""
    windows = [None if v is None else (v, v + length) for v in starts]
    rows = [(i, w) for i, w in enumerate(windows)]
    frame = pl.DataFrame([pl.Series("c0", range(len(rows))), window_series("c1", windows)])
    got = b"".join(json_chunks(frame, 3, "j", [("i", "bigint"), ("w", "window")])).decode()
    convert = json_converter("window")
    expected = [
        output_line(3, "j", {"i": i, "w": None if w is None else convert(w)}) for i, w in rows
    ]
    assert got == "".join(line + "\n" for line in expected)


# ----------------------------------------------------- batches with no rows on a side

RANGE_JOINS = {
    f"{how.lower().replace(' ', '_')}_range": (
        f"join j = l AS L {how} JOIN r AS R ON L.k = R.k AND {RANGE}\n"
        + (
            "  SELECT L.k AS k, L.t AS lt, L.v AS lv\n"
            if how in ("LEFT SEMI", "LEFT ANTI")
            else "  SELECT L.k AS k, L.t AS lt, R.t AS rt, L.v AS lv, R.v AS rv\n"
        )
    )
    for how in ("INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER", "LEFT SEMI", "LEFT ANTI")
}
S = SECOND // 2
# (left rows, right rows, late ms, evict ms): both sides, then no rows at all, then one side
# only, each after the watermarks rose (the passes over no rows; eviction still runs)
EMPTY_SIDES = [
    ([(1, 2 * S, "a"), (2, 4 * S, "b"), (None, 6 * S, "c")], [(1, 3 * S, "x")], None, None),
    ([], [], 4000, 2000),
    ([], [(2, 9 * S, "y"), (1, 30 * S, "z")], 8000, 6000),
    ([(1, 40 * S, "d"), (2, 41 * S, None)], [], 15_000, 12_000),
    ([], [], 30_000, 30_000),
    ([(1, 80 * S, "e")], [(1, 81 * S, "w")], 30_000, 30_000),
]


@pytest.mark.parametrize(
    ("name", "version"),
    [(name, "4.3") for name in [*JOINS, *RANGE_JOINS]]
    + [(name, v) for name in ("left_semi_range", "left_semi_window_key") for v in ("3.5", "4.1")],
    ids=lambda x: x,
)
def test_a_side_without_rows_is_the_reference_join(name: str, version: str) -> None:
    """A batch with no rows on one side or both (every no-data batch of a run): the
    columnar passes over no rows return at once (``ColumnarJoin._left_pass``), and the
    batch is still the reference's: rows, metrics (evictions included), state."""
    statement = JOINS.get(name) or RANGE_JOINS[name]
    header = "set allow_unemitted_outer_rows = true\n" if name.endswith("_one_side") else ""
    plan = plan_of(STREAMS.format(version=version) + header + statement)
    node = _node(plan)
    reference: Any = JoinOperator(node, plan.ansi)
    columnar: Any = ColumnarJoin(node, plan.ansi)
    for i, (left, right, late, evict) in enumerate(EMPTY_SIDES):
        want, want_metrics = _step(reference, left, right, late, evict)
        got, got_metrics = _step(columnar, left, right, late, evict)
        assert got == want, i
        assert got_metrics == want_metrics, i
        assert _snapshot(columnar) == _snapshot(reference), i
