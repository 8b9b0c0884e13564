"""A Kafka record's value read as the generated job reads it: ``from_json`` (or, for
``format = 'csv'``, ``from_csv``) on ``CAST(value AS STRING)`` with the stream's schema, in
Spark's default PERMISSIVE mode.

What Spark's job makes of a value, checked on Spark 4.3
(``tests/runtime/io/test_kafka_values_vs_spark.py`` runs every case of
``tests/runtime/io/test_kafka_values.py`` through real ``from_json`` and ``from_csv``):

* a field the record lacks is null, a field the stream does not declare is ignored, names
  match exactly: that is how the job reads JSON (Spark's own ``to_json`` leaves null fields
  out), and the replay reads it so too;
* a value that does not parse as JSON (or a JSON array, number, string or null), an empty
  value and a record without a value (a tombstone) become a row of nulls;
* a field of the wrong type (``"5"`` for a BIGINT, ``5.0`` for an INT, an integer out of
  range, an unreadable timestamp) becomes null while the other fields keep their values;
  STRING takes any JSON value as its text; TIMESTAMP takes an integer as seconds since the
  epoch; DOUBLE takes ``"NaN"``, ``"Infinity"``, ``"+INF"``, ``"-INF"``, ... and a number too
  large for a double as an infinity; DECIMAL takes a string of digits (commas are dropped)
  and rounds half up to its scale, or is null when the value does not fit;
* text after the first JSON object is ignored.

A stream may read columns from the record rather than its value (``timestamp_column``,
``key_column``): Spark's ``timestamp`` column is the record's timestamp in milliseconds (of
either timestamp type, CreateTime or LogAppendTime), and ``CAST(key AS STRING)`` the key's
UTF-8 text, null for a record without a key (checked on Spark 4.3 with a broker,
``tests/integration/kafka/test_record_columns.py``); the value then holds the other columns only.

The replay reads a value exactly when it knows what Spark reads.  Every value that Spark
reads with a fault (the nulls above, text after the object) or that the replay cannot read
as Spark would (a timestamp in another form than ISO-8601, a JSON number for a STRING column,
a quoted CSV field, ...) raises ``RecordFault``: the runtime's bad-row machinery reports it
with the record's topic, partition and offset (``--bad-rows stop|skip|FILE``).  The fault
says what Spark's job reads (``partial``: the row with None where Spark reads null, and
``unknown``: the columns whose value the replay cannot tell).
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any, Literal, Protocol, TypeAlias
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ...compiler.vocabulary.types import SqlType
from ..engine.values import EPOCH_ORDINAL, MAX_TIMESTAMP_US, MIN_TIMESTAMP_US, US_PER_SECOND
from ..errors import UsageError
from .trace import StreamSchema

Payload: TypeAlias = Literal["json", "csv"]
ValueReader: TypeAlias = Callable[[bytes | None], tuple[Any, ...]]

__all__ = ["Payload", "RecordFault", "RecordReader", "record_reader", "session_zone"]

# what Spark's job reads for a value it cannot read at all (the stream's value columns null)
_ROW_OF_NULLS = "Spark's job reads it as a row of nulls"
_MS_US = 1000


class RecordReader(Protocol):
    """A record (its value, key and timestamp in ms) -> the stream's row as Spark's job
    reads it; ``RecordFault`` for a record read with a fault."""

    def __call__(
        self, value: bytes | None, key: bytes | None = None, timestamp: int | None = None
    ) -> tuple[Any, ...]: ...


_INT_BOUNDS = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": 2**63}
# the strings Spark's JSON reader takes as non-finite DOUBLE / FLOAT values
_JSON_NON_FINITE = {
    "NaN": math.nan,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "+INF": math.inf,
    "-Infinity": -math.inf,
    "-INF": -math.inf,
}
# and Spark's CSV reader (its nanValue, positiveInf and negativeInf, then Java's parseDouble)
_CSV_NON_FINITE = {
    "NaN": math.nan,
    "Inf": math.inf,
    "-Inf": -math.inf,
    "Infinity": math.inf,
    "+Infinity": math.inf,
    "-Infinity": -math.inf,
}
_DECIMAL_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_INT_TEXT = re.compile(r"[+-]?[0-9]+", re.ASCII)
# the ISO-8601 forms whose value the replay and Spark agree on (Spark reads more forms, and
# none of these differently): date, optional time (minutes, seconds, 1-9 fraction digits),
# optional zone (Z, UTC, +HH, +HHMM, +HH:MM); no zone: the session time zone
_TIMESTAMP = re.compile(
    r"\s*([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?"
    r"(Z| ?UTC|[+-][0-9]{2}(?::?[0-9]{2})?)?)?\s*",
    re.ASCII,
)
_DATE = re.compile(r"\s*([0-9]{4})-([0-9]{2})-([0-9]{2})\s*", re.ASCII)
_WIDE = Context(prec=1000, rounding=ROUND_HALF_UP)
_DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=lambda c: _JSON_NON_FINITE[c])
_JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


class RecordFault(Exception):
    """A record Spark's job reads with a fault, or that the replay cannot read as Spark
    would.  ``partial`` is the row Spark's job reads where the replay knows it (None for
    every column Spark reads as null, and for the ``unknown`` ones)."""

    def __init__(
        self, reason: str, partial: tuple[Any, ...], unknown: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.partial = partial
        self.unknown = unknown


class _Column(Exception):
    """A column's value Spark reads as null (``known``) or the replay cannot tell."""

    def __init__(self, reason: str, known: bool = True) -> None:
        super().__init__(reason)
        self.known = known


Convert: TypeAlias = Callable[[Any], Any]


def session_zone(name: str) -> tzinfo:
    """The time zone of a zone-less timestamp: the spec's ``session_timezone`` (Spark's
    ``spark.sql.session.timeZone``), a region such as ``Europe/Paris`` or an offset."""
    text = name.strip()
    if text.upper() in ("UTC", "GMT", "UT", "Z"):
        return UTC
    m = re.fullmatch(r"(?:UTC|GMT|UT)?([+-])([0-9]{1,2})(?::?([0-9]{2}))?", text, re.ASCII)
    if m is not None:
        minutes = int(m[2]) * 60 + int(m[3] or 0)
        if minutes <= 18 * 60:
            sign = 1 if m[1] == "+" else -1
            return timezone(timedelta(minutes=sign * minutes))
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(
            f"session_timezone {name!r} is not a time zone the replay knows; use a region "
            "such as 'Europe/Paris' or an offset such as '+01:00'"
        ) from None


def record_reader(
    schema: StreamSchema,
    payload: Payload,
    zone: tzinfo = UTC,
    record_columns: Mapping[str, Literal["timestamp", "key"]] | None = None,
) -> RecordReader:
    """A function from a record (its value: bytes, or None for a tombstone; its key; its
    timestamp in ms) to the stream's row, as Spark's job reads it; ``RecordFault`` for a
    record read with a fault.  ``record_columns`` (``Format.record_columns``) maps columns to
    the record's ``timestamp`` (Spark's ``timestamp`` column: the record's milliseconds, as
    microseconds, whatever its timestamp type) or ``key`` (``CAST(key AS STRING)``: UTF-8
    text, null for no key); the other columns come from the value as Spark parses it."""
    mapped = dict(record_columns or {})
    if not mapped:
        read_value = _value_reader(schema, payload, zone)

        def read_plain(
            value: bytes | None, key: bytes | None = None, timestamp: int | None = None
        ) -> tuple[Any, ...]:
            return read_value(value)

        return read_plain
    places = [i for i, c in enumerate(schema.columns) if c not in mapped]
    value_schema = StreamSchema(
        schema.name,
        tuple(schema.columns[i] for i in places),
        tuple(schema.types[i] for i in places),
        {schema.columns[i]: n for n, i in enumerate(places)},
    )
    from_value = _value_reader(value_schema, payload, zone) if places else None
    shown = ", ".join(f"`{schema.columns[i]}`" for i in places)
    whole = f"Spark's job reads the columns of its value ({shown}) as null"
    fields = [(schema.index[c], c, field) for c, field in mapped.items()]
    width = len(schema.columns)

    def read(
        value: bytes | None, key: bytes | None = None, timestamp: int | None = None
    ) -> tuple[Any, ...]:
        row: list[Any] = [None] * width
        fault: RecordFault | None = None
        if from_value is not None:
            try:
                part = from_value(value)
            except RecordFault as err:
                fault, part = err, err.partial
            for i, v in zip(places, part, strict=True):
                row[i] = v
        faults: list[tuple[str, _Column]] = []
        for i, name, field in fields:
            try:
                row[i] = _record_key(key) if field == "key" else _record_time(timestamp)
            except _Column as err:
                faults.append((name, err))
        if fault is None and not faults:
            return tuple(row)
        reasons = [fault.reason.replace(_ROW_OF_NULLS, whole)] if fault is not None else []
        unknown = set(fault.unknown) if fault is not None else set()
        reasons += [f"column `{name}`: {err}" for name, err in faults]
        unknown.update(name for name, err in faults if not err.known)
        raise RecordFault("; ".join(reasons), tuple(row), frozenset(unknown))

    return read


def _record_key(key: bytes | None) -> str | None:
    """``CAST(key AS STRING)``: the key's UTF-8 text, null for a record without a key."""
    if key is None:
        return None
    try:
        return key.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _Column(
            f"the record's key is not UTF-8 (byte {err.start}): Spark's job reads its bytes as "
            "they are, which the replay does not",
            known=False,
        ) from None


def _record_time(timestamp: int | None) -> int | None:
    """Spark's ``timestamp`` column: the record's milliseconds as microseconds."""
    if timestamp is None:
        return None
    us = timestamp * _MS_US
    if not MIN_TIMESTAMP_US <= us <= MAX_TIMESTAMP_US:
        raise _Column(
            f"the record's timestamp ({timestamp} ms) is outside the TIMESTAMP range "
            "the replay reads",
            known=False,
        )
    return us


def _value_reader(schema: StreamSchema, payload: Payload, zone: tzinfo) -> ValueReader:
    """A function from a record's value (bytes, or None for a tombstone) to the row of
    ``schema``'s columns, as Spark's job reads it; ``RecordFault`` for a value read with a
    fault."""
    columns = schema.columns
    nulls = (None,) * len(columns)
    if payload == "json":
        converters = [_json_converter(kind, zone) for kind in schema.types]
        pairs = list(zip(columns, converters, strict=True))

        def read_json(value: bytes | None) -> tuple[Any, ...]:
            obj, rest = _json_object(_text(value, columns), columns)
            present = 0
            row: list[Any] = []
            faults: list[tuple[str, _Column]] = []
            for name, convert in pairs:
                item = obj.get(name)
                if name in obj:
                    present += 1
                if item is None:
                    row.append(None)
                    continue
                try:
                    row.append(convert(item))
                except _Column as err:
                    row.append(None)
                    faults.append((name, err))
            if not present:
                raise RecordFault(
                    f"the object has none of the columns of stream `{schema.name}` "
                    f"({', '.join(columns)}): " + _ROW_OF_NULLS,
                    nulls,
                )
            if rest:
                faults.insert(
                    0,
                    (
                        "",
                        _Column(
                            f"text after the JSON object ({_brief(rest)}): Spark's job reads "
                            "the first object and ignores the rest"
                        ),
                    ),
                )
            if faults:
                raise _row_fault(faults, tuple(row))
            return tuple(row)

        return read_json
    converters = [_csv_converter(kind, zone) for kind in schema.types]

    def read_csv(value: bytes | None) -> tuple[Any, ...]:
        text = _text(value, columns)
        if not text:
            raise RecordFault("the value is empty: " + _ROW_OF_NULLS, nulls)
        if any(c in text for c in '"\\\r\n'):
            raise RecordFault(
                "a quote, backslash or line break in a CSV value: the replay reads plain "
                "comma-separated fields only (Spark's CSV parser has its own rules for them)",
                nulls,
                frozenset(columns),
            )
        fields = text.split(",")
        row: list[Any] = []
        faults: list[tuple[str, _Column]] = []
        for index, (name, convert) in enumerate(zip(columns, converters, strict=True)):
            field = fields[index] if index < len(fields) else ""
            if field == "":  # CSV's null (Spark's nullValue)
                row.append(None)
                continue
            try:
                row.append(convert(field))
            except _Column as err:
                row.append(None)
                faults.append((name, err))
        if len(fields) != len(columns):
            what = (
                "Spark's job reads the missing columns as null"
                if len(fields) < len(columns)
                else "Spark's job ignores the extra ones"
            )
            count = (
                f"the value has {len(fields)} field(s) but stream `{schema.name}` reads "
                f"{len(columns)} column(s) from it: {what}"
            )
            faults.insert(0, ("", _Column(count)))
        if faults:
            raise _row_fault(faults, tuple(row))
        return tuple(row)

    return read_csv


def _text(value: bytes | None, columns: tuple[str, ...]) -> str:
    nulls = (None,) * len(columns)
    if value is None:
        raise RecordFault(
            "a record without a value (a tombstone): " + _ROW_OF_NULLS,
            nulls,
        )
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RecordFault(
            f"the value is not UTF-8 (byte {err.start}): Spark's job reads it with U+FFFD "
            "in place of the bad bytes, which the replay does not",
            nulls,
            frozenset(columns),
        ) from None


def _json_object(text: str, columns: tuple[str, ...]) -> tuple[dict[str, Any], str]:
    """The record's JSON object and the text after it (which Spark ignores)."""
    nulls = (None,) * len(columns)
    body = text.lstrip(" \t\r\n")
    if not body:
        raise RecordFault("the value is empty: " + _ROW_OF_NULLS, nulls)
    try:
        obj, end = _DECODER.raw_decode(body)
    except json.JSONDecodeError as err:
        at = body[err.pos : err.pos + 4]
        if at.startswith(("'", "+I", "INF", "-INF")):
            raise RecordFault(
                f"JSON the replay does not read ({err.msg} at character "
                f"{len(text) - len(body) + err.pos + 1}): Spark's from_json also reads "
                "single-quoted strings and +Infinity, INF, -INF",
                nulls,
                frozenset(columns),
            ) from None
        raise RecordFault(
            f"bad JSON: {err.msg} at character {len(text) - len(body) + err.pos + 1}: "
            + _ROW_OF_NULLS,
            nulls,
        ) from None
    except (RecursionError, ValueError, ArithmeticError):
        raise RecordFault(
            "JSON the replay cannot read (nested too deeply, or a number too long)",
            nulls,
            frozenset(columns),
        ) from None
    if type(obj) is not dict:
        kind = _JSON_KINDS.get(type(obj), "a number")
        raise RecordFault(
            f"the value is {kind}, not a JSON object: " + _ROW_OF_NULLS,
            nulls,
        )
    return obj, body[end:].strip(" \t\r\n")


def _row_fault(faults: list[tuple[str, _Column]], row: tuple[Any, ...]) -> RecordFault:
    parts = [f"column `{name}`: {err}" if name else str(err) for name, err in faults]
    nulled = [name for name, err in faults if name and err.known]
    unknown = frozenset(name for name, err in faults if name and not err.known)
    tail = f"; Spark's job reads {_columns(nulled)} as null" if nulled else ""
    return RecordFault("; ".join(parts) + tail, row, unknown)


def _columns(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)


def _brief(text: str, limit: int = 40) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def _show(v: Any) -> str:
    if isinstance(v, bool):
        return f"boolean {str(v).lower()}"
    if isinstance(v, str):
        return f"string {_brief(v)}"
    if isinstance(v, (int, float, Decimal)):
        return f"number {_brief(str(v))}"
    return _JSON_KINDS.get(type(v), "an object")


# ----------------------------------------------------------------------------- JSON values


def _json_converter(kind: SqlType, zone: tzinfo) -> Convert:
    name = kind.name
    if name in _INT_BOUNDS:
        bound = _INT_BOUNDS[name]

        def to_int(v: Any) -> Any:
            if type(v) is int:
                if -bound <= v < bound:
                    return v
                raise _Column(f"{v} is out of range for {kind}")
            raise _Column(f"expected {kind} (a JSON integer), got {_show(v)}")

        return to_int
    if name in ("double", "float"):
        single = name == "float"

        def to_float(v: Any) -> Any:
            if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool):
                return _narrow(_as_float(v), single)
            if isinstance(v, str) and v in _JSON_NON_FINITE:
                return _JSON_NON_FINITE[v]
            raise _Column(f"expected {kind} (a JSON number), got {_show(v)}")

        return to_float
    if name == "decimal":
        to_decimal = _decimal(kind)

        def to_json_decimal(v: Any) -> Any:
            if isinstance(v, (int, Decimal)) and not isinstance(v, bool):
                return to_decimal(Decimal(v))
            if isinstance(v, float):  # NaN or an infinity
                raise _Column(f"{kind} cannot hold {v}")
            if isinstance(v, str):
                return to_decimal(_decimal_text(v, kind))
            raise _Column(f"expected {kind} (a JSON number), got {_show(v)}")

        return to_json_decimal
    if name == "string":

        def to_str(v: Any) -> Any:
            if isinstance(v, str):
                return _unicode(v)
            if isinstance(v, bool):
                return "true" if v else "false"
            if type(v) is int:
                return str(v)
            raise _Column(
                f"{_show(v)} for a STRING column: Spark's job reads it as its JSON text, "
                "which the replay does not reproduce",
                known=False,
            )

        return to_str
    if name == "boolean":

        def to_bool(v: Any) -> Any:
            if isinstance(v, bool):
                return v
            raise _Column(f"expected BOOLEAN (true or false), got {_show(v)}")

        return to_bool
    if name == "timestamp":
        from_text = _timestamp(zone)

        def to_timestamp(v: Any) -> Any:
            if isinstance(v, str):
                return from_text(v)
            if type(v) is int:  # seconds since the epoch, as Spark reads an integer
                us = v * US_PER_SECOND
                if MIN_TIMESTAMP_US <= us <= MAX_TIMESTAMP_US:
                    return us
                raise _Column(
                    f"{v} seconds since the epoch is outside the years 0001 to 9999 that the "
                    "runtime holds",
                    known=False,
                )
            raise _Column(
                f"expected TIMESTAMP (an ISO-8601 string or seconds since the epoch), got "
                f"{_show(v)}"
            )

        return to_timestamp
    if name == "date":

        def to_date(v: Any) -> Any:
            if isinstance(v, str):
                return _date(v)
            raise _Column(f"expected DATE (a string YYYY-MM-DD), got {_show(v)}")

        return to_date
    return _unreadable(kind)


def _unreadable(kind: SqlType) -> Convert:
    def unreadable(v: Any) -> Any:
        raise _Column(
            f"the replay does not read {kind} values (Spark's job decodes them its own way)",
            known=False,
        )

    return unreadable


def _as_float(v: int | float | Decimal) -> float:
    try:
        return float(v)
    except OverflowError:  # an integer beyond a double: Java reads an infinity
        return math.inf if v > 0 else -math.inf


def _narrow(f: float, single: bool) -> float:
    """A FLOAT holds what Java's ``float`` does: the nearest single-precision value (an
    infinity beyond the largest one)."""
    if not single:
        return f
    try:
        return float(struct.unpack("f", struct.pack("f", f))[0])
    except OverflowError:
        return math.copysign(math.inf, f)


def _unicode(v: str) -> str:
    if not v.isascii():
        try:
            v.encode("utf-8")
        except UnicodeEncodeError as err:
            raise _Column(
                f"the string holds a lone surrogate at character {err.start + 1}, which "
                "Spark's job turns into another character",
                known=False,
            ) from None
    return v


def _decimal(kind: SqlType) -> Callable[[Decimal], Decimal]:
    precision, scale = kind.params
    quantum = Decimal(1).scaleb(-scale)

    def fit(d: Decimal) -> Decimal:
        try:
            q = d.quantize(quantum, context=_WIDE)
        except InvalidOperation:
            q = None
        if q is None or not q.is_finite() or (len(q.as_tuple().digits) > precision and q != 0):
            raise _Column(f"{_brief(str(d))} does not fit {kind}")
        return q

    return fit


def _decimal_text(text: str, kind: SqlType) -> Decimal:
    """A string for a DECIMAL as Spark's (US-locale) decimal parser reads it: commas dropped,
    then Java's ``BigDecimal``."""
    plain = text.replace(",", "")
    if _DECIMAL_TEXT.fullmatch(plain):
        return Decimal(plain)
    raise _Column(f"expected {kind}, got {_show(text)}", known=text.isascii())


def _timestamp(zone: tzinfo) -> Callable[[str], int]:
    def from_text(text: str) -> int:
        m = _TIMESTAMP.fullmatch(text)
        if m is None:
            if not text.strip():
                raise _Column("an empty string for a TIMESTAMP")
            raise _Column(
                f"timestamp {_brief(text)} is not in an ISO-8601 form the replay reads "
                "(YYYY-MM-DD[THH:MM[:SS[.fff]]][Z|UTC|+HH:MM]): Spark's job reads it as null, "
                "or as a time for some other forms",
                known=False,
            )
        year, month, day, hour, minute, second, fraction, offset = m.groups()
        try:
            local = datetime(
                int(year),
                int(month),
                int(day),
                int(hour or 0),
                int(minute or 0),
                int(second or 0),
                int((fraction or "")[:6].ljust(6, "0")),
            )
        except ValueError as err:
            raise _Column(f"timestamp {_brief(text)}: {err}", known=False) from None
        if offset is None:
            moment = local.replace(tzinfo=zone)
        else:
            moment = local.replace(tzinfo=_offset(offset, text))
        us = _micros(moment)
        if not MIN_TIMESTAMP_US <= us <= MAX_TIMESTAMP_US:
            raise _Column(
                f"timestamp {_brief(text)} is outside the years 0001 to 9999 (UTC) that the "
                "runtime holds",
                known=False,
            )
        return us

    return from_text


def _offset(text: str, value: str) -> tzinfo:
    if text.strip() in ("Z", "UTC"):
        return UTC
    digits = text[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:4] or 0)
    if minutes > 18 * 60 or int(digits[2:4] or 0) > 59:
        raise _Column(f"timestamp {_brief(value)} has an offset beyond 18 hours", known=False)
    return timezone(timedelta(minutes=minutes if text[0] == "+" else -minutes))


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(moment: datetime) -> int:
    try:
        return (moment - _EPOCH) // timedelta(microseconds=1)
    except OverflowError:  # pragma: no cover - datetime's range is years 1..9999
        return MAX_TIMESTAMP_US + 1


def _date(text: str) -> int:
    m = _DATE.fullmatch(text)
    if m is None:
        if not text.strip():
            raise _Column("an empty string for a DATE")
        raise _Column(
            f"date {_brief(text)} is not in the form YYYY-MM-DD the replay reads: Spark's job "
            "reads it as null, or as a date for some other forms",
            known=False,
        )
    try:
        return datetime(int(m[1]), int(m[2]), int(m[3])).toordinal() - EPOCH_ORDINAL
    except ValueError as err:
        raise _Column(f"date {_brief(text)}: {err}", known=False) from None


# ------------------------------------------------------------------------------ CSV values


def _csv_converter(kind: SqlType, zone: tzinfo) -> Convert:
    name = kind.name
    if name in _INT_BOUNDS:
        bound = _INT_BOUNDS[name]

        def to_int(text: str) -> Any:
            if not _INT_TEXT.fullmatch(text):
                raise _Column(f"expected {kind}, got {_brief(text)}", known=text.isascii())
            v = int(text)
            if not -bound <= v < bound:
                raise _Column(f"{text} is out of range for {kind}")
            return v

        return to_int
    if name in ("double", "float"):
        single = name == "float"

        def to_float(text: str) -> Any:
            if text in _CSV_NON_FINITE:
                return _CSV_NON_FINITE[text]
            if _DECIMAL_TEXT.fullmatch(text):
                return _narrow(_as_float(Decimal(text)), single)
            raise _Column(
                f"expected {kind}, got {_brief(text)}: Spark's job reads it as null unless "
                "Java reads it as a number",
                known=False,
            )

        return to_float
    if name == "decimal":
        to_decimal = _decimal(kind)
        return lambda text: to_decimal(_decimal_text(text, kind))
    if name == "string":
        return _unicode
    if name == "boolean":

        def to_bool(text: str) -> Any:
            word = text.lower()
            if word in ("true", "false"):
                return word == "true"
            raise _Column(f"expected BOOLEAN (true or false), got {_brief(text)}")

        return to_bool
    if name == "timestamp":
        return _timestamp(zone)
    if name == "date":
        return _date
    return _unreadable(kind)
