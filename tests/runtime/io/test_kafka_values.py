"""A Kafka record's value read as the generated job's from_json / from_csv reads it
(runtime/io/kafka_values.py): every case says what the replay reads, or the fault it reports
and what Spark's job reads for it.  test_kafka_values_vs_spark.py runs every case through
real Spark's from_json / from_csv and checks each of those claims."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from sjoin.runtime.engine.values import parse_timestamp
from sjoin.runtime.io.kafka_values import RecordFault, record_reader, session_zone
from sjoin.runtime.io.trace import schemas_of

from ..harness import plan_of

COLUMNS = {
    "b": "BIGINT",
    "i": "INT",
    "d": "DOUBLE",
    "m": "DECIMAL(10, 2)",
    "s": "STRING",
    "f": "BOOLEAN",
    "t": "TIMESTAMP",
    "dt": "DATE",
    "r": "FLOAT",
    "y": "SMALLINT",
}
DDL = ", ".join(f"`{name}` {kind}" for name, kind in COLUMNS.items())
SPEC = f"""
stream x ({", ".join(f"{n} {k}" for n, k in COLUMNS.items())})
stream z (b BIGINT, t TIMESTAMP)
join j = x INNER JOIN z ON x.b = z.b
"""
SCHEMA = schemas_of(plan_of(SPEC))["x"]


def us(text: str) -> int:
    value = parse_timestamp(text)
    assert value is not None
    return value


def f32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


T0 = us("2026-01-01T00:00:00Z")
D0 = 20454  # 2026-01-01


@dataclass(frozen=True)
class Read:
    """The replay reads the row (columns not named are null)."""

    values: dict[str, Any]


@dataclass(frozen=True)
class Fault:
    """The replay reports a bad row whose reason holds ``says``; ``partial`` is what Spark's
    job reads (columns not named are null), except for the ``unknown`` columns, where
    ``spark`` (checked on Spark) says what Spark reads and why the replay cannot tell."""

    says: str
    partial: dict[str, Any] = field(default_factory=dict)
    unknown: tuple[str, ...] = ()
    spark: dict[str, Any] = field(default_factory=dict)


ALL = tuple(COLUMNS)


@dataclass(frozen=True)
class Case:
    id: str
    payload: str  # json or csv
    value: str | bytes | None
    expect: Read | Fault
    zone: str = "UTC"


def j(id: str, value: str | bytes | None, expect: Read | Fault, zone: str = "UTC") -> Case:
    return Case(id, "json", value, expect, zone)


def c(id: str, value: str | bytes | None, expect: Read | Fault) -> Case:
    return Case(id, "csv", value, expect)


CASES = [
    # --- JSON: whole records
    j(
        "every-type",
        '{"b": 1, "i": 2, "d": 1.5, "m": 3.255, "s": "x", "f": true, '
        '"t": "2026-01-01T00:00:00Z", "dt": "2026-01-02", "r": 0.1, "y": -3}',
        Read(
            {
                "b": 1,
                "i": 2,
                "d": 1.5,
                "m": Decimal("3.26"),
                "s": "x",
                "f": True,
                "t": T0,
                "dt": D0 + 1,
                "r": f32(0.1),
                "y": -3,
            }
        ),
    ),
    j("missing-fields-are-null", '{"b": 1}', Read({"b": 1})),
    j("explicit-nulls", '{"b": null, "s": null, "i": 4}', Read({"i": 4})),
    j("extra-field-ignored", '{"extra": 1, "b": 3}', Read({"b": 3})),
    j("duplicate-key-last-wins", '{"b": 1, "b": 2}', Read({"b": 2})),
    j("names-match-exactly", '{"B": 1, "i": 1}', Read({"i": 1})),
    j("leading-whitespace", '  \n {"b": 1}', Read({"b": 1})),
    j("none-of-the-columns", '{"B": 1}', Fault("none of the columns")),
    j("empty-object", "{}", Fault("none of the columns")),
    j("not-json", "not json", Fault("bad JSON")),
    j("truncated", '{"b": 1, "i": ', Fault("bad JSON")),
    j("leading-zero", '{"b": 05}', Fault("bad JSON")),
    j("trailing-text", '{"b": 1} trailing', Fault("text after the JSON object", {"b": 1})),
    j("two-objects", '{"b": 1}{"b": 2}', Fault("reads the first object", {"b": 1})),
    j("empty", "", Fault("the value is empty")),
    j("blank", "   ", Fault("the value is empty")),
    j("array", '[{"b": 1}]', Fault("an array, not a JSON object")),
    j("number", "5", Fault("a number, not a JSON object")),
    j("json-null", "null", Fault("null, not a JSON object")),
    j("json-string", '"str"', Fault("a string, not a JSON object")),
    j("tombstone", None, Fault("tombstone")),
    j(
        "not-utf8",
        b'{"s": "a\xffb", "b": 1}',
        Fault("not UTF-8", unknown=ALL, spark={"s": "a\ufffdb", "b": 1}),
    ),
    j(
        "single-quotes",
        "{'b': 1, 's': 'q'}",
        Fault("single-quoted", unknown=ALL, spark={"b": 1, "s": "q"}),
    ),
    j(
        "plus-infinity-literal",
        '{"d": +Infinity}',
        Fault("+Infinity", unknown=ALL, spark={"d": math.inf}),
    ),
    # --- JSON: integers
    j("bigint-from-string", '{"b": "5", "i": 2}', Fault("expected BIGINT", {"i": 2})),
    j("bigint-from-decimal", '{"b": 5.0, "i": 2}', Fault("expected BIGINT", {"i": 2})),
    j("bigint-from-boolean", '{"b": true, "i": 2}', Fault("got boolean true", {"i": 2})),
    j("bigint-over", '{"b": 9223372036854775808, "i": 2}', Fault("out of range", {"i": 2})),
    j("bigint-min", '{"b": -9223372036854775808}', Read({"b": -(2**63)})),
    j("bigint-minus-zero", '{"b": -0}', Read({"b": 0})),
    j("int-over", '{"i": 2147483648, "b": 1}', Fault("out of range for INT", {"b": 1})),
    j("smallint-over", '{"y": 32768, "b": 1}', Fault("out of range for SMALLINT", {"b": 1})),
    # --- JSON: doubles and floats
    j("double-nan-string", '{"d": "NaN", "b": 1}', Read({"d": math.nan, "b": 1})),
    j("double-nan-literal", '{"d": NaN, "b": 1}', Read({"d": math.nan, "b": 1})),
    j("double-minus-inf", '{"d": "-INF", "b": 1}', Read({"d": -math.inf, "b": 1})),
    j("double-plus-infinity", '{"d": "+Infinity", "b": 1}', Read({"d": math.inf, "b": 1})),
    j("double-inf-word", '{"d": "Inf", "b": 1}', Fault("expected DOUBLE", {"b": 1})),
    j("double-from-string", '{"d": "1.5", "b": 1}', Fault("expected DOUBLE", {"b": 1})),
    j("double-overflow", '{"d": 1e400, "b": 1}', Read({"d": math.inf, "b": 1})),
    j("double-big-integer", '{"d": 12345678901234567890}', Read({"d": 1.2345678901234567e19})),
    j("float-rounds", '{"r": 0.1}', Read({"r": f32(0.1)})),
    j("float-overflow", '{"r": 1e39}', Read({"r": math.inf})),
    j("float-nan", '{"r": "NaN"}', Read({"r": math.nan})),
    # --- JSON: decimals
    j("decimal-commas", '{"m": "1,234.5"}', Read({"m": Decimal("1234.50")})),
    j("decimal-does-not-fit", '{"m": 123456789.1, "b": 1}', Fault("does not fit", {"b": 1})),
    j("decimal-rounds-over", '{"m": 99999999.995, "b": 1}', Fault("does not fit", {"b": 1})),
    j("decimal-half-up", '{"m": -0.005}', Read({"m": Decimal("-0.01")})),
    j("decimal-exponent", '{"m": 1e2}', Read({"m": Decimal("100.00")})),
    j("decimal-string-plus", '{"m": "+1.5"}', Read({"m": Decimal("1.50")})),
    j("decimal-string-point", '{"m": ".5"}', Read({"m": Decimal("0.50")})),
    j("decimal-string-exponent", '{"m": "1e1"}', Read({"m": Decimal("10.00")})),
    j("decimal-string-space", '{"m": " 1", "b": 1}', Fault("expected DECIMAL", {"b": 1})),
    j("decimal-string-word", '{"m": "abc", "b": 1}', Fault("expected DECIMAL", {"b": 1})),
    j("decimal-nan", '{"m": NaN, "b": 1}', Fault("cannot hold", {"b": 1})),
    # --- JSON: strings and booleans
    j("string-from-integer", '{"s": 5, "b": 1}', Read({"s": "5", "b": 1})),
    j("string-from-boolean", '{"s": true}', Read({"s": "true"})),
    j("string-from-minus-zero", '{"s": -0}', Read({"s": "0"})),
    j(
        "string-from-big-integer",
        '{"s": 12345678901234567890}',
        Read({"s": "12345678901234567890"}),
    ),
    j("string-nul", '{"s": "a\\u0000b"}', Read({"s": "a\x00b"})),
    j(
        "string-from-decimal",
        '{"s": 1.50, "b": 1}',
        Fault("for a STRING column", {"b": 1}, ("s",), {"s": "1.5"}),
    ),
    j(
        "string-from-object",
        '{"s": {"a": [1, 2]}, "b": 1}',
        Fault("an object for a STRING column", {"b": 1}, ("s",), {"s": '{"a":[1,2]}'}),
    ),
    j(
        "string-lone-surrogate",
        '{"s": "\\ud800", "b": 1}',
        Fault("lone surrogate", {"b": 1}, ("s",), {"s": "?"}),
    ),
    j("boolean-from-string", '{"f": "true", "b": 1}', Fault("expected BOOLEAN", {"b": 1})),
    j("boolean-from-number", '{"f": 1, "b": 1}', Fault("expected BOOLEAN", {"b": 1})),
    # --- JSON: timestamps
    j("ts-epoch-seconds", '{"t": 1700000000}', Read({"t": 1_700_000_000_000_000})),
    j("ts-epoch-fraction", '{"t": 1700000000.5, "b": 1}', Fault("expected TIMESTAMP", {"b": 1})),
    j("ts-boolean", '{"t": true, "b": 1}', Fault("expected TIMESTAMP", {"b": 1})),
    j("ts-space", '{"t": "2026-01-01 00:00:00"}', Read({"t": T0})),
    j("ts-date-only", '{"t": "2026-01-01"}', Read({"t": T0})),
    j("ts-minutes", '{"t": "2026-01-01T00:00"}', Read({"t": T0})),
    j("ts-nanos-truncated", '{"t": "2026-01-01T00:00:00.123456789Z"}', Read({"t": T0 + 123456})),
    j("ts-fraction-no-zone", '{"t": "2026-01-01T00:00:00.5"}', Read({"t": T0 + 500_000})),
    j("ts-offset-compact", '{"t": "2026-01-01T00:00:00+0100"}', Read({"t": T0 - 3_600_000_000})),
    j("ts-offset-colon", '{"t": "2026-01-01T00:00:00+01:00"}', Read({"t": T0 - 3_600_000_000})),
    j("ts-offset-hours", '{"t": "2026-01-01T00:00:00+01"}', Read({"t": T0 - 3_600_000_000})),
    j("ts-offset-negative", '{"t": "2026-01-01T00:00:00-00:30"}', Read({"t": T0 + 1_800_000_000})),
    j("ts-offset-18h", '{"t": "2026-01-01T00:00:00+18:00"}', Read({"t": T0 - 64_800_000_000})),
    j("ts-utc-word", '{"t": "2026-01-01T00:00:00 UTC"}', Read({"t": T0})),
    j("ts-utc-glued", '{"t": "2026-01-01T00:00:00UTC"}', Read({"t": T0})),
    j("ts-spaces-around", '{"t": " 2026-01-01T00:00:00Z "}', Read({"t": T0})),
    j("ts-empty", '{"t": "", "b": 1}', Fault("empty string for a TIMESTAMP", {"b": 1})),
    j("ts-garbage", '{"t": "garbage", "b": 7}', Fault("not in an ISO-8601 form", {"b": 7}, ("t",))),
    j("ts-short-fields", '{"t": "2026-1-1T0:0:0"}', Fault("ISO-8601", {}, ("t",), {"t": T0})),
    j("ts-year-only", '{"t": "2026"}', Fault("ISO-8601", {}, ("t",), {"t": T0})),
    j("ts-plus-year", '{"t": "+2026-01-01T00:00:00Z"}', Fault("ISO-8601", {}, ("t",), {"t": T0})),
    j(
        "ts-empty-fraction",
        '{"t": "2026-01-01T00:00:00.Z"}',
        Fault("ISO-8601", {}, ("t",), {"t": T0}),
    ),
    j("ts-basic-form", '{"t": "20260101T000000Z"}', Fault("ISO-8601", {}, ("t",))),
    j("ts-lower-z", '{"t": "2026-01-01T00:00:00z"}', Fault("ISO-8601", {}, ("t",))),
    j("ts-hour-24", '{"t": "2026-01-01T24:00:00Z"}', Fault("hour must be", {}, ("t",))),
    j("ts-february-30", '{"t": "2026-02-30T00:00:00Z"}', Fault("day is out of range", {}, ("t",))),
    j(
        "ts-year-10000",
        '{"t": "10000-01-01T00:00:00Z"}',
        Fault("ISO-8601", {}, ("t",), {"t": 253_402_300_800_000_000}),
    ),
    j(
        "ts-before-year-1",
        '{"t": "0001-01-01T00:00:00+01:00"}',
        Fault("outside the years", {}, ("t",), {"t": -62_135_600_400_000_000}),
    ),
    j(
        "ts-epoch-before-year-1",
        '{"t": -62135596801}',
        Fault("outside the years", {}, ("t",), {"t": -62_135_596_801_000_000}),
    ),
    # --- JSON: dates
    j("date-trailing-space", '{"dt": "2026-01-01 "}', Read({"dt": D0})),
    j("date-number", '{"dt": 5, "b": 1}', Fault("expected DATE", {"b": 1})),
    j("date-short-fields", '{"dt": "2026-1-1"}', Fault("YYYY-MM-DD", {}, ("dt",), {"dt": D0})),
    j(
        "date-with-time",
        '{"dt": "2026-01-01T10:00:00"}',
        Fault("YYYY-MM-DD", {}, ("dt",), {"dt": D0}),
    ),
    j("date-with-zone", '{"dt": "2026-01-01Z"}', Fault("YYYY-MM-DD", {}, ("dt",))),
    # --- JSON: the session time zone
    j(
        "zone-gap",
        '{"t": "2026-03-08T02:30:00"}',
        Read({"t": us("2026-03-08T07:30:00Z")}),
        "America/New_York",
    ),
    j(
        "zone-overlap-earlier",
        '{"t": "2026-11-01T01:30:00"}',
        Read({"t": us("2026-11-01T05:30:00Z")}),
        "America/New_York",
    ),
    j(
        "zone-date-only",
        '{"t": "2026-01-01"}',
        Read({"t": us("2026-01-01T05:00:00Z")}),
        "America/New_York",
    ),
    j("zone-given-wins", '{"t": "2026-01-01T00:00:00Z"}', Read({"t": T0}), "America/New_York"),
    j("zone-offset", '{"t": "2026-01-01T00:00:00"}', Read({"t": T0 - 3_600_000_000}), "+01:00"),
    # --- CSV
    c(
        "csv-every-type",
        "1,2,1.5,3.25,x,true,2026-01-01T00:00:00Z,2026-01-02,0.5,7",
        Read(
            {
                "b": 1,
                "i": 2,
                "d": 1.5,
                "m": Decimal("3.25"),
                "s": "x",
                "f": True,
                "t": T0,
                "dt": D0 + 1,
                "r": 0.5,
                "y": 7,
            }
        ),
    ),
    c("csv-all-empty", ",,,,,,,,,", Read({})),
    c("csv-too-few", "1,2", Fault("2 field(s)", {"b": 1, "i": 2})),
    c("csv-too-many", "1,2,,,,,,,,,extra", Fault("ignores the extra", {"b": 1, "i": 2})),
    c("csv-bad-int", "a,2,,,,,,,,", Fault("expected BIGINT", {"i": 2})),
    c("csv-int-space", " 5,2,,,,,,,,", Fault("expected BIGINT", {"i": 2})),
    c("csv-int-plus", "+5,+2,,,,,,,,", Read({"b": 5, "i": 2})),
    c("csv-smallint-over", ",,,,,,,,,99999", Fault("out of range for SMALLINT")),
    c(
        "csv-numbers",
        ",,1e3,1.5,a,TRUE,,,,",
        Read({"d": 1000.0, "m": Decimal("1.50"), "s": "a", "f": True}),
    ),
    c("csv-inf", ",,Inf,,,False,,,,", Read({"d": math.inf, "f": False})),
    c("csv-minus-inf-bad-bool", ",,-Inf,,,yes,,,,", Fault("expected BOOLEAN", {"d": -math.inf})),
    c("csv-infinity", ",,Infinity,,,,,,,", Read({"d": math.inf})),
    c("csv-point", ",,.5,,,,,,,", Read({"d": 0.5})),
    c("csv-java-double", ",,1d,,,,,,,", Fault("unless Java", {}, ("d",), {"d": 1.0})),
    c(
        "csv-times",
        ",,,,,,2026-01-01 00:00:00,2026-1-1,,",
        Fault("YYYY-MM-DD", {"t": T0}, ("dt",), {"dt": D0}),
    ),
    c("csv-spaces-kept", ",,,, a ,,,,,", Read({"s": " a "})),
    c("csv-null-word", ",,,,null,,,,,", Read({"s": "null"})),
    c("csv-quoted", '"1",2,,,,,,,,', Fault("a quote", {}, ALL, {"b": 1, "i": 2})),
    c("csv-empty", "", Fault("the value is empty")),
    c("csv-tombstone", None, Fault("tombstone")),
]


def raw(case: Case) -> bytes | None:
    return case.value.encode("utf-8") if isinstance(case.value, str) else case.value


def replay_read(case: Case) -> tuple[Any, ...]:
    reader = record_reader(
        SCHEMA, "json" if case.payload == "json" else "csv", session_zone(case.zone)
    )
    return reader(raw(case))


def as_row(values: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(values.get(name) for name in COLUMNS)


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and a float never equal to a bool."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_the_replay_reads_a_value_as_the_case_says(case: Case) -> None:
    if isinstance(case.expect, Read):
        row = replay_read(case)
        expected = as_row(case.expect.values)
        assert all(same(a, b) for a, b in zip(row, expected, strict=True)), (row, expected)
        return
    with pytest.raises(RecordFault) as caught:
        replay_read(case)
    fault = caught.value
    assert case.expect.says in fault.reason
    assert fault.unknown == frozenset(case.expect.unknown)
    expected = as_row({k: v for k, v in case.expect.partial.items() if k not in fault.unknown})
    assert all(same(a, b) for a, b in zip(fault.partial, expected, strict=True)), (
        fault.partial,
        expected,
    )
    # an unknown column is never claimed: its place in the partial row is None
    assert all(fault.partial[list(COLUMNS).index(n)] is None for n in fault.unknown)


@pytest.mark.parametrize(
    ("name", "offset_hours"),
    [("UTC", 0), ("utc", 0), ("GMT", 0), ("+01:00", 1), ("-0530", -5.5), ("UTC+2", 2)],
)
def test_session_zones_as_offsets(name: str, offset_hours: float) -> None:
    zone = session_zone(name)
    assert datetime(2026, 1, 1, tzinfo=zone).utcoffset().total_seconds() == offset_hours * 3600  # type: ignore[union-attr]


def test_a_region_is_a_zone_info() -> None:
    assert session_zone("Europe/Paris") == ZoneInfo("Europe/Paris")
    assert session_zone("UTC") is UTC


@pytest.mark.parametrize("name", ["Mars/Olympus", "+25:00", "", "../etc"])
def test_an_unknown_session_zone_is_a_usage_error(name: str) -> None:
    from sjoin.runtime.errors import UsageError

    with pytest.raises(UsageError, match="not a time zone the replay knows"):
        session_zone(name)


def test_binary_columns_are_not_read() -> None:
    schema = schemas_of(
        plan_of(
            "stream q (k BIGINT, p BINARY)\nstream w (k BIGINT)\n"
            "join v = q INNER JOIN w ON q.k = w.k"
        )
    )["q"]
    reader = record_reader(schema, "json")
    assert reader(b'{"k": 1, "p": null}') == (1, None)
    with pytest.raises(RecordFault, match="does not read BINARY") as caught:
        reader(b'{"k": 1, "p": "AAE="}')
    assert caught.value.unknown == frozenset({"p"}) and caught.value.partial == (1, None)
    with pytest.raises(RecordFault, match="does not read BINARY"):
        record_reader(schema, "csv")(b"1,AAE=")


# ------------------------------------------------------------- columns from the record itself

RECORD = schemas_of(
    plan_of(
        "stream q (k BIGINT, t TIMESTAMP, u STRING, s STRING)\nstream w (k BIGINT)\n"
        "join v = q INNER JOIN w ON q.k = w.k"
    )
)["q"]
MAPPED: dict[str, Any] = {"t": "timestamp", "u": "key"}
MS = 1_767_225_600_123  # 2026-01-01T00:00:00.123Z


@pytest.mark.parametrize(
    ("payload", "value", "key", "timestamp", "row"),
    [
        # the value holds the other columns; a field named as a mapped column is ignored
        ("json", b'{"k": 1, "s": "a"}', b"u1", MS, (1, MS * 1000, "u1", "a")),
        ("json", b'{"k": 1, "s": "a", "t": "2000-01-01T00:00:00Z", "u": 5}', b"x", MS,
         (1, MS * 1000, "x", "a")),
        # no key is a null key, an empty key is empty text; any timestamp, negative too
        ("json", b'{"k": 2}', None, -1, (2, -1000, None, None)),
        ("json", b'{"k": 2}', b"", 0, (2, 0, "", None)),
        ("json", b'{"k": 3}', "café".encode(), MS, (3, MS * 1000, "café", None)),
        # CSV: the value's fields are the other columns, in order
        ("csv", b"4,b", b"k", MS, (4, MS * 1000, "k", "b")),
    ],
)  # fmt: skip
def test_columns_from_the_record_and_the_rest_from_the_value(
    payload: Any, value: bytes, key: bytes | None, timestamp: int, row: tuple[Any, ...]
) -> None:
    assert record_reader(RECORD, payload, UTC, MAPPED)(value, key, timestamp) == row


@pytest.mark.parametrize(
    ("payload", "value", "key", "timestamp", "says", "partial", "unknown"),
    [
        # a value Spark cannot read: its columns null, the record's columns still read
        ("json", None, b"u", MS, "tombstone", (None, MS * 1000, "u", None), ()),
        ("json", b"{oops", b"u", MS, "bad JSON", (None, MS * 1000, "u", None), ()),
        ("json", b'{"z": 1}', b"u", MS, "none of the columns", (None, MS * 1000, "u", None), ()),
        ("csv", b"", None, MS, "the value is empty", (None, MS * 1000, None, None), ()),
        ("csv", b"1,a,extra", b"u", MS, "3 field(s) but stream `q` reads 2 column(s) from it",
         (1, MS * 1000, "u", "a"), ()),
        # a key that is not UTF-8: the replay cannot tell what Spark's text is
        ("json", b'{"k": 1}', b"\xff", MS, "key is not UTF-8", (1, MS * 1000, None, None),
         ("u",)),
        # a time past what a TIMESTAMP holds
        ("json", b'{"k": 1}', b"u", 2**62, "outside the TIMESTAMP range", (1, None, "u", None),
         ("t",)),
        # both at once: the value's fault and the key's
        ("json", b"[]", b"\xfe", MS, "not a JSON object", (None, MS * 1000, None, None), ("u",)),
    ],
)  # fmt: skip
def test_faults_of_a_record_with_columns_from_the_record(
    payload: Any,
    value: bytes | None,
    key: bytes | None,
    timestamp: int,
    says: str,
    partial: tuple[Any, ...],
    unknown: tuple[str, ...],
) -> None:
    with pytest.raises(RecordFault) as caught:
        record_reader(RECORD, payload, UTC, MAPPED)(value, key, timestamp)
    fault = caught.value
    assert says in fault.reason
    assert fault.partial == partial and fault.unknown == frozenset(unknown)
    # the row of nulls Spark reads for a bad value keeps the record's columns: said so
    assert "a row of nulls" not in fault.reason
    if partial[0] is None and not unknown:
        assert "reads the columns of its value (`k`, `s`) as null" in fault.reason


def test_a_stream_of_record_columns_only_never_reads_the_value() -> None:
    schema = schemas_of(
        plan_of(
            "stream q (t TIMESTAMP, u STRING)\nstream w (u STRING)\n"
            "join v = q INNER JOIN w ON q.u = w.u"
        )
    )["q"]
    reader = record_reader(schema, "json", UTC, {"t": "timestamp", "u": "key"})
    for value in (None, b"", b"not json", b"\xff"):
        assert reader(value, b"k", MS) == (MS * 1000, "k")
