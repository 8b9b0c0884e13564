"""`sjoin run` from the command line: the §7 formats, snapshotted per example, and the exit
statuses for bad specs, bad traces and bad options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.cli import main

from ..conftest import EXAMPLES


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_run_example_snapshot(spec: Path, tmp_path: Path, text_snapshot) -> None:  # type: ignore[no-untyped-def]
    progress = tmp_path / "progress.jsonl"
    code, out, err = run(
        "run",
        str(spec),
        "--trace",
        str(spec.with_suffix(".trace.jsonl")),
        "--progress",
        str(progress),
    )
    assert code == 0, err
    lines = out.splitlines()
    for line in lines:
        record = json.loads(line)
        assert set(record) == {"batch", "relation", "row"}
    for line in progress.read_text().splitlines():
        record = json.loads(line)
        assert {"batch", "watermark", "operators"} <= set(record)
    assert "output\n" + out + "progress\n" + progress.read_text() == text_snapshot


def test_run_writes_files_and_filters_relation(tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLES if p.stem == "checkout_funnel")
    output = tmp_path / "out.jsonl"
    code, out, err = run(
        "run",
        str(spec),
        "--trace",
        str(spec.with_suffix(".trace.jsonl")),
        "--relation",
        "revenue",
        "--output",
        str(output),
    )
    assert code == 0, err
    assert out == ""
    relations = {json.loads(line)["relation"] for line in output.read_text().splitlines()}
    assert relations == {"revenue"}


def test_bad_trace_row_stops_with_its_line(tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLES if p.stem == "ad_attribution")
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"batch": 0, "stream": "clicks", "row": {"ad_id": 1, "click_time": '
        '"2026-01-01T00:00:00Z", "user_id": "u"}}\n'
        '{"batch": 0, "stream": "clicks", "row": {"ad_id": "x", "click_time": '
        '"2026-01-01T00:00:00Z", "user_id": "u"}}\n'
    )
    code, _, err = run("run", str(spec), "--trace", str(trace))
    assert code == 1
    assert ":2" in err and "Traceback" not in err
    code, _, err = run("run", str(spec), "--trace", str(trace), "--bad-rows", "skip")
    assert code == 0 and "1 bad rows skipped" in err


def test_usage_errors(tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLES if p.stem == "ad_attribution")
    trace = str(spec.with_suffix(".trace.jsonl"))
    assert run("run", str(spec))[0] == 2  # --trace is required
    assert run("run", str(spec), "--trace", str(tmp_path / "none.jsonl"))[0] == 2
    assert run("run", str(spec), "--trace", trace, "--relation", "impressions")[0] == 2


def test_spec_errors_exit_one(tmp_path: Path) -> None:
    spec = tmp_path / "bad.sjoin"
    spec.write_text("stream s (a INT, t STRING) watermark t delay 1 second\n")
    trace = tmp_path / "t.jsonl"
    trace.write_text("")
    code, _, err = run("run", str(spec), "--trace", str(trace))
    assert code == 1 and "E010" in err


def test_progress_to_a_device_or_pipe(tmp_path: Path) -> None:
    """--progress /dev/stderr (or a FIFO) works: such a target is written as a stream."""
    import os
    import threading

    spec = next(p for p in EXAMPLES if p.stem == "ad_attribution")
    fifo = tmp_path / "progress.fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    code, _, err = run(
        "run", str(spec), "--trace", str(spec.with_suffix(".trace.jsonl")), "--progress", str(fifo)
    )
    reader.join(timeout=30)
    assert code == 0, err
    lines = received[0].splitlines()
    assert lines and all(json.loads(line)["batch"] == i for i, line in enumerate(lines))
