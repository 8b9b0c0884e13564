"""`sjoin produce SPEC --trace T --to kafka://HOST:PORT` (jvm/produce.py): a trace written into
the spec's topics on the real broker of the run, as `verify --kafka` writes them (its
``KafkaFeeder``): row i of a stream into partition i mod n, keyed by i or by its key_column,
stamped with its timestamp_column; read back by `sjoin run --trace kafka://` it gives what the
trace file gives; and every input that cannot be produced is a clear error, nothing
produced."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from sjoin.jvm.kafka_driver import consume_all, run_prefix
from sjoin.runtime.engine.values import parse_timestamp

from .test_replay import EXAMPLES, cli, closed_port, prefixed_spec

HERE = Path(__file__).parent
RECORD_COLUMNS = HERE / "record_columns.sjoin"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _one_batch(source: Path, target: Path, replay_order: bool = False) -> Path:
    """The trace's rows as one batch, in trace order per stream, or in the order the replay
    reads them back: the rows of partition 0 (the even ones), then partition 1's."""
    records = _lines(source)
    streams: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        streams.setdefault(r["stream"], []).append(r["row"])
    target.write_text(
        "".join(
            json.dumps({"batch": 0, "stream": s, "row": row}) + "\n"
            for s, rows in streams.items()
            for row in (rows[0::2] + rows[1::2] if replay_order else rows)
        ),
        encoding="utf-8",
    )
    return target


def _topics(bootstrap: str) -> set[str]:
    from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def test_records_are_keyed_stamped_and_spread_as_verify_writes_them(  # type: ignore[no-untyped-def]
    kafka_broker, tmp_path
) -> None:
    prefix = run_prefix()
    spec = prefixed_spec(RECORD_COLUMNS, prefix, tmp_path)
    trace = RECORD_COLUMNS.with_name("record_columns.trace.jsonl")
    url = f"kafka://{kafka_broker.bootstrap}"
    code, _, err = cli("produce", str(spec), "--trace", str(trace), "--to", url)
    assert code == 0, err
    assert (
        f"into topic '{prefix}clicks' at {kafka_broker.bootstrap} (2 partitions, made now)" in err
    )
    assert f"--trace {url}" in err
    rows: dict[str, list[dict[str, Any]]] = {}
    for r in _lines(trace):
        rows.setdefault(r["stream"], []).append(r["row"])
    for stream, time_column, key_column in (
        ("impressions", "impression_time", None),
        ("clicks", "click_time", "user_id"),
    ):
        records = consume_all(kafka_broker.bootstrap, prefix + stream)
        assert len(records) == len(rows[stream])
        # per partition in offset order: partition p holds rows p, p + 2, ...
        by_partition: dict[int, list[dict[str, Any]]] = {}
        for record in sorted(records, key=lambda r: (r["partition"], r["offset"])):
            by_partition.setdefault(record["partition"], []).append(record)
        for p, got in by_partition.items():
            want = list(enumerate(rows[stream]))[p::2]
            assert len(got) == len(want)
            for record, (i, row) in zip(got, want, strict=True):
                key = str(i) if key_column is None else row[key_column]
                assert record["key"] == key
                stamp = parse_timestamp(row[time_column])
                assert stamp is not None and record["timestamp"] == stamp // 1000
                value = {k: v for k, v in row.items() if k not in (time_column, key_column)}
                assert json.loads(record["value"]) == value


@pytest.mark.parametrize("spec", [*EXAMPLES, RECORD_COLUMNS], ids=lambda p: p.stem)
def test_a_produced_trace_run_from_kafka_is_the_trace_run_from_its_file(  # type: ignore[no-untyped-def]
    spec, kafka_broker, tmp_path
) -> None:
    """produce, then `sjoin run --trace kafka://`: the same output as `sjoin run` of the
    trace file (one batch: a replay without maxOffsetsPerTrigger reads all in one)."""
    renamed = prefixed_spec(spec, run_prefix(), tmp_path)
    source = spec.with_name(spec.stem + ".trace.jsonl")
    trace = _one_batch(source, tmp_path / "one.jsonl")
    url = f"kafka://{kafka_broker.bootstrap}"
    code, _, err = cli("produce", str(renamed), "--trace", str(trace), "--to", url)
    assert code == 0, err
    code, replayed, err = cli("run", str(renamed), "--trace", url)
    assert code == 0, err
    code, from_file, err = cli("run", str(renamed), "--trace", str(trace))
    assert code == 0, err
    # the same rows; in the same order when the file holds them in the replay's order
    assert sorted(replayed.splitlines()) == sorted(from_file.splitlines()) and replayed
    ordered = _one_batch(source, tmp_path / "ordered.jsonl", replay_order=True)
    code, from_ordered, err = cli("run", str(renamed), "--trace", str(ordered))
    assert code == 0, err
    assert replayed == from_ordered


def test_an_existing_topic_keeps_its_partitions(kafka_broker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from sjoin.jvm.kafka_driver import create_topics

    prefix = run_prefix()
    spec = prefixed_spec(RECORD_COLUMNS, prefix, tmp_path)
    create_topics(kafka_broker.bootstrap, [prefix + "impressions"], 3)
    trace = RECORD_COLUMNS.with_name("record_columns.trace.jsonl")
    code, _, err = cli(
        "produce", str(spec), "--trace", str(trace), "--to", f"kafka://{kafka_broker.bootstrap}",
        "--partitions", "1",
    )  # fmt: skip
    assert code == 0, err
    assert f"'{prefix}impressions' at {kafka_broker.bootstrap} (3 partitions)" in err
    assert f"'{prefix}clicks' at {kafka_broker.bootstrap} (1 partition, made now)" in err
    records = consume_all(kafka_broker.bootstrap, prefix + "impressions")
    assert sorted(r["partition"] for r in records) == sorted(i % 3 for i in range(len(records)))


MIXED = """spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
from kafka (topic = '{a}', bootstrap_servers = '{servers}')
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
join j = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
"""


def test_rows_of_a_stream_not_from_kafka_are_said_not_produced(  # type: ignore[no-untyped-def]
    kafka_broker, tmp_path
) -> None:
    topic = run_prefix() + "a"
    spec = tmp_path / "m.sjoin"
    spec.write_text(MIXED.format(a=topic, servers=kafka_broker.bootstrap))
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        "".join(
            json.dumps({"batch": 0, "stream": s, "row": {"k": 1, "t": "2026-01-01T00:00:00Z"}})
            + "\n"
            for s in ("a", "b", "b")
        )
    )
    # kafka:// alone: the spec's own bootstrap_servers
    code, _, err = cli("produce", str(spec), "--trace", str(trace), "--to", "kafka://")
    assert code == 0, err
    assert "2 rows of `b` (no `from`) not produced: it is not read from kafka" in err
    assert len(consume_all(kafka_broker.bootstrap, topic)) == 1


PATTERN = """spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
from kafka ({how}, bootstrap_servers = 'localhost:1')
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
from kafka (topic = 'b', bootstrap_servers = 'localhost:1')
join j = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
"""
NO_KAFKA = """spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
join j = a INNER JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
"""
ROW = {"k": 1, "t": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("spec_text", "args", "code", "says"),
    [
        (PATTERN.format(how="topic = 'a'"), ["--to", "kafka://nohost"], 2, "'nohost' is not HOST"),
        (PATTERN.format(how="topic = 'a'"), ["--to", "http://h:1"], 2, "--to takes kafka://"),
        (PATTERN.format(how="topic = 'a'"), ["--to", "kafka://h:99999"], 2, "is not HOST:PORT"),
        (
            PATTERN.format(how="topic = 'a'"),
            ["--to", "kafka://127.0.0.1:{C}", "--timeout", "2"],
            2,
            "cannot reach Kafka at 127.0.0.1:{C} within 2 s",
        ),
        (NO_KAFKA, ["--to", "kafka://{B}"], 2, "the spec reads no stream `from kafka`"),
        (
            PATTERN.format(how="subscribePattern = 'a.*'"),
            ["--to", "kafka://{B}"],
            2,
            "reads its topics by subscribePattern",
        ),
        (
            PATTERN.format(how="assign = '{{\"a\": [0]}}'"),
            ["--to", "kafka://{B}"],
            2,
            "reads its topics by assign",
        ),
        (
            PATTERN.format(how="subscribe = 'a,c'"),
            ["--to", "kafka://{B}"],
            2,
            "subscribes to 2 topics (a, c)",
        ),
        (
            PATTERN.format(how="topic = 'a', format = 'csv'"),
            ["--to", "kafka://{B}"],
            2,
            "produce writes JSON values",
        ),
        (
            PATTERN.format(how="topic = 'a'"),
            ["--to", "kafka://{B}", "--partitions", "0"],
            2,
            "0 is not in the range",
        ),
        (
            PATTERN.format(how="topic = 'a', timestamp_column = 't'"),
            ["--to", "kafka://{B}", "--trace", "{D}/sub-ms.jsonl"],
            1,
            "has a fraction of a millisecond",
        ),
        (
            PATTERN.format(how="topic = 'a'"),
            ["--to", "kafka://{B}", "--trace", "/dev/zero"],
            2,
            "is not a regular file",
        ),
        (
            PATTERN.format(how="topic = 'a'"),
            ["--to", "kafka://{B}", "--trace", "{D}/bad.jsonl"],
            1,
            "bad row",
        ),
    ],
    ids=[
        "no-port",
        "not-kafka",
        "port-range",
        "no-broker",
        "no-kafka-source",
        "pattern",
        "assign",
        "two-topics",
        "csv",
        "partitions",
        "sub-millisecond",
        "dev-zero",
        "bad-row",
    ],
)
def test_what_cannot_be_produced_is_an_error_and_nothing_is_produced(  # type: ignore[no-untyped-def]
    spec_text, args, code, says, kafka_broker, tmp_path
) -> None:
    prefix = run_prefix()
    spec = tmp_path / "s.sjoin"
    spec.write_text(
        spec_text.replace("topic = 'a'", f"topic = '{prefix}a'").replace(
            "topic = 'b'", f"topic = '{prefix}b'"
        )
    )
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        "".join(json.dumps({"batch": 0, "stream": s, "row": ROW}) + "\n" for s in ("a", "b"))
    )
    (tmp_path / "sub-ms.jsonl").write_text(
        json.dumps({"batch": 0, "stream": "a", "row": {**ROW, "t": "2026-01-01T00:00:00.0005Z"}})
        + "\n"
    )
    (tmp_path / "bad.jsonl").write_text(
        json.dumps({"batch": 0, "stream": "a", "row": {**ROW, "k": "x"}}) + "\n"
    )
    port = str(closed_port())
    fill = {"{B}": kafka_broker.bootstrap, "{C}": port, "{D}": str(tmp_path)}
    argv = ["produce", str(spec), "--trace", str(trace)]
    for a in args:
        for k, v in fill.items():
            a = a.replace(k, v)
        argv.append(a)
    for k, v in fill.items():
        says = says.replace(k, v)
    if "--trace" in args:  # the case's own trace replaces the default one
        at = argv.index("--trace", 4)
        argv[3] = argv[at + 1]
        del argv[at : at + 2]
    started = time.monotonic()
    got, _, err = cli(*argv)
    assert time.monotonic() - started < 60
    assert got == code, err
    assert says in " ".join(err.split()), err
    assert "Traceback" not in err and "E999" not in err
    assert not {prefix + "a", prefix + "b"} & _topics(kafka_broker.bootstrap)
