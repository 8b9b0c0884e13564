"""Every command on a pipeline: a .sql file, a project directory, or its spark-pipeline.yml,
wherever a .sjoin spec is taken (`check`, `plan`, `compile`, `run`, `diff`, `fmt`, `why`;
`verify` runs on Spark: tests/integration/spark/test_sql_front_on_spark.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from sjoin.cli.main import main

from ...conftest import EXAMPLES

HERE = Path(__file__).parent
ISSUE = HERE / "pipelines" / "issue_example.sql"
TRACE = """\
{"batch": 0, "stream": "a", "row": {"k": 1, "t": "2026-01-01T00:00:00Z"}}
{"batch": 0, "stream": "b", "row": {"k": 1, "t": "2026-01-01T00:00:03Z"}}
{"batch": 1, "stream": "b", "row": {"k": 1, "t": "2026-01-01T00:00:09Z"}}
"""


def sjoin(*args: str) -> Result:
    return CliRunner().invoke(main, [*args, "--color", "never"])


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text(TRACE)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project: the streams defined in Python, their columns in sjoin-schemas.sql."""
    root = tmp_path / "project"
    (root / "transformations").mkdir(parents=True)
    (root / "spark-pipeline.yml").write_text(
        "name: p\nstorage: file:///tmp/p\nconfiguration:\n"
        '  spark.sql.shuffle.partitions: "3"\n'
        "libraries:\n  - glob:\n      include: transformations/**\n"
    )
    (root / "transformations" / "streams.py").write_text(
        "from pyspark import pipelines as dp\n\n\n@dp.table\ndef a():\n"
        "    return spark.readStream.table('raw_a')\n\n\n"
        "@dp.table(name='b')\ndef read_b():\n    return spark.readStream.table('raw_b')\n"
    )
    sql = ISSUE.read_text().split("CREATE STREAMING TABLE j")[1]
    (root / "transformations" / "join.sql").write_text("CREATE STREAMING TABLE j" + sql)
    (root / "sjoin-schemas.sql").write_text(
        "CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);\n"
        "CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);\n"
    )
    return root


# ------------------------------------------------------------------ check and plan


def test_check_a_sql_file() -> None:
    done = sjoin("check", str(ISSUE))
    assert done.exit_code == 0, done.output
    assert f"{ISSUE}: ok" in done.output


@pytest.mark.parametrize("where", ["dir", "yml"])
def test_check_a_project(project: Path, where: str) -> None:
    path = project if where == "dir" else project / "spark-pipeline.yml"
    done = sjoin("check", str(path))
    assert done.exit_code == 0, done.output


def test_errors_point_into_the_sql_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text(ISSUE.read_text().replace("JOIN STREAM(b) WATERMARK", "JOIN b WATERMARK"))
    done = sjoin("check", str(bad))
    assert done.exit_code == 1
    assert f"{bad}:9:6: error[E033]: `b` is read without STREAM" in done.output
    assert "9 | JOIN b WATERMARK" in done.output and "  |      ^ a batch read" in done.output
    done = sjoin("check", str(bad), "--format", "json")
    (found,) = json.loads(done.stdout)["diagnostics"]
    assert (found["file"], found["line"], found["col"], found["code"]) == (str(bad), 9, 6, "E033")


def test_errors_point_into_each_file_of_a_project(project: Path) -> None:
    join = project / "transformations" / "join.sql"
    join.write_text(join.read_text().replace("SELECT x.k,", "SELECT x.kk,"))
    spec = project / "spark-pipeline.yml"
    spec.write_text(spec.read_text() + "extra: 1\n")
    done = sjoin("check", str(project))
    assert done.exit_code == 1
    assert f"{spec}:8:1: error[E033]: `extra` is no field of a pipeline spec" in done.output
    assert f"{join}:2:8: error[E004]" in done.output
    assert "2 | SELECT x.kk, x.t AS ta, y.t AS tb" in done.output


@pytest.mark.parametrize(
    "name, message",
    [
        ("missing.sql", "no such file"),
        ("empty_dir", "without spark-pipeline.yml"),
    ],
)
def test_a_path_that_is_no_pipeline_is_a_usage_error(
    tmp_path: Path, name: str, message: str
) -> None:
    if name == "empty_dir":
        (tmp_path / name).mkdir()
    done = sjoin("check", str(tmp_path / name))
    assert done.exit_code == 2 and message in done.output


def test_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.sql"
    path.write_bytes("SELECT 'é'".encode("latin-1"))
    done = sjoin("check", str(path))
    assert done.exit_code == 2 and "not UTF-8" in done.output


def test_plan_a_sql_file() -> None:
    done = sjoin("plan", str(ISSUE))
    assert done.exit_code == 0, done.output
    assert "join j = a AS x INNER JOIN b AS y" in done.output
    assert "x.t <= watermark - 5 seconds 1 ms" in done.output
    data = json.loads(sjoin("plan", str(ISSUE), "--format", "json").stdout)
    assert [j["name"] for j in data["joins"]] == ["j"]
    assert data["joins"][0]["state"]["left"]["offset_ms"] == -5001


def test_plan_a_project_with_its_confs(project: Path) -> None:
    data = json.loads(sjoin("plan", str(project), "--format", "json").stdout)
    assert data["settings"]["shuffle_partitions"] == 3


# ------------------------------------------------------------------ run


def test_run_a_sql_file(trace: Path) -> None:
    done = sjoin("run", str(ISSUE), "--trace", str(trace), "--format", "json")
    assert done.exit_code == 0, done.output
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["batch"], r["row"]["k"]) for r in rows] == [(0, 1)]


def test_run_a_project_infers_python_streams_from_the_trace(project: Path, trace: Path) -> None:
    (project / "sjoin-schemas.sql").unlink()
    done = sjoin("check", str(project))
    assert done.exit_code == 1 and "the columns of `a`" in done.output
    done = CliRunner().invoke(
        main, ["run", str(project), "--trace", str(trace), "--format", "json", "--color", "never"]
    )
    assert done.exit_code == 0, done.output
    assert (
        "warning[W012]: the columns of `a` are inferred from the trace: (k BIGINT, t TIMESTAMP)"
        in (done.stderr)
    )
    assert [json.loads(line)["row"]["k"] for line in done.stdout.splitlines()] == [1]


def test_why_on_a_sql_file(trace: Path) -> None:
    done = sjoin("why", str(ISSUE), "--trace", str(trace), "1")
    assert done.exit_code == 0, done.output


# ------------------------------------------------------------------ diff


def test_diff_a_spec_and_its_sql_twin_is_the_same(tmp_path: Path) -> None:
    example = next(p for p in EXAMPLES if p.stem == "ride_matching")
    twin = tmp_path / "ride_matching.sql"
    assert sjoin("fmt", str(example), "--to", "sql", "-o", str(twin)).exit_code == 0
    done = sjoin("diff", str(example), str(twin))
    assert done.exit_code == 0, done.output
    assert "OLD and NEW are the same pipeline" in done.output
    data = json.loads(sjoin("diff", str(twin), str(example), "--format", "json").stdout)
    assert data["same_plan"] is True and data["verdict"] == "resumes"


def test_diff_two_versions_of_a_pipeline(tmp_path: Path, trace: Path) -> None:
    old = ISSUE
    new = tmp_path / "new.sql"
    new.write_text(old.read_text().replace("INTERVAL 5 SECONDS", "INTERVAL 30 SECONDS"))
    done = sjoin("diff", str(old), str(new))
    assert done.exit_code == 1
    assert "OLD and NEW are the same pipeline" not in done.output
    assert "query j: resumes but behaves differently" in done.output
    assert "x.t <= watermark - 30 seconds 1 ms" in done.output
    done = sjoin("diff", str(old), str(new), "--trace", str(trace))
    assert done.exit_code == 1 and "trace:" in done.output


def test_diff_a_pipeline_between_spark_versions() -> None:
    done = sjoin("diff", str(ISSUE), "--spark", "3.5", "--to", "4.3")
    assert done.exit_code in (0, 1), done.output
    assert f"{ISSUE}: Spark 3.5 -> 4.3" in done.output


# ------------------------------------------------------------------ fmt and compile


def test_fmt_both_ways(tmp_path: Path) -> None:
    spec = tmp_path / "j.sjoin"
    done = sjoin("fmt", str(ISSUE), "--to", "sjoin", "-o", str(spec))
    assert done.exit_code == 0, done.output
    text = spec.read_text()
    assert "join j = a AS x INNER JOIN b AS y" in text and "watermark t delay 10 seconds" in text
    done = sjoin("fmt", str(spec), "--to", "sql")
    assert done.exit_code == 0, done.output
    assert "FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x" in done.output


def test_fmt_to_sjoin_writes_views_unions_tables_and_where(tmp_path: Path) -> None:
    """The pipeline around the join as .sjoin text: a table, a union, a view, the aggregate
    a SELECT DISTINCT is, a join's WHERE; the text plans as the SQL does (`sjoin diff` says
    they are the same pipeline), and `sjoin plan` shows the DISTINCT as the aggregate Spark
    runs and the LEFT OUTER join its WHERE makes INNER as INNER."""
    sql = HERE / "pipelines" / "around_the_join.sql"
    spec = tmp_path / "around.sjoin"
    done = sjoin("fmt", str(sql), "--to", "sjoin", "-o", str(spec))
    assert done.exit_code == 0, done.output
    text = spec.read_text()
    for part in (
        "table customers (",
        "from parquet (path = 'dim/customers')",
        "union orders = orders_eu UNION ALL orders_us",
        "view paid_orders =",
        "    WHERE o.status = 'paid'",
        "aggregate payments_once = payments\n    GROUP BY order_id, amount, payment_time",
        "    WHERE p.amount > 0",
    ):
        assert part in text, part
    done = sjoin("diff", str(sql), str(spec), "--color", "never")
    assert done.exit_code == 0, done.output
    assert done.output.startswith("OLD and NEW are the same pipeline")
    done = sjoin("plan", str(sql))
    assert done.exit_code == 0, done.output
    assert "aggregate payments_once = payments  [append]" in done.output
    assert "group by         payments.order_id, payments.amount, payments.payment_time" in (
        done.output
    )
    # the WHERE's EliminateOuterJoin: run as INNER, no row dropped as in a LEFT ANTI
    assert "executed as      INNER\n" in done.output
    assert "drop matched rows" not in done.output


def test_fmt_refuses_a_pipeline_with_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sql"
    bad.write_text(ISSUE.read_text().replace("STREAM(b)", "b"))
    done = sjoin("fmt", str(bad), "--to", "sjoin")
    assert done.exit_code == 1 and "error[E033]" in done.output


def test_fmt_refuses_a_name_sjoin_cannot_hold(tmp_path: Path) -> None:
    sql = tmp_path / "newline.sql"
    sql.write_text(ISSUE.read_text().replace("x.t AS ta", "x.t AS `t\na`"))
    assert sjoin("check", str(sql)).exit_code == 0
    done = sjoin("fmt", str(sql), "--to", "sjoin")
    assert done.exit_code == 1
    assert "U+000A" in done.output and "cannot hold" in done.output


def test_compile_a_sql_file_to_a_job_and_a_project(tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    done = sjoin("compile", str(ISSUE), "-o", str(job))
    assert done.exit_code == 0, done.output
    assert "withWatermark" in job.read_text()
    done = sjoin("compile", str(ISSUE), "--target", "pipeline", "-o", str(tmp_path / "p"))
    assert done.exit_code == 1 and "E032" in done.output  # its streams have no source


def test_a_project_dir_copied_elsewhere_reads_the_same(project: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(project, copy)
    a = json.loads(sjoin("plan", str(project), "--format", "json").stdout)
    b = json.loads(sjoin("plan", str(copy), "--format", "json").stdout)
    assert a == b
