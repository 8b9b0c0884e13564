"""Round trips (docs/pyspark.md, "Round trip"): `sjoin compile` of every example spec, read
back as a PySpark job, plans as the spec (source places aside, as a job and its twin in
test_jobs.py).

Each read-back is a child process (pyspark's import, about 3 s): the six examples take
about 40 s with the `sjoin diff` of each.  Of the parity scenarios' specs (no `from`
sources, no sinks: the test gives each query a memory sink) a representative dozen is read
back here, one of each kind of operator and join, since all 128 take ten minutes.

The generated job is `build(spark, inputs)`, `read_inputs(spark)`, `start_sinks(rels)` and
`main()`: sjoin reads it as a script (its `build` takes two arguments, so it is no
`build(spark)` entry point), and `main()` starts every sink on the offline session.  A spec
whose streams have no `from` source compiles to a job whose `read_inputs` raises: the test
appends an entry point that passes `build` a JSON file stream of each stream's schema
(`SCHEMAS`), and compares the plans without the streams' sources.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.api import CheckResult, check_file, check_pyspark, check_text
from sjoin.cli.main import main

pytest.importorskip("pyspark.sql.connect.client.core")

EXAMPLES = Path(__file__).parents[4] / "examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.sjoin"))
PLACES = {"line", "col", "end_line", "end_col", "file", "path", "span"}
SAME = "OLD and NEW are the same pipeline: every query, operator and setting plans alike"

ENTRY = '''

def read_back(spark):
    """The round-trip test's entry point: the spec's confs, as main() sets them, and a
    JSON file stream of each stream's schema."""
    for key, value in SPARK_CONF.items():
        spark.conf.set(key, value)
    inputs = {}
    for name, schema in SCHEMAS.items():
        inputs[name] = spark.readStream.schema(schema).format("json").load("in/" + name)
    start_sinks(build(spark, inputs))
'''


def placeless(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: placeless(v) for k, v in data.items() if k not in PLACES}
    if isinstance(data, list):
        return [placeless(v) for v in data]
    return data


def comparable(result: CheckResult, sources: bool) -> Any:
    """The plan JSON without places, and without the streams' sources unless ``sources``
    (Kafka's options need no mending: the job's `subscribe` and `kafka.bootstrap.servers`
    bind as the spec's `topic` and `bootstrap_servers`)."""
    data = placeless(result.plan_json())
    for stream in data["streams"]:
        if not sources:
            stream.pop("source", None)
    return data


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def compiled(name: str, tmp_path: Path) -> tuple[CheckResult, Path, bool]:
    """The spec's result, its compiled job, and whether every stream has a source."""
    spec = check_file(EXAMPLES / f"{name}.sjoin")
    assert spec.ok, spec.diagnostics
    job = tmp_path / f"{name}.py"
    status, out = invoke("compile", str(EXAMPLES / f"{name}.sjoin"), "-o", str(job))
    assert status == 0, out
    sources = all(s["source"] is not None for s in spec.plan_json()["streams"])
    if not sources:
        job.write_text(job.read_text(encoding="utf-8") + ENTRY, encoding="utf-8")
    return spec, job, sources


def test_there_are_examples() -> None:
    assert NAMES, EXAMPLES


@pytest.mark.parametrize("name", NAMES)
def test_a_compiled_example_reads_back_to_its_plan(name: str, tmp_path: Path) -> None:
    """The job plans for the Spark it was compiled for (its `# sjoin: spark` line)."""
    spec, job, sources = compiled(name, tmp_path)
    back = check_pyspark(job, entry=None if sources else "read_back")
    assert back.ok, back.diagnostics
    assert comparable(back, sources) == comparable(spec, sources)


@pytest.mark.parametrize("name", NAMES)
def test_sjoin_diff_of_an_example_and_its_job(name: str, tmp_path: Path) -> None:
    """`sjoin diff SPEC JOB`: "the same pipeline", whatever Spark the example targets (the
    job's `# sjoin: spark` line) and however Kafka's options are spelt."""
    _, job, sources = compiled(name, tmp_path)
    if not sources:
        pytest.skip("its streams have no `from` source: the job reads none (read_back above)")
    status, out = invoke("diff", "--color", "never", str(EXAMPLES / f"{name}.sjoin"), str(job))
    assert status == 0, out
    assert SAME in out


FILE_SOURCES = """spark 4.3

stream a (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds from json (path = 'in/a')
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds from json (path = 'in/b')

join j = a AS x LEFT OUTER JOIN b AS y
    ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE
    SELECT x.k, x.t, y.t AS paid_at, y.v

sink j to parquet (path = 'out/j') checkpoint 'chk/j'
"""


def test_sjoin_diff_says_same_pipeline_of_a_spec_and_its_job(tmp_path: Path) -> None:
    """No example both targets Spark 4.3 and reads no Kafka (above): a spec of file
    sources shows the wording `sjoin diff` prints when the job plans as its spec."""
    spec = tmp_path / "files.sjoin"
    spec.write_text(FILE_SOURCES, encoding="utf-8")
    job = tmp_path / "files.py"
    assert invoke("compile", str(spec), "-o", str(job))[0] == 0
    status, out = invoke("diff", "--color", "never", str(spec), str(job))
    assert status == 0, out
    assert SAME in out


def parity_scenarios() -> Any:
    """tests/integration/parity/scenarios.py (loaded by path: tests/compiler is no package)."""
    path = Path(__file__).parents[3] / "integration" / "parity" / "scenarios.py"
    name = "roundtrip_parity_scenarios"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name].SCENARIOS


# one of each join type, chains, aggregates (append and update), dedups, a union, a `set`
PARITY_SAMPLE = [
    "inner_range",
    "left_outer_range",
    "right_outer_range",
    "full_outer_range",
    "left_semi_range",
    "chain_of_two_inner_joins",
    "join_then_window_count_append",
    "join_then_key_count_update",
    "dedup_within_watermark",
    "dedup_then_join",
    "union_of_two_joins_then_window_count",
    "null_safe_key_inner",
    "max_policy_inner",
    # a join on window keys: each side's window a column before the join, its time recomputed
    "inner_window_key",
    "left_anti_window_key",
]


@pytest.mark.parametrize("name", PARITY_SAMPLE)
def test_a_compiled_parity_scenario_reads_back_to_its_plan(name: str, tmp_path: Path) -> None:
    text = parity_scenarios()[name].spec
    planned = check_text(text)
    assert planned.ok, planned.diagnostics
    data = planned.plan_json()
    sunk = {s["relation"] for s in data["sinks"]}
    text += "".join(f"\nsink {q} to memory\n" for q in data["query_roots"] if q not in sunk)
    spec_path = tmp_path / f"{name}.sjoin"
    spec_path.write_text(text, encoding="utf-8")
    spec = check_file(spec_path)
    job = tmp_path / f"{name}.py"
    status, out = invoke("compile", str(spec_path), "-o", str(job))
    assert status == 0, out
    job.write_text(job.read_text(encoding="utf-8") + ENTRY, encoding="utf-8")
    back = check_pyspark(job, entry="read_back")
    assert back.ok, back.diagnostics
    assert comparable(back, False) == comparable(spec, False)
