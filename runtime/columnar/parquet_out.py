"""Output rows as Parquet (``sjoin run --output-format parquet --output DIR``): one file per
relation per batch, ``DIR/<relation>/batch-NNNN.parquet``, the layout a Parquet trace has, so
one spec's output can be another's input.

Each column gets the Parquet type of its SQL type, holding exactly the value the JSON lines
show: TIMESTAMP a UTC microsecond timestamp, DATE a date, the integer types their width,
DOUBLE a double, FLOAT a double too (the runtime computes FLOAT in double precision, as its
JSON lines show it), DECIMAL(p, s) a decimal, a window a struct of ``start`` and ``end``,
an interval a microsecond duration.  A frame of the columnar engine is converted column by
column; rows of the reference operator become a frame first.  Types without a form here
are refused before the run starts (``unsupported_column``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl

from ..errors import UsageError
from .frames import to_frame

_UTC = pl.Datetime("us", "UTC")
_INTEGERS = {"tinyint": pl.Int8, "smallint": pl.Int16, "int": pl.Int32, "bigint": pl.Int64}
_FILE = "batch-{:04d}.parquet"


def _kind(sql_type: str) -> str:
    return sql_type.split("(")[0].strip().lower()


def _decimal_shape(sql_type: str) -> tuple[int, int]:
    inside = sql_type[sql_type.index("(") + 1 : sql_type.rindex(")")] if "(" in sql_type else ""
    numbers = [int(p) for p in inside.split(",")] if inside else [10, 0]
    return numbers[0], numbers[1] if len(numbers) > 1 else 0


def unsupported_column(columns: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The first (column, SQL type) that has no Parquet form here, or None."""
    for name, sql_type in columns:
        kind = _kind(sql_type)
        if kind not in _INTEGERS and kind not in {
            "timestamp",
            "date",
            "double",
            "float",
            "string",
            "binary",
            "boolean",
            "interval",
            "decimal",
            "window",
        }:
            return name, sql_type
    return None


def folder_name(relation: str) -> str:
    """A relation's folder: its name, percent-encoded where it could not be one path
    component (``/``, ``%``, control characters, a name of dots)."""
    encoded = quote(relation, safe=" !#$&'()+,;=@[]^`{}~-_")
    return encoded.replace(".", "%2E") if set(encoded) == {"."} else encoded


def output_frame(values: Any, columns: Sequence[tuple[str, str]]) -> pl.DataFrame:
    """A relation's output of one batch (a frame ``c0..`` or reference rows) as the frame
    written to Parquet, with the relation's column names and types."""
    kinds = [_kind(t) for _, t in columns]
    if isinstance(values, pl.DataFrame):
        frame = values
    elif all(k not in ("decimal", "window") for k in kinds):
        frame = to_frame(values, kinds)
    else:
        frame = _rows_frame(values, columns)
    out = []
    for i, ((name, sql_type), kind) in enumerate(zip(columns, kinds, strict=True)):
        out.append(_column(frame.get_column(f"c{i}"), kind, sql_type).alias(name))
    return pl.DataFrame(out)


def _rows_frame(
    rows: Sequence[tuple[Any, ...]], columns: Sequence[tuple[str, str]]
) -> pl.DataFrame:
    series = []
    for i, (_, sql_type) in enumerate(columns):
        kind = _kind(sql_type)
        cells = [row[i] for row in rows]
        if kind == "decimal":
            precision, scale = _decimal_shape(sql_type)
            series.append(pl.Series(f"c{i}", cells, dtype=pl.Decimal(precision, scale)))
        elif kind == "window":
            parts = pl.DataFrame(
                {
                    "start": pl.Series(
                        [None if c is None else c[0] for c in cells], dtype=pl.Int64
                    ),
                    "end": pl.Series([None if c is None else c[1] for c in cells], dtype=pl.Int64),
                    "null": pl.Series([c is None for c in cells], dtype=pl.Boolean),
                }
            )
            series.append(
                parts.select(
                    pl.when(~pl.col("null")).then(pl.struct("start", "end")).alias(f"c{i}")
                ).to_series()
            )
        else:
            series.append(to_frame([(c,) for c in cells], [kind]).get_column("c0").alias(f"c{i}"))
    return pl.DataFrame(series)


def _column(values: pl.Series, kind: str, sql_type: str) -> pl.Series:
    if kind in _INTEGERS:
        return values.cast(_INTEGERS[kind])
    if kind == "timestamp":
        return values.cast(pl.Int64).cast(_UTC)
    if kind == "date":
        return values.cast(pl.Int32).cast(pl.Date)
    if kind == "interval":
        return values.cast(pl.Int64).cast(pl.Duration("us"))
    if kind in ("double", "float"):
        return values.cast(pl.Float64)
    if kind == "window":
        window = pl.col(values.name)
        times = pl.struct(
            window.struct.field("start").cast(_UTC), window.struct.field("end").cast(_UTC)
        )
        return (
            pl.DataFrame([values])
            .select(pl.when(window.is_not_null()).then(times).alias(values.name))
            .to_series()
        )
    return values  # strings, booleans, decimals: already their Parquet form


class ParquetWriter:
    """Writes each batch's relations to ``directory``: a file per relation per batch, each
    written to a temporary name and renamed, so a file is whole or absent; writing a batch
    again (a restart redelivering it) replaces its files."""

    def __init__(self, directory: Path, columns: dict[str, list[tuple[str, str]]]) -> None:
        self.directory = directory
        self.columns = columns
        for relation, cols in columns.items():
            found = unsupported_column(cols)
            if found is not None:
                raise UsageError(
                    f"--output-format parquet: column `{found[0]}` of `{relation}` is "
                    f"{found[1]}, which has no Parquet form yet; use JSON lines"
                )
        if directory.exists() and not directory.is_dir():
            raise UsageError(f"{directory} is not a directory (--output-format parquet)")

    def clear(self) -> None:
        """A new run: remove the batch files an earlier run left for these relations (and
        nothing else), as a JSON-lines output file is truncated."""
        for relation in self.columns:
            folder = self.directory / folder_name(relation)
            if folder.is_dir():
                for path in folder.glob("batch-*.parquet"):
                    path.unlink()

    def write(self, batch: int, outputs: dict[str, Any]) -> int:
        """Write a batch's non-empty relations; returns the number of files written."""
        written = 0
        for relation, values in outputs.items():
            if not len(values):
                continue
            frame = output_frame(values, self.columns[relation])
            folder = self.directory / folder_name(relation)
            try:
                folder.mkdir(parents=True, exist_ok=True)
                target = folder / _FILE.format(batch)
                temporary = folder / f".{target.name}.tmp"
                frame.write_parquet(temporary, compression="snappy")  # as Spark writes
                os.replace(temporary, target)
            except OSError as err:
                raise UsageError(f"cannot write {folder}: {err.strerror or err}") from None
            written += 1
        return written
