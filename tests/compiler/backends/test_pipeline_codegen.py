"""`sjoin compile --target pipeline`: the generated SDP project per example (snapshots), the
refusals (E032, one case per kind), the YAML read back as written, and the CLI."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from sjoin.api import check_file, check_text
from sjoin.cli.main import main
from sjoin.compiler.backends.pipeline import compile_pipeline, pipeline_sql
from sjoin.compiler.checks.job_warnings import pipeline_refusals
from sjoin.compiler.planning.plan import Plan
from sjoin.compiler.vocabulary.model import SparkVersion
from sjoin.compiler.vocabulary.sjointext import Unwritable

from ...conftest import EXAMPLES, NOT_PIPELINES, PIPELINE_EXAMPLES, ROOT
from .test_pipeline_on_spark import pipeline_plan

STORAGE = "file:///work/project/pipeline-storage"


def _plan(spec: Path) -> Plan:
    result = check_file(spec)
    assert result.ok and result.plan is not None
    return result.plan


def _project_text(files: dict[str, str]) -> str:
    return "".join(f"=== {path}\n{text}" for path, text in sorted(files.items()))


def _check_files(files: dict[str, str]) -> None:
    for path, text in files.items():
        if path.endswith(".py"):
            ast.parse(text)
        elif path.endswith(".yml"):
            spec = yaml.safe_load(text)
            assert set(spec) <= {"name", "storage", "configuration", "libraries"}
            assert spec["libraries"] == [{"glob": {"include": "transformations/**"}}]
        elif path != "sjoin-schemas.sql":  # read back: tests/compiler/frontend/test_equivalence.py
            assert path.startswith("transformations/relation_") and path.endswith(".sql")


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_example_project_snapshot(spec: Path, text_snapshot) -> None:  # type: ignore[no-untyped-def]
    """The example as written: its project, or the refusals of what a pipeline cannot run."""
    plan = _plan(spec)
    refused = pipeline_refusals(plan)
    if refused:
        text = "".join(f"{d.code}: {d.message}\n" for d in refused)
    else:
        files = compile_pipeline(plan, spec.stem, STORAGE, f"examples/{spec.name}")
        _check_files(files)
        text = _project_text(files)
    assert text == text_snapshot


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_compiles_to_a_pipeline(spec: Path) -> None:
    """No example is refused by the pipeline target (E032), NOT_PIPELINES' neither: those
    are left out of the read-back and Spark runs only, for the reason given."""
    result = check_file(spec, spark=SparkVersion(4, 3))
    assert result.ok and result.plan is not None
    plan = pipeline_plan(result.plan, Path("/data/in"), Path("/data/out"))  # file sources
    assert [d.message for d in pipeline_refusals(plan)] == []
    assert set(NOT_PIPELINES) <= {p.stem for p in EXAMPLES}


@pytest.mark.parametrize("spec", PIPELINE_EXAMPLES, ids=lambda p: p.stem)
def test_example_project_with_file_sources_snapshot(spec: Path, text_snapshot) -> None:  # type: ignore[no-untyped-def]
    """The project test_pipeline_on_spark runs: JSON sources and sinks, planned for 4.3."""
    result = check_file(spec, spark=SparkVersion(4, 3))
    assert result.ok and result.plan is not None
    plan = pipeline_plan(result.plan, Path("/data/in"), Path("/data/out"))
    assert pipeline_refusals(plan) == []
    files = compile_pipeline(plan, spec.stem, STORAGE, f"examples/{spec.name}")
    _check_files(files)
    assert _project_text(files) == text_snapshot


REFUSED = {
    "stream-name": (
        "stream `my.s one` (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()",
        "`my.s one` cannot name a table",
    ),
    "join-name": (
        "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()\n"
        "join `j-1` = s AS a INNER JOIN s AS b ON a.k = b.k AND a.t = b.t",
        "`j-1` cannot name a table",
    ),
    "old-spark": (
        "spark 4.0\nstream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()",
        "Spark 4.0",
    ),
    "no-source": ("stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second", "`s`"),
    "update-mode": (
        "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()\n"
        "aggregate a = s GROUP BY s.k SELECT s.k, count(*) AS n OUTPUT MODE update",
        "OUTPUT MODE update",
    ),
    "complete-mode": (
        "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()\n"
        "aggregate a = s GROUP BY s.k SELECT s.k, count(*) AS n OUTPUT MODE complete",
        "OUTPUT MODE complete",
    ),
    "memory-sink": (
        "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()\n"
        "join j = s AS a INNER JOIN s AS b ON a.k = b.k AND a.t = b.t\nsink j to memory ()",
        "memory format",
    ),
    "delta-table-sink": (
        "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()\n"
        "join j = s AS a INNER JOIN s AS b ON a.k = b.k AND a.t = b.t\n"
        "sink j to delta (table = 'x')",
        "Delta table by name",
    ),
    "trigger": (
        "set trigger = '10 seconds'\n"
        "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()",
        "set trigger = '10 seconds'",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refusals_point_at_the_spec(case: str) -> None:
    text, said = REFUSED[case]
    result = check_text(text, "s.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    refused = pipeline_refusals(result.plan)
    assert [d.code for d in refused] == ["E032"]
    assert said in refused[0].message
    span = refused[0].span
    assert 0 <= span.start < span.end <= len(text)


def test_available_now_and_unset_trigger_are_accepted() -> None:
    for setting in ("", "set trigger = 'available_now'\n"):
        text = setting + "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second from rate ()"
        result = check_text(text, "s.sjoin")
        assert result.plan is not None and pipeline_refusals(result.plan) == []


def test_configuration_holds_only_the_confs_the_spec_sets() -> None:
    plain = _plan(ROOT / "examples" / "unpaid_orders.sjoin")
    assert plain.spark_conf == {}
    files = compile_pipeline(plain, "p", STORAGE)
    assert "configuration" not in yaml.safe_load(files["spark-pipeline.yml"])
    iot = _plan(ROOT / "examples" / "iot_window_join.sjoin")
    spec = yaml.safe_load(compile_pipeline(iot, "p", STORAGE)["spark-pipeline.yml"])
    assert spec["configuration"] == iot.spark_conf
    assert spec["storage"] == STORAGE


@pytest.mark.parametrize(
    "text", ['a"b\\c', "x\ny: 1", "中 😀", "\u2028\x85\x00", "a: b # c", "'q'", "\ud800"]
)
def test_yaml_scalars_read_back_exactly(text: str) -> None:
    """The pipeline's name, storage and conf values are YAML double-quoted scalars written
    with pytext.literal: YAML reads its escapes back to the text."""
    plan = _plan(ROOT / "examples" / "iot_window_join.sjoin")
    plan = dataclasses.replace(plan, spark_conf={"spark.sql.session.timeZone": text})
    if "\ud800" in text:  # a lone surrogate: PyYAML refuses what it cannot hold in text
        return
    spec = yaml.safe_load(compile_pipeline(plan, text, text)["spark-pipeline.yml"])
    assert spec["name"] == text and spec["storage"] == text
    assert spec["configuration"] == {"spark.sql.session.timeZone": text}


def test_cli_writes_the_project(tmp_path: Path) -> None:
    out = tmp_path / "proj"
    spec = ROOT / "examples" / "iot_window_join.sjoin"
    done = CliRunner().invoke(
        main, ["compile", str(spec), "--target", "pipeline", "-o", str(out), "--color", "never"]
    )
    assert done.exit_code == 0, done.output
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "sjoin-schemas.sql",
        "spark-pipeline.yml",
        "transformations/pipeline.py",
        "transformations/relation_000.sql",
    ]
    storage = yaml.safe_load((out / "spark-pipeline.yml").read_text())["storage"]
    assert storage == (out.resolve() / "pipeline-storage").as_uri()


def test_cli_refuses_and_needs_a_directory(tmp_path: Path) -> None:
    spec = ROOT / "examples" / "ride_matching.sjoin"
    out = tmp_path / "proj"
    args = ["compile", str(spec), "--target", "pipeline", "--color", "never"]
    done = CliRunner().invoke(main, [*args, "-o", str(out)])
    assert done.exit_code == 1 and "E032" in done.output and not out.exists()
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 2 and "-o DIR" in done.output
    (tmp_path / "file").write_text("x")
    ok = ROOT / "examples" / "iot_window_join.sjoin"
    done = CliRunner().invoke(
        main, ["compile", str(ok), "--target", "pipeline", "-o", str(tmp_path / "file")]
    )
    assert done.exit_code == 2 and "is a file" in done.output


def test_pyspark_stays_the_default() -> None:
    spec = ROOT / "examples" / "iot_window_join.sjoin"
    done = CliRunner().invoke(main, ["compile", str(spec), "--color", "never"])
    assert done.exit_code == 0 and "def build(spark" in done.output


# ---------------------------------------------------------------- issue 37's relation kinds

KINDS_SPEC = """spark 4.3
table customers (customer_id BIGINT, segment STRING) from parquet (path = 'dim/customers')
stream orders (order_id BIGINT, customer_id BIGINT, amount DOUBLE, order_time TIMESTAMP)
  watermark order_time delay 10 seconds from json (path = 'in/orders')
stream returns (order_id BIGINT, customer_id BIGINT, amount DOUBLE, order_time TIMESTAMP)
  watermark order_time delay 30 seconds from json (path = 'in/returns')
stream payments (order_id BIGINT, status STRING, pay_time TIMESTAMP)
  watermark pay_time delay 10 seconds from json (path = 'in/payments')
union moves = orders UNION ALL returns
view big = SELECT m.order_id, m.customer_id, m.order_time FROM moves AS m WHERE m.amount > 10
join paid = big AS b LEFT OUTER JOIN payments AS p
  ON b.order_id = p.order_id
  AND p.pay_time BETWEEN b.order_time AND b.order_time + INTERVAL 1 MINUTE
  WHERE p.status = 'ok' OR p.status IS NULL
  SELECT b.order_id, b.customer_id, b.order_time, p.status
join enriched = paid AS q INNER JOIN customers AS c ON q.customer_id = c.customer_id
  SELECT q.order_id, q.order_time, c.segment
"""


def _kinds_plan(text: str = KINDS_SPEC) -> Any:
    result = check_text(text, "kinds.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return result.plan


def test_every_kind_of_relation_is_written_in_sql() -> None:
    plan = _kinds_plan()
    assert pipeline_refusals(plan) == []
    files = compile_pipeline(plan, "kinds", "file:///p", "kinds.sjoin", formatted=False)
    sql = [text for path, text in sorted(files.items()) if path.startswith("transformations/r")]
    table, union, view, paid, enriched = sql
    # the static table: the materialized view of its files that SDP runs and sjoin reads back
    assert table.endswith(
        "CREATE MATERIALIZED VIEW customers (\n  customer_id BIGINT,\n  segment STRING\n) AS\n"
        "SELECT\n  CAST(customer_id AS BIGINT) AS customer_id,\n"
        "  CAST(segment AS STRING) AS segment\nFROM parquet.`dim/customers`\n"
    )
    assert "CREATE TEMPORARY VIEW moves AS" in union
    assert (
        "SELECT * FROM STREAM(orders) WATERMARK order_time DELAY OF INTERVAL 10 SECONDS\n"
        "UNION ALL\n"
        "SELECT * FROM STREAM(returns) WATERMARK order_time DELAY OF INTERVAL 30 SECONDS"
    ) in union
    assert "FROM STREAM(moves) AS m\nWHERE m.amount > 10" in view
    assert "\nWHERE (p.status = 'ok' OR p.status IS NULL)" in paid
    static = "FROM STREAM(paid) AS q\nINNER JOIN customers AS c\nON q.customer_id = c.customer_id"
    assert static in enriched  # the table without STREAM(): a batch read
    module = files["transformations/pipeline.py"]
    ast.parse(module)
    assert '@dp.temporary_view(name="customers")' not in module  # no Python read of it
    assert "spark.read." not in module
    assert "customers" not in files["sjoin-schemas.sql"]  # SDP's own SQL defines it


def test_pipeline_sql_writes_every_relation_or_refuses_naming_it() -> None:
    plan = _kinds_plan()
    sql = pipeline_sql(plan, "kinds.sjoin")
    for name in ("moves", "big", "paid", "enriched"):
        assert f" {name} AS\n" in sql
    assert "CREATE MATERIALIZED VIEW customers (" in sql
    assert "FROM parquet.`dim/customers`" in sql and "-- sjoin: from parquet" not in sql
    assert "UNION ALL" in sql and "WHERE m.amount > 10" in sql
    dedup = _kinds_plan(KINDS_SPEC + "dedup once = orders ON (order_id, order_time)\n")
    with pytest.raises(Unwritable, match="dedup `once` has no pipeline SQL"):
        pipeline_sql(dedup, "kinds.sjoin")


def test_fmt_to_sql_writes_a_union(tmp_path: Path) -> None:
    spec = tmp_path / "kinds.sjoin"
    spec.write_text(KINDS_SPEC, encoding="utf-8")
    done = CliRunner().invoke(main, ["fmt", str(spec), "--to", "sql"])
    assert done.exit_code == 0, done.output
    assert "UNION ALL" in done.output
    spec.write_text(KINDS_SPEC + "dedup once = orders ON (order_id)\n", encoding="utf-8")
    done = CliRunner().invoke(main, ["fmt", str(spec), "--to", "sql"])
    assert done.exit_code == 1 and "dedup `once` has no pipeline SQL" in done.output
