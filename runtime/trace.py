"""The input trace: JSON Lines of ``{"batch": 0, "stream": "s", "row": {...}}``.

Each row is checked against its stream's declared columns and converted to runtime values
(``values.py``) here, once, so the engine never meets a malformed value.  A bad row (bad
JSON, unknown stream, missing or unknown column, wrong type, unparsable timestamp, batches
out of order) becomes a ``BadRow`` carrying its line number; the caller's policy decides
whether the run stops, skips it, or also writes it to a file.  The whole trace is checked
before the first batch runs, so ``stop`` never leaves a half-written output behind.
"""

from __future__ import annotations

import gc
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal, TypeAlias

from sjoin.compiler.plan import Plan
from sjoin.compiler.types import SqlType

from .errors import RunError
from .values import dumps, parse_date, parse_timestamp

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


@dataclass(frozen=True, slots=True)
class BadRow:
    """One trace line that cannot be used, and why."""

    line: int
    reason: str
    text: str
    batch: int | None = None
    stream: str | None = None

    def describe(self) -> str:
        """``LINE: reason``, to follow ``FILE:`` as compilers print locations."""
        return f"{self.line}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
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
        shown = "\n".join(f"  {source}:{b.describe()}" for b in self.bad_rows[:20])
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


@dataclass(slots=True)
class Trace:
    source: str
    batches: list[TraceBatch]
    bad_rows: list[BadRow]

    @property
    def row_count(self) -> int:
        return sum(len(r) for b in self.batches for r in b.rows.values())


class _Bad(Exception):
    pass


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
                raise _Bad(f"{v} is out of range for {kind!s}")
            return v

        return to_int
    if name in ("double", "float"):

        def to_float(v: Any) -> Any:
            if isinstance(v, str) and v in _NON_FINITE:
                return _NON_FINITE[v]
            if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
                raise _Bad(f"expected {kind!s} (a JSON number), got {_show(v)}")
            return float(v)

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
                raise _Bad(f"{v} does not fit {kind!s}")
            return d

        return to_decimal
    if name == "string":

        def to_str(v: Any) -> Any:
            if type(v) is not str and not isinstance(v, str):
                raise _Bad(f"expected STRING (a JSON string), got {_show(v)}")
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
                    f"unparsable timestamp {v!r} (write ISO-8601, e.g. 2026-01-01T00:00:00Z)"
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
        return f"string {v!r}"
    if isinstance(v, bool):
        return f"boolean {str(v).lower()}"
    if isinstance(v, (int, float, Decimal)):
        return f"number {v}"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return repr(v)


def _records(source: str | os.PathLike[str] | Iterable[Any]) -> tuple[str, Iterable[Any]]:
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)

        def lines() -> Iterable[Any]:
            with path.open(encoding="utf-8") as handle:
                yield from handle

        return str(path), lines()
    return "<rows>", source


def read_trace(
    source: str | os.PathLike[str] | Iterable[Any],
    schemas: Mapping[str, StreamSchema],
    bad_rows: BadRowPolicy = "stop",
) -> Trace:
    """Read and check a whole trace (a path, or an iterable of lines or record dicts).

    ``bad_rows``: ``"stop"`` raises ``TraceError`` with every bad row; ``"skip"`` leaves
    them out (listed in ``Trace.bad_rows``); any other value is a path that receives one
    JSON line per bad row (rewritten on each run, so a restarted run does not repeat them).
    """
    paused = gc.isenabled()
    gc.disable()  # a large trace is millions of new tuples: collector scans cost ~40%
    try:
        trace = _read(source, schemas, bad_rows)
    finally:
        if paused:
            gc.enable()
    return trace


def _read(
    source: str | os.PathLike[str] | Iterable[Any],
    schemas: Mapping[str, StreamSchema],
    bad_rows: BadRowPolicy,
) -> Trace:
    name, records = _records(source)
    converters = {
        s: [(c, converter(k)) for c, k in zip(schema.columns, schema.types, strict=True)]
        for s, schema in schemas.items()
    }
    batches: list[TraceBatch] = []
    bad: list[BadRow] = []
    current: TraceBatch | None = None
    for number, record in enumerate(records, start=1):
        if isinstance(record, str) and not record.strip():
            continue
        batch: int | None = None
        stream: str | None = None
        try:
            obj = _load(record)
            batch, stream, values = _envelope(obj)
            schema = schemas.get(stream)
            if schema is None:
                raise _Bad(
                    f"unknown stream `{stream}` (streams: {', '.join(sorted(schemas)) or 'none'})"
                )
            if current is not None and batch < current.value:
                raise _Bad(
                    f"batch {batch} comes after batch {current.value}: "
                    "batches must be in ascending order"
                )
            row = _convert(values, schema, converters[stream])
        except _Bad as err:
            text = record.rstrip("\n") if isinstance(record, str) else _record_text(record)
            bad.append(BadRow(number, str(err), text, batch, stream))
            continue
        if current is None or batch != current.value:
            current = TraceBatch(batch, {}, number)
            batches.append(current)
        current.rows.setdefault(stream, []).append(row)
    if bad:
        if bad_rows == "stop":
            raise TraceError(name, bad)
        if bad_rows != "skip":
            write_bad_rows(Path(bad_rows), bad)
    return Trace(name, batches, bad)


def write_bad_rows(path: Path, bad: Sequence[BadRow]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for b in bad:
            out.write(dumps(b.to_json()) + "\n")


def _record_text(record: Any) -> str:
    try:
        return json.dumps(record, default=str)
    except (TypeError, ValueError):
        return repr(record)


_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_NON_FINITE.__getitem__)


def _load(record: Any) -> Any:
    if not isinstance(record, str):
        return record
    try:
        return _DECODER.decode(record)
    except (json.JSONDecodeError, KeyError, RecursionError) as err:
        raise _Bad(f"bad JSON: {err}") from None


def _envelope(obj: Any) -> tuple[int, str, dict[str, Any]]:
    if type(obj) is dict and len(obj) == 3:
        batch, stream, row = obj.get("batch"), obj.get("stream"), obj.get("row")
        if type(batch) is int and type(stream) is str and type(row) is dict:
            return batch, stream, row
    if not isinstance(obj, dict):
        raise _Bad('expected an object {"batch": N, "stream": "name", "row": {...}}')
    missing = [k for k in ("batch", "stream", "row") if k not in obj]
    if missing:
        raise _Bad(f"missing {', '.join(f'`{k}`' for k in missing)} in the trace record")
    extra = sorted(set(obj) - {"batch", "stream", "row"})
    if extra:
        raise _Bad(f"unexpected field(s) {', '.join(f'`{k}`' for k in extra)} in the record")
    batch, stream, row = obj["batch"], obj["stream"], obj["row"]
    if isinstance(batch, bool) or not isinstance(batch, int):
        raise _Bad(f"`batch` must be an integer, got {_show(batch)}")
    if not isinstance(stream, str):
        raise _Bad(f"`stream` must be a string, got {_show(stream)}")
    if not isinstance(row, dict):
        raise _Bad(f"`row` must be an object, got {_show(row)}")
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
            raise _Bad(f"column `{column}`: {err}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _check_names(values: dict[str, Any], schema: StreamSchema) -> None:
    unknown = [k for k in values if k not in schema.index]
    if unknown:
        raise _Bad(
            f"unknown column(s) {', '.join(f'`{k}`' for k in unknown)} for stream "
            f"`{schema.name}` (columns: {', '.join(schema.columns)})"
        )
    for column in schema.columns:
        if column not in values:
            raise _Bad(f"missing column `{column}` of stream `{schema.name}`")
