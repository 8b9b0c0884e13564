"""What a run tells of itself as it goes (``runtime/progress.py``, issue 40 item 4): the
``RunProgress`` after each batch, and a run stopped by ``stop()`` between two batches, its
files consistent and its checkpoint resumable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.runtime import RunProgress, run, run_to_files
from sjoin.runtime.progress import Meter

ROOT = Path(__file__).resolve().parents[2]
AD = ROOT / "examples" / "ad_attribution.sjoin"
AD_TRACE = ROOT / "examples" / "ad_attribution.trace.jsonl"


def _trace_facts() -> tuple[int, int]:
    """The example trace's batches and rows."""
    records = [json.loads(line) for line in AD_TRACE.read_text().splitlines() if line.strip()]
    return len({r["batch"] for r in records}), len(records)


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_the_figures_after_each_batch(tmp_path: Path, engine: str) -> None:
    plan = check_file(AD).plan
    seen: list[RunProgress] = []
    summary = run_to_files(
        plan, AD_TRACE, output=tmp_path / "o.jsonl", engine=engine, on_progress=seen.append
    )
    clean = run(plan, AD_TRACE, engine="reference")
    batches, rows = _trace_facts()
    assert [p.steps for p in seen] == list(range(1, len(clean.batches) + 1))
    assert [p.batch for p in seen] == [b.batch for b in clean.batches]
    assert {p.trace_total for p in seen} == {batches}
    # trace batches begun: each data batch's own, in order; no-data batches add none
    begun = [p.trace_done for p in seen]
    assert begun == sorted(begun) and begun[-1] == batches and begun[0] == 1
    assert [p.to_go for p in seen] == [batches - d for d in begun]
    assert seen[-1].rows == rows  # every trace row, counted once
    assert [p.watermark for p in seen] == [b.watermark for b in clean.batches]
    assert [p.state_rows for p in seen] == [
        sum(op["numRowsTotal"] for op in b.progress["operators"]) for b in clean.batches
    ]
    elapsed = [p.elapsed for p in seen]
    assert elapsed == sorted(elapsed)
    assert seen[-1].seconds_left in (0, None)
    assert not summary.stopped and summary.trace_done == summary.trace_total == batches


def test_rate_and_time_left_from_a_clock() -> None:
    """Rows per second over this run's time; the time left at this run's pace per trace
    batch, counted from where a checkpoint resumed."""
    plan = check_file(AD).plan
    outs = run(plan, AD_TRACE).batches
    now = [100.0]
    meter = Meter(trace_total=10, clock=lambda: now[0])
    meter.start(trace_done=4)  # a checkpoint had begun 4 trace batches
    assert meter.resumed_at == 4
    now[0] = 102.0
    first = meter.measure(outs[0], trace_done=5, rows_of=lambda i: {4: 30}[i])
    assert (first.rows, first.elapsed, first.rows_per_second) == (30, 2.0, 15.0)
    assert first.to_go == 5 and first.seconds_left == 10.0  # 2 s a batch, 5 to go
    now[0] = 106.0
    second = meter.measure(outs[1], trace_done=6, rows_of=lambda i: {5: 50}[i])
    assert second.rows == 80 and second.rows_per_second == 80 / 6
    assert second.seconds_left == 6.0 / 2 * 4
    now[0] = 107.0  # a no-data batch of the same trace batch: its rows counted once
    third = meter.measure(outs[2], trace_done=6, rows_of=lambda i: 1 / 0)
    assert third.rows == 80 and third.steps == 3


def test_no_time_left_before_a_trace_batch_is_begun() -> None:
    outs = run(check_file(AD).plan, AD_TRACE).batches
    meter = Meter(trace_total=3, clock=lambda: 0.0)
    meter.start(trace_done=0)
    p = meter.measure(outs[0], trace_done=1, rows_of=lambda i: 2)
    assert p.elapsed == 0 and p.rows_per_second is None and p.seconds_left is None


def test_stop_ends_the_run_between_two_batches_and_a_rerun_resumes(tmp_path: Path) -> None:
    plan = check_file(AD).plan
    clean = run(plan, AD_TRACE)
    out, progress, checkpoint = tmp_path / "o.jsonl", tmp_path / "p.jsonl", tmp_path / "chk"
    seen: list[RunProgress] = []
    summary = run_to_files(
        plan,
        AD_TRACE,
        output=out,
        progress=progress,
        checkpoint=checkpoint,
        on_progress=seen.append,
        stop=lambda: len(seen) == 3,
    )
    assert summary.stopped and summary.batches == 3 and summary.last_batch == 2
    assert summary.trace_done == seen[-1].trace_done and summary.trace_total == 8
    assert progress.read_text().splitlines() == clean.progress_lines()[:3]
    head = [line for b in clean.batches[:3] for line in b.output_lines()]
    assert out.read_text().splitlines() == head
    rest = run_to_files(plan, AD_TRACE, output=out, progress=progress, checkpoint=checkpoint)
    assert not rest.stopped and rest.last_batch == clean.batches[-1].batch
    assert out.read_text().splitlines() == clean.output_lines()
    assert progress.read_text().splitlines() == clean.progress_lines()


def test_a_stop_before_the_first_batch_runs_none(tmp_path: Path) -> None:
    summary = run_to_files(
        check_file(AD).plan, AD_TRACE, output=tmp_path / "o.jsonl", stop=lambda: True
    )
    assert summary.stopped and summary.batches == 0 and summary.last_batch is None
