"""State that outgrows memory (issue 40, item 5): after each batch of a run, the rows in
state (``RunProgress.state_rows``) times a per-row estimate give the state's bytes; their
growth per trace batch over the recent batches, extrapolated over the trace batches to go,
says where the run is heading.  ``StateWatch`` warns once, before it happens:

* when the projection (or the state now) passes ``FRACTION`` of the memory the run may use
  (the machine's available memory when the run starts; a test injects a small one), or
* when a join or dedup whose state is never evicted (the plan's ``StateRule`` / ``DedupState``
  ``never``: W001) has grown for ``GROWING`` trace batches in a row: its state grows as long as
  the job runs, whatever this trace's length.

The per-row estimate is rough and errs high: a row of the widest stateful operator as the
runtime holds it (a tuple of Python values, and its place in the state's maps).  What Spark's
state store would hold at real rates is ``sjoin plan --rates``'s prediction
(``compiler/describe/capacity.py``); the warning names it.  Plain text out, no printing: the
command prints it above its progress line (``runner.run_to_files``' ``warn``)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ..compiler.describe.capacity import (
    DEFAULT_STRING_BYTES,
    ENTRY_OVERHEAD_BYTES,
    unsafe_row_bytes,
)
from ..compiler.planning.plan import DedupNode, JoinNode, OperatorNode, Plan
from ..compiler.vocabulary.types import BIGINT, BOOLEAN
from .progress import RunProgress

FRACTION = 0.5  # of the memory the run may use: past it, a warning
GROWING = 5  # trace batches in a row of growth that make an unbounded state's warning
WINDOW = 8  # trace batches the growth is measured over
MIN_SEEN = 3  # trace batches seen before a growth is extrapolated (one jump is no trend)
ROW_BYTES = 120  # a state row's fixed cost: its tuple, and its entries in the state's maps
VALUE_BYTES = 48  # each value of a row (a Python int, float, str or datetime: ~28-60 bytes)


def available_memory() -> int | None:
    """The memory the run may use: ``MemAvailable`` of /proc/meminfo (Linux), else the
    machine's physical memory; None where neither is known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def row_bytes(plan: Plan) -> int:
    """The estimated bytes of one state row: the widest stateful operator's row."""
    widths = [len(plan.columns_of(n.name)) for n in _operators(plan)]
    return ROW_BYTES + VALUE_BYTES * max(widths, default=1)


def spark_row_bytes(plan: Plan) -> int | None:
    """The bytes a stored join row takes in Spark's HDFS-backed state store, as ``sjoin plan
    --rates`` models it (``compiler/describe/capacity.py``: the ``keyWithIndexToValue`` entry's
    key and value UnsafeRows and the store's per-entry overhead, strings of the model's
    default length), for the widest join side; None without a join."""
    sizes = [
        unsafe_row_bytes([*node.key_types, BIGINT], DEFAULT_STRING_BYTES)
        + unsafe_row_bytes([*(c.type for c in side.state_columns), BOOLEAN], DEFAULT_STRING_BYTES)
        + ENTRY_OVERHEAD_BYTES
        for node in _operators(plan)
        if isinstance(node, JoinNode)
        for side in (node.left, node.right)
    ]
    return round(max(sizes)) if sizes else None


def unbounded(plan: Plan) -> list[str]:
    """The stateful operators whose state is never evicted (W001), in Spark's order."""
    names: list[str] = []
    for node in _operators(plan):
        if isinstance(node, JoinNode):
            never = any(side.state.eviction == "never" for side in (node.left, node.right))
        elif isinstance(node, DedupNode):
            never = node.state.eviction == "never"
        else:
            never = False
        if never and node.name not in names:
            names.append(node.name)
    return names


def _operators(plan: Plan) -> list[OperatorNode]:
    seen: dict[str, OperatorNode] = {}
    for root in plan.query_roots:
        for node in plan.for_query(root).stateful_operators(root):
            seen.setdefault(node.name, node)
    return list(seen.values())


def human_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass
class StateWatch:
    """Fed each batch's ``RunProgress`` (``observe``), it returns the one warning of the run
    when the state is heading past memory (None otherwise, and ever after the warning)."""

    plan: Plan
    memory: int | None = None  # bytes the run may use (None: ``available_memory()``)
    fraction: float = FRACTION
    per_row: int = 0  # bytes per state row (0: ``row_bytes(plan)``)
    warned: str | None = None
    _history: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=WINDOW + 1))
    _growing: int = 0
    _never: list[str] = field(default_factory=list)
    spark_row: int | None = None  # ``spark_row_bytes(plan)``

    def __post_init__(self) -> None:
        if self.memory is None:
            self.memory = available_memory()
        if not self.per_row:
            self.per_row = row_bytes(self.plan)
        self._never = unbounded(self.plan)
        self.spark_row = spark_row_bytes(self.plan)

    def observe(self, progress: RunProgress) -> str | None:
        if self.warned is not None:
            return None
        rows = progress.state_rows
        done = progress.trace_done
        history = self._history
        if history and history[-1][0] == done:  # another batch of the same trace batch
            if rows > history[-1][1]:
                history[-1] = (done, rows)
            return None
        if history:
            self._growing = self._growing + 1 if rows > history[-1][1] else 0
        history.append((done, rows))
        text = self._heading_past_memory(progress) or self._never_evicted(progress)
        self.warned = text
        return text

    def _heading_past_memory(self, p: RunProgress) -> str | None:
        if not self.memory:
            return None
        limit = self.fraction * self.memory
        now = p.state_rows * self.per_row
        (first, first_rows), (last, last_rows) = self._history[0], self._history[-1]
        trend = len(self._history) >= MIN_SEEN and last > first
        slope = (last_rows - first_rows) / (last - first) if trend else 0.0
        at_end = now + max(slope, 0.0) * self.per_row * p.to_go
        if at_end <= limit:
            return None
        if now > limit:
            where = f"it holds {human_bytes(now)} already"
        else:
            batches = (limit - now) / (slope * self.per_row)
            where = (
                f"growing {slope:,.0f} rows per trace batch, it passes that in about "
                f"{max(batches, 1):,.0f} more trace batches and holds ~{human_bytes(at_end)} at "
                "the trace's end"
            )
        return (
            f"warning: the state ({p.state_rows:,} rows, ~{human_bytes(now)} at ~{self.per_row} "
            f"bytes a row) is heading past {self.fraction:.0%} of the memory this run may use "
            f"({human_bytes(self.memory)}): {where}{self._spark(p.state_rows)}. {ADVICE}"
        )

    def _spark(self, rows: int) -> str:
        """What the same rows take in Spark's state store, by ``sjoin plan --rates``' model."""
        if self.spark_row is None:
            return ""
        return (
            f" (in a Spark job's state store: ~{human_bytes(rows * self.spark_row)}, "
            f"~{self.spark_row} bytes a join row by sjoin plan --rates' model)"
        )

    def _never_evicted(self, p: RunProgress) -> str | None:
        if not self._never or self._growing < GROWING:
            return None
        names = ", ".join(f"`{n}`" for n in self._never)
        return (
            f"warning: the state of {names} is never evicted (W001) and has grown in each of "
            f"the last {self._growing} trace batches (now {p.state_rows:,} rows, "
            f"~{human_bytes(p.state_rows * self.per_row)}{self._spark(p.state_rows)}): a job "
            f"that runs on grows it until memory runs out. {ADVICE}"
        )


ADVICE = (
    "Bound it: a range condition on the event times (W001's fix) or a shorter retention "
    "(a smaller watermark delay or time range); `sjoin plan --rates` predicts the state at "
    "your rates; or run the generated job on a cluster, whose state store (RocksDB) spills "
    "to disk (docs/testing.md, a long replay)"
)


def watch_state(
    plan: Plan, warn: Callable[[str], None], memory: int | None = None
) -> Callable[[RunProgress], None]:
    """A ``RunProgress`` callback that hands ``warn`` the run's one state warning."""
    watch = StateWatch(plan, memory)

    def observe(progress: RunProgress) -> None:
        text = watch.observe(progress)
        if text is not None:
            warn(text)

    return observe
