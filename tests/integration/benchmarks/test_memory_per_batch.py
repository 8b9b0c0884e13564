"""benchmarks/memory_per_batch.py (issue 40): it runs end to end on both shapes and prints a
row per trace length, each run's peak memory measured from a run that succeeded.  Not timed:
the figures are the benchmark's."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from ...conftest import ROOT


@pytest.mark.parametrize("shape", ["uniform", "outer"])
def test_the_script_prints_a_peak_per_trace_length(shape: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "memory_per_batch.py"),
            "--shape",
            shape,
            "--rows",
            "300",
            "--batches",
            "2",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"# {shape}: 300 rows per side per batch, parquet trace")
    rows = [re.fullmatch(r"\| (\d+) \| ([\d,]+) \| ([\d.]+) \|", line) for line in lines[3:]]
    assert [m.group(1) for m in rows if m] == ["2", "3"], lines
    assert all(m and int(m.group(2).replace(",", "")) > 0 for m in rows)
