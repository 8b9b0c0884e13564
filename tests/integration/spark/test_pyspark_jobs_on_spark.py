"""The PySpark job catalogue (tests/compiler/frontend/pyspark/jobs/, docs/pyspark.md) on
real Spark: each job runs as written on the run's one local session, each query it starts
is started and stopped at once, and Spark's verdict (the query starts, or start() raises)
is `sjoin check job.py`'s (exit 0: Spark runs it; 1: Spark refuses it).

The jobs' paths are swapped for empty directories of a temporary folder (the sources keep
their declared schemas; the sinks write and checkpoint there).  The Kafka jobs read Kafka
as written: start() resolves the source (the run's session has Spark's Kafka connector)
and analyses the query without reaching the broker, and the query is stopped before its
first batch."""

from __future__ import annotations

import runpy
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_any
from sjoin.cli.main import exit_status

pytestmark = pytest.mark.spark

JOBS = Path(__file__).resolve().parents[2] / "compiler" / "frontend" / "pyspark" / "jobs"
# jobs sjoin cannot read (E042) or model (E041) by design: they say nothing of Spark's verdict
NOT_VERDICTS = {"raises", "needs_columns", "udf_condition"}
CATALOGUE = sorted(p.stem for p in JOBS.glob("*.py") if p.stem not in NOT_VERDICTS)


def sjoin_check(name: str) -> int:
    """The exit status of `sjoin check job.py` (the CLI's own rule, in this process: the
    job still runs in a child of its own)."""
    return exit_status([check_any(JOBS / f"{name}.py")])


@pytest.fixture(scope="module")
def sjoin_verdicts() -> Any:
    """`sjoin check` of every job, two at a time, while Spark runs them."""
    pool = ThreadPoolExecutor(max_workers=2)
    futures = {name: pool.submit(sjoin_check, name) for name in CATALOGUE}
    yield futures
    pool.shutdown(wait=True)


class _Refused(Exception):
    """start() raised: Spark refuses the query."""


def spark_verdict(spark: Any, name: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """'runs' when every query the job starts starts, else Spark's error."""
    from pyspark.errors import PySparkException
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import DataStreamReader, DataStreamWriter, StreamingQuery

    folders = iter(range(1_000_000))

    def folder(kind: str) -> str:
        path = tmp / f"{kind}{next(folders)}"
        path.mkdir()
        return str(path)

    for method in ("load", "json", "csv", "parquet", "orc", "text"):
        original = getattr(DataStreamReader, method)

        def read(self: Any, path: Any = None, *args: Any, _original: Any = original, **kw: Any):  # type: ignore[no-untyped-def]
            return _original(self, folder("in") if path is not None else None, *args, **kw)

        monkeypatch.setattr(DataStreamReader, method, read)
    started: list[Any] = []
    start = DataStreamWriter.start

    def start_and_stop(self: Any, path: Any = None, *args: Any, **kw: Any) -> Any:
        out = folder("out")
        self.option("checkpointLocation", f"{out}/checkpoint")
        if path is None:
            self.option("path", f"{out}/data")
        try:
            query = start(self, f"{out}/data" if path is not None else None, *args, **kw)
        except PySparkException as err:
            raise _Refused(str(err).splitlines()[0]) from err
        query.stop()
        started.append(query)
        return query

    monkeypatch.setattr(DataStreamWriter, "start", start_and_stop)
    monkeypatch.setattr(StreamingQuery, "awaitTermination", lambda self, timeout=None: True)
    confs: list[str] = []
    config = SparkSession.Builder.config

    def remember(self: Any, key: Any = None, value: Any = None, *args: Any, **kw: Any) -> Any:
        if isinstance(key, str) and key.startswith("spark.sql."):  # a session's own conf
            confs.append(key)
        return config(self, key, value, *args, **kw)

    monkeypatch.setattr(SparkSession.Builder, "config", remember)
    path = JOBS / f"{name}.py"
    try:
        if "def build(" in path.read_text(encoding="utf-8"):
            runpy.run_path(str(path), run_name="catalogue_job")["build"](spark)
        else:
            runpy.run_path(str(path), run_name="__main__")
    except _Refused as err:
        return f"refused: {err}"
    finally:
        for key in confs:  # the job's confs do not outlive it on the shared session
            spark.conf.unset(key)
    assert started, f"{name} started no query"
    return "runs"


@pytest.mark.parametrize("name", CATALOGUE)
def test_sjoin_says_what_spark_does_with_the_job(
    name: str, spark: Any, sjoin_verdicts: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spark_says = spark_verdict(spark, name, tmp_path, monkeypatch)
    status = sjoin_verdicts[name].result()
    assert status in (0, 1), f"sjoin check {name}.py: exit {status}"
    sjoin_says = "runs" if status == 0 else "refused"
    assert sjoin_says == spark_says.split(":")[0], (name, spark_says)


# the jobs whose query ends in a join in a mode other than Append: Spark's own words
OUTPUT_MODE_JOBS = [
    "update_inner_join",
    "update_left_semi",
    "update_filter_after_join",
    "refused_update_left_outer",
    "refused_complete_join",
    "refused_aggregate_before_join",
]


@pytest.mark.parametrize("name", OUTPUT_MODE_JOBS)
def test_a_join_in_a_non_append_mode_is_refused_for_sparks_reason(
    name: str, spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only the verdict: sjoin's error quotes the error start() raised (less Spark's
    trailing `;` or `. SQLSTATE: ...`), and it is the only error."""
    spark_says = spark_verdict(spark, name, tmp_path, monkeypatch)
    result = check_any(JOBS / f"{name}.py")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if spark_says == "runs":
        assert errors == []
        return
    text = spark_says.removeprefix("refused: ").split(". SQLSTATE:")[0].rstrip(";")
    text = text.split(". The query contains")[0]  # the global-watermark text's first sentence
    assert len(errors) == 1, [(d.code, d.message) for d in errors]
    assert text in errors[0].message, (text, errors[0].message)
