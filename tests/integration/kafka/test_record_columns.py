"""Columns from the Kafka record itself, end to end: a `from kafka` source whose
`timestamp_column` is the record's timestamp and whose `key_column` is its key
(tests/integration/kafka/record_columns.sjoin).

- The test driver produces each row as a record stamped with the row's time (CreateTime, ms)
  and keyed by its user, the value holding the other columns; rows no record can carry (a
  null time, a fraction of a millisecond, the epoch itself), a topic that stamps records
  itself (LogAppendTime) and a time the broker refuses are refused, saying why.
- The replay (`sjoin run --trace kafka://`, `sjoin capture`) reads those records back as the
  trace's rows; a key that is not UTF-8 is a bad row at its record; on a LogAppendTime topic
  it reads the broker's time, as Spark does.
- On Spark: the generated job, its sources read through the broker batch by batch, gives what
  `sjoin run` gives on the trace (rows, watermark, state, batch by batch); and a job started
  on a backlog (CreateTime and LogAppendTime topics, cut by maxOffsetsPerTrigger) reads in
  each micro-batch exactly the rows the replay reads, and outputs the replay's rows.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_file, check_text
from sjoin.compiler.planning.plan import Plan
from sjoin.jvm.kafka_driver import (
    KafkaRunner,
    KafkaStreamDriver,
    consume_all,
    create_topics,
    kafka_plan,
    record_fields,
    run_prefix,
)
from sjoin.jvm.verify import like_local, spark_row, verify
from sjoin.runtime import run
from sjoin.runtime.engine.values import format_timestamp, parse_timestamp
from sjoin.runtime.errors import RunError
from sjoin.runtime.io.kafka_trace import read_kafka
from sjoin.runtime.io.trace import Trace, TraceError, read_trace, schemas_of

from .test_replay import cli, prefixed_spec

HERE = Path(__file__).resolve().parent
SPEC = HERE / "record_columns.sjoin"
TRACE = HERE / "record_columns.trace.jsonl"
MAPPED = {"t": "timestamp", "u": "key"}
MS = 1_748_736_000_250  # 2025-06-01T00:00:00.250Z


def _plan(path: Path = SPEC) -> Plan:
    checked = check_file(path)
    assert checked.ok and checked.plan is not None, [d.message for d in checked.diagnostics]
    return checked.plan


def _rows(trace: Trace) -> dict[str, Counter[tuple[Any, ...]]]:
    """Every row of the trace per stream, whatever its batch."""
    out: dict[str, Counter[tuple[Any, ...]]] = {}
    for batch in trace.batches:
        for stream, rows in batch.rows.items():
            out.setdefault(stream, Counter()).update(rows.to_rows())
    return out


# ----------------------------------------------------------------- what a record can carry


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({"t": None, "u": "a"}, "every Kafka record has a timestamp"),
        ({"t": "not a time", "u": "a"}, "'not a time' is not a time"),
        ({"u": "a"}, "every Kafka record has a timestamp"),
        ({"t": "2025-06-01T00:00:00.000001Z"}, "fraction of a millisecond"),
        ({"t": datetime(2025, 6, 1, 0, 0, 0, 1500, tzinfo=UTC)}, r"2025-06-01T00:00:00\.001000Z"),
        ({"t": "1970-01-01T00:00:00Z"}, "the epoch itself"),
        ({"t": "2025-06-01T00:00:00Z", "u": 5}, "a record key is text, got 5"),
        ({"t": "2025-06-01T00:00:00Z", "u": "a\ud800"}, "is not UTF-8 text"),
    ],
)
def test_a_row_no_record_can_carry_is_refused(row: dict[str, Any], says: str) -> None:
    with pytest.raises(RunError, match=says) as caught:
        record_fields("clicks", row, MAPPED)
    assert "stream `clicks`" in str(caught.value)


def test_what_a_record_carries() -> None:
    key = b"7"  # without a key column: the key given (the row's position)
    row = {"t": "2025-06-01T00:00:00.250Z", "u": "café"}
    assert record_fields("s", row, MAPPED, key) == ("café".encode(), MS)
    assert record_fields("s", {**row, "u": None}, MAPPED, key) == (None, MS)
    assert record_fields("s", row, {"t": "timestamp"}, key) == (key, MS)
    assert record_fields("s", row, {}, key) == (key, None)
    naive = datetime(2025, 6, 1, 0, 0, 0, 250_000)  # a naive time is UTC
    assert record_fields("s", {"t": naive}, MAPPED) == (None, MS)
    # before the epoch: Kafka keeps a negative CreateTime and Spark reads it (checked)
    assert record_fields("s", {"t": "1969-12-31T23:59:59.999Z"}, MAPPED) == (None, -1)


@pytest.mark.parametrize(
    ("change", "feed", "says"),
    [
        ("", {"clicks": [{"ad_id": 1, "click_time": "2025-06-01T00:00:00.0005Z"}]},
         "fraction of a millisecond"),
        ("", {"impressions": [{"ad_id": 1, "impression_time": None}]}, "without a time"),
        ("format = 'csv',", {"clicks": [{"ad_id": 1, "click_time": "2025-06-01T00:00:00Z"}]},
         "these streams read CSV: `clicks`"),
    ],
)  # fmt: skip
def test_a_run_whose_rows_cannot_be_produced_stops_before_it_starts(
    change: str, feed: dict[str, Any], says: str, tmp_path: Path
) -> None:
    """`verify --kafka` (KafkaRunner) checks every batch first: nothing is produced, no
    query starts (there is no Spark and no broker here), and the CLI prints RunError."""
    text = SPEC.read_text(encoding="utf-8").replace(
        "from kafka (topic = 'clicks', ", f"from kafka (topic = 'clicks', {change}"
    )
    spec = tmp_path / "spec.sjoin"
    spec.write_text(text, encoding="utf-8")
    runner = KafkaRunner(None, "127.0.0.1:9", tmp_path).for_plan(_plan(spec), str(tmp_path))
    good = {"impressions": [{"ad_id": 1, "impression_time": "2025-06-01T00:00:00Z"}]}
    with pytest.raises(RunError, match=says):
        runner("attributed", "append", ["impressions", "clicks"], [good, feed], {})
    assert runner.runs == [] and not list(tmp_path.glob("run-*"))


# ----------------------------------------------------------------- the driver and the replay


def test_the_driver_produces_what_the_replay_reads_back_as_the_trace(  # type: ignore[no-untyped-def]
    kafka_broker, tmp_path
) -> None:
    bootstrap = kafka_broker.bootstrap
    prefix = run_prefix()
    plan = kafka_plan(_plan(), bootstrap, prefix, tmp_path)
    streams = {s.name: s for s in plan.streams}
    topics = {name: prefix + name for name in streams}
    create_topics(bootstrap, sorted(topics.values()), 2)
    mapped = {name: s.source.record_columns() for name, s in streams.items() if s.source}
    assert mapped == {
        "impressions": {"impression_time": "timestamp"},
        "clicks": {"click_time": "timestamp", "user_id": "key"},
    }
    driver = KafkaStreamDriver(None, {}, bootstrap, topics, 2, mapped)  # type: ignore[arg-type]
    trace = read_trace(TRACE, schemas_of(plan))
    for batch in trace.batches:
        driver.produce(
            {
                name: [spark_row(r, streams[name]) for r in rows.to_rows()]
                for name, rows in batch.rows.items()
            }
        )
    # the topics: each click's time is its record's timestamp, its user the key, and the
    # value holds the other columns only
    records = consume_all(bootstrap, topics["clicks"])
    read = sorted(
        ((json.loads(r["value"]), r["key"], r["timestamp"]) for r in records),
        key=lambda r: (r[0]["ad_id"], r[2]),
    )
    assert read[0] == ({"ad_id": 1}, "u1", 1_748_736_010_500)  # 2025-06-01T00:00:10.500Z
    assert [key for _, key, _ in read] == ["u1", None, "", "café"]
    assert all(set(value) == {"ad_id"} for value, _, _ in read)

    # the replay reads the trace's rows back, and a capture writes them
    url = f"kafka://{bootstrap}"
    replay = read_kafka(plan, url)
    assert _rows(replay.trace) == _rows(trace)
    spec = prefixed_spec(SPEC, prefix, tmp_path)
    out = tmp_path / "captured.jsonl"
    code, _, err = cli("capture", str(spec), "--from", url, "-o", str(out))
    assert code == 0, err
    assert _rows(read_trace(out, schemas_of(plan))) == _rows(trace)
    # and `sjoin run` on the topics gives what it gives on the trace's rows in one batch
    one_batch = read_trace(
        [
            {"batch": 0, "stream": line["stream"], "row": line["row"]}
            for line in map(json.loads, TRACE.read_text(encoding="utf-8").splitlines())
        ],
        schemas_of(plan),
    )
    ran, expected = run(plan, replay.trace), run(plan, one_batch)
    assert _outputs(ran) == _outputs(expected) and _outputs(ran)


def _outputs(result: Any) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True) for b in result.batches for r in b.rows)


def _log_append_topic(bootstrap: str, name: str) -> None:
    create_topics(bootstrap, [name], 1, {"message.timestamp.type": "LogAppendTime"})


def test_a_topic_stamped_by_the_broker_is_refused_by_the_driver_and_read_by_the_replay(  # type: ignore[no-untyped-def]
    kafka_broker,
) -> None:
    bootstrap = kafka_broker.bootstrap
    prefix = run_prefix()
    _log_append_topic(bootstrap, prefix + "clicks")
    create_topics(bootstrap, [prefix + "other"], 1)
    topics = {"clicks": prefix + "clicks"}
    driver = KafkaStreamDriver(None, {}, bootstrap, topics, 1, {"clicks": MAPPED})  # type: ignore[arg-type]
    with pytest.raises(RunError, match="LogAppendTime"):
        driver.produce({"clicks": [{"k": 1, "t": format_timestamp(MS * 1000), "u": "a"}]})
    # the replay reads the broker's time, which is what Spark reads (test below)
    plan = kafka_plan(
        _spec_plan("clicks", "json", "timestamp_column = 't', key_column = 'u'"),
        bootstrap,
        prefix,
        "unused",
    )
    (record,) = consume_all(bootstrap, prefix + "clicks")
    assert record["timestamp"] != MS  # the broker's clock
    replay = read_kafka(plan, f"kafka://{bootstrap}")
    assert _rows(replay.trace) == {"clicks": Counter({(1, record["timestamp"] * 1000, "a"): 1})}


def test_a_time_the_broker_refuses_is_said_so(kafka_broker) -> None:  # type: ignore[no-untyped-def]
    bootstrap = kafka_broker.bootstrap
    topic = run_prefix() + "clicks"
    create_topics(bootstrap, [topic], 1)
    driver = KafkaStreamDriver(None, {}, bootstrap, {"clicks": topic}, 1, {"clicks": MAPPED})  # type: ignore[arg-type]
    later = datetime.now(UTC) + timedelta(days=2)
    row = {"k": 1, "t": later.replace(microsecond=0).isoformat(), "u": "a"}
    with pytest.raises(RunError, match=r"after\.max\.ms"):
        driver.produce({"clicks": [row]})


def test_a_key_that_is_not_utf8_is_a_bad_row_at_its_record(kafka_broker) -> None:  # type: ignore[no-untyped-def]
    from confluent_kafka import Producer

    bootstrap = kafka_broker.bootstrap
    prefix = run_prefix()
    create_topics(bootstrap, [prefix + "clicks", prefix + "other"], 1)
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(prefix + "clicks", key=b"ok", value=b"1", timestamp=MS)
    producer.produce(prefix + "clicks", key=b"\xff", value=b"2", timestamp=MS)
    assert producer.flush(30) == 0
    plan = kafka_plan(
        _spec_plan("clicks", "csv", "timestamp_column = 't', key_column = 'u'"),
        bootstrap,
        prefix,
        "unused",
    )
    with pytest.raises(TraceError) as caught:
        read_kafka(plan, f"kafka://{bootstrap}")
    (bad,) = caught.value.bad_rows
    assert bad.record == (prefix + "clicks", 0, 1)
    assert "column `u`: the record's key is not UTF-8" in bad.reason
    skipped = read_kafka(plan, f"kafka://{bootstrap}", bad_rows="skip")
    assert _rows(skipped.trace) == {"clicks": Counter({(1, MS * 1000, "ok"): 1})}


def _spec_plan(stream: str, payload: str, options: str) -> Plan:
    """A join of ``stream``, read with ``options``, and ``other`` (an empty topic)."""
    text = (
        f"stream {stream} (k BIGINT, t TIMESTAMP, u STRING) watermark t delay 10 seconds\n"
        f"from kafka (topic = '{stream}', bootstrap_servers = 'h:1', format = '{payload}', "
        f"{options})\n"
        f"stream other (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds\n"
        f"from kafka (topic = 'other', bootstrap_servers = 'h:1')\n"
        f"join j = {stream} AS a INNER JOIN other AS b ON a.k = b.k AND a.t = b.t\n"
    )
    checked = check_text(text)
    assert checked.ok and checked.plan is not None, [d.message for d in checked.diagnostics]
    return checked.plan


# ----------------------------------------------------------------- on Spark


@pytest.mark.spark
def test_the_job_reads_the_records_as_sjoin_run_reads_the_trace(  # type: ignore[no-untyped-def]
    kafka_broker, kafka_spark, tmp_path
) -> None:
    planned, _ = like_local(check_file(SPEC), str(kafka_spark.version))
    assert planned.plan is not None
    runner = KafkaRunner(kafka_spark, kafka_broker.bootstrap, tmp_path, with_sinks=False)
    report = verify(planned.plan, TRACE, spark=kafka_spark, make_runner=runner.for_plan)
    assert report.agree, report.text()
    (query,) = report.queries
    assert query.spark_batches >= 5  # three trace batches and the no-data batches after them


@pytest.mark.spark
def test_spark_reads_each_records_timestamp_and_key_as_the_replay_does(  # type: ignore[no-untyped-def]
    kafka_broker, kafka_spark
) -> None:
    """The edge values, one record each, read by Spark (the job's expressions, in a batch
    query) and by the replay: a negative and a tiny CreateTime, no key, an empty key, a
    non-ASCII key, a key on a record whose value is bad."""
    from pyspark.sql import functions as F

    bootstrap = kafka_broker.bootstrap
    prefix = run_prefix()
    create_topics(bootstrap, [prefix + "clicks", prefix + "other"], 1)
    records = [
        (b"u", b'{"k": 1}', MS),
        (None, b'{"k": 2}', -1),
        (b"", b'{"k": 3}', 1),
        ("é€".encode(), b'{"k": 4}', 1_000_000_000_000),
        (b"v", b"not json", MS),
    ]
    _produce_stamped(bootstrap, prefix + "clicks", [(0, k, v, t) for k, v, t in records])
    frame = (
        kafka_spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", prefix + "clicks")
        .option("startingOffsets", "earliest")
        .load()
    )
    spark_rows = [
        (r.offset, r.t, r.u)
        for r in frame.select(
            "offset",
            F.unix_micros(F.col("timestamp")).alias("t"),
            F.col("key").cast("string").alias("u"),
        ).collect()
    ]
    plan = kafka_plan(
        _spec_plan("clicks", "json", "timestamp_column = 't', key_column = 'u'"),
        bootstrap,
        prefix,
        "unused",
    )
    replay = read_kafka(plan, f"kafka://{bootstrap}", bad_rows="skip")
    (bad,) = replay.trace.bad_rows
    assert bad.record == (prefix + "clicks", 0, 4) and "bad JSON" in bad.reason
    read = [row for b in replay.trace.batches for row in b.rows_of("clicks")]
    assert sorted(spark_rows)[:4] == [(i, t, u) for i, (_, t, u) in enumerate(read)]
    assert sorted(spark_rows)[4] == (4, MS * 1000, "v")  # the bad value's record columns
    assert [t for _, t, _ in sorted(spark_rows)] == [r[2] * 1000 for r in records]


BACKLOG_SPEC = """spark 4.3
set trigger = 'available_now'
stream impressions (ad_id BIGINT, impression_time TIMESTAMP, campaign STRING)
watermark impression_time delay 10 seconds
from kafka (topic = 'impressions', bootstrap_servers = 'h:1', maxOffsetsPerTrigger = '3',
            timestamp_column = 'impression_time')
stream clicks (ad_id BIGINT, click_time TIMESTAMP, user_id STRING)
watermark click_time delay 10 seconds
from kafka (topic = 'clicks', bootstrap_servers = 'h:1', format = 'csv',
            maxOffsetsPerTrigger = '2', timestamp_column = 'click_time', key_column = 'user_id')
join j = impressions AS i LEFT OUTER JOIN clicks AS c
    ON  i.ad_id = c.ad_id
    AND c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 MINUTE
    SELECT i.ad_id, i.impression_time, i.campaign, c.click_time, c.user_id
"""


@pytest.mark.spark
def test_the_replay_reads_each_micro_batch_as_the_job_does(kafka_broker, kafka_spark) -> None:  # type: ignore[no-untyped-def]
    """Impressions stamped by the producer (CreateTime), clicks by the broker (LogAppendTime),
    all in the topics before the job starts: Spark's batches (offsets, rows, watermark) are
    the replay's, the no-data batch after the last one included."""
    from .test_replay_on_spark import ranges, spark_batches

    bootstrap = kafka_broker.bootstrap
    prefix = run_prefix()
    create_topics(bootstrap, [prefix + "impressions"], 2)
    _log_append_topic(bootstrap, prefix + "clicks")
    base = (int(time.time() * 1000) - 30_000) // 1000 * 1000 + 125  # about now: within 1 minute
    impressions = [(i % 2, i + 1, base + i * 1000, f"c{i}") for i in range(5)]
    _produce_stamped(
        bootstrap,
        prefix + "impressions",
        [(p, None, json.dumps({"ad_id": ad, "campaign": c}).encode(), ms)
         for p, ad, ms, c in impressions],
    )  # fmt: skip
    clicks = [(0, b"u1", b"1"), (0, None, b"2"), (0, b"", b"3"), (0, "é".encode(), b"9")]
    _produce_stamped(bootstrap, prefix + "clicks", [(p, k, v, None) for p, k, v in clicks])

    checked = check_text(BACKLOG_SPEC, "backlog.sjoin")
    assert checked.ok and checked.plan is not None
    with tempfile.TemporaryDirectory() as folder:
        plan = kafka_plan(checked.plan, bootstrap, prefix, folder)
        spark = spark_batches(kafka_spark, plan, Path(folder), {"availableNow": True})
    replay = read_kafka(plan, f"kafka://{bootstrap}")
    result = run(plan, replay.trace)
    # the limits cut the backlog into data batches; the last one moves the watermark, so
    # availableNow runs the no-data batch it calls for before it stops: so does the replay
    assert len(replay.batches) >= 2
    assert [b.data for b in result.batches] == [True] * len(replay.batches) + [False]
    assert [p["batchId"] for p, _ in spark] == [b.batch for b in result.batches]
    matched = 0
    for (progress, rows), ran in zip(spark, result.batches, strict=True):
        for stream in ("impressions", "clicks"):
            cut = replay.batches[ran.batch].get(stream, {}) if ran.data else {}
            ours = {p: r for (t, p), r in cut.items() if r[1] > r[0]}
            theirs = {p: r for p, r in ranges(progress, prefix + stream).items() if r[1] > r[0]}
            assert theirs == ours, (progress["batchId"], stream)
        assert parse_timestamp(progress["eventTime"]["watermark"]) == parse_timestamp(
            ran.watermark or ""
        )
        assert _comparable(rows) == _comparable([row for _, row in ran.rows])
        matched += sum(row["click_time"] is not None for row in rows)
    assert matched == 3  # each click of ads 1-3 met its impression: times read as stored


def _produce_stamped(
    bootstrap: str, topic: str, records: list[tuple[int, bytes | None, bytes, int | None]]
) -> None:
    """Produce (partition, key, value, timestamp ms or None: the producer's clock)."""
    from confluent_kafka import Producer

    failed: list[str] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    for partition, key, value, stamp in records:
        producer.produce(
            topic,
            key=key,
            value=value,
            partition=partition,
            on_delivery=lambda err, msg: failed.append(str(err)) if err else None,
            **({} if stamp is None else {"timestamp": stamp}),
        )
    assert producer.flush(60) == 0 and not failed, failed


def _comparable(rows: list[dict[str, Any]]) -> Counter[str]:
    """Rows as text, times as epoch microseconds (Spark's rows have them so already)."""
    out = []
    for row in rows:
        values = {
            k: parse_timestamp(v) if k.endswith("_time") and isinstance(v, str) else v
            for k, v in row.items()
        }
        out.append(json.dumps(values, sort_keys=True))
    return Counter(out)
