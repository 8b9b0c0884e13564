"""Windows in the columnar join and aggregate: a ``window()`` value, the reference runtime's
``(start_us, end_us)`` tuple, is a polars struct ``{start: Int64, end: Int64}`` (``WINDOW``)
in a frame, and NULL where the reference holds None (an aggregate's key or argument that is an
input window column, and its window outputs, too: ``aggregate.py``).  A side projects its
windows after its filters as the reference's ``SideInput.filter_above`` does (a NULL time
makes no row; a sliding window makes one row per window containing the time, latest first);
state predicates and late filters read a window's end; and wherever values cross to the
reference evaluator or a snapshot, ``rows_of`` turns each struct back into the tuple (an
output batch's rows: ``Frame.windows``), so the values are the reference's.
``tests/runtime/columnar/test_columnar_windows.py`` and ``test_columnar_window_aggregate.py`` hold
both forms equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from ...compiler.vocabulary.types import SqlType
from .frames import Kind, dtype_of

WINDOW = pl.Struct({"start": pl.Int64, "end": pl.Int64})


def join_dtype(kind: Kind) -> Any:
    """The dtype of a column of ``kind`` in the columnar join (windows included; a DECIMAL
    named with its scale has a dtype: ``frames.dtype_of``)."""
    name = kind.name if isinstance(kind, SqlType) else kind
    return WINDOW if name == "window" else dtype_of(kind)


def window_end(column: pl.Expr) -> pl.Expr:
    """A window column's end (µs), NULL for a NULL window."""
    return pl.when(column.is_not_null()).then(column.struct.field("end"))


def window_tuples(column: pl.Series) -> list[tuple[int, int] | None]:
    """A window column as the reference's values: ``(start, end)`` tuples, None for NULL."""
    nulls = column.is_null().to_list()
    starts = column.struct.field("start").to_list()
    ends = column.struct.field("end").to_list()
    return [
        None if null else (start, end) for null, start, end in zip(nulls, starts, ends, strict=True)
    ]


def window_series(name: str, values: Iterable[Any]) -> pl.Series:
    """Reference window values (``(start, end)`` tuples or lists, None) as a ``WINDOW``
    column."""
    return pl.Series(
        name,
        [None if v is None else {"start": v[0], "end": v[1]} for v in values],
        dtype=WINDOW,
        strict=True,
    )


def rows_of(
    frame: pl.DataFrame, names: Sequence[str], windows: Iterable[int]
) -> list[tuple[Any, ...]]:
    """The rows of ``frame``'s columns ``names`` as the reference holds them; ``windows``:
    the positions (in ``names``) of window columns, each turned into tuples."""
    at = set(windows)
    if not at:
        return frame.select(names).rows()
    if frame.height == 0:
        return []
    columns: list[list[Any]] = [
        window_tuples(frame.get_column(n)) if i in at else frame.get_column(n).to_list()
        for i, n in enumerate(names)
    ]
    return list(zip(*columns, strict=True))


def project_windows(
    frame: pl.DataFrame, windows: Sequence[tuple[int, int, int | None, int]], width: int
) -> pl.DataFrame:
    """``frame`` (a side's columns ``c0..c{width-1}``) with each window of ``windows`` (time
    column, duration, slide or None, start; µs) added as column ``c{width + j}``, as
    ``SideInput.filter_above`` projects them: a row whose time is NULL is dropped, a
    tumbling window adds one column, a sliding one a row per window that contains the time
    (``eval.window_spans``: ``lastStart = t - (t - start) mod slide``, then every ``slide``
    back while the window still contains ``t``), latest first, the rows of the windows
    before it varying slowest."""
    for j, (time_index, duration, slide, start) in enumerate(windows):
        name = f"c{width + j}"
        t = pl.col(f"c{time_index}")
        frame = frame.filter(t.is_not_null())
        step = slide or duration
        last = t - (t - start) % step  # polars' % on integers is floored, as Python's
        if slide is None:
            frame = frame.with_columns(pl.struct(start=last, end=last + duration).alias(name))
            continue
        count = -(-duration // step)
        begin = last - pl.col("_w") * step
        frame = (
            frame.with_columns(pl.int_ranges(0, count, dtype=pl.Int64).alias("_w"))
            .explode("_w")
            .with_columns(begin.alias("_b"))
            .filter(pl.col("_b") + duration > t)
            .with_columns(pl.struct(start=pl.col("_b"), end=pl.col("_b") + duration).alias(name))
            .drop("_w", "_b")
        )
    return frame
