"""Checkpoints: a run that is stopped or killed and restarted produces exactly the output of a
clean run, nothing lost and nothing duplicated."""

from __future__ import annotations

import json
import os
import pickle
import random
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.api import check_file
from sjoin.cli.main import main
from sjoin.runtime import CheckpointError, run, run_to_files
from sjoin.runtime.checkpoints.checkpoint import PAUSE_ENV, REQUIRED, Checkpoint
from sjoin.runtime.io import sinks

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "examples" / "ad_attribution.sjoin"
TRACE = ROOT / "examples" / "ad_attribution.trace.jsonl"
CHAIN = ROOT / "examples" / "checkout_funnel.sjoin"
CHAIN_TRACE = ROOT / "examples" / "checkout_funnel.trace.jsonl"

RUNNER = """
import sys
from sjoin.api import check_file
from sjoin.runtime import run_to_files
spec, trace, output, progress, checkpoint = sys.argv[1:6]
parquet = output.startswith("parquet:")
run_to_files(
    check_file(spec).plan, trace, output=None if output == "-" else output.removeprefix("parquet:"),
    progress=progress, checkpoint=checkpoint, output_format="parquet" if parquet else "jsonl",
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


@pytest.mark.parametrize(
    "engines", [("columnar", "columnar"), ("columnar", "reference"), ("reference", "columnar")]
)
@pytest.mark.parametrize(("spec", "trace"), [(SPEC, TRACE), (CHAIN, CHAIN_TRACE)])
def test_resume_on_either_engine(
    tmp_path: Path, spec: Path, trace: Path, engines: tuple[Any, Any]
) -> None:
    """The columnar engine's checkpoint holds the reference's snapshot: a run stopped on one
    engine resumes on either, with the output of a clean run."""
    plan = check_file(spec).plan
    clean = run(plan, trace)
    checkpoint = tmp_path / "chk"
    first = run(plan, split_trace(trace, tmp_path, 3), checkpoint=checkpoint, engine=engines[0])
    second = run(plan, trace, checkpoint=checkpoint, engine=engines[1])
    assert first.output_lines() + second.output_lines() == clean.output_lines()
    assert first.progress_lines() + second.progress_lines() == clean.progress_lines()


@pytest.mark.parametrize("engine", ["auto", "columnar", "reference"])
def test_resume_rewrites_files_from_the_committed_offsets(tmp_path: Path, engine: Any) -> None:
    """The columnar engine writes its lines straight into the output file (polars' writer),
    the reference engine a chunk of bytes at a time: both from the committed offset."""
    plan = check_file(SPEC).plan
    clean = run(plan, TRACE)
    out, progress, checkpoint = tmp_path / "o.jsonl", tmp_path / "p.jsonl", tmp_path / "chk"
    head = split_trace(TRACE, tmp_path, 4)
    run_to_files(plan, head, output=out, progress=progress, checkpoint=checkpoint, engine=engine)
    with out.open("a") as handle:
        handle.write('{"batch": 99, "partial line')  # as if killed while writing
    run_to_files(plan, TRACE, output=out, progress=progress, checkpoint=checkpoint, engine=engine)
    assert out.read_text().splitlines() == clean.output_lines()
    assert progress.read_text().splitlines() == clean.progress_lines()


@pytest.mark.parametrize("engine", ["columnar", "reference"])
@pytest.mark.parametrize("checkpointed", [True, False])
def test_output_files_are_synced_after_each_batch_only_with_a_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checkpointed: bool, engine: Any
) -> None:
    """With --checkpoint, each batch's lines are on the disk before the next commit records
    the file's size; without one nothing reads that size, and the run does not wait for the
    disk (issue 26: at 1.4 million lines a batch, the wait was most of the run)."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    plan = check_file(SPEC).plan
    out, progress = tmp_path / "o.jsonl", tmp_path / "p.jsonl"
    summary = run_to_files(
        plan,
        TRACE,
        output=out,
        progress=progress,
        checkpoint=tmp_path / "chk" if checkpointed else None,
        engine=engine,
    )
    assert out.read_text().splitlines() == run(plan, TRACE).output_lines()
    expected = summary.batches if checkpointed else 0
    assert synced.count(str(out)) == synced.count(str(progress)) == expected


@pytest.mark.parametrize("engine", ["columnar", "reference"])
@pytest.mark.parametrize("checkpointed", [True, False])
def test_what_lies_far_behind_the_end_of_an_output_file_leaves_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checkpointed: bool, engine: Any
) -> None:
    """After each batch, an output file's bytes more than ``KEEP_CACHED`` behind its end are
    handed back to the kernel (``POSIX_FADV_DONTNEED``: written out, then dropped from
    memory; with a checkpoint, only those its last commit has hashed), and nothing else: a
    short file keeps its pages, and the output and a resumed run's are unchanged (issue 26:
    gigabytes of JSON lines held as dirty pages cost the writer more system time than the
    formatting)."""
    advised: list[tuple[str, int, int, int]] = []
    real = os.posix_fadvise

    def fadvise(fd: int, offset: int, length: int, advice: int) -> None:
        advised.append((os.readlink(f"/proc/self/fd/{fd}"), offset, length, advice))
        real(fd, offset, length, advice)

    monkeypatch.setattr(os, "posix_fadvise", fadvise)
    monkeypatch.setattr(sinks, "KEEP_CACHED", 300)
    plan = check_file(SPEC).plan
    out, progress = tmp_path / "o.jsonl", tmp_path / "p.jsonl"
    checkpoint = tmp_path / "chk" if checkpointed else None
    summary = run_to_files(
        plan, TRACE, output=out, progress=progress, checkpoint=checkpoint, engine=engine
    )
    assert out.read_text().splitlines() == run(plan, TRACE).output_lines()
    sizes = []  # the output's size after each batch that makes it longer than 300 bytes
    for path, offset, length, advice in advised:
        assert advice == os.POSIX_FADV_DONTNEED and offset == 0
        if path == str(out):
            sizes.append(length + 300)
    assert sizes and sizes == sorted(sizes)
    assert len(sizes) <= summary.batches
    progress_sizes = [length + 300 for path, _, length, _ in advised if path == str(progress)]
    if checkpointed:
        # with a checkpoint, the bytes the last commit has not hashed yet stay cached: the
        # next commit reads them back for the file's SHA-256 (the last batch's, at the end)
        assert sizes[-1] < out.stat().st_size  # a batch's lines are more than 300 bytes
        assert progress_sizes[-1] <= progress.stat().st_size
    else:
        assert sizes[-1] == out.stat().st_size
        assert progress_sizes[-1] == progress.stat().st_size  # (progress lines: a file too)


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
    (checkpoint / "state.pkl").write_bytes(evil)  # a bare pickle, as format 1 was
    with pytest.raises(CheckpointError, match="older sjoin"):
        Checkpoint(checkpoint).load()
    Checkpoint(checkpoint).commit({"x": Path("/")})  # framed, with a checksum that holds
    with pytest.raises(CheckpointError, match="unexpected object pathlib"):
        Checkpoint(checkpoint).load()
    with pytest.raises(CheckpointError, match="unexpected object pathlib"):
        run(check_file(SPEC).plan, TRACE, checkpoint=checkpoint)


def _start(args: list[str], pause: str | None, stdout: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != PAUSE_ENV}
    if pause is not None:
        env[PAUSE_ENV] = pause
    with stdout.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", RUNNER, *args], stdout=out, stderr=subprocess.PIPE, env=env
        )


@pytest.mark.parametrize("output", ["file", "stdout", "parquet"])
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
        {"file": str(out), "stdout": "-", "parquet": f"parquet:{tmp_path / 'pq'}"}[output],
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
    if output == "parquet":
        clean_dir = tmp_path / "clean"
        run_to_files(plan, TRACE, output=clean_dir, output_format="parquet")
        assert _files_under(tmp_path / "pq") == _files_under(clean_dir)
        assert progress.read_text().splitlines() == clean.progress_lines()
        return
    written = (
        out.read_text().splitlines()
        if output == "file"
        else [line for path in stdouts for line in path.read_text().splitlines()]
    )
    assert written == clean.output_lines()
    assert progress.read_text().splitlines() == clean.progress_lines()


def _files_under(directory: Path) -> dict[str, Any]:
    """Each Parquet file under ``directory`` (relative path -> its rows); no stray files."""
    import polars as pl

    return {
        str(p.relative_to(directory)): pl.read_parquet(p).rows() if p.suffix == ".parquet" else p
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


# ------------------------------------------------ damaged checkpoints, other traces (issue 13)


def _cli(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stderr


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_every_single_byte_flip_of_the_state_is_refused(tmp_path: Path) -> None:
    """Flip each byte of a committed ``state.pkl`` (one bit of it, in turn each of the eight)
    and restart: each restart must be refused with a CheckpointError before it touches the
    output, or give exactly a clean run's output; none may give other output.  (All are
    refused: the SHA-256 covers every byte after the header, the header is parsed
    strictly.)  A sample of 30 flips also goes through ``sjoin run``: exit 1, no E999."""
    plan = check_file(SPEC).plan
    clean_out, clean_progress = tmp_path / "clean.jsonl", tmp_path / "clean-p.jsonl"
    run_to_files(plan, TRACE, output=clean_out, progress=clean_progress)
    base = tmp_path / "base"
    base.mkdir()
    run_to_files(
        plan,
        split_trace(TRACE, tmp_path, 3),
        output=base / "o.jsonl",
        progress=base / "p.jsonl",
        checkpoint=base / "chk",
    )
    state = (base / "chk" / "state.pkl").read_bytes()
    work = tmp_path / "work"
    shutil.copytree(base, work)
    before = _files(work) | _files(work / "chk")
    outcomes = {"refused": 0, "same output": 0, "other output": 0}
    for at in range(len(state)):
        flipped = bytearray(state)
        flipped[at] ^= 1 << (at % 8)
        (work / "chk" / "state.pkl").write_bytes(bytes(flipped))
        try:
            run_to_files(
                plan,
                TRACE,
                output=work / "o.jsonl",
                progress=work / "p.jsonl",
                checkpoint=work / "chk",
            )
        except CheckpointError as err:
            assert "state.pkl" in str(err) and "checkpoint" in str(err), err
            outcomes["refused"] += 1
            assert _files(work) | _files(work / "chk") == before | {"state.pkl": bytes(flipped)}
            continue
        same = (work / "o.jsonl").read_bytes() == clean_out.read_bytes() and (
            work / "p.jsonl"
        ).read_bytes() == clean_progress.read_bytes()
        outcomes["same output" if same else "other output"] += 1
        shutil.rmtree(work)
        shutil.copytree(base, work)
    assert outcomes["other output"] == 0, outcomes
    assert outcomes == {"refused": len(state), "same output": 0, "other output": 0}
    assert len(state) > 1000

    for at in random.Random(13).sample(range(len(state)), 30):
        flipped = bytearray(state)
        flipped[at] ^= 0x01
        (work / "chk" / "state.pkl").write_bytes(bytes(flipped))
        code, err = _cli(
            "run", SPEC, "--trace", TRACE, "--checkpoint", work / "chk", "--output", work / "o"
        )
        assert code == 1 and "E999" not in err and "state.pkl" in err, (at, err)


def _edited_trace(tmp_path: Path) -> Path:
    """The example's trace with the same batch numbers but two rows of batch 1 changed."""
    lines = []
    for line in TRACE.read_text().splitlines():
        if '"batch": 1,' in line and '"stream": "clicks"' in line:
            line = line.replace('"user_id": "', '"user_id": "X', 1)
        lines.append(line)
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join(lines) + "\n")
    return other


def test_resume_refuses_another_trace_with_the_same_batch_numbers(tmp_path: Path) -> None:
    plan = check_file(SPEC).plan
    other = _edited_trace(tmp_path)
    first_changed = next(
        n for n, line in enumerate(other.read_text().splitlines(), start=1) if '"X' in line
    )
    checkpoint = tmp_path / "chk"
    run(plan, split_trace(TRACE, tmp_path, 3), checkpoint=checkpoint)
    message = (
        f"the trace does not match the checkpoint in {checkpoint}: its batch 1 (line 9) "
        "differs from the checkpoint's batch 1 (line 9), the 2nd batch it consumed"
    )
    with pytest.raises(CheckpointError) as err:
        run(plan, other, checkpoint=checkpoint)
    assert str(err.value).startswith(message)
    assert first_changed > 9  # the batch is named by its first line
    code, stderr = _cli("run", SPEC, "--trace", other, "--checkpoint", checkpoint)
    assert code == 1 and message in stderr
    # without trace.jsonl the refusal stands, only less precise
    (checkpoint / "trace.jsonl").unlink()
    with pytest.raises(CheckpointError, match="one of its first 3 batches differs"):
        run(plan, other, checkpoint=checkpoint)
    # a trace shorter than what was consumed
    with pytest.raises(CheckpointError, match="it has 2 batch\\(es\\), but the checkpoint"):
        run(plan, split_trace(TRACE, tmp_path, 2), checkpoint=checkpoint)
    # the same trace, longer, resumes; so does it with CRLF line ends and a blank line
    clean = run(plan, TRACE)
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(TRACE.read_bytes().replace(b"\n", b"\r\n").replace(b"\r\n", b"\r\n\r\n", 1))
    second = run(plan, crlf, checkpoint=checkpoint)
    first = run(plan, split_trace(TRACE, tmp_path, 3))
    assert first.output_lines() + second.output_lines() == clean.output_lines()


def test_a_run_on_another_trace_refused_midway_then_resumed_on_the_right_one(
    tmp_path: Path,
) -> None:
    """The refused restart changes nothing: the right trace then resumes exactly."""
    plan = check_file(CHAIN).plan
    clean = run(plan, CHAIN_TRACE)
    out, progress, checkpoint = tmp_path / "o.jsonl", tmp_path / "p.jsonl", tmp_path / "chk"
    head = split_trace(CHAIN_TRACE, tmp_path, 4)
    run_to_files(plan, head, output=out, progress=progress, checkpoint=checkpoint)
    lines = CHAIN_TRACE.read_text().splitlines()
    lines[0] = lines[0].replace(": 1", ": 2", 1)
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join(lines) + "\n")
    with pytest.raises(CheckpointError, match="its batch 0 \\(line 1\\) differs"):
        run_to_files(plan, other, output=out, progress=progress, checkpoint=checkpoint)
    run_to_files(plan, CHAIN_TRACE, output=out, progress=progress, checkpoint=checkpoint)
    assert out.read_text().splitlines() == clean.output_lines()
    assert progress.read_text().splitlines() == clean.progress_lines()


def _rewrite(checkpoint: Path, change: Any) -> None:
    """Commit a changed copy of the snapshot (with a valid checksum, as a bug or a hand
    could make it)."""
    data = Checkpoint(checkpoint).load()
    assert data is not None
    change(data)
    Checkpoint(checkpoint).commit(data)


@pytest.mark.parametrize("key", sorted(REQUIRED))
def test_a_snapshot_lacking_a_key_is_refused(tmp_path: Path, key: str) -> None:
    plan = check_file(SPEC).plan
    checkpoint = tmp_path / "chk"
    run(plan, split_trace(TRACE, tmp_path, 3), checkpoint=checkpoint)
    _rewrite(checkpoint, lambda d: d.pop(key))
    with pytest.raises(CheckpointError, match=f"lacks `{key}`: it is not a complete checkpoint"):
        run(plan, TRACE, checkpoint=checkpoint)
    code, err = _cli("run", SPEC, "--trace", TRACE, "--checkpoint", checkpoint)
    assert code == 1 and "E999" not in err and f"lacks `{key}`" in err


def _drop(path: tuple[str, ...]) -> Any:
    def change(data: dict[str, Any]) -> None:
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]

    return change


@pytest.mark.parametrize(
    "change",
    [
        _drop(("engine", "queries")),
        _drop(("engine", "cursor")),
        _drop(("pending", "rows")),
        _drop(("trace", "sha256")),
        lambda d: d["offsets"].update(rows="12"),
        lambda d: d.update(step=-1),
        lambda d: d["engine"].update(cursor=(0,)),
        lambda d: d.update(fingerprint=7),
        lambda d: d["engine"].update(cursor=("1", 0, True)),
        lambda d: d["engine"].update(cursor=(99, 0, True)),
    ],
    ids=[
        "no queries",
        "no cursor",
        "no pending rows",
        "no trace hash",
        "offset not a number",
        "negative step",
        "short cursor",
        "fingerprint not a string",
        "cursor not a number",
        "cursor beyond the consumed trace",
    ],
)
def test_a_malformed_snapshot_is_refused(tmp_path: Path, change: Any) -> None:
    plan = check_file(SPEC).plan
    checkpoint = tmp_path / "chk"
    run(plan, split_trace(TRACE, tmp_path, 3), checkpoint=checkpoint)
    _rewrite(checkpoint, change)
    malformed = r"(is|has a) malformed"  # (the test's directory has "malformed" in its name)
    with pytest.raises(CheckpointError, match=malformed):
        run(plan, TRACE, checkpoint=checkpoint)
    code, err = _cli("run", SPEC, "--trace", TRACE, "--checkpoint", checkpoint)
    assert code == 1 and "E999" not in err and re.search(malformed, err)


def test_trace_record_of_the_checkpoint(tmp_path: Path) -> None:
    """``trace.jsonl`` lists each consumed batch once, also across a restart."""
    plan = check_file(SPEC).plan
    checkpoint = tmp_path / "chk"
    run(plan, split_trace(TRACE, tmp_path, 3), checkpoint=checkpoint)
    run(plan, TRACE, checkpoint=checkpoint)
    entries = [json.loads(x) for x in (checkpoint / "trace.jsonl").read_text().splitlines()]
    values = sorted(
        {int(x.split('"batch": ')[1].split(",")[0]) for x in TRACE.read_text().splitlines()}
    )
    assert [e["index"] for e in entries] == list(range(len(values)))
    assert [e["batch"] for e in entries] == values
    assert entries[0]["line"] == 1 and all(len(e["sha256"]) == 64 for e in entries)
