"""Every example verifies out of the box: `sjoin verify EXAMPLE --trace EXAMPLE.trace.jsonl`
exits 0 on the local Spark, whatever Spark version the example targets, and its plain output
carries no Spark log lines."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.cli.main import main

from .scenarios import EXAMPLES

pytestmark = pytest.mark.spark

NAMES = sorted(p.stem for p in EXAMPLES.glob("*.sjoin"))


def _args(name: str) -> list[str]:
    return [str(EXAMPLES / f"{name}.sjoin"), "--trace", str(EXAMPLES / f"{name}.trace.jsonl")]


@pytest.mark.parametrize("name", NAMES)
def test_every_example_verifies(spark: Any, name: str) -> None:
    done = CliRunner().invoke(main, ["verify", *_args(name)])
    assert done.exit_code == 0, done.output
    assert "they DIFFER" not in done.stdout
    assert "Spark and the runtime agree on" in done.stderr


def test_the_cli_compares_like_with_like_and_keeps_spark_quiet(spark_version: str) -> None:
    """A fresh process (its own JVM): ad_attribution targets Spark 4.0, the local Spark is
    4.3; one note says so, and neither stream has a line of Spark's log."""
    done = subprocess.run(
        [sys.executable, "-m", "sjoin.cli.main", "verify", *_args("ad_attribution")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    local = ".".join(spark_version.split(".")[:2])
    out = done.stdout.splitlines()
    if local != "4.0":
        assert out[0] == (
            f"note: the spec targets Spark 4.0; comparing the runtime as Spark {local}, "
            "the version that runs here (pass --spark 4.0 to run Spark 4.0 itself)"
        )
        out = out[1:]
    assert out[0].startswith("query `attributed` (append): ")
    assert out[0].endswith("output rows: Spark and the runtime agree")
    assert all(line.startswith("  state cleanup attributed.") for line in out[1:])
    assert done.stderr.splitlines() == [
        "verifying query `attributed` (1 of 1): 8 trace batches",
        "Spark and the runtime agree on 1 query",
    ]
    log = re.compile(r"WARN|INFO|ERROR|log4j|log level|NativeCodeLoader|incubator|py4j", re.I)
    assert not log.search(done.stdout + done.stderr)
