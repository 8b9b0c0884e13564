"""The generated PySpark job: snapshot per example, valid, formatted, lint-clean, imports only
pyspark, and user text never turns into code."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sjoin.api import check_file, check_text
from sjoin.compiler.backends.pyspark import compile_pyspark, spark_duration

from ...conftest import EXAMPLES, PythonSnapshot


def job(spec: Path) -> str:
    result = check_file(spec)
    assert result.ok and result.plan is not None
    return compile_pyspark(result.plan, f"examples/{spec.name}")


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_generated_job_snapshot(spec: Path, snapshot) -> None:  # type: ignore[no-untyped-def]
    code = job(spec)
    compile(code, spec.name, "exec")
    assert code == snapshot(extension_class=PythonSnapshot)


def test_generated_job_snapshot_of_columns_from_kafka_records(snapshot) -> None:  # type: ignore[no-untyped-def]
    """`timestamp_column` / `key_column`: those columns from the record's `timestamp` and
    `CAST(key AS STRING)`, the rest parsed from the value by VALUE_SCHEMAS; the options never
    reach Spark's source (tests/integration/kafka/test_record_columns.py runs this job on a
    broker)."""
    spec = Path(__file__).resolve().parents[2] / "integration" / "kafka" / "record_columns.sjoin"
    result = check_file(spec)
    assert result.ok and result.plan is not None
    code = compile_pyspark(result.plan, "tests/integration/kafka/record_columns.sjoin")
    compile(code, spec.name, "exec")
    assert "timestamp_column" not in code and "key_column" not in code
    assert code == snapshot(extension_class=PythonSnapshot)


def _shapes() -> dict[str, str]:
    """Every shape of job: the examples, every source and sink writer, streams without
    `from`, a spec without sinks, each trigger form, and the `sjoin init` scaffold."""
    from sjoin.cli.scaffold import SPEC as SCAFFOLD

    from .test_injection import SPECS

    shapes = {f"example-{p.stem}": p.read_text() for p in EXAMPLES}
    shapes.update({f"shape-{k}": v for k, v in SPECS.items()})
    shapes["scaffold"] = SCAFFOLD.format(name="shipped")
    return shapes


SHAPES = _shapes()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_generated_job_is_formatted_and_lint_clean(shape: str, tmp_path: Path) -> None:
    result = check_text(SHAPES[shape], f"{shape}.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    path = tmp_path / "job.py"
    path.write_text(compile_pyspark(result.plan, f"{shape}.sjoin"))
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run(
        [*ruff, "format", "--check", "--line-length", "100", "--no-cache", str(path)],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            *ruff,
            "check",
            "--line-length",
            "100",
            "--no-cache",
            "--select",
            "E,F,W,I,B,UP,SIM,RUF",
            str(path),
        ],
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_only_pyspark_is_imported(spec: Path) -> None:
    tree = ast.parse(job(spec))
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    modules |= {
        a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names
    }
    assert {m.split(".")[0] for m in modules if m} <= {"pyspark", "__future__", "sys"}
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"build", "read_inputs", "main"} <= names


def test_spark_durations() -> None:
    assert spark_duration(7_200_000_000) == "2 hours"
    assert spark_duration(3_600_001_000) == "3600001 milliseconds"
    assert spark_duration(1_000_000) == "1 second"


ADVERSARIAL = st.lists(
    st.sampled_from([*"ab_'\"\\\n`$%{}()#;é中\u2028", '"""', "__import__", "')", "\\n"]),
    min_size=1,
    max_size=8,
).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(column=ADVERSARIAL, value=ADVERSARIAL, option=ADVERSARIAL)
def test_user_text_never_becomes_code(column: str, value: str, option: str) -> None:
    def quote_name(text: str) -> str:
        return "`" + text.replace("`", "``").replace("\n", " ") + "`"

    def quote_str(text: str) -> str:
        return "'" + text.replace("'", "''").replace("\n", " ") + "'"

    col = quote_name(column)
    spec = (
        f"stream s ({col} STRING, t TIMESTAMP) watermark t delay 1 second "
        f"from json (path = {quote_str(option)}, {quote_name(option)} = {quote_str(value)})\n"
        f"stream r ({col} STRING, t TIMESTAMP) watermark t delay 1 second\n"
        f"join j = s AS a INNER JOIN r AS b ON a.{col} = b.{col} AND a.t = b.t "
        f"AND a.{col} <> {quote_str(value)}\n"
        f"sink j to json (path = {quote_str(value)}) checkpoint {quote_str(option)}\n"
    )
    result = check_text(spec, "adversarial.sjoin")
    if not result.ok or result.plan is None:
        return  # e.g. a name the binder rejects; nothing is generated
    code = compile_pyspark(result.plan, "adversarial.sjoin", formatted=False)
    tree = ast.parse(code)  # valid Python
    calls = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert calls <= {
        "RuntimeError",
        "print",
        "build",
        "read_inputs",
        "start_sinks",
        "check_conf",
        "main",
    }, calls  # no user text became a call
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert "__import__" not in names


def test_the_job_is_laid_out_by_ruffs_own_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    """`compile` runs ruff's binary as ruff's finder locates it (no new Python interpreter:
    20 ms of a cold compile); without it, `python -m ruff`, which lays the text out alike."""
    import ruff

    from sjoin.compiler.backends import pyspark

    text = "x=[1,\n  2]\n"
    assert pyspark._ruff() == [ruff.find_ruff_bin()]
    direct = pyspark.format_python(text)
    assert direct == "x = [1, 2]\n"

    def missing() -> str:
        raise FileNotFoundError("no ruff binary")

    monkeypatch.setattr(ruff, "find_ruff_bin", missing)
    assert pyspark._ruff() == [sys.executable, "-m", "ruff"]
    assert pyspark.format_python(text) == direct
