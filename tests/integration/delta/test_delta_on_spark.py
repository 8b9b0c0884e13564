"""Delta both ways on real Spark: an example's trace written as Delta tables (delta-rs), its
generated job run with `from delta` sources and a `to delta` sink on Spark 4.2 with Delta 4.4.0
(the newest Spark a Delta release is built on; the suite's own Spark, 4.3, has none), in the
cached Spark 4.2 environment in a child process. Spark's micro-batches (rows, watermark, state
metrics) equal `sjoin run`'s on the same Delta tables batch by batch, and the job's Delta sink
holds exactly the rows `sjoin run --output-format delta` writes.

Making the environment costs a few minutes once (pip installs pyspark 4.2 under
~/.cache/sjoin/spark-4.2; Delta's jars come from Maven Central once); without it the test
skips, except in CI, where it fails."""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_file
from sjoin.compiler.planning.plan import Plan, StreamNode
from sjoin.compiler.vocabulary.model import Format
from sjoin.compiler.vocabulary.source import Span
from sjoin.jvm.delta_driver import (
    DELTA_SPARK,
    DeltaRunner,
    delta_plan,
    read_table,
    remote_delta_spark,
    write_trace_tables,
)
from sjoin.jvm.verify import like_local, verify
from sjoin.runtime import run_to_files
from sjoin.runtime.columnar.parquet_out import folder_name

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "examples" / "ride_matching.sjoin"  # a full outer join: no-data batches too
FROM_0 = {"*": 0}  # the job started on version 0: each later commit arrives on its own


@pytest.fixture(scope="module")
def delta_spark():  # type: ignore[no-untyped-def]
    from sjoin.jvm.jars import JarsUnavailable
    from sjoin.jvm.spark_driver import SparkUnavailable
    from sjoin.jvm.spark_env import EnvError

    try:
        remote = remote_delta_spark()
    except (EnvError, JarsUnavailable, SparkUnavailable) as err:
        reason = f"Spark {DELTA_SPARK} with Delta cannot run here: {err}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    yield remote
    remote.close()


def _normal(value: Any) -> Any:
    if isinstance(value, datetime):
        return round(value.timestamp() * 1_000_000)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float | Decimal):
        return str(Decimal(str(value)).normalize())
    return value


def _rows(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(
        json.dumps({k: _normal(v) for k, v in sorted(r.items())}, default=str) for r in rows
    )


def test_a_job_reads_and_writes_delta_as_sjoin_run_does(delta_spark, tmp_path):  # type: ignore[no-untyped-def]
    checked = check_file(SPEC)
    planned, _ = like_local(checked, delta_spark.version)
    assert planned.plan is not None and str(planned.plan.spark) == DELTA_SPARK
    plan = delta_plan(planned.plan, tmp_path / "spec")  # sources and the sink: Delta
    tables = tmp_path / "tables"
    write_trace_tables(plan, SPEC.with_suffix(".trace.jsonl"), tables)

    runner = DeltaRunner(delta_spark, tables, tmp_path / "spark", at_start=FROM_0)
    report = verify(
        plan, tables, spark=delta_spark, make_runner=runner.for_plan, delta_at_start=FROM_0
    )
    assert report.agree, report.text()
    assert [q.relation for q in report.queries] == ["matched"]
    assert report.queries[0].spark_batches == report.queries[0].runtime_batches >= 10

    out = tmp_path / "runtime-out"
    summary = run_to_files(plan, tables, output=out, output_format="delta", delta_at_start=FROM_0)
    runtime_rows = read_table(out / folder_name("matched"))
    assert len(runtime_rows) == summary.rows > 0
    ((root, folder),) = runner.runs
    spark_rows = read_table(folder / "out" / folder_name(root))
    assert _rows(spark_rows) == _rows(runtime_rows)


def _with_options(plan: Plan, options: dict[str, str]) -> Plan:
    """``plan`` with every stream read ``from delta`` with ``options`` (its path is set by
    ``delta_plan``)."""
    nodes = []
    for node in plan.nodes:
        if isinstance(node, StreamNode):
            source = Format("delta", (("path", "x"), *options.items()), Span(0, 0))
            node = dataclasses.replace(node, source=source)
        nodes.append(node)
    return dataclasses.replace(plan, nodes=tuple(nodes))


# (the job's start, the `from delta` options, the micro-batches with rows it reads): the
# example's 7 trace batches are versions 0-6 of each table, one file per version with rows
STARTS = {
    # all 7 versions there when the job starts: one snapshot, one micro-batch (then the
    # no-data batch its watermark calls for), not 7 (issue 35)
    "latest": ({}, {}, 1),
    # the snapshot cut by maxFilesPerTrigger: 2 files a batch, run back to back
    "latest, maxFilesPerTrigger 2": ({}, {"maxFilesPerTrigger": "2"}, 4),
    # started at version 4: versions 0-4 in the first batch, 5 and 6 each on its own
    "at 4": ({"*": 4}, {}, 3),
    # startingVersion 2 at version 4: the files versions 2-4 add (admitted across their
    # bounds, 2 a batch), then 5 and 6
    "at 4, startingVersion 2, maxFilesPerTrigger 2": (
        {"*": 4},
        {"startingVersion": "2", "maxFilesPerTrigger": "2"},
        4,
    ),
    # startingVersion latest: nothing at the start, then 5 and 6
    "at 4, startingVersion latest": ({"*": 4}, {"startingVersion": "latest"}, 2),
}


@pytest.mark.parametrize("case", list(STARTS))
def test_a_job_started_on_tables_with_many_versions_reads_them_as_sjoin_run_does(
    case: str,
    delta_spark,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    at_start, options, data_batches = STARTS[case]
    checked = check_file(SPEC)
    planned, _ = like_local(checked, delta_spark.version)
    assert planned.plan is not None
    plan = delta_plan(_with_options(planned.plan, options), tmp_path / "spec")
    tables = tmp_path / "tables"
    write_trace_tables(plan, SPEC.with_suffix(".trace.jsonl"), tables)

    runner = DeltaRunner(delta_spark, tables, tmp_path / "spark", at_start=at_start)
    report = verify(
        plan, tables, spark=delta_spark, make_runner=runner.for_plan, delta_at_start=at_start
    )
    assert report.agree, report.text()
    (query,) = report.queries
    assert query.spark_batches == query.runtime_batches
    from sjoin.runtime import run

    result = run(plan, tables, delta_at_start=at_start)
    assert sum(1 for b in result.batches if b.data) == data_batches
