"""The columnar engine's trace readers: JSON lines in bulk, and Parquet traces.

**JSON lines.** ``read_trace_columns`` reads the whole file at once and matches every line
against the *canonical* form of a trace record, the one ``json.dumps`` writes and
``benchmarks/workload.py`` and ``sjoin init`` produce::

    {"batch": 0, "stream": "l", "row": {"k": 1, "t": "2026-01-01T00:00:00.250Z", "v": "x"}}

(fields in that order, the row's columns in declared order, integers, ``true``/``false``,
strings without escapes, ISO timestamps ``...SS[.mmm]Z``, dates ``YYYY-MM-DD``, ``null``), with
one regular expression per stream run by polars over all lines, and converts the captured
texts to columns.  On that form the meaning of a line is not in doubt, so its values are
exactly those the reference reader (``runtime/trace.py``) gives.  If any line is not in that
form (another layout, escapes, a type the fast form does not cover, or a bad row of any kind)
or a checkpoint needs batch digests, the whole trace is read by the reference reader instead:
every bad row is then reported with its line and column exactly as the reference reports it.

**Parquet.** ``read_parquet_trace`` reads a directory with one folder per stream and one file
per batch (``<stream>/batch-NNNN.parquet``, as ``benchmarks/workload.py`` writes for Spark's
file source): batch NNNN is the files of that number, in ascending order.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from ..errors import RunError, UsageError
from ..trace import BadRowPolicy, StreamSchema, Trace, TraceBatch, read_trace
from ..values import MAX_TIMESTAMP_US, MIN_TIMESTAMP_US
from .frames import dtype_of

_BOM = b"\xef\xbb\xbf"
_MIN_DAY, _MAX_DAY = -719_162, 2_932_896  # 0001-01-01 and 9999-12-31
_INT_BOUNDS = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": 2**63}
_INT_TEXT = r"-?(?:0|[1-9][0-9]{0,18})"
_STRING_TEXT = r'"[^"\\\x00-\x1f]*"'
_PIECES = {
    "boolean": "true|false",
    "string": _STRING_TEXT,
    "timestamp": r'"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{3})?Z"',
    "date": r'"[0-9]{4}-[0-9]{2}-[0-9]{2}"',
    **{kind: _INT_TEXT for kind in _INT_BOUNDS},
}
_ENVELOPE = r'^\{"batch": (' + _INT_TEXT + r'), "stream": "([^"\\\x00-\x1f]*)", "row": (\{.*\})\}$'


class _NotCanonical(Exception):
    """The trace is not entirely in the canonical form: read it with the reference reader."""


def read_trace_columns(
    source: str | os.PathLike[str] | Iterable[Any],
    schemas: Mapping[str, StreamSchema],
    bad_rows: BadRowPolicy = "stop",
    *,
    digests: bool = False,
) -> Trace:
    """``trace.read_trace`` with the batches' rows as frames (columns ``c0..``) when the
    trace is a file in the canonical form; otherwise exactly ``read_trace`` (rows as tuples,
    which the columnar engine turns into frames)."""
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        return read_parquet_trace(Path(source), schemas)
    if isinstance(source, (str, os.PathLike)) and not digests:
        try:
            data = Path(source).read_bytes()
        except OSError as err:
            raise UsageError(f"cannot read trace {source}: {err.strerror or err}") from None
        try:
            return _canonical(str(source), data, schemas)
        except _NotCanonical:
            pass
    return read_trace(source, schemas, bad_rows, digests=digests)


def _row_pattern(schema: StreamSchema) -> str:
    parts = []
    for name, kind in zip(schema.columns, schema.types, strict=True):
        piece = _PIECES.get(kind.name)
        if piece is None:
            raise _NotCanonical
        parts.append(re.escape(json.dumps(name, ensure_ascii=False)) + f": (null|{piece})")
    return r"^\{" + ", ".join(parts) + r"\}$"


def _canonical(name: str, data: bytes, schemas: Mapping[str, StreamSchema]) -> Trace:
    if data.startswith(_BOM):
        data = data[3:]
    if not data:
        return Trace(name, [], [])
    if not data.endswith(b"\n"):
        data += b"\n"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotCanonical from None
    lines = pl.Series("line", text.split("\n")[:-1], dtype=pl.String)
    envelope = lines.str.extract_groups(_ENVELOPE)
    parts = pl.DataFrame(
        {
            "batch": envelope.struct.field("1").cast(pl.Int64, strict=False),
            "stream": envelope.struct.field("2"),
            "row": envelope.struct.field("3"),
            "line": pl.int_range(1, lines.len() + 1, dtype=pl.Int64, eager=True),
        }
    )
    if parts.get_column("row").null_count() or parts.get_column("batch").null_count():
        raise _NotCanonical  # some line is not a canonical record (or a bad row)
    batches = parts.get_column("batch")
    if batches.len() > 1 and (batches.diff().drop_nulls() < 0).any():
        raise _NotCanonical  # out of order: the reference reader says where
    streams = set(parts.get_column("stream").unique().to_list())
    if not streams <= set(schemas):
        raise _NotCanonical
    columns: dict[str, pl.DataFrame] = {}
    for stream in streams:
        schema = schemas[stream]
        rows = parts.filter(pl.col("stream") == stream)
        captured = rows.get_column("row").str.extract_groups(_row_pattern(schema))
        if captured.struct.field("1").null_count() if schema.columns else False:
            raise _NotCanonical
        converted = [rows.get_column("batch"), rows.get_column("line")]
        for i, kind in enumerate(schema.types):
            converted.append(_convert(captured.struct.field(str(i + 1)), kind.name, f"c{i}"))
        columns[stream] = pl.DataFrame(converted)
    return Trace(name, _batches(parts, columns), [])


def _convert(texts: pl.Series, kind: str, name: str) -> pl.Series:
    """The captured JSON texts of a column -> its runtime values (``_NotCanonical`` where a
    text is not a value the reference reader would accept as the same value)."""
    t = pl.col("t")
    unquoted = t.str.strip_prefix('"').str.strip_suffix('"')
    value: pl.Expr
    low, high = None, None
    if kind in _INT_BOUNDS:
        value = t.cast(pl.Int64, strict=False)  # an integer beyond 64 bits -> null
        low, high = -_INT_BOUNDS[kind], _INT_BOUNDS[kind] - 1
    elif kind == "boolean":
        value = t == "true"
    elif kind == "string":
        value = unquoted
    elif kind == "timestamp":
        value = unquoted.str.to_datetime(
            "%Y-%m-%dT%H:%M:%S%.fZ", time_unit="us", strict=False
        ).cast(pl.Int64)
        low, high = MIN_TIMESTAMP_US, MAX_TIMESTAMP_US
    elif kind == "date":
        value = unquoted.str.to_date("%Y-%m-%d", strict=False).cast(pl.Int64)
        low, high = _MIN_DAY, _MAX_DAY
    else:  # pragma: no cover - _row_pattern refused the kind
        raise _NotCanonical
    frame = pl.DataFrame({"t": texts}).select(
        pl.when(t == "null").then(None).otherwise(value).alias("v"), (t == "null").alias("n")
    )
    values = frame.get_column("v")
    if (values.is_null() & ~frame.get_column("n")).any():
        raise _NotCanonical  # an unparsable date or timestamp, an integer too large
    if low is not None and ((values < low) | (values > high)).any():
        raise _NotCanonical  # out of the type's range: the reference reader says so
    return values.cast(dtype_of(kind)).alias(name)


def _batches(parts: pl.DataFrame, columns: Mapping[str, pl.DataFrame]) -> list[TraceBatch]:
    """One ``TraceBatch`` per batch value, with a frame per stream."""
    firsts = parts.group_by("batch", maintain_order=True).agg(pl.col("line").min())
    batches: dict[int, TraceBatch] = {b: TraceBatch(b, {}, line) for b, line in firsts.iter_rows()}
    for stream, frame in columns.items():
        for (value,), rows in frame.group_by("batch", maintain_order=True):
            frames: dict[str, Any] = batches[int(value)].rows  # frames, not lists of tuples
            frames[stream] = rows.drop("batch", "line")
    return list(batches.values())


# ------------------------------------------------------------------------------ Parquet

_PARQUET_FILE = re.compile(r"^batch-([0-9]+)\.parquet$")


def read_parquet_trace(directory: Path, schemas: Mapping[str, StreamSchema]) -> Trace:
    """A Parquet trace: ``<stream>/batch-NNNN.parquet`` under ``directory``.  A file's
    columns must be its stream's (by name; extra columns are an error), of a matching type;
    a value a trace may not hold (an integer out of range, a timestamp outside years
    0001..9999) is an error naming the file."""
    files: dict[int, dict[str, Path]] = {}
    for entry in sorted(directory.iterdir()):
        if not entry.is_dir():
            continue
        if entry.name not in schemas:
            raise UsageError(
                f"{entry}: `{entry.name}` is not a stream of the spec "
                f"(streams: {', '.join(sorted(schemas)) or 'none'})"
            )
        for path in sorted(entry.iterdir()):
            m = _PARQUET_FILE.match(path.name)
            if m is None:
                raise UsageError(f"{path}: expected files named batch-NNNN.parquet")
            files.setdefault(int(m[1]), {})[entry.name] = path
    if not files:
        raise UsageError(f"{directory}: no <stream>/batch-NNNN.parquet files")
    batches = []
    for number in sorted(files):
        rows: dict[str, Any] = {
            s: _parquet_frame(p, schemas[s]) for s, p in sorted(files[number].items())
        }
        batches.append(TraceBatch(number, rows, 0))
    return Trace(str(directory), batches, [])


def _parquet_frame(path: Path, schema: StreamSchema) -> pl.DataFrame:
    try:
        frame = pl.read_parquet(path)
    except Exception as err:  # polars raises several kinds for a damaged file
        raise RunError(f"{path}: cannot read Parquet: {err}") from None
    extra = [c for c in frame.columns if c not in schema.index]
    missing = [c for c in schema.columns if c not in frame.columns]
    if extra or missing:
        raise RunError(
            f"{path}: the columns of stream `{schema.name}` are {', '.join(schema.columns)}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unknown {', '.join(extra)}" if extra else "")
        )
    out = []
    for i, (column, kind) in enumerate(zip(schema.columns, schema.types, strict=True)):
        out.append(
            _parquet_column(path, frame.get_column(column), kind.name, column).alias(f"c{i}")
        )
    return pl.DataFrame(out)


def _parquet_column(path: Path, values: pl.Series, kind: str, column: str) -> pl.Series:
    dtype = values.dtype
    wrong = RunError(f"{path}: column `{column}` is {dtype}, which cannot hold {kind.upper()}")
    if kind in _INT_BOUNDS:
        if not dtype.is_integer():
            raise wrong
        bound = _INT_BOUNDS[kind]
        low, high = values.min(), values.max()  # Python ints: no overflow in the comparison
        if low is not None and not (-bound <= low and high < bound):  # type: ignore[operator]
            raise RunError(f"{path}: column `{column}` has a value out of range for {kind.upper()}")
        return values.cast(pl.Int64)
    if kind == "timestamp":
        if not isinstance(dtype, pl.Datetime):
            raise wrong
        if dtype.time_zone not in (None, "UTC"):
            values = values.dt.convert_time_zone("UTC")
        us = values.dt.cast_time_unit("us").dt.replace_time_zone(None).cast(pl.Int64)
        if ((us < MIN_TIMESTAMP_US) | (us > MAX_TIMESTAMP_US)).any():
            raise RunError(f"{path}: column `{column}` has a timestamp outside years 0001..9999")
        return us
    if kind == "date":
        if dtype != pl.Date:
            raise wrong
        return values.cast(pl.Int64)
    if kind in ("string", "binary"):
        if dtype != pl.String:
            raise wrong
        return values
    if kind == "boolean":
        if dtype != pl.Boolean:
            raise wrong
        return values
    if kind in ("double", "float"):
        if not dtype.is_float():
            raise wrong
        return values.cast(pl.Float64)
    raise RunError(
        f"{path}: column `{column}` is {kind.upper()}, which a Parquet trace cannot hold yet"
    )
