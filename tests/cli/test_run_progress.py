"""`sjoin run`'s progress line (``cli/progress.py``, issue 40 item 4): its text from the
runtime's figures, drawn in place on a terminal (rich into a buffer that says it is one),
never when stderr is no terminal; and the Ctrl-C handler: the first asks the run to stop,
the second aborts at once."""

from __future__ import annotations

import io
import os
import pty
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from sjoin.api import check_file
from sjoin.cli.main import main
from sjoin.cli.progress import Interrupt, ProgressLine, clock, progress_text
from sjoin.runtime import RunProgress, run

ROOT = Path(__file__).resolve().parents[2]
AD = ROOT / "examples" / "ad_attribution.sjoin"
AD_TRACE = ROOT / "examples" / "ad_attribution.trace.jsonl"
SJOIN = Path(sys.executable).with_name("sjoin")


def _progress(**given: object) -> RunProgress:
    figures: dict[str, object] = {
        "batch": 823,
        "query": "attributed",
        "watermark": "2026-01-01T06:49:00Z",
        "steps": 4,
        "trace_done": 412,
        "trace_total": 1440,
        "resumed_at": 0,
        "rows": 2_000_000,
        "elapsed": 40.0,
        "state_rows": 1_203_442,
    }
    return RunProgress(**{**figures, **given})  # type: ignore[arg-type]


def test_the_line_says_batches_rate_watermark_state_and_time_left() -> None:
    p = _progress()  # 40 s for 412 trace batches: 1,028 more take 99.8 s
    text = progress_text(p)
    assert text == (
        "trace batch 412 of 1,440 (28%), 1,028 to go · batch 823 · 50,000 rows/s · "
        "watermark 2026-01-01T06:49:00Z · state 1,203,442 rows · 1:40 left"
    )
    assert "watermark none" in progress_text(_progress(watermark=None))
    assert progress_text(None) == "checking the trace"
    early = progress_text(_progress(elapsed=0.0, trace_done=0))
    assert "- rows/s" in early and "time left: estimating" in early
    assert progress_text(p, stopping=True).endswith(
        "stopping after this batch (Ctrl-C again aborts at once)"
    )
    assert (clock(59.6), clock(61), clock(3600 * 25 + 1)) == ("1:00", "1:01", "25:00:01")


def test_the_line_is_drawn_in_place_on_a_terminal_and_cleared_at_the_end() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=200, color_system=None)
    stopping = [False]
    with ProgressLine(console, lambda: stopping[0]) as line:
        line.live.refresh()
        line.update(_progress())
        line.live.refresh()
        stopping[0] = True
        line.live.refresh()
    drawn = buffer.getvalue()
    assert "checking the trace" in drawn
    assert "trace batch 412 of 1,440 (28%), 1,028 to go" in drawn
    assert "state 1,203,442 rows · 1:40 left" in drawn
    assert "stopping after this batch" in drawn
    assert "\x1b[2K" in drawn  # each redraw erases the line it replaces
    assert "\n" not in drawn.rstrip("\n").split("\r")[-1]  # one line, never scrolled


def test_no_line_when_stderr_is_no_terminal(tmp_path: Path) -> None:
    """CI logs and pipes get exactly what they got before: the summary line only."""
    result = CliRunner().invoke(
        main, ["run", str(AD), "--trace", str(AD_TRACE), "--output", str(tmp_path / "o.jsonl")]
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        "16 batches, 32 output rows, 1 late row dropped by the watermark "
        "(--late-rows FILE lists them)\n"
    )


def test_the_first_ctrl_c_asks_to_stop_and_the_second_aborts() -> None:
    """With Python's own SIGINT handler, as in a foreground run (a test run started in the
    background inherits SIGINT ignored, which the next test covers)."""
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with Interrupt() as interrupt:
            assert not interrupt()
            os.kill(os.getpid(), signal.SIGINT)
            assert interrupt()  # asked, and nothing raised
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, outer)


def test_a_sigint_ignored_stays_ignored() -> None:
    """A job started in the background ignores SIGINT: the run leaves it so."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with Interrupt():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_terminal_on_stderr_gets_the_line_and_the_rows_go_to_their_file(
    tmp_path: Path,
) -> None:
    """stderr a terminal, the rows in --output: the line is drawn and cleared, then the
    summary; --verbose's notes, printed while the line is up, come above it whole; the
    output file is as without a terminal."""
    out = tmp_path / "o.jsonl"
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(SJOIN), "run", str(AD), "--trace", str(AD_TRACE), "--output", str(out), "--verbose"],
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**os.environ, "COLUMNS": "200", "TERM": "xterm-256color"},
    )
    os.close(follower)
    chunks = []
    try:
        while chunk := os.read(leader, 65536):
            chunks.append(chunk)
    except OSError:  # EIO: the other end is closed and everything was read
        pass
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    shown = b"".join(chunks).decode()
    assert "trace batch 8 of 8 (100%), 0 to go · batch 15 · " in shown
    clean = run(check_file(AD).plan, AD_TRACE)
    assert f"watermark {clean.batches[-1].watermark} · state 2 rows · 0:00 left" in shown
    assert "\x1b[2K" in shown  # erased when the run ends
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown).replace("\r\n", "\n")
    lines = [part for line in plain.split("\n") for part in line.split("\r") if part.strip()]
    assert "16 batches, 32 output rows" in lines[-1]
    assert "sjoin run: engine: reference (row at a time): " in "\n".join(lines)
    notes = [line for line in lines if "sjoin run: " in line]
    assert notes and all(line.startswith("sjoin run: ") for line in notes), notes
    assert proc.stdout is not None and proc.stdout.read() == b""
    assert out.read_text().splitlines() == clean.output_lines()
