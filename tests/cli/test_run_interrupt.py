"""`sjoin run` stopped with Ctrl-C (issue 40, item 4): the first SIGINT stops the run after
the current batch, every file consistent and the checkpoint that batch's, with a message
that says how far it got and how to resume, and exit status 130; a rerun with the same
--checkpoint continues, and its output equals an uninterrupted run's."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sjoin.api import check_file
from sjoin.runtime import run, run_to_files

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "ad_attribution.sjoin"
SJOIN = Path(sys.executable).with_name("sjoin")


def long_trace(path: Path, batches: int) -> Path:
    """``batches`` trace batches a minute apart: an impression each, a click every other."""
    start = datetime(2026, 1, 1)
    with path.open("w", encoding="utf-8") as out:
        for b in range(batches):
            at = start + timedelta(minutes=b)
            impression = {"ad_id": b, "impression_time": f"{at.isoformat()}Z", "campaign": "a"}
            out.write(json.dumps({"batch": b, "stream": "impressions", "row": impression}) + "\n")
            if b % 2 == 0:
                clicked = f"{(at + timedelta(minutes=5)).isoformat()}Z"
                click = {"ad_id": b, "click_time": clicked, "user_id": "u"}
                out.write(json.dumps({"batch": b, "stream": "clicks", "row": click}) + "\n")
    return path


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_ctrl_c_stops_after_a_batch_and_a_rerun_resumes(tmp_path: Path) -> None:
    trace = long_trace(tmp_path / "long.trace.jsonl", 150)
    out, progress, checkpoint = tmp_path / "out.jsonl", tmp_path / "p.jsonl", tmp_path / "chk"
    args = [
        str(SJOIN),
        "run",
        str(SPEC),
        "--trace",
        str(trace),
        "--output",
        str(out),
        "--progress",
        str(progress),
        "--checkpoint",
        str(checkpoint),
    ]
    env = {k: v for k, v in os.environ.items() if k != "SJOIN_RUNTIME_TEST_PAUSE"}
    process = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 60
    while not _lines(progress) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    message = stderr.decode()
    assert process.returncode == 130, message
    assert stdout == b""
    clean = run(check_file(SPEC).plan, trace)
    steps = [json.loads(line)["batch"] for line in _lines(progress)]
    last = steps[-1]
    assert 0 < len(steps) < len(clean.batches)  # stopped midway, after whole batches
    assert steps == list(range(last + 1))
    assert _lines(progress) == clean.progress_lines()[: last + 1]
    before = [line for b in clean.batches[: last + 1] for line in b.output_lines()]
    assert _lines(out) == before  # exactly the batches before the stop, each line whole
    assert f"stopped after batch {last} (trace batch " in message
    assert f"the checkpoint in {checkpoint} holds it" in message
    assert "run the same command again to resume at the next batch" in message
    assert "sjoin: interrupted" not in message  # no abort: a stop
    # the rerun continues from the checkpoint, and ends as an uninterrupted run
    again = subprocess.run(args, capture_output=True, env=env, timeout=120, check=False)
    assert again.returncode == 0, again.stderr.decode()
    assert _lines(out) == clean.output_lines()
    assert _lines(progress) == clean.progress_lines()


def test_ctrl_c_without_a_checkpoint_says_a_rerun_starts_over(tmp_path: Path) -> None:
    """Without --checkpoint the files are whole too, and the report holds the batches run."""
    trace = long_trace(tmp_path / "long.trace.jsonl", 3000)
    out, progress, report = tmp_path / "out.jsonl", tmp_path / "p.jsonl", tmp_path / "r.html"
    args = [str(SJOIN), "run", str(SPEC), "--trace", str(trace), "--output", str(out)]
    args += ["--progress", str(progress), "--report", str(report)]
    process = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not _lines(out) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr.decode()
    assert "a run without --checkpoint cannot resume" in stderr.decode()
    assert f"report: {report}" in stderr.decode()
    steps = [json.loads(line)["batch"] for line in _lines(progress)]
    assert steps == list(range(len(steps))) and 0 < len(steps) < 4500
    batches = [json.loads(line)["batch"] for line in _lines(out)]
    assert batches == sorted(batches) and batches and batches[-1] <= steps[-1]
    page = report.read_text(encoding="utf-8")
    assert re.search(rf"\b{len(steps)} \(\d+ with data", page), "the report's batches"


def _parquet_files(directory: Path) -> dict[str, Any]:
    """Each file under ``directory`` (relative path -> its rows, read back by polars)."""
    import polars as pl

    return {
        str(p.relative_to(directory)): pl.read_parquet(p).rows() if p.suffix == ".parquet" else p
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_ctrl_c_leaves_parquet_outputs_readable_and_a_rerun_completes_them(
    tmp_path: Path,
) -> None:
    trace = long_trace(tmp_path / "long.trace.jsonl", 120)
    out, checkpoint = tmp_path / "pq", tmp_path / "chk"
    args = [str(SJOIN), "run", str(SPEC), "--trace", str(trace), "--output-format", "parquet"]
    args += ["--output", str(out), "--checkpoint", str(checkpoint)]
    process = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not list(out.rglob("*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr.decode()
    message = stderr.decode()
    last = int(message.split("stopped after batch ")[1].split(" ")[0])
    clean_dir = tmp_path / "clean"
    run_to_files(check_file(SPEC).plan, trace, output=clean_dir, output_format="parquet")
    clean = _parquet_files(clean_dir)
    stopped = _parquet_files(out)  # every file whole: polars reads each
    assert stopped and all(int(name[-12:-8]) <= last for name in stopped)
    assert stopped == {name: rows for name, rows in clean.items() if int(name[-12:-8]) <= last}
    again = subprocess.run(args, capture_output=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr.decode()
    assert _parquet_files(out) == clean
