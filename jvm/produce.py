"""`sjoin produce SPEC --trace T --to kafka://HOST:PORT`: a trace's rows written into the
topics of the spec's Kafka sources, as `sjoin verify --kafka` writes them (``KafkaFeeder``,
the same code): each trace batch in order, a stream's row ``i`` into partition ``i mod n`` of
its topic (``n`` its partitions), keyed by ``i`` unless the source reads its key from a
column (``key_column``), stamped with the ``timestamp_column``'s time (CreateTime) or, when
there is none, the producer's clock, the value the JSON the job's ``from_json`` reads (the
mapped columns left out).  Then a user's own compiled job, or ``sjoin run --trace
kafka://...``, reads them (docs/kafka.md, "Producing a trace into Kafka").

Nothing is produced unless everything can be: the URL, the broker (reached within
``timeout_s``), every stream's topic and payload and every row's key and timestamp are
checked first.  Topics that do not exist are made with ``partitions`` partitions and no time
retention (a trace's old times would be deleted at once otherwise); an existing topic keeps
its partitions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ..compiler.planning.plan import Plan, StreamNode
from ..runtime.errors import RunError, UsageError
from ..runtime.io.kafka_trace import parse_url
from ..runtime.io.trace import Trace
from .kafka_driver import KafkaFeeder, create_topics, record_fields
from .verify import spark_row

__all__ = ["Produced", "produce_trace"]

DEFAULT_PARTITIONS = 2  # as verify --kafka makes its topics
MAX_PARTITIONS = 1000
DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Target:
    """Where one stream's rows go."""

    stream: str
    servers: str
    topic: str
    mapped: dict[str, str]  # column -> "timestamp" / "key" (Format.record_columns)


@dataclass
class Produced:
    """What was written: per stream its topic, servers, partitions and rows; the notes."""

    streams: dict[str, tuple[str, str, int, int]] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def targets(plan: Plan, url: str) -> tuple[dict[str, Target], list[str]]:
    """Each Kafka source's topic and brokers (``url``'s, or for ``kafka://`` the spec's
    ``bootstrap_servers``), and the streams that are read from elsewhere; ``UsageError``
    when the spec reads no stream from Kafka, or a source's topic cannot be told."""
    servers = parse_url(url)
    found: dict[str, Target] = {}
    elsewhere: list[str] = []
    for stream in plan.streams:
        source = stream.source
        if source is None or source.format != "kafka":
            how = "no `from`" if source is None else f"`from {source.format}`"
            elsewhere.append(f"`{stream.name}` ({how})")
            continue
        found[stream.name] = _target(stream, servers)
    if not found:
        raise UsageError(
            "the spec reads no stream `from kafka`, so there is no topic to produce into "
            "(produce writes a trace's rows into the topics of the spec's Kafka sources; "
            "`sjoin run --trace FILE` runs the trace itself)"
        )
    return found, elsewhere


def _target(stream: StreamNode, servers: str | None) -> Target:
    source = stream.source
    assert source is not None
    where = f"stream `{stream.name}`"
    options = {k.lower(): v for k, v in source.options}
    chosen = servers or options.get("bootstrap_servers") or options.get("kafka.bootstrap.servers")
    if not chosen:
        raise UsageError(
            f"{where} names no bootstrap_servers; give the brokers in the URL, kafka://HOST:PORT"
        )
    if "subscribepattern" in options or "assign" in options:
        how = "subscribePattern" if "subscribepattern" in options else "assign"
        raise UsageError(
            f"{where} reads its topics by {how}, which does not say which topic to write: "
            "produce writes the topic of `topic` or `subscribe`"
        )
    topics = [
        t.strip() for t in (options.get("topic") or options.get("subscribe") or "").split(",")
    ]
    topics = [t for t in topics if t]
    if len(topics) != 1:
        raise UsageError(
            f"{where} subscribes to {len(topics)} topics ({', '.join(topics) or 'none'}): "
            "produce writes one topic per stream"
        )
    payload = options.get("format") or "json"
    if payload != "json":
        raise UsageError(
            f"{where} reads {payload!r} values: produce writes JSON values, as `verify --kafka` "
            "does (a source of the default format 'json')"
        )
    return Target(stream.name, chosen, topics[0], dict(source.record_columns()))


def _partitions(servers: str, topics: list[str], timeout_s: float) -> dict[str, int]:
    """The partitions of each of ``topics`` that exists on ``servers``; ``UsageError`` when
    the brokers cannot be reached within ``timeout_s``."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

    quiet = logging.getLogger("sjoin.kafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    config: dict[str, Any] = {"bootstrap.servers": servers, "log_level": 3, "logger": quiet}
    admin = AdminClient(config)
    try:
        meta = admin.list_topics(timeout=timeout_s)
    except KafkaException as err:
        detail = err.args[0].str() if err.args and hasattr(err.args[0], "str") else str(err)
        raise UsageError(
            f"cannot reach Kafka at {servers} within {timeout_s:g} s: {detail}"
        ) from None
    return {
        t: len(meta.topics[t].partitions)
        for t in topics
        if t in meta.topics and meta.topics[t].error is None
    }


def produce_trace(
    plan: Plan,
    trace: Trace,
    url: str,
    *,
    partitions: int = DEFAULT_PARTITIONS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Produced:
    """Write ``trace``'s rows into the topics of ``plan``'s Kafka sources at ``url``
    (module docstring).  ``UsageError`` for what the command line or the spec gets wrong
    (nothing produced), ``RunError`` for a row no record can carry (nothing produced) or a
    record the broker refused."""
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        raise UsageError(
            "producing into Kafka needs confluent-kafka: pip install 'sjoin[kafka]'"
        ) from None
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise UsageError(f"--partitions must be 1 to {MAX_PARTITIONS}, got {partitions}")
    found, elsewhere = targets(plan, url)
    result = Produced()
    feeds = _feeds(plan, trace, found, elsewhere, result)
    if not feeds:
        raise UsageError(
            "the trace has no row of a stream read `from kafka` ("
            + ", ".join(f"`{s}`" for s in found)
            + "): nothing to produce"
        )
    # a row no record can carry fails before anything is produced
    for feed in feeds:
        for name, rows in feed.items():
            for row in rows:
                record_fields(name, row, found[name].mapped)
    used = {name for feed in feeds for name in feed}
    by_servers: dict[str, list[Target]] = {}
    for name in sorted(used, key=list(found).index):
        by_servers.setdefault(found[name].servers, []).append(found[name])
    counts = {
        servers: _topics_made(servers, group, partitions, timeout_s, result)
        for servers, group in by_servers.items()
    }
    for servers, group in by_servers.items():
        names = {t.stream for t in group}
        feeder = KafkaFeeder(
            servers,
            {t.stream: t.topic for t in group},
            {t.stream: counts[servers][t.topic] for t in group},
            {t.stream: t.mapped for t in group},
        )
        with feeder:
            for feed in feeds:
                mine = {name: rows for name, rows in feed.items() if name in names}
                if not mine:
                    continue
                try:
                    feeder.produce(mine)
                except RuntimeError as err:  # not every record acknowledged in time
                    raise RunError(f"Kafka at {servers}: {err}") from None
        for t in group:
            count = sum(len(feed.get(t.stream, [])) for feed in feeds)
            result.streams[t.stream] = (t.topic, servers, counts[servers][t.topic], count)
    return result


def _feeds(
    plan: Plan, trace: Trace, found: dict[str, Target], elsewhere: list[str], result: Produced
) -> list[dict[str, list[dict[str, Any]]]]:
    """The trace's batches as verify feeds them, only the Kafka streams' rows (batches with
    none left out); a note in ``result`` for each other stream's rows."""
    streams = {s.name: s for s in plan.streams}
    feeds: list[dict[str, list[dict[str, Any]]]] = []
    left_out: dict[str, int] = {}
    for batch in trace.batches:
        feed: dict[str, list[dict[str, Any]]] = {}
        for name, batch_rows in batch.rows.items():
            if name not in found:
                left_out[name] = left_out.get(name, 0) + len(batch_rows)
                continue
            feed[name] = [spark_row(r, streams[name]) for r in batch_rows.to_rows()]
        if feed:
            feeds.append(feed)
    for name, count in left_out.items():
        how = next(e for e in elsewhere if e.startswith(f"`{name}` "))
        result.notes.append(
            f"{count} row{'s' if count != 1 else ''} of {how} not produced: it is not read "
            "from kafka"
        )
    return feeds


def _topics_made(
    servers: str, group: list[Target], partitions: int, timeout_s: float, result: Produced
) -> dict[str, int]:
    """The partitions of each topic of ``group`` at ``servers``, those missing made now
    (with ``partitions``; named in ``result.created``)."""
    topics = sorted({t.topic for t in group})
    have = _partitions(servers, topics, timeout_s)
    missing = [t for t in topics if t not in have]
    if missing:
        try:
            create_topics(servers, missing, partitions)
        except Exception as err:  # a KafkaException from the admin client's future
            raise RunError(f"cannot make topics {', '.join(missing)} at {servers}: {err}") from None
        result.created += missing
        have.update(dict.fromkeys(missing, partitions))
    return have


def summary(produced: Produced) -> list[str]:
    """What ``produce_trace`` wrote, a line per stream (and its notes)."""
    lines = []
    for stream, (topic, servers, partitions, rows) in produced.streams.items():
        made = ", made now" if topic in produced.created else ""
        lines.append(
            f"`{stream}`: {rows} row{'s' if rows != 1 else ''} into topic {topic!r} at "
            f"{servers} ({partitions} partition{'s' if partitions != 1 else ''}{made})"
        )
    return lines + [f"note: {n}" for n in produced.notes]
