"""The columnar engine's trace readers: the bulk JSON-lines reader gives exactly what the
reference reader gives (values, batches, first lines; the same bad rows, with line and column,
through the same errors), and a Parquet trace gives the rows of the equivalent JSON trace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sjoin.jvm.verify import _read_any_trace
from sjoin.runtime import RunError, UsageError
from sjoin.runtime.columnar.trace import read_trace_columns
from sjoin.runtime.engine.batches import Frame, Rows
from sjoin.runtime.io.trace import Trace, TraceError, read_trace, schemas_of

from ..harness import plan_of

SPEC = """spark 4.3
stream c (k BIGINT, i INT, t TIMESTAMP, v STRING, b BOOLEAN, day DATE)
  watermark t delay 1 second
stream o (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = c AS C INNER JOIN o AS O ON C.k = O.k
"""
SCHEMAS = schemas_of(plan_of(SPEC))
GOOD = {"k": 1, "i": 2, "t": "2026-01-01T00:00:00.250Z", "v": "a", "b": True, "day": "2026-01-02"}


def line(batch: object = 0, stream: object = "c", **row: object) -> str:
    values = GOOD if stream == "c" else {"k": 1, "t": "2026-01-01T00:00:01Z"}
    row_values = {**values, **row}
    return json.dumps({"batch": batch, "stream": stream, "row": row_values}, ensure_ascii=False)


def _plain(trace: Trace) -> Any:
    return [
        (
            b.value,
            b.first_line,
            {s: Rows(r.to_rows()) for s, r in b.rows.items()},
        )
        for b in trace.batches
    ], trace.bad_rows


def _read(reader: Any, path: Path, policy: str = "stop") -> Any:
    try:
        return _plain(reader(path, SCHEMAS, policy))
    except TraceError as err:
        return ("error", str(err), err.bad_rows)


def assert_readers_agree(path: Path) -> None:
    for policy in ("stop", "skip"):
        assert _read(read_trace_columns, path, policy) == _read(read_trace, path, policy)


def test_canonical_trace_is_read_in_bulk(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [
        line(),
        line(stream="o"),
        line(k=None, i=-(2**31), t="0001-01-01T00:00:00Z", v="é ☃", b=False, day=None),
        line(batch=3, k=2**63 - 1, i=2**31 - 1, t="9999-12-31T23:59:59.999Z", v=""),
        line(batch=3, stream="o", k=-(2**63), t=None),
    ]
    path.write_text("\n".join(lines) + "\n")
    trace = read_trace_columns(path, SCHEMAS)
    assert all(isinstance(r, Frame) for b in trace.batches for r in b.rows.values())
    assert _plain(trace) == _plain(read_trace(path, SCHEMAS))


BAD_OR_UNUSUAL = [
    line(k="1"),
    line(k=2**63),
    line(i=2**31),
    line(k=True),
    line(t="not a time"),
    line(t="2026-02-30T00:00:00Z"),
    line(t="0000-01-01T00:00:00Z"),
    line(t="2026-01-01T00:00:00+01:00"),  # good, but not the canonical form
    line(day="2026-02-30"),
    line(day="0000-01-01"),
    line(v="tab\there"),  # good, with an escape
    line(v=3),
    line(b="true"),
    line(extra=1),
    line(stream="nope"),
    line(batch=-1),  # comes after batch 0
    json.dumps({"stream": "c", "batch": 0, "row": GOOD}),  # fields in another order
    json.dumps({"batch": 0, "stream": "c", "row": {"k": 1}}),
    '{"batch": 0, "stream": "c", "row": {"k": 01}}',
    "{not json",
    "   ",
    "",
    line(v="unit\x1fseparator").replace("\\u001f", "\x1f"),  # a raw control character
    line(v='a, "t": 1'),  # a separator inside a string (escaped quotes: not canonical)
]


@pytest.mark.parametrize("text", BAD_OR_UNUSUAL)
def test_any_other_line_reads_as_the_reference_reads_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([line(), text, line(batch=1)]) + "\n")
    assert_readers_agree(path)


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from([line(), line(batch=1), line(stream="o"), *BAD_OR_UNUSUAL]),
        max_size=8,
    ),
    ending=st.sampled_from(["\n", "\r\n"]),
    bom=st.booleans(),
    final=st.booleans(),
)
def test_random_traces_read_alike(
    tmp_path_factory: pytest.TempPathFactory,
    pieces: list[str],
    ending: str,
    bom: bool,
    final: bool,
) -> None:
    path = tmp_path_factory.mktemp("trace") / "t.jsonl"
    body = ending.join(pieces) + (ending if final and pieces else "")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body.encode("utf-8"))
    assert_readers_agree(path)


NAMED_LIKE_THE_RECORD = """spark 4.3
stream s (batch BIGINT, stream STRING, `row` STRING, t TIMESTAMP, `é k` DATE)
  watermark t delay 1 second
stream `ü` (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = s AS S INNER JOIN `ü` AS U ON S.batch = U.k
"""


@pytest.mark.parametrize("text", ["plain", "non-ascii"])
def test_columns_named_like_the_record_fields_read_alike(tmp_path: Path, text: str) -> None:
    """Values are found between the record's separators (`, "stream": `, ...): columns named
    `batch`, `stream` or `row`, strings holding `, "t": `-like text without quotes, and
    non-ASCII text (found bytes and sliced characters differ there) read as the reference."""
    schemas = schemas_of(plan_of(NAMED_LIKE_THE_RECORD))
    word = "x, t: row: {batch: 1}}" if text == "plain" else "é, ☃: {ü}}"
    lines = []
    for batch in range(3):
        for i in range(4):  # times repeat: parsed once per distinct text
            row = {
                "batch": batch * 10 + i,
                "stream": word if i % 2 else None,
                "row": f"{word}{i}",
                "t": f"2026-01-01T00:00:0{i % 2}.250Z",
                "é k": "2026-01-02" if i % 3 else None,
            }
            lines.append(
                json.dumps({"batch": batch, "stream": "s", "row": row}, ensure_ascii=False)
            )
        other = {"k": batch, "t": "2026-01-01T00:00:01Z"}
        lines.append(json.dumps({"batch": batch, "stream": "ü", "row": other}, ensure_ascii=False))
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    trace = read_trace_columns(path, schemas)
    assert all(isinstance(r, Frame) for b in trace.batches for r in b.rows.values())
    assert _plain(trace) == _plain(read_trace(path, schemas))


def test_invalid_utf8_reads_as_the_reference_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes((line() + "\n").encode() + line(v="x").encode().replace(b"x", b"\xff") + b"\n")
    assert_readers_agree(path)


# ------------------------------------------------------------------------------ Parquet


def _write_parquet(root: Path, stream: str, batch: int, frame: pl.DataFrame) -> None:
    (root / stream).mkdir(parents=True, exist_ok=True)
    frame.write_parquet(root / stream / f"batch-{batch:04d}.parquet")


def _stamp(text: str) -> Any:
    return pl.Series([text]).str.to_datetime(time_unit="us", time_zone="UTC").item()


def test_parquet_trace_reads_as_its_json_trace(tmp_path: Path) -> None:
    rows = {
        (0, "c"): [line(), line(k=None, v=None, b=None, day=None)],
        (0, "o"): [line(stream="o")],
        (2, "o"): [line(batch=2, stream="o", k=7, t="2026-01-01T00:00:09.5Z")],
    }
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(x for v in rows.values() for x in v) + "\n")
    root = tmp_path / "pq"
    for (batch, stream), texts in rows.items():
        records = [json.loads(t)["row"] for t in texts]
        frame = pl.DataFrame(records)
        frame = frame.with_columns(
            pl.col("t").str.to_datetime(time_unit="us", time_zone="UTC"),
            *([pl.col("day").str.to_date()] if "day" in frame.columns else []),
            *([pl.col("i").cast(pl.Int32)] if "i" in frame.columns else []),
        )
        _write_parquet(root, stream, batch, frame)
    got = read_trace_columns(root, SCHEMAS)
    want = read_trace(path, SCHEMAS)
    assert [(b.value, {s: Rows(r.to_rows()) for s, r in b.rows.items()}) for b in got.batches] == [
        (b.value, b.rows) for b in want.batches
    ]
    # ``verify`` reads a Parquet trace as rows per batch (``of_trace(...).to_rows()``)
    replayed = _read_any_trace(plan_of(SPEC), root, "stop")
    assert [(b.value, b.rows) for b in replayed.batches] == [
        (b.value, b.rows) for b in want.batches
    ]


def test_parquet_trace_errors_name_the_file(tmp_path: Path) -> None:
    root = tmp_path / "pq"
    good = pl.DataFrame({"k": [1], "t": [_stamp("2026-01-01T00:00:00Z")]})
    _write_parquet(root, "o", 0, good.with_columns(pl.lit("x").alias("extra")))
    with pytest.raises(RunError, match=r"batch-0000\.parquet: .* unknown extra"):
        read_trace_columns(root, SCHEMAS)
    _write_parquet(root, "o", 0, good.with_columns(pl.col("k").cast(pl.String)))
    with pytest.raises(RunError, match=r"column `k` is String, which cannot hold BIGINT"):
        read_trace_columns(root, SCHEMAS)
    _write_parquet(root, "o", 0, good)
    (root / "zzz").mkdir()
    with pytest.raises(UsageError, match=r"`zzz` is not a stream of the spec"):
        read_trace_columns(root, SCHEMAS)


DECIMAL_SPEC = """spark 4.3
stream d (k BIGINT, t TIMESTAMP, amount DECIMAL(12, 2)) watermark t delay 1 second
stream o (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = d AS D INNER JOIN o AS O ON D.k = O.k
"""


@pytest.mark.parametrize(
    "column",
    [
        pl.Series("amount", ["1.25", "-0.00", None, "9999999999.99"]).cast(pl.Decimal(12, 2)),
        pl.Series("amount", ["1.2", "-7", None, "0.1"]).cast(pl.Decimal(10, 1)),  # scaled up
        pl.Series("amount", ["1.255", "-1.005", None, "0.004"]).cast(pl.Decimal(20, 3)),  # HALF_UP
        pl.Series("amount", [1, -3, None, 10**10 - 1], dtype=pl.Int64),
        pl.Series("amount", [0, 7, None], dtype=pl.UInt64),
    ],
    ids=["same-scale", "fewer-digits", "more-digits", "int64", "uint64"],
)
def test_a_parquet_decimal_column_is_a_decimal_frame_column(
    tmp_path: Path, column: pl.Series
) -> None:
    """A DECIMAL(p, s) column of a Parquet trace is a ``Decimal(38, s)`` column of the
    stream's frame (the columnar operators read it as it is), holding the values the JSON
    reader reads from the same numbers."""
    schemas = schemas_of(plan_of(DECIMAL_SPEC))
    n = column.len()
    stamps = pl.Series("t", [1767225600000000] * n).cast(pl.Datetime("us", "UTC"))
    root = tmp_path / "pq"
    _write_parquet(root, "d", 0, pl.DataFrame([pl.Series("k", range(n)), stamps, column]))
    (batch,) = read_trace_columns(root, schemas).batches
    got = batch.rows["d"]
    assert isinstance(got, Frame)
    assert got.frame.get_column("c2").dtype == pl.Decimal(38, 2)
    texts = ["null" if v is None else str(v) for v in column.to_list()]
    path = tmp_path / "d.jsonl"
    head = '{"batch": 0, "stream": "d", "row": {"k": '
    path.write_text(
        "".join(
            f'{head}{i}, "t": "2026-01-01T00:00:00Z", "amount": {text}}}}}\n'
            for i, text in enumerate(texts)
        )
    )
    want = read_trace(path, schemas).batches[0].rows["d"].to_rows()
    assert got.to_rows() == want
    assert [repr(r[2]) for r in got.to_rows()] == [repr(r[2]) for r in want]


def test_a_parquet_decimal_beyond_its_type_is_refused_with_its_row(tmp_path: Path) -> None:
    schemas = schemas_of(plan_of(DECIMAL_SPEC))
    stamps = pl.Series("t", [1767225600000000] * 3).cast(pl.Datetime("us", "UTC"))
    amounts = pl.Series("amount", ["1", "-9999999999.99", "-10000000000.00"])
    frame = pl.DataFrame([pl.Series("k", [1, 2, 3]), stamps, amounts.cast(pl.Decimal(14, 2))])
    _write_parquet(tmp_path / "pq", "d", 0, frame)
    with pytest.raises(RunError, match=r"row 3: column `amount`: .*does not fit DECIMAL\(12, 2\)"):
        read_trace_columns(tmp_path / "pq", schemas)
