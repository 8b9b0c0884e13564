"""A replayed topic is streamed (issue 40, item 1): a check pass reads every record once and
keeps only the bad ones, then each micro-batch's offset ranges are read again from the broker
as the run reaches it.  A bad record in the LAST batch is refused before any output, with
the same error and exit status; the run holds a batch or two (counted); the outputs, and
`sjoin capture`'s file, are those of the replay read whole."""

from __future__ import annotations

import json

from sjoin.api import check_file
from sjoin.jvm.kafka_driver import create_topics, run_prefix
from sjoin.runtime import run
from sjoin.runtime.io.kafka_trace import read_kafka
from sjoin.runtime.io.sinks import MemorySink
from sjoin.runtime.io.trace import StreamedBatches, Trace
from sjoin.runtime.runner import Runner

from .test_replay import cli, good, make_spec, produce

ROWS = 12  # per topic; 2 partitions; maxOffsetsPerTrigger 2: 6 micro-batches


def _topics(bootstrap: str, bad_last: bool = False) -> tuple[str, str]:
    prefix = run_prefix()
    a, b = prefix + "a", prefix + "b"
    create_topics(bootstrap, [a, b], 2)
    records_a = [(i % 2, good(i % 3, i)) for i in range(ROWS)]
    if bad_last:  # the last record of partition 1: in the last micro-batch
        records_a[-1] = (1, b"not json")
    produce(bootstrap, a, records_a)
    produce(bootstrap, b, [(i % 2, good(i % 3, i + 1)) for i in range(ROWS)])
    return a, b


def test_a_replay_holds_a_batch_or_two_and_runs_as_read_whole(kafka_broker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = make_spec(tmp_path, *_topics(kafka_broker.bootstrap))
    plan = check_file(spec).plan
    url = f"kafka://{kafka_broker.bootstrap}"
    replay = read_kafka(plan, url, max_offsets=2)
    batches = replay.trace.batches
    assert isinstance(batches, StreamedBatches)
    assert len(batches) == 6 and batches.reads == []  # checked, nothing held
    whole = Trace(replay.trace.source, list(batches), [], backlog=True)
    batches.close()
    expected = run(plan, whole).batches
    assert sum(len(b.rows) for b in expected) > 0
    for engine in ("reference", "columnar"):
        streamed = read_kafka(plan, url, max_offsets=2).trace
        runner = Runner(plan, streamed, None, "stop", None, [MemorySink()], engine=engine)  # type: ignore[arg-type]
        held = streamed.batches
        assert isinstance(held, StreamedBatches)
        got = []
        for out in runner.run():
            got.append(out)
            assert max(held.reads) <= runner.engine.cursor.trace_index + 1
            assert len(held.held) <= StreamedBatches.KEEP
        assert held.most_held <= StreamedBatches.KEEP
        assert sorted(held.reads) == list(range(6))  # each read once
        assert [(b.batch, b.rows) for b in got] == [(b.batch, b.rows) for b in expected]
    # capture writes the batches as the replay reads them, one at a time
    captured = tmp_path / "c.jsonl"
    code, _, err = cli(
        "capture", str(spec), "--from", url, "-o", str(captured), "--max-offsets-per-trigger", "2"
    )
    assert code == 0, err
    lines = [json.loads(line) for line in captured.read_text().splitlines()]
    assert len(lines) == 2 * ROWS
    assert sorted({line["batch"] for line in lines}) == list(range(6))


def test_a_bad_record_in_the_last_batch_stops_the_run_before_any_output(  # type: ignore[no-untyped-def]
    kafka_broker, tmp_path
) -> None:
    a, b = _topics(kafka_broker.bootstrap, bad_last=True)
    spec = make_spec(tmp_path, a, b)
    url = f"kafka://{kafka_broker.bootstrap}"
    out = tmp_path / "out.jsonl"
    code, stdout, err = cli(
        "run", str(spec), "--trace", url, "--max-offsets-per-trigger", "2", "--output", str(out)
    )
    assert code == 1 and not stdout
    assert "1 bad row(s)" in err
    assert f"{url} topic {a} partition 1 offset {ROWS // 2 - 1}: bad JSON" in err
    assert not out.exists() or out.read_text() == ""
    captured = tmp_path / "c.jsonl"
    code, _, err = cli(
        "capture", str(spec), "--from", url, "-o", str(captured), "--max-offsets-per-trigger", "2"
    )
    assert code == 1 and "1 bad row(s)" in err
    assert not captured.exists()
