"""The README's "Five minutes" commands, run exactly as written in a new directory (with the
project's .venv linked in): init, plan, run, compile, spark-submit of the compiled job, and
the green snapshot test."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from ...conftest import ROOT

pytestmark = pytest.mark.spark


def tutorial_commands() -> list[str]:
    """Every command of the tutorial's code blocks, in order (the optional Kafka step, which
    needs a broker on a fixed port, is run by tests/integration/kafka instead)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Five minutes", 1)[1].split("### Optional", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) >= 2
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_readme_tutorial_runs_as_written(tmp_path: Path) -> None:
    commands = tutorial_commands()
    assert any("spark-submit" in c for c in commands)
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    script = "set -euo pipefail\n" + "\n".join(commands) + "\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK")}
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [
        json.loads(line)
        for path in sorted((tmp_path / "demo" / "shipped_output").glob("*.json"))
        for line in path.read_text().splitlines()
    ]
    assert sorted(r["order_id"] for r in rows) == [1, 2, 3, 4]
    shipped = {r["order_id"]: r.get("carrier") for r in rows}
    assert shipped == {1: "ups", 2: None, 3: None, 4: "ups"}
    # the second block: the edit made, its plan snapshot accepted, Spark agrees, a report
    assert "INTERVAL 2 DAYS" in (tmp_path / "demo" / "shipped.sjoin").read_text()
    assert "the plan snapshot changed, as expected" in done.stdout
    assert "Spark and the runtime agree" in done.stdout + done.stderr
    assert (tmp_path / "demo" / "report.html").stat().st_size > 0
