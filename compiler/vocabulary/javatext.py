"""Java's datetime patterns, regular expressions and replacement strings, as Spark reads them.

Spark's ``date_format``, ``split``, ``regexp_extract`` and ``regexp_replace`` take these as
text.  They are parsed here, once: the binder rejects, with the spec's location, what the
runtime could not run exactly as Spark does, and the runtime runs what the binder accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from . import javaregex

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MONTHS: Final = ("January", "February", "March", "April", "May", "June", "July", "August",
                  "September", "October", "November", "December")  # fmt: skip
_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DIGITS: Final = "0123456789"

# letter -> the largest count Spark's DateTimeFormatter accepts that sjoin renders
_LETTERS: Final[dict[str, int]] = {
    "y": 9, "M": 4, "L": 4, "d": 2, "D": 3, "H": 2, "h": 2, "k": 2, "K": 2, "m": 2, "s": 2,
    "S": 9, "a": 1, "E": 4, "G": 3, "Q": 2, "q": 2, "z": 3, "X": 3,
}  # fmt: skip
DATE_PATTERN_LETTERS: Final = "".join(_LETTERS)


class PatternError(ValueError):
    """Text Spark would reject, or that sjoin cannot run exactly as Spark does (raised by
    the regex engine too, ``javaregex.py``: one class)."""


Field = Callable[[datetime], str]


def _text(value: str) -> Field:
    return lambda t: value


def _number(get: Callable[[datetime], int], count: int) -> Field:
    return lambda t: str(get(t)).zfill(count)


def _field(letter: str, count: int) -> Field:
    if letter == "y":
        if count == 2:
            return lambda t: str(t.year % 100).zfill(2)
        return _number(lambda t: t.year, count)
    if letter in "ML":
        if count == 3:
            return lambda t: _MONTHS[t.month - 1][:3]
        if count == 4:
            return lambda t: _MONTHS[t.month - 1]
        return _number(lambda t: t.month, count)
    if letter == "E":
        return (lambda t: _DAYS[t.weekday()]) if count == 4 else (lambda t: _DAYS[t.weekday()][:3])
    if letter == "S":
        return lambda t: str(t.microsecond).zfill(6).ljust(9, "0")[:count]
    simple: dict[str, Callable[[datetime], int]] = {
        "d": lambda t: t.day,
        "D": lambda t: t.timetuple().tm_yday,
        "H": lambda t: t.hour,
        "h": lambda t: (t.hour % 12) or 12,
        "k": lambda t: t.hour or 24,
        "K": lambda t: t.hour % 12,
        "m": lambda t: t.minute,
        "s": lambda t: t.second,
        "Q": lambda t: (t.month - 1) // 3 + 1,
        "q": lambda t: (t.month - 1) // 3 + 1,
    }
    if letter in simple:
        return _number(simple[letter], count)
    text: dict[str, str | Callable[[datetime], str]] = {
        "a": lambda t: "AM" if t.hour < 12 else "PM",
        "G": "AD",
        "z": "UTC",  # sjoin runs in UTC, as the generated jobs set spark.sql.session.timeZone
        "X": "Z",
    }
    found = text[letter]
    return found if callable(found) else _text(found)


@dataclass(frozen=True, slots=True)
class DatePattern:
    """A parsed ``date_format`` pattern: render a timestamp (µs since the epoch, UTC)."""

    fields: tuple[Field, ...]

    def format(self, micros: int) -> str:
        moment = _EPOCH + timedelta(microseconds=micros)
        return "".join(f(moment) for f in self.fields)


@cache
def date_pattern(text: str) -> DatePattern:
    """Parse a Spark datetime pattern (the letters of Spark's datetime pattern guide)."""
    fields: list[Field] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise PatternError(f"the quote at position {i + 1} is never closed")
            literal = text[i + 1 : end] or "'"  # '' is one quote
            fields.append(_text(literal))
            i = end + 1
            continue
        if c.isascii() and c.isalpha():
            count = 1
            while i + count < n and text[i + count] == c:
                count += 1
            most = _LETTERS.get(c)
            if most is None:
                raise PatternError(
                    f"pattern letter `{c}` is not supported (Spark rejects or warns about it, "
                    f"or sjoin does not render it); supported letters: {DATE_PATTERN_LETTERS}"
                )
            if count > most:
                raise PatternError(f"too many pattern letters: `{c * count}`")
            fields.append(_field(c, count))
            i += count
            continue
        if c in "[]{}#":
            raise PatternError(f"`{c}` is reserved in datetime patterns; quote it: '{c}'")
        fields.append(_text(c))
        i += 1
    return DatePattern(tuple(fields))


# ---------------------------------------------------------------------------- regexes


@cache
def java_regex(text: str) -> javaregex.JavaRegex:
    """A Java regex, parsed as Java reads it and run in linear time
    (compiler/vocabulary/javaregex.py);
    PatternError when Spark would reject it or sjoin cannot run it exactly.  The regex
    engine (and RE2) is loaded here, on the first regex: a spec without one never loads it."""
    from . import javaregex

    try:
        return javaregex.parse(text)
    except javaregex.PatternError as err:
        raise PatternError(str(err)) from None


def java_split(s: str, pattern: str, limit: int) -> list[str]:
    """Spark's ``split``: UTF8String.split, i.e. Java's String.split with limit 0 as -1, and
    an empty pattern splitting into characters without a trailing empty string."""
    if s and not pattern:
        count = len(s) if limit <= 0 or limit > len(s) else limit
        return [*s[: count - 1], s[count - 1 :]]
    limited = limit > 0
    parts: list[str] = []
    index = 0
    for spans in java_regex(pattern).finditer(s):
        start, end = spans[0]
        if not limited or len(parts) < limit - 1:
            if index == 0 and start == 0 and end == 0:
                continue  # no leading empty string for a zero-width match at the start
            parts.append(s[index:start])
            index = end
        elif len(parts) == limit - 1:
            parts.append(s[index:])
            index = end
            break
    if index == 0:
        return [s]
    if not limited or len(parts) < limit:
        parts.append(s[index:])
    return parts


def group_count(pattern: str) -> int:
    return java_regex(pattern).groups


def replace_all(
    regex: javaregex.JavaRegex, s: str, replace: Replacement, most: int | None = None
) -> str | None:
    """Java's ``Matcher.replaceAll`` (Spark's regexp_replace from position 1); None, as
    soon as it is known, when the result would be longer than ``most`` characters."""
    pieces: list[str] = []
    last = 0
    size = 0
    for spans in regex.finditer(s):
        start, end = spans[0]
        pieces.append(s[last:start])
        pieces.append(replace([None if a < 0 else s[a:b] for a, b in spans]))
        size += start - last + len(pieces[-1])
        if most is not None and size > most:
            return None
        last = end
    if not pieces:
        return s
    pieces.append(s[last:])
    return "".join(pieces)


Replacement = Callable[[list[str | None]], str]


@cache
def java_replacement(text: str, groups: int) -> Replacement:
    """Java's Matcher.appendReplacement: ``$n`` / ``${name}`` are groups, ``\\x`` is x."""
    pieces: list[str | int] = []
    literal: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if i + 1 >= n:
                raise PatternError("character to be escaped is missing at the end")
            literal.append(text[i + 1])
            i += 2
        elif c == "$":
            if i + 1 >= n:
                raise PatternError("illegal group reference: `$` at the end")
            if text[i + 1] == "{":
                raise PatternError("named group references `${name}` are not supported")
            if text[i + 1] not in _DIGITS:  # Java's group number: ASCII digits only
                raise PatternError(f"illegal group reference `${text[i + 1]}`")
            ref = int(text[i + 1])
            i += 2
            if ref > groups:
                raise PatternError(f"no group {ref}: the pattern has {groups}")
            # Java takes further digits while they still name an existing group
            while i < n and text[i] in _DIGITS and ref * 10 + int(text[i]) <= groups:
                ref = ref * 10 + int(text[i])
                i += 1
            if literal:
                pieces.append("".join(literal))
                literal = []
            pieces.append(ref)
        else:
            literal.append(c)
            i += 1
    if literal:
        pieces.append("".join(literal))

    def replace(found: list[str | None]) -> str:
        return "".join(p if isinstance(p, str) else (found[p] or "") for p in pieces)

    return replace


# ---------------------------------------------------------------------------- LIKE


class LikeError(PatternError):
    """A LIKE pattern that Spark rejects; ``error_class`` is Spark's."""

    def __init__(self, error_class: str, message: str) -> None:
        self.error_class = error_class
        super().__init__(message)


_ANY_ONE: Final = None  # `_` in a parsed LIKE segment


def _like_segments(pattern: str) -> list[list[str | None]]:
    """The pattern split at its `%`s: each segment a list of characters and `_`s (None)."""
    segments: list[list[str | None]] = [[]]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                raise LikeError(
                    "INVALID_FORMAT.ESC_AT_THE_END",
                    f"The format is invalid: '{pattern}'. "
                    "The escape character is not allowed to end with.",
                )
            following = pattern[i + 1]
            if following not in "_%\\":
                raise LikeError(
                    "INVALID_FORMAT.ESC_IN_THE_MIDDLE",
                    f"The format is invalid: '{pattern}'. "
                    f"The escape character is not allowed to precede '{following}'.",
                )
            segments[-1].append(following)
            i += 2
            continue
        if c == "%":
            segments.append([])
        else:
            segments[-1].append(_ANY_ONE if c == "_" else c)
        i += 1
    return segments


def _segment_at(segment: list[str | None], s: str, at: int) -> bool:
    return all(c is None or s[at + k] == c for k, c in enumerate(segment))


def _find_segment(segment: list[str | None], s: str, start: int, end: int) -> int:
    """The first position >= start where ``segment`` fits wholly before ``end``, or -1."""
    if None not in segment:
        return s.find("".join(segment), start, end)  # type: ignore[arg-type]
    size = len(segment)
    anchor = next((k for k, c in enumerate(segment) if c is not None), None)
    at = start
    while at + size <= end:
        if anchor is not None:
            found = s.find(segment[anchor], at + anchor, end - size + anchor + 1)  # type: ignore[arg-type]
            if found < 0:
                return -1
            at = found - anchor
        if _segment_at(segment, s, at):
            return at
        at += 1
    return -1


def like_matcher(pattern: str) -> Callable[[str], bool]:
    """Spark's ``LIKE`` (escape ``\\``; ``_`` one character, ``%`` any run, newlines
    included), matched without backtracking: the text before the first `%` must start the
    value, the text after the last end it, and each segment between is taken at its first
    place after the one before (which leaves the most room for the rest), so the time is
    at most the value's length times the pattern's.  LikeError as Spark's for a bad escape."""
    segments = _like_segments(pattern)
    if len(segments) == 1:
        (only,) = segments
        return lambda s: len(s) == len(only) and _segment_at(only, s, 0)
    first, *middle, last = segments
    least = sum(len(seg) for seg in segments)

    def like(s: str) -> bool:
        if len(s) < least or not _segment_at(first, s, 0):
            return False
        end = len(s) - len(last)
        if not _segment_at(last, s, end):
            return False
        at = len(first)
        for segment in middle:
            found = _find_segment(segment, s, at, end)
            if found < 0:
                return False
            at = found + len(segment)
        return True

    return like
