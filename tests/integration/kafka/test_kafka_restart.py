"""A Kafka job stopped and restarted from its checkpoint loses no row. What can repeat is
exactly what Spark's sink guarantees allow: a batch whose commit was not written when the
job died runs again on restart; the file sink (its `_spark_metadata` log) writes it once,
the Kafka sink (at least once) writes its rows a second time. A crash between the sink's
write and the commit is made deterministic here by removing the last commit file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.jvm.kafka_driver import (
    KafkaStreamDriver,
    consume_all,
    create_topics,
    kafka_plan,
    run_prefix,
    topic_of,
)
from sjoin.jvm.verify import load_job, spark_row
from sjoin.runtime import run
from sjoin.runtime.io.trace import read_trace, schemas_of

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[3]


def _normal_rows(rows):  # type: ignore[no-untyped-def]
    from tests.integration.kafka.test_kafka_end_to_end import _rows

    return _rows(rows)


@pytest.mark.parametrize("example", ["unpaid_orders", "ad_attribution"])
def test_restart_from_the_checkpoint_loses_nothing(example, kafka_broker, kafka_spark, tmp_path):  # type: ignore[no-untyped-def]
    spec = ROOT / "examples" / f"{example}.sjoin"
    trace_path = spec.with_name(f"{example}.trace.jsonl")
    checked = check_file(spec)
    assert checked.plan is not None
    from sjoin.jvm.verify import like_local

    planned, _ = like_local(checked, str(kafka_spark.version))
    assert planned.plan is not None
    prefix = run_prefix()
    plan = kafka_plan(planned.plan, kafka_broker.bootstrap, prefix, tmp_path)
    (sink,) = plan.sinks
    root = sink.relation
    streams = [s for s in plan.streams if s.source is not None]
    topics = {s.name: topic_of(s.source) or "" for s in streams}
    wanted = list(topics.values())
    if sink.target.format == "kafka":
        wanted.append(topic_of(sink.target) or "")
    create_topics(kafka_broker.bootstrap, wanted)
    trace = read_trace(str(trace_path), schemas_of(plan), "stop")
    by_name = {s.name: s for s in streams}
    feeds = [
        {n: [spark_row(r, by_name[n]) for r in rows.to_rows()] for n, rows in b.rows.items()}
        for b in trace.batches
    ]
    half = len(feeds) // 2

    def phase(batches, first: bool) -> int:  # type: ignore[no-untyped-def]
        """Run the job's sink over ``batches``; the last batch id its sink committed."""
        job = load_job(plan, str(tmp_path / ("job1" if first else "job2")))
        inputs = job.read_inputs(kafka_spark)
        rels = job.build(kafka_spark, inputs)
        driver = KafkaStreamDriver(kafka_spark, inputs, kafka_broker.bootstrap, topics)
        with driver:
            if first:
                driver.produce(batches[0])
                batches = batches[1:]
            driver.start(rels[root], "append")
            driver.extra_queries = job.start_sinks(rels)
            driver.settle()
            for feed in batches:
                driver.feed(feed)
            progress = driver.extra_queries[0].lastProgress
        return int(progress["batchId"])

    (tmp_path / "job1").mkdir()
    (tmp_path / "job2").mkdir()
    last = phase(feeds[:half], first=True)
    # the job died after its sink wrote batch `last` but before Spark wrote its commit
    commit = Path(sink.checkpoint or "") / "commits" / str(last)
    assert commit.exists()
    commit.unlink()
    commit.with_name(f".{last}.crc").unlink(missing_ok=True)  # Hadoop's checksum beside it
    phase(feeds[half:], first=False)

    runtime = run(plan, str(trace_path))
    every = [row for b in runtime.batches for rel, row in b.rows if rel == root]
    repeated = [
        row for b in runtime.batches if b.batch == last for rel, row in b.rows if rel == root
    ]
    if sink.target.format == "kafka":
        records = consume_all(kafka_broker.bootstrap, topic_of(sink.target) or "")
        got = _normal_rows([json.loads(r["value"]) for r in records])
        # at least once: every row, and the rows of the re-run batch a second time
        assert got == _normal_rows(every) + _normal_rows(repeated)
    else:
        frame = kafka_spark.read.format(sink.target.format).load(str(tmp_path / "out" / root))
        got = _normal_rows([r.asDict() for r in frame.collect()])
        assert got == _normal_rows(every)  # exactly once
    assert sum(Counter(_normal_rows(every)).values()) > 0
