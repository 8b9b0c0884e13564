"""The columnar aggregate over an input window column (issue 26, workload (d)): an aggregate
that groups by, or counts, or takes the min, max or distinct count of, a window another
operator output (a window-key join's ``window(...) AS w``) runs on ``ColumnarAggregate``
with the reference operator's results.

The window is a struct ``{start, end}`` in the join's frames (``columnar/windows.py``), a
``(start, end)`` tuple in the reference's rows; a group keyed by it has the window's end as
its event time (Spark's eviction reads a struct key's second field; the reference's
``_key_time``).  Each shape below runs on both operators, batch by batch, over generated
rows (NULL windows, windows of two lengths, NULL keys and amounts) and watermarks, fed as a
frame or as rows: output rows in order (windows as tuples), metrics, and the state after
each batch (snapshots equal); a snapshot of either operator restores the other mid-run.
``tests/integration/parity/scenarios.py`` holds the ``window_key_join_then_*`` scenarios, checked on
real Spark (``test_parity.py``) and on both engines (``test_engines.py``).
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sjoin.compiler.planning.plan import Plan
from sjoin.runtime import run
from sjoin.runtime.columnar.aggregate import ColumnarAggregate
from sjoin.runtime.columnar.frames import json_chunks
from sjoin.runtime.columnar.support import aggregate_unsupported
from sjoin.runtime.columnar.windows import window_series
from sjoin.runtime.engine.batches import Frame, Rows
from sjoin.runtime.engine.values import json_converter
from sjoin.runtime.io.output import output_line
from sjoin.runtime.operators import columns_of, place
from sjoin.runtime.rows.aggregate import AggregateOperator

from ...integration.parity.scenarios import SCENARIOS
from ..harness import plan_of

JOIN = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, amount DECIMAL(12, 2)) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)
  SELECT L.k AS k, window(L.t, INTERVAL 10 SECONDS) AS w, L.amount AS amount, R.v AS rv
"""
SECOND = 1_000_000

# (name, GROUP BY, SELECT, output mode): every shape of an aggregate reading the join's
# window column that the columnar aggregate runs
SHAPES = [
    (
        "key_and_window_append",  # workload (d)
        "x.k, x.w",
        "x.k AS k, x.w AS w, count(*) AS n, sum(x.amount) AS total",
        "append",
    ),
    (
        "key_and_window_update",
        "x.k, x.w",
        "x.w AS w, x.k AS k, count(*) AS n, avg(x.amount) AS mean",
        "update",
    ),
    (
        "window_update",
        "x.w",
        "x.w AS w, count(x.w) AS n, approx_count_distinct(x.k) AS keys, max(x.rv) AS top",
        "update",
    ),
    (
        "window_values_update",
        "x.k",
        "x.k AS k, min(x.w) AS lo, max(x.w) AS hi, count(x.w) AS n, "
        "approx_count_distinct(x.w) AS d",
        "update",
    ),
    (
        "window_computed_outputs_append",  # outputs through the reference evaluator
        "x.w",
        "count(*) + 1 AS n1, x.w AS w, min(x.w) AS lo, sum(x.amount) AS total",
        "append",
    ),
]
IDS = [s[0] for s in SHAPES]


def spec(group_by: str, select: str, mode: str) -> str:
    return (
        JOIN
        + f"aggregate a = j AS x GROUP BY {group_by}\n  SELECT {select}\n  OUTPUT MODE {mode}\n"
    )


def plan_and_columns(shape: tuple[str, str, str, str]) -> tuple[Plan, list[tuple[str, str]]]:
    plan = plan_of(spec(*shape[1:]))
    source = plan.node("j")
    assert source is not None
    return plan, columns_of(source)


def both(shape: tuple[str, str, str, str]) -> tuple[AggregateOperator, ColumnarAggregate]:
    plan, columns = plan_and_columns(shape)
    (node,) = plan.aggregates
    return (
        AggregateOperator(node, columns, plan.ansi),
        ColumnarAggregate(node, columns, plan.ansi),
    )


def frame_of(rows: list[tuple[Any, ...]]) -> Frame:
    """The join's output rows as the columnar join gives them: the window a struct column."""
    columns = list(zip(*rows, strict=True)) if rows else [[], [], [], []]
    return Frame(
        pl.DataFrame(
            [
                pl.Series("c0", list(columns[0]), dtype=pl.Int64),
                window_series("c1", list(columns[1])),
                pl.Series("c2", list(columns[2]), dtype=pl.Decimal(38, 2)),
                pl.Series("c3", list(columns[3]), dtype=pl.String),
            ]
        ),
        (1,),
    )


def step(
    ref: AggregateOperator,
    col: ColumnarAggregate,
    rows: list[tuple[Any, ...]],
    late: int | None,
    evict: int | None,
    as_frame: bool = True,
) -> list[tuple[Any, ...]]:
    """One batch on both operators: the same rows in order, metrics and state."""
    batch = frame_of(rows) if as_frame else Rows(rows)
    expected, m1 = ref.process(rows, late, evict)
    out, m2 = col.process(batch, late, evict)
    assert out.to_rows() == expected
    assert m1 == m2
    assert col.snapshot() == ref.snapshot()
    return expected


def w(start_s: int, length_s: int = 10) -> tuple[int, int]:
    return (start_s * SECOND, (start_s + length_s) * SECOND)


def r(
    k: int | None, window: tuple[int, int] | None, amount: str | None = "1.00", v: str = "a"
) -> tuple[Any, ...]:
    return (k, window, None if amount is None else Decimal(amount), v)


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_each_shape_runs_columnar(shape: tuple[str, str, str, str]) -> None:
    plan, columns = plan_and_columns(shape)
    (node,) = plan.aggregates
    assert aggregate_unsupported(node, columns, plan.ansi) is None
    assert {name: p.unsupported for name, p in place(plan).items()} == {"j": None, "a": None}


def test_a_window_key_is_evicted_when_the_watermark_reaches_its_end() -> None:
    """The group's event time is the window's end: evicted at a watermark equal to it, not
    one µs before (Spark: ``end <= watermark``), and late at the same edge."""
    ref, col = both(SHAPES[0])
    step(ref, col, [r(1, w(100)), r(1, w(110)), r(2, w(100), "2.50")], 0, 0)
    assert step(ref, col, [], 0, 110_000 - 1) == []
    out = step(ref, col, [], 0, 110_000)
    assert [(k, window) for k, window, *_ in out] == [(1, w(100)), (2, w(100))]
    rows = [r(1, w(100)), r(1, w(100)), r(2, w(100)), r(1, w(110))]  # w(100) is late
    assert step(ref, col, rows, 110_000, 110_000) == []
    # ends 109 s and 100 s are at or below a late-events watermark of 109 s, 110 s is not
    rows = [r(3, w(99)), r(3, w(90)), r(3, w(90)), r(3, w(100))]
    _, m = col.process(frame_of(rows), 109_000, 109_000)
    assert (m.num_rows_dropped_by_watermark, m.num_rows_updated) == (2, 1)


def test_null_windows_are_one_group_and_never_evicted() -> None:
    ref, col = both(SHAPES[2])
    out = step(ref, col, [r(1, None), r(2, None), r(1, w(0))], 0, 0)
    assert [row[0] for row in out] == [None, w(0)]
    out = step(ref, col, [r(3, None)], 0, 10**9)
    assert out == [(None, 0, 3, "a")]  # count(x.w) counts no NULL window
    assert [g[0] for g in col.snapshot()["groups"]] == [(None,)]


def test_min_and_max_of_windows_order_by_start_then_end() -> None:
    ref, col = both(SHAPES[3])
    rows = [r(1, w(10, 20)), r(1, None), r(1, w(10, 10)), r(1, w(5, 30)), r(1, w(20, 1))]
    (out,) = step(ref, col, rows, None, None)
    assert out == (1, w(5, 30), w(20, 1), 4, 4)
    (out,) = step(ref, col, [r(1, w(10, 10)), r(1, w(0, 5))], None, None, as_frame=False)
    assert out == (1, w(0, 5), w(20, 1), 6, 5)
    (out,) = step(ref, col, [r(2, None)], None, None)
    assert out == (2, None, None, 0, 0)


def test_window_outputs_are_struct_columns_written_as_the_reference_writes_them() -> None:
    ref, col = both(SHAPES[4])
    rows = [r(1, w(100)), r(2, w(100), "0.25"), r(1, w(110), None)]
    ref.process(rows, 0, 0)
    out, _ = col.process(frame_of(rows), 0, 0)
    expected, _ = ref.process([], 0, 200_000)
    out, _ = col.process(frame_of([]), 0, 200_000)
    assert isinstance(out, Frame) and out.windows == (1, 2)
    assert out.to_rows() == expected
    plan, _ = plan_and_columns(SHAPES[4])
    (node,) = plan.aggregates
    columns = columns_of(node)
    names = [c for c, _ in columns]
    converters = [json_converter(kind) for _, kind in columns]
    lines = [
        output_line(3, "a", dict(zip(names, row, strict=True)))
        for row in (
            tuple(
                v if f is None or v is None else f(v) for v, f in zip(row, converters, strict=True)
            )
            for row in expected
        )
    ]
    text = b"".join(json_chunks(out.frame, 3, "a", columns, None)).decode()
    assert text.splitlines() == lines


@pytest.mark.parametrize("first", ["reference", "columnar"])
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_a_snapshot_resumes_on_the_other_engine(shape: Any, first: str) -> None:
    ref, col = both(shape)
    step(ref, col, [r(1, w(100)), r(2, None), r(1, w(110), "3.10", "b"), r(None, w(100))], 0, 0)
    step(ref, col, [r(2, w(100), None), r(1, w(100), "-1.00")], 0, 0)
    data = ref.snapshot() if first == "reference" else col.snapshot()
    ref2, col2 = both(shape)
    ref2.restore(data)
    col2.restore(data)
    assert col2.snapshot() == ref2.snapshot()
    assert col2.snapshot()["groups"] == data["groups"]
    step(ref2, col2, [r(3, w(120)), r(1, w(100))], 0, 0)
    step(ref2, col2, [], 0, 125_000)
    step(ref2, col2, [r(1, w(130))], 125_000, 300_000)


WINDOWS = st.one_of(
    st.none(),
    st.builds(w, st.integers(0, 6).map(lambda s: 100 + 10 * s)),
    st.builds(w, st.integers(0, 6).map(lambda s: 100 + 10 * s), st.just(20)),
)
ROWS = st.builds(
    r,
    st.one_of(st.none(), st.integers(1, 3)),
    WINDOWS,
    st.one_of(st.none(), st.sampled_from(["0.00", "1.25", "-3.50", "9999999999.99"])),
    st.sampled_from(["a", "b", "é"]),
)


@settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    shape=st.sampled_from(SHAPES),
    batches=st.lists(
        st.tuples(st.lists(ROWS, max_size=8), st.integers(0, 25), st.integers(0, 25)),
        max_size=6,
    ),
    frames=st.lists(st.booleans(), min_size=6, max_size=6),
    cut=st.integers(0, 6),
    restore_on_columnar=st.booleans(),
)
def test_random_batches_agree_with_the_reference(
    shape: tuple[str, str, str, str],
    batches: list[tuple[list[tuple[Any, ...]], int, int]],
    frames: list[bool],
    cut: int,
    restore_on_columnar: bool,
) -> None:
    ref, col = both(shape)
    late = evict = 90_000
    for n, (rows, dl, de) in enumerate(batches):
        if n == cut:  # checkpoint: resume each engine from the other's snapshot
            ref2, col2 = both(shape)
            data = col.snapshot() if restore_on_columnar else ref.snapshot()
            ref2.restore(data)
            col2.restore(data)
            ref, col = ref2, col2
        evict += de * 1000
        late = min(late + dl * 1000, evict)
        step(ref, col, rows, late, evict, as_frame=frames[n])


CHECKPOINTED = [
    "window_key_join_then_group_by_window_append",
    "window_key_join_then_group_by_window_update",
    "window_key_join_then_window_values_update",
]


@pytest.mark.parametrize(
    "engines", [("columnar", "columnar"), ("columnar", "reference"), ("reference", "columnar")]
)
@pytest.mark.parametrize("name", CHECKPOINTED)
def test_a_checkpointed_run_resumes_on_either_engine(
    tmp_path: Path, name: str, engines: tuple[Any, Any]
) -> None:
    """A run stopped after two batches resumes from its checkpoint on either engine with the
    output and progress of a clean run (the snapshot passes ``snapshot.py``'s checks)."""
    scenario = SCENARIOS[name]
    plan = plan_of(scenario.spec)
    records = scenario.trace_input()
    trace, head = tmp_path / "trace.jsonl", tmp_path / "head.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    head.write_text("".join(json.dumps(r) + "\n" for r in records if r["batch"] < 2))
    clean = run(plan, trace)
    checkpoint = tmp_path / "chk"
    first = run(plan, head, checkpoint=checkpoint, engine=engines[0])
    second = run(plan, trace, checkpoint=checkpoint, engine=engines[1])
    assert first.output_lines() + second.output_lines() == clean.output_lines()
    assert first.progress_lines() + second.progress_lines() == clean.progress_lines()
