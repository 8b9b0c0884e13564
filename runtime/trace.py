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
where it can be found, the column (1-based, in characters) of the fault in the file.  Every
value accepted can be written back: numbers beyond what Python reads or DOUBLE holds, strings
with lone surrogates and timestamps outside years 0001..9999 (UTC) are bad rows.

With ``digests=True`` each batch also gets the SHA-256 of the lines it was read from (its
good rows), which a checkpoint keeps to recognise the trace it consumed.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal, TypeAlias

from sjoin.compiler.plan import Plan
from sjoin.compiler.types import SqlType

from .errors import RunError, UsageError
from .values import MAX_TIMESTAMP_US, MIN_TIMESTAMP_US, dumps, parse_date, parse_timestamp

BadRowPolicy: TypeAlias = Literal["stop", "skip"] | str | os.PathLike[str]
Converter: TypeAlias = Callable[[Any], Any]

_INT_RANGES = {
    "tinyint": 2**7,
    "smallint": 2**15,
    "int": 2**31,
    "bigint": 2**63,
}
_NON_FINITE = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "Inf": math.inf,
    "-Infinity": -math.inf,
    "-Inf": -math.inf,
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

    def __init__(self, source: str, bad_rows: Sequence[BadRow]) -> None:
        self.source = source
        self.bad_rows = tuple(bad_rows)
        shown = "\n".join(f"  {b.located(source)}" for b in self.bad_rows[:20])
        more = len(self.bad_rows) - 20
        tail = f"\n  ... and {more} more" if more > 0 else ""
        super().__init__(
            f"{len(self.bad_rows)} bad row(s) in trace {source}:\n{shown}{tail}\n"
            "fix them, or pass --bad-rows skip (or a FILE) to run without them"
        )


@dataclass(frozen=True, slots=True)
class StreamSchema:
    name: str
    columns: tuple[str, ...]
    types: tuple[SqlType, ...]
    index: dict[str, int] = field(hash=False, compare=False)


@dataclass(slots=True)
class TraceBatch:
    """One data micro-batch of the trace: rows per stream, as tuples in declared order."""

    value: int  # the trace's own batch value: it only groups and orders rows
    rows: dict[str, list[tuple[Any, ...]]]
    first_line: int
    digest: bytes | None = None  # SHA-256 of the batch's lines (``read_trace(digests=True)``)


@dataclass(slots=True)
class Trace:
    source: str
    batches: list[TraceBatch]
    bad_rows: list[BadRow]
    # every batch was waiting when the query started (a replayed topic, `sjoin run
    # --backlog`): Spark runs them back to back, each query's no-data batches only once its
    # sources have nothing in the next batch (``query.Engine``)
    backlog: bool = False

    @property
    def row_count(self) -> int:
        return sum(len(r) for b in self.batches for r in b.rows.values())


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
    ) -> None:
        super().__init__(reason)
        self.at = at
        self.where = where
        self.key = key


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


def converter(kind: SqlType) -> Converter:
    """A function turning a JSON value into the runtime value of ``kind`` (or raising)."""
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
            return f

        return to_float
    if name == "decimal":
        precision, scale = kind.params
        quantum = Decimal(1).scaleb(-scale)

        def to_decimal(v: Any) -> Any:
            if isinstance(v, bool) or not isinstance(v, (int, float, Decimal, str)):
                raise _Bad(f"expected {kind!s} (a JSON number), got {_show(v)}")
            try:
                d = Decimal(str(v) if isinstance(v, float) else v).quantize(
                    quantum, rounding=ROUND_HALF_UP
                )
            except (InvalidOperation, ValueError):
                raise _Bad(f"expected {kind!s}, got {_show(v)}") from None
            if not d.is_finite() or (len(d.as_tuple().digits) > precision and d != 0):
                raise _Bad(f"{_number(v)} does not fit {kind!s}")
            return d

        return to_decimal
    if name in ("string", "binary"):
        what = "STRING (a JSON string)" if name == "string" else "BINARY (a JSON string)"

        def to_str(v: Any) -> Any:
            if type(v) is not str and not isinstance(v, str):
                raise _Bad(f"expected {what}, got {_show(v)}")
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError as err:
                    raise _Bad(
                        f"the string holds a lone surrogate {v[err.start]!r} at character "
                        f"{err.start + 1}, which is no Unicode character (an escape "
                        "\\uD800..\\uDFFF must be one half of a pair)"
                    ) from None
            return v

        return to_str
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
            us = parse_timestamp(v)
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


def _show(v: Any) -> str:
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
) -> Trace:
    """Read and check a whole trace (a path, or an iterable of lines, as ``str`` or
    ``bytes``, or of record dicts).

    ``bad_rows``: ``"stop"`` raises ``TraceError`` with every bad row; ``"skip"`` leaves
    them out (listed in ``Trace.bad_rows``); any other value is a path that receives one
    JSON line per bad row (rewritten on each run, so a restarted run does not repeat them).
    ``digests``: give each batch the SHA-256 of its lines (``TraceBatch.digest``).
    """
    paused = gc.isenabled()
    gc.disable()  # a large trace is millions of new tuples: collector scans cost ~40%
    try:
        trace = _read(source, schemas, bad_rows, digests)
    except OSError as err:
        raise UsageError(f"cannot read trace {source}: {err.strerror or err}") from None
    finally:
        if paused:
            gc.enable()
    return trace


class _Blank(Exception):
    """A line of nothing but JSON whitespace: not a row, not an error."""


def _read(
    source: str | os.PathLike[str] | Iterable[Any],
    schemas: Mapping[str, StreamSchema],
    bad_rows: BadRowPolicy,
    digests: bool,
) -> Trace:
    name, records = _records(source)
    converters = {
        s: [(c, converter(k)) for c, k in zip(schema.columns, schema.types, strict=True)]
        for s, schema in schemas.items()
    }
    batches: list[TraceBatch] = []
    bad: list[BadRow] = []
    current: TraceBatch | None = None
    hashers: list[Any] = []
    for number, record in enumerate(records, start=1):
        text: str | None
        if type(record) is bytes:  # a line of a file, with its b"\n"
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
        try:
            obj = record if text is None else _load(text)
            batch, stream, values = _envelope(obj)
            schema = schemas.get(stream)
            if schema is None:
                raise _Bad(
                    f"unknown stream `{stream}` (streams: {', '.join(sorted(schemas)) or 'none'})",
                    where=("stream",),
                )
            if current is not None and batch < current.value:
                raise _Bad(
                    f"batch {_number(batch)} comes after batch {_number(current.value)}: "
                    "batches must be in ascending order",
                    where=("batch",),
                )
            row = _convert(values, schema, converters[stream])
        except _Blank:
            continue
        except _Bad as err:
            bad.append(_bad_row(number, err, text, record, batch, stream))
            continue
        if current is None or batch != current.value:
            current = TraceBatch(batch, {}, number)
            batches.append(current)
            if digests:
                hashers.append(hashlib.sha256())
        current.rows.setdefault(stream, []).append(row)
        if digests:
            hashers[-1].update(_line_bytes(record))
    for b, hasher in zip(batches, hashers, strict=False):
        b.digest = hasher.digest()
    if bad:
        if bad_rows == "stop":
            raise TraceError(name, bad)
        if bad_rows != "skip":
            write_bad_rows(Path(bad_rows), bad)
    return Trace(name, batches, bad)


def write_bad_rows(path: Path, bad: Sequence[BadRow]) -> None:
    try:
        with path.open("w", encoding="utf-8", errors="backslashreplace") as out:
            for b in bad:
                out.write(dumps(b.to_json()) + "\n")
    except OSError as err:
        raise UsageError(f"cannot write the bad rows to {path}: {err.strerror or err}") from None


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


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_NON_FINITE.__getitem__)
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
        if limit and digits > limit and not any(c in token for c in ".eE"):
            return _Bad(
                f"a number of {digits} digits: more than the {limit} digits a number may have",
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


def _envelope(obj: Any) -> tuple[int, str, dict[str, Any]]:
    if type(obj) is dict and len(obj) == 3:
        batch, stream, row = obj.get("batch"), obj.get("stream"), obj.get("row")
        if type(batch) is int and type(stream) is str and type(row) is dict:
            return batch, stream, row
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
    return batch, stream, row


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
        raise _Bad(
            f"unknown column(s) {', '.join(f'`{k}`' for k in unknown)} for stream "
            f"`{schema.name}` (columns: {', '.join(schema.columns)})",
            where=("row", str(unknown[0])),
            key=True,
        )
    for column in schema.columns:
        if column not in values:
            raise _Bad(f"missing column `{column}` of stream `{schema.name}`", where=("row",))
