"""Reading and checking traces: every bad row is reported with its line number."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from sjoin.runtime.engine.batches import Rows
from sjoin.runtime.engine.values import (
    MAX_TIMESTAMP_US,
    MIN_TIMESTAMP_US,
    format_date,
    format_timestamp,
    parse_timestamp,
)
from sjoin.runtime.io.trace import TraceError, read_trace, schemas_of

from ..harness import plan_of

SPEC = """spark 4.3
stream s (k BIGINT, t TIMESTAMP, v STRING, d DECIMAL(5, 2), x DOUBLE, b BOOLEAN, day DATE)
  watermark t delay 1 second
stream o (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = s AS S INNER JOIN o AS O ON S.k = O.k
"""
SCHEMAS = schemas_of(plan_of(SPEC))
GOOD = {
    "k": 1,
    "t": "2026-01-01T00:00:00Z",
    "v": "a",
    "d": 1.5,
    "x": 2,
    "b": True,
    "day": "2026-01-02",
}


def line(batch: object = 0, stream: object = "s", **row: object) -> str:
    return json.dumps({"batch": batch, "stream": stream, "row": {**GOOD, **row}})


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_good_rows_become_runtime_values(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            line(),
            "",
            line(batch=3, t="2026-01-01T01:00:00+01:00"),
            '{"batch": 3, "stream": "o", "row": {"k": 1, "t": "2026-01-01 00:00:00.123456"}}',
        ],
    )
    trace = read_trace(path, SCHEMAS)
    assert [b.value for b in trace.batches] == [0, 3]
    (first,) = trace.batches[0].rows["s"].to_rows()
    assert first == (1, 1767225600000000, "a", Decimal("1.50"), 2.0, True, 20455)
    assert trace.batches[1].rows["s"].to_rows()[0][1] == 1767225600000000  # the offset is applied
    assert trace.batches[1].rows["o"] == Rows([(1, 1767225600123456)])
    assert trace.batches[1].first_line == 3
    assert trace.row_count == 3


def test_timestamps() -> None:
    assert parse_timestamp("2026-01-01T00:00:00") == parse_timestamp("2026-01-01T00:00:00Z")
    assert parse_timestamp("2026-01-01") == parse_timestamp("2026-01-01T00:00:00Z")
    assert parse_timestamp("2026-01-01T00:00:00.1234567Z") == 1767225600123456  # truncated
    assert parse_timestamp("2026-01-01T02:00:00+0200") == 1767225600000000
    assert parse_timestamp("1969-12-31T23:59:59.5Z") == -500_000
    for bad in (
        "2026-13-01T00:00:00Z",
        "2026-02-30",
        "yesterday",
        "2026-01-01T25:00:00",
        "2026-01-01T00:00:00+25:00",
        "",
    ):
        assert parse_timestamp(bad) is None, bad
    assert format_timestamp(1767225600000000) == "2026-01-01T00:00:00Z"
    assert format_timestamp(1767225600000001) == "2026-01-01T00:00:00.000001Z"
    assert format_timestamp(-500_000) == "1969-12-31T23:59:59.500000Z"
    assert parse_timestamp("\uff12\uff10\uff12\uff16-01-01") is None  # ASCII digits only
    late = MAX_TIMESTAMP_US + 1 + 16_200_000_000  # 10000-01-01T04:30:00Z
    assert parse_timestamp("9999-12-31T23:30:00-05:00") == late
    # beyond years 0001..9999 (only arithmetic gets there): ISO 8601's expanded years
    assert format_timestamp(MAX_TIMESTAMP_US) == "9999-12-31T23:59:59.999999Z"
    assert format_timestamp(MAX_TIMESTAMP_US + 1) == "+10000-01-01T00:00:00Z"
    assert format_timestamp(MIN_TIMESTAMP_US) == "0001-01-01T00:00:00Z"
    assert format_timestamp(MIN_TIMESTAMP_US - 1) == "0000-12-31T23:59:59.999999Z"
    assert format_date(-719_529) == "-0001-12-31"


# (line, reason, what precedes the fault in the line: the bad row's column is right after it)
BAD = [
    ("{not json", "bad JSON", "{"),
    ('["batch"]', "expected an object", ""),
    ('{"batch": 0, "stream": "s"}', "missing `row`", ""),
    ('{"batch": "0", "stream": "s", "row": {}}', "`batch` must be an integer", '"batch": '),
    (line(stream="nope"), "unknown stream `nope`", '"stream": '),
    (json.dumps({"batch": 0, "stream": "s", "row": {"k": 1}}), "missing column `t`", '"row": '),
    (line(extra=1), "unknown column(s) `extra`", '"day": "2026-01-02", '),
    (line(k="1"), "column `k`: expected BIGINT", '"k": '),
    (line(k=2**63), "out of range for BIGINT", '"k": '),
    (line(k=True), "column `k`: expected BIGINT", '"k": '),
    (line(t="not a time"), "unparsable timestamp 'not a time'", '"t": '),
    (line(t=12), "expected TIMESTAMP", '"t": '),
    (line(v=3), "expected STRING", '"v": '),
    (line(d=1234.5), "does not fit DECIMAL(5, 2)", '"d": '),
    (line(x="1.0"), "expected DOUBLE", '"x": '),
    (line(b="true"), "expected BOOLEAN", '"b": '),
    (line(day="2026-02-30"), "expected DATE", '"day": '),
]


@pytest.mark.parametrize(("text", "reason", "before"), BAD, ids=[r for _, r, _ in BAD])
def test_bad_row_is_reported_with_its_line(
    tmp_path: Path, text: str, reason: str, before: str
) -> None:
    path = write(tmp_path, [line(), text, line(batch=1)])
    with pytest.raises(TraceError) as err:
        read_trace(path, SCHEMAS)
    (bad,) = err.value.bad_rows
    assert bad.line == 2
    assert reason in bad.reason
    assert bad.column == text.index(before) + len(before) + 1, bad
    assert f"{path}:2:{bad.column}: " in str(err.value)
    assert "--bad-rows skip" in str(err.value)


def test_unknown_stream_and_column_say_did_you_mean(tmp_path: Path) -> None:
    """The trace's unknown names get the compiler's did-you-mean (issue 35, item 7): the
    closest stream, and for a column the closest of those the row lacks."""
    misspelt = {k: v for k, v in GOOD.items() if k != "day"} | {"dya": "2026-01-02"}
    cases = [
        (line(stream="ss"), "unknown stream `ss` (streams: o, s); did you mean `s`?"),
        (
            json.dumps({"batch": 0, "stream": "s", "row": misspelt}),
            "; did you mean `day`?",
        ),
        (line(stream="zzzzzz"), "unknown stream `zzzzzz` (streams: o, s)"),
    ]
    for text, reason in cases:
        path = write(tmp_path, [text])
        with pytest.raises(TraceError) as err:
            read_trace(path, SCHEMAS)
        (bad,) = err.value.bad_rows
        assert bad.reason.endswith(reason), bad.reason
    assert "did you mean" not in bad.reason  # nothing close: no guess


def test_batches_out_of_order(tmp_path: Path) -> None:
    path = write(tmp_path, [line(batch=5), line(batch=2), line(batch=5), line(batch=7)])
    with pytest.raises(TraceError) as err:
        read_trace(path, SCHEMAS)
    (bad,) = err.value.bad_rows
    assert (bad.line, bad.batch) == (2, 2)
    assert "batch 2 comes after batch 5" in bad.reason


def test_stop_reports_every_bad_row(tmp_path: Path) -> None:
    path = write(tmp_path, [line(k="x"), line(), line(t="?"), line(stream="z")])
    with pytest.raises(TraceError) as err:
        read_trace(path, SCHEMAS)
    assert [b.line for b in err.value.bad_rows] == [1, 3, 4]
    assert str(err.value).startswith(f"3 bad row(s) in trace {path}:")


def test_skip_and_file_policies(tmp_path: Path) -> None:
    path = write(tmp_path, [line(k="x"), line(), line(batch=1, t="?")])
    trace = read_trace(path, SCHEMAS, "skip")
    assert [b.line for b in trace.bad_rows] == [1, 3]
    assert [b.value for b in trace.batches] == [0]  # a batch of only bad rows is gone
    report = tmp_path / "bad.jsonl"
    report.write_text("stale\n")
    trace = read_trace(path, SCHEMAS, report)
    assert len(trace.batches) == 1
    written = [json.loads(x) for x in report.read_text().splitlines()]
    assert [(w["line"], w["batch"], w["stream"]) for w in written] == [(1, 0, "s"), (3, 1, "s")]
    assert "column `t`: unparsable timestamp" in written[1]["error"]
    assert written[0]["text"] == line(k="x")


def test_records_instead_of_a_file() -> None:
    records = [json.loads(line()), {"batch": 1, "stream": "o", "row": {"k": None, "t": None}}]
    trace = read_trace(records, SCHEMAS)
    assert trace.batches[1].rows["o"] == Rows([(None, None)])
    with pytest.raises(TraceError) as err:
        read_trace([{"batch": 0, "stream": "o", "row": {"k": 1}}], SCHEMAS)
    assert err.value.bad_rows[0].line == 1


def test_non_finite_doubles(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            line(x="NaN"),
            line(x="-Infinity"),
            '{"batch": 0, "stream": "o", "row": {"k": NaN, "t": null}}',
        ],
    )
    with pytest.raises(TraceError) as err:
        read_trace(path, SCHEMAS)
    assert [b.line for b in err.value.bad_rows] == [3]  # NaN is no BIGINT
    trace = read_trace(path, SCHEMAS, "skip")
    values = [r[4] for r in trace.batches[0].rows["s"].to_rows()]
    assert values[0] != values[0] and values[1] == float("-inf")


def test_records_with_values_beyond_reach() -> None:
    """Record dicts (no text) with an int past Python's int-to-string limit or a surrogate:
    bad rows with readable reasons, never an exception while describing them."""
    huge = 10**5000
    records = [
        {"batch": 0, "stream": "o", "row": {"k": huge, "t": None}},
        {"batch": 0, "stream": "s", "row": {**GOOD, "v": "\ud800"}},
        {"batch": 0, "stream": "\udcff", "row": {}},
    ]
    trace = read_trace(records, SCHEMAS, "skip")
    reasons = [b.reason for b in trace.bad_rows]
    assert "an integer of about 5000 digits is out of range for BIGINT" in reasons[0]
    assert "lone surrogate '\\ud800'" in reasons[1]
    assert "unknown stream `\\udcff`" in reasons[2]
    for bad in trace.bad_rows:
        (bad.reason + bad.text + (bad.stream or "")).encode("utf-8")
        assert bad.column is None


@pytest.mark.parametrize("ending", ["\n", "\r\n", ""])
def test_error_at_the_end_of_a_line_is_reported_at_its_end(tmp_path: Path, ending: str) -> None:
    """`[` then the line end: the decoder looks past the end for a value; the column is
    the one just after `[` (found by the trace-reader property test)."""
    path = tmp_path / "t.jsonl"
    path.write_text(line() + "\n[" + ending, newline="")
    with pytest.raises(TraceError) as err:
        read_trace(path, SCHEMAS)
    (bad,) = err.value.bad_rows
    assert (bad.line, bad.column) == (2, 2), bad
