"""State that outgrows memory (issue 40, item 5; ``runtime/memory.py``): a run whose state is
heading past a fraction of the memory it may use warns once, before it gets there; a join
whose state is never evicted (W001) warns once it keeps growing; a run well inside memory
says nothing.  The memory is injected (a few KB), never allocated."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from sjoin.api import check_text
from sjoin.cli.main import main
from sjoin.cli.progress import ProgressLine
from sjoin.compiler.describe.capacity import ENTRY_OVERHEAD_BYTES
from sjoin.runtime import RunProgress, run_to_files
from sjoin.runtime import memory as memory_module
from sjoin.runtime.memory import (
    ADVICE,
    GROWING,
    StateWatch,
    row_bytes,
    spark_row_bytes,
    unbounded,
)

BOUNDED = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 hour
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 hour
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 1 HOUR AND R.t + INTERVAL 1 HOUR
"""
# no range condition: neither side is ever evicted (W001)
NEVER = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 second
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 second
join j = l AS L INNER JOIN r AS R ON L.k = R.k
"""


def _plan(text: str) -> Any:
    result = check_text(text, "s.sjoin")
    assert result.plan is not None and result.ok
    return result.plan


def _trace(path: Path, batches: int, per_batch: int = 4) -> Path:
    """Each batch adds ``per_batch`` rows a side, new keys, a second apart: the state grows."""
    lines = []
    for b in range(batches):
        for s in ("l", "r"):
            for i in range(per_batch):
                row = {"k": b * per_batch + i, "t": f"2026-01-01T00:{b // 60:02d}:{b % 60:02d}Z"}
                row["v"] = f"{s}{b}"
                lines.append(json.dumps({"batch": b, "stream": s, "row": row}))
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _run(plan: Any, trace: Path, memory: int, tmp_path: Path, **options: Any) -> list[str]:
    warnings: list[str] = []
    run_to_files(
        plan,
        trace,
        output=tmp_path / "out.jsonl",
        warn=warnings.append,
        memory=memory,
        **options,
    )
    return warnings


def _progress(trace_done: int, state_rows: int, trace_total: int = 100) -> RunProgress:
    return RunProgress(
        batch=trace_done,
        query="j",
        watermark=None,
        steps=trace_done,
        trace_done=trace_done,
        trace_total=trace_total,
        resumed_at=0,
        rows=0,
        elapsed=1.0,
        state_rows=state_rows,
    )


def test_the_plan_says_which_state_is_never_evicted_and_how_wide_a_row_is() -> None:
    assert unbounded(_plan(BOUNDED)) == []
    assert unbounded(_plan(NEVER)) == ["j"]
    assert row_bytes(_plan(BOUNDED)) == memory_module.ROW_BYTES + 6 * memory_module.VALUE_BYTES
    # what sjoin plan --rates' model says a stored join row takes in Spark's state store
    spark = spark_row_bytes(_plan(BOUNDED))
    assert spark is not None and spark > ENTRY_OVERHEAD_BYTES


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_a_state_heading_past_memory_warns_once_before_it_gets_there(
    tmp_path: Path, engine: str
) -> None:
    plan = _plan(BOUNDED)
    per_row = row_bytes(plan)
    trace = _trace(tmp_path / "t.jsonl", 40)
    # at the end the state holds 320 rows; half of this memory is 100 rows' worth
    memory = 200 * per_row
    warnings = _run(plan, trace, memory, tmp_path, engine=engine)
    assert len(warnings) == 1, warnings
    text = warnings[0]
    assert text.startswith("warning: the state (")
    assert f"heading past 50% of the memory this run may use ({memory / 1024:,.1f} KB)" in text
    assert "more trace batches" in text and text.endswith(ADVICE)
    spark = spark_row_bytes(plan)
    assert "in a Spark job's state store: ~" in text and f"~{spark} bytes a join row" in text
    rows = int(text.split("(")[1].split(" rows")[0].replace(",", ""))
    assert rows * per_row < memory / 2  # said before the state got there


def test_a_run_well_inside_memory_says_nothing(tmp_path: Path) -> None:
    plan = _plan(BOUNDED)
    trace = _trace(tmp_path / "t.jsonl", 40)
    assert _run(plan, trace, 10 << 30, tmp_path) == []


def test_a_never_evicted_state_that_keeps_growing_warns_once(tmp_path: Path) -> None:
    plan = _plan(NEVER)
    trace = _trace(tmp_path / "t.jsonl", 20)
    warnings = _run(plan, trace, 10 << 30, tmp_path)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("warning: the state of `j` is never evicted (W001)")
    assert f"has grown in each of the last {GROWING} trace batches" in warnings[0]


def test_the_projection_extrapolates_the_recent_growth() -> None:
    plan = _plan(BOUNDED)
    watch = StateWatch(plan, memory=1000 * 100, per_row=100)  # half: 500 rows
    assert watch.observe(_progress(1, 10)) is None
    assert watch.observe(_progress(2, 20)) is None  # 10 rows a batch: 1,000 at batch 100
    # past half of memory at the trace's end: said now, with where it gets there
    text = watch.observe(_progress(3, 30, trace_total=100))
    assert text is not None and "growing 10 rows per trace batch" in text
    assert "about 47 more trace batches" in text
    assert watch.observe(_progress(4, 10_000)) is None  # once
    # a state that stops growing is not extrapolated
    flat = StateWatch(plan, memory=1000 * 100, per_row=100)
    for done in range(1, 50):
        assert flat.observe(_progress(done, 400)) is None
    # no memory known: only the W001 warning can come
    assert StateWatch(plan, memory=0, per_row=100).observe(_progress(1, 10**9)) is None


def test_the_warning_comes_above_the_progress_line_and_once_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=400, color_system=None)
    with ProgressLine(console) as line:
        line.update(_progress(3, 30))
        line.note("sjoin run: warning: the state (30 rows) is heading past")
        line.live.refresh()
    drawn = buffer.getvalue()
    assert drawn.index("warning: the state") < drawn.rindex("trace batch 3 of 100")
    spec = tmp_path / "j.sjoin"
    spec.write_text(BOUNDED)
    trace = _trace(tmp_path / "t.jsonl", 40)
    monkeypatch.setattr(memory_module, "available_memory", lambda: 200 * row_bytes(_plan(BOUNDED)))
    result = CliRunner().invoke(
        main, ["run", str(spec), "--trace", str(trace), "--output", str(tmp_path / "o.jsonl")]
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("sjoin run: warning: the state (") == 1
