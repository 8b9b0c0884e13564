"""Run OLD on local Spark to a checkpoint, then NEW on the same checkpoint: what Spark does
when a running query is restarted with a changed spec (the checkpoint catalogue's harness).

Inputs are JVM ``MemoryStream``s (``sjoin.jvm.spark_driver``). A restarted query gets new
streams, so before NEW starts each of its streams is advanced by as many (empty) offsets as
OLD's stream in the same place used: the checkpoint's committed offsets then name exactly
what the new streams hold, as a durable source (Kafka, files) would on a real restart.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sjoin.api import check_text
from sjoin.compiler.planning.plan import Plan, StreamNode
from sjoin.compiler.vocabulary.settings import semantic_conf
from sjoin.jvm.spark_driver import _jvm, _memory_stream, _parsed_input, _to_python
from sjoin.jvm.verify import load_job, output_mode

Batch = Mapping[str, Sequence[Mapping[str, Any]]]


@dataclass(frozen=True)
class Outcome:
    """What Spark did when NEW restarted from OLD's checkpoint."""

    resumed: bool
    error: str | None  # Spark's error class (or the first words of its message)
    message: str | None
    shuffle_partitions: int | None  # the partitions NEW's state operators ran with
    rows: list[dict[str, Any]]  # NEW's output rows after the restart


def plan_of(text: str) -> Plan:
    result = check_text(text, "<catalogue>")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert result.plan is not None and not errors, [d.message for d in errors]
    return result.plan


def run_conf(plan: Plan) -> dict[str, str]:
    """The confs a run of ``plan`` sets: what its job sets, and the result-changing confs at
    the values the plan assumed (a cluster at Spark's defaults)."""
    return {**semantic_conf(plan.settings), **plan.spark_conf}


class _Run:
    """One query of a spec on MemoryStreams, with a given checkpoint directory."""

    def __init__(
        self, spark: Any, plan: Plan, directory: str, checkpoint: str, root: str | None
    ) -> None:
        self.spark = spark
        self.plan = plan
        self.root = root or plan.query_roots[0]
        job = load_job(plan, directory)
        self.streams = [n.name for n in plan.closure(self.root) if isinstance(n, StreamNode)]
        self.memory = {name: _memory_stream(spark) for name in self.streams}
        inputs = {
            name: _parsed_input(spark, self.memory[name], job.SCHEMAS[name])
            for name in self.streams
        }
        self.built = job.build(spark, inputs)[self.root]
        self.checkpoint = checkpoint
        self.rows: list[dict[str, Any]] = []
        self.query: Any = None

    def pad(self, offsets: Sequence[int]) -> None:
        to_seq = _jvm(self.spark).PythonUtils.toSeq
        for name, count in zip(self.streams, offsets, strict=False):
            for _ in range(count):
                self.memory[name].addData(to_seq([]))

    def start(self) -> None:
        def capture(batch_df: Any, batch_id: int) -> None:
            schema = batch_df.schema
            self.rows.extend(_to_python(r, schema) for r in batch_df.collect())

        self.query = (
            self.built.writeStream.outputMode(output_mode(self.plan, self.root))
            .option("checkpointLocation", self.checkpoint)
            .foreachBatch(capture)
            .start()
        )
        self.query.processAllAvailable()

    def feed(self, batch: Batch) -> None:
        to_seq = _jvm(self.spark).PythonUtils.toSeq
        lock = self.query._jsq.streamingQuery().awaitProgressLock()
        lock.lock()
        try:
            for name in self.streams:
                rows = batch.get(name, [])
                self.memory[name].addData(to_seq([json.dumps(r) for r in rows]))
        finally:
            lock.unlock()
        self.query.processAllAvailable()

    def partitions(self) -> int | None:
        for entry in reversed(self.query.recentProgress):
            progress = entry if isinstance(entry, dict) else json.loads(entry.json)
            for op in progress.get("stateOperators", []):
                if op.get("numShufflePartitions"):
                    return int(op["numShufflePartitions"])
        return None

    def stop(self) -> None:
        if self.query is not None:
            self.query.stop()


def _error_class(message: str) -> str:
    for found in re.finditer(r"\[([A-Z][A-Z0-9_]+(?:\.[A-Z0-9_]+)*)\]", message):
        if found.group(1) != "STREAM_FAILED":  # the wrapper of every query failure
            return found.group(1)
    inner = message.split("terminated with exception: ", 1)[-1]
    return inner.split(" SQLSTATE")[0].split(" === ")[0].strip()


def restart(
    spark: Any,
    old: str,
    new: str,
    old_batches: Sequence[Batch],
    new_batches: Sequence[Batch],
    templates: dict[str, tuple[str, int]] | None = None,
    root: str | None = None,
) -> Outcome:
    """Run ``old`` over ``old_batches`` to a fresh checkpoint, stop it, then run ``new`` on
    that checkpoint over ``new_batches``; Spark's confs of each plan are set for its run.

    ``templates`` (spec text -> a directory holding OLD's finished checkpoint and its number
    of streams) lets cases with the same OLD share one run of it: each gets a copy, as if OLD
    had just run for it (the caller deletes the directories). ``root``: the query run (of
    both specs), else each spec's first."""
    old_plan, new_plan = plan_of(old), plan_of(new)
    directory = tempfile.mkdtemp(prefix="sjoin-restart-")
    checkpoint = f"{directory}/checkpoint"
    old_conf, new_conf = run_conf(old_plan), run_conf(new_plan)
    saved = {k: spark.conf.get(k, None) for k in {**old_conf, **new_conf}}
    try:
        if templates is not None and old in templates:
            template, streams = templates[old]
            shutil.copytree(template, checkpoint)
        else:
            for key, value in old_conf.items():
                spark.conf.set(key, str(value))
            first = _Run(spark, old_plan, directory, checkpoint, root)
            try:
                first.start()
                for batch in old_batches:
                    first.feed(batch)
            finally:
                first.stop()
            streams = len(first.streams)
            if templates is not None:
                template = tempfile.mkdtemp(prefix="sjoin-restart-template-")
                shutil.copytree(checkpoint, template, dirs_exist_ok=True)
                templates[old] = (template, streams)
        offsets = [len(old_batches)] * streams
        for key, value in new_conf.items():
            spark.conf.set(key, str(value))
        second = _Run(spark, new_plan, directory, checkpoint, root)
        second.pad(offsets)
        try:
            second.start()
            for batch in new_batches:
                second.feed(batch)
            return Outcome(True, None, None, second.partitions(), second.rows)
        except Exception as err:  # Spark refused the restarted query
            message = " ".join(str(err).split())
            return Outcome(False, _error_class(message), message[:400], None, [])
        finally:
            second.stop()
    finally:
        for key, before in saved.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)
        shutil.rmtree(directory, ignore_errors=True)
