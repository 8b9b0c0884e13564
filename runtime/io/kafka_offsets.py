"""Spark's Kafka source, its deterministic part: where a query starts reading a topic
(``startingOffsets``) and how it cuts what it finds there into micro-batches
(``maxOffsetsPerTrigger``).  Pure arithmetic on offsets, no Kafka client: the replay
(``kafka_trace.py``) asks the broker for the offsets and cuts them here.

The cutting rule is ``KafkaMicroBatchStream.latestOffset`` with its ``rateLimit`` (Spark's
``connector/kafka-0-10-sql``, the same in 3.5 and 4.x): from the offsets where a batch
starts, each partition with ``size`` records left gets ``limit * (size / total)`` of them
(a double), rounded down, but up to 1 when it is below 1 so that no partition starves; a
partition never goes past its end.  So a batch may hold a few more records than the limit
(one per partition at most), and a source with no limit reads everything in one batch.
Each source (a stream of the spec) is limited on its own; the sources of one query read
their k-th cut in its k-th micro-batch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypeAlias

Partition: TypeAlias = tuple[str, int]  # (topic, partition)
Offsets: TypeAlias = dict[Partition, int]
Range: TypeAlias = tuple[int, int]  # [from, until) of one partition in one batch
Cut: TypeAlias = dict[Partition, Range]
Starting: TypeAlias = Literal["earliest", "latest"] | dict[str, dict[int, int]]

LONG_MAX = 2**63 - 1
EARLIEST, LATEST = -2, -1  # the offsets a startingOffsets JSON uses for "earliest", "latest"

__all__ = [
    "Cut",
    "OffsetError",
    "Offsets",
    "Partition",
    "cut_source",
    "micro_batches",
    "parse_limit",
    "parse_starting",
    "rate_limit",
    "resolve_starting",
]


class OffsetError(ValueError):
    """An offset option that cannot be used; the message is fit for the user."""


def rate_limit(limit: int, start: Mapping[Partition, int], end: Mapping[Partition, int]) -> Offsets:
    """Where a batch that starts at ``start`` ends when at most ``limit`` offsets may be
    read and ``end`` is what the partitions hold: Spark's ``rateLimit``, double arithmetic
    and all."""
    sizes = {tp: until - start[tp] for tp, until in end.items() if until - start[tp] > 0}
    total = float(sum(sizes.values()))
    if total < 1:
        return dict(end)
    out: Offsets = {}
    for tp, until in end.items():
        size = sizes.get(tp)
        if size is None:
            out[tp] = until
            continue
        begin = start[tp]
        prorate = limit * (size / total)
        share = math.ceil(prorate) if prorate < 1 else math.floor(prorate)
        offset = LONG_MAX if share > LONG_MAX - begin else begin + share
        out[tp] = min(until, offset)
    return out


def cut_source(
    start: Mapping[Partition, int], end: Mapping[Partition, int], limit: int | None
) -> list[Cut]:
    """Every micro-batch of one source, from ``start`` until ``end``: each batch's range per
    partition (partitions without records in it included, as an empty range).  Without a
    limit, one batch holds everything; nothing to read, no batch."""
    if limit is not None and limit < 1:
        raise OffsetError(f"maxOffsetsPerTrigger must be a positive integer, got {limit}")
    missing = sorted(set(end) - set(start))
    if missing:
        raise OffsetError(f"no starting offset for {_names(missing)}")
    current = {tp: start[tp] for tp in end}
    cuts: list[Cut] = []
    while any(end[tp] > current[tp] for tp in end):
        following = dict(end) if limit is None else rate_limit(limit, current, end)
        cuts.append({tp: (current[tp], max(current[tp], following[tp])) for tp in sorted(end)})
        current = following
    return cuts


def micro_batches(sources: Mapping[str, Sequence[Cut]]) -> list[dict[str, Cut]]:
    """The micro-batches of a query reading ``sources`` (stream -> its cuts): batch k holds
    the k-th cut of every source that has one (a source that has read everything sits out)."""
    count = max((len(cuts) for cuts in sources.values()), default=0)
    return [
        {stream: cuts[k] for stream, cuts in sources.items() if k < len(cuts)} for k in range(count)
    ]


def parse_limit(text: str | None, where: str) -> int | None:
    """``maxOffsetsPerTrigger`` as the spec gives it (a string), or None."""
    if text is None:
        return None
    try:
        value = int(text.strip())
    except ValueError:
        raise OffsetError(
            f"{where}: maxOffsetsPerTrigger must be a positive integer, got {text!r}"
        ) from None
    if value < 1:
        raise OffsetError(f"{where}: maxOffsetsPerTrigger must be a positive integer, got {value}")
    return value


MAX_PARTITION = 2**31 - 1  # a partition is an Int in Spark's startingOffsets JSON
MAX_OFFSET = 2**63 - 1  # an offset a Long


def _shown(value: object, limit: int = 60) -> str:
    """``value`` quoted for a message, its middle left out past ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit // 2]}...{text[-limit // 4 :]}"


def _json_depth(text: str) -> int:
    """How deep the objects and arrays of the JSON ``text`` nest (strings skipped), read
    without parsing, so that JSON nested 30,000 deep is refused before ``json.loads``."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def parse_starting(text: str, where: str) -> Starting:
    """``startingOffsets``: ``earliest``, ``latest`` (any case, as Spark reads them) or
    Spark's JSON, ``{"topic": {"0": 23, "1": -2}}`` with -2 for earliest and -1 for latest."""
    word = text.strip().lower()
    if word in ("earliest", "latest"):
        return "earliest" if word == "earliest" else "latest"
    example = '{"orders": {"0": 23, "1": -2}} (-2: earliest, -1: latest)'
    depth = _json_depth(text)
    if depth > 2:
        raise OffsetError(
            f"{where}: startingOffsets nests {depth:,} levels deep; it is JSON of two, a topic "
            f"and its partitions, such as {example}"
        )
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not data:
        raise OffsetError(
            f"{where}: startingOffsets must be earliest, latest or JSON such as {example}, "
            f"got {_shown(text)}"
        )
    out: dict[str, dict[int, int]] = {}
    for topic, partitions in data.items():
        if not isinstance(partitions, dict) or not partitions:
            raise OffsetError(
                f"{where}: startingOffsets for topic {topic!r} must map partitions to offsets, "
                f"e.g. {example}"
            )
        offsets: dict[int, int] = {}
        for key, value in partitions.items():
            if not (
                isinstance(key, str)
                and key.isascii()
                and key.isdigit()
                and len(key) <= 10
                and int(key) <= MAX_PARTITION
            ):
                raise OffsetError(
                    f"{where}: startingOffsets names partition {_shown(key)} of topic "
                    f"{_shown(topic)}; a partition is a number from 0 to {MAX_PARTITION} "
                    "(Spark's Int)"
                )
            if type(value) is not int or not EARLIEST <= value <= MAX_OFFSET:
                raise OffsetError(
                    f"{where}: startingOffsets gives {_shown(value)} for partition {key} of "
                    f"topic {_shown(topic)}; an offset is a number >= 0 and at most {MAX_OFFSET} "
                    "(Spark's Long), or -2 (earliest) or -1 (latest)"
                )
            offsets[int(key)] = value
        out[topic] = offsets
    return out


def resolve_starting(
    starting: Starting,
    partitions: Iterable[Partition],
    earliest: Mapping[Partition, int],
    latest: Mapping[Partition, int],
    where: str,
    *,
    shared: bool = False,
) -> Offsets:
    """The first offset to read of each partition.  Specific offsets must name every
    partition of the source's topics (Spark asserts the same) and lie within what the
    partition holds: an offset the topic no longer has is data loss, which Spark's job
    fails on by default.  ``shared`` (``--starting-offsets``, one JSON for every source):
    the source takes the entries of its own topics, and a partition they do not name starts
    at the earliest offset."""
    wanted = sorted(partitions)
    if starting == "earliest":
        return {tp: earliest[tp] for tp in wanted}
    if starting == "latest":
        return {tp: latest[tp] for tp in wanted}
    given = {(topic, p): offset for topic, parts in starting.items() for p, offset in parts.items()}
    if shared:
        topics = {t for t, _ in wanted}
        given = {tp: offset for tp, offset in given.items() if tp[0] in topics}
        given = {tp: given.get(tp, EARLIEST) for tp in wanted} | given
    if set(given) != set(wanted):
        unknown = sorted(set(given) - set(wanted))
        absent = sorted(set(wanted) - set(given))
        detail = "; ".join(
            part
            for part in (
                f"it names {_names(unknown)}, which the source does not read" if unknown else "",
                f"it lacks {_names(absent)}" if absent else "",
            )
            if part
        )
        raise OffsetError(
            f"{where}: startingOffsets must name every partition of the source's topics "
            f"(-2: earliest, -1: latest): {detail}"
        )
    out: Offsets = {}
    for tp in wanted:
        offset = given[tp]
        if offset == EARLIEST:
            offset = earliest[tp]
        elif offset == LATEST:
            offset = latest[tp]
        elif not earliest[tp] <= offset <= latest[tp]:
            holds = (
                f"offsets {earliest[tp]} to {latest[tp] - 1}"
                if latest[tp] > earliest[tp]
                else "no records"
            )
            raise OffsetError(
                f"{where}: startingOffsets gives offset {offset} for {_names([tp])}, which "
                f"holds {holds} (its next offset is {latest[tp]})"
            )
        out[tp] = offset
    return out


def _names(partitions: Sequence[Partition]) -> str:
    return ", ".join(f"partition {p} of topic {t!r}" for t, p in partitions)
