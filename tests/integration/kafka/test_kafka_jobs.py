"""The generated Kafka jobs as users run them: `sjoin compile`, then `spark-submit --jars
"$(sjoin jars SPEC)" job.py` against a real broker, and what such a job does with startingOffsets,
failOnDataLoss, bad records and a restart from its checkpoint."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.kafka_driver import consume_all, create_topics, run_prefix
from sjoin.runtime import run

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def _produce(bootstrap: str, topic: str, values: list[str], partitions: int = 2) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, value in enumerate(values):
        producer.produce(topic, key=str(i).encode(), value=value.encode(), partition=i % partitions)
    assert producer.flush(60) == 0


def _trace_rows(trace: Path) -> dict[str, list[str]]:
    """Each stream's rows of a trace file, in order, as the JSON values a producer sends."""
    out: dict[str, list[str]] = {}
    for line in trace.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        out.setdefault(record["stream"], []).append(json.dumps(record["row"]))
    return out


def _normal(row: dict[str, Any]) -> str:
    from tests.integration.kafka.test_kafka_end_to_end import _normal as normal

    return json.dumps({k: normal(v) for k, v in sorted(row.items())}, default=str)


def test_spark_submit_of_a_compiled_kafka_job_equals_sjoin_run(kafka_broker, kafka_spark, tmp_path):  # type: ignore[no-untyped-def]
    """examples/unpaid_orders.sjoin as a user runs it, pointed at the test broker and its own
    topics, with `trigger = 'available_now'` so that the job ends: the whole trace is in the
    topics before it starts, so Spark reads it in one micro-batch (no maxOffsetsPerTrigger),
    then runs its no-data batches; `sjoin run` on the same rows as one batch agrees."""
    prefix = run_prefix()
    text = (ROOT / "examples" / "unpaid_orders.sjoin").read_text(encoding="utf-8")
    text = text.replace("'localhost:9092'", f"'{kafka_broker.bootstrap}'")
    text = re.sub(r"topic = '([^']+)'", lambda m: f"topic = '{prefix}{m.group(1)}'", text)
    text, sources = re.subn(r"(from kafka \([^)]*)\)", r"\1, startingOffsets = 'earliest')", text)
    assert sources == 2, "both sources of the example read the topics from their start"
    text = text.replace("spark 4.3\n", "spark 4.3\nset trigger = 'available_now'\n")
    text = text.replace("'chk/unpaid'", f"'{tmp_path / 'chk'}'")
    spec = tmp_path / "unpaid.sjoin"
    spec.write_text(text, encoding="utf-8")
    trace = ROOT / "examples" / "unpaid_orders.trace.jsonl"
    rows = _trace_rows(trace)
    create_topics(kafka_broker.bootstrap, [f"{prefix}orders", f"{prefix}payments"])
    create_topics(kafka_broker.bootstrap, [f"{prefix}payment-reminders"])
    _produce(kafka_broker.bootstrap, f"{prefix}orders", rows["orders"])
    _produce(kafka_broker.bootstrap, f"{prefix}payments", rows["payments"])

    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    job = tmp_path / "job.py"
    subprocess.run([BIN / "sjoin", "compile", spec, "-o", job], check=True, env=env)
    assert "spark-sql-kafka-0-10_2.13:4.3.0" in job.read_text(encoding="utf-8")
    jars = subprocess.run(
        [BIN / "sjoin", "jars", spec], check=True, env=env, capture_output=True, text=True
    ).stdout.strip()
    assert "spark-sql-kafka" in jars
    done = subprocess.run(
        # the example leaves the partitions to the cluster (Spark's 200): a laptop passes 2
        [
            BIN / "spark-submit",
            "--master",
            "local[2]",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            "--jars",
            jars,
            job,
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "sjoin: warning" not in done.stderr  # Spark's defaults are the planned values

    got = Counter(
        _normal(json.loads(r["value"]))
        for r in consume_all(kafka_broker.bootstrap, f"{prefix}payment-reminders")
    )
    checked = check_text(text, str(spec))
    assert checked.plan is not None
    one_batch = [
        {**json.loads(line), "batch": 0} for line in trace.read_text(encoding="utf-8").splitlines()
    ]
    runtime = run(checked.plan, one_batch)
    expected = Counter(_normal(row) for b in runtime.batches for rel, row in b.rows)
    assert got == expected
    assert sum(expected.values()) > 0


SOURCE_SPEC = """
spark 4.3
stream orders (order_id BIGINT, amount DECIMAL(10, 2), order_time TIMESTAMP)
watermark order_time delay 1 minute
from kafka (topic = '{topic}', bootstrap_servers = '{bootstrap}'{options})
stream payments (order_id BIGINT, payment_time TIMESTAMP)
watermark payment_time delay 1 minute
from kafka (topic = '{topic}-p', bootstrap_servers = '{bootstrap}')
join paid = orders AS o INNER JOIN payments AS p
    ON o.order_id = p.order_id
    AND p.payment_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 MINUTE
"""


def _order(order_id: int, amount: str) -> str:
    return json.dumps(
        {"order_id": order_id, "amount": amount, "order_time": "2026-01-01T00:00:00Z"}
    )


def _orders_read_by_the_job(spark, bootstrap: str, topic: str, options: str, tmp_path):  # type: ignore[no-untyped-def]
    """The rows the generated job's `read_inputs` gives for `orders`, read to the end of the
    topic now (availableNow), or the exception the query ended with."""
    from sjoin.jvm.verify import load_job

    checked = check_text(SOURCE_SPEC.format(topic=topic, bootstrap=bootstrap, options=options))
    assert checked.plan is not None, checked.diagnostics
    job = load_job(checked.plan, str(tmp_path))
    name = f"orders_{abs(hash((topic, options)))}"
    query = (
        job.read_inputs(spark)["orders"]
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / name))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(300)
    except Exception as err:  # the query's failure is what the test looks at
        return err
    return [r.asDict() for r in spark.table(name).orderBy("order_id").collect()]


def test_starting_offsets_latest_by_default_skips_what_the_topic_held(
    kafka_broker, kafka_spark, tmp_path
):  # type: ignore[no-untyped-def]
    """Kafka's default `startingOffsets` is `latest`: a new query never reads the records a
    topic held before it first started; `startingOffsets = 'earliest'` reads them."""
    topic = run_prefix() + "orders"
    create_topics(kafka_broker.bootstrap, [topic, topic + "-p"])
    values = [
        json.dumps({"order_id": i, "amount": "1.50", "order_time": "2026-01-01T00:00:00Z"})
        for i in range(4)
    ]
    _produce(kafka_broker.bootstrap, topic, values)
    assert _orders_read_by_the_job(kafka_spark, kafka_broker.bootstrap, topic, "", tmp_path) == []
    rows = _orders_read_by_the_job(
        kafka_spark, kafka_broker.bootstrap, topic, ", startingOffsets = 'earliest'", tmp_path
    )
    assert [r["order_id"] for r in rows] == [0, 1, 2, 3]


def test_bad_records_become_null_columns_in_the_job(kafka_broker, kafka_spark, tmp_path):  # type: ignore[no-untyped-def]
    """What the job's `from_json` (Spark's default PERMISSIVE mode) makes of bad values: a
    malformed value becomes a row of NULLs, a missing field a NULL column, a value of the
    wrong type a NULL in that column only, an extra field is ignored. Nothing fails; the
    NULL event time of such a row never advances the watermark, and a NULL key never joins.
    docs/kafka.md says so."""
    topic = run_prefix() + "orders"
    create_topics(kafka_broker.bootstrap, [topic, topic + "-p"])
    values = [
        '{"order_id": 1, "amount": "2.50", "order_time": "2026-01-01T00:00:00Z"}',
        '{"order_id": 2, "amount": ',
        '{"order_id": 3, "order_time": "2026-01-01T00:00:01Z"}',
        '{"order_id": 4, "amount": "x", "order_time": "2026-01-01T00:00:02Z"}',
        '{"order_id": 5, "amount": 1, "order_time": "2026-01-01T00:00:03Z", "extra": true}',
    ]
    _produce(kafka_broker.bootstrap, topic, values)
    rows = _orders_read_by_the_job(
        kafka_spark, kafka_broker.bootstrap, topic, ", startingOffsets = 'earliest'", tmp_path
    )
    assert isinstance(rows, list), rows
    by_id = {r["order_id"]: r for r in rows if r["order_id"] is not None}
    malformed = [r for r in rows if r["order_id"] is None]
    assert malformed == [{"order_id": None, "amount": None, "order_time": None}]
    assert str(by_id[1]["amount"]) == "2.50" and by_id[1]["order_time"] is not None
    assert by_id[3]["amount"] is None and by_id[3]["order_time"] is not None
    assert sorted(by_id) == [1, 3, 4, 5]
    assert str(by_id[5]["amount"]) == "1.00"
    assert by_id[4]["amount"] is None and by_id[4]["order_time"] is not None


def test_fail_on_data_loss(kafka_broker, kafka_spark, tmp_path):  # type: ignore[no-untyped-def]
    """Records deleted before the query reads them (retention, or deleteRecords as here):
    with `failOnDataLoss` (Spark's default, true) the query fails and says so; with
    `failOnDataLoss = 'false'` it reads what is left."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    topic = run_prefix() + "orders"
    create_topics(kafka_broker.bootstrap, [topic, topic + "-p"])
    values = [
        json.dumps({"order_id": i, "amount": "1.00", "order_time": "2026-01-01T00:00:00Z"})
        for i in range(6)
    ]
    _produce(kafka_broker.bootstrap, topic, values)
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    for future in admin.delete_records([TopicPartition(topic, 0, 2)]).values():
        future.result(timeout=60)
    start = json.dumps({topic: {"0": 0, "1": 0}}).replace("'", "")
    failed = _orders_read_by_the_job(
        kafka_spark, kafka_broker.bootstrap, topic, f", startingOffsets = '{start}'", tmp_path
    )
    assert isinstance(failed, Exception)
    assert "data loss" in str(failed).lower() or "failOnDataLoss" in str(failed), str(failed)[:2000]
    rows = _orders_read_by_the_job(
        kafka_spark,
        kafka_broker.bootstrap,
        topic,
        f", startingOffsets = '{start}', failOnDataLoss = 'false'",
        tmp_path,
    )
    # partition 0 held orders 0, 2, 4; its first two records were deleted
    assert sorted(r["order_id"] for r in rows) == [1, 3, 4, 5]
