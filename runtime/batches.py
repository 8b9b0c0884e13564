"""A relation's rows in one micro-batch, as the operators pass them on: runtime rows (a list
of tuples, the reference engine's form) or, on the columnar engine, a polars frame (columns
``c0..``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Row = tuple[Any, ...]


def rows_of(value: Any) -> Sequence[Row]:
    """A relation's batch as the reference operators take it (rows)."""
    return value if isinstance(value, list) else value.rows()
