"""A relation's rows in one micro-batch, as the operators pass them on and the sinks get
them: ``Rows``, runtime rows (a list of tuples; the reference engine's form, and the columnar
engine's where a frame cannot hold a column), or ``Frame``, a polars frame of columns
``c0..`` (only the columnar engine makes one).  Each engine's operators take the form they
run on (``Batch.to_rows``, ``columnar/frames.as_frame``); a consumer that cares which form it
has matches on the type, never on a list.  The trace readers hand a trace batch's rows per
stream as one too: the JSON-lines and Kafka readers ``Rows``, the columnar bulk, Parquet and
Delta readers a ``Frame``.  Nothing here imports polars."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Rows:
    """A batch as runtime rows."""

    rows: list[Row]

    def __len__(self) -> int:
        return len(self.rows)

    def to_rows(self) -> list[Row]:
        return self.rows


@dataclass(frozen=True, slots=True)
class Frame:
    """A batch as a polars ``DataFrame`` of columns ``c0..`` (the relation's layout).
    ``windows``: the positions of its window columns, structs ``{start, end}`` in the frame
    (``columnar/windows.py``), ``(start, end)`` tuples in its rows."""

    frame: Any  # polars.DataFrame: typed loosely so that this module never imports polars
    windows: tuple[int, ...] = ()

    def __len__(self) -> int:
        return int(self.frame.height)

    def to_rows(self) -> list[Row]:
        rows: list[Row] = self.frame.rows()
        if not self.windows or not rows:
            return rows
        at = self.windows
        return [
            tuple(
                (v["start"], v["end"]) if i in at and v is not None else v
                for i, v in enumerate(row)
            )
            for row in rows
        ]


Batch: TypeAlias = Rows | Frame
