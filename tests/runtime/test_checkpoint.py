"""Checkpoints: a run that is stopped or killed and restarted produces exactly the output of a
clean run, nothing lost and nothing duplicated."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.runtime import CheckpointError, run, run_to_files
from sjoin.runtime.checkpoint import PAUSE_ENV, Checkpoint

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "ad_attribution.sjoin"
TRACE = ROOT / "examples" / "ad_attribution.trace.jsonl"
CHAIN = ROOT / "examples" / "checkout_funnel.sjoin"
CHAIN_TRACE = ROOT / "examples" / "checkout_funnel.trace.jsonl"

RUNNER = """
import sys
from sjoin.api import check_file
from sjoin.runtime import run_to_files
spec, trace, output, progress, checkpoint = sys.argv[1:6]
run_to_files(
    check_file(spec).plan, trace, output=None if output == "-" else output,
    progress=progress, checkpoint=checkpoint,
)
"""


def split_trace(path: Path, tmp_path: Path, first_batches: int) -> Path:
    lines = path.read_text().splitlines()
    head = [line for line in lines if int(line.split('"batch": ')[1].split(",")[0]) < first_batches]
    out = tmp_path / "head.jsonl"
    out.write_text("\n".join(head) + "\n")
    return out


@pytest.mark.parametrize(("spec", "trace"), [(SPEC, TRACE), (CHAIN, CHAIN_TRACE)])
def test_stop_and_resume_with_a_longer_trace(tmp_path: Path, spec: Path, trace: Path) -> None:
    plan = check_file(spec).plan
    clean = run(plan, trace)
    checkpoint = tmp_path / "chk"
    first = run(plan, split_trace(trace, tmp_path, 3), checkpoint=checkpoint)
    second = run(plan, trace, checkpoint=checkpoint)
    assert first.output_lines() + second.output_lines() == clean.output_lines()
    assert first.progress_lines() + second.progress_lines() == clean.progress_lines()
    again = run(plan, trace, checkpoint=checkpoint)  # everything is done: nothing repeats
    assert again.batches == []


def test_resume_rewrites_files_from_the_committed_offsets(tmp_path: Path) -> None:
    plan = check_file(SPEC).plan
    clean = run(plan, TRACE)
    out, progress, checkpoint = tmp_path / "o.jsonl", tmp_path / "p.jsonl", tmp_path / "chk"
    run_to_files(
        plan, split_trace(TRACE, tmp_path, 4), output=out, progress=progress, checkpoint=checkpoint
    )
    with out.open("a") as handle:
        handle.write('{"batch": 99, "partial line')  # as if killed while writing
    run_to_files(plan, TRACE, output=out, progress=progress, checkpoint=checkpoint)
    assert out.read_text().splitlines() == clean.output_lines()
    assert progress.read_text().splitlines() == clean.progress_lines()


def test_checkpoint_refuses_another_spec_or_trace(tmp_path: Path) -> None:
    plan = check_file(SPEC).plan
    checkpoint = tmp_path / "chk"
    run(plan, split_trace(TRACE, tmp_path, 2), checkpoint=checkpoint)
    with pytest.raises(CheckpointError, match="another spec or relation"):
        run(check_file(CHAIN).plan, CHAIN_TRACE, checkpoint=checkpoint)
    with pytest.raises(CheckpointError, match="another spec or relation"):
        run(plan, TRACE, checkpoint=checkpoint, relation="attributed")
    shifted = tmp_path / "shifted.jsonl"
    shifted.write_text(
        "".join(
            line.replace(f'"batch": {b},', f'"batch": {10 * b},', 1) + "\n"
            for line in TRACE.read_text().splitlines()
            for b in [int(line.split('"batch": ')[1].split(",")[0])]
        )
    )
    with pytest.raises(CheckpointError, match="the trace does not match the checkpoint"):
        run(plan, shifted, checkpoint=checkpoint)


def test_snapshot_is_plain_data(tmp_path: Path) -> None:
    checkpoint = tmp_path / "chk"
    run(check_file(SPEC).plan, TRACE, checkpoint=checkpoint)
    assert Checkpoint(checkpoint).load() is not None
    evil = pickle.dumps({"version": 1, "x": Path("/")})
    (checkpoint / "state.pkl").write_bytes(evil)
    with pytest.raises(CheckpointError, match="unexpected object"):
        Checkpoint(checkpoint).load()


def _start(args: list[str], pause: str | None, stdout: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != PAUSE_ENV}
    if pause is not None:
        env[PAUSE_ENV] = pause
    with stdout.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", RUNNER, *args], stdout=out, stderr=subprocess.PIPE, env=env
        )


@pytest.mark.parametrize("output", ["file", "stdout"])
def test_kill_after_every_batch_boundary_and_restart(tmp_path: Path, output: str) -> None:
    """SIGKILL the run at each batch boundary in turn (alternately right after the
    checkpoint commit, before the output is written, and right after the output), restart
    it each time, and compare the output with a clean run's, line for line."""
    plan = check_file(SPEC).plan
    clean = run(plan, TRACE)
    steps = len(clean.batches)
    out, progress, checkpoint = tmp_path / "out.jsonl", tmp_path / "p.jsonl", tmp_path / "chk"
    args = [
        str(SPEC),
        str(TRACE),
        str(out) if output == "file" else "-",
        str(progress),
        str(checkpoint),
    ]
    stdouts = []
    for step in range(steps):
        stage = "committed" if step % 2 == 0 else "emitted"
        stdout = tmp_path / f"stdout-{step}.txt"
        stdouts.append(stdout)
        process = _start(args, f"{step}:{stage}", stdout)
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        assert f"paused after step {step} {stage}" in line, line + process.stderr.read().decode()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        process.stderr.close()
    final = tmp_path / "stdout-final.txt"
    stdouts.append(final)
    process = _start(args, None, final)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err.decode()
    written = (
        out.read_text().splitlines()
        if output == "file"
        else [line for path in stdouts for line in path.read_text().splitlines()]
    )
    assert written == clean.output_lines()
    assert progress.read_text().splitlines() == clean.progress_lines()
