"""Fuzzing the trace reader: arbitrary bytes, and records holding arbitrary JSON values in
columns of every type, must each end as a row or as a bad row naming its line; never as an
exception, and never as a row that cannot be written back out.

``test_reader_accounts_for_every_line`` reads a generated file with ``--bad-rows FILE`` and
checks the accounting line by line and that each accepted value renders as output JSON.
``test_cli_never_ends_in_e999`` runs ``sjoin run`` on such traces with a join that emits
every accepted row, so the rows really are rendered and written.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sjoin.cli.main import main
from sjoin.runtime.engine.values import dumps, json_converter
from sjoin.runtime.io.trace import Trace, TraceError, read_trace, schemas_of

from ..harness import plan_of

SPEC = """spark 4.0
stream s (k BIGINT, i INT, sm SMALLINT, ti TINYINT, x DOUBLE, f FLOAT, d DECIMAL(10, 2),
          v STRING, b BOOLEAN, t TIMESTAMP, day DATE, bin BINARY)
  watermark t delay 1 second
stream o (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = s AS S INNER JOIN o AS O ON S.k = O.k
  SELECT S.k, S.i, S.sm, S.ti, S.x, S.f, S.d, S.v, S.b, S.t, S.day, S.bin, O.t AS ot
"""
SCHEMAS = schemas_of(plan_of(SPEC))
COLUMNS = dict(zip(SCHEMAS["s"].columns, (t.name for t in SCHEMAS["s"].types), strict=True))

# --------------------------------------------------------------------------- strategies

SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
TEXT = st.lists(st.characters() | SURROGATE | st.sampled_from('"\\\r\t\x00\ufeff'), max_size=8)
STRINGS = TEXT.map("".join)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | STRINGS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(STRINGS, inner, max_size=3),
    max_leaves=6,
)
# number and string literals at and beyond the edges of what a column can hold
EDGE_LITERALS = (
    "1" + "0" * 400,
    "-1" + "0" * 400,
    "1e400",
    "-1e400",
    "1e-400",
    "1" * 5000,
    "-" + "9" * 4301,
    "1e99999999999999999999",
    "1.5e308",
    "1.8e308",
    "NaN",
    "-Infinity",
    '"NaN"',
    '"Infinity"',
    '"\\ud800"',
    '"a\\udfff"',
    '"\\ud83d\\ude00"',
    "-0",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "128",
    "-129",
    "32768",
    "2147483648",
    "99999999.994",
    "99999999.995",
    "1e39",
    '"9999-12-31T23:30:00-05:00"',
    '"0001-01-01T00:30:00+01:00"',
    '"9999-12-31T23:59:59.999999Z"',
    '"0001-01-01T00:00:00Z"',
    '"10000-01-01T00:00:00Z"',
    '"2026-01-01T00:00:00+25:00"',
    '"\\uff12\\uff10\\uff12\\uff16-01-01"',
    '"0000-12-31"',
    '"9999-12-31"',
)
EDGES = st.sampled_from(EDGE_LITERALS)
OFFSETS = st.integers(-1439, 1439).map(lambda m: timezone(timedelta(minutes=m)))
TIMESTAMPS = st.datetimes(
    datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999999), timezones=st.none() | OFFSETS
).map(lambda d: json.dumps(d.isoformat()))
NUMBERS = (
    st.integers(-(2**70), 2**70).map(str)
    | st.floats().map(json.dumps)
    | st.decimals(allow_nan=False, allow_infinity=False).map(str)
)


def ints(bits: int) -> st.SearchStrategy[str]:
    return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1).map(str)


# values a column of each type takes (nearly always; a timestamp near an end of the range
# may still fall outside it once its offset is applied)
RIGHT = {
    "bigint": ints(64),
    "int": ints(32),
    "smallint": ints(16),
    "tinyint": ints(8),
    "double": st.floats().map(json.dumps),
    "float": st.floats(width=32).map(json.dumps),
    "decimal": st.decimals("-99999999.99", "99999999.99", places=2).map(str),
    "string": st.builds(json.dumps, st.text(max_size=8), ensure_ascii=st.booleans()),
    "binary": st.builds(json.dumps, st.text(max_size=8)),
    "boolean": st.sampled_from(["true", "false"]),
    "timestamp": TIMESTAMPS,
    "date": st.dates(date(1, 1, 1), date(9999, 12, 31)).map(lambda d: json.dumps(d.isoformat())),
}
# values that are wrong for a column, or at or beyond an edge of what it holds
WRONG = st.one_of(
    EDGES,
    EDGES,
    NUMBERS,
    st.builds(json.dumps, JSON, ensure_ascii=st.booleans()),
    st.builds(json.dumps, STRINGS, ensure_ascii=st.booleans()),
)


@st.composite
def s_record(draw: st.DrawFn, batch: int | None = None, k: str | None = None) -> bytes:
    """A record of stream ``s``: right values but in up to two columns; now and then a
    null, a column missing or an extra one."""
    wrong = draw(st.sets(st.sampled_from(sorted(COLUMNS)), max_size=2))
    fields = {
        c: draw(WRONG | RIGHT[kind])
        if c in wrong
        else draw(st.just("null") if draw(st.integers(0, 19)) == 0 else RIGHT[kind])
        for c, kind in COLUMNS.items()
    }
    if k is not None:
        fields["k"] = k
    elif draw(st.integers(0, 19)) == 0:
        fields.pop(draw(st.sampled_from(sorted(fields))))
    if draw(st.integers(0, 19)) == 0:
        fields[draw(STRINGS)] = "1"
    row = ", ".join(f"{json.dumps(c)}: {v}" for c, v in fields.items())
    number = batch if batch is not None else draw(st.integers(0, 3))
    text = f'{{"batch": {number}, "stream": "s", "row": {{{row}}}}}'
    return text.encode("utf-8", "surrogatepass")


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A record with one byte changed, inserted or removed."""
    data = bytearray(draw(s_record()))
    at = draw(st.integers(0, len(data) - 1))
    action = draw(st.sampled_from(["flip", "insert", "delete"]))
    if action == "flip":
        data[at] ^= 1 << draw(st.integers(0, 7))
    elif action == "insert":
        data.insert(at, draw(st.integers(0, 255)))
    else:
        del data[at]
    return bytes(data)


LINES = st.lists(st.one_of(s_record(), s_record(), mutated(), st.binary(max_size=40)), max_size=6)


# --------------------------------------------------------------------------- checks


def file_lines(data: bytes) -> list[bytes]:
    """The lines the reader sees: split at b"\\n" only, the BOM of the first one dropped."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    return lines


def renders(kind: str, value: object) -> bytes:
    convert = json_converter(kind)
    return dumps(convert(value) if convert is not None and value is not None else value).encode()


def check_every_line(directory: Path, data: bytes) -> Trace:
    """Read ``data`` as a trace file with ``--bad-rows FILE``: nothing may raise, each
    non-blank line must be a row or a bad row (with its line, and a column within it), the
    file must list the bad rows, and every accepted value must render as output JSON."""
    path, report = directory / "t.jsonl", directory / "bad.jsonl"
    path.write_bytes(data)
    report.unlink(missing_ok=True)
    trace = read_trace(path, SCHEMAS, report)  # any exception fails the test

    seen = file_lines(data)
    filled = {n for n, raw in enumerate(seen, start=1) if raw.strip(b" \t\r\n")}
    bad_lines = [b.line for b in trace.bad_rows]
    assert len(set(bad_lines)) == len(bad_lines)
    assert set(bad_lines) <= filled
    assert trace.row_count + len(bad_lines) == len(filled)  # each line: a row or a bad row
    for bad in trace.bad_rows:
        raw = seen[bad.line - 1]
        assert bad.reason
        assert bad.column is None or 1 <= bad.column <= len(raw) + 1, bad
    report_text = report.read_bytes().decode("utf-8") if report.exists() else ""
    written = [json.loads(x) for x in report_text.split("\n")[:-1]]
    assert [(w["line"], w["column"]) for w in written] == [
        (b.line, b.column) for b in trace.bad_rows
    ]
    for batch in trace.batches:
        for stream, rows in batch.rows.items():
            kinds = [t.name for t in SCHEMAS[stream].types]
            for row in rows.to_rows():
                for kind, value in zip(kinds, row, strict=True):
                    renders(kind, value)  # every accepted value can be written out
    return trace


@given(lines=LINES, bom=st.booleans(), crlf=st.booleans())
def test_reader_accounts_for_every_line(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], bom: bool, crlf: bool
) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + b"".join(
        line + (b"\r\n" if crlf else b"\n") for line in lines
    )
    check_every_line(tmp_path_factory.mktemp("fuzz"), data)


def test_every_edge_value_in_every_column(tmp_path: Path) -> None:
    """Each edge literal in each column of ``s``, the other columns right: one line each."""
    good = {
        "k": "1", "i": "2", "sm": "3", "ti": "4", "x": "1.5", "f": "2.5", "d": "3.25",
        "v": '"v"', "b": "true", "t": '"2026-01-01T00:00:00Z"', "day": '"2026-01-02"',
        "bin": '"AAE="',
    }  # fmt: skip
    edges = EDGE_LITERALS
    lines = []
    for column in COLUMNS:
        for edge in edges:
            row = ", ".join(f'"{c}": {edge if c == column else v}' for c, v in good.items())
            lines.append(f'{{"batch": 0, "stream": "s", "row": {{{row}}}}}'.encode())
    trace = check_every_line(tmp_path, b"\n".join(lines) + b"\n")
    assert len(lines) == len(COLUMNS) * len(edges) == trace.row_count + len(trace.bad_rows)
    assert 0 < trace.row_count < len(lines)


@given(
    rows=st.lists(st.integers(0, 2).flatmap(lambda b: s_record(b, k="1")), max_size=4),
    extra=st.lists(st.binary(max_size=30) | mutated(), max_size=2),
)
@settings(max_examples=25)
def test_cli_never_ends_in_e999(
    tmp_path_factory: pytest.TempPathFactory, rows: list[bytes], extra: list[bytes]
) -> None:
    directory = tmp_path_factory.mktemp("cli")
    spec, trace = directory / "j.sjoin", directory / "t.jsonl"
    out, report = directory / "out.jsonl", directory / "bad.jsonl"
    spec.write_text(SPEC)
    ordered = sorted(rows, key=lambda r: int(r.split(b",")[0].split(b":")[1]))
    partners = [
        f'{{"batch": {b}, "stream": "o", "row": {{"k": 1, "t": "2026-01-01T00:00:00Z"}}}}'.encode()
        for b in range(3)
    ]
    trace.write_bytes(b"\n".join(ordered + partners + extra) + b"\n")
    result = CliRunner().invoke(
        main,
        ["run", str(spec), "--trace", str(trace), "--bad-rows", str(report), "--output", str(out)],
    )
    assert "E999" not in result.stderr, result.stderr
    assert result.exit_code == 0, result.stderr
    for line in out.read_bytes().decode("utf-8").split("\n")[:-1]:
        assert json.loads(line)["relation"] == "j"
    if report.exists():
        for line in report.read_bytes().decode("utf-8").split("\n")[:-1]:
            assert json.loads(line)["line"] >= 1


def test_a_timestamp_read_is_one_written_back() -> None:
    """The range check keeps every accepted timestamp within what renders as ``...Z``."""
    lines = [
        '{"batch": 0, "stream": "o", "row": {"k": 1, "t": "9999-12-31T18:59:59.999999-05:00"}}',
        '{"batch": 0, "stream": "o", "row": {"k": 1, "t": "0001-01-01T00:59:59+01:00"}}',
    ]
    trace = read_trace(lines, SCHEMAS, "skip")
    assert [b.line for b in trace.bad_rows] == [2]
    (value,) = [r[1] for r in trace.batches[0].rows["o"].to_rows()]
    assert renders("timestamp", value) == b'"9999-12-31T23:59:59.999999Z"'
    with pytest.raises(TraceError, match="out of range: TIMESTAMP holds years 0001 to 9999"):
        read_trace(lines, SCHEMAS)
