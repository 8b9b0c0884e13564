"""Run a generated job's Kafka sources for real: each trace batch is produced into the
spec's topics on a broker, then read by the job's own ``read_inputs`` as one micro-batch.

Determinism comes from the same lock the test driver uses (reference §8): Spark computes a
micro-batch's end offsets (``latestOffset``) while holding the query's progress lock, so
producing a trace batch and waiting for every record's acknowledgement while holding that
lock puts all of its records, across topics and partitions, into one micro-batch. Records
of a stream are spread over the topic's partitions in trace order (row ``i`` to partition
``i mod n``), keyed by their position, with the JSON value the job's ``from_json`` reads; a
stream whose source maps columns to the record (``timestamp_column``, ``key_column``) has
them as each record's timestamp (CreateTime) and key instead, not in the value.

``kafka_plan`` points a plan's Kafka sources and sinks at a broker and at topics of this run
(so one broker serves many runs), and its file sinks and checkpoints at a folder of the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compiler.planning.plan import Plan, SinkNode, StreamNode
from ..compiler.vocabulary.model import Format
from ..runtime.engine.values import format_timestamp, parse_timestamp
from ..runtime.errors import RunError
from .job_runner import JobRunner
from .spark_driver import Batch, JobStreamDriver, _json_value, run_fed_job_query

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from .spark_env import RemoteSpark

__all__ = [
    "KafkaFeeder",
    "KafkaRunner",
    "KafkaStreamDriver",
    "create_topics",
    "kafka_plan",
    "not_from_kafka",
    "topic_of",
]

_SERVERS = ("bootstrap_servers", "kafka.bootstrap.servers")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def topic_of(target: Format) -> str | None:
    return target.option("topic") or target.option("subscribe")


def _retarget(target: Format, bootstrap: str, prefix: str, source: bool = False) -> Format:
    options = []
    for key, value in target.options:
        if key in _SERVERS:
            value = bootstrap
        elif key in ("topic", "subscribe"):
            value = prefix + value
        options.append((key, value))
    if not any(key in _SERVERS for key, _ in target.options):
        options.append(("bootstrap_servers", bootstrap))
    if source and target.option("startingOffsets") is None:
        options.append(("startingOffsets", "earliest"))
    return dataclasses.replace(target, options=tuple(options))


def kafka_plan(plan: Plan, bootstrap: str, prefix: str, directory: str | Path) -> Plan:
    """``plan`` with its Kafka sources and sinks on ``bootstrap`` and their topics named
    ``prefix + topic``, sources read from the earliest offsets unless the spec says where
    (Kafka's default, ``latest``, skips what a topic held before the query started); file
    sinks write under ``directory/out/<relation>`` and every sink checkpoints under
    ``directory/chk/<relation>``."""
    nodes = []
    for node in plan.nodes:
        if isinstance(node, StreamNode) and node.source and node.source.format == "kafka":
            source = _retarget(node.source, bootstrap, prefix, source=True)
            node = dataclasses.replace(node, source=source)
        nodes.append(node)
    sinks = []
    root = Path(directory)
    for sink in plan.sinks:
        target = sink.target
        if target.format == "kafka":
            target = _retarget(target, bootstrap, prefix)
        elif target.option("path") is not None:
            out = str(root / "out" / sink.relation)
            target = dataclasses.replace(
                target,
                options=tuple((k, out if k == "path" else v) for k, v in target.options),
            )
        sinks.append(SinkNode(sink.relation, target, str(root / "chk" / sink.relation), sink.mode))
    return dataclasses.replace(plan, nodes=tuple(nodes), sinks=tuple(sinks))


def _format(stream: StreamNode) -> str | None:
    return stream.source.format if stream.source is not None else None


def _payload(stream: StreamNode) -> str:
    """How a Kafka source's values are read: ``json`` (the default) or ``csv``."""
    return (stream.source.option("format") if stream.source is not None else None) or "json"


def create_topics(
    bootstrap: str,
    topics: Sequence[str],
    partitions: int = 2,
    config: Mapping[str, str] | None = None,
) -> None:
    """Create ``topics`` (``partitions`` each, topic ``config`` added) and wait until the
    broker has them.  They keep every record whatever its timestamp (``retention.ms=-1``):
    under Kafka's time retention (7 days by default) the broker deletes records that carry a
    trace's old times at its next retention check (every 5 minutes), whole topics at once."""
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    settings = {"retention.ms": "-1", **(config or {})}
    # librdkafka's info lines (an admin client's last "Purging 1 unserved events from
    # background queue") are not the user's business: warnings and errors only
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})
    futures = admin.create_topics(
        [
            NewTopic(t, num_partitions=partitions, replication_factor=1, config=settings)
            for t in topics
        ]
    )
    for future in futures.values():
        future.result(timeout=60)


def run_prefix() -> str:
    """A topic prefix no other run uses."""
    return f"sjoin-{uuid.uuid4().hex[:12]}."


class KafkaFeeder:
    """The producing side of a ``KafkaStreamDriver``, with no Spark of its own: ``produce``
    puts a trace batch's rows into each stream's topic (``topics``) on ``bootstrap``. Alone
    it feeds a job whose Spark runs in a child process (``RemoteSpark``), which holds the
    queries' progress locks while this process produces, and `sjoin produce` writes a trace
    into a broker (``jvm/produce.py``). ``partitions``: every topic's, or each stream's."""

    def __init__(
        self,
        bootstrap: str,
        topics: Mapping[str, str],
        partitions: int | Mapping[str, int] = 2,
        record_columns: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        from confluent_kafka import Producer

        self._topics = dict(topics)
        self._partitions = (
            dict(partitions)
            if isinstance(partitions, Mapping)
            else dict.fromkeys(topics, partitions)
        )
        # per stream, the columns its source reads from the record (``Format.record_columns``)
        self._record_columns = {k: dict(v) for k, v in (record_columns or {}).items()}
        self._sent = dict.fromkeys(topics, 0)
        self._producer: Any = Producer(
            {"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0}
        )

    def produce(self, batch: Batch) -> None:
        """Produce one trace batch's rows into their topics and wait for every ack.

        A row's value is its JSON without the columns its stream reads from the record: the
        ``timestamp_column`` is the record's timestamp (CreateTime, in ms), the
        ``key_column`` its key (UTF-8); without a key column the key is the row's position.
        ``RunError`` before anything is produced for a row that no record can carry
        (``record_fields``), and after it for a record the broker stamps or refuses."""
        from confluent_kafka import TIMESTAMP_CREATE_TIME

        unknown = sorted(set(batch) - set(self._topics))
        if unknown or not batch:
            raise ValueError(
                f"a batch must name some of {sorted(self._topics)}, got {sorted(batch)}"
            )
        records = []
        for name, rows in batch.items():
            mapped = self._record_columns.get(name, {})
            for i, row in enumerate(rows):
                position = self._sent[name] + i
                key, stamp = record_fields(name, row, mapped, str(position).encode())
                value = {k: v for k, v in row.items() if k not in mapped}
                text = json.dumps(value, default=_json_value).encode()
                records.append((name, position, key, stamp, text))
        failed: list[str] = []
        stamped: list[str] = []

        def delivered(err: Any, msg: Any, wanted: int | None) -> None:
            if err:
                failed.append(str(err))
            elif wanted is not None and msg.timestamp() != (TIMESTAMP_CREATE_TIME, wanted):
                stamped.append(msg.topic())

        for name, position, key, stamp, text in records:
            extra = {} if stamp is None else {"timestamp": stamp}
            self._producer.produce(
                self._topics[name],
                key=key,
                value=text,
                partition=position % self._partitions[name],
                on_delivery=lambda err, msg, stamp=stamp: delivered(err, msg, stamp),
                **extra,
            )
            self._sent[name] = position + 1
        left = self._producer.flush(60)
        if any("INVALID_TIMESTAMP" in f for f in failed):
            raise RunError(
                "the broker refused a record's timestamp (a timestamp_column's value): "
                "it takes times up to log.message.timestamp.after.max.ms ahead of its clock "
                "(1 hour by default on Kafka 4.3) and log.message.timestamp.before.max.ms "
                f"behind it; {failed[0]}"
            )
        if stamped:
            raise RunError(
                f"topic {stamped[0]!r} stamps records with the broker's clock "
                "(message.timestamp.type LogAppendTime), so the trace's times cannot be "
                "produced into it; use a topic with CreateTime"
            )
        if left or failed:
            raise RuntimeError(f"Kafka did not take every record: {failed or left}")

    def close(self) -> None:
        """Deliver what is still queued (10 s at most) and let the client go."""
        if self._producer is not None:
            self._producer.flush(10)
        self._producer = None  # librdkafka's client ends with its last reference

    def __enter__(self) -> KafkaFeeder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class KafkaStreamDriver(KafkaFeeder, JobStreamDriver):
    """``JobStreamDriver`` whose inputs are the job's own Kafka sources: ``feed`` produces
    each stream's rows into its topic (``topics``) on ``bootstrap``, atomically for Spark."""

    def __init__(
        self,
        spark: SparkSession,
        inputs: Mapping[str, DataFrame],
        bootstrap: str,
        topics: Mapping[str, str],
        partitions: int = 2,
        record_columns: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        JobStreamDriver.__init__(self, spark, inputs)
        KafkaFeeder.__init__(self, bootstrap, topics, partitions, record_columns)

    def feed(self, batch: Batch) -> None:
        """Produce one trace batch under the progress lock of every query, then wait until
        Spark has nothing left to run (the no-data batches after it included)."""
        with self.locked():
            self.produce(batch)
        self.settle()

    def stop(self) -> None:
        JobStreamDriver.stop(self)
        self.close()

    def __enter__(self) -> KafkaStreamDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def record_fields(
    stream: str, row: Mapping[str, Any], mapped: Mapping[str, str], key: bytes | None = None
) -> tuple[bytes | None, int | None]:
    """The key (``key`` when no column is the key) and the timestamp (ms; None when no
    column is the timestamp: the producer's clock) of the record that carries ``row`` of
    ``stream``, whose source reads ``mapped`` columns from the record (column ->
    ``timestamp``/``key``, ``Format.record_columns``).  ``RunError`` where no record can
    carry the row faithfully: Kafka's timestamps are milliseconds and always there, so a
    null or a time with a fraction of a millisecond cannot be produced (Spark reads the
    record's milliseconds), nor the epoch itself (the C client takes 0 as "now")."""
    stamp: int | None = None
    for column, field in mapped.items():
        value = row.get(column)
        where = f"stream `{stream}`, column `{column}` ({field}_column)"
        if field == "key":
            if value is not None and not isinstance(value, str):
                raise RunError(f"{where}: a record key is text, got {value!r}")
            try:
                key = None if value is None else value.encode("utf-8")
            except UnicodeEncodeError:
                raise RunError(f"{where}: {value!r} is not UTF-8 text") from None
            continue
        us = _micros(value)
        if value is None:
            raise RunError(
                f"{where}: a row without a time: every Kafka record has a timestamp, so the "
                "trace cannot give this column a null"
            )
        if us is None:
            raise RunError(f"{where}: {value!r} is not a time")
        if us % 1000:
            raise RunError(
                f"{where}: {format_timestamp(us)} has a fraction of a millisecond; a Kafka "
                "timestamp is whole milliseconds (Spark's job would read "
                f"{format_timestamp(us - us % 1000)}), so the trace cannot be produced as it is"
            )
        if us == 0:
            raise RunError(
                f"{where}: the epoch itself (1970-01-01T00:00:00Z) cannot be produced: the "
                "Kafka client takes a timestamp of 0 as 'now'"
            )
        stamp = us // 1000
    return key, stamp


def _micros(value: Any) -> int | None:
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return (aware - _EPOCH) // timedelta(microseconds=1)
    if isinstance(value, str):
        return parse_timestamp(value)
    return None


def consume_all(bootstrap: str, topic: str, timeout: float = 10.0) -> list[dict[str, Any]]:
    """Every record of ``topic`` now, as dicts (partition, offset, key, value, timestamp)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"sjoin-read-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        meta = consumer.list_topics(topic, timeout=timeout)
        partitions = sorted(meta.topics[topic].partitions)
        ends = {}
        for p in partitions:
            _, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            ends[p] = high
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        out: list[dict[str, Any]] = []
        wanted = sum(ends.values())
        while len(out) < wanted:
            message = consumer.poll(timeout)
            if message is None:
                raise TimeoutError(f"read {len(out)} of {wanted} records of {topic}")
            if message.error():
                raise RuntimeError(str(message.error()))
            key = message.key()
            out.append(
                {
                    "partition": message.partition(),
                    "offset": message.offset(),
                    "key": key.decode() if key is not None else None,
                    "value": (message.value() or b"").decode(),
                    "timestamp": message.timestamp()[1],
                }
            )
        return out
    finally:
        consumer.close()


class KafkaRunner(JobRunner[tuple[str, str, Path]]):
    """Runs one query of a plan's generated job on ``spark`` with its Kafka sources read
    from ``bootstrap`` (``verify``'s ``SparkRunner``): each call gets topics of its own,
    compiles the job for them, starts the query's real sinks beside the captured output
    (``with_sinks``) and feeds the trace batch by batch (``run_fed_job_query``). ``spark``
    is a session with Spark's Kafka connector, or a ``RemoteSpark`` (another pyspark, in a
    child process started with the connector of its Spark): the child holds the queries'
    progress locks while this process produces each trace batch. ``runs`` keeps,
    per call, the root, the topic prefix and the folder of its file sinks, to read the sinks
    back."""

    def __init__(
        self,
        spark: SparkSession | RemoteSpark,
        bootstrap: str,
        directory: str | Path | None = None,
        *,
        with_sinks: bool = True,
        partitions: int = 2,
    ) -> None:
        super().__init__(spark, directory, with_sinks=with_sinks)
        self.bootstrap = bootstrap
        self.partitions = partitions
        self._mapped: dict[str, dict[str, Any]] = {}

    def _prepare(self, root: str, streams: list[str], feeds: list[Any], folder: Path) -> Plan:
        assert self.plan is not None
        unsourced = not_from_kafka(self.plan, [root])
        if unsourced:
            raise ValueError(f"streams not read `from kafka`: {', '.join(unsourced)}")
        by_name = {s.name: s for s in self.plan.streams}
        csv = [s for s in streams if _payload(by_name[s]) != "json"]
        if csv:
            raise RunError(
                "the Kafka test driver produces JSON values, and these streams read CSV: "
                + ", ".join(f"`{s}`" for s in csv)
                + "; verify them without --kafka (through memory streams)"
            )
        mapped = {
            s: src.record_columns() for s in streams if (src := by_name[s].source) is not None
        }
        for feed in feeds:  # a row no record can carry fails the run before it starts
            for stream, rows in (feed or {}).items():
                for row in rows:
                    record_fields(stream, row, mapped.get(stream, {}))
        self._mapped = mapped
        prefix = run_prefix()
        plan = kafka_plan(self.plan, self.bootstrap, prefix, folder)
        self.runs.append((root, prefix, folder))
        return plan

    @contextlib.contextmanager
    def _feeding(
        self, plan: Plan, root: str, streams: list[str], feeds: list[Any], folder: Path
    ) -> Iterator[tuple[Mapping[str, Any], Callable[..., Any]]]:
        topics = {s.name: topic_of(s.source) or s.name for s in plan.streams if s.source}
        sinks = [s for s in plan.sinks if s.relation == root] if self.with_sinks else []
        wanted = [topics[s] for s in streams] + [
            topic_of(s.target) for s in sinks if s.target.format == "kafka"
        ]
        create_topics(self.bootstrap, sorted({t for t in wanted if t}), self.partitions)
        folder.mkdir(parents=True, exist_ok=True)
        relations = [s.relation for s in sinks]
        feeder = KafkaFeeder(
            self.bootstrap, {s: topics[s] for s in streams}, self.partitions, self._mapped
        )
        with feeder:

            def produce(number: int) -> None:
                feed = feeds[number - 1] if 0 < number <= len(feeds) else None
                if not feed:
                    raise ValueError(f"trace batch {number} has no rows for this query")
                feeder.produce(feed)

            remote = {"kafka": {"sinks": relations}, "produce": produce}
            yield remote, partial(run_fed_job_query, sinks=relations, produce=produce)


def not_from_kafka(plan: Plan, roots: Sequence[str]) -> list[str]:
    """The streams that the queries rooted at ``roots`` read and that are not read
    ``from kafka`` (named as a user reads them: `name` (no `from`), `name` (`from delta`))."""

    seen: list[str] = []
    out: list[str] = []
    for root in roots:
        for node in plan.closure(root):
            if not isinstance(node, StreamNode) or node.name in seen:
                continue
            seen.append(node.name)
            if _format(node) != "kafka":
                how = "no `from`" if node.source is None else f"`from {node.source.format}`"
                out.append(f"`{node.name}` ({how})")
    return out
