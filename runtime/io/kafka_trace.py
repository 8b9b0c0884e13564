"""Replay a spec's Kafka topics as a trace: ``sjoin run SPEC --trace kafka://HOST:PORT`` and
``sjoin capture SPEC --from kafka://HOST:PORT -o TRACE`` (docs/kafka.md, "Replaying a topic
with sjoin run").

Each stream read ``from kafka`` is a source: its topics (``topic``/``subscribe``, a comma
list; ``subscribePattern``; ``assign``) on the URL's brokers (``kafka://`` alone: the spec's
own ``bootstrap_servers``).  The replay reads every partition from the starting offsets
(``--starting-offsets``, else the spec's ``startingOffsets`` when it names offsets or
``earliest``, else the earliest) to the offsets the partition holds when the replay starts,
with confluent-kafka (``pip install 'sjoin[kafka]'``), and cuts them into micro-batches as
Spark's Kafka source does when a query starts on that backlog (``kafka_offsets``): with
``maxOffsetsPerTrigger`` (the spec's, or ``--max-offsets-per-trigger``) by Spark's rate
limit, each source on its own; without it, everything in one batch.  The batches run back to
back (``Trace.backlog``), as Spark runs them.  Each record's value becomes a row as the
generated job's ``from_json``/``from_csv`` reads it, the columns its source maps to the
record's timestamp and key taken from those (``kafka_values``); a record Spark reads
with a fault is a bad row at its topic, partition and offset, under the usual policy
(``--bad-rows stop|skip|FILE``).  In a stream's batch, rows are in topic, partition and
offset order.
"""

from __future__ import annotations

import bisect
import json
import logging
import os
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ...compiler.planning.plan import Plan, StreamNode
from ...compiler.vocabulary.model import Format
from ..engine.batches import Rows
from ..engine.values import dumps, json_converter
from ..errors import UsageError
from ..query import query_roots
from .files import cannot_write, open_named
from .kafka_offsets import (
    Cut,
    OffsetError,
    Offsets,
    Partition,
    Starting,
    cut_source,
    micro_batches,
    parse_limit,
    parse_starting,
    resolve_starting,
)
from .kafka_values import Payload, RecordFault, record_reader, session_zone
from .trace import (
    BadRow,
    BadRowPolicy,
    Span,
    StreamedBatches,
    Trace,
    TraceBatch,
    TraceError,
    schemas_of,
    write_bad_rows,
)

__all__ = ["KAFKA_SCHEME", "Replay", "StreamSource", "is_kafka_url", "read_kafka", "write_trace"]

KAFKA_SCHEME = "kafka://"
_SERVERS = ("bootstrap_servers", "kafka.bootstrap.servers")
_STRATEGIES = ("topic", "subscribe", "subscribepattern", "assign")
_ADDRESS = re.compile(r"[A-Za-z0-9._\-]+:[0-9]{1,5}|\[[0-9A-Fa-f:.]+\]:[0-9]{1,5}", re.ASCII)
# records are read until every partition reaches its end; this long without a record or an
# end-of-partition event from the broker is a failure, said so
READ_TIMEOUT_S = 30.0
# Kafka's own topics, which a pattern subscription leaves out (exclude.internal.topics)
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
METADATA_TIMEOUT_S = 10.0


def is_kafka_url(text: str | os.PathLike[str]) -> bool:
    return isinstance(text, str) and text.startswith(KAFKA_SCHEME)


def parse_url(url: str) -> str | None:
    """The brokers of ``kafka://HOST:PORT[,HOST:PORT...]`` as a bootstrap list, or None for
    ``kafka://`` (the spec's own ``bootstrap_servers``)."""
    if not is_kafka_url(url):
        raise UsageError(f"{url!r} is not a Kafka URL; write kafka://HOST:PORT")
    rest = url[len(KAFKA_SCHEME) :].rstrip("/")
    if not rest:
        return None
    shown = repr(url) if len(url) <= 80 else repr(url[:60] + "...")
    addresses = check_servers(rest, shown)
    for address in addresses:
        port = address.rsplit(":", 1)[-1]
        if not _ADDRESS.fullmatch(address) or not 0 < int(port) < 65536:
            raise UsageError(
                f"{shown}: {address!r} is not HOST:PORT; write kafka://HOST:PORT (or "
                "kafka://HOST:PORT,HOST:PORT, or kafka:// for the spec's bootstrap_servers)"
            )
    return ",".join(addresses)


MAX_BROKERS = 100  # addresses in one bootstrap list
MAX_ADDRESS = 260  # characters of one: a host name has at most 253, then :PORT


def check_servers(text: str, where: str) -> list[str]:
    """The addresses of a bootstrap list, bounded before it reaches the Kafka client
    (librdkafka aborts the process on some thousands of them): at most ``MAX_BROKERS``,
    each at most ``MAX_ADDRESS`` characters."""
    addresses = text.split(",")
    if len(addresses) > MAX_BROKERS:
        raise UsageError(
            f"{where} names {len(addresses):,} brokers; a bootstrap list needs a few, and "
            f"sjoin takes at most {MAX_BROKERS}"
        )
    for address in addresses:
        if len(address.strip()) > MAX_ADDRESS:
            raise UsageError(
                f"{where}: a broker address of {len(address.strip()):,} characters; HOST:PORT "
                f"has at most {MAX_ADDRESS} (a host name at most 253)"
            )
    return addresses


class Record(NamedTuple):
    """One record as the replay reads it: what Spark's job reads of it."""

    offset: int
    value: bytes | None
    key: bytes | None
    timestamp: int  # milliseconds since the epoch


@dataclass(frozen=True)
class StreamSource:
    """What the replay reads for one stream: the spec's ``from kafka`` options as Spark's
    Kafka source reads them, and the command line's overrides applied."""

    stream: str
    servers: str
    topics: tuple[str, ...] = ()  # subscribe / topic
    pattern: str | None = None  # subscribePattern
    assign: tuple[Partition, ...] = ()  # assign
    payload: Payload = "json"
    limit: int | None = None  # maxOffsetsPerTrigger
    starting: Starting = "earliest"
    shared_starting: bool = False  # `starting` is --starting-offsets, for every source
    # columns read from the record, not its value: column -> "timestamp" / "key"
    record_columns: tuple[tuple[str, Literal["timestamp", "key"]], ...] = ()

    def describe(self) -> str:
        if self.pattern is not None:
            what = f"topics matching {self.pattern!r}"
        elif self.assign:
            what = ", ".join(f"{t}/{p}" for t, p in self.assign)
        else:
            what = ", ".join(self.topics)
        limit = f"at most {self.limit} offsets a batch" if self.limit else "one batch"
        mapped = "".join(f"; `{c}` its {f}" for c, f in self.record_columns)
        return f"`{self.stream}`: {what} on {self.servers} ({self.payload}{mapped}; {limit})"


@dataclass
class Replay:
    """A replayed backlog: the trace, and each micro-batch's offset range per stream and
    partition (``batches[k][stream][(topic, partition)] = (from, until)``)."""

    trace: Trace
    sources: dict[str, StreamSource]
    batches: list[dict[str, Cut]]
    notes: list[str] = field(default_factory=list)

    def describe_batches(self) -> list[str]:
        """A line per micro-batch: the offsets each stream reads, ``topic/partition [a, b)``."""
        lines = []
        for k, batch in enumerate(self.batches):
            parts = []
            for stream, cut in batch.items():
                ranges = " ".join(f"{t}/{p} [{a}, {b})" for (t, p), (a, b) in cut.items() if b > a)
                if ranges:
                    parts.append(f"`{stream}` {ranges}")
            lines.append(f"batch {k}: " + "; ".join(parts))
        return lines


def read_kafka(
    plan: Plan,
    url: str,
    *,
    relation: str | None = None,
    max_offsets: int | None = None,
    starting: str | None = None,
    bad_rows: BadRowPolicy = "stop",
) -> Replay:
    """Read the Kafka sources of the streams that the run's queries read (those of
    ``relation``'s query, else all) into a backlog trace.  Raises ``UsageError`` for a URL,
    an option or a broker that cannot be used, ``TraceError`` for bad records under
    ``stop``."""
    servers = parse_url(url)
    if max_offsets is not None and max_offsets < 1:
        raise UsageError(f"--max-offsets-per-trigger must be a positive integer, got {max_offsets}")
    notes: list[str] = []
    sources = _sources(plan, servers, relation, max_offsets, starting, notes)
    groups: dict[str, list[StreamSource]] = {}
    for source in sources.values():
        groups.setdefault(source.servers, []).append(source)
    shown = url if servers is not None or len(groups) != 1 else KAFKA_SCHEME + next(iter(groups))
    cuts: dict[str, list[Cut]] = {}
    read_topics: set[str] = set()
    for group_servers, group in groups.items():
        with _Client(group_servers) as client:
            for source in group:
                start, end = client.offsets(source)
                read_topics.update(t for t, _ in end)
                cuts[source.stream] = _cut(source, start, end)
    shared = next(iter(sources.values())).starting if starting is not None else "earliest"
    unread = sorted(set(shared) - read_topics) if isinstance(shared, dict) else []
    if unread:
        raise UsageError(
            f"--starting-offsets names {', '.join(repr(t) for t in unread)}, which no replayed "
            "stream reads"
        )
    batches = micro_batches({s: cuts[s] for s in sources})
    trace = _trace(plan, shown, sources, batches, bad_rows)
    return Replay(trace, sources, batches, notes)


def _cut(source: StreamSource, start: Offsets, end: Offsets) -> list[Cut]:
    try:
        return cut_source(start, end, source.limit)
    except OffsetError as err:  # pragma: no cover - limits are checked when read
        raise UsageError(f"stream `{source.stream}`: {err}") from None


def _option(target: Format, name: str) -> str | None:
    """An option of the spec's source, its name matched as Spark matches it (any case)."""
    wanted = name.lower()
    for key, value in target.options:
        if key.lower() == wanted:
            return value
    return None


def _sources(
    plan: Plan,
    servers: str | None,
    relation: str | None,
    max_offsets: int | None,
    starting: str | None,
    notes: list[str],
) -> dict[str, StreamSource]:
    needed: list[StreamNode] = []
    for root in query_roots(plan, relation):
        for node in plan.closure(root):
            if isinstance(node, StreamNode) and node not in needed:
                needed.append(node)
    needed.sort(key=lambda n: [s.name for s in plan.streams].index(n.name))
    if not needed:
        raise UsageError("the spec has no join or aggregate reading a stream: nothing to replay")
    other = [
        f"`{n.name}` ({'no `from`' if n.source is None else f'`from {n.source.format}`'})"
        for n in needed
        if n.source is None or n.source.format != "kafka"
    ]
    if other:
        raise UsageError(
            f"the replay reads Kafka sources only, and these streams are not read `from kafka`: "
            f"{', '.join(other)}; run them from a trace file, or replay one query with "
            "--relation"
        )
    trigger = plan.settings.trigger
    sources = {}
    for node in needed:
        assert node.source is not None
        sources[node.name] = _source(
            node, node.source, servers, max_offsets, starting, trigger, notes
        )
    return sources


def _source(
    node: StreamNode,
    target: Format,
    servers: str | None,
    max_offsets: int | None,
    starting: str | None,
    trigger: str,
    notes: list[str],
) -> StreamSource:
    where = f"stream `{node.name}`"
    spec_servers = next((v for k, v in target.options if k.lower() in _SERVERS), None)
    chosen = servers or spec_servers
    if not chosen:
        raise UsageError(
            f"{where} names no bootstrap_servers; give them in the URL, kafka://HOST:PORT"
        )
    check_servers(chosen, f"{where}: bootstrap_servers")
    given = [k for k, _ in target.options if k.lower() in _STRATEGIES]
    if len(given) != 1:
        raise UsageError(
            f"{where}: a Kafka source reads one of topic, subscribe, subscribePattern or assign, "
            f"and it gives {', '.join(given) or 'none'}"
        )
    key = given[0].lower()
    value = _option(target, key) or ""
    topics: tuple[str, ...] = ()
    pattern = None
    assign: tuple[Partition, ...] = ()
    if key in ("topic", "subscribe"):
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise UsageError(f"{where}: `{given[0]}` names no topic")
    elif key == "subscribepattern":
        try:
            re.compile(value)
        except re.error as err:
            raise UsageError(
                f"{where}: subscribePattern {value!r} is not a pattern: {err}"
            ) from None
        pattern = value
    else:
        assign = _assign(value, where)
    payload = _option(target, "format") or "json"
    if payload not in ("json", "csv"):
        raise UsageError(
            f"{where}: format {payload!r}: the replay reads values as the generated job does, "
            "with from_json (format 'json', the default) or from_csv (format 'csv')"
        )
    try:
        limit = (
            max_offsets
            if max_offsets is not None
            else parse_limit(_option(target, "maxOffsetsPerTrigger"), where)
        )
        start = _starting(target, starting, where, notes)
    except OffsetError as err:
        raise UsageError(str(err)) from None
    if trigger == "once" and limit is not None:
        notes.append(
            f"{where}: trigger 'once' reads everything available in one batch, so "
            "maxOffsetsPerTrigger does not apply (as in Spark)"
        )
        limit = None
    if _option(target, "minOffsetsPerTrigger") is not None:
        notes.append(
            f"{where}: minOffsetsPerTrigger delays a batch by the clock (maxTriggerDelay); the "
            "replay cuts batches as if each delay had passed"
        )
    return StreamSource(
        node.name,
        chosen,
        topics,
        pattern,
        assign,
        "csv" if payload == "csv" else "json",
        limit,
        start,
        shared_starting=starting is not None,
        record_columns=tuple(target.record_columns().items()),
    )


def _starting(target: Format, starting: str | None, where: str, notes: list[str]) -> Starting:
    if starting is not None:
        return parse_starting(starting, "--starting-offsets")
    by_time = [
        k
        for k in ("startingTimestamp", "startingOffsetsByTimestamp")
        if _option(target, k) is not None
    ]
    if by_time:
        raise UsageError(
            f"{where}: the replay does not look offsets up by time ({by_time[0]}); give "
            "--starting-offsets earliest, latest or JSON offsets"
        )
    text = _option(target, "startingOffsets")
    if text is None:
        return "earliest"
    parsed = parse_starting(text, where)
    if parsed == "latest":
        notes.append(
            f"{where}: the job starts at the latest offsets (startingOffsets = 'latest'), "
            "reading only records that arrive after it starts; the replay reads the topics "
            "from the earliest offsets (--starting-offsets chooses)"
        )
        return "earliest"
    return parsed


def _assign(text: str, where: str) -> tuple[Partition, ...]:
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    ok = isinstance(data, dict) and all(
        isinstance(ps, list) and all(type(p) is int and p >= 0 for p in ps) for ps in data.values()
    )
    if not ok or not data:
        raise UsageError(f'{where}: assign must be JSON such as {{"orders": [0, 1]}}, got {text!r}')
    return tuple(sorted((str(t), p) for t, ps in data.items() for p in ps))


# ---------------------------------------------------------------------------- the client


class _Client:
    """One consumer on one set of brokers, assigned partitions explicitly (no group
    membership, nothing committed)."""

    def __init__(self, servers: str) -> None:
        try:
            from confluent_kafka import Consumer, KafkaException
        except ImportError:
            raise UsageError(
                "replaying Kafka needs confluent-kafka: pip install 'sjoin[kafka]'"
            ) from None
        quiet = logging.getLogger("sjoin.kafka")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        self.servers = servers
        try:
            self.consumer = self._consumer(Consumer, quiet)
        except KafkaException as err:  # pragma: no cover - librdkafka checks addresses later
            raise UsageError(f"cannot connect to Kafka at {servers}: {err}") from None
        self._topics: dict[str, list[int]] | None = None

    def _consumer(self, make: Any, quiet: logging.Logger) -> Any:
        return make(
            {
                "bootstrap.servers": self.servers,
                "group.id": f"sjoin-replay-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "error",
                # Spark's Kafka source reads with the Java client's default
                "isolation.level": "read_uncommitted",
                "logger": quiet,
            }
        )

    def __enter__(self) -> _Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.consumer.close()

    def _fail(self, what: str, err: Exception) -> UsageError:
        detail = err.args[0].str() if err.args and hasattr(err.args[0], "str") else str(err)
        return UsageError(f"cannot {what} from Kafka at {self.servers}: {detail}")

    def topics(self) -> dict[str, list[int]]:
        if self._topics is None:
            from confluent_kafka import KafkaException

            try:
                meta = self.consumer.list_topics(timeout=METADATA_TIMEOUT_S)
            except KafkaException as err:
                raise self._fail("read the topics", err) from None
            self._topics = {
                name: sorted(t.partitions) for name, t in meta.topics.items() if t.error is None
            }
        return self._topics

    def partitions(self, source: StreamSource) -> list[Partition]:
        topics = self.topics()
        if source.pattern is not None:
            matched = sorted(
                t for t in topics if t not in INTERNAL_TOPICS and re.fullmatch(source.pattern, t)
            )
            if not matched:
                raise UsageError(
                    f"stream `{source.stream}`: no topic on {self.servers} matches "
                    f"{source.pattern!r}"
                )
            return [(t, p) for t in matched for p in topics[t]]
        wanted = sorted({t for t, _ in source.assign}) if source.assign else list(source.topics)
        missing = [t for t in wanted if t not in topics]
        if missing:
            held = ", ".join(sorted(t for t in topics if t not in INTERNAL_TOPICS)) or "none"
            raise UsageError(
                f"stream `{source.stream}`: no topic {', '.join(repr(t) for t in missing)} on "
                f"{self.servers} (it has {held})"
            )
        if source.assign:
            absent = [(t, p) for t, p in source.assign if p not in topics[t]]
            if absent:
                raise UsageError(
                    f"stream `{source.stream}`: assign names "
                    + ", ".join(f"partition {p} of topic {t!r}" for t, p in absent)
                    + ", which the broker does not have"
                )
            return list(source.assign)
        return [(t, p) for t in sorted(set(wanted)) for p in topics[t]]

    def offsets(self, source: StreamSource) -> tuple[Offsets, Offsets]:
        """Where the source starts and what each of its partitions holds now."""
        from confluent_kafka import KafkaException, TopicPartition

        partitions = self.partitions(source)
        earliest: Offsets = {}
        latest: Offsets = {}
        for tp in partitions:
            try:
                low, high = self.consumer.get_watermark_offsets(
                    TopicPartition(*tp), timeout=METADATA_TIMEOUT_S
                )
            except KafkaException as err:
                raise self._fail(f"read the offsets of {tp[0]}/{tp[1]}", err) from None
            earliest[tp], latest[tp] = low, high
        try:
            start = resolve_starting(
                source.starting,
                partitions,
                earliest,
                latest,
                f"stream `{source.stream}`",
                shared=source.shared_starting,
            )
        except OffsetError as err:
            raise UsageError(str(err)) from None
        return start, latest

    def read(self, ranges: Mapping[Partition, tuple[int, int]]) -> dict[Partition, list[Record]]:
        """Every record in ``[from, until)`` of each partition, in offset order (gaps, such
        as transaction markers, are the broker's)."""
        found: dict[Partition, list[Record]] = {tp: [] for tp in ranges}
        self.scan(ranges, lambda tp, record: found[tp].append(record))
        return found

    def scan(
        self,
        ranges: Mapping[Partition, tuple[int, int]],
        visit: Callable[[Partition, Record], None],
    ) -> None:
        """``visit`` each record in ``[from, until)`` of each partition as it arrives, in
        offset order within a partition, holding none of them."""
        from confluent_kafka import KafkaError, KafkaException, TopicPartition

        waiting = {tp for tp, (start, until) in ranges.items() if until > start}
        if not waiting:
            return
        try:
            self.consumer.assign(
                [TopicPartition(t, p, ranges[(t, p)][0]) for t, p in sorted(waiting)]
            )
            deadline = time.monotonic() + READ_TIMEOUT_S
            while waiting:
                message = self.consumer.poll(1.0)
                if message is None:
                    if time.monotonic() > deadline:
                        raise UsageError(
                            f"Kafka at {self.servers} sent nothing for {READ_TIMEOUT_S:.0f} s "
                            "while the replay waited for "
                            + ", ".join(f"{t}/{p}" for t, p in sorted(waiting))
                        )
                    continue
                deadline = time.monotonic() + READ_TIMEOUT_S
                tp = (message.topic(), message.partition())
                error = message.error()
                offset = message.offset()
                if offset is None:  # pragma: no cover - records and end events have one
                    continue
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        if tp in waiting and offset >= ranges[tp][1]:
                            waiting.discard(tp)
                        continue
                    raise UsageError(
                        f"cannot read {tp[0]}/{tp[1]} from Kafka at {self.servers}: {error.str()}"
                    )
                if tp not in waiting:
                    continue
                start, until = ranges[tp]
                if start <= offset < until:
                    # the timestamp Spark reads, whatever its type (CreateTime: the
                    # producer's; LogAppendTime: the broker's)
                    _, stamp = message.timestamp()
                    visit(tp, Record(offset, message.value(), message.key(), stamp))
                if offset >= until - 1:
                    waiting.discard(tp)
        except KafkaException as err:
            raise self._fail("read records", err) from None


# ---------------------------------------------------------------------------- the trace


def _trace(
    plan: Plan,
    source: str,
    sources: Mapping[str, StreamSource],
    batches: list[dict[str, Cut]],
    policy: BadRowPolicy,
) -> Trace:
    """The replay's trace, streamed as a trace file is (``StreamedBatches``): a check pass
    reads every record once, reads its value as the job does and keeps only the bad rows
    (refused or handled by ``policy`` before anything runs) and which micro-batches have a
    good row; then each micro-batch's offset ranges are read again from the brokers as the
    run reaches it.  The records a replay reads end at the offsets the topics held when it
    started, so a second read gives the same records (unless the broker's retention deletes
    them while the run goes: a replay of a topic near its retention limit is best captured
    to a file first, ``sjoin capture``)."""
    schemas = schemas_of(plan)
    zone = session_zone(plan.settings.session_timezone)
    readers = {
        s: record_reader(schemas[s], src.payload, zone, dict(src.record_columns))
        for s, src in sources.items()
    }
    # per (servers, partition): each stream that reads it, its batches' offset ranges
    bounds: dict[tuple[str, Partition], list[tuple[str, list[int], list[int], list[int]]]] = {}
    ranges: dict[str, dict[Partition, tuple[int, int]]] = {}
    for stream, src in sources.items():
        per: dict[Partition, tuple[list[int], list[int], list[int]]] = {}
        for k, batch in enumerate(batches):
            for tp, (start, until) in batch.get(stream, {}).items():
                if until > start:
                    starts, ends, ks = per.setdefault(tp, ([], [], []))
                    starts.append(start)
                    ends.append(until)
                    ks.append(k)
                    low, high = ranges.setdefault(src.servers, {}).get(tp, (start, until))
                    ranges[src.servers][tp] = (min(low, start), max(high, until))
        for tp, (starts, ends, ks) in per.items():
            bounds.setdefault((src.servers, tp), []).append((stream, starts, ends, ks))
    good: set[int] = set()
    bad: list[tuple[tuple[int, int, int, int], BadRow]] = []
    for servers, wanted in ranges.items():
        with _Client(servers) as client:

            def visit(tp: Partition, record: Record, servers: str = servers) -> None:
                for stream, starts, ends, ks in bounds.get((servers, tp), ()):
                    i = bisect.bisect_right(starts, record.offset) - 1
                    if i < 0 or record.offset >= ends[i]:
                        continue
                    k = ks[i]
                    try:
                        readers[stream](record.value, record.key, record.timestamp)
                    except RecordFault as fault:
                        order = list(batches[k])
                        place = (k, order.index(stream), list(batches[k][stream]).index(tp))
                        bad.append(((*place, record.offset), _bad(fault, record, k, stream, tp)))
                        continue
                    good.add(k)

            client.scan(wanted, visit)
    found = [b for _, b in sorted(bad, key=lambda pair: pair[0])]
    if found:
        if policy == "stop":
            raise TraceError(source, found)
        if policy != "skip":
            write_bad_rows(Path(policy), found)
    # a batch all of whose records are bad rows: none (as in a captured file)
    spans = [Span(k, 0) for k in sorted(good)]
    clients: dict[str, _Client] = {}

    def load(span: Span) -> TraceBatch:
        k = span.value
        rows: dict[str, list[tuple[Any, ...]]] = {}
        for stream, cut in batches[k].items():
            servers = sources[stream].servers
            client = clients.get(servers)
            if client is None:
                client = clients[servers] = _Client(servers)
            wanted = {tp: r for tp, r in cut.items() if r[1] > r[0]}
            found = client.read(wanted)
            read = readers[stream]
            out = []
            for tp in wanted:
                for record in found[tp]:
                    try:
                        out.append(read(record.value, record.key, record.timestamp))
                    except RecordFault:
                        continue  # a bad row, which the check pass handled
            if out:
                rows[stream] = out
        return TraceBatch(k, {s: Rows(r) for s, r in rows.items()}, 0)

    def close() -> None:
        for client in clients.values():
            client.consumer.close()
        clients.clear()

    return Trace(source, StreamedBatches(spans, load, close), found, backlog=True)


def _bad(fault: RecordFault, record: Record, k: int, stream: str, tp: Partition) -> BadRow:
    value = record.value
    return BadRow(
        None,
        fault.reason,
        "" if value is None else value.decode("utf-8", "backslashreplace"),
        batch=k,
        stream=stream,
        record=(tp[0], tp[1], record.offset),
    )


def write_trace(plan: Plan, trace: Trace, path: str | os.PathLike[str]) -> int:
    """Write ``trace`` as a JSON-lines trace file (§7), one line per row, batch by batch and
    stream by stream in the spec's order; returns the number of lines."""
    columns = {
        s.name: [(c.name, json_converter(c.type.name)) for c in s.columns] for s in plan.streams
    }
    order = [s.name for s in plan.streams]
    count = 0
    try:
        with open_named(Path(path), "w", "the trace to ") as out:
            for batch in trace.batches:
                for stream in sorted(batch.rows, key=order.index):
                    names = columns[stream]
                    for row in batch.rows[stream].to_rows():
                        values = {
                            name: value if value is None or convert is None else convert(value)
                            for (name, convert), value in zip(names, row, strict=True)
                        }
                        out.write(
                            dumps({"batch": batch.value, "stream": stream, "row": values}) + "\n"
                        )
                        count += 1
    except OSError as err:
        raise cannot_write(path, err, "the trace to ") from None
    return count
