"""PySpark jobs as input (docs/pyspark.md): a catalogue of jobs written the way people
write them, read offline (no JVM), checked and planned as their hand-written .sjoin twins."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.api import check_any, check_file, check_pyspark, input_error
from sjoin.cli.main import main

pytest.importorskip("pyspark.sql.connect.client.core")

JOBS = Path(__file__).parent / "jobs"
TWINS = [
    "guide_inner",
    "guide_left_outer",
    "guide_full_outer",
    "guide_left_semi",
    "windowed_revenue",
    "kafka_selectexpr_json",  # selectExpr("CAST(value AS STRING) AS json") before from_json
    "chained_joins",
    "join_into_window_count",
    "aggregate_then_join_append",  # per_user.window.start: a struct's field
    "hazard_check_disabled",  # W007
    "self_join",  # F.col("v.session") over the join: its output's v_session
    "renamed_between",  # withWatermark after withColumnRenamed: the stream's own column
    "mixed_conditions",
    "dedup_before_join",
    "union_before_join",
    "targets_an_older_spark",  # `# sjoin: spark 3.5`: planned for the Spark it names
    "sql_over_temp_views",  # spark.sql over streaming temporary views with watermarks
    "update_inner_join",  # outputMode("update") on a join: the join's OUTPUT MODE update
    "update_left_semi",
    "update_filter_after_join",  # the mode of a query ending in a filter of a join: the join's
    # a left outer join, its right key IS NULL, the left's columns: the LEFT ANTI JOIN
    "anti_join_idiom",
    # withColumn(window) and the time recomputed beside it: a join on window(...) = window(...)
    "window_join",
]
# jobs Spark refuses, and their twins: the same plan, the same errors
REFUSED_TWINS = ["refused_update_left_outer", "refused_complete_join"]
PLACES = {"line", "col", "end_line", "end_col", "file", "path", "span"}


def placeless(data: Any) -> Any:
    """Plan JSON without source places (line, column, file)."""
    if isinstance(data, dict):
        return {k: placeless(v) for k, v in data.items() if k not in PLACES}
    if isinstance(data, list):
        return [placeless(v) for v in data]
    return data


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("name", TWINS)
def test_a_job_plans_as_its_twin(name: str) -> None:
    job = check_pyspark(JOBS / f"{name}.py")
    twin = check_file(JOBS / f"{name}.sjoin")
    assert job.ok and twin.ok, (job.diagnostics, twin.diagnostics)
    assert placeless(job.plan_json()) == placeless(twin.plan_json())


@pytest.mark.parametrize("name", TWINS)
def test_sjoin_plan_json_of_a_job_is_its_twins(name: str) -> None:
    status, out = invoke("plan", "--format", "json", str(JOBS / f"{name}.py"))
    twin_status, twin = invoke("plan", "--format", "json", str(JOBS / f"{name}.sjoin"))
    assert (status, twin_status) == (0, 0), out
    assert placeless(json.loads(out)) == placeless(json.loads(twin))


@pytest.mark.parametrize("name", REFUSED_TWINS)
def test_a_refused_job_plans_and_fails_as_its_twin(name: str) -> None:
    job = check_pyspark(JOBS / f"{name}.py")
    twin = check_file(JOBS / f"{name}.sjoin")
    assert not job.ok and not twin.ok
    assert [d.code for d in job.diagnostics] == [d.code for d in twin.diagnostics] == ["E023"]
    assert placeless(job.plan_json()) == placeless(twin.plan_json())


def test_the_mode_of_a_query_ending_in_a_filter_of_a_join_is_the_join_s(
    tmp_path: Path,
) -> None:
    """update_filter_after_join with a left outer join: Spark's checker refuses the join in
    Update mode whatever stateless operators are above it (the inner join's verdict is
    checked on Spark: test_pyspark_jobs_on_spark.py), at the query's start() call."""
    text = (JOBS / "update_filter_after_join.py").read_text(encoding="utf-8")
    assert '"inner",' in text
    job = tmp_path / "outer_filter_update.py"
    text = text.replace('"inner",', '"left_outer",')
    job.write_text(text, encoding="utf-8")
    result = check_pyspark(job)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == ["E023"], [d.message for d in errors]
    assert "LeftOuter join between two streaming" in errors[0].message
    at = text.index("start()", text.index('outputMode("update")'))
    assert errors[0].span.start <= at < errors[0].span.end


def test_a_join_another_query_reads_gets_no_mode_from_a_view_of_it(tmp_path: Path) -> None:
    """The mode of a query ending in views of a join is the join's only when no other
    query reads the join (it has one OUTPUT MODE): else E041, never another query's mode
    changed."""
    text = (JOBS / "update_filter_after_join.py").read_text(encoding="utf-8")
    start = 'query = quick.writeStream.outputMode("update")'
    assert start in text
    job = tmp_path / "shared_join.py"
    text = text.replace(start, 'matched.writeStream.format("console").start()\n' + start)
    job.write_text(text, encoding="utf-8")
    result = check_pyspark(job)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == ["E041"], [d.message for d in errors]
    assert "ends in views of `matched`, which another query reads too" in errors[0].message


def test_a_join_spark_refuses_is_reported_at_its_join_call() -> None:
    status, out = invoke("check", "--format", "json", str(JOBS / "refused_full_outer.py"))
    assert status == 1
    errors = [d for d in json.loads(out)["diagnostics"] if d["severity"] == "error"]
    assert [(d["code"], d["line"], d["col"]) for d in errors] == [("E021", 10, 24)]
    assert (
        "FullOuter join between two streaming DataFrame/Datasets is not supported"
        in (errors[0]["message"])
    )


@pytest.mark.parametrize(
    ("name", "code", "where", "text"),
    [
        ("refused_left_outer_no_watermark", "E021", (15, 65), "LeftOuter join between two"),
        ("refused_full_outer_no_time_bound", "E021", (18, 16), "FullOuter join between two"),
        ("refused_left_anti", "E041", (19, 28), "LeftAnti joins with a streaming DataFrame"),
        ("refused_hazard_update", "E022", (26, 42), "issue due to global watermark"),
        # an aggregate in Update mode below a join, the query in Update mode (the join's)
        ("refused_aggregate_before_join", "E022", (25, 24), "issue due to global watermark"),
        # the sink's outputMode(...) call: the query's mode
        ("refused_update_left_outer", "E023", (31, 71), "LeftOuter join between two streaming"),
        ("refused_complete_join", "E023", (31, 70), "not supported for no streaming aggregations"),
    ],
)
def test_a_job_spark_refuses_is_refused_at_its_call(
    name: str, code: str, where: tuple[int, int], text: str
) -> None:
    """tests/integration/spark/test_pyspark_jobs_on_spark.py: Spark refuses each at start()."""
    status, out = invoke("check", "--format", "json", str(JOBS / f"{name}.py"))
    assert status == 1
    errors = [d for d in json.loads(out)["diagnostics"] if d["severity"] == "error"]
    assert [(d["code"], (d["line"], d["col"])) for d in errors] == [(code, where)]
    assert text in errors[0]["message"]


def test_the_text_output_names_the_jobs_file_and_underlines_the_join() -> None:
    status, out = invoke("check", "--color", "never", str(JOBS / "refused_full_outer.py"))
    assert status == 1
    assert "refused_full_outer.py:10:24: error[E021]" in out
    assert 'both = left.alias("a").join(' in out


def test_an_exception_in_the_job_is_e042_at_its_line_with_exit_2() -> None:
    status, out = invoke("check", "--format", "json", str(JOBS / "raises.py"))
    assert status == 2
    [d] = json.loads(out)["diagnostics"]
    assert (d["code"], d["line"], d["message"]) == ("E042", 7, "KeyError: 'topics'")
    assert "Traceback" not in out


def test_a_call_that_needs_a_server_is_e042_at_its_line() -> None:
    result = check_pyspark(JOBS / "needs_columns.py")
    assert input_error(result)
    [d] = result.diagnostics
    assert d.code == "E042" and "AnalyzePlan.schema" in d.message
    assert result.source.line_col(d.span.start) == (6, 24)


def test_a_udf_in_a_join_condition_is_e041_at_its_call() -> None:
    status, out = invoke("check", "--format", "json", str(JOBS / "udf_condition.py"))
    assert status == 1
    [d] = json.loads(out)["diagnostics"]
    assert (d["code"], d["line"], d["col"]) == ("E041", 12, 28)
    assert "UDF" in d["message"]


def test_build_is_the_default_entry_and_entry_names_another() -> None:
    default = check_any(JOBS / "two_entries.py")
    inner = check_any(JOBS / "two_entries.py", entry="build_inner")
    assert default.ok and inner.ok
    assert [j["join_type"] for j in default.plan_json()["joins"]] == ["left_outer"]
    assert [j["join_type"] for j in inner.plan_json()["joins"]] == ["inner"]
    status, _ = invoke("plan", "--entry", "build_inner", str(JOBS / "two_entries.py"))
    assert status == 0


def test_an_entry_the_job_lacks_is_a_usage_error() -> None:
    status, out = invoke("check", "--entry", "nope", str(JOBS / "two_entries.py"))
    assert status == 2
    assert "defines no function `nope`" in out


def test_entry_goes_with_a_job_only() -> None:
    status, out = invoke("check", "--entry", "build", str(JOBS / "guide_inner.sjoin"))
    assert status == 2
    assert "--entry goes with a PySpark job" in out


def test_a_job_is_checked_without_java(tmp_path: Path) -> None:
    """No JVM: JAVA_HOME unset and no java on PATH, the check still runs (and fast)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = str(bindir)  # nothing but the interpreter, called by its full path
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "sjoin", "check", str(JOBS / "guide_inner.py")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert shutil.which("java", path=env["PATH"]) is None
    assert done.returncode == 0, done.stdout + done.stderr
    assert "guide_inner.py: ok" in done.stdout + done.stderr
    assert time.monotonic() - started < 60


def test_the_parent_process_never_imports_pyspark() -> None:
    """pyspark is imported by the child that runs the job only: a .sjoin spec's check and
    the parent of a job's check pay nothing for it."""
    code = (
        "import sys; from sjoin.api import check_any; "
        f"assert check_any({str(JOBS / 'guide_inner.sjoin')!r}).ok; "
        "assert 'pyspark' not in sys.modules, 'spec'; "
        f"assert check_any({str(JOBS / 'guide_inner.py')!r}).ok; "
        "assert 'pyspark' not in sys.modules, 'job'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_a_job_s_sjoin_comment_holds_its_target_spark_only(tmp_path: Path) -> None:
    """`# sjoin: spark X` is read (E016 at the version when sjoin does not model it); any
    other `# sjoin:` comment is E001 at its place, never silently ignored."""
    body = (JOBS / "targets_an_older_spark.py").read_text(encoding="utf-8")
    job = tmp_path / "job.py"

    def found(text: str, errors_only: bool = False) -> list[tuple[str, int, int, str]]:
        job.write_text(text, encoding="utf-8")
        result = check_pyspark(job)
        return [
            (d.code, *result.source.line_col(d.span.start), d.message)
            for d in result.diagnostics
            if d.severity == "error" or not errors_only
        ]

    unmodelled = found(body.replace("# sjoin: spark 3.5", "# sjoin: spark 9.1"))
    assert ("E016", 4, 16) in [f[:3] for f in unmodelled], unmodelled
    other = found(body.replace("# sjoin: spark 3.5", "#sjoin: set trigger = 1"), True)
    assert [f[:3] for f in other] == [("E001", 4, 8)], other
    assert "names its target Spark only" in other[0][3]
