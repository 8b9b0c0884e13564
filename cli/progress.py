"""`sjoin run`'s view of a long replay: the progress line on a terminal (``ProgressLine``, drawn
with rich from the runtime's ``RunProgress``, redrawn in place a few times a second) and
Ctrl-C (``Interrupt``): the first stops the run after the current batch, the second aborts
at once.  The runtime draws nothing: it hands its figures to a callback and asks ``stop()``
before each batch."""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..runtime.progress import RunProgress

REFRESH_PER_SECOND = 4


def progress_text(progress: RunProgress | None, stopping: bool = False) -> str:
    """The progress line's text: trace batches done and to go, rows per second, the
    watermark, the rows in state and the time left (``checking the trace`` before the first
    batch; with ``stopping``, that the run stops after the current batch)."""
    if progress is None:
        text = "checking the trace"
    else:
        p = progress
        share = f" ({100 * p.trace_done // p.trace_total}%)" if p.trace_total else ""
        rate = p.rows_per_second
        left = p.seconds_left
        watermark = p.watermark if p.watermark is not None else "none"
        text = " · ".join(
            [
                f"trace batch {p.trace_done:,} of {p.trace_total:,}{share}, {p.to_go:,} to go",
                f"batch {p.batch}",
                f"{rate:,.0f} rows/s" if rate is not None else "- rows/s",
                f"watermark {watermark}",
                f"state {p.state_rows:,} rows",
                f"{clock(left)} left" if left is not None else "time left: estimating",
            ]
        )
    if stopping:
        text += " · stopping after this batch (Ctrl-C again aborts at once)"
    return text


def clock(seconds: float) -> str:
    """``1:02:03``, or ``2:03`` under an hour."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


class Interrupt:
    """Ctrl-C during a run, as a context: the first SIGINT asks the run to stop after the
    current batch (``interrupt()`` is then True) and puts the handler back that was there,
    so a second one aborts at once (Python's KeyboardInterrupt: `sjoin: interrupted`, exit
    130).  Nothing is installed off the main thread, or when SIGINT is not Python's default
    (ignored, as for a job started in the background, or a host's own handler)."""

    def __init__(self) -> None:
        self.asked = False
        self._previous: Any = None

    def __enter__(self) -> Interrupt:
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if previous is signal.default_int_handler:
                self._previous = previous
                signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.asked = True
        signal.signal(signal.SIGINT, self._previous)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def __call__(self) -> bool:
        return self.asked


class ProgressLine:
    """The live line on stderr (a terminal), as a context: ``update`` hands it each batch's
    figures, and rich redraws it in place ``REFRESH_PER_SECOND`` times a second from its own
    thread; it is cleared when the run ends.  Notes (``note``) and anything written to
    ``sys.stderr`` meanwhile are printed above it.  ``stopping()`` says whether Ctrl-C asked the
    run to stop."""

    def __init__(self, console: Any, stopping: Any = None) -> None:
        from rich.live import Live

        self.latest: RunProgress | None = None
        self.stopping = stopping or (lambda: False)
        self.live = Live(
            self,
            console=console,
            transient=True,
            refresh_per_second=REFRESH_PER_SECOND,
            redirect_stdout=False,  # the rows' stream is never the line's (``_progress_line``)
            redirect_stderr=True,  # a line written to stderr meanwhile goes above this one
        )

    def __rich__(self) -> Any:
        from rich.text import Text

        return Text(progress_text(self.latest, self.stopping()), no_wrap=True, overflow="ellipsis")

    def update(self, progress: RunProgress) -> None:
        self.latest = progress

    def note(self, text: str) -> None:
        """A note printed above the line, which is drawn again below it."""
        self.live.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def __enter__(self) -> ProgressLine:
        self.live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.live.stop()
