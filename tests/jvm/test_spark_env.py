"""`sjoin verify --spark X.Y` / `--python PATH`: the cached environment, the child process
that runs the test driver alone, and what verify says when the environment cannot be made."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import sjoin.jvm.spark_driver
from sjoin.cli.main import main
from sjoin.jvm.spark_driver import (
    BatchResult,
    RunResult,
    SparkUnavailable,
    decode_result,
    decode_value,
    encode_result,
)
from sjoin.jvm.spark_env import RemoteSpark, cache_dir, ensure_env, env_command

from ..integration.parity.scenarios import EXAMPLES

SPEC = str(EXAMPLES / "unpaid_orders.sjoin")
TRACE = str(EXAMPLES / "unpaid_orders.trace.jsonl")


def test_the_cache_is_under_xdg_cache_home(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "sjoin"
    command = env_command("3.5")
    assert f"-m venv {tmp_path}/sjoin/spark-3.5 && " in command
    pip = f"{tmp_path}/sjoin/spark-3.5/bin/python -m pip install 'pyspark==3.5.*'"
    assert command.endswith(pip)
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "sjoin"
    with pytest.raises(ValueError, match=r"MAJOR\.MINOR"):
        ensure_env("3.5.1")


def test_the_driver_runs_alone() -> None:
    """The child runs spark_driver.py copied alone: it may import nothing of sjoin."""
    tree = ast.parse(Path(sjoin.jvm.spark_driver.__file__).read_text(encoding="utf-8"))
    imported = {
        name
        for node in ast.walk(tree)
        for name in (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
    }
    assert not {name for name in imported if name.split(".")[0] == "sjoin"}


def test_rows_travel_from_the_child_unchanged() -> None:
    t = datetime(2026, 1, 1, 0, 0, 1, 500, tzinfo=UTC)
    rows = [
        {"t": t, "d": date(2026, 2, 3), "a": Decimal("10.50"), "x": 0.5, "n": None},
        {"w": {"start": t, "end": t}, "s": "text", "k": 7, "l": [t]},
    ]
    ops = [{"operatorName": "symmetricHashJoin", "numRowsTotal": 3}]
    result = RunResult([BatchResult(0, rows, "2026-01-01T00:00:00.000Z", 2, ops)], "plan")
    again = decode_result(json.loads(json.dumps(encode_result(result)), object_hook=decode_value))
    assert again == result


def test_a_child_without_java_says_so(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    with pytest.raises(SparkUnavailable, match="Java 17\\+ is needed"):
        RemoteSpark(sys.executable)


def test_cli_spark_without_java_prints_the_command(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    done = CliRunner().invoke(main, ["verify", SPEC, "--trace", TRACE, "--spark", "3.4"])
    assert done.exit_code == 2, done.output
    assert "sjoin verify: Spark 3.4 cannot run here: Java 17+ is needed" in done.stderr
    assert f"make its environment with:\n  {env_command('3.4')}\n" in done.stderr
    assert not (tmp_path / "sjoin" / "spark-3.4").exists()  # (the parser's cache may be there)


def test_cli_spark_without_network_prints_the_command(tmp_path: Path, monkeypatch: Any) -> None:
    """pip finds nothing (no index, as without network): exit 2 and the one command."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    done = CliRunner().invoke(main, ["verify", SPEC, "--trace", TRACE, "--spark", "3.4"])
    assert done.exit_code == 2, done.output
    lines = done.stderr.splitlines()
    assert lines[0].startswith("making the environment for Spark 3.4 in ")
    assert lines[1].startswith(
        "sjoin verify: Spark 3.4 cannot run here: could not make the Spark 3.4 environment: "
    )
    assert lines[2:] == ["make its environment with:", f"  {env_command('3.4')}"]


def test_cli_usage_errors_of_spark_and_python(tmp_path: Path) -> None:
    runner = CliRunner()
    both = ["--spark", "3.5", "--python", sys.executable]
    done = runner.invoke(main, ["verify", SPEC, "--trace", TRACE, *both])
    assert done.exit_code == 2 and "not both" in done.output
    done = runner.invoke(main, ["verify", SPEC, "--trace", TRACE, "--spark", "3"])
    assert done.exit_code == 2 and "MAJOR.MINOR" in done.output
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    done = runner.invoke(main, ["verify", SPEC, "--trace", TRACE, "--python", str(fake)])
    assert done.exit_code == 2 and "cannot import pyspark" in done.output


@pytest.mark.spark
def test_cli_python_runs_the_job_in_a_child(spark_version: str) -> None:
    """--python with this very interpreter: the job runs in a child process (its own JVM)."""
    done = subprocess.run(
        [
            *(sys.executable, "-m", "sjoin.cli.main", "verify", SPEC, "--trace", TRACE),
            *("--python", sys.executable, "--format", "json"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["agree"] is True and report["spark_version"] == spark_version
    assert report["queries"][0]["spark_batches"] > 0
