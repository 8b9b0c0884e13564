"""Replaying topics of a real broker (runtime/io/kafka_trace.py): `sjoin run SPEC --trace
kafka://HOST:PORT` and `sjoin capture`.  The Kafka examples' traces are produced into topics
(2 partitions, row i of a stream into partition i mod 2) and replayed: in one batch they give
exactly what `sjoin run` gives on the same rows in one batch; cut by maxOffsetsPerTrigger, the
replay is what `sjoin run --backlog` gives on the captured trace, and the captured rows are
the example's.  Bad records are bad rows at their topic, partition and offset; a URL, option,
broker or topic that cannot be used is a usage error (exit 2)."""

from __future__ import annotations

import json
import re
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.api import check_file, check_text
from sjoin.cli.main import main
from sjoin.jvm.kafka_driver import create_topics, run_prefix
from sjoin.runtime import run
from sjoin.runtime.errors import UsageError
from sjoin.runtime.io.kafka_offsets import cut_source
from sjoin.runtime.io.kafka_trace import read_kafka
from sjoin.runtime.io.trace import read_trace, schemas_of

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = [ROOT / "examples" / f"{name}.sjoin" for name in ("ad_attribution", "unpaid_orders")]


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def produce(bootstrap: str, topic: str, records: list[tuple[int, bytes | None]]) -> None:
    """Produce (partition, value) records into ``topic``, in order, and wait for every ack."""
    from confluent_kafka import Producer

    failed: list[str] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    for partition, value in records:
        producer.produce(
            topic,
            value=value,
            partition=partition,
            on_delivery=lambda err, msg: failed.append(str(err)) if err else None,
        )
    assert producer.flush(60) == 0 and not failed, failed


def example_rows(spec: Path) -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = {}
    for line in spec.with_name(spec.stem + ".trace.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            rows.setdefault(record["stream"], []).append(record["row"])
    return rows


def topics_of(text: str) -> list[str]:
    return re.findall(r"topic = '([^']+)'", text)


def prefixed_spec(spec: Path, prefix: str, directory: Path) -> Path:
    """The spec with its topics renamed to ``prefix + topic`` (the URL gives the broker)."""
    text = spec.read_text(encoding="utf-8")
    for topic in set(topics_of(text)):
        text = text.replace(f"topic = '{topic}'", f"topic = '{prefix}{topic}'")
    path = directory / spec.name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def example(request, kafka_broker, tmp_path):  # type: ignore[no-untyped-def]
    """An example's spec whose topics hold its trace's rows, and those rows per stream."""
    spec: Path = request.param
    prefix = run_prefix()
    renamed = prefixed_spec(spec, prefix, tmp_path)
    plan = check_file(spec).plan
    assert plan is not None
    rows = example_rows(spec)
    topic = {s.name: prefix + (s.source.option("topic") or "") for s in plan.streams if s.source}
    create_topics(kafka_broker.bootstrap, sorted(topic[s] for s in rows), 2)
    for stream, stream_rows in rows.items():
        produce(
            kafka_broker.bootstrap,
            topic[stream],
            [(i % 2, json.dumps(row).encode()) for i, row in enumerate(stream_rows)],
        )
    return renamed, rows


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem, indirect=True)
def test_a_replay_without_a_limit_is_one_batch_as_sjoin_run_gives_it(  # type: ignore[no-untyped-def]
    example, kafka_broker, tmp_path
) -> None:
    spec, rows = example
    code, replayed, err = cli(
        "run", str(spec), "--trace", f"kafka://{kafka_broker.bootstrap}",
        "--progress", str(tmp_path / "replay.progress"), "--trace-batches",
    )  # fmt: skip
    assert code == 0, err
    # the same rows as one batch of a trace file, in the replay's order: partition 0's rows
    # (the even ones), then partition 1's
    one = tmp_path / "one.trace.jsonl"
    one.write_text(
        "".join(
            json.dumps({"batch": 0, "stream": stream, "row": row}) + "\n"
            for stream, stream_rows in rows.items()
            for row in stream_rows[0::2] + stream_rows[1::2]
        ),
        encoding="utf-8",
    )
    code, expected, err = cli(
        "run", str(spec), "--trace", str(one),
        "--progress", str(tmp_path / "file.progress"), "--trace-batches",
    )  # fmt: skip
    assert code == 0, err
    assert replayed == expected and replayed
    progress = (tmp_path / "replay.progress").read_text(encoding="utf-8")
    assert progress == (tmp_path / "file.progress").read_text(encoding="utf-8")
    assert {json.loads(line)["trace_batch"] for line in progress.splitlines()} == {0}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem, indirect=True)
def test_a_replay_cut_by_the_rate_limit_is_its_captured_trace_run_as_a_backlog(  # type: ignore[no-untyped-def]
    example, kafka_broker, tmp_path
) -> None:
    spec, rows = example
    url = f"kafka://{kafka_broker.bootstrap}"
    captured = tmp_path / "captured.trace.jsonl"
    code, _, err = cli(
        "capture", str(spec), "--from", url, "-o", str(captured),
        "--max-offsets-per-trigger", "3", "--verbose",
    )  # fmt: skip
    assert code == 0, err
    assert f"--trace {captured} --backlog" in err
    code, replayed, err = cli(
        "run", str(spec), "--trace", url, "--max-offsets-per-trigger", "3",
        "--progress", str(tmp_path / "replay.progress"),
    )  # fmt: skip
    assert code == 0, err
    code, from_file, err = cli(
        "run", str(spec), "--trace", str(captured), "--backlog",
        "--progress", str(tmp_path / "file.progress"),
    )  # fmt: skip
    assert code == 0, err
    assert replayed == from_file and replayed
    progress = (tmp_path / "replay.progress").read_text(encoding="utf-8")
    assert progress == (tmp_path / "file.progress").read_text(encoding="utf-8")
    # the columnar engine runs the replay alike
    code, columnar, err = cli(
        "run", str(spec), "--trace", url, "--max-offsets-per-trigger", "3", "--engine", "columnar"
    )
    assert code == 0, err
    assert sorted(columnar.splitlines()) == sorted(replayed.splitlines())

    # the captured rows are the example's rows, each once
    plan = check_file(spec).plan
    assert plan is not None
    schemas = schemas_of(plan)
    original = read_trace(
        [{"batch": 0, "stream": s, "row": r} for s, rs in rows.items() for r in rs], schemas
    )
    trace = read_trace(captured, schemas)
    for stream in rows:
        assert Counter(r for b in trace.batches for r in b.rows_of(stream)) == Counter(
            original.batches[0].rows_of(stream)
        )
    # and each batch holds what Spark's rate limit cuts: partition 0 holds ceil(n / 2) rows
    cuts = {
        stream: cut_source(
            {("t", 0): 0, ("t", 1): 0}, {("t", 0): (len(rs) + 1) // 2, ("t", 1): len(rs) // 2}, 3
        )
        for stream, rs in rows.items()
    }
    assert len(trace.batches) == max(len(c) for c in cuts.values())
    for k, batch in enumerate(trace.batches):
        for stream, stream_cuts in cuts.items():
            want = sum(b - a for a, b in stream_cuts[k].values()) if k < len(stream_cuts) else 0
            assert len(batch.rows_of(stream)) == want, (k, stream)


SPEC = """
stream a (k BIGINT, t TIMESTAMP, v STRING)
watermark t delay 1 minute
from kafka (topic = '{a}', bootstrap_servers = '{servers}'{extra})
stream b (k BIGINT, t TIMESTAMP)
watermark t delay 1 minute
from kafka (topic = '{b}', bootstrap_servers = '{servers}')
join j = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
"""


def make_spec(
    tmp_path: Path, a: str, b: str, servers: str = "localhost:9092", extra: str = ""
) -> Path:
    path = tmp_path / "replay.sjoin"
    path.write_text(SPEC.format(a=a, b=b, servers=servers, extra=extra), encoding="utf-8")
    return path


def good(k: int, second: int, v: str = "x") -> bytes:
    return json.dumps({"k": k, "t": f"2026-01-01T00:00:{second:02d}Z", "v": v}).encode()


@pytest.fixture
def topics(kafka_broker):  # type: ignore[no-untyped-def]
    """Two fresh topics a, b (2 partitions): a holds a bad record of each kind among good ones,
    b holds good ones."""
    prefix = run_prefix()
    a, b = prefix + "a", prefix + "b"
    create_topics(kafka_broker.bootstrap, [a, b], 2)
    produce(
        kafka_broker.bootstrap,
        a,
        [
            (0, good(1, 0)),  # a/0 @0
            (0, b"not json"),  # a/0 @1
            (1, None),  # a/1 @0: a tombstone
            (1, b'{"k": "2", "t": "2026-01-01T00:00:05Z", "v": "y"}'),  # a/1 @1
            (1, good(3, 9)),  # a/1 @2
        ],
    )
    produce(kafka_broker.bootstrap, b, [(0, good(1, 10)), (1, good(3, 20))])
    return a, b


def test_bad_records_stop_the_replay_at_their_topic_partition_and_offset(  # type: ignore[no-untyped-def]
    topics, kafka_broker, tmp_path
) -> None:
    a, _ = topics
    spec = make_spec(tmp_path, *topics)
    url = f"kafka://{kafka_broker.bootstrap}"
    code, out, err = cli("run", str(spec), "--trace", url)
    assert code == 1 and not out
    assert "3 bad row(s)" in err
    assert f"{url} topic {a} partition 0 offset 1: bad JSON" in err
    assert f"{url} topic {a} partition 1 offset 0: a record without a value (a tombstone)" in err
    assert f"{url} topic {a} partition 1 offset 1: column `k`: expected BIGINT" in err
    assert "Spark's job reads `k` as null" in err


def test_bad_records_skipped_or_written_to_a_file(topics, kafka_broker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    a, _ = topics
    spec = make_spec(tmp_path, *topics)
    url = f"kafka://{kafka_broker.bootstrap}"
    code, out, err = cli("run", str(spec), "--trace", url, "--bad-rows", "skip")
    assert code == 0, err
    assert sorted(json.loads(line)["row"]["a_k"] for line in out.splitlines()) == [1, 3]
    assert f"{url} topic {a} partition 0 offset 1: bad JSON" in err and "(skipped)" in err
    assert "3 bad rows skipped" in err
    listed = tmp_path / "bad.jsonl"
    code, out, err = cli("run", str(spec), "--trace", url, "--bad-rows", str(listed))
    assert code == 0, err
    bad = [json.loads(line) for line in listed.read_text(encoding="utf-8").splitlines()]
    assert [(b["topic"], b["partition"], b["offset"], b["stream"], b["batch"]) for b in bad] == [
        (a, 0, 1, "a", 0),
        (a, 1, 0, "a", 0),
        (a, 1, 1, "a", 0),
    ]
    assert bad[0]["text"] == "not json" and bad[1]["text"] == ""
    assert "line" not in bad[0] and "bad JSON" in bad[0]["error"]


def test_capture_reports_skipped_records_and_writes_only_good_rows(  # type: ignore[no-untyped-def]
    topics, kafka_broker, tmp_path
) -> None:
    spec = make_spec(tmp_path, *topics)
    out = tmp_path / "t.jsonl"
    code, _, err = cli(
        "capture", str(spec), "--from", f"kafka://{kafka_broker.bootstrap}", "-o", str(out),
        "--bad-rows", "skip",
    )  # fmt: skip
    assert code == 0, err
    assert "4 rows in 1 batch from" in err and "3 bad rows skipped" in err
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0] == {
        "batch": 0,
        "stream": "a",
        "row": {"k": 1, "t": "2026-01-01T00:00:00Z", "v": "x"},
    }
    assert [(r["stream"], r["row"]["k"]) for r in lines] == [("a", 1), ("a", 3), ("b", 1), ("b", 3)]
    code, _, err = cli(
        "capture", str(spec), "--from", f"kafka://{kafka_broker.bootstrap}", "-o", str(out)
    )
    assert code == 1 and "3 bad row(s)" in err


def test_kafka_url_alone_reads_the_specs_own_servers(kafka_broker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    prefix = run_prefix()
    create_topics(kafka_broker.bootstrap, [prefix + "a", prefix + "b"], 1)
    produce(kafka_broker.bootstrap, prefix + "a", [(0, good(1, 0))])
    produce(kafka_broker.bootstrap, prefix + "b", [(0, good(1, 30))])
    spec = make_spec(tmp_path, prefix + "a", prefix + "b", servers=kafka_broker.bootstrap)
    code, out, err = cli("run", str(spec), "--trace", "kafka://", "--verbose")
    assert code == 0, err
    assert [json.loads(line)["row"]["a_k"] for line in out.splitlines()] == [1]
    assert f"on {kafka_broker.bootstrap} (json; one batch)" in err
    assert f"batch 0: `a` {prefix}a/0 [0, 1); `b` {prefix}b/0 [0, 1)" in err


def plan_for(text: str) -> Any:
    result = check_text(text, "replay.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    return result.plan


@pytest.fixture
def counted(kafka_broker):  # type: ignore[no-untyped-def]
    """Topics x1, x2 (2 partitions: 3 and 2 records) and y (1 partition: 1 record)."""
    prefix = run_prefix()
    create_topics(kafka_broker.bootstrap, [prefix + "x1", prefix + "x2"], 2)
    create_topics(kafka_broker.bootstrap, [prefix + "y"], 1)
    for topic in ("x1", "x2"):
        produce(
            kafka_broker.bootstrap,
            prefix + topic,
            [(0, good(1, 1)), (1, good(2, 2)), (0, good(3, 3)), (1, good(4, 4)), (0, good(5, 5))],
        )
    produce(kafka_broker.bootstrap, prefix + "y", [(0, good(1, 30))])
    return prefix


def replay_of(prefix: str, bootstrap: str, source: str, **kwargs: Any) -> Any:
    text = f"""
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 minute
from kafka ({source.replace("P.", prefix)}, bootstrap_servers = 'nowhere:1')
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
from kafka (topic = '{prefix}y', bootstrap_servers = 'nowhere:1')
join j = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
"""
    return read_kafka(plan_for(text), f"kafka://{bootstrap}", **kwargs)


@pytest.mark.parametrize(
    ("source", "partitions"),
    [
        ("topic = 'P.x1'", {"x1/0": 3, "x1/1": 2}),
        ("subscribe = 'P.x1, P.x2'", {"x1/0": 3, "x1/1": 2, "x2/0": 3, "x2/1": 2}),
        ("subscribePattern = 'P.x[0-9]'", {"x1/0": 3, "x1/1": 2, "x2/0": 3, "x2/1": 2}),
        ("assign = '{\"P.x2\": [1]}'", {"x2/1": 2}),
        ('topic = \'P.x1\', startingOffsets = \'{"P.x1": {"0": 1, "1": -1}}\'', {"x1/0": 2}),
        ("topic = 'P.x1', startingOffsets = 'latest'", {"x1/0": 3, "x1/1": 2}),
    ],
    ids=["topic", "subscribe-list", "pattern", "assign", "json-offsets", "latest-is-earliest"],
)
def test_what_a_source_reads(
    counted, kafka_broker, source: str, partitions: dict[str, int]
) -> None:  # type: ignore[no-untyped-def]
    prefix = counted
    replay = replay_of(prefix, kafka_broker.bootstrap, source)
    (batch,) = replay.batches
    got = {f"{t[len(prefix) :]}/{p}": b - a for (t, p), (a, b) in batch["a"].items() if b > a}
    assert got == partitions
    assert len(replay.trace.batches[0].rows_of("a")) == sum(partitions.values())
    if "latest" in source:
        assert any("startingOffsets = 'latest'" in note for note in replay.notes)


def test_rows_of_a_batch_are_in_topic_partition_offset_order(counted, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    replay = replay_of(counted, kafka_broker.bootstrap, "subscribe = 'P.x2,P.x1'")
    assert [row[0] for row in replay.trace.batches[0].rows_of("a")] == [1, 3, 5, 2, 4] * 2


def test_the_command_line_limit_and_offsets_win_over_the_specs(counted, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    source = "topic = 'P.x1', maxOffsetsPerTrigger = '100', startingOffsets = 'latest'"
    replay = replay_of(
        counted,
        kafka_broker.bootstrap,
        source,
        max_offsets=1,
        starting=json.dumps({counted + "x1": {"0": -2, "1": 1}}),
    )
    assert [sorted(b["a"].values()) for b in replay.batches if "a" in b] == [
        [(0, 1), (1, 2)],
        [(1, 2), (2, 2)],
        [(2, 2), (2, 3)],
    ]
    assert not replay.notes
    # a partition the option does not name starts at the earliest offset; a topic that no
    # stream reads is refused
    replay = replay_of(
        counted, kafka_broker.bootstrap, source, starting=json.dumps({counted + "x1": {"1": 1}})
    )
    assert sorted(replay.batches[0]["a"].values()) == [(0, 3), (1, 2)]
    with pytest.raises(UsageError, match="names 'elsewhere', which no replayed stream reads"):
        replay_of(counted, kafka_broker.bootstrap, source, starting='{"elsewhere": {"0": 0}}')


def test_a_spec_trigger_once_reads_everything_in_one_batch(counted, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    text = f"""
set trigger = 'once'
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 minute
from kafka (topic = '{counted}x1', bootstrap_servers = 'x:1', maxOffsetsPerTrigger = '1')
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
from kafka (topic = '{counted}y', bootstrap_servers = 'x:1')
join j = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
"""
    replay = read_kafka(plan_for(text), f"kafka://{kafka_broker.bootstrap}")
    assert len(replay.batches) == 1
    assert any("trigger 'once'" in note for note in replay.notes)
    result = run(plan_for(text), replay.trace)
    assert [b.data for b in result.batches] == [True]  # once stops there: no no-data batch


def test_csv_values(kafka_broker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    prefix = run_prefix()
    create_topics(kafka_broker.bootstrap, [prefix + "a", prefix + "b"], 1)
    produce(kafka_broker.bootstrap, prefix + "a", [(0, b"1,2026-01-01T00:00:00Z,x"), (0, b"2")])
    produce(kafka_broker.bootstrap, prefix + "b", [(0, good(1, 30))])
    spec = make_spec(tmp_path, prefix + "a", prefix + "b", extra=", format = 'csv'")
    listed = tmp_path / "bad.jsonl"
    code, out, err = cli(
        "run", str(spec), "--trace", f"kafka://{kafka_broker.bootstrap}", "--bad-rows", str(listed)
    )
    assert code == 0, err
    assert [json.loads(line)["row"]["v"] for line in out.splitlines()] == ["x"]
    (bad,) = [json.loads(line) for line in listed.read_text(encoding="utf-8").splitlines()]
    assert bad["offset"] == 1 and "1 field(s)" in bad["error"]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("extra", "args", "says"),
    [
        ("", ["--trace", "kafka://nohost"], "'nohost' is not HOST:PORT"),
        ("", ["--trace", "kafka://h:99999"], "is not HOST:PORT"),
        ("", ["--trace", "kafka://{B}", "--checkpoint", "{D}/chk"], "--checkpoint needs a trace"),
        ("", ["--trace", "{D}/replay.sjoin", "--max-offsets-per-trigger", "2"], "apply to --trace"),
        ("", ["--trace", "kafka://{B}", "--max-offsets-per-trigger", "0"], "0 is not in the range"),
        ("", ["--trace", "kafka://{B}", "--starting-offsets", "soon"], "must be earliest, latest"),
        (", maxOffsetsPerTrigger = 'many'", ["--trace", "kafka://{B}"], "positive integer"),
        (", startingTimestamp = '1000'", ["--trace", "kafka://{B}"], "offsets up by time"),
        # (`subscribe` beside `topic` is E002 when the spec is read: one option to sjoin)
        (
            ", subscribePattern = 'x.*'",
            ["--trace", "kafka://{B}"],
            "it gives topic, subscribePattern",
        ),
        (
            ', startingOffsets = \'{"nope": {"0": 0}}\'',
            ["--trace", "kafka://{B}"],
            "must name every partition",
        ),
        ("", ["--trace", "kafka://127.0.0.1:{C}"], "cannot read the topics from Kafka at"),
    ],
    ids=[
        "no-port",
        "port-range",
        "checkpoint",
        "limit-on-a-file",
        "limit-zero",
        "bad-starting-offsets",
        "spec-limit",
        "by-time",
        "two-strategies",
        "offsets-of-another-topic",
        "no-broker",
    ],
)
def test_what_cannot_be_replayed_is_a_usage_error(  # type: ignore[no-untyped-def]
    extra, args, says, topics, kafka_broker, tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr("sjoin.runtime.io.kafka_trace.METADATA_TIMEOUT_S", 1.0)
    spec = make_spec(tmp_path, *topics, extra=extra)
    filled = [a.format(B=kafka_broker.bootstrap, D=tmp_path, C=closed_port()) for a in args]
    code, out, err = cli("run", str(spec), *filled)
    assert code == 2, (out, err)
    assert says in err


def test_a_value_format_kafka_sources_do_not_have_is_refused_by_check(  # type: ignore[no-untyped-def]
    topics, kafka_broker, tmp_path
) -> None:
    """`format = 'avro'` is a spec error (E024, exit 1) before anything is replayed."""
    spec = make_spec(tmp_path, *topics, extra=", format = 'avro'")
    code, out, err = cli("run", str(spec), "--trace", f"kafka://{kafka_broker.bootstrap}")
    assert code == 1, (out, err)
    assert "error[E024]" in err and "not `avro`" in err


def test_a_missing_topic_and_a_stream_not_from_kafka_are_usage_errors(  # type: ignore[no-untyped-def]
    topics, kafka_broker, tmp_path
) -> None:
    url = f"kafka://{kafka_broker.bootstrap}"
    spec = make_spec(tmp_path, topics[0], "no-such-topic")
    code, _, err = cli("run", str(spec), "--trace", url)
    assert code == 2 and "stream `b`: no topic 'no-such-topic'" in err
    text = SPEC.format(a=topics[0], b="x", servers="h:1", extra="").replace(
        "from kafka (topic = 'x', bootstrap_servers = 'h:1')", "from json (path = 'in/b')"
    )
    spec.write_text(text, encoding="utf-8")
    code, _, err = cli("run", str(spec), "--trace", url)
    assert code == 2 and "not read `from kafka`: `b` (`from json`)" in err
    code, _, err = cli("capture", str(spec), "--from", str(spec), "-o", str(tmp_path / "o"))
    assert code == 2 and "--from takes kafka://HOST:PORT" in err


def test_relation_replays_the_streams_of_one_query(counted, kafka_broker) -> None:  # type: ignore[no-untyped-def]
    text = f"""
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 minute
from kafka (topic = '{counted}x1', bootstrap_servers = 'x:1')
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
from kafka (topic = '{counted}y', bootstrap_servers = 'x:1')
stream c (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
from json (path = 'in/c')
join ab = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
join ac = a INNER JOIN c ON a.k = c.k AND c.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
"""
    url = f"kafka://{kafka_broker.bootstrap}"
    with pytest.raises(UsageError, match=r"not read `from kafka`: `c` \(`from json`\)"):
        read_kafka(plan_for(text), url)
    replay = read_kafka(plan_for(text), url, relation="ab")
    assert sorted(replay.sources) == ["a", "b"]
    assert sorted(replay.trace.batches[0].rows) == ["a", "b"]
