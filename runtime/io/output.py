"""What a run gives its caller: each executed batch as a ``BatchOutput`` (its rows, row
counts and §7 progress record), a whole run's ``RunResult`` or ``RunSummary``, and the §7
output and progress line formats (``output_line``, ``progress_line``; language brief §7)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import IO, Any

from ..engine.batches import Batch
from ..engine.values import dumps
from .trace import BadRow

OutputRows = list[tuple[str, dict[str, Any]]]


@dataclass(frozen=True, eq=False)
class BatchOutput:
    """One executed micro-batch: ``rows`` are (relation, JSON-ready row dict) pairs in output
    order; ``counts`` the number of output rows per relation; ``progress`` the §7 progress
    record.  The row dicts are built on first use of ``rows``: a consumer that only counts
    them (a progress bar, a report, a benchmark's discarding sink) never pays for them."""

    batch: int
    query: str
    watermark: str | None
    data: bool
    counts: dict[str, int]
    progress: dict[str, Any]
    make_rows: Callable[[], OutputRows] = field(repr=False)
    # each join's state rows per side (left, right) after the batch; the progress record
    # has only their sum (numRowsTotal), as Spark's has
    state_sides: dict[str, tuple[int, int]] = field(default_factory=dict)
    # the trace batch whose step ran it (its data batch, or a no-data batch after it)
    trace_batch: int | None = None
    # the output lines as UTF-8 text chunks, written straight from the columns (columnar
    # engine; the arguments: the trace batch to add to each line, or None, and a binary file
    # to write them into, or None to have them yielded), used while the row dicts have not
    # been built
    make_text: Callable[[int | None, IO[bytes] | None], Iterator[bytes]] | None = field(
        default=None, repr=False
    )
    # each relation's raw output (a frame or runtime rows), kept for a Parquet or Delta
    # output only
    make_outputs: Callable[[], dict[str, Batch]] | None = field(default=None, repr=False)
    # the rows the batch's operators dropped as late, one JSON-ready record each, when the
    # run keeps them (`sjoin run --late-rows`, ``late.py``)
    late: list[dict[str, Any]] = field(default_factory=list)
    # the same lines as written, for a batch read back from a checkpoint (its records are
    # kept as the text the run wrote, so a restart writes them again byte for byte); None:
    # made from ``late``
    late_lines: bytes | None = None

    @classmethod
    def of(
        cls,
        batch: int,
        query: str,
        watermark: str | None,
        data: bool,
        rows: OutputRows,
        progress: dict[str, Any],
        state_sides: dict[str, list[int] | tuple[int, int]] | None = None,
        trace_batch: int | None = None,
    ) -> BatchOutput:
        """A batch whose rows are already built (e.g. read back from a checkpoint)."""
        counts: dict[str, int] = {}
        for relation, _ in rows:
            counts[relation] = counts.get(relation, 0) + 1
        sides = {name: (int(n[0]), int(n[1])) for name, n in (state_sides or {}).items()}
        if trace_batch is not None and type(trace_batch) is not int:
            raise TypeError("trace_batch must be an integer")
        return cls(
            batch, query, watermark, data, counts, progress, lambda: rows, sides, trace_batch
        )

    @cached_property
    def rows(self) -> OutputRows:
        return self.make_rows()

    @property
    def row_count(self) -> int:
        return sum(self.counts.values())

    def output_lines(self, trace_batches: bool = False) -> list[str]:
        """The §7 output lines; with ``trace_batches`` each also has ``"trace_batch"``."""
        if self._from_columns(trace_batches):
            text = b"".join(self.output_text(trace_batches)).decode("utf-8")
            return text.split("\n")[:-1]
        if trace_batches:
            return [
                output_line(self.batch, relation, row, trace_batch=self.trace_batch)
                for relation, row in self.rows
            ]
        return [output_line(self.batch, relation, row) for relation, row in self.rows]

    def _from_columns(self, trace_batches: bool) -> bool:
        """Whether the lines come from the columns: the rows are not built yet (else those
        are at hand) and a ``"trace_batch"`` asked for is known (else it is written null)."""
        return (
            self.make_text is not None
            and "rows" not in self.__dict__
            and not (trace_batches and self.trace_batch is None)
        )

    def output_text(self, trace_batches: bool = False) -> Iterator[bytes]:
        """The §7 output lines as UTF-8, each ending in LF, in chunks that a sink writes as
        they come: the columnar engine makes them from its columns, a chunk at a time, so a
        batch of millions of rows never exists as Python strings."""
        if self.make_text is not None and self._from_columns(trace_batches):
            yield from self.make_text(self.trace_batch if trace_batches else None, None)
            return
        lines = self.output_lines(trace_batches)
        if lines:
            yield "".join(line + "\n" for line in lines).encode("utf-8")

    def late_text(self) -> list[bytes]:
        """The ``--late-rows`` lines of the batch, UTF-8, each ending in LF."""
        if self.late_lines is not None:
            return [self.late_lines] if self.late_lines else []
        return [(dumps(record) + "\n").encode("utf-8") for record in self.late]

    def write_text(self, into: IO[bytes], trace_batches: bool = False) -> None:
        """``output_text``'s bytes written into a binary file, in order: the columnar engine
        has polars write them from its columns straight into the file."""
        if self.make_text is not None and self._from_columns(trace_batches):
            for _ in self.make_text(self.trace_batch if trace_batches else None, into):
                raise AssertionError("lines written into a file are not also yielded")
            return
        for chunk in self.output_text(trace_batches):
            into.write(chunk)

    def progress_line(self, trace_batches: bool = False) -> str:
        """The §7 progress line; with ``trace_batches`` it also has ``"trace_batch"``."""
        if not trace_batches:
            return progress_line(self.progress)
        batch, *rest = self.progress.items()
        return progress_line(dict([batch, ("trace_batch", self.trace_batch), *rest]))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BatchOutput):
            return NotImplemented
        mine = (
            self.batch,
            self.query,
            self.watermark,
            self.data,
            self.progress,
            self.rows,
            self.trace_batch,
        )
        return mine == (
            other.batch,
            other.query,
            other.watermark,
            other.data,
            other.progress,
            other.rows,
            other.trace_batch,
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass
class RunResult:
    batches: list[BatchOutput] = field(default_factory=list)
    bad_rows: list[BadRow] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)

    def rows(self, relation: str | None = None) -> list[dict[str, Any]]:
        """Every output row (of one relation), in output order."""
        return [r for b in self.batches for rel, r in b.rows if relation in (None, rel)]

    def output_lines(self) -> list[str]:
        return [line for b in self.batches for line in b.output_lines()]

    def progress_lines(self) -> list[str]:
        return [b.progress_line() for b in self.batches]


@dataclass(frozen=True)
class RunSummary:
    batches: int
    rows: int
    bad_rows: int
    late_rows: int = 0  # dropped by the watermark (the batches' numRowsDroppedByWatermark)
    stopped: bool = False  # ended by ``stop()`` (Ctrl-C) before the trace's end
    last_batch: int | None = None  # the last executed batch's id (None: none ran)
    trace_done: int = 0  # trace batches begun, a checkpoint's included
    trace_total: int = 0  # trace batches in the trace


_NO_TRACE_BATCH: Any = object()


def output_line(
    batch: int, relation: str, row: dict[str, Any], trace_batch: int | None = _NO_TRACE_BATCH
) -> str:
    """``{"batch": 0, "relation": "attributed", "row": {...}}``; given ``trace_batch``,
    ``{"batch": 2, "trace_batch": 1, "relation": ..., "row": ...}`` (`--trace-batches`)."""
    if trace_batch is _NO_TRACE_BATCH:
        return dumps({"batch": batch, "relation": relation, "row": row})
    return dumps({"batch": batch, "trace_batch": trace_batch, "relation": relation, "row": row})


def progress_line(progress: dict[str, Any]) -> str:
    """``{"batch": 2, "watermark": "...", "operators": [...]}``"""
    return dumps(progress)
