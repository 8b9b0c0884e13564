"""The columnar engine's trace readers: JSON lines in bulk, and Parquet traces.

**JSON lines.** ``read_trace_columns`` reads the whole file at once and matches every line
against the *canonical* form of a trace record, the one ``json.dumps`` writes and
``benchmarks/workload.py`` and ``sjoin init`` produce::

    {"batch": 0, "stream": "l", "row": {"k": 1, "t": "2026-01-01T00:00:00.250Z", "v": "x"}}

(fields in that order, the row's columns in declared order, integers, ``true``/``false``,
strings without escapes, ISO timestamps ``...SS[.mmm]Z`` with hours 00-23 and minutes and
seconds 00-59, dates ``YYYY-MM-DD``, ``null``), with
one regular expression per stream run by polars over all lines, and converts the captured
texts to columns.  On that form the meaning of a line is not in doubt, so its values are
exactly those the reference reader (``runtime/io/trace.py``) gives.  If any line is not in that
form (another layout, escapes, a type the fast form does not cover, or a bad row of any kind)
or a checkpoint needs batch digests, the whole trace is read by the reference reader instead:
every bad row is then reported with its line and column exactly as the reference reports it.

**Parquet.** ``read_parquet_trace`` reads a directory with one folder per stream and one file
per batch (``<stream>/batch-NNNN.parquet``, as ``benchmarks/workload.py`` writes for Spark's
file source): batch NNNN is the files of that number, in ascending order.  Each value is held
to the JSON reader's rules (``trace.typed_value_problem``), with its words; a stream's batch
is a frame, its DECIMAL(p, s) columns ``Decimal(38, s)`` columns (checked and scaled as
columns; only a file column of more than s fraction digits is rounded value by value).

Both readers keep one contract (docs/testing.md, "What a trace may hold"), which
``tests/runtime/io/test_reader_contract.py`` checks value by value.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

import polars as pl

from ...compiler.vocabulary.types import SqlType
from ..engine.batches import Batch, Frame
from ..engine.values import MAX_TIMESTAMP_US, MIN_TIMESTAMP_US
from ..errors import RunError, UsageError
from ..io.files import folder_name
from ..io.trace import (
    MAX_DAY,
    MIN_DAY,
    BadRowPolicy,
    Span,
    StreamedBatches,
    StreamSchema,
    Trace,
    TraceBatch,
    converter,
    read_trace,
    span_bytes,
    typed_value_problem,
)
from .frames import dtype_of
from .support import canonical_line_pattern

_BOM = b"\xef\xbb\xbf"
_T = TypeVar("_T")
_INT_BOUNDS = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": 2**63}


class _NotCanonical(Exception):
    """The trace is not entirely in the canonical form: read it with the reference reader."""


def read_trace_columns(
    source: str | os.PathLike[str] | Iterable[Any],
    schemas: Mapping[str, StreamSchema],
    bad_rows: BadRowPolicy = "stop",
    *,
    digests: bool = False,
    lines: bool = False,
    stream: bool = False,
) -> Trace:
    """``trace.read_trace`` with the batches' rows as frames (columns ``c0..``) when the
    trace is a file in the canonical form (each batch's line numbers kept as a column per
    stream, ``TraceBatch.lines``); otherwise exactly ``read_trace`` (rows as tuples, which
    the columnar engine turns into frames).  ``stream``: a check pass that keeps no rows,
    then ``StreamedBatches`` read as the run reaches them (``read_trace(stream=True)``)."""
    if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
        return read_parquet_trace(Path(source), schemas, digests=digests, stream=stream)
    if stream and isinstance(source, (str, os.PathLike)) and not digests:
        streams = {name: schema for name, schema in schemas.items() if not schema.table}
        try:
            return _canonical_streamed(Path(source), streams)
        except _NotCanonical:
            pass
    elif isinstance(source, (str, os.PathLike)) and not digests:
        try:
            data = Path(source).read_bytes()
        except OSError as err:
            raise UsageError(f"cannot read trace {source}: {err.strerror or err}") from None
        try:
            # a table's lines are never canonical: a trace with any is read below
            streams = {name: schema for name, schema in schemas.items() if not schema.table}
            return _canonical(str(source), data, streams)
        except _NotCanonical:
            pass
    return read_trace(source, schemas, bad_rows, digests=digests, lines=lines, stream=stream)


# the bytes of lines the streamed check pass reads at a time
CHUNK_BYTES = 16 << 20


def _canonical_streamed(path: Path, schemas: Mapping[str, StreamSchema]) -> Trace:
    """A canonical trace file read in chunks of whole lines (``CHUNK_BYTES``), each checked
    as ``_canonical`` checks a whole file and dropped, keeping each batch's bytes (a
    ``Span``); then ``StreamedBatches`` that read each batch's bytes again in bulk.
    ``_NotCanonical`` as ``_canonical`` raises it (batches out of order across chunks too)."""
    spans: list[Span] = []
    try:
        with path.open("rb") as handle:
            offset, line, rest = 0, 1, b""
            while True:
                block = handle.read(CHUNK_BYTES)
                data = rest + block
                if block:
                    cut = data.rfind(b"\n") + 1
                    data, rest = data[:cut], data[cut:]
                    if not data:
                        continue
                else:
                    rest = b""
                if offset == 0 and line == 1 and data.startswith(_BOM):
                    data, offset = data[3:], 3
                if data:
                    _chunk_spans(str(path), data, schemas, offset, line, spans)
                    offset += len(data)
                    line += data.count(b"\n") + (not data.endswith(b"\n"))
                if not block:
                    break
    except OSError as err:
        raise UsageError(f"cannot read trace {path}: {err.strerror or err}") from None

    def load(span: Span) -> TraceBatch:
        data = span_bytes(path, span)
        try:
            read = _canonical(str(path), data, schemas, first_line=span.first_line, bom=False)
        except _NotCanonical:  # pragma: no cover - the check pass read these very bytes
            raise RunError(f"{path}: the trace changed while it was read") from None
        if len(read.batches) != 1:  # pragma: no cover - likewise
            raise RunError(f"{path}: the trace changed while it was read")
        return read.batches[0]

    return Trace(str(path), StreamedBatches(spans, load), [])


def _chunk_spans(
    name: str,
    data: bytes,
    schemas: Mapping[str, StreamSchema],
    offset: int,
    line: int,
    spans: list[Span],
) -> None:
    """Check one chunk of whole lines (from byte ``offset``, line ``line``) and add its
    batches' spans (a batch the chunk before began goes on)."""
    read = _canonical(name, data, schemas, first_line=line, bom=False)
    if not read.batches:
        return
    ends = data.split(b"\n")
    starts = [0]
    for text in ends[:-1]:
        starts.append(starts[-1] + len(text) + 1)
    if not data.endswith(b"\n"):  # the last line, unended: it ends with the data
        starts.append(len(data))
    for i, batch in enumerate(read.batches):
        begin = offset + starts[batch.first_line - line]
        following = read.batches[i + 1].first_line - line if i + 1 < len(read.batches) else None
        end = offset + (starts[following] if following is not None else len(data))
        if spans and spans[-1].value == batch.value and spans[-1].end == begin:
            spans[-1] = Span(batch.value, spans[-1].first_line, spans[-1].start, end)
        elif spans and batch.value < spans[-1].value:
            raise _NotCanonical  # out of order: the reference reader says where
        else:
            spans.append(Span(batch.value, batch.first_line, begin, end))


def _line_pattern(stream: str, schema: StreamSchema) -> str:
    """The regular expression of a canonical line of ``stream`` (``support.py``)."""
    pattern = canonical_line_pattern(stream, schema.columns, schema.types)
    if pattern is None:
        raise _NotCanonical
    return pattern


def _between(line: pl.Expr, before: str, after: str | None, ascii_only: bool) -> pl.Expr:
    """The text of a canonical line (or row part) between the first ``before`` and the first
    ``after`` that follows it (the final ``}}`` when None).  In a canonical record each
    separator, such as ``, "t": ``, occurs once: it holds a quote, and no value holds one
    except as its own delimiters (strings are unescaped and quote-free), so the first find is
    the one.  polars finds byte offsets and slices characters: on ASCII text both agree and
    two finds and a slice do it; otherwise a lazy regular expression does."""
    if not ascii_only:
        tail = r"\}\}$" if after is None else re.escape(after)
        return line.str.extract(re.escape(before) + "(.*?)" + tail, 1)
    start = line.str.find(before, literal=True) + len(before)
    end = line.str.len_bytes() - 2 if after is None else line.str.find(after, literal=True)
    return line.str.slice(start, end - start)


def _split_lines(data: bytes) -> pl.Series:
    """The lines of a trace, by polars' CSV reader (one column: no separator or quote is in
    play), or ``_NotCanonical`` where it could split otherwise than the reference reader
    (which splits at LF only)."""
    if any(b in data for b in (b"\r", b"\x1f", b"\n\n")) or data.startswith(b"\n"):
        raise _NotCanonical
    try:
        frame = pl.read_csv(
            io.BytesIO(data),
            has_header=False,
            separator="\x1f",
            quote_char=None,
            schema={"line": pl.String},
        )
    except Exception:  # invalid UTF-8 and the like: the reference reader says where
        raise _NotCanonical from None
    if frame.height != data.count(b"\n"):
        raise _NotCanonical
    return frame.get_column("line")


def _canonical(
    name: str,
    data: bytes,
    schemas: Mapping[str, StreamSchema],
    *,
    first_line: int = 1,
    bom: bool = True,
) -> Trace:
    if bom and data.startswith(_BOM):
        data = data[3:]
    if not data:
        return Trace(name, [], [])
    if not data.endswith(b"\n"):
        data += b"\n"
    lines = pl.DataFrame([_split_lines(data)])
    line = pl.col("line")
    patterns = {stream: _line_pattern(stream, schema) for stream, schema in schemas.items()}
    if not patterns:
        raise _NotCanonical
    matched = lines.select(
        pl.any_horizontal([line.str.contains(p) for p in patterns.values()])
    ).to_series()
    if not matched.all():
        raise _NotCanonical  # some line is not a canonical record (or a bad row)
    ascii_only = data.isascii()
    row_start = ', "row": {'
    # a column's separator, `, "name": `, is found in the whole line unless the record's own
    # fields have it (a column named `stream` or `row`): then in the row part alone, "{...}}"
    in_row_part = any({"stream", "row"} & set(s.columns) for s in schemas.values())
    first = "{" if in_row_part else row_start
    parts = lines.select(
        _between(line, '{"batch": ', ', "stream": ', ascii_only)
        .cast(pl.Int64, strict=False)
        .alias("batch"),
        _between(line, ', "stream": ', row_start, ascii_only).alias("stream"),
        pl.int_range(first_line, pl.len() + first_line, dtype=pl.Int64).alias("line"),
        (
            pl.concat_str(pl.lit("{"), _between(line, row_start, None, ascii_only), pl.lit("}}"))
            if in_row_part
            else line
        ).alias("row"),
    )
    batches = parts.get_column("batch")
    if batches.null_count():
        raise _NotCanonical  # a batch number beyond 64 bits
    if batches.len() > 1 and (batches.diff().drop_nulls() < 0).any():
        raise _NotCanonical  # out of order: the reference reader says where
    columns: dict[str, pl.DataFrame] = {}
    row = pl.col("row")
    for stream in parts.get_column("stream").unique(maintain_order=True).to_list():
        schema = schemas[json.loads(stream)]
        rows = parts.filter(pl.col("stream") == stream)
        separators = [
            (first if i == 0 else ", ") + json.dumps(c, ensure_ascii=False) + ": "
            for i, c in enumerate(schema.columns)
        ]
        texts = rows.select(
            _between(
                row, sep, None if i + 1 == len(separators) else separators[i + 1], ascii_only
            ).alias(str(i))
            for i, sep in enumerate(separators)
        )
        converted = [rows.get_column("batch"), rows.get_column("line")]
        for i, kind in enumerate(schema.types):
            converted.append(_convert(texts.get_column(str(i)), kind.name, f"c{i}"))
        columns[json.loads(stream)] = pl.DataFrame(converted)
    return Trace(name, _batches(parts, columns), [])


def _convert(texts: pl.Series, kind: str, name: str) -> pl.Series:
    """The captured JSON texts of a column -> its runtime values (``_NotCanonical`` where a
    text is not a value the reference reader would accept as the same value).  Times are
    parsed once per distinct text when texts repeat (many rows per millisecond): parsing one
    costs several times the lookup that spreads the values back."""
    if kind in ("timestamp", "date"):
        distinct = texts.unique()
        if 2 * len(distinct) <= len(texts):
            values = _convert(distinct, kind, name)
            return texts.replace_strict(distinct, values, return_dtype=values.dtype).alias(name)
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
        low, high = MIN_DAY, MAX_DAY
    else:  # pragma: no cover - _line_pattern refused the kind
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
            batches[int(value)].rows[stream] = Frame(rows.drop("batch", "line"))
            batches[int(value)].lines[stream] = rows.get_column("line")
    return list(batches.values())


# ------------------------------------------------------------------------------ Parquet

_PARQUET_FILE = re.compile(r"^batch-([0-9]+)\.parquet$")


def read_parquet_trace(
    directory: Path,
    schemas: Mapping[str, StreamSchema],
    *,
    digests: bool = False,
    stream: bool = False,
) -> Trace:
    """A Parquet trace: ``<stream>/batch-NNNN.parquet`` under ``directory``, each stream's
    folder named as ``--output-format parquet`` names a relation's (``files.folder_name``:
    the name itself, with ``%``, ``/`` and control characters percent-encoded), so that a
    run's Parquet output reads back as a trace.  A file's columns must be its stream's (by
    name; extra columns are an error), of a matching type; a value a trace may not hold (the
    JSON reader's range rules: an integer out of range, a FLOAT beyond 32 bits, a timestamp
    or date outside years 0001..9999, BINARY that is not canonical base64) is an error naming
    the file, the row and the column, with the JSON reader's reason.  Every file is checked
    before the first batch runs.  ``digests``: give each batch the SHA-256 of its files
    (stream names and bytes), which a checkpoint compares on restart, as it does a
    JSON-lines trace's lines.  ``stream``: every file is checked in a pass that drops each
    file's rows once checked, and ``StreamedBatches`` read each batch's files again as the
    run reaches it."""
    folders = {folder_name(stream): stream for stream in schemas}
    files: dict[int, dict[str, Path]] = {}
    for entry in sorted(directory.iterdir()):
        if not entry.is_dir():
            continue
        found = folders.get(entry.name)
        if found is None:
            named = unquote(entry.name, errors="replace")
            hint = (
                f"; the folder of stream `{named}` is {folder_name(named)}"
                if named != entry.name and named in schemas
                else ""
            )
            raise UsageError(
                f"{entry}: `{entry.name}` is not a stream of the spec "
                f"(streams: {', '.join(sorted(schemas)) or 'none'}){hint}"
            )
        for path in sorted(entry.iterdir()):
            m = _PARQUET_FILE.match(path.name)
            if m is None:
                raise UsageError(f"{path}: expected files named batch-NNNN.parquet")
            files.setdefault(int(m[1]), {})[found] = path
    if not files:
        raise UsageError(f"{directory}: no <stream>/batch-NNNN.parquet files")
    if stream:
        spans = []
        for number in sorted(files):
            for s, p in sorted(files[number].items()):
                _parquet_check(p, schemas[s])
            digest = _files_digest(files[number]) if digests else None
            tables = frozenset(t for t in files[number] if schemas[t].table)
            spans.append(Span(number, 0, digest=digest, key=files[number], tables=tables))

        def load(span: Span) -> TraceBatch:
            rows = {s: _parquet_frame(p, schemas[s]) for s, p in sorted(span.key.items())}
            return TraceBatch(span.value, rows, 0, span.digest)

        return Trace(str(directory), StreamedBatches(spans, load), [])
    batches = []
    for number in sorted(files):
        rows = {s: _parquet_frame(p, schemas[s]) for s, p in sorted(files[number].items())}
        batch = TraceBatch(number, rows, 0)
        if digests:
            batch.digest = _files_digest(files[number])
        batches.append(batch)
    return Trace(str(directory), batches, [])


def _files_digest(files: Mapping[str, Path]) -> bytes:
    """The SHA-256 of one batch's files: per stream in name order, its name and its bytes,
    each preceded by its length."""
    digest = hashlib.sha256()
    for stream, path in sorted(files.items()):
        try:
            data = path.read_bytes()
        except OSError as err:
            raise UsageError(f"cannot read {path}: {err.strerror or err}") from None
        name = stream.encode("utf-8", "surrogatepass")
        digest.update(b"%d:" % len(name) + name + b"%d:" % len(data))
        digest.update(data)
    return digest.digest()


def _parquet_read(path: Path, read: Callable[[], _T]) -> _T:
    """``read()`` of the file at ``path``, any failure an error naming it."""
    try:
        return read()
    except (Exception, pl.exceptions.PanicException) as err:  # a damaged file: any kind
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise RunError(f"{path}: cannot read Parquet: {reason}") from None


def _parquet_columns(path: Path, schema: StreamSchema, found: Iterable[str]) -> None:
    """The file's columns must be the stream's, by name."""
    found = list(found)
    extra = [c for c in found if c not in schema.index]
    missing = [c for c in schema.columns if c not in found]
    if extra or missing:
        raise RunError(
            f"{path}: the columns of stream `{schema.name}` are {', '.join(schema.columns)}"
            + (f"; missing {', '.join(missing)}" if missing else "")
            + (f"; unknown {', '.join(extra)}" if extra else "")
        )


def _parquet_check(path: Path, schema: StreamSchema) -> None:
    """The check pass of a streamed Parquet trace, which keeps no rows: the file's footer
    gives its columns and their types, checked as ``_parquet_frame`` checks them; only the
    columns whose values a type may refuse (``_needs_values``: a timestamp's years, an
    integer narrower than its file type, ...) are read, and dropped once checked.  A damaged
    page of a column that is not read is found when the run reads the batch, as an error
    naming the file: the batches before it are written and consistent."""
    found = _parquet_read(path, lambda: pl.read_parquet_schema(path))
    _parquet_columns(path, schema, found)
    kinds = dict(zip(schema.columns, schema.types, strict=True))
    read = [c for c in schema.columns if _needs_values(kinds[c], found[c])]
    values = _parquet_read(path, lambda: pl.read_parquet(path, columns=read)) if read else None
    for column in schema.columns:
        series = (
            values.get_column(column)
            if values is not None and column in read
            else pl.Series(column, [], dtype=found[column])  # the type's check only
        )
        _parquet_column(path, series, kinds[column], column)


_NARROW_INTS = {  # the file types whose every value a kind holds
    "tinyint": (pl.Int8,),
    "smallint": (pl.Int8, pl.Int16, pl.UInt8),
    "int": (pl.Int8, pl.Int16, pl.Int32, pl.UInt8, pl.UInt16),
    "bigint": (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32),
}


def _needs_values(kind: SqlType, dtype: pl.DataType) -> bool:
    """Whether a column of file type ``dtype`` may hold a value ``kind`` refuses
    (``_parquet_column``'s checks), so the check pass must read it."""
    name = kind.name
    if name in _NARROW_INTS:
        return dtype not in _NARROW_INTS[name]
    if name == "binary":
        return dtype == pl.String
    if name == "float":
        return dtype != pl.Float32
    return name not in ("string", "boolean", "double")


def _parquet_frame(path: Path, schema: StreamSchema) -> Batch:
    frame = _parquet_read(path, lambda: pl.read_parquet(path))
    _parquet_columns(path, schema, frame.columns)
    out = []
    for i, (column, kind) in enumerate(zip(schema.columns, schema.types, strict=True)):
        out.append(_parquet_column(path, frame.get_column(column), kind, column).alias(f"c{i}"))
    return Frame(pl.DataFrame(out))


def _parquet_column(path: Path, values: pl.Series, kind: SqlType, column: str) -> pl.Series:
    dtype = values.dtype
    name = kind.name
    wrong = RunError(f"{path}: column `{column}` is {dtype}, which cannot hold {kind!s}")
    out: pl.Series
    if name in _INT_BOUNDS:
        if not dtype.is_integer():
            raise wrong
        bound = _INT_BOUNDS[name]
        low, high = values.min(), values.max()  # Python ints: no overflow in the comparison
        if low is not None and not (-bound <= low and high < bound):  # type: ignore[operator]
            outside = [v is not None and not -bound <= v < bound for v in values.to_list()]
            _refuse(path, values, column, kind, pl.Series(outside, dtype=pl.Boolean))
        out = values.cast(pl.Int64)
    elif name == "timestamp":
        if not isinstance(dtype, pl.Datetime):
            raise wrong
        # the stored integers: UTC instants (a naive time is read as UTC), in the file's
        # unit; scaled here, since polars' own conversions fail (a panic) on instants that
        # microseconds cannot hold
        raw = values.to_physical()
        if dtype.time_unit == "ms":
            low, high = -(-MIN_TIMESTAMP_US // 1000), MAX_TIMESTAMP_US // 1000
            _refuse(path, raw, column, kind, (raw < low) | (raw > high), scale=1000)
            out = raw * 1000
        elif dtype.time_unit == "ns":  # floored, as the JSON reader drops digits beyond µs
            out = raw // 1000
        else:
            out = raw
        _refuse(path, out, column, kind, (out < MIN_TIMESTAMP_US) | (out > MAX_TIMESTAMP_US))
    elif name == "date":
        if dtype != pl.Date:
            raise wrong
        out = values.cast(pl.Int64)
        _refuse(path, out, column, kind, (out < MIN_DAY) | (out > MAX_DAY))
    elif name == "string":
        if dtype != pl.String:  # Parquet strings are UTF-8: no lone surrogate to refuse
            raise wrong
        out = values
    elif name == "binary":
        if dtype == pl.Binary:  # bytes: held as the base64 text a JSON trace writes
            out = values.bin.encode("base64")
        elif dtype == pl.String:
            out = values
            refused = [typed_value_problem(kind, v) is not None for v in values.to_list()]
            _refuse(path, values, column, kind, pl.Series(refused, dtype=pl.Boolean))
        else:
            raise wrong
    elif name == "boolean":
        if dtype != pl.Boolean:
            raise wrong
        out = values
    elif name == "decimal":
        if not isinstance(dtype, pl.Decimal) and not dtype.is_integer():
            raise wrong
        out = _decimal_column(path, values, kind, column)
    elif name in ("double", "float"):
        if not dtype.is_float():
            raise wrong
        out = values.cast(pl.Float64)
        if name == "float" and dtype != pl.Float32:
            # beyond what a 32-bit float holds: an infinity or 0 there
            single = out.cast(pl.Float32)
            magnitude = out.abs()
            _refuse(
                path,
                out,
                column,
                kind,
                (single.is_infinite() & out.is_finite()) | ((single == 0) & (magnitude > 0)),
            )
    else:
        raise RunError(
            f"{path}: column `{column}` is {kind!s}, which a Parquet trace cannot hold yet"
        )
    return out


def _decimal_column(path: Path, values: pl.Series, kind: SqlType, column: str) -> pl.Series:
    """A Parquet DECIMAL or integer column as DECIMAL(p, s) values: a polars ``Decimal(38,
    s)`` column (``frames.dtype_of``), each value the JSON reader's (``trace.converter``:
    at most p - s integer digits, rounded HALF_UP to s digits).  A column of at most s
    fraction digits needs no rounding: its values are scaled up exactly, and the digit
    check is one comparison of the unscaled integers; a column of more fraction digits is
    rounded value by value by the JSON reader's converter."""
    precision, scale = kind.params
    dtype = values.dtype
    source = dtype.scale if isinstance(dtype, pl.Decimal) else 0
    target = pl.Decimal(38, scale)
    if source > scale:
        convert = converter(kind)
        refused = [typed_value_problem(kind, v) is not None for v in values.to_list()]
        _refuse(path, values, column, kind, pl.Series(refused, dtype=pl.Boolean))
        return pl.Series(
            values.name,
            [None if v is None else convert(v) for v in values.to_list()],
            dtype=target,
            strict=True,
        )
    # |value| < 10 ** (p - s), i.e. its unscaled integer at the file's scale below this
    bound = pl.lit(10 ** (precision - scale + source), dtype=pl.Int128)
    unscaled = pl.col("v").to_physical() if source else pl.col("v")
    unscaled = unscaled.cast(pl.Int128)
    bad = pl.DataFrame([values.alias("v")]).select(
        ((unscaled >= bound) | (unscaled <= -bound)).alias("bad")
    )
    _refuse(path, values, column, kind, bad.get_column("bad"))
    return values.cast(target)


def _refuse(
    path: Path, values: pl.Series, column: str, kind: SqlType, bad: pl.Series, scale: int = 1
) -> None:
    """Raise for the first row where ``bad`` holds, with the JSON reader's reason (for the
    value times ``scale``: the runtime value of a millisecond timestamp)."""
    found = bad.fill_null(False).arg_true()
    if found.len():
        row = int(found[0])
        value = values[row] if scale == 1 else values[row] * scale  # a Python int
        reason = typed_value_problem(kind, value) or f"a value {kind!s} cannot hold"
        raise RunError(f"{path}: row {row + 1}: column `{column}`: {reason}")
