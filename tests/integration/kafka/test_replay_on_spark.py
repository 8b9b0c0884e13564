"""The replay against Spark itself: records in 2-partition topics, the generated job's own
Kafka sources (maxOffsetsPerTrigger 4 and 3) read by a query with trigger(availableNow=True),
and each of Spark's micro-batches (its progress' per-partition startOffset and endOffset per
source, its rows and watermark) is the replay's batch of the same number: the same offset
ranges, the same rows, the same watermark, no no-data batch between them, none after the last.
Under trigger(once=True) Spark reads everything in one batch, the limit notwithstanding, and so
does the replay of a spec that says `set trigger = 'once'`."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.kafka_driver import create_topics, kafka_plan, run_prefix
from sjoin.jvm.verify import load_job
from sjoin.runtime import run
from sjoin.runtime.engine.values import parse_timestamp
from sjoin.runtime.io.kafka_trace import read_kafka

from .test_replay import produce

pytestmark = pytest.mark.spark

SPEC = """spark 4.3
set trigger = '{trigger}'
stream l (k BIGINT, t TIMESTAMP, v STRING)
watermark t delay 10 seconds
from kafka (topic = 'L', bootstrap_servers = 'localhost:9092', maxOffsetsPerTrigger = '4')
stream r (k BIGINT, t TIMESTAMP, w STRING)
watermark t delay 10 seconds
from kafka (topic = 'R', bootstrap_servers = 'localhost:9092', maxOffsetsPerTrigger = '3')
join j = l LEFT OUTER JOIN r ON l.k = r.k AND r.t BETWEEN l.t AND l.t + INTERVAL 5 SECONDS
"""


def record(k: int, second: int, column: str, value: str) -> bytes:
    return json.dumps({"k": k, "t": f"2026-01-01T00:00:{second:02d}Z", column: value}).encode()


def spark_batches(spark: Any, plan: Any, folder: Path, trigger: dict[str, bool]) -> list[Any]:
    """Run the job's query of `j` over its Kafka sources under ``trigger``; per batch id, the
    progress and the rows (timestamps as epoch microseconds)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    job = load_job(plan, str(folder))
    confs = {k: v for k, v in job.SPARK_CONF.items() if "shuffle" not in k}
    saved = {k: spark.conf.get(k, None) for k in confs}
    for key, value in confs.items():
        spark.conf.set(key, value)
    rows: dict[int, list[dict[str, Any]]] = {}

    def capture(frame: Any, batch_id: int) -> None:
        columns = [
            F.unix_micros(f.name).alias(f.name) if isinstance(f.dataType, TimestampType) else f.name
            for f in frame.schema.fields
        ]
        rows[batch_id] = [r.asDict() for r in frame.select(*columns).collect()]

    try:
        relations = job.build(spark, job.read_inputs(spark))
        query = (
            relations["j"]
            .writeStream.foreachBatch(capture)
            .option("checkpointLocation", str(folder / "chk"))
            .trigger(**trigger)
            .start()
        )
        query.awaitTermination(600)
        progress = [p if isinstance(p, dict) else json.loads(p.json) for p in query.recentProgress]
    finally:
        for key, before in saved.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)
    return [(p, rows.get(p["batchId"], [])) for p in progress]


def ranges(progress: dict[str, Any], topic: str) -> dict[int, tuple[int, int]]:
    """A source's per-partition [start, end) in one progress report (start: 0 in batch 0)."""
    (source,) = [s for s in progress["sources"] if topic in s["endOffset"]]
    end = json.loads(source["endOffset"])[topic]
    start = json.loads(source["startOffset"] or "null") or {topic: {}}  # batch 0: "null"
    start = start[topic]
    return {int(p): (start.get(p, 0), until) for p, until in end.items()}


def runtime_rows(rows: list[dict[str, Any]]) -> Counter[str]:
    """Rows as comparable text, the times (`l_t`, `r_t`) as epoch microseconds."""
    out = []
    for row in rows:
        values = {
            k: parse_timestamp(v) if k.endswith("_t") and isinstance(v, str) else v
            for k, v in row.items()
        }
        out.append(json.dumps(values, sort_keys=True))
    return Counter(out)


def test_the_replay_cuts_and_runs_batches_as_spark_does(kafka_broker, kafka_spark) -> None:  # type: ignore[no-untyped-def]
    prefix = run_prefix()
    topic_l, topic_r = prefix + "L", prefix + "R"
    create_topics(kafka_broker.bootstrap, [topic_l, topic_r], 2)
    produce(
        kafka_broker.bootstrap,
        topic_l,
        [(0, record(i, i * 5, "v", f"a{i}")) for i in range(7)]
        + [(1, record(10 + i, 30 + i, "v", f"b{i}")) for i in range(3)],
    )
    produce(
        kafka_broker.bootstrap,
        topic_r,
        [(0, record(0, 2, "w", "x0"))]
        + [(1, record(i + 1, i * 6, "w", f"y{i}")) for i in range(5)],
    )
    url = f"kafka://{kafka_broker.bootstrap}"
    for trigger, spark_trigger, count in (
        ("available_now", {"availableNow": True}, 3),
        ("once", {"once": True}, 1),
    ):
        checked = check_text(SPEC.format(trigger=trigger), "replay.sjoin")
        assert checked.ok and checked.plan is not None
        with tempfile.TemporaryDirectory() as folder:
            plan = kafka_plan(checked.plan, kafka_broker.bootstrap, prefix, folder)
            spark = spark_batches(kafka_spark, plan, Path(folder), spark_trigger)
        replay = read_kafka(plan, url)
        result = run(plan, replay.trace)
        # Spark ran `count` data batches and nothing else; so does the replay
        assert [p["batchId"] for p, _ in spark] == list(range(count)), trigger
        assert all(p["numInputRows"] > 0 for p, _ in spark)
        assert [b.batch for b in result.batches] == list(range(count))
        assert all(b.data for b in result.batches)
        for (progress, rows), cut, ran in zip(spark, replay.batches, result.batches, strict=True):
            for stream, topic in (("l", topic_l), ("r", topic_r)):
                ours = {p: r for (t, p), r in cut.get(stream, {}).items() if t == topic}
                theirs = ranges(progress, topic)
                assert {p: r for p, r in theirs.items() if r[1] > r[0]} == {
                    p: r for p, r in ours.items() if r[1] > r[0]
                }, (trigger, progress["batchId"], stream)
            assert parse_timestamp(progress["eventTime"]["watermark"]) == parse_timestamp(
                ran.watermark or ""
            )
            assert runtime_rows([row for _, row in ran.rows]) == runtime_rows(rows), (
                trigger,
                progress["batchId"],
            )
