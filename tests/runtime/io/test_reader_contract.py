"""The trace reader contract (docs/testing.md, "What a trace may hold"), value by value.

For every SQL type a stream may declare (enumerated from ``compiler/types.TYPE_NAMES``), a
list of hostile values is read by

* the reference reader (``runtime/io/trace.py``),
* the columnar reader (``runtime/columnar/trace.py``): its bulk JSON-lines path, which a
  line takes when it is in the canonical form, and a Parquet trace, where the value has a
  Parquet form,
* ``sjoin run`` with each engine and ``--engine auto`` on both sides of its size threshold,
  with ``--bad-rows`` stop, skip and FILE,

and all must give the same verdict: the same value, or the same bad row (line, column,
reason).  The verdicts themselves are pinned by a snapshot (``__snapshots__``), and the
values the contract accepts are read on Spark, whose JSON reader reads the generated job's
input: each must come out as the same value there.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from sjoin.cli.main import main
from sjoin.compiler.planning.plan import Plan
from sjoin.compiler.vocabulary.types import TYPE_NAMES, SqlType, lookup_type
from sjoin.runtime import choice, choose_engine, scan_trace
from sjoin.runtime.choice import plan_facts
from sjoin.runtime.columnar.frames import to_rows
from sjoin.runtime.columnar.trace import read_trace_columns
from sjoin.runtime.engine.batches import Batch, Frame
from sjoin.runtime.engine.values import dumps, json_converter, parse_trace_timestamp
from sjoin.runtime.errors import RunError
from sjoin.runtime.io.trace import (
    BadRow,
    StreamSchema,
    Trace,
    TraceError,
    read_trace,
    schemas_of,
)

from ..harness import plan_of

# --------------------------------------------------------------------------- the table

T0 = "2026-01-01T00:00:00"
# values every type meets: other JSON types, the JSON constants, strings of every kind (a
# raw lone surrogate is written as the bytes ED A0 80, which no UTF-8 decoder may accept)
GENERIC = [
    "null", "true", "false", "0", "1", "-0", "1.0", "1.5", "1e3", "-1", '"1"', '""', '"x"',
    "[]", "[1]", "{}", '{"a": 1}', '{"a": 1, "a": 2}', "NaN", "Infinity", "-Infinity",
    '"NaN"', '"Infinity"', '"\\u0000"', '"\\ud800"', '"\ud800"', '"\ufeff"', '"\\ufeff"',
]  # fmt: skip


def _integers(bits: int) -> list[str]:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return [
        str(high), str(low), str(high + 1), str(low - 1), str(2**63 - 1), str(2**63),
        str(-(2**63) - 1), str(2**64 - 1), str(2**64), "1" + "0" * 400, "1" * 5000,
        "1E2", "1e0", "1e-2", "0.0", "-0.0", "1.0e2", "1.00", '"\u0663"', '"1"', '" 1"',
        "1e400", "0x10", "+1", "01", "1.", ".5", "-", "true",
    ]  # fmt: skip


FLOATS = [
    "-0.0", "-0", "0e0", "1e308", "1.7976931348623157e308", "1.7976931348623159e308",
    "1e309", "1e400", "-1e400", "1e-400", "4.9e-324", "2.4e-324", "3.4028235e38",
    "3.4028236e38", "3.5e38", "-3.5e38", "1e39", "1e-40", "1.4e-45", "7e-46", "1e-50",
    "9007199254740993", "0.1", "123456789012345678901234567890", '"-Infinity"',
    '"+Infinity"', '"Inf"', '"-Inf"', '"+Inf"', '"INF"', '"-INF"', '"+INF"', '"nan"',
    '"inf"', '"infinity"', '"1.5"', '" 1.5"', '"-0.0"', "+Infinity", "-NaN", "1.5e",
    '"NaN "', '"\u0663"', "1" + "0" * 400, "0." + "1" * 998, "0." + "1" * 999,
    "0." + "1" * 5000, "1e" + "0" * 997 + "1",
]  # fmt: skip
DECIMALS = [
    "1.005", "1.004", "-1.005", "12345678.99", "123456789.99", "99999999.994",
    "99999999.995", "-99999999.995", "0.001", "0.005", "1e2", "1E-3", "1e7", "1e8",
    '"1.5"', '" 1.5"', '"1.5 "', '"1,000.5"', '"1_000"', '"\u0663"', '"\\u0663"', '"1e2"',
    '"+1.5"', '".5"', '"5."', '"-.5"', '"-Infinity"', '"sNaN"', '"0x10"', '"-"', '"."',
    '"e1"', "1e999999", "1e-999999", "0." + "1" * 998, "0." + "1" * 5000,
    '"0.' + "1" * 1200 + '"', "123" + "0" * 40, "-0.00", "-0.001", '"-0"',
]  # fmt: skip
DECIMALS_38 = [
    "9" * 38, "-" + "9" * 38, "9" * 39, "1e37", "1e38", "0.5", "-0.5", "9" * 38 + ".4",
    "9" * 38 + ".5", "12345678901234567890123456789", '"' + "9" * 38 + '"',
]  # fmt: skip
DECIMALS_38_10 = [
    "9" * 28 + ".9999999999", "9" * 29, "0.00000000005", "0.00000000004", "1" * 28 + ".5",
]  # fmt: skip
STRINGS = [
    '"\\udc00"', '"a\\ud800b"', '"\\ud83d\\ude00"', '"\\ud83d"', '"\\uD800\\uDC00"',
    '"\\u2028"', '"\u2028"', '"\u0663"', '"\u00e9"', '"\\u00e9"', '"\\\\"', '"\\""',
    '"a\\nb"', '"a\x00b"', '"a\tb"', '"a\rb"', '"a\x7fb"', '"' + "x" * 10000 + '"',
    '"\\u00"', '"\\x41"', "'a'", '"a", "b"', '"\\"k\\": 1"', '"2026-01-01T23:59:60Z"',
]  # fmt: skip
BOOLEANS = ['"true"', "TRUE", "True", '"false"', '"1"', '"yes"']
TIMESTAMPS = [
    f'"{T0}Z"', f'"{T0}.250Z"', f'"{T0}.000Z"', f'"{T0}.5Z"', f'"{T0}.123456Z"',
    f'"{T0}.123456789Z"', f'"{T0}.{"1" * 1000}Z"', f'"{T0}.Z"', f'"{T0},5Z"', f'"{T0}"',
    f'"{T0}.-1Z"',
    # leap seconds, 24:00, impossible dates, the ends of the range
    '"2026-01-01T23:59:60Z"', '"2016-12-31T23:59:60Z"', '"2026-01-01T23:59:60.500Z"',
    '"2026-01-01T00:00:60Z"', '"2026-01-01T24:00:00Z"', '"2026-01-01T24:00:00"',
    '"2026-01-01T23:60:00Z"', '"2026-02-30T00:00:00Z"', '"2024-02-29T00:00:00Z"',
    '"2026-02-29T00:00:00Z"', '"2026-13-01T00:00:00Z"', '"2026-00-10T00:00:00Z"',
    '"2026-01-00T00:00:00Z"', '"0000-01-01T00:00:00Z"', '"0001-01-01T00:00:00Z"',
    '"0001-01-01T00:00:00+00:01"', '"0001-01-01T00:00:00-00:01"',
    '"9999-12-31T23:59:59.999999Z"', '"9999-12-31T23:30:00-05:00"',
    '"9999-12-31T23:30:00+05:00"', '"10000-01-01T00:00:00Z"', '"+2026-01-01T00:00:00Z"',
    '"-2026-01-01T00:00:00Z"', '"-0001-01-01T00:00:00Z"',
    # zones of every form
    f'"{T0}+01:00"', f'"{T0}-01:00"', f'"{T0}+0100"', f'"{T0}+01"', f'"{T0}+1:00"',
    f'"{T0}+01:0"', f'"{T0}+01:00:00"', f'"{T0}+01:30:15"', f'"{T0}+01:30:15.5"',
    f'"{T0}+013015"', f'"{T0}+14:00"', f'"{T0}+18:00"', f'"{T0}-18:00"', f'"{T0}+18:01"',
    f'"{T0}+18:00:01"', f'"{T0}+19:00"', f'"{T0}+24:00"', f'"{T0}-00:00"', f'"{T0}+00:60"',
    f'"{T0}+01:00:60"', f'"{T0} +01:00"', f'"{T0}\\t+01:00"', f'"{T0}UTC"', f'"{T0} UTC"',
    f'"{T0}utc"', f'"{T0}GMT"', f'"{T0}UTC+01:00"', f'"{T0}Europe/Paris"',
    f'"{T0} Europe/Paris"', f'"{T0}[Europe/Paris]"', f'"{T0}+01:00[Europe/Paris]"',
    f'"{T0}z"', f'"{T0} Z"', f'"{T0}+00:00Z"', f'"{T0}ZZ"', f'"{T0}CET"', f'"{T0}EST"',
    # separators, case, spaces, partial forms
    '"2026-01-01t00:00:00Z"', '"2026-01-01t00:00:00z"', '"2026-01-01 00:00:00Z"',
    '"2026-01-01 00:00:00"', '"2026-01-01  00:00:00"', '"2026-01-01x00:00:00"',
    '"2026-01-01_00:00:00"', '"2026-01-01\\u00a000:00:00"', f'" {T0}Z"', f'"{T0}Z "',
    f'"\\t{T0}Z"', f'"{T0}Z\\n"', f'"{T0}Z\\r"', f'"\\u000b{T0}Z"', '"2026-01-01"',
    '"2026-01-01T"', '"2026-01-01 "', '"2026-01-01T00"', '"2026-01-01T00Z"',
    '"2026-01-01T00:00"', '"2026-01-01T00:00Z"', '"2026-01-01T00:00+01:00"',
    '"2026-01-01Z"', '"2026-01-01 UTC"', '"2026-01-01T0:0:0"', '"2026-1-1T00:00:00Z"',
    '"2026-01-01T1:02:03Z"', '"2026-01-01T09:5:00Z"', '"20260101T000000Z"',
    '"2026-W01-1T00:00:00"', '"2026-001T00:00:00"', '"2026"', '"2026-01"',
    '"\u0662\u0660\u0662\u0666-01-01T00:00:00Z"', '"\uff12\uff10\uff12\uff16-01-01T00:00:00Z"',
    f'"{T0}\\u0000"', f'"{T0}Z\\u0000"', f'"\\ufeff{T0}Z"', f'"\ufeff{T0}Z"',
    # numbers (Spark reads an integer as seconds; the contract does not)
    "1767225600", "1767225600.5", '"1767225600"', '"now"',
]  # fmt: skip
DATES = [
    '"2026-01-01"', '"2026-02-30"', '"2024-02-29"', '"2026-02-29"', '"0000-01-01"',
    '"0001-01-01"', '"9999-12-31"', '"10000-01-01"', '"+2026-01-01"', '"-2026-01-01"',
    '"-0001-01-01"', '"2026-1-1"', '"2026-01-1"', '"2026-13-01"', '"2026-00-01"',
    '"2026-01-00"', '"2026-01-32"', '" 2026-01-01"', '"2026-01-01 "', '"\\t2026-01-01"',
    f'"{T0}Z"', f'"{T0}"', '"2026-01-01 00:00:00"', '"2026-01-01T"', '"2026-01-01Z"',
    '"2026-01-01+01:00"', '"20260101"', '"2026"', '"2026-01"',
    '"\u0662\u0660\u0662\u0666-01-01"', '"\uff12\uff10\uff12\uff16-01-01"', '"2026/01/01"',
    '"01/01/2026"', "20454", '"20454"', '"2026-01-01\\u0000"',
]  # fmt: skip
BINARIES = [
    '"abc"', '"YWJj"', '"YWI="', '"YWI"', '"YWK="', '"YQ=="', '"YQ"', '"YR=="', '"Y"',
    '"===="', '"YW Jj"', '"YW\\nJj"', '"YWJj\\n"', '"_-8="', '"+/8="', '"YWJjZA=="',
    '"YWJjZA="', '"\u00e9"', '"AAE="',
]  # fmt: skip

# each declaration a stream may give a column, with its hostile values
DECLARED: dict[str, list[str]] = {
    "BIGINT": _integers(64),
    "INT": _integers(32),
    "SMALLINT": _integers(16),
    "TINYINT": _integers(8),
    "DOUBLE": FLOATS,
    "FLOAT": FLOATS,
    "DECIMAL(10, 2)": DECIMALS,
    "DECIMAL(38, 0)": DECIMALS_38,
    "DECIMAL(38, 10)": DECIMALS_38_10,
    "STRING": STRINGS,
    "VARCHAR(3)": ['"abcdef"', '"ab"'],  # a length Spark's reader does not check either
    "BOOLEAN": BOOLEANS,
    "TIMESTAMP": TIMESTAMPS,
    "DATE": DATES,
    "BINARY": BINARIES,
}
VALUES = {decl: list(dict.fromkeys(GENERIC + values)) for decl, values in DECLARED.items()}
CASES = [
    pytest.param(decl, value, id=f"{decl.split('(')[0]}-{i}")
    for decl, values in VALUES.items()
    for i, value in enumerate(values)
]

SPEC = """spark 4.0
stream s (k BIGINT, v {decl}, t TIMESTAMP)
stream o (k BIGINT, t TIMESTAMP, pad STRING)
join j = s AS S INNER JOIN o AS O ON S.k = O.k SELECT S.k, S.v, S.t, O.t AS ot
"""


def sql_type(decl: str) -> SqlType:
    name, _, rest = decl.partition("(")
    params = tuple(int(p) for p in rest.rstrip(")").split(",")) if rest else ()
    found = lookup_type(name, params)
    assert found is not None, decl
    return found


_SCHEMAS: dict[str, dict[str, StreamSchema]] = {}


def schemas(decl: str) -> dict[str, StreamSchema]:
    if decl not in _SCHEMAS:
        _SCHEMAS[decl] = schemas_of(plan_of(SPEC.format(decl=decl)))
    return _SCHEMAS[decl]


def record(value: str, k: int = 1, batch: int = 0, t: str = f"{T0}Z") -> str:
    """A line of stream ``s`` in the canonical form (``json.dumps``'s separators), so that
    a value in the canonical form takes the columnar reader's bulk path."""
    return f'{{"batch": {batch}, "stream": "s", "row": {{"k": {k}, "v": {value}, "t": "{t}"}}}}'


def partner(k: int, batch: int = 0, pad: str = "") -> str:
    return f'{{"batch": {batch}, "stream": "o", "row": {{"k": {k}, "t": "{T0}Z", "pad": "{pad}"}}}}'


# canonical rows without a partner, in a batch of their own after the rest, that take a
# trace over the rows per batch from which `--engine auto` runs the columnar engine (as
# ``lower_the_break_even`` sets it)
PADDING = [partner(-1, batch=10**6, pad="x" * 90_000)] + [partner(-1, batch=10**6)] * 299


def lower_the_break_even(monkeypatch: pytest.MonkeyPatch, small: Path) -> None:
    """Move `--engine auto`'s break-even to just above the rows per batch of ``small``:
    ``small`` runs on the reference engine, ``small`` + PADDING on the columnar one (when the
    plan has a columnar operator).  The rule itself: test_engine_choice.py."""
    shape = scan_trace(small)
    assert shape is not None and shape.batches
    monkeypatch.setattr(choice, "COLUMNAR_FIXED_ROWS", 0)
    monkeypatch.setattr(choice, "ROW_BY_ROW_FACTOR", 1)
    monkeypatch.setattr(choice, "COLUMNAR_ROWS_PER_BATCH", shape.lines // shape.batches + 1)


def auto_on_both_sides(plan: Plan, small: Path, large: Path) -> str:
    """`auto` runs ``small`` on the reference engine and ``large`` on the columnar one (on
    the reference one when no operator runs columnar); that engine."""
    assert choose_engine(plan, small)[0] == "reference"
    engine, reason = choose_engine(plan, large)
    assert engine == ("columnar" if plan_facts(plan).columnar else "reference"), reason
    return engine


def write(path: Path, lines: list[str]) -> Path:
    path.write_bytes("".join(x + "\n" for x in lines).encode("utf-8", "surrogatepass"))
    return path


# --------------------------------------------------------------------------- verdicts


def plain(value: Any) -> Any:
    """A runtime value in a form that compares exactly (NaN equals NaN, -0.0 is not 0.0,
    a Decimal keeps its digits)."""
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, Decimal):
        return ("decimal", str(value))
    return value


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def rows_of(data: Batch) -> list[tuple[Any, ...]]:
    rows = to_rows(data.frame) if isinstance(data, Frame) else data.to_rows()
    return [tuple(plain(v) for v in row) for row in rows]


def outcome(read: Callable[[], Trace]) -> Any:
    """A reader's verdict on a trace: its batches (value, first line, rows per stream) and
    bad rows, or the error and its bad rows."""
    try:
        trace = read()
    except TraceError as err:
        return ("stop", str(err), [b.to_json() for b in err.bad_rows])
    batches = [
        (b.value, b.first_line, {s: rows_of(r) for s, r in sorted(b.rows.items())})
        for b in trace.batches
    ]
    return ("read", batches, [b.to_json() for b in trace.bad_rows])


def small_trace(tmp_path: Path, value: str, extra: tuple[str, ...] = ()) -> Path:
    """The value's line between two canonical lines (line 2 of 3), then ``extra``."""
    lines = [record("null", k=0), record(value), record("null", k=2, batch=1), *extra]
    return write(tmp_path / ("large.jsonl" if extra else "small.jsonl"), lines)


def read_one(decl: str, value: str) -> Trace:
    """The value's line read as a file's line is: bytes (a raw lone surrogate is bytes no
    UTF-8 decoder accepts), bad rows skipped."""
    line = record(value).encode("utf-8", "surrogatepass") + b"\n"
    return read_trace([line], schemas(decl), "skip")


def verdict(decl: str, value: str) -> Any:
    """The contract's verdict on one value: the JSON value it is written back as, or the
    bad row's reason (what the snapshot pins)."""
    trace = read_one(decl, value)
    if trace.bad_rows:
        (bad,) = trace.bad_rows
        return {"bad": bad.reason, "column": bad.column}
    ((_, v, _),) = trace.batches[0].rows["s"].to_rows()
    convert = json_converter(sql_type(decl).name)
    return {"value": dumps(v if v is None or convert is None else convert(v))}


# --------------------------------------------------------------------------- the tests


def test_every_type_the_binder_knows_has_hostile_values() -> None:
    declared = {sql_type(decl).name for decl in DECLARED}
    assert declared == {canonical for canonical, _ in TYPE_NAMES.values()}


@pytest.mark.parametrize(("decl", "value"), CASES)
def test_every_reader_gives_the_same_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decl: str, value: str
) -> None:
    """The value's line between two canonical lines, read by both readers, alone and with
    padding that takes the trace over ``--engine auto``'s break-even: one verdict."""
    small = small_trace(tmp_path, value)
    large = small_trace(tmp_path, value, tuple(PADDING))
    lower_the_break_even(monkeypatch, small)
    auto_on_both_sides(plan_of(SPEC.format(decl=decl)), small, large)
    verdicts = {}
    for path, policies in ((small, ("stop", "skip")), (large, ("skip",))):
        for policy in policies:
            reference = outcome(lambda: read_trace(path, schemas(decl), policy))  # noqa: B023
            columnar = outcome(lambda: read_trace_columns(path, schemas(decl), policy))  # noqa: B023
            assert columnar == reference, (path.name, policy)
            verdicts[path.name, policy] = reference
    # the padding adds its own batch and changes nothing else
    small_read, large_read = verdicts["small.jsonl", "skip"], verdicts["large.jsonl", "skip"]
    assert large_read[1][:-1] == small_read[1] and large_read[2] == small_read[2]


def test_the_findings_of_issue_24() -> None:
    """The values the engines read differently before: now one verdict each."""
    ts = schemas("TIMESTAMP")
    for leap in ('"2026-01-01T23:59:60Z"', '"2026-01-01T00:00:60.500Z"'):
        assert "unparsable timestamp" in verdict("TIMESTAMP", leap)["bad"]
    assert verdict("TIMESTAMP", '"2026-01-01T24:00:00Z"')["bad"].startswith("column `v`: unpa")
    # fromisoformat read these, Spark's reader does not
    for form in ('"2026-01-01x00:00:00"', '"20260101T000000Z"', '"2026-W01-1T00:00:00"'):
        assert "unparsable timestamp" in verdict("TIMESTAMP", form)["bad"]
    line = '{"batch": 0, "stream": "s", "row": {"k": 1, "v": null, "k": 2, "t": "2026-01-01"}}'
    (bad,) = read_trace([line], ts, "skip").bad_rows
    assert bad.reason.startswith("column `k` is given twice in the row")
    assert (bad.line, bad.column) == (1, line.index('"k": 2') + 1)
    line = '{"batch": 0, "stream": "s", "batch": 1, "row": {"k": 1, "v": null, "t": "2026-01-01"}}'
    (bad,) = read_trace([line], ts, "skip").bad_rows
    assert bad.reason.startswith("field `batch` is given twice in the record")
    assert (bad.line, bad.column) == (1, line.index('"batch": 1') + 1)
    with pytest.raises(TraceError, match="given twice"):
        read_trace([line], ts)


# a record-level or row-level shape, between two good lines of the TIMESTAMP spec
_ROW = '"k": 1, "v": "2026-01-01T00:00:00Z", "t": "2026-01-01T00:00:00Z"'
SHAPES = [
    '{"batch": 0, "stream": "s", "row": {"k": 1, "k": 2, "v": null, "t": "2026-01-01"}}',
    '{"batch": 0, "stream": "s", "row": {"k": 1, "v": null, "t": "2026-01-01", "k": 1}}',
    '{"batch": 0, "stream": "s", "row": {"k": 1, "\\u006b": 1, "v": null, "t": "2026-01-01"}}',
    '{"batch": 0, "stream": "s", "row": {"k": 1, "v": "a\\"b", "v": null, "t": "2026-01-01"}}',
    '{"batch": 0, "stream": "s", "row": {"k": 1, "v": null, "v": null, "t": "2026-01-01"}}',
    '{"batch": 0, "stream": "s", "row": {"k": 1, "v" : null, "t" :"x", "t": "2026-01-01"}}',
    '{"batch": 0, "stream": "s", "row": {"k": 1, "v": "x", "v": 1, "t": "2026-01-01"}}',
    '{"batch": 0, "batch": 0, "stream": "s", "row": {' + _ROW + "}}",
    '{"batch": 0, "stream": "o", "stream": "s", "row": {' + _ROW + "}}",
    '{"batch": 0, "stream": "s", "row": {"k": 9}, "row": {' + _ROW + "}}",
    '{"batch": 0, "stream": "s", "\\u0072ow": {"k": 9}, "row": {' + _ROW + "}}",
    '{"batch": 0, "stream": "s", "row": {' + _ROW + ', "v": {"a": 1, "a": 2}}}',
    '{"batch": 0, "stream": "s", "row": {"k": 1, "v": {"a": 1, "a": 2}, "t": "2026-01-01"}}',
    '{"batch": 0, "stream": "s", "row": {"k": 1, "t": "2026-01-01T00:00:00Z"}}',
    '{"batch": 0, "stream": "s", "row": {' + _ROW + ', "w": 1}}',
    '{"batch": 0, "stream": "s", "row": {' + _ROW + ', "": 1}}',
    '{"batch": 0, "stream": "s", "row": {"t": "2026-01-01", "v": null, "k": 1}}',
    '{"batch": 0, "stream": "s", "row": null}',
    '{"batch": 0, "stream": "s", "row": []}',
    '{"batch": 0, "stream": "s", "row": "k=1"}',
    '{"batch": 0, "stream": "s"}',
    '{"batch": 0, "stream": "s", "row": {' + _ROW + '}, "extra": 1}',
    '{"batch": 0.0, "stream": "s", "row": {' + _ROW + "}}",
    '{"batch": 1e0, "stream": "s", "row": {' + _ROW + "}}",
    '{"batch": true, "stream": "s", "row": {' + _ROW + "}}",
    '{"batch": "0", "stream": "s", "row": {' + _ROW + "}}",
    '{"batch": 18446744073709551616, "stream": "s", "row": {' + _ROW + "}}",
    '{"batch": -1, "stream": "s", "row": {' + _ROW + "}}",
    '{"batch": 0, "stream": "S", "row": {' + _ROW + "}}",
    '{"batch": 0, "stream": null, "row": {' + _ROW + "}}",
    '{"batch": 0, "stream": "\\u0073", "row": {' + _ROW + "}}",
    '{"batch": 0, "stream": "s", "row": {' + _ROW + "}} {}",
    '{"batch": 0, "stream": "s", "row": {' + _ROW + "}}\x00",
    "\ufeff" + '{"batch": 0, "stream": "s", "row": {' + _ROW + "}}",
    '{"batch":0,"stream":"s","row":{"k":1,"v":"2026-01-01T00:00:00Z","t":"2026-01-01"}}',
    '  {"batch": 0, "stream": "s", "row": {' + _ROW + "}}  \t",
    '{"batch": 0, "stream": "s", "row": {' + _ROW + "}}\r",
    "[]",
    "{}",
    "null",
    '"batch"',
    "\x00",
    "",
    " \t ",
]


@pytest.mark.parametrize("line", SHAPES, ids=[f"shape-{i}" for i in range(len(SHAPES))])
def test_records_and_rows_of_every_shape_read_alike(tmp_path: Path, line: str) -> None:
    decl = "TIMESTAMP"
    lines = [record("null", k=0), line, record("null", k=2, batch=1)]
    path = write(tmp_path / "t.jsonl", lines)
    for policy in ("stop", "skip"):
        reference = outcome(lambda: read_trace(path, schemas(decl), policy))  # noqa: B023
        columnar = outcome(lambda: read_trace_columns(path, schemas(decl), policy))  # noqa: B023
        assert columnar == reference, policy


def test_a_repeated_key_is_a_bad_row_wherever_it_is() -> None:
    """Every repeated key of a record or a row is found: by counting quotes on lines
    without escaped quotes, by walking the rest."""
    for line in SHAPES[:12]:
        trace = read_trace([line], schemas("TIMESTAMP"), "skip")
        (bad,) = trace.bad_rows
        assert "is given twice" in bad.reason, line
        assert bad.column is not None
        assert line[bad.column - 1] == '"'  # the key given the second time
    # a nested object may repeat its keys: it is no value of a column either way
    (bad,) = read_trace([SHAPES[12]], schemas("TIMESTAMP"), "skip").bad_rows
    assert bad.reason == "column `v`: expected TIMESTAMP (an ISO-8601 string), got an object"


EVERY_KIND = """spark 4.0
stream s (k BIGINT, i INT, x DOUBLE, f FLOAT, d DECIMAL(10, 2), v STRING, b BOOLEAN,
          t TIMESTAMP, day DATE, bin BINARY)
stream o (k BIGINT)
join j = s AS S INNER JOIN o AS O ON S.k = O.k
"""


def test_counting_quotes_spares_plain_lines_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact walk for repeated keys runs only on lines whose quotes do not add up:
    nulls, strings in DOUBLE and DECIMAL columns and escapes other than ``\\"`` are
    counted; an escaped quote or a repeated key is walked."""
    import sjoin.runtime.io.trace as reader

    walked: list[str] = []
    walk = reader._no_duplicate

    def spy(text: str) -> None:
        walked.append(text)
        walk(text)

    monkeypatch.setattr(reader, "_no_duplicate", spy)
    good = {
        "k": 1, "i": 2, "x": 1.5, "f": 2.5, "d": 3.25, "v": "v", "b": True,
        "t": "2026-01-01T00:00:00Z", "day": "2026-01-02", "bin": "AAE=",
    }  # fmt: skip
    plain = [
        good,
        dict.fromkeys(good),
        {**good, "x": "NaN", "f": "-Infinity", "d": "1.5"},
        {**good, "x": None, "d": None, "v": "\u00e9\n\\"},
    ]
    lines = [json.dumps({"batch": 0, "stream": "s", "row": row}) for row in plain]
    trace = read_trace(lines, schemas_of(plan_of(EVERY_KIND)))
    assert trace.row_count == len(plain) and walked == []
    quoted = json.dumps({"batch": 0, "stream": "s", "row": {**good, "v": 'say "hi"'}})
    repeated = quoted[:-2] + ', "k": 2}}'
    trace = read_trace([quoted, repeated], schemas_of(plan_of(EVERY_KIND)), "skip")
    assert trace.row_count == 1 and walked == [quoted, repeated]
    assert [b.reason.split(":")[0] for b in trace.bad_rows] == [
        "column `k` is given twice in the row"
    ]


def _printable(text: str) -> str:
    """``text`` fit for a UTF-8 file: a lone surrogate as ``\\udXXX``."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def test_the_verdicts_are_the_contract(json_snapshot: Any) -> None:
    """Every value's verdict (the JSON it is written back as, or the bad row's reason):
    a change to what a trace may hold shows in review as a change of this snapshot."""
    table = {
        decl: [[_printable(value), verdict(decl, value)] for value in values]
        for decl, values in VALUES.items()
    }
    shapes = []
    for line in SHAPES:
        trace = read_trace([line], schemas("TIMESTAMP"), "skip")
        shapes.append([line, [[b.column, b.reason] for b in trace.bad_rows]])
    assert {"values": table, "shapes": shapes} == json_snapshot


# --------------------------------------------------------------------------- Parquet

_PARQUET_INTS = {"tinyint": pl.Int8, "smallint": pl.Int16, "int": pl.Int32, "bigint": pl.Int64}


def parquet_series(kind: SqlType, value: Any) -> pl.Series | None:
    """The Parquet column (as ``sjoin run --output-format parquet`` writes the type) that
    holds ``value``, a runtime value of ``kind``; None when Parquet has no form for it."""
    name = kind.name
    if name in _PARQUET_INTS:
        for dtype in (_PARQUET_INTS[name], pl.Int64, pl.UInt64):
            try:
                return pl.Series("v", [value], dtype=dtype, strict=True)
            except (OverflowError, TypeError, pl.exceptions.InvalidOperationError):
                continue
        return None
    if name in ("double", "float"):
        return pl.Series("v", [value], dtype=pl.Float64)
    if name == "decimal" and value is None:
        return pl.Series("v", [None], dtype=pl.Decimal(*kind.params))
    if name == "decimal":
        _, digits, exponent = value.as_tuple()
        scale = max(-exponent, 0)
        if max(len(digits) + max(exponent, 0), scale, 1) > 38:
            return None
        return pl.Series("v", [value], dtype=pl.Decimal(38, scale))
    if name == "timestamp":
        return pl.Series("v", [value], dtype=pl.Int64).cast(pl.Datetime("us", "UTC"))
    if name == "date":
        return pl.Series("v", [value], dtype=pl.Int64).cast(pl.Int32).cast(pl.Date)
    return pl.Series("v", [value], dtype=pl.Boolean if name == "boolean" else pl.String)


def refused_in_range_only(kind: SqlType, value: str) -> Any:
    """The value of ``value`` (JSON text, which the JSON reader refuses) when it is one of
    ``kind`` refused for its range only, so that Parquet can hold it and must refuse it
    too; None otherwise (a value of another JSON type, or one Parquet cannot hold)."""
    name = kind.name
    try:
        data = json.loads(value, parse_float=Decimal)
    except ValueError:
        return None
    if name in _PARQUET_INTS:
        return data if type(data) is int and -(2**63) <= data < 2**64 else None
    if name == "float" and type(data) in (int, Decimal) and len(value) <= 1000:
        number = float(Decimal(data))  # an infinity when it is beyond a double too
        return number if math.isfinite(number) else None
    if name == "decimal" and type(data) in (int, Decimal) and len(value) <= 1000:
        return Decimal(data) if Decimal(data).is_finite() else None
    if name == "timestamp" and isinstance(data, str):
        return parse_trace_timestamp(data)
    if name == "binary" and isinstance(data, str) and not _has_surrogate(data):
        return data
    return None


def parquet_form(decl: str, value: str) -> tuple[pl.Series, Any] | None:
    """The Parquet column holding the value of ``value`` (JSON text), and the JSON reader's
    verdict on it (the runtime value, or the bad row); None when Parquet cannot hold it (a
    JSON value of another type, a lone surrogate, more digits than a Parquet DECIMAL)."""
    kind = sql_type(decl)
    reference = read_one(decl, value)
    if reference.bad_rows:
        data = refused_in_range_only(kind, value)
        if data is None:
            return None
        (verdict,) = reference.bad_rows
    else:
        ((_, data, _),) = reference.batches[0].rows["s"].to_rows()
        verdict = data
    column = parquet_series(kind, data)
    return None if column is None else (column, verdict)


PARQUET_CASES = [
    pytest.param(decl, *form, id=case.id)
    for case in CASES
    for decl, value in [case.values]
    if (form := parquet_form(str(decl), str(value))) is not None
]


@pytest.mark.parametrize(("decl", "column", "json_verdict"), PARQUET_CASES)
def test_a_parquet_trace_gives_the_json_verdict(
    tmp_path: Path, decl: str, column: pl.Series, json_verdict: Any
) -> None:
    """Each value that Parquet can hold, in a Parquet trace: read as the same value, or
    refused with the JSON reader's reason, naming the file, the row and the column."""
    root = write_parquet(tmp_path / "pq", pl.DataFrame([pl.Series("k", [1]), column, STAMP]))
    if isinstance(json_verdict, BadRow):
        with pytest.raises(RunError) as raised:
            read_trace_columns(root, schemas(decl))
        message = str(raised.value)
        assert "batch-0000.parquet: row 1: column `v`: " in message
        assert _gist(message) == _gist(json_verdict.reason), (message, json_verdict.reason)
        assert_streamed_check_refuses(root, decl, message)
        return
    got = read_trace_columns(root, schemas(decl))
    assert rows_of(got.batches[0].rows["s"]) == [(1, plain(json_verdict), 1767225600000000)]
    assert_streamed_check_reads(root, decl, got)


def assert_streamed_check_refuses(root: Path, decl: str, message: str) -> None:
    """The check pass of a streamed Parquet trace (``_parquet_check``: the footer, and only
    the columns a type may refuse) refuses what the whole read refuses, in its words."""
    with pytest.raises(RunError) as raised:
        read_trace_columns(root, schemas(decl), stream=True)
    assert str(raised.value) == message


def assert_streamed_check_reads(root: Path, decl: str, whole: Any) -> None:
    """... and passes what the whole read passes, then reads the same rows."""
    streamed = read_trace_columns(root, schemas(decl), stream=True)
    assert rows_of(streamed.batches[0].rows["s"]) == rows_of(whole.batches[0].rows["s"])


STAMP = pl.Series("t", [1767225600000000]).cast(pl.Datetime("us", "UTC"))


def write_parquet(root: Path, frame: pl.DataFrame, stream: str = "s") -> Path:
    (root / stream).mkdir(parents=True, exist_ok=True)
    frame.write_parquet(root / stream / "batch-0000.parquet")
    return root


def _gist(reason: str) -> str:
    """A refusal's reason without its column and the value as written (a Parquet value
    has no text: a number is written as Python writes it, a time in the canonical form)."""
    tail = reason.rsplit("column `v`: ", 1)[-1]
    for marker in (" is out of range", " does not fit"):
        if marker in tail:
            return marker + tail.split(marker, 1)[1]
    return tail


T_MAX, T_MIN = 253_402_300_799_999_000, -62_135_596_800_000_000  # in µs: ms-exact ends
PARQUET_ONLY = [
    # (declared type, the Parquet column, what the reader says: a value, or an error)
    ("DATE", pl.Series("v", [2_932_897], dtype=pl.Int32).cast(pl.Date), "'+10000-01-01' is out"),
    ("DATE", pl.Series("v", [-719_163], dtype=pl.Int32).cast(pl.Date), "'0000-12-31' is out"),
    ("DATE", pl.Series("v", [-719_162, 2_932_896], dtype=pl.Int32).cast(pl.Date), None),
    ("TIMESTAMP", pl.Series("v", [-100]).cast(pl.Datetime("ns", "UTC")), [-1]),  # floored
    ("TIMESTAMP", pl.Series("v", [0]).cast(pl.Datetime("ms")), [0]),  # naive: UTC
    (
        "TIMESTAMP",
        pl.Series("v", [0]).cast(pl.Datetime("us", "UTC")).dt.convert_time_zone("Asia/Tokyo"),
        [0],
    ),
    ("TIMESTAMP", pl.Series("v", [253_402_300_800_000_000]).cast(pl.Datetime("us")), "out of"),
    ("TIMESTAMP", pl.Series("v", [253_402_300_799_999]).cast(pl.Datetime("ms", "UTC")), [T_MAX]),
    ("TIMESTAMP", pl.Series("v", [253_402_300_800_000]).cast(pl.Datetime("ms")), "+10000-01-01"),
    ("TIMESTAMP", pl.Series("v", [-62_135_596_800_000]).cast(pl.Datetime("ms")), [T_MIN]),
    ("TIMESTAMP", pl.Series("v", [-62_135_596_800_001]).cast(pl.Datetime("ms")), "out of"),
    # instants that microseconds cannot hold (polars' own conversion panics on them)
    ("TIMESTAMP", pl.Series("v", [2**62, None]).cast(pl.Datetime("ms", "UTC")), "out of range"),
    ("TIMESTAMP", pl.Series("v", [-(2**62)]).cast(pl.Datetime("ms", "Asia/Tokyo")), "out of"),
    ("TIMESTAMP", pl.Series("v", [2**63 - 1]).cast(pl.Datetime("ns")), [2**63 // 1000]),
    ("BIGINT", pl.Series("v", [2**64 - 1], dtype=pl.UInt64), "is out of range for BIGINT"),
    ("TINYINT", pl.Series("v", [127, -128], dtype=pl.Int8), [127, -128]),
    ("TINYINT", pl.Series("v", [128], dtype=pl.UInt8), "128 is out of range for TINYINT"),
    ("INT", pl.Series("v", [1.0]), "is Float64, which cannot hold INT"),
    ("DOUBLE", pl.Series("v", [1], dtype=pl.Int64), "is Int64, which cannot hold DOUBLE"),
    (
        "DOUBLE",
        pl.Series("v", [math.nan, -0.0, math.inf, -math.inf], dtype=pl.Float32),
        [("float", "nan"), ("float", "-0.0"), ("float", "inf"), ("float", "-inf")],
    ),
    ("FLOAT", pl.Series("v", [3.4028234663852886e38], dtype=pl.Float32), None),
    ("FLOAT", pl.Series("v", [1e39]), "out of range for FLOAT"),
    ("FLOAT", pl.Series("v", [-1e-46]), "out of range for FLOAT"),
    ("BINARY", pl.Series("v", [b"\x00\xff", b""]), ["AP8=", ""]),  # bytes: as base64
    ("BINARY", pl.Series("v", ["AP8"]), "expected BINARY (a base64 JSON string"),
    ("STRING", pl.Series("v", ["\x00\ufeff\u2028", None]), ["\x00\ufeff\u2028", None]),
    ("STRING", pl.Series("v", [b"x"]), "is Binary, which cannot hold STRING"),
    ("DECIMAL(10, 2)", pl.Series("v", [Decimal("1.005")], dtype=pl.Decimal(10, 3)), None),
    ("DECIMAL(10, 2)", pl.Series("v", [Decimal("-0.001")], dtype=pl.Decimal(10, 3)), None),
    ("DECIMAL(10, 2)", pl.Series("v", [10**8], dtype=pl.Int64), "does not fit DECIMAL(10, 2)"),
    ("DECIMAL(10, 2)", pl.Series("v", [1.5]), "is Float64, which cannot hold DECIMAL(10, 2)"),
    ("BOOLEAN", pl.Series("v", [1], dtype=pl.Int8), "is Int8, which cannot hold BOOLEAN"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("decl", "column", "expected"),
    PARQUET_ONLY,
    ids=[f"{d.split('(')[0]}-{i}" for i, (d, _, _) in enumerate(PARQUET_ONLY)],
)
def test_values_only_a_parquet_file_writes_follow_the_same_rules(
    tmp_path: Path, decl: str, column: pl.Series, expected: Any
) -> None:
    """Parquet holds values no JSON text of the contract writes (other widths and units,
    time zones, bytes, dates beyond the years JSON can write): the same rules apply."""
    kinds = schemas(decl)["s"].types[1]
    n = column.len()
    keys = pl.Series("k", list(range(n)))
    stamps = pl.Series("t", [1767225600000000] * n).cast(pl.Datetime("us", "UTC"))
    root = write_parquet(tmp_path / "pq", pl.DataFrame([keys, column, stamps]))
    if isinstance(expected, str):
        with pytest.raises(RunError, match=r"batch-0000\.parquet: ") as raised:
            read_trace_columns(root, schemas(decl))
        assert expected in str(raised.value)
        assert_streamed_check_refuses(root, decl, str(raised.value))
        return
    whole = read_trace_columns(root, schemas(decl))
    assert_streamed_check_reads(root, decl, whole)
    got = [row[1] for row in rows_of(whole.batches[0].rows["s"])]
    if expected is None:  # the value JSON reads from the same number or date
        texts = [_json_text(v) for v in column.to_list()]
        want = [
            r[1]
            for r in rows_of(
                read_trace([record(x) for x in texts], schemas(decl)).batches[0].rows["s"]
            )
        ]
        assert got == want
        assert kinds.name in ("date", "float", "decimal")
    else:
        assert got == expected


def _json_text(value: Any) -> str:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return json.dumps(str(value))  # a date


def test_a_parquet_trace_refuses_repeated_missing_and_extra_columns(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "pq" / "s").mkdir(parents=True)
    path = tmp_path / "pq" / "s" / "batch-0000.parquet"
    table = pa.table([pa.array([1]), pa.array([2]), pa.array(["x"])], names=["k", "k", "v"])
    pq.write_table(table, path)
    with pytest.raises(RunError, match=r"batch-0000\.parquet: "):
        read_trace_columns(tmp_path / "pq", schemas("STRING"))
    pl.DataFrame({"k": [1], "v": ["x"]}).write_parquet(path)
    with pytest.raises(RunError, match="missing t"):
        read_trace_columns(tmp_path / "pq", schemas("STRING"))
    pl.DataFrame({"k": [1], "v": ["x"], "t": STAMP, "w": [1]}).write_parquet(path)
    with pytest.raises(RunError, match="unknown w"):
        read_trace_columns(tmp_path / "pq", schemas("STRING"))


def test_a_damaged_parquet_file_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged file is an error naming it, whatever polars raises: some damage makes it
    panic (a panic is no ``Exception``; flipping byte 211 of this file did in polars 2.1)."""
    root = write_parquet(tmp_path / "pq", pl.DataFrame({"k": [1], "v": ["x"], "t": STAMP}))
    path = root / "s" / "batch-0000.parquet"
    data = path.read_bytes()
    path.write_bytes(data[:4] + b"\xff" * 64 + data[68:])
    with pytest.raises(RunError, match=r"batch-0000\.parquet: cannot read Parquet: "):
        read_trace_columns(root, schemas("STRING"))

    def panic(*args: Any, **kwargs: Any) -> None:
        raise pl.exceptions.PanicException("range end index 8307 out of range\nbacktrace")

    monkeypatch.setattr(pl, "read_parquet", panic)
    with pytest.raises(RunError, match=r"cannot read Parquet: range end index 8307 out of range$"):
        read_trace_columns(root, schemas("STRING"))


# --------------------------------------------------------------------------- sjoin run


def _run(tmp: Path, spec: Path, trace: Path, engine: str, policy: str) -> dict[str, Any]:
    runs = len(list(tmp.glob("run-*")))
    (tmp / f"run-{runs}").mkdir()
    out, bad_file = tmp / f"run-{runs}" / "out.jsonl", tmp / f"run-{runs}" / "bad.jsonl"
    bad = policy if policy in ("stop", "skip") else str(bad_file)
    result = CliRunner().invoke(
        main,
        [
            "run", str(spec), "--trace", str(trace), "--engine", engine, "--bad-rows", bad,
            "--output", str(out), "--format", "json",
        ],
    )  # fmt: skip
    return {
        "exit": result.exit_code,
        "stderr": result.stderr.replace(str(trace), "TRACE"),
        "output": out.read_bytes() if out.exists() else None,
        "bad rows": bad_file.read_bytes() if bad_file.exists() else None,
    }


@pytest.mark.parametrize("decl", list(VALUES))
def test_sjoin_run_gives_one_verdict_on_every_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, decl: str
) -> None:
    """Each value on its own line of one trace, joined with a partner row so that every
    accepted value is written out: the output, the bad rows (stop, skip, FILE) and the
    exit status are the same on both engines, and through ``--engine auto`` on both sides
    of its threshold (the large trace is the small one and partner-less rows after it)."""
    values = VALUES[decl]
    spec = tmp_path / "s.sjoin"
    spec.write_text(SPEC.format(decl=decl))
    lines = [record(v, k=i) for i, v in enumerate(values)] + [
        partner(i) for i in range(len(values))
    ]
    small = write(tmp_path / "small.jsonl", lines)
    large = write(tmp_path / "large.jsonl", lines + PADDING)
    plan = plan_of(SPEC.format(decl=decl))
    lower_the_break_even(monkeypatch, small)
    auto_large = auto_on_both_sides(plan, small, large)
    for policy in ("stop", "skip", "FILE"):
        runs = {
            engine: _run(tmp_path, spec, small, engine, policy)
            for engine in ("reference", "columnar", "auto")
        }
        assert runs["columnar"] == runs["reference"] == runs["auto"], policy
    large_run = _run(tmp_path, spec, large, "auto", "FILE")
    small_run = _run(tmp_path, spec, small, auto_large, "FILE")
    assert large_run["bad rows"] == small_run["bad rows"]
    assert large_run["output"] == small_run["output"]
    assert large_run["exit"] == small_run["exit"] == 0


@pytest.mark.parametrize(
    "decl", [d for d in VALUES if sql_type(d).name not in ("double", "float", "decimal", "binary")]
)
def test_the_bulk_path_reads_the_accepted_canonical_values_as_the_reference(
    tmp_path: Path, decl: str
) -> None:
    """The values a canonical line can carry, all in one trace with padding: the columnar
    reader reads it in bulk (frames), with the reference reader's values."""
    accepted = [v for v in VALUES[decl] if "value" in verdict(decl, v)]
    lines = [record(v, k=i) for i, v in enumerate(accepted)]
    canonical = []
    for i, text in enumerate(lines):
        one = write(tmp_path / f"one-{i}.jsonl", [text])
        trace = read_trace_columns(one, schemas(decl))
        if isinstance(trace.batches[0].rows["s"], Frame):
            canonical.append(text)
    assert canonical  # each of these types has a canonical form
    large = write(tmp_path / "large.jsonl", canonical + PADDING)
    bulk = read_trace_columns(large, schemas(decl))
    assert all(isinstance(r, Frame) for b in bulk.batches for r in b.rows.values())
    assert outcome(lambda: bulk) == outcome(lambda: read_trace(large, schemas(decl)))


# --------------------------------------------------------------------------- Spark


def _spark_form(kind: SqlType, value: Any) -> Any:
    """A runtime value as the Spark probe below selects it."""
    name = kind.name
    if value is None:
        return None
    if name == "float":  # computed in double precision; Spark holds the 32-bit float
        return repr(struct.unpack("<f", struct.pack("<f", value))[0])
    if name == "double":
        return repr(value)
    if name == "decimal":
        return format(value, "f")
    if name == "binary":
        return base64.b64decode(value).hex().upper()
    return value


@pytest.mark.spark
def test_spark_reads_every_accepted_value_as_the_same_value(spark: Any) -> None:
    """What the contract accepts, Spark's JSON reader (the one the generated job reads its
    input with) accepts too, as the same value: so a trace that runs on sjoin means the same
    on Spark.  (Spark accepts more; the contract does not widen to it.)  One Spark job: a
    column per declaration, a line per accepted value."""
    kinds = [sql_type(decl) for decl in VALUES]
    lines, accepted = [], []
    for i, (decl, values) in enumerate(VALUES.items()):
        for value in values:
            trace = read_one(decl, value)
            if trace.batches:
                lines.append(f'{{"c{i}": {value}}}')
                accepted.append((i, decl, value, trace.batches[0].rows["s"].to_rows()[0][1]))
    select = {
        "timestamp": "unix_micros({})",
        "date": "unix_date({})",
        "decimal": "CAST({} AS STRING)",
        "binary": "hex({})",
    }
    schema = ", ".join(f"c{i} {kind}" for i, kind in enumerate(kinds))
    frame = (
        spark.read.schema(f"{schema}, _corrupt STRING")
        .option("columnNameOfCorruptRecord", "_corrupt")
        .json(spark.sparkContext.parallelize(lines, 1))
        .selectExpr(
            *(select.get(k.name, "{}").format(f"c{i}") + f" AS c{i}" for i, k in enumerate(kinds)),
            "_corrupt",
        )
    )
    wrong = []
    for (i, decl, value, ours), row in zip(accepted, frame.collect(), strict=True):
        theirs = "refused" if row["_corrupt"] is not None else row[f"c{i}"]
        if kinds[i].name in ("float", "double") and isinstance(theirs, float):
            theirs = repr(theirs)
        if theirs != _spark_form(kinds[i], ours):
            wrong.append((decl, value, ours, theirs))
    assert not wrong
