"""The input trace: JSON Lines of ``{"batch": 0, "stream": "s", "row": {...}}``.

Each row is checked against its stream's declared columns and converted to runtime values
(``values.py``) here, once, so the engine never meets a malformed value.  A bad row (bad
JSON, unknown stream, missing or unknown column, wrong type, unparsable timestamp, batches
out of order) becomes a ``BadRow`` carrying its line number; the caller's policy decides
whether the run stops, skips it, or also writes it to a file.  The whole trace is checked
before the first batch runs, so ``stop`` never leaves a half-written output behind.

A trace file is read as bytes and split only at LF (a lone CR stays inside its line, so
line numbers are the ones an editor shows); each line is decoded as strict UTF-8.  A UTF-8
byte order mark at the very start of the file is skipped.  Every bad row names its line and,
where it can be found, the column (1-based, in characters) of the fault in the file.

What a value of each type may be is one contract for both engines and both trace formats
(docs/testing.md, "What a trace may hold"; ``tests/runtime/io/test_reader_contract.py`` reads
it value by value): every value accepted can be written back, and Spark's JSON reader
reads it as the same value.  So numbers beyond what Python reads or the type holds, strings
with lone surrogates, timestamps outside years 0001..9999 (UTC) or in forms Spark reads
otherwise (a leap second, a week date), and a key given twice (JSON readers keep one of the
values) are bad rows.

With ``digests=True`` each batch also gets the SHA-256 of the lines it was read from (its
good rows), which a checkpoint keeps to recognise the trace it consumed.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import io
import json
import math
import os
import re
import struct
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias

from ...compiler.diagnostics.diagnostics import did_you_mean
from ...compiler.planning.plan import Plan
from ...compiler.vocabulary.types import SqlType
from ..engine.batches import Batch, Row, Rows
from ..engine.values import (
    MAX_TIMESTAMP_US,
    MIN_TIMESTAMP_US,
    dumps,
    format_date,
    format_timestamp,
    parse_date,
    parse_trace_timestamp,
)
from ..errors import RunError, UsageError
from .files import cannot_write, open_named

BadRowPolicy: TypeAlias = Literal["stop", "skip"] | str | os.PathLike[str]
BAD_ROW_KEYWORDS = ("stop", "skip")


def bad_rows_policy(value: BadRowPolicy) -> BadRowPolicy:
    """``--bad-rows``: ``"stop"``, ``"skip"``, or a FILE (returned as a ``Path``).  A case
    variant of a keyword (``Skip``, ``STOP``) is refused rather than taken for a file name:
    a typo would otherwise leave the bad rows in a file named ``Skip``; ``./Skip`` names that
    file.  An empty string names nothing and is refused too."""
    if not isinstance(value, str):
        return value
    if value in BAD_ROW_KEYWORDS:
        return value
    word = value.strip().lower()
    if word in BAD_ROW_KEYWORDS:
        raise UsageError(
            f"--bad-rows {value!r}: did you mean {word}? To write the bad rows to a file "
            f"named {value.strip()}, give it as ./{value.strip()}"
        )
    if not value.strip():
        raise UsageError("--bad-rows takes stop, skip or a FILE, not an empty name")
    return Path(value)


Converter: TypeAlias = Callable[[Any], Any]

_INT_RANGES = {
    "tinyint": 2**7,
    "smallint": 2**15,
    "int": 2**31,
    "bigint": 2**63,
}
# the JSON constants (NaN, Infinity, -Infinity) and the strings a DOUBLE or FLOAT may be
# written as: those Spark's JSON reader also reads (it refuses "Inf" and "-Inf")
_NON_FINITE = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "-Infinity": -math.inf,
}
_INF = math.inf
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class BadRow:
    """One trace line (or Kafka record: ``record``) that cannot be used, and why."""

    line: int | None
    reason: str
    text: str
    batch: int | None = None
    stream: str | None = None
    column: int | None = None  # 1-based, in characters of the line, where it is known
    record: tuple[str, int, int] | None = None  # a replayed Kafka record: topic, partition, offset

    def describe(self) -> str:
        """``LINE:COLUMN: reason`` (or ``LINE: reason``), to follow ``FILE:`` as compilers
        print locations; for a Kafka record ``topic T partition P offset O: reason``."""
        if self.record is not None:
            topic, partition, offset = self.record
            return f"topic {topic} partition {partition} offset {offset}: {self.reason}"
        if self.column is None:
            return f"{self.line}: {self.reason}"
        return f"{self.line}:{self.column}: {self.reason}"

    def located(self, source: str) -> str:
        """The bad row with its place in ``source`` (the trace file, or the Kafka URL)."""
        if self.record is not None:
            return f"{source} {self.describe()}"
        return f"{source}:{self.describe()}"

    def to_json(self) -> dict[str, Any]:
        if self.record is not None:
            topic, partition, offset = self.record
            return {
                "topic": topic,
                "partition": partition,
                "offset": offset,
                "batch": self.batch,
                "stream": self.stream,
                "error": self.reason,
                "text": self.text,
            }
        return {
            "line": self.line,
            "column": self.column,
            "batch": self.batch,
            "stream": self.stream,
            "error": self.reason,
            "text": self.text,
        }


class TraceError(RunError):
    """The trace has bad rows and the policy is ``stop``; carries every bad row found."""

    def __init__(
        self,
        source: str,
        bad_rows: Sequence[BadRow],
        what: str = "trace",
        hint: str = "fix them, or pass --bad-rows skip (or a FILE) to run without them",
    ) -> None:
        self.source = source
        self.bad_rows = tuple(bad_rows)
        shown = "\n".join(f"  {b.located(source)}" for b in self.bad_rows[:20])
        more = len(self.bad_rows) - 20
        tail = f"\n  ... and {more} more" if more > 0 else ""
        super().__init__(
            f"{len(self.bad_rows)} bad row(s) in {what} {source}:\n{shown}{tail}\n{hint}"
        )


@dataclass(frozen=True, slots=True)
class StreamSchema:
    name: str
    columns: tuple[str, ...]
    types: tuple[SqlType, ...]
    index: dict[str, int] = field(hash=False, compare=False)
    # a static table's rows (`{"batch": N, "table": name, "row": {...}}`: its contents from
    # batch N on, docs/testing.md), not a stream's
    table: bool = False


@dataclass(slots=True)
class TraceBatch:
    """One data micro-batch of the trace: rows per stream (columns in declared order), as
    the reader holds them: ``Rows`` of tuples, or a columnar reader's ``Frame``."""

    value: int  # the trace's own batch value: it only groups and orders rows
    rows: dict[str, Batch]
    first_line: int
    digest: bytes | None = None  # SHA-256 of the batch's lines (``read_trace(digests=True)``)
    # each stream's rows' line numbers, in row order (``read_trace(lines=True)``; the columnar
    # bulk reader's always, as a column): where ``sjoin run --late-rows`` and ``sjoin why``
    # say a row came from; empty for a trace without lines (Parquet, Delta, a replayed topic)
    lines: dict[str, Any] = field(default_factory=dict)
    # waiting when the batch before it ran: the rest of a Delta read that the source's
    # admission limits cut (``columnar/delta.py``); Spark runs it next, with no no-data
    # batch between them
    queued: bool = False

    def rows_of(self, stream: str) -> list[Row]:
        """A stream's rows in this batch as runtime rows (a stream with none: [])."""
        held = self.rows.get(stream)
        return [] if held is None else held.to_rows()


@dataclass(slots=True)
class Trace:
    source: str
    batches: Sequence[TraceBatch]  # a list, or ``StreamedBatches`` read as the run goes
    bad_rows: list[BadRow]
    # every batch was waiting when the query started (a replayed topic, `sjoin run
    # --backlog`): Spark runs them back to back, each query's no-data batches only once its
    # sources have nothing in the next batch (``query.Engine``)
    backlog: bool = False
    # what ``--verbose`` says of how the trace was read (a Delta trace: versions to batches)
    notes: list[str] = field(default_factory=list)
    # a Delta trace: each table's version when the job started (a checkpoint keeps it, so a
    # restart on a grown table reads it as the first run did, as Spark resumes from its offsets)
    delta_start: dict[str, int] = field(default_factory=dict)

    @property
    def row_count(self) -> int:
        return sum(len(r) for b in self.batches for r in b.rows.values())


@dataclass(frozen=True, slots=True)
class Span:
    """Where one batch of a streamed trace is (``StreamedBatches``), found by the check pass:
    its value, first line and digest, and what its reader needs to read it again (a JSON-lines
    trace: the bytes ``start..end`` of its file; a Parquet trace: its files, ``key``; a Delta
    trace: its files per stream; a replayed topic: its offset ranges per stream).  ``tables``:
    the static tables the batch gives rows (``static_join.TableVersions`` reads them without
    reading the trace again)."""

    value: int
    first_line: int
    start: int = 0
    end: int = 0
    digest: bytes | None = None
    key: Any = None
    tables: frozenset[str] = frozenset()


class StreamedBatches(Sequence[TraceBatch]):
    """A trace's batches read one at a time, as the run reaches them, from the ``Span`` s that a
    check pass holding no rows found (``read_trace(stream=True)``,
    ``columnar.trace.read_trace_columns(stream=True)``).  The last ``KEEP`` batches read are
    held (the engine looks one batch ahead, ``query.Engine._settles``); any other is read
    again when asked for, so memory holds a batch or two, however long the trace."""

    KEEP: Final = 2

    def __init__(
        self,
        spans: Sequence[Span],
        load: Callable[[Span], TraceBatch],
        close: Callable[[], None] | None = None,
    ) -> None:
        self.spans = list(spans)
        self._load = load
        self._close = close
        self._held: dict[int, TraceBatch] = {}
        self.reads: list[int] = []  # the index of each batch read, in order (for tests)
        self.most_held = 0  # the most batches held at once (for tests)

    def __len__(self) -> int:
        return len(self.spans)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.spans)))]
        if index < 0:
            index += len(self.spans)
        if not 0 <= index < len(self.spans):
            raise IndexError(index)
        held = self._held.get(index)
        if held is None:
            held = self._load(self.spans[index])
            self.reads.append(index)
            self._held[index] = held
            while len(self._held) > self.KEEP:
                del self._held[next(iter(self._held))]
            self.most_held = max(self.most_held, len(self._held))
        return held

    def __iter__(self) -> Iterator[TraceBatch]:
        for i in range(len(self.spans)):
            yield self[i]

    @property
    def held(self) -> list[int]:
        """The indices of the batches held now."""
        return list(self._held)

    def close(self) -> None:
        """Drop the batches held and release what the reader keeps open (a replayed
        topic's Kafka consumers); the run calls it when it ends.  The batches may still be
        read after it (and closed again)."""
        self._held.clear()
        if self._close is not None:
            self._close()


def batch_facts(batches: Sequence[TraceBatch], index: int) -> tuple[int, int, bytes | None]:
    """Batch ``index``'s value, first line and digest, without reading a streamed batch."""
    if isinstance(batches, StreamedBatches):
        span = batches.spans[index]
        return span.value, span.first_line, span.digest
    batch = batches[index]
    return batch.value, batch.first_line, batch.digest


def batch_tables(batches: Sequence[TraceBatch], index: int, tables: Iterable[str]) -> set[str]:
    """Which of ``tables`` batch ``index`` gives rows, without reading a streamed batch."""
    if isinstance(batches, StreamedBatches):
        return set(batches.spans[index].tables).intersection(tables)
    return set(batches[index].rows).intersection(tables)


class _Bad(Exception):
    """A bad row's reason; ``at`` is the 0-based character offset of the fault in the line,
    or ``where`` says what to look for there: a record field (``("batch",)``), the row
    (``("row",)``) or one of its columns (``("row", name)``; ``key`` for the name itself)."""

    def __init__(
        self,
        reason: str,
        *,
        at: int | None = None,
        where: tuple[str, ...] = (),
        key: bool = False,
        duplicate: bool = False,
    ) -> None:
        super().__init__(reason)
        self.at = at
        self.where = where
        self.key = key
        self.duplicate = duplicate  # the reason is a key given twice


def schemas_of(plan: Plan) -> dict[str, StreamSchema]:
    return {
        s.name: StreamSchema(
            s.name,
            tuple(c.name for c in s.columns),
            tuple(c.type for c in s.columns),
            {c.name: i for i, c in enumerate(s.columns)},
        )
        for s in plan.streams
    }


def table_schemas(plan: Plan) -> dict[str, StreamSchema]:
    """The static tables' rows a JSON-lines trace may hold (``TableNode``), by table."""
    return {
        t.name: StreamSchema(
            t.name,
            tuple(c.name for c in t.columns),
            tuple(c.type for c in t.columns),
            {c.name: i for i, c in enumerate(t.columns)},
            table=True,
        )
        for t in plan.tables
    }


def read_value(kind: SqlType, value: Any) -> Any:
    """A JSON value as the runtime value of ``kind``, by the trace contract (what a trace's
    row may hold); ``ValueError`` with the trace reader's reason when it may not."""
    try:
        return converter(kind)(value)
    except _Bad as err:
        raise ValueError(str(err)) from None


def read_json_value(kind: SqlType, text: str) -> Any:
    """A value written as JSON text (``7``, ``-1.5e3``, ``true``) as the runtime value of
    ``kind``, read exactly as a trace line's value is: the same JSON reader, with its limits
    (``MAX_NUMBER_CHARS``, Python's digits of an integer), and the same ``converter``;
    ``ValueError`` with the trace reader's reason when a trace may not hold it."""
    try:
        return converter(kind)(_load(text))
    except _Blank:
        raise ValueError("no value") from None
    except _Bad as err:
        raise ValueError(str(err)) from None


def converter(kind: SqlType) -> Converter:
    """A function turning a JSON value into the runtime value of ``kind`` (or raising).
    What each type accepts is the trace contract (docs/testing.md, "What a trace may
    hold"), which the columnar reader keeps too (``columnar/trace.py``)."""
    name = kind.name
    if name in _INT_RANGES:
        bound = _INT_RANGES[name]

        def to_int(v: Any) -> Any:
            if type(v) is int and -bound <= v < bound:
                return v
            if isinstance(v, bool) or not isinstance(v, int):
                raise _Bad(f"expected {kind!s} (a JSON integer), got {_show(v)}")
            if not -bound <= v < bound:
                raise _Bad(f"{_number(v)} is out of range for {kind!s}")
            return v

        return to_int
    if name in ("double", "float"):
        single = name == "float"

        def to_float(v: Any) -> Any:
            if type(v) is float:  # NaN or an infinity written as a JSON constant
                return v
            if isinstance(v, str) and v in _NON_FINITE:
                return _NON_FINITE[v]
            if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
                raise _Bad(f"expected {kind!s} (a JSON number), got {_show(v)}")
            try:
                f = float(v)
            except OverflowError:
                f = _INF
            if f == _INF or f == -_INF:  # a finite number too large for a double
                raise _Bad(
                    f"{_number(v)} is out of range for {kind!s} "
                    '(write "Infinity" or "-Infinity" for an infinite value)'
                )
            if single and f != 0.0:
                _check_single(f, v, kind)
            return f

        return to_float
    if name == "decimal":
        return _decimal_converter(kind)
    if name == "string":

        def to_str(v: Any) -> Any:
            if type(v) is not str and not isinstance(v, str):
                raise _Bad(f"expected STRING (a JSON string), got {_show(v)}")
            if not v.isascii():
                _check_unicode(v)
            return v

        return to_str
    if name == "binary":

        def to_binary(v: Any) -> Any:
            if not isinstance(v, str):
                raise _Bad(f"expected BINARY (a base64 JSON string), got {_show(v)}")
            try:
                canonical = base64.b64encode(base64.b64decode(v, validate=True)).decode("ascii")
            except ValueError:  # binascii.Error, or a character that is not ASCII
                raise _Bad(
                    f'expected BINARY (a base64 JSON string, e.g. "YWJj"), got {_show(v)}'
                ) from None
            if canonical != v:
                raise _Bad(
                    f"BINARY {_brief(repr(v))} is not canonical base64: its bytes are "
                    f"written {_brief(repr(canonical))}"
                )
            return v

        return to_binary
    if name == "boolean":

        def to_bool(v: Any) -> Any:
            if not isinstance(v, bool):
                raise _Bad(f"expected BOOLEAN (true or false), got {_show(v)}")
            return v

        return to_bool
    if name == "timestamp":

        def to_timestamp(v: Any) -> Any:
            if not isinstance(v, str):
                raise _Bad(f"expected TIMESTAMP (an ISO-8601 string), got {_show(v)}")
            us = parse_trace_timestamp(v)
            if us is None:
                raise _Bad(
                    f"unparsable timestamp {_brief(repr(v))} "
                    "(write ISO-8601, e.g. 2026-01-01T00:00:00Z)"
                )
            if not MIN_TIMESTAMP_US <= us <= MAX_TIMESTAMP_US:
                raise _Bad(
                    f"timestamp {_brief(repr(v))} is out of range: TIMESTAMP holds years "
                    "0001 to 9999 in UTC"
                )
            return us

        return to_timestamp
    if name == "date":

        def to_date(v: Any) -> Any:
            days = parse_date(v) if isinstance(v, str) else None
            if days is None:
                raise _Bad(f"expected DATE (YYYY-MM-DD), got {_show(v)}")
            return days

        return to_date

    def to_any(v: Any) -> Any:
        return v

    return to_any


MIN_DAY: Final = -719_162  # 0001-01-01, in days since the epoch
MAX_DAY: Final = 2_932_896  # 9999-12-31


def typed_value_problem(kind: SqlType, value: Any) -> str | None:
    """Why ``value``, a runtime value of ``kind`` from a typed source (a Parquet trace),
    is one a trace may not hold, in the JSON reader's words; None when it may be held."""
    name = kind.name
    try:
        if value is None:
            return None
        if name in _INT_RANGES or name in ("string", "binary", "decimal"):
            converter(kind)(value)
        elif name == "float" and math.isfinite(value) and value != 0.0:
            _check_single(value, value, kind)
        elif name == "timestamp" and not MIN_TIMESTAMP_US <= value <= MAX_TIMESTAMP_US:
            raise _Bad(
                f"timestamp {format_timestamp(value)!r} is out of range: TIMESTAMP holds "
                "years 0001 to 9999 in UTC"
            )
        elif name == "date" and not MIN_DAY <= value <= MAX_DAY:
            raise _Bad(
                f"date {format_date(value)!r} is out of range: DATE holds years 0001 to 9999"
            )
    except _Bad as err:
        return str(err)
    return None


def _check_single(f: float, v: Any, kind: SqlType) -> None:
    """A FLOAT is computed in double precision, but holds only what a 32-bit float holds:
    a number that would become an infinity or 0 there is out of range (Spark's reader makes
    it one)."""
    try:
        rounded = struct.unpack("<f", struct.pack("<f", f))[0]
    except OverflowError:
        rounded = _INF
    if rounded in (_INF, -_INF):
        raise _Bad(
            f"{_number(v)} is out of range for {kind!s}: a 32-bit float holds at most about "
            '3.4028235e38 (write "Infinity" or "-Infinity" for an infinite value)'
        )
    if rounded == 0.0:
        raise _Bad(
            f"{_number(v)} is out of range for {kind!s}: a 32-bit float holds no number this "
            "close to 0 but 0 itself (the smallest is about 1.4e-45)"
        )


def _check_unicode(v: str) -> None:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as err:
        raise _Bad(
            f"the string holds a lone surrogate {v[err.start]!r} at character "
            f"{err.start + 1}, which is no Unicode character (an escape "
            "\\uD800..\\uDFFF must be one half of a pair)"
        ) from None


# a DECIMAL written as a JSON string: a JSON number's text (ASCII digits, an optional
# sign, fraction and exponent; `.5` and `5.` as Spark's reader also reads them)
_DECIMAL_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# the longest number a trace value may be written with: longer ones Spark's JSON reader
# (Jackson's number length limit) refuses, in some forms from 1,001 characters on
MAX_NUMBER_CHARS: Final = 1000


def _decimal_converter(kind: SqlType) -> Converter:
    precision, scale = kind.params
    quantum = Decimal(1).scaleb(-scale)
    # enough digits for any value that fits, and one more for a rounding carry
    context = Context(prec=precision + 2, rounding=ROUND_HALF_UP)
    expected = f"expected {kind!s} (a JSON number, or a string holding one)"

    def to_decimal(v: Any) -> Any:
        if type(v) is Decimal or type(v) is int:  # a JSON number
            d = Decimal(v)
        elif isinstance(v, str):
            if len(v) > MAX_NUMBER_CHARS or _DECIMAL_TEXT.fullmatch(v) is None:
                raise _Bad(f"{expected}, got {_show(v)}")
            d = Decimal(v)
        elif isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
            raise _Bad(f"{expected}, got {_show(v)}")
        elif isinstance(v, float):  # NaN or an infinity written as a JSON constant
            if not math.isfinite(v):
                raise _Bad(f"{_number(v)} does not fit {kind!s}")
            d = Decimal(repr(v))
        else:  # an int or Decimal subclass in a record given in memory
            d = Decimal(v)
        if not d.is_finite() or (d and d.adjusted() >= precision - scale):
            raise _Bad(f"{_number(v)} does not fit {kind!s}")
        q = d.quantize(quantum, context=context)
        if q and q.adjusted() >= precision - scale:  # rounding carried into one more digit
            raise _Bad(f"{_number(v)} does not fit {kind!s}")
        return q if q else q.copy_abs()  # -0.00 is 0.00, as in Spark

    return to_decimal


def _show(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, str):
        return f"string {_brief(repr(v))}"
    if isinstance(v, bool):
        return f"boolean {str(v).lower()}"
    if isinstance(v, (int, float, Decimal)):
        return f"number {_number(v)}"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return _brief(type(v).__name__)


def _number(v: Any) -> str:
    """A number for a message: long ones abbreviated (and never a ValueError for an int
    beyond Python's int-to-string limit)."""
    try:
        text = str(v)
    except ValueError:
        return f"an integer of about {int(v.bit_length() * 0.30103)} digits"
    if len(text) > 40:
        digits = len(text) - text.startswith("-")
        size = f"{digits} digits" if text.lstrip("-").isdigit() else f"{len(text)} characters"
        return f"{text[:12]}...{text[-6:]} ({size})"
    return text


def _brief(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _records(source: str | os.PathLike[str] | Iterable[Any]) -> tuple[str, Iterable[Any]]:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)

        def lines() -> Iterable[bytes]:
            with path.open("rb") as handle:  # bytes lines: split at b"\n" only
                yield from handle

        return str(path), lines()
    return "<rows>", source


def read_trace(
    source: str | os.PathLike[str] | Iterable[Any],
    schemas: Mapping[str, StreamSchema],
    bad_rows: BadRowPolicy = "stop",
    *,
    digests: bool = False,
    lines: bool = False,
    stream: bool = False,
) -> Trace:
    """Read and check a whole trace (a path, or an iterable of lines, as ``str`` or
    ``bytes``, or of record dicts).  ``stream`` (a path): check the whole file in a pass that
    keeps no rows (every bad row found, handled as ``bad_rows`` says, before anything runs),
    and give ``StreamedBatches`` that read each batch's lines again as the run reaches it.

    ``bad_rows``: ``"stop"`` raises ``TraceError`` with every bad row; ``"skip"`` leaves
    them out (listed in ``Trace.bad_rows``); any other value is a path that receives one
    JSON line per bad row (rewritten on each run, so a restarted run does not repeat them).
    ``digests``: give each batch the SHA-256 of its lines (``TraceBatch.digest``).
    ``lines``: give each batch its rows' line numbers (``TraceBatch.lines``).
    """
    bad_rows = bad_rows_policy(bad_rows)
    paused = gc.isenabled()
    gc.disable()  # a large trace is millions of new tuples: collector scans cost ~40%
    try:
        if stream and isinstance(source, (str, os.PathLike)):
            trace = _streamed(source, schemas, bad_rows, digests, lines)
        else:
            trace = _read(source, schemas, bad_rows, digests, lines)
    except OSError as err:
        raise UsageError(f"cannot read trace {source}: {err.strerror or err}") from None
    finally:
        if paused:
            gc.enable()
    return trace


def read_table_file(path: str | os.PathLike[str], schema: StreamSchema) -> Rows:
    """A static table's rows from a file of JSON lines, one object of the table's columns a
    line (``sjoin run --table NAME=PATH``).  Every line is checked as a trace row is; a bad
    one stops the run (``TraceError`` naming its line and column): a table's rows are joined
    with every batch, so a row left out would change every batch's output."""
    try:
        trace = _read(path, {schema.name: schema}, "stop", False, bare=schema.name)
    except OSError as err:
        raise UsageError(f"cannot read table file {path}: {err.strerror or err}") from None
    found = [b.rows[schema.name] for b in trace.batches if schema.name in b.rows]
    return Rows([row for rows in found for row in rows.to_rows()])


def _streamed(
    source: str | os.PathLike[str],
    schemas: Mapping[str, StreamSchema],
    bad_rows: BadRowPolicy,
    digests: bool,
    lines: bool,
) -> Trace:
    """``read_trace(stream=True)``: the check pass, then batches read one at a time."""
    path = Path(source)
    spans: list[Span] = []
    checked = _read(path, schemas, bad_rows, digests, spans=spans)

    def load(span: Span) -> TraceBatch:
        return read_span(path, span, schemas, lines)

    return Trace(checked.source, StreamedBatches(spans, load), checked.bad_rows)


def span_bytes(path: Path, span: Span) -> bytes:
    """The bytes of one batch of a checked trace file (``Span``: where the check pass saw it)."""
    try:
        with path.open("rb") as handle:
            handle.seek(span.start)
            return handle.read(span.end - span.start)
    except OSError as err:
        raise UsageError(f"cannot read trace {path}: {err.strerror or err}") from None


def read_span(
    path: Path, span: Span, schemas: Mapping[str, StreamSchema], lines: bool = False
) -> TraceBatch:
    """One batch of a checked trace file, read again from its bytes: every line there is one
    of its rows, a bad row (skipped: the check pass reported it) or blank."""
    data = span_bytes(path, span)
    read = _read(io.BytesIO(data), schemas, "skip", False, lines, start=span.first_line)
    batch = read.batches[0] if read.batches else TraceBatch(span.value, {}, span.first_line)
    batch.digest = span.digest
    return batch


class _Blank(Exception):
    """A line of nothing but JSON whitespace: not a row, not an error."""


def _read(
    source: str | os.PathLike[str] | Iterable[Any],
    schemas: Mapping[str, StreamSchema],
    bad_rows: BadRowPolicy,
    digests: bool,
    lines: bool = False,
    bare: str | None = None,
    *,
    start: int = 1,
    spans: list[Span] | None = None,
) -> Trace:
    """``bare``: each line is a row of that table alone, no envelope (``read_table_file``).
    ``start``: the number of the first line.  ``spans`` (a file): check every row but keep
    none; each batch's ``Span`` (its bytes in the file) is appended there instead."""
    name, records = _records(source)
    keep = spans is None
    offset = 0  # of the line in the file, in bytes
    ranges: list[list[int]] = []  # each batch's bytes, from its first row's to its last's
    tables: list[set[str]] = []  # each batch's static tables (the check pass)
    converters = {
        s: [(c, converter(k)) for c, k in zip(schema.columns, schema.types, strict=True)]
        for s, schema in schemas.items()
    }
    quotes = {s: _Quotes.of(schema) for s, schema in schemas.items()}
    batches: list[TraceBatch] = []
    bad: list[BadRow] = []
    current: TraceBatch | None = None
    held: dict[str, list[Row]] = {}  # the current batch's rows per stream
    hashers: list[Any] = []
    for number, record in enumerate(records, start=start):
        text: str | None
        if type(record) is bytes:  # a line of a file, with its b"\n"
            here = offset
            offset += len(record)
            if number == 1 and record.startswith(_BOM):
                record = record[3:]
            try:
                text = record.decode("utf-8")
            except UnicodeDecodeError as err:
                bad.append(_undecodable(number, record, err))
                continue
        elif isinstance(record, str):
            text = record[1:] if number == 1 and record.startswith("\ufeff") else record
        else:
            text = None  # a record dict
        batch: int | None = None
        stream: str | None = None
        decoded = False
        try:
            obj = record if text is None else _load(text)
            decoded = True
            batch, stream, values, is_table = _envelope(obj) if bare is None else _bare(obj, bare)
            schema = schemas.get(stream)
            if schema is not None and schema.table != is_table:
                raise _misplaced(stream, schema.table)
            if schema is None:
                kind = "table" if is_table else "stream"
                names = [n for n, s in schemas.items() if s.table == is_table]
                hint = did_you_mean(str(stream), names)
                raise _Bad(
                    f"unknown {kind} `{stream}` ({kind}s: {', '.join(sorted(names)) or 'none'})"
                    + (f"; {hint}" if hint else ""),
                    where=(kind,),
                )
            if current is not None and batch < current.value:
                raise _Bad(
                    f"batch {_number(batch)} comes after batch {_number(current.value)}: "
                    "batches must be in ascending order",
                    where=("batch",),
                )
            row = _convert(values, schema, converters[stream])
            if text is not None:
                q = quotes[stream]
                expected = q.expected(values, row) if q.either or None in row else q.strings
                if text.count('"') != expected:
                    _no_duplicate(text)  # a key given twice, or (rarely) escaped quotes
        except _Blank:
            continue
        except _Bad as err:
            if text is not None and decoded and not err.duplicate:
                try:  # a repeated key explains the row better than its last value does
                    _no_duplicate(text)
                except _Bad as duplicate:
                    err = duplicate
            if bare is not None:  # the row is the line: a column is found at its top level
                err.where = err.where[1:] or _START if err.where[:1] == ("row",) else err.where
            bad.append(_bad_row(number, err, text, record, batch, stream))
            continue
        if current is None or batch != current.value:
            current = TraceBatch(batch, {}, number)
            held = {}  # a new batch: nothing held yet
            batches.append(current)
            if digests:
                hashers.append(hashlib.sha256())
            if not keep:
                ranges.append([here, offset])
                tables.append(set())
        if digests:
            hashers[-1].update(_line_bytes(record))
        if not keep:
            ranges[-1][1] = offset
            if is_table:
                tables[-1].add(stream)
            continue
        rows = held.get(stream)
        if rows is None:  # the batch's Rows hold this very list
            rows = held[stream] = []
            current.rows[stream] = Rows(rows)
        rows.append(row)
        if lines:
            current.lines.setdefault(stream, []).append(number)
    for b, hasher in zip(batches, hashers, strict=False):
        b.digest = hasher.digest()
    if spans is not None:
        spans.extend(
            Span(b.value, b.first_line, at, end, b.digest, tables=frozenset(named))
            for b, (at, end), named in zip(batches, ranges, tables, strict=True)
        )
        batches = []
    if bad:
        if bare is not None:
            raise TraceError(
                name, bad, f"table `{bare}`'s file", "fix them: a table's rows are all read"
            )
        if bad_rows == "stop":
            raise TraceError(name, bad)
        if bad_rows != "skip":
            write_bad_rows(Path(bad_rows), bad)
    return Trace(name, batches, bad)


def write_bad_rows(path: Path, bad: Sequence[BadRow]) -> None:
    try:
        with open_named(path, "w", "the bad rows to ") as out:
            for b in bad:
                out.write(dumps(b.to_json()) + "\n")
    except OSError as err:
        raise cannot_write(path, err, "the bad rows to ") from None


def _line_bytes(record: Any) -> bytes:
    """What a good row's line contributes to its batch's digest: the line without its end
    (``\\n`` or ``\\r\\n``), then ``\\n``; a record dict as canonical JSON."""
    if isinstance(record, bytes):
        return record.rstrip(b"\r\n") + b"\n"
    if isinstance(record, str):
        text = record.rstrip("\r\n")
    else:
        try:
            text = json.dumps(record, sort_keys=True, default=str)
        except (TypeError, ValueError):
            text = _record_text(record)
    return text.encode("utf-8", "surrogatepass") + b"\n"


def _record_text(record: Any) -> str:
    try:
        return json.dumps(record, default=str)
    except Exception:  # any record must get some text
        try:
            return repr(record)
        except Exception:
            return f"<{type(record).__name__}>"


def _clean(text: str) -> str:
    """``text`` fit to be written as UTF-8: a lone surrogate becomes ``\\udXXX``."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _bad_row(
    number: int,
    err: _Bad,
    text: str | None,
    record: Any,
    batch: int | None,
    stream: str | None,
) -> BadRow:
    column = None
    if text is not None:
        at = err.at if err.at is not None else _locate(text, err.where, err.key)
        shown = text.rstrip("\r\n")
        # an error past the line's last character (the decoder skipped the line end looking
        # for a value) is reported just after that character
        column = None if at is None else min(at, len(shown)) + 1
    else:
        shown = _record_text(record)
    return BadRow(
        number,
        _clean(str(err)),
        _clean(shown),
        batch,
        None if stream is None else _clean(stream),
        column,
    )


def _undecodable(number: int, raw: bytes, err: UnicodeDecodeError) -> BadRow:
    """A line that is not UTF-8: the column is that of its first undecodable byte."""
    column = len(raw[: err.start].decode("utf-8")) + 1
    shown = " ".join(f"0x{b:02x}" for b in raw[err.start : err.end])
    return BadRow(
        number,
        f"invalid UTF-8: cannot decode {shown} ({err.reason}); a trace must be UTF-8 text",
        raw.decode("utf-8", "backslashreplace").rstrip("\r\n"),
        column=column,
    )


_START = ("",)  # ``_Bad.where`` for the record itself


def _locate(text: str, where: tuple[str, ...], key: bool) -> int | None:
    """Where in ``text`` the field ``where`` names is (its value, or with ``key`` its name):
    found by searching for ``"name":``, after ``"row":`` for a column.  Only bad rows pay
    for it; a record that writes names with escapes gets no column."""
    if not where:
        return None
    if where == _START:
        return len(text) - len(text.lstrip(" \t\r\n"))
    start = 0
    if len(where) == 2:
        row = _field("row").search(text)
        if row is None:
            return None
        start = row.end()
    found = _field(where[-1]).search(text, start)
    if found is None:
        return None
    return found.start() if key else found.end()


def _field(name: str) -> re.Pattern[str]:
    return re.compile(re.escape(json.dumps(name, ensure_ascii=False)) + r"[ \t\r\n]*:[ \t\r\n]*")


class _LongNumber(ValueError):
    """A number with a fraction or an exponent longer than ``MAX_NUMBER_CHARS``."""


def _parse_float(text: str) -> Decimal:
    if len(text) > MAX_NUMBER_CHARS:
        raise _LongNumber(text)
    return Decimal(text)


_DECODER = json.JSONDecoder(parse_float=_parse_float, parse_constant=_NON_FINITE.__getitem__)
# JSON strings (skipped) and number tokens, to find the number Python could not read
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')


def _load(text: str) -> Any:
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as err:
        if not text.strip(" \t\r\n"):
            raise _Blank from None
        if err.pos == 0 and text.startswith("\ufeff"):
            raise _Bad(
                "a byte order mark (U+FEFF) starts this line; only the start of the file "
                "may have one",
                at=0,
            ) from None
        raise _Bad(f"bad JSON: {err.msg}", at=err.pos) from None
    except RecursionError:
        raise _Bad("bad JSON: nested too deeply", where=_START) from None
    except (ValueError, ArithmeticError):  # a number Python cannot read
        raise _unreadable_number(text) from None
    except KeyError as err:  # pragma: no cover - the decoder only asks for known constants
        raise _Bad(f"bad JSON: unknown constant {err}", where=_START) from None


def _unreadable_number(text: str) -> _Bad:
    limit = sys.get_int_max_str_digits()
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token.startswith('"'):
            continue
        digits = len(token) - token.startswith("-")
        decimal = any(c in token for c in ".eE")
        if limit and digits > limit and not decimal:
            return _Bad(
                f"a number of {digits} digits: more than the {limit} digits a number may have",
                at=m.start(),
            )
        if decimal and len(token) > MAX_NUMBER_CHARS:
            return _Bad(
                f"a number of {len(token)} characters: more than the {MAX_NUMBER_CHARS} a "
                "number with a fraction or an exponent may have",
                at=m.start(),
            )
        try:
            Decimal(token)
        except ArithmeticError:
            return _Bad(
                f"number {_brief(token, 40)} is out of range: its exponent is too large",
                at=m.start(),
            )
    return _Bad("bad JSON: a number that cannot be read", where=_START)


@dataclass(frozen=True, slots=True)
class _Quotes:
    """Whether a line that became a good row may hold a key twice, told by counting its
    quotes: JSON keeps the last value of a repeated key, so only the text shows it.

    A ``"`` in JSON text opens or closes a string, or is an escaped quote inside one.  The
    strings of a good row's line are at least the record's three keys, the stream's name,
    the row's keys and its string values: the decoded record has exactly three keys and the
    row exactly the stream's columns, each value a scalar.  So the line has at least twice
    that many quotes, and exactly that many only when it has no other string (such as a key
    given twice) and no escaped quote; any other line is walked by ``_no_duplicate``."""

    strings: int  # quotes of the keys, the stream's name and the string-only columns' values
    text_only: tuple[int, ...]  # positions of the columns that only a string fills
    either: tuple[str, ...]  # columns whose value may be a string or not (DOUBLE, DECIMAL)

    @staticmethod
    def of(schema: StreamSchema) -> _Quotes:
        kinds = [t.name for t in schema.types]
        text_only = tuple(
            i for i, k in enumerate(kinds) if k in ("string", "binary", "timestamp", "date")
        )
        either = tuple(c for c, k in zip(schema.columns, kinds, strict=True) if k in _EITHER_KINDS)
        return _Quotes(2 * (4 + len(kinds) + len(text_only)), text_only, either)

    def expected(self, values: dict[str, Any], row: tuple[Any, ...]) -> int:
        """The quotes of a line of this row that holds no key twice and no escaped quote."""
        expected = self.strings
        if self.either:
            expected += 2 * sum(type(values[c]) is str for c in self.either)
        if None in row:
            expected -= 2 * sum(row[i] is None for i in self.text_only)
        return expected


_EITHER_KINDS = frozenset({"double", "float", "decimal"})
_SPACE = re.compile(r"[ \t\n\r]*")


def _no_duplicate(text: str) -> None:
    """Raise ``_Bad`` at the first key that the record, or its row, gives twice (keys are
    compared as decoded: ``"k"`` and ``"\\u006b"`` are one key).  ``text`` is valid JSON."""
    start = _SPACE.match(text).end()  # type: ignore[union-attr]
    seen: set[str] = set()
    row_at = None
    for name, at, value_at in _members(text, start):
        if name in seen:
            raise _Bad(
                f"field `{_brief(name, 40)}` is given twice in the record: a key may appear "
                "once (JSON readers keep one of the values, and not all the same one)",
                at=at,
                duplicate=True,
            )
        seen.add(name)
        if name == "row":
            row_at = value_at
    if row_at is None:
        return
    seen.clear()
    for name, at, _ in _members(text, row_at):
        if name in seen:
            raise _Bad(
                f"column `{_brief(name, 40)}` is given twice in the row: a key may appear "
                "once (JSON readers keep one of the values, and not all the same one)",
                at=at,
                duplicate=True,
            )
        seen.add(name)


def _members(text: str, at: int) -> Iterator[tuple[str, int, int]]:
    """(key, where the key starts, where its value starts) of each member of the JSON
    object at ``text[at]``; nothing when no object starts there."""
    if text[at : at + 1] != "{":
        return
    space = _SPACE.match
    pos = space(text, at + 1).end()  # type: ignore[union-attr]
    while text[pos : pos + 1] == '"':
        try:
            name, end = _DECODER.raw_decode(text, pos)
            end = space(text, end).end()  # type: ignore[union-attr]
            if text[end : end + 1] != ":":
                return
            value_at = space(text, end + 1).end()  # type: ignore[union-attr]
            _, end = _DECODER.raw_decode(text, value_at)
        except (ValueError, RecursionError):  # pragma: no cover - the text decoded before
            return
        yield name, pos, value_at
        pos = space(text, end).end()  # type: ignore[union-attr]
        if text[pos : pos + 1] != ",":
            return
        pos = space(text, pos + 1).end()  # type: ignore[union-attr]


def _misplaced(name: str, table: bool) -> _Bad:
    if table:
        return _Bad(
            f'`{name}` is a static table: write its rows as {{"batch": N, "table": "{name}", '
            '"row": {...}}',
            where=("stream",),
            key=True,
        )
    return _Bad(
        f'`{name}` is a stream: write its rows as {{"batch": N, "stream": "{name}", '
        '"row": {...}}',
        where=("table",),
        key=True,
    )


def _bare(obj: Any, table: str) -> tuple[int, str, dict[str, Any], bool]:
    """A line of a table's file (``read_table_file``): the row itself."""
    if not isinstance(obj, dict):
        raise _Bad(f"expected an object of table `{table}`'s columns", where=_START)
    return 0, table, obj, True


def _envelope(obj: Any) -> tuple[int, str, dict[str, Any], bool]:
    """A record's batch, stream (or table) name and row, and whether it names a table."""
    if type(obj) is dict and len(obj) == 3:
        batch, stream, row = obj.get("batch"), obj.get("stream"), obj.get("row")
        if type(batch) is int and type(stream) is str and type(row) is dict:
            return batch, stream, row, False
    if isinstance(obj, dict) and "table" in obj and "stream" not in obj:
        return (*_envelope({"stream" if k == "table" else k: v for k, v in obj.items()})[:3], True)
    if not isinstance(obj, dict):
        raise _Bad('expected an object {"batch": N, "stream": "name", "row": {...}}', where=_START)
    missing = [k for k in ("batch", "stream", "row") if k not in obj]
    if missing:
        raise _Bad(
            f"missing {', '.join(f'`{k}`' for k in missing)} in the trace record", where=_START
        )
    extra = sorted(set(obj) - {"batch", "stream", "row"}, key=str)
    if extra:
        raise _Bad(
            f"unexpected field(s) {', '.join(f'`{k}`' for k in extra)} in the record",
            where=(str(extra[0]),),
            key=True,
        )
    batch, stream, row = obj["batch"], obj["stream"], obj["row"]
    if isinstance(batch, bool) or not isinstance(batch, int):
        raise _Bad(f"`batch` must be an integer, got {_show(batch)}", where=("batch",))
    if not isinstance(stream, str):
        raise _Bad(f"`stream` must be a string, got {_show(stream)}", where=("stream",))
    if not isinstance(row, dict):
        raise _Bad(f"`row` must be an object, got {_show(row)}", where=("row",))
    return batch, stream, row, False


def _convert(
    values: dict[str, Any], schema: StreamSchema, converters: list[tuple[str, Converter]]
) -> tuple[Any, ...]:
    """The row's values in schema order, converted; ``_Bad`` names the column at fault."""
    if len(values) == len(converters):
        try:
            return tuple(
                [
                    None if (value := values[column]) is None else convert(value)
                    for column, convert in converters
                ]
            )
        except (_Bad, KeyError):
            pass
    _check_names(values, schema)  # raises for an unknown or a missing column
    for column, convert in converters:  # name the column
        value = values[column]
        try:
            if value is not None:
                convert(value)
        except _Bad as err:
            raise _Bad(f"column `{column}`: {err}", where=("row", column)) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _check_names(values: dict[str, Any], schema: StreamSchema) -> None:
    unknown = [k for k in values if k not in schema.index]
    if unknown:
        missing = [c for c in schema.columns if c not in values]
        hint = did_you_mean(str(unknown[0]), missing or schema.columns)
        raise _Bad(
            f"unknown column(s) {', '.join(f'`{k}`' for k in unknown)} for "
            f"{'table' if schema.table else 'stream'} `{schema.name}` (columns: "
            f"{', '.join(schema.columns)})" + (f"; {hint}" if hint else ""),
            where=("row", str(unknown[0])),
            key=True,
        )
    for column in schema.columns:
        if column not in values:
            raise _Bad(
                f"missing column `{column}` of {'table' if schema.table else 'stream'} "
                f"`{schema.name}`",
                where=("row",),
            )
