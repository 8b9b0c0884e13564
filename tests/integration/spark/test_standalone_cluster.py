"""A generated job on a real distributed engine: a Spark standalone master and one worker,
started from the pyspark package on 127.0.0.1 by scripts/spark_standalone.py (the helper
docs/standalone-cluster.md uses), run `spark-submit --master spark://...` of the compiled
iot example (json files in, parquet out, trigger available_now). The parquet rows must equal
the reference runtime's rows for the same input as one micro-batch."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.runtime import run

from ...conftest import ROOT

pytestmark = pytest.mark.spark

EXAMPLE = "iot_window_join"
RELATION = "climate"  # the example's join, written by its parquet sink to out/climate
SUBMIT_TIMEOUT = 300  # seconds; the job takes about 30 s on an idle 2-core machine
START_TIMEOUT = 120


def load_helper() -> ModuleType:
    path = ROOT / "scripts" / "spark_standalone.py"
    spec = importlib.util.spec_from_file_location("spark_standalone", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


standalone = load_helper()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A running master + worker; both process groups are stopped afterwards, always.

    Without Java or pyspark the test is skipped with the reason, except in CI, where it must
    fail (the same rule as the `spark` fixture of tests/conftest.py)."""
    from sjoin.jvm.spark_driver import SparkUnavailable, check_java

    try:
        import pyspark  # noqa: F401

        check_java()
    except (ImportError, SparkUnavailable) as err:
        reason = f"a standalone cluster needs pyspark and Java 17+: {err}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    directory = tmp_path_factory.mktemp("standalone")
    try:
        yield standalone.start(directory, timeout=START_TIMEOUT)
    finally:
        standalone.stop(directory)


def committed_rows(sink: Path) -> list[dict[str, Any]]:
    """The rows of the parquet files the file sink committed (its _spark_metadata log), read
    with pyarrow: no second Spark for reading."""
    import pyarrow.parquet as pq

    files: list[str] = []
    logs = {int(p.name.split(".")[0]): p for p in (sink / "_spark_metadata").glob("[0-9]*")}
    # a compact log (9.compact) holds every file up to its batch; later logs add to it
    first = max((n for n, p in logs.items() if p.suffix == ".compact"), default=0)
    for log in (logs[n] for n in sorted(logs) if n >= first):
        lines = log.read_text().splitlines()
        assert lines and lines[0] == "v1", f"unexpected sink log {log}"
        files += [
            entry["path"]
            for entry in map(json.loads, filter(None, lines[1:]))
            if entry["action"] == "add"
        ]
    assert files, f"the sink committed no file in {sink}"
    rows: list[dict[str, Any]] = []
    for uri in files:
        url = urlsplit(uri)
        assert url.scheme == "file", uri
        rows += pq.read_table(unquote(url.path)).to_pylist()
    return rows


def canonical(value: Any) -> Any:
    """A hashable, comparable form: timestamps as UTC datetimes, structs as sorted tuples."""
    if isinstance(value, dict):
        return tuple(sorted((k, canonical(v)) for k, v in value.items()))
    if hasattr(value, "to_pydatetime"):  # pandas.Timestamp, what pyarrow gives for ns
        value = value.to_pydatetime()
    if isinstance(value, datetime):  # Spark's parquet timestamps are UTC instants
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, str) and value[:4].isdigit() and value.endswith("Z"):
        try:
            return datetime.fromisoformat(value).astimezone(UTC)
        except ValueError:
            return value
    return value


def multiset(rows: list[dict[str, Any]]) -> Counter[Any]:
    return Counter(canonical(row) for row in rows)


def test_generated_job_on_standalone_cluster(cluster: Any, tmp_path: Path) -> None:
    started = time.monotonic()
    assert cluster.master_url.startswith("spark://127.0.0.1:")
    spec = (ROOT / "examples" / f"{EXAMPLE}.sjoin").read_text()
    assert "from json (path = 'in/temperature')" in spec
    assert "sink climate to parquet (path = 'out/climate')" in spec
    assert "set shuffle_partitions = 4" in spec
    spec = spec.replace("set shuffle_partitions = 4", "set shuffle_partitions = 2")
    spec += "\nset trigger = available_now\n"  # run to the end of the files, then stop
    result = check_text(spec, f"{EXAMPLE}.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    (tmp_path / "job.py").write_text(compile_pyspark(result.plan, f"{EXAMPLE}.sjoin"))

    # the trace's rows as json files, one per stream; all of them form one micro-batch
    trace = [
        json.loads(line)
        for line in (ROOT / "examples" / f"{EXAMPLE}.trace.jsonl").read_text().splitlines()
        if line.strip()
    ]
    for record in trace:
        folder = tmp_path / "in" / record["stream"]
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "part-0.json").open("a") as out:
            out.write(json.dumps(record["row"]) + "\n")
    expected = run(result.plan, [{**r, "batch": 0} for r in trace], relation=RELATION)
    expected_rows = expected.rows(RELATION)
    assert len(expected_rows) >= 10, "the example's trace should give a real test"

    submit = [
        str(standalone.spark_home() / "bin" / "spark-submit"),
        "--master",
        cluster.master_url,
        "--driver-memory",
        "1g",
        "--executor-memory",
        "1g",
        "job.py",
    ]
    done = subprocess.run(
        submit,
        cwd=tmp_path,
        env=standalone.spark_env(),
        capture_output=True,
        text=True,
        timeout=SUBMIT_TIMEOUT,
    )
    assert done.returncode == 0, (
        f"spark-submit failed ({done.returncode}):\n{done.stderr[-4000:]}\n"
        f"{standalone.logs(cluster.dir)}"
    )

    # it ran on the cluster: the master saw the application finish, on the worker's executor
    apps = cluster.state()["completedapps"]
    assert [a["name"] for a in apps] == [f"sjoin {EXAMPLE}.sjoin"], apps
    assert apps[0]["state"] == "FINISHED", apps
    assert len(list((cluster.dir / "work").glob("app-*/*/stderr"))) >= 1

    actual_rows = committed_rows(tmp_path / "out" / RELATION)
    assert multiset(actual_rows) == multiset(expected_rows)
    print(f"{len(actual_rows)} rows; submit to check took {time.monotonic() - started:.1f} s")
