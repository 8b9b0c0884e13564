"""Every example compiled with `--target pipeline` runs with SDP's own CLI on local Spark, and
its sinks' final rows equal `sjoin run`'s on the same input.

What is compared, and why it is comparable: `spark-pipelines run` first fills each stream's
streaming table from its source (all of the input), then runs each flow over everything
available when it starts. So a join or aggregate sees the whole input in one micro-batch, as if
the trace were one batch; its rows are what `sjoin run` gives for that one-batch trace. Spark's
available-now run ends after that batch or after the no-data batch that follows it (in which
outer rows and append-mode aggregates whose watermark has passed come out): the test takes
`sjoin run`'s batches up to the first one after which Spark's run ends, by asking the
question on Spark (below, `_rows_until`): inner joins' rows are all in batch 0 (complete
and order-independent: no row is late or evicted before its partner arrives within one
batch), while outer rows, LEFT ANTI's unmatched rows and append-mode windows depend on
whether the no-data batch runs. Rows are compared as multisets (a pipeline writes its
sink's files in no defined order), values normalised (Spark writes timestamps with
milliseconds, decimals as JSON numbers).

One Spark Connect server serves every pipeline of the test run (the session fixture
`connect_server` of tests/conftest.py, which tests/integration/pipelines/ shares), each pipeline in
its own database; the pipelines set `spark.sql.shuffle.partitions` to 2 where the spec leaves it
unset (the only conf the test adds; results do not depend on it).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_file, check_text
from sjoin.compiler.backends.pipeline import compile_pipeline
from sjoin.compiler.checks.job_warnings import pipeline_refusals
from sjoin.compiler.planning.plan import Plan, SinkNode, StreamNode, TableNode
from sjoin.compiler.vocabulary.model import Format, SparkVersion
from sjoin.runtime import run

from ...conftest import PIPELINE_EXAMPLES, ROOT

pytestmark = pytest.mark.spark

EXAMPLES = [p.stem for p in PIPELINE_EXAMPLES]  # the examples a pipeline can run


def pipeline_plan(plan: Plan, data: Path, out: Path) -> Plan:
    """The example's plan with its streams and static tables read from JSON files under
    ``data`` and a JSON sink under ``out`` for each query root (the sources and sinks a laptop
    has); nothing else of the plan changes."""
    nodes = []
    for node in plan.nodes:
        if isinstance(node, StreamNode | TableNode):
            source = Format("json", (("path", str(data / node.name)),), node.name_span)
            node = dataclasses.replace(node, source=source)
        nodes.append(node)
    sinks = tuple(
        SinkNode(
            root,
            Format("json", (("path", str(out / root)),), plan.streams[0].name_span),
            None,
            plan.query_modes.get(root, "append"),
        )
        for root in plan.query_roots
    )
    conf = dict(plan.spark_conf)
    conf.setdefault("spark.sql.shuffle.partitions", "2")
    return dataclasses.replace(plan, nodes=tuple(nodes), sinks=sinks, spark_conf=conf)


_TIME = "%Y-%m-%dT%H:%M:%S"


def _norm(value: Any) -> Any:
    """One value as both sides write it: timestamps as datetimes, numbers as Decimals,
    structs (windows) as sorted tuples."""
    if isinstance(value, dict):
        return tuple(sorted((k, _norm(v)) for k, v in value.items()))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float, Decimal)):
        return Decimal(str(value)).normalize()
    if isinstance(value, str) and len(value) >= 20 and value.endswith("Z") and value[10] == "T":
        whole, _, frac = value[:-1].partition(".")
        micros = int((frac or "0").ljust(6, "0")[:6])
        return dt.datetime.strptime(whole, _TIME).replace(microsecond=micros)
    return value


def _row(row: dict[str, Any], columns: list[str]) -> tuple[Any, ...]:
    # Spark's JSON writer leaves out null fields: every column is read by name
    return tuple(_norm(row.get(c)) for c in columns)


def _spark_rows(folder: Path, columns: list[str]) -> Counter[tuple[Any, ...]]:
    rows: Counter[tuple[Any, ...]] = Counter()
    for part in sorted(folder.glob("part-*.json")):
        for line in part.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows[_row(json.loads(line, parse_float=Decimal), columns)] += 1
    return rows


# the database of one pipeline, made on the shared server by a client of its own
_CREATE_DATABASE = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
spark.sql("CREATE DATABASE IF NOT EXISTS " + sys.argv[2])
spark.stop()
"""


def _run_pipeline(project: Path, remote: str, database: str) -> str:
    """`spark-pipelines run` (the CLI's own module) on the shared server, in ``database``.

    Every Spark Connect client runs in a child process: a Connect session made in this
    process sets SPARK_CONNECT_MODE_ENABLED in its environment for good, and every classic
    session the other Spark tests make afterwards would then fail (CONNECT_URL_NOT_SET)."""
    env = dict(os.environ, SPARK_REMOTE=remote, PYSPARK_PYTHON=sys.executable)
    made = subprocess.run(
        [sys.executable, "-c", _CREATE_DATABASE, remote, database],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr[-3000:]
    spec = project / "spark-pipeline.yml"
    spec.write_text(spec.read_text(encoding="utf-8") + f"database: {database}\n", encoding="utf-8")
    # run from another folder than the project's, as its header and docs/pipelines.md say a
    # project may be run (its globs are read from the spec's folder)
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "pyspark.pipelines.cli", "run", "--spec", str(spec)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0 and "Run is COMPLETED" in log, log[-5000:]
    return log


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_pipeline_rows_equal_sjoin_run(
    example: str, connect_server: str, tmp_path: Path
) -> None:
    # a pipeline runs on Spark 4.1+: an example written for an older Spark is planned for
    # the Spark that runs it (its text unchanged, as `sjoin verify --spark` does)
    result = check_file(ROOT / "examples" / f"{example}.sjoin", spark=SparkVersion(4, 3))
    assert result.ok and result.plan is not None
    records = [
        json.loads(line)
        for line in (ROOT / "examples" / f"{example}.trace.jsonl").read_text().splitlines()
        if line.strip()
    ]
    _compare(result.plan, records, connect_server, tmp_path, example)


# Names a pipeline holds (its tables' names are refused unless letters, digits and `_`: E032):
# a table named by a keyword, columns and aliases with spaces, quotes, back-quotes and `;`,
# and a `;` in a string literal and in the SQL file's comments (SDP splits a SQL file at `;`)
ODD_SPEC = """
spark 4.3
stream s1 (`k ey` BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream `select` (`k ey` BIGINT, t TIMESTAMP, `v'al` STRING) watermark t delay 10 seconds
join j_o = s1 AS `a b` INNER JOIN `select` AS `b;c`
    ON `a b`.`k ey` = `b;c`.`k ey` AND `b;c`.t BETWEEN `a b`.t AND `a b`.t + INTERVAL 5 SECONDS
    AND `b;c`.`v'al` <> 'x'';'
    SELECT `a b`.`k ey` AS `o;ut`, `b;c`.`v'al` AS `v``q`, `b;c`.t AS `t -- c`
"""
ODD_TRACE = [
    {"batch": 0, "stream": "s1", "row": {"k ey": 1, "t": "2026-01-01T00:00:00Z"}},
    {"batch": 0, "stream": "s1", "row": {"k ey": 2, "t": "2026-01-01T00:00:00Z"}},
    {
        "batch": 0,
        "stream": "select",
        "row": {"k ey": 1, "t": "2026-01-01T00:00:02Z", "v'al": "it's"},
    },
    {
        "batch": 0,
        "stream": "select",
        "row": {"k ey": 2, "t": "2026-01-01T00:00:02Z", "v'al": "x';"},
    },
]


def test_odd_names_run_in_a_pipeline(connect_server: str, tmp_path: Path) -> None:
    result = check_text(ODD_SPEC, "odd.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    got = _compare(result.plan, ODD_TRACE, connect_server, tmp_path, "odd")
    assert sum(got.values()) == 1  # the match, and not the row the string literal filters out


def _compare(
    plan: Plan, records: list[dict[str, Any]], remote: str, tmp_path: Path, name: str
) -> Counter[tuple[Any, ...]]:
    """Run ``plan`` over ``records`` as a pipeline and with `sjoin run`; the sinks' rows must
    be equal (see the module's docstring); the pipeline's rows of the last root."""
    data, out, project = tmp_path / "in", tmp_path / "out", tmp_path / "project"
    for relation in (*plan.streams, *plan.tables):  # a table's records name it by "table"
        folder = data / relation.name
        folder.mkdir(parents=True)
        rows = [r["row"] for r in records if r.get("stream", r.get("table")) == relation.name]
        (folder / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    plan = pipeline_plan(plan, data, out)
    assert pipeline_refusals(plan) == []
    storage = (tmp_path / "storage").as_uri()
    # compiled into one folder and moved to another before it runs: the project is
    # relocatable but for `storage`, an absolute URI (docs/pipelines.md)
    compiled = tmp_path / "compiled"
    for relative, text in compile_pipeline(plan, name, storage, name).items():
        (compiled / relative).parent.mkdir(parents=True, exist_ok=True)
        (compiled / relative).write_text(text, encoding="utf-8")
    compiled.rename(project)
    _run_pipeline(project, remote, f"sjoin_{name}")

    batches = run(plan, [dict(r, batch=0) for r in records], engine="reference").batches
    assert [b.batch for b in batches][:1] == [0]
    got: Counter[tuple[Any, ...]] = Counter()
    for root in plan.query_roots:
        node = plan.node(root)
        assert node is not None and not isinstance(node, StreamNode)
        columns = [c.name for c in node.output]
        got = _spark_rows(out / root, columns)
        expected = _rows_until(batches, root, columns, NO_DATA_BATCH_RUNS)
        assert got == expected, (name, root, sorted(got.items()), sorted(expected.items()))
    return got


# Whether Spark's available-now run of a flow ends with the no-data batch after its one data
# batch (checked on Spark 4.3.0 by this test: the outer and anti examples differ between the
# two answers)
NO_DATA_BATCH_RUNS = True


def _rows_until(
    batches: list[Any], root: str, columns: list[str], no_data: bool
) -> Counter[tuple[Any, ...]]:
    rows: Counter[tuple[Any, ...]] = Counter()
    # the batches of the root's own query (`sjoin run` runs one query per root, one after
    # the other, each numbered from 0; a pipeline runs each root's flow the same way)
    mine = [b for b in batches if any(relation == root for relation, _ in b.rows)][:1]
    query = mine[0].query if mine else None
    for batch in [b for b in batches if b.query == query][: 2 if no_data else 1]:
        for relation, row in batch.rows:
            if relation == root:
                rows[_row(row, columns)] += 1
    return rows
