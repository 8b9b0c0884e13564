"""The PySpark job catalogue (tests/compiler/frontend/pyspark/jobs/) verified batch by batch:
for every job Spark runs, `sjoin verify job.py --trace T` runs the job AS WRITTEN on real
Spark (``jvm/job_as_written.py``: its own code builds the query, its streaming reads fed
the trace, one trace batch per micro-batch) and the runtime on the job's plan, and they
agree: output rows, watermark and state metrics in every batch.

Each job gets a small trace made from its plan's schemas (``sample_trace``): five rows per
stream per batch, keys in 1..3 so that rows match, event times minutes apart, and a last
batch a day later, so that every watermark advances, state is evicted and outer rows come
out.  The jobs run one at a time: the run patches pyspark's classes for the job."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_any
from sjoin.compiler.planning.plan import Plan
from sjoin.compiler.vocabulary.types import SqlType
from sjoin.jvm.job_as_written import JobAsWritten, JobNotFed
from sjoin.jvm.verify import verify_spec

pytestmark = pytest.mark.spark

JOBS = Path(__file__).resolve().parents[2] / "compiler" / "frontend" / "pyspark" / "jobs"
# the jobs Spark runs: those with a .sjoin twin but the `refused_` ones (a twin of a job Spark
# refuses shows sjoin's same errors); each is checked to have none
RUN_BY_SPARK = sorted(
    p.stem
    for p in JOBS.glob("*.sjoin")
    if (JOBS / f"{p.stem}.py").exists() and not p.stem.startswith("refused_")
)
START = datetime(2026, 1, 1, tzinfo=UTC)
# a string column's values where a job's condition names its literals (else k1..k3)
VALUES = {"self_join": {"kind": ("view", "buy")}}


def sample_value(
    kind: SqlType, i: int, batch: int, last: bool, values: tuple[str, ...] = ()
) -> Any:
    """Row ``i``'s value of a column of ``kind`` in ``batch`` (the last batch a day on);
    ``values``: a string column's, in turn."""
    name = kind.name
    if values:
        return values[(i // 3) % len(values)]
    if name == "timestamp":
        at = START + timedelta(minutes=10 * batch + i, days=1 if last else 0)
        return at.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    if name in ("bigint", "int", "smallint", "tinyint"):
        return i % 3 + 1
    if name == "string":
        return f"k{i % 3 + 1}"
    if name in ("double", "float"):
        return i * 1.5
    if name == "decimal":
        return f"{i}.25"
    if name == "boolean":
        return i % 2 == 0
    if name == "date":
        return (START + timedelta(days=batch)).strftime("%Y-%m-%d")
    raise AssertionError(f"sample_trace has no value for {kind}")


def sample_trace(
    plan: Plan, rows: int = 6, batches: int = 4, values: dict[str, tuple[str, ...]] | None = None
) -> list[str]:
    """A trace of ``plan``'s streams (and static tables, in the first batch); ``values``:
    the values of some string columns, by name."""
    values = values or {}
    lines = []
    for batch in range(batches):
        last = batch == batches - 1
        nodes = [*plan.streams, *(plan.tables if batch == 0 else ())]
        for node in nodes:
            for i in range(rows):
                row = {
                    c.name: sample_value(c.type, i + batch, batch, last, values.get(c.name, ()))
                    for c in node.columns
                }
                lines.append(json.dumps({"batch": batch, "stream": node.name, "row": row}))
    return lines


def test_the_catalogue_has_jobs_to_verify() -> None:
    assert len(RUN_BY_SPARK) >= 15, RUN_BY_SPARK


# known differences, diagnosed: each an xfail(strict), so a fix turns it into a failure to
# clean up here
# (self_join's, the global watermark of a self-join whose sides filter the one stream
# differently, is now the planner's Plan.shared_watermarks: Spark 4.0+ keys the watermark
# nodes by nodeId, one for both sides)
KNOWN: dict[str, str] = {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n, marks=[pytest.mark.xfail(strict=True, reason=KNOWN[n])] if n in KNOWN else []
        )
        for n in RUN_BY_SPARK
    ],
)
def test_the_job_as_written_agrees_with_the_runtime(spark: Any, name: str) -> None:
    job = JOBS / f"{name}.py"
    result = check_any(job)
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    report = verify_spec(
        result,
        sample_trace(result.plan, values=VALUES.get(name)),
        spark=spark,
        make_runner=JobAsWritten.maker(spark, job, None),
    )
    assert report.agree, report.text()
    queries = report.to_dict()["queries"]
    assert queries and all(q["spark_batches"] >= 4 for q in queries), queries
    assert sum(q["rows"] for q in queries) > 0, "no row came out: the trace says nothing"


def test_a_read_the_plan_does_not_know_is_said(spark: Any, tmp_path: Path) -> None:
    """A job that reads another path when run than it did when read (here: a path from
    the environment) cannot be fed: JobNotFed names the read."""
    job = tmp_path / "moving.py"
    job.write_text(
        (JOBS / "guide_inner.py")
        .read_text()
        .replace('"/data/impressions"', 'os.environ.get("SJOIN_TEST_AT", "/data/impressions")')
        .replace("from pyspark", "import os\nfrom pyspark", 1)
    )
    result = check_any(job)
    assert result.ok and result.plan is not None
    os.environ["SJOIN_TEST_AT"] = "/elsewhere/impressions"
    try:
        with pytest.raises(JobNotFed, match="'/elsewhere/impressions' is none of the plan's"):
            verify_spec(
                result,
                sample_trace(result.plan),
                spark=spark,
                make_runner=JobAsWritten.maker(spark, job, None),
            )
    finally:
        del os.environ["SJOIN_TEST_AT"]
