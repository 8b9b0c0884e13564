"""The child-process protocol of `verify --spark X.Y --kafka`: the child (another pyspark)
holds the queries' progress locks and asks this process to produce each trace batch; this
process produces it, says so, and only then does the child release the locks. Both sides are
checked here without Spark: the parent against a scripted child, the child's side
(`ask_parent_to_produce`) against scripted replies. The run on real Spark 3.5 is in
test_verify_kafka.py."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from sjoin.jvm.spark_driver import ProduceFailed, SparkUnavailable, ask_parent_to_produce
from sjoin.jvm.spark_env import RemoteSpark, RemoteSparkError

# A child that speaks the protocol as spark_driver.serve does for a "kafka" request: it asks
# for each non-empty feed (the first before its queries would start), then reports what the
# parent answered in the result's plan text, or fails the run as serve does.
CHILD = r"""
import json, sys
print(json.dumps({"event": "ready", "version": "9.9.9"}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    assert request["kafka"] == {"sinks": ["unpaid"]}, request
    replies = []
    failed = None
    for number, feed in enumerate(request["feeds"], 1):
        if feed:
            print(json.dumps({"event": "produce", "batch": number}), flush=True)
            reply = json.loads(sys.stdin.readline())
            replies.append(reply)
            if "failed" in reply:
                failed = reply["failed"]
                break
        print(json.dumps({"event": "batch", "batch": number}), flush=True)
    if failed:
        event = {"event": "error", "type": "ProduceFailed", "message": failed}
    else:
        event = {"event": "result", "batches": [], "plan": json.dumps(replies)}
    print(json.dumps(event), flush=True)
"""


@pytest.fixture
def child(tmp_path: Path) -> Any:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    python = tmp_path / "python"  # RemoteSpark runs `python DRIVER ARGS`: run CHILD instead
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    python.chmod(0o755)
    with RemoteSpark(python) as remote:
        yield remote


FEEDS: list[dict[str, Any] | None] = [{"orders": [{"k": 1}]}, None, {"payments": [{"k": 1}]}]


def _run(remote: RemoteSpark, produce: Any, ticks: list[int]) -> Any:
    return remote.run_query(
        "job.py",
        "unpaid",
        "append",
        ["orders", "payments"],
        FEEDS,
        {},
        ticks.append,
        kafka={"sinks": ["unpaid"]},
        produce=produce,
    )


def test_the_parent_produces_each_batch_the_child_asks_for(child: RemoteSpark) -> None:
    produced: list[int] = []
    ticks: list[int] = []
    result = _run(child, produced.append, ticks)
    assert produced == [1, 3]  # the non-empty feeds, in order
    assert ticks == [1, 2, 3]
    assert json.loads(result.plan) == [{"produced": 1}, {"produced": 3}]


def test_a_failure_to_produce_ends_the_run_and_is_raised_as_it_was(child: RemoteSpark) -> None:
    """The child is told (it releases the locks and fails the run), and the parent raises
    its own exception, not the child's report of it."""
    produced: list[int] = []

    def produce(number: int) -> None:
        if number == 3:
            raise RuntimeError("Kafka did not take every record: broker down")
        produced.append(number)

    with pytest.raises(RuntimeError, match=r"^Kafka did not take every record: broker down$"):
        _run(child, produce, [])
    assert produced == [1]
    # the child goes on serving: a later run works
    again: list[int] = []
    assert json.loads(_run(child, again.append, []).plan) == [{"produced": 1}, {"produced": 3}]


def test_a_child_error_without_a_produce_failure_is_the_childs(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(
        "import json, sys\n"
        'print(json.dumps({"event": "ready", "version": "9.9.9"}), flush=True)\n'
        "for line in sys.stdin:\n"
        '    print(json.dumps({"event": "error", "type": "AnalysisException", '
        '"message": "no kafka"}), flush=True)\n'
    )
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    python.chmod(0o755)
    with RemoteSpark(python) as remote, pytest.raises(RemoteSparkError, match="no kafka"):
        _run(remote, lambda number: None, [])


def test_kafka_and_produce_go_together(child: RemoteSpark) -> None:
    with pytest.raises(ValueError, match="go together"):
        child.run_query("job.py", "unpaid", "append", [], [], {}, kafka={"sinks": []})
    with pytest.raises(ValueError, match="go together"):
        child.run_query("job.py", "unpaid", "append", [], [], {}, produce=lambda n: None)


def _ask(number: int, replies: str) -> list[dict[str, Any]]:
    said: list[dict[str, Any]] = []
    ask_parent_to_produce(number, said.append, io.StringIO(replies))
    return said


def test_the_child_waits_for_the_parents_word() -> None:
    assert _ask(4, '{"produced": 4}\n') == [{"event": "produce", "batch": 4}]


@pytest.mark.parametrize(
    ("reply", "error", "message"),
    [
        ('{"failed": "RuntimeError: broker down"}\n', ProduceFailed, "RuntimeError: broker down"),
        ('{"produced": 3}\n', ProduceFailed, "batch 4 was not produced"),
        ("{}\n", ProduceFailed, "batch 4 was not produced"),
        ("not json\n", ProduceFailed, "reply for batch 4 is not a JSON object"),
        ("[4]\n", ProduceFailed, "reply for batch 4 is not a JSON object"),
        ("", SparkUnavailable, "the parent process ended while batch 4 was produced"),
    ],
)
def test_the_child_fails_the_batch_unless_the_parent_produced_it(
    reply: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        _ask(4, reply)
