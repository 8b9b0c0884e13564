"""End to end on a real Kafka broker: every example with Kafka sources runs as its generated
job on local Spark, its `read_inputs` reading topics (2 partitions) into which each trace
batch is produced as one micro-batch; Spark's output, watermark and state metrics equal
`sjoin run`'s batch by batch, and the job's own sinks (a Kafka topic, Parquet files) hold
exactly the rows `sjoin run` emits."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_file
from sjoin.jvm.kafka_driver import KafkaRunner, consume_all, topic_of
from sjoin.jvm.verify import verify
from sjoin.runtime import run

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[3]
KAFKA_EXAMPLES = sorted(
    path
    for path in (ROOT / "examples").glob("*.sjoin")
    if any(
        s.source is not None and s.source.format == "kafka"
        for s in (check_file(path).plan.streams if check_file(path).plan else ())
    )
)


def _normal(value: Any) -> Any:
    """One form for a value read back from a sink and the runtime's: times as UTC epoch
    microseconds, decimals as Decimal."""
    if isinstance(value, datetime):
        return round(value.timestamp() * 1_000_000)
    if isinstance(value, str) and len(value) >= 20 and value[4] == "-" and value[10] == "T":
        return round(datetime.fromisoformat(value).timestamp() * 1_000_000)
    if isinstance(value, float | Decimal) and not isinstance(value, bool):
        return Decimal(str(value)).normalize()  # to_json writes DECIMAL 127.40 as 127.4
    return value


def _rows(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(
        json.dumps({k: _normal(v) for k, v in sorted(r.items())}, default=str) for r in rows
    )


def test_the_examples_with_kafka_sources_are_found() -> None:
    assert {p.stem for p in KAFKA_EXAMPLES} >= {"ad_attribution", "unpaid_orders"}


@pytest.mark.parametrize("spec", KAFKA_EXAMPLES, ids=lambda p: p.stem)
def test_example_through_kafka_equals_sjoin_run(spec, kafka_broker, kafka_spark, tmp_path):  # type: ignore[no-untyped-def]
    checked = check_file(spec)
    assert checked.plan is not None
    trace = spec.with_name(spec.stem + ".trace.jsonl")
    # the run's session has Kafka's connector and not Delta's (Delta runs on Spark
    # DELTA_SPARK, tests/integration/delta): a spec with a Delta sink is compared without its sinks
    delta_sinks = [s.relation for s in checked.plan.sinks if s.target.format == "delta"]
    runner = KafkaRunner(kafka_spark, kafka_broker.bootstrap, tmp_path, with_sinks=not delta_sinks)
    from sjoin.jvm.verify import like_local

    planned, _ = like_local(checked, str(kafka_spark.version))
    assert planned.plan is not None
    report = verify(planned.plan, trace, spark=kafka_spark, make_runner=runner.for_plan)
    assert report.agree, report.text()
    assert report.queries and all(q.spark_batches > 0 for q in report.queries)

    # the job's own sinks: what they hold equals every row sjoin run emits for the relation
    runtime = run(planned.plan, trace)
    sinks = {s.relation: s for s in planned.plan.sinks}
    checked_sinks = 0
    for root, prefix, folder in runner.runs:
        sink = sinks.get(root)
        if sink is None or delta_sinks:
            continue
        expected = _rows([row for b in runtime.batches for rel, row in b.rows if rel == root])
        if sink.target.format == "kafka":
            topic = prefix + (topic_of(sink.target) or "")
            records = consume_all(kafka_broker.bootstrap, topic)
            got = _rows([json.loads(r["value"]) for r in records])
            key = sink.target.option("key")
            for record in records:  # the `key` option's column, as text, or no key
                value = json.loads(record["value"])
                assert record["key"] == (str(value[key]) if key else None)
        else:
            path = folder / "out" / root
            frame = kafka_spark.read.format(sink.target.format).load(str(path))
            got = _rows([r.asDict() for r in frame.collect()])
        assert got == expected, f"{root}: the {sink.target.format} sink holds other rows"
        checked_sinks += 1
    assert checked_sinks == (0 if delta_sinks else len(planned.plan.sinks))
