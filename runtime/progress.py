"""What a run says of itself as it goes: after each executed batch, a ``RunProgress`` (trace
batches done and to go, trace rows run per second, the watermark, the rows in state and an
estimate of the time left), worked out by a ``Meter`` that the runner feeds.

Plain figures, drawn by nobody here: the command (``cli/progress.py``) draws them as a line
on a terminal; the runtime never touches one."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .io.output import BatchOutput


@dataclass(frozen=True)
class RunProgress:
    """The run after one executed batch (``batch``; the figures only, so that nothing of
    the batch's rows is held by whoever keeps them).  Counts are of this run: a run resumed
    from a checkpoint counts from its restart, except ``trace_done``, which counts every
    trace batch begun, those the checkpoint had run (``resumed_at``) included."""

    batch: int  # the id of the batch just executed (Spark's)
    query: str  # its query
    watermark: str | None  # its event-time watermark, as its progress record has it
    steps: int  # executed batches in this run (no-data batches included)
    trace_done: int  # trace batches begun (their data batch run), of ``trace_total``
    trace_total: int  # trace batches in the trace (known once the check pass has read it)
    resumed_at: int  # trace batches the checkpoint had begun before this run
    rows: int  # trace rows of the batches this run began
    elapsed: float  # seconds since this run's first batch began
    state_rows: int  # rows in state after the batch, summed over every query's operators

    @property
    def to_go(self) -> int:
        """Trace batches not begun yet."""
        return max(self.trace_total - self.trace_done, 0)

    @property
    def rows_per_second(self) -> float | None:
        """Trace rows run per second so far (None before any time has passed)."""
        return self.rows / self.elapsed if self.elapsed > 0 else None

    @property
    def seconds_left(self) -> float | None:
        """The time the batches to go would take at this run's pace so far (None before
        this run has begun a trace batch)."""
        begun = self.trace_done - self.resumed_at
        if begun <= 0 or self.elapsed <= 0:
            return None
        return self.elapsed / begun * self.to_go


class Meter:
    """Works out each ``RunProgress`` from the batches as they come: ``start`` when the
    run's first batch begins, then ``measure`` after each one."""

    def __init__(self, trace_total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.trace_total = trace_total
        self.clock = clock
        self.started = clock()
        self.steps = 0
        self.rows = 0
        self.resumed_at = 0
        self.counted = -1  # the last trace batch whose rows are counted
        self.state: dict[str, int] = {}  # each query's rows in state after its last batch

    def start(self, trace_done: int) -> None:
        """The run's first batch begins, ``trace_done`` trace batches begun before it (a
        checkpoint's)."""
        self.started = self.clock()
        self.resumed_at = trace_done
        self.counted = trace_done - 1

    def measure(
        self, out: BatchOutput, trace_done: int, rows_of: Callable[[int], int]
    ) -> RunProgress:
        """The run after batch ``out``, ``trace_done`` trace batches begun; ``rows_of(i)``
        counts trace batch ``i``'s rows (called once per batch this run begins)."""
        self.steps += 1
        for index in range(max(self.counted + 1, 0), trace_done):
            self.rows += rows_of(index)
        self.counted = max(self.counted, trace_done - 1)
        self.state[out.query] = sum(op["numRowsTotal"] for op in out.progress["operators"])
        return RunProgress(
            batch=out.batch,
            query=out.query,
            watermark=out.watermark,
            steps=self.steps,
            trace_done=trace_done,
            trace_total=self.trace_total,
            resumed_at=self.resumed_at,
            rows=self.rows,
            elapsed=self.clock() - self.started,
            state_rows=sum(self.state.values()),
        )
