"""benchmarks/day_replay.py (issue 40): its floor, the bare polars loop, does the same join as
the engine (the same output and state rows at the end of the trace on both shapes), so that
the time ratio it prints compares like with like; and the script runs end to end.  Not
timed: the figures are the benchmark's."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ...conftest import ROOT

BENCHMARKS = ROOT / "benchmarks"


def load_day_replay() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # it imports its sibling workload.py
    spec = importlib.util.spec_from_file_location("day_replay", BENCHMARKS / "day_replay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


D = load_day_replay()


@pytest.mark.parametrize("shape", sorted(D.JOINS))
def test_the_floor_does_the_engines_join(shape: str, tmp_path: Path) -> None:
    from workload import generate_shape

    batches = 8
    generate_shape(tmp_path, shape, 3_000, batches)
    engine = D.run_engine(tmp_path, shape)
    assert engine["output_rows"] > 0
    for ordered in (False, True):  # the plain floor, and the one whose joins keep an order
        floor = D.run_floor(tmp_path, shape, batches, ordered)
        assert (floor["output_rows"], floor["state_rows"]) == (
            engine["output_rows"],
            engine["state_rows"],
        )
        assert len(engine["per_batch"]) == len(floor["per_batch"]) == batches


def test_the_script_runs_end_to_end(tmp_path: Path) -> None:
    figures = tmp_path / "day.json"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "day_replay.py"),
            "--batches",
            "4",
            "--rows",
            "500",
            "--spark-batches",
            "0",
            "--dir",
            str(tmp_path / "scratch"),
            "--json",
            str(figures),
            "--plot",
            str(tmp_path / "memory.png"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "| uniform | wall (s)" in done.stdout and "| outer | wall (s)" in done.stdout
    assert "engine / floor time:" in done.stdout and "(/ the floor keeping an order:" in done.stdout
    assert "| bare polars loop, joins keeping an order |" in done.stdout
    assert (tmp_path / "memory.png").stat().st_size > 0
    assert not (tmp_path / "scratch" / "uniform").exists()  # each shape deleted after its run
    assert '"per_batch"' in figures.read_text()
