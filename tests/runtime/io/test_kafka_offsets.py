"""Spark's Kafka source cutting a backlog into micro-batches (runtime/io/kafka_offsets.py): the
rate limit of ``maxOffsetsPerTrigger`` and the starting offsets.  The cuts of the first cases
are the ones Spark 4.3 made on a real broker; tests/integration/kafka/test_replay_on_spark.py
checks the replay against Spark's own progress reports."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sjoin.runtime.io.kafka_offsets import (
    LONG_MAX,
    OffsetError,
    cut_source,
    micro_batches,
    parse_limit,
    parse_starting,
    rate_limit,
    resolve_starting,
)

L0, L1, R0, R1 = ("L", 0), ("L", 1), ("R", 0), ("R", 1)


def ranges(cuts):  # type: ignore[no-untyped-def]
    return [[cut[tp] for tp in sorted(cut)] for cut in cuts]


def test_spark_cut_seven_and_three_records_at_four_a_batch() -> None:
    # seen on Spark 4.3: 10 records, limit 4 -> 2.8 -> 2 and 1.2 -> 1, then 5/7 and 2/7 of 4
    cuts = cut_source({L0: 0, L1: 0}, {L0: 7, L1: 3}, 4)
    assert ranges(cuts) == [[(0, 2), (0, 1)], [(2, 4), (1, 2)], [(4, 7), (2, 3)]]


def test_a_partition_below_one_record_gets_one() -> None:
    # seen on Spark 4.3: 1 and 5 records at 3 a batch: 0.5 -> 1 (never starved), 2.5 -> 2
    cuts = cut_source({R0: 0, R1: 0}, {R0: 1, R1: 5}, 3)
    assert ranges(cuts) == [[(0, 1), (0, 2)], [(1, 1), (2, 5)]]


def test_so_a_batch_may_exceed_the_limit_by_a_record_per_partition() -> None:
    parts = [("t", p) for p in range(3)]
    cuts = cut_source(dict.fromkeys(parts, 0), dict.fromkeys(parts, 2), 1)
    assert ranges(cuts) == [[(0, 1)] * 3, [(1, 2)] * 3]
    # 3 * 40/44 = 2.7 -> 2 for the big one, 3/44 -> 1 for each small one: 6 records
    parts = [("t", p) for p in range(5)]
    end = {tp: 40 if tp[1] == 0 else 1 for tp in parts}
    assert ranges(cut_source(dict.fromkeys(parts, 0), end, 3))[0] == [(0, 2)] + [(0, 1)] * 4


def test_without_a_limit_one_batch_holds_everything() -> None:
    assert ranges(cut_source({L0: 5, L1: 0}, {L0: 9, L1: 2}, None)) == [[(5, 9), (0, 2)]]


def test_nothing_to_read_is_no_batch() -> None:
    assert cut_source({L0: 4}, {L0: 4}, 3) == []
    assert cut_source({L0: 4}, {L0: 4}, None) == []


def test_the_rate_limit_caps_an_offset_near_the_largest_long() -> None:
    start = {L0: LONG_MAX - 5, L1: 0}
    end = {L0: LONG_MAX, L1: 2**62}
    assert rate_limit(2**63 - 2, start, end) == {L0: LONG_MAX, L1: 2**62}


def test_a_source_that_has_read_everything_sits_out() -> None:
    left = cut_source({L0: 0}, {L0: 3}, 1)
    right = cut_source({R0: 0}, {R0: 1}, 1)
    batches = micro_batches({"l": left, "r": right})
    assert [sorted(b) for b in batches] == [["l", "r"], ["l"], ["l"]]
    assert batches[2]["l"] == {L0: (2, 3)}


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_refused(limit: int) -> None:
    with pytest.raises(OffsetError, match="positive integer"):
        cut_source({L0: 0}, {L0: 3}, limit)


def test_a_partition_without_a_start_is_refused() -> None:
    with pytest.raises(OffsetError, match="no starting offset for partition 1 of topic 'L'"):
        cut_source({L0: 0}, {L0: 3, L1: 3}, 2)


@given(
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=5),
    starts=st.lists(st.integers(0, 10**12), min_size=5, max_size=5),
    limit=st.one_of(st.none(), st.integers(1, 60)),
)
def test_cuts_cover_every_offset_once_in_order(sizes, starts, limit) -> None:  # type: ignore[no-untyped-def]
    parts = [("t", p) for p in range(len(sizes))]
    start = {tp: starts[p] for p, tp in enumerate(parts)}
    end = {tp: starts[p] + sizes[p] for p, tp in enumerate(parts)}
    cuts = cut_source(start, end, limit)
    for tp in parts:
        position = start[tp]
        for cut in cuts:
            a, b = cut[tp]
            assert a == position and b >= a
            position = b
        assert position == end[tp]
    for cut in cuts:
        taken = [b - a for a, b in cut.values()]
        assert sum(taken) > 0  # every batch reads something
        if limit is not None:  # the limit, plus one for each partition rounded up to one
            assert sum(taken) <= limit + sum(1 for n in taken if n == 1)
    if limit is None:
        assert len(cuts) == (1 if any(sizes) else 0)


@pytest.mark.parametrize(
    ("text", "value"),
    [("4", 4), (" 12 ", 12), (None, None)],
)
def test_limits_as_the_spec_gives_them(text: str | None, value: int | None) -> None:
    assert parse_limit(text, "stream `s`") == value


@pytest.mark.parametrize("text", ["0", "-3", "abc", "1.5", ""])
def test_a_limit_that_is_no_positive_integer_is_refused(text: str) -> None:
    with pytest.raises(OffsetError, match="stream `s`: maxOffsetsPerTrigger must be a positive"):
        parse_limit(text, "stream `s`")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("earliest", "earliest"),
        (" Latest ", "latest"),
        ('{"L": {"0": 5, "1": -2}}', {"L": {0: 5, 1: -2}}),
    ],
)
def test_starting_offsets_as_spark_reads_them(text: str, value: object) -> None:
    assert parse_starting(text, "here") == value


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("oldest", "must be earliest, latest or JSON"),
        ("[1]", "must be earliest, latest or JSON"),
        ("{}", "must be earliest, latest or JSON"),
        ('{"L": 5}', "must map partitions to offsets"),
        ('{"L": {}}', "must map partitions to offsets"),
        ('{"L": {"a": 5}}', "a partition is a number"),
        ('{"L": {"-1": 5}}', "a partition is a number"),
        ('{"L": {"0": -3}}', "an offset is a number >= 0"),
        ('{"L": {"0": "5"}}', "an offset is a number >= 0"),
        ('{"L": {"0": true}}', "an offset is a number >= 0"),
        ('{"L": {"0": 1.5}}', "an offset is a number >= 0"),
    ],
)
def test_starting_offsets_that_cannot_be_read(text: str, says: str) -> None:
    with pytest.raises(OffsetError, match=says):
        parse_starting(text, "here")


EARLIEST = {L0: 2, L1: 0}
LATEST = {L0: 9, L1: 4}


@pytest.mark.parametrize(
    ("starting", "offsets"),
    [
        ("earliest", {L0: 2, L1: 0}),
        ("latest", {L0: 9, L1: 4}),
        ({"L": {0: 5, 1: -2}}, {L0: 5, L1: 0}),
        ({"L": {0: -1, 1: 4}}, {L0: 9, L1: 4}),
    ],
)
def test_resolved_starting_offsets(starting: object, offsets: dict[object, int]) -> None:
    assert resolve_starting(starting, [L0, L1], EARLIEST, LATEST, "here") == offsets  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("starting", "says"),
    [
        ({"L": {0: 5}}, "it lacks partition 1 of topic 'L'"),
        ({"L": {0: 5, 1: 0, 2: 0}}, "it names partition 2 of topic 'L', which the source"),
        ({"L": {0: 1, 1: 0}}, "offset 1 for partition 0 of topic 'L', which holds offsets 2 to 8"),
        ({"L": {0: 10, 1: 0}}, "its next offset is 9"),
    ],
)
def test_starting_offsets_the_topics_do_not_hold(starting: object, says: str) -> None:
    with pytest.raises(OffsetError, match=says):
        resolve_starting(starting, [L0, L1], EARLIEST, LATEST, "here")  # type: ignore[arg-type]
