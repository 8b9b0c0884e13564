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

import fnmatch
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import polars as pl

from ...compiler.vocabulary.types import SqlType
from ..engine.batches import Batch, Frame
from ..errors import UsageError
from ..io.files import Folder, cannot_write, folder_name
from .frames import to_frame

_UTC = pl.Datetime("us", "UTC")
_INTEGERS = {"tinyint": pl.Int8, "smallint": pl.Int16, "int": pl.Int32, "bigint": pl.Int64}
_FILE = "batch-{:04d}.parquet"
_BATCH_FILE = re.compile(r"^batch-[0-9]+\.parquet$")


def _decimal_shape(sql_type: SqlType) -> tuple[int, int]:
    params = sql_type.params
    return (params[0] if params else 10), (params[1] if len(params) > 1 else 0)


def unsupported_column(columns: Sequence[tuple[str, SqlType]]) -> tuple[str, SqlType] | None:
    """The first (column, SQL type) that has no Parquet form here, or None."""
    for name, sql_type in columns:
        kind = sql_type.name
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


def output_frame(values: Batch, columns: Sequence[tuple[str, SqlType]]) -> pl.DataFrame:
    """A relation's output of one batch (a frame ``c0..`` or reference rows) as the frame
    written to Parquet, with the relation's column names and types."""
    kinds = [t.name for _, t in columns]
    frame: pl.DataFrame
    if isinstance(values, Frame):
        frame = values.frame
    elif all(k not in ("decimal", "window") for k in kinds):
        frame = to_frame(values.rows, kinds)
    else:
        frame = _rows_frame(values.rows, columns)
    out = []
    for i, ((name, sql_type), kind) in enumerate(zip(columns, kinds, strict=True)):
        column = frame.get_column(f"c{i}")
        if kind == "decimal" and isinstance(values, Frame):
            # a columnar DECIMAL column (Decimal(38, s)) made the DECIMAL(p, s) the reference
            # operator's rows make: from the same values, the same way
            column = pl.Series(
                f"c{i}", column.to_list(), dtype=pl.Decimal(*_decimal_shape(sql_type))
            )
        out.append(_column(column, kind).alias(name))
    return pl.DataFrame(out)


def _rows_frame(
    rows: Sequence[tuple[Any, ...]], columns: Sequence[tuple[str, SqlType]]
) -> pl.DataFrame:
    series = []
    for i, (_, sql_type) in enumerate(columns):
        kind = sql_type.name
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


def _column(values: pl.Series, kind: str) -> pl.Series:
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


def _parquet_bytes(frame: pl.DataFrame) -> Callable[[IO[bytes]], None]:
    """Writes ``frame`` as a Parquet file, snappy-compressed as Spark writes them."""
    return lambda handle: frame.write_parquet(handle, compression="snappy")


class ParquetWriter:
    """Writes each batch's relations to ``directory``: a file per relation per batch.  The
    directory is the user's (followed when a link); each relation's folder in it is sjoin's
    (``files.Folder``): nothing there is followed, each file is written under a new
    temporary name and renamed, so a file is whole or absent; writing a batch again (a
    restart redelivering it) replaces its files."""

    def __init__(self, directory: Path, columns: dict[str, list[tuple[str, SqlType]]]) -> None:
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
        self.root: Folder | None = None
        self.folders: dict[str, Folder] = {}

    def _root(self) -> Folder:
        if self.root is None:
            try:
                self.root = Folder.open(self.directory, "the Parquet output directory")
            except OSError as err:
                raise UsageError(f"cannot write {self.directory}: {err.strerror or err}") from None
        return self.root

    def _folder(self, relation: str, create: bool) -> Folder | None:
        """The relation's folder, opened without following a link (made with ``create``).
        Two relations whose folders are one (a file system that ignores case, say) are
        refused: their batch files would overwrite each other."""
        folder = self.folders.get(relation)
        if folder is not None:
            return folder
        root = self._root()
        try:
            folder = root.child(folder_name(relation), create=create)
        except OSError as err:
            raise UsageError(
                f"cannot write {root.path / folder_name(relation)}: {err.strerror or err}"
            ) from None
        if folder is None:
            return None
        mine = os.fstat(folder.fd)
        for other, known in self.folders.items():
            if os.path.samestat(mine, os.fstat(known.fd)):
                folder.close()
                raise UsageError(
                    f"relations `{other}` and `{relation}` would share the folder "
                    f"{known.path} (this file system does not tell their names apart), so "
                    "their batch files would overwrite each other; rename one, or write "
                    "JSON lines"
                )
        self.folders[relation] = folder
        return folder

    def clear(self) -> None:
        """A new run: remove the batch files an earlier run left for these relations (and
        nothing else), as a JSON-lines output file is truncated.  A link there is refused,
        never deleted through."""
        for relation in self.columns:
            folder = self._folder(relation, create=False)
            if folder is None:
                continue
            try:
                for name in folder.names():
                    if fnmatch.fnmatchcase(name, "batch-*.parquet"):
                        folder.remove(name)
            except OSError as err:
                raise UsageError(f"cannot clear {folder.path}: {err.strerror or err}") from None
        self.remove_temporaries()

    def remove_temporaries(self) -> None:
        """Remove the temporary files a killed run left in the relations' folders."""
        for relation in self.columns:
            folder = self._folder(relation, create=False)
            if folder is not None:
                try:
                    folder.remove_temporaries(lambda stem: _BATCH_FILE.match(stem) is not None)
                except OSError as err:
                    raise UsageError(f"cannot clear {folder.path}: {err.strerror or err}") from None

    def write(self, batch: int, outputs: Mapping[str, Batch]) -> int:
        """Write a batch's non-empty relations; returns the number of files written."""
        written = 0
        for relation, values in outputs.items():
            if not len(values):
                continue
            frame = output_frame(values, self.columns[relation])
            folder = self._folder(relation, create=True)
            assert folder is not None
            name = _FILE.format(batch)
            try:
                folder.write(name, _parquet_bytes(frame), sync=False)
            except OSError as err:  # a full disk: the checkpoint still holds the batch pending
                raise cannot_write(folder.path / name, err) from None
            written += 1
        return written

    def close(self) -> None:
        for folder in self.folders.values():
            folder.close()
        self.folders = {}
        if self.root is not None:
            self.root.close()
            self.root = None
