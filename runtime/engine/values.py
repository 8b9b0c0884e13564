"""Runtime values: how SQL values are held in rows, read from text and written as JSON.

Rows are tuples of plain Python values so that the hot loops index them cheaply:
TIMESTAMP is an ``int`` of microseconds since the epoch (UTC), DATE an ``int`` of days,
an interval an ``int`` of microseconds, a window a ``(start_us, end_us)`` tuple, DECIMAL a
``decimal.Decimal`` and the other types their obvious Python value.  Spark compares
timestamps as UTC epoch values, so no time zone ever enters the arithmetic.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, Final

EPOCH_ORDINAL: Final = date(1970, 1, 1).toordinal()
US_PER_SECOND: Final = 1_000_000
US_PER_DAY: Final = 86_400 * US_PER_SECOND

_TIMESTAMP = re.compile(
    r"""^\s*(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})
    (?:[T\ ](?P<h>\d{1,2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?)?
    \s*(?P<tz>[Zz]|UTC|[+-]\d{2}(?::?\d{2})?)?\s*$""",
    re.X | re.ASCII,
)
_DATE = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$", re.ASCII)

# The TIMESTAMPs a trace may hold: years 0001 to 9999 in UTC, Spark's range, so that every
# value read can be written back in the ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` form.
MIN_TIMESTAMP_US: Final = (date(1, 1, 1).toordinal() - EPOCH_ORDINAL) * US_PER_DAY
MAX_TIMESTAMP_US: Final = (date(9999, 12, 31).toordinal() + 1 - EPOCH_ORDINAL) * US_PER_DAY - 1


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_US: Final = timedelta(microseconds=1)


def parse_timestamp(text: str) -> int | None:
    """Microseconds since the epoch of an ISO-8601 timestamp (UTC when it has no offset),
    or None when it cannot be read.  Fractions beyond microseconds are truncated, as Spark
    keeps microseconds.  Texts of the form ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (sjoin's traces)
    reuse the value of their second once it has been parsed."""
    millis = _MILLIS_US.get(text[20:23]) if len(text) == 24 and text[23] == "Z" else None
    if millis is not None and text[19] == ".":
        base = _SECOND_US.get(text[:19])
        if base is not None:
            return base + millis
    try:
        parsed = datetime.fromisoformat(text)  # C speed for the common forms
    except ValueError:
        return _parse_timestamp_slowly(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    us = (parsed - _EPOCH) // _ONE_US
    if millis is not None and text[19] == ".":
        if len(_SECOND_US) >= 200_000:
            _SECOND_US.clear()
        _SECOND_US[text[:19]] = us - millis
    return us


# `YYYY-MM-DDTHH:MM:SS` -> µs, for texts of the form `...SS.mmmZ` already parsed once
_SECOND_US: dict[str, int] = {}
# "000".."999" -> µs: three ASCII digits, read and checked in one lookup
_MILLIS_US: Final = {f"{ms:03d}": ms * 1000 for ms in range(1000)}


def _parse_timestamp_slowly(text: str) -> int | None:
    m = _TIMESTAMP.match(text)
    if m is None:
        return None
    try:
        days = date(int(m["y"]), int(m["mo"]), int(m["d"])).toordinal() - EPOCH_ORDINAL
    except ValueError:
        return None
    hour, minute, second = int(m["h"] or 0), int(m["mi"] or 0), int(m["s"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    frac = (m["f"] or "")[:6].ljust(6, "0")
    offset_s = 0
    tz = m["tz"]
    if tz and tz[0] in "+-":
        digits = tz[1:].replace(":", "")
        oh, om = int(digits[:2]), int(digits[2:4] or 0)
        if oh > 18 or om > 59:
            return None
        offset_s = (oh * 3600 + om * 60) * (1 if tz[0] == "+" else -1)
    seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_s
    return seconds * US_PER_SECOND + int(frac)


# A TIMESTAMP as a trace may write it (docs/testing.md, "Values"): the forms both sjoin and
# Spark's JSON reader read, to the same instant, whatever Python runs it (``fromisoformat``
# reads other forms, and more of them in each Python version, so it is not used here)
_WS = r"[ \t\n\r\f\v]*"
_TRACE_TIMESTAMP = re.compile(
    rf"""{_WS}(?P<y>[0-9]{{4}})-(?P<mo>[0-9]{{1,2}})-(?P<d>[0-9]{{1,2}})
    (?:[T\ ](?P<h>[0-9]{{1,2}}):(?P<mi>[0-9]{{2}})
        (?::(?P<s>[0-9]{{2}})(?:\.(?P<f>[0-9]+))?
            {_WS}(?P<tz>Z|UTC|(?P<sign>[+-])(?P<oh>[0-9]{{2}})
                (?:(?P<om>[0-9]{{2}})|:(?P<om2>[0-9]{{2}})(?::(?P<os>[0-9]{{2}}))?)?)?
        )?
    )?{_WS}""",
    re.X,
)
_MAX_OFFSET_S: Final = 18 * 3600  # java.time's ZoneOffset range, which Spark's reader keeps
# `YYYY-MM-DDTHH:MM:SS` -> µs, for canonical texts (`...SSZ`, `...SS.mmmZ`) read once
_TRACE_SECOND_US: dict[str, int] = {}


def parse_trace_timestamp(text: str) -> int | None:
    """Microseconds since the epoch of a trace's TIMESTAMP text, or None when the text is
    not one: ``YYYY-M[M]-D[D]`` (midnight), optionally followed by ``T`` or a space and
    ``H[H]:MM`` or ``H[H]:MM:SS[.fraction]``; after seconds, optionally a zone (``Z``,
    ``UTC``, ``+HH``, ``+HHMM``, ``+HH:MM``, ``+HH:MM:SS`` or with ``-``, at most 18 hours),
    which spaces may precede; ASCII digits; ASCII white space around.  UTC when no zone is
    given; digits beyond microseconds are dropped, as Spark does.  The range of years is
    the caller's to check.  Canonical texts (``...SSZ``, ``...SS.mmmZ``) reuse the value of
    their second once it has been read."""
    n = len(text)
    if (n == 24 and text[19] == "." and text[23] == "Z") or (n == 20 and text[19] == "Z"):
        base = _TRACE_SECOND_US.get(text[:19])
        if base is not None:
            if n == 20:
                return base
            millis = _MILLIS_US.get(text[20:23])
            if millis is not None:
                return base + millis
    m = _TRACE_TIMESTAMP.fullmatch(text)
    if m is None:
        return None
    try:
        days = date(int(m["y"]), int(m["mo"]), int(m["d"])).toordinal() - EPOCH_ORDINAL
    except ValueError:  # year 0, month 13, February 30, ...
        return None
    hour, minute, second = int(m["h"] or 0), int(m["mi"] or 0), int(m["s"] or 0)
    if hour > 23 or minute > 59 or second > 59:  # no 24:00, no leap second
        return None
    offset_s = 0
    if m["sign"]:
        minutes = m["om"] or m["om2"] or "0"
        oh, om, os_ = int(m["oh"]), int(minutes), int(m["os"] or 0)
        offset_s = oh * 3600 + om * 60 + os_
        if om > 59 or os_ > 59 or offset_s > _MAX_OFFSET_S:
            return None
        if m["sign"] == "-":
            offset_s = -offset_s
    whole = (days * 86_400 + hour * 3600 + minute * 60 + second - offset_s) * US_PER_SECOND
    fraction = m["f"]
    if m.end("s") == 19 and offset_s == 0:
        # the first 19 characters end with the seconds: they name this UTC second in any
        # text that adds `Z` or `.mmmZ` to them (the fast path above)
        if len(_TRACE_SECOND_US) >= 200_000:
            _TRACE_SECOND_US.clear()
        _TRACE_SECOND_US[text[:19]] = whole
    return whole + (int(fraction[:6].ljust(6, "0")) if fraction else 0)


def parse_date(text: str) -> int | None:
    """Days since the epoch of ``YYYY-MM-DD``, or None."""
    m = _DATE.match(text)
    if m is None:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3])).toordinal() - EPOCH_ORDINAL
    except ValueError:
        return None


_SECOND_TEXT: dict[int, str] = {}


def format_timestamp(us: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``: the output form of a TIMESTAMP.  The text up to
    the second is cached: output rows of a stream join share few distinct seconds."""
    seconds, micros = divmod(us, US_PER_SECOND)
    text = _SECOND_TEXT.get(seconds)
    if text is None:
        text = _second_text(seconds)
    if micros:
        return f"{text}.{micros:06d}Z"
    return text + "Z"


def _second_text(seconds: int) -> str:
    days, rem = divmod(seconds, 86_400)
    hh, rest = divmod(rem, 3600)
    mm, ss = divmod(rest, 60)
    text = f"{_iso_date(days)}T{hh:02d}:{mm:02d}:{ss:02d}"
    if len(_SECOND_TEXT) >= 200_000:
        _SECOND_TEXT.clear()
    _SECOND_TEXT[seconds] = text
    return text


def format_watermark(ms: int) -> str:
    """A watermark as progress prints it: ``1970-01-01T00:01:30Z``, with ``.mmm`` only when
    the milliseconds are not zero (the language brief's form of Spark's ``...SS.SSS'Z'``)."""
    days, rem = divmod(ms, 86_400_000)
    seconds, millis = divmod(rem, 1000)
    hh, rest = divmod(seconds, 3600)
    mm, ss = divmod(rest, 60)
    text = f"{_iso_date(days)}T{hh:02d}:{mm:02d}:{ss:02d}"
    return f"{text}.{millis:03d}Z" if millis else f"{text}Z"


def format_date(days: int) -> str:
    return _iso_date(days)


def _iso_date(days: int) -> str:
    """``YYYY-MM-DD`` of a day count since the epoch.  A trace's values stay within years
    0001..9999, but arithmetic on them may leave that range; such a date is written in
    ISO 8601's expanded form, as ``java.time`` prints it (``+10000-01-01``, ``-0001-12-31``),
    rather than fail the run."""
    try:
        return date.fromordinal(EPOCH_ORDINAL + days).isoformat()
    except (ValueError, OverflowError):
        pass
    # days -> proleptic Gregorian (year, month, day): H. Hinnant's civil_from_days
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    sign = "+" if year > 9999 else "-" if year < 0 else ""
    return f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"


def json_converter(kind: str) -> Any:
    """A function making a JSON-ready value of SQL type ``kind``, or None when the runtime
    value already is one."""
    if kind == "timestamp":
        return format_timestamp
    if kind == "window":
        return lambda v: {"start": format_timestamp(v[0]), "end": format_timestamp(v[1])}
    if kind == "date":
        return format_date
    return None


_FAST = json.JSONEncoder(ensure_ascii=False, allow_nan=False)


def dumps(value: Any) -> str:
    """JSON text with Python's default separators; decimals keep their exact digits and
    non-finite doubles are written as Spark's JSON writes them (``"NaN"``, ``"Infinity"``)."""
    try:
        return _FAST.encode(value)  # C speed; decimals and NaN take the path below
    except (TypeError, ValueError):
        return _dumps(value)


def dumps_indented(value: Any, indent: int = 2) -> str:
    """JSON text laid out as ``json.dumps(value, indent=indent, sort_keys=True)`` lays it out
    (a command's ``--format json`` document), its values written as ``dumps`` writes them: a
    row's DECIMAL as its exact digits, as `run` writes it, not a string."""
    try:
        return json.dumps(value, indent=indent, sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):  # decimals and NaN take the path below
        return _indented(value, indent, 0)


def _indented(value: Any, indent: int, level: int) -> str:
    inner, outer = " " * (indent * (level + 1)), " " * (indent * level)
    if isinstance(value, dict) and value:
        pairs = sorted(((str(k), v) for k, v in value.items()), key=lambda kv: kv[0])
        fields = (f"{inner}{_dumps(k)}: {_indented(v, indent, level + 1)}" for k, v in pairs)
        return "{\n" + ",\n".join(fields) + "\n" + outer + "}"
    if isinstance(value, (list, tuple)) and value:
        elements = (f"{inner}{_indented(v, indent, level + 1)}" for v in value)
        return "[\n" + ",\n".join(elements) + "\n" + outer + "]"
    return _dumps(value)


def _dumps(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return '"NaN"'
        if math.isinf(value):
            return '"Infinity"' if value > 0 else '"-Infinity"'
        return repr(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_dumps(str(k))}: {_dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_dumps(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
