"""Watermark nodes, the global watermark, batch ids and no-data batches."""

from __future__ import annotations

import pytest

from sjoin.runtime import run
from sjoin.runtime.engine.values import format_watermark
from sjoin.runtime.engine.watermark import WatermarkNode, WatermarkTracker

from ..harness import plan_of, trace_records
from ..scenarios import range_spec, row, two_streams


def test_node_takes_max_event_time_minus_delay_and_never_goes_back() -> None:
    node = WatermarkNode("j.left", "l", 0, 10_000)
    node.observe([(100_000_000,), (95_000_000,)])
    node.end_batch()
    assert node.watermark_ms == 90_000
    node.observe([(50_000_000,)])
    node.end_batch()
    assert node.watermark_ms == 90_000
    node.end_batch()  # no rows: unchanged
    assert node.watermark_ms == 90_000
    node.observe([(None,), (100_999_999,)])  # microseconds floor to milliseconds
    node.end_batch()
    assert node.watermark_ms == 90_999


@pytest.mark.parametrize(("policy", "want"), [("min", 0), ("max", 90_000)])
def test_global_watermark_policy(policy: str, want: int) -> None:
    a, b = WatermarkNode("a", "a", 0, 10_000), WatermarkNode("b", "b", 0, 10_000)
    tracker = WatermarkTracker([a, b], policy)
    a.observe([(100_000_000,)])
    assert tracker.end_batch() == want  # b has no data yet: it counts as 0
    b.observe([(200_000_000,)])
    assert tracker.end_batch() == (90_000 if policy == "min" else 190_000)
    a.observe([(300_000_000,)])
    assert tracker.end_batch() == (190_000 if policy == "min" else 290_000)


def test_nodes_of_a_shared_stream_are_one_entry_at_their_highest() -> None:
    """Spark 4.0+ (``Plan.shared_watermarks``): a self-join's two nodes are one entry of the
    tracker, the higher of the two; another stream's node still counts on its own."""
    left, right = WatermarkNode("j.left", "e", 0, 0), WatermarkNode("j.right", "e", 0, 0)
    other = WatermarkNode("k.right", "o", 0, 0)
    shared = WatermarkTracker([left, right, other], "min", shared=frozenset({"e"}))
    alone = WatermarkTracker([left, right], "min")
    left.observe([(100_000_000,)])
    right.observe([(120_000_000,)])
    other.observe([(150_000_000,)])
    assert shared.end_batch() == 120_000
    assert shared.entries() == [120_000, 150_000]
    assert alone.end_batch() == 100_000  # Spark 3.5: each node its own entry
    right_only = WatermarkTracker(
        [WatermarkNode("j.left", "e", 0, 0), right], shared=frozenset({"e"})
    )
    assert right_only.end_batch() == 120_000  # a node without data does not hold the entry at 0


def test_global_watermark_is_monotonic() -> None:
    a = WatermarkNode("a", "a", 0, 10_000)
    tracker = WatermarkTracker([a])
    a.observe([(5_000_000,)])
    assert tracker.end_batch() == 0  # a negative candidate never lowers it
    a.observe([(100_000_000,)])
    assert tracker.end_batch() == 90_000
    assert tracker.snapshot() == {"global": 90_000, "nodes": [90_000]}


def test_progress_watermark_format() -> None:
    assert format_watermark(0) == "1970-01-01T00:00:00Z"
    assert format_watermark(90_000) == "1970-01-01T00:01:30Z"
    assert format_watermark(90_500) == "1970-01-01T00:01:30.500Z"
    assert format_watermark(1_767_225_600_000) == "2026-01-01T00:00:00Z"


def batch_ids(
    spec: str, batches: list[dict[str, list[dict[str, object]]]]
) -> list[tuple[int, bool, str | None]]:
    result = run(plan_of(spec), trace_records(batches))
    return [(b.batch, b.data, b.watermark) for b in result.batches]


def test_no_data_batch_follows_a_watermark_advance() -> None:
    got = batch_ids(
        range_spec("INNER"),
        [{"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]}, {"l": [row(1, 85, "c")]}],
    )
    assert got == [
        (0, True, "1970-01-01T00:00:00Z"),
        (1, False, "1970-01-01T00:01:30Z"),
        (2, True, "1970-01-01T00:01:30Z"),
    ]


def test_no_no_data_batch_without_state_predicate_or_when_disabled() -> None:
    steps = [{"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]}, {"l": [row(1, 200, "c")]}]
    assert [b for b, _, _ in batch_ids(range_spec("INNER", "L.k = R.k"), steps)] == [0, 1]
    off = range_spec("INNER", header="spark 4.3\nset no_data_micro_batches = false\n")
    assert [d for _, d, _ in batch_ids(off, steps)] == [True, True]


def test_trace_batch_values_only_group_rows() -> None:
    plan = plan_of(range_spec("INNER"))
    records = trace_records([{"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]}])
    records += [{"batch": 70, "stream": "l", "row": row(1, 101, "c")}]
    records[0]["batch"] = records[1]["batch"] = 12
    assert [(b.batch, b.data) for b in run(plan, records).batches] == [
        (0, True),
        (1, False),
        (2, True),
    ]


def test_no_watermark_reports_null() -> None:
    spec = (
        "spark 4.3\n"
        + two_streams(None, None)
        + ("join j = l AS L INNER JOIN r AS R ON L.k = R.k\n")
    )
    assert batch_ids(spec, [{"l": [row(1, 100, "a")]}, {"r": [row(1, 1, "b")]}]) == [
        (0, True, None),
        (1, True, None),
    ]


def test_a_batch_of_unrelated_streams_runs_no_batch() -> None:
    spec = range_spec("INNER") + "stream other (x BIGINT)\n"
    plan = plan_of(spec)
    records = trace_records(
        [{"l": [row(1, 100, "a")]}, {"other": [{"x": 1}]}, {"r": [row(1, 100, "b")]}]
    )
    assert [(b.batch, b.data) for b in run(plan, records).batches] == [
        (0, True),
        (1, True),
        (2, False),
    ]
