"""A backlog (``Trace.backlog``: a replayed topic, ``sjoin run --backlog``): every batch was
waiting when the query started, so Spark runs them back to back, each query's no-data
batches only once its sources have nothing in the next batch, and after the last one as a
running query does, also under available_now (which stops once nothing more is due), but none
under once (one batch, then Spark stops).  Seen on Spark 4.3 with availableNow, once and
maxOffsetsPerTrigger (tests/integration/kafka/test_replay_on_spark.py and test_record_columns.py
check it batch by batch)."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.runtime import CheckpointError, run

from ..harness import plan_of, trace_records
from ..scenarios import range_spec, row, two_streams

SPEC = range_spec("LEFT OUTER")
BATCHES = [
    {"l": [row(1, 0, "a"), row(2, 5, "b")], "r": [row(1, 1, "x")]},
    {"l": [row(3, 40, "c")], "r": [row(9, 41, "q")]},
    {"l": [row(4, 80, "d")], "r": [row(4, 81, "y")]},
]


def shape(result: Any) -> list[tuple[int, bool, int | None, int]]:
    return [(b.batch, b.data, b.trace_batch, len(b.rows)) for b in result.batches]


def test_a_trace_file_runs_the_no_data_batches_after_each_batch() -> None:
    result = run(plan_of(SPEC), trace_records(BATCHES))
    assert [b.data for b in result.batches] == [True, True, False, True, False]


def test_a_backlog_runs_its_batches_back_to_back_then_the_no_data_batches() -> None:
    plan = plan_of(SPEC)
    fed = run(plan, trace_records(BATCHES))
    backlog = run(plan, trace_records(BATCHES), backlog=True)
    assert [(b.batch, b.data, b.trace_batch) for b in backlog.batches] == [
        (0, True, 0),
        (1, True, 1),
        (2, True, 2),
        (3, False, 2),
    ]
    # the same rows in the end: what the no-data batch evicted comes out in the next data batch
    assert sorted(map(str, fed.rows())) == sorted(map(str, backlog.rows()))
    assert backlog.batches[-1].watermark == fed.batches[-1].watermark


@pytest.mark.parametrize(("trigger", "trailing"), [("available_now", [False]), ("once", [])])
def test_a_backlog_under_a_trigger_that_stops(trigger: str, trailing: list[bool]) -> None:
    """availableNow runs the no-data batch the watermark of its last data batch calls for
    before it stops; once runs one batch (its trace is one batch) and stops."""
    plan = plan_of(f"set trigger = '{trigger}'\n" + SPEC)
    backlog = run(plan, trace_records(BATCHES), backlog=True)
    assert [b.data for b in backlog.batches] == [True, True, True, *trailing]
    # a trace fed a batch at a time is the driver's model: the trigger does not change it
    assert [b.data for b in run(plan, trace_records(BATCHES)).batches] == [
        True,
        True,
        False,
        True,
        False,
    ]


def test_a_query_whose_sources_are_drained_settles_while_others_read_on() -> None:
    # two queries: `j` reads l and r; `k` reads only r, whose records end in batch 0, so `k`
    # runs its no-data batch after batch 0 although batch 1 follows at once
    spec = (
        "spark 4.3\n"
        + two_streams()
        + "stream q (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds\n"
        + "join j = l AS L LEFT OUTER JOIN r AS R ON L.k = R.k AND R.t BETWEEN L.t AND "
        + "L.t + INTERVAL 5 SECONDS\n"
        + "join k = r AS A LEFT OUTER JOIN q AS B ON A.k = B.k AND B.t BETWEEN A.t AND "
        + "A.t + INTERVAL 5 SECONDS\n"
    )
    batches = [
        {"l": [row(1, 0, "a")], "r": [row(1, 40, "x"), row(2, 1, "w")], "q": [row(1, 41, "z")]},
        {"l": [row(3, 60, "b")]},
    ]
    result = run(plan_of(spec), trace_records(batches), backlog=True)
    by_query: dict[str, list[tuple[int, bool]]] = {}
    for b in result.batches:
        by_query.setdefault(b.query, []).append((b.batch, b.data))
    assert by_query["j"] == [(0, True), (1, True), (2, False)]
    assert by_query["k"] == [(0, True), (1, False)]
    # `k`'s no-data batch ran right after its data batch, before `j`'s batch 1
    order = [(b.query, b.batch) for b in result.batches]
    assert order.index(("k", 1)) < order.index(("j", 1))
    settled = [row for b in result.batches if b.query == "k" and not b.data for _, row in b.rows]
    assert settled == [
        {"A_k": 2, "A_t": "1970-01-01T00:00:01Z", "A_v": "w", "B_k": None, "B_t": None, "B_v": None}
    ]


def test_a_checkpoint_resumes_only_with_the_schedule_it_was_made_with(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = plan_of(SPEC)
    records = trace_records(BATCHES)
    clean = run(plan, records, backlog=True)
    checkpoint = tmp_path / "chk"
    first = run(plan, records[:3], backlog=True, checkpoint=checkpoint)
    with pytest.raises(CheckpointError, match="made by a run with --backlog"):
        run(plan, records, checkpoint=checkpoint)
    rest = run(plan, records, backlog=True, checkpoint=checkpoint)
    assert [b.batch for b in first.batches + rest.batches] == [b.batch for b in clean.batches]
    other = tmp_path / "other"
    run(plan, records[:3], checkpoint=other)
    with pytest.raises(CheckpointError, match="made by a run without --backlog"):
        run(plan, records, backlog=True, checkpoint=other)
