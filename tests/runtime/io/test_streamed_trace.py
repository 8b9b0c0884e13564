"""The streamed trace readers (``read_trace(stream=True)``, ``read_trace_columns(stream=True)``,
issue 40): a check pass that keeps no rows, then batches read one at a time.  They give what
the whole-trace readers give (values, batches, first lines, line numbers, bad rows, the same
errors), the run holds at most the batch it runs and the next, and a bad row in the last
batch is still refused before any output is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from sjoin.cli.main import main
from sjoin.runtime import RunError
from sjoin.runtime.columnar import trace as columnar_trace
from sjoin.runtime.columnar.trace import read_trace_columns
from sjoin.runtime.engine.batches import Rows
from sjoin.runtime.io.sinks import MemorySink
from sjoin.runtime.io.trace import StreamedBatches, Trace, TraceError, read_trace, schemas_of
from sjoin.runtime.runner import Runner

from ..harness import plan_of

SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 second
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 second
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 1 SECOND AND R.t + INTERVAL 1 SECOND
"""
PLAN = plan_of(SPEC)
SCHEMAS = schemas_of(PLAN)
BATCHES = 6


def record(batch: int, stream: str, k: int, second: int) -> str:
    row = {"k": k, "t": f"2026-01-01T00:00:{second:02d}Z", "v": f"{stream}{batch}"}
    return json.dumps({"batch": batch, "stream": stream, "row": row})


def good_lines() -> list[str]:
    return [record(b, s, k, 2 * b) for b in range(BATCHES) for s in ("l", "r") for k in range(1, 4)]


def write(path: Path, lines: list[str], start: bytes = b"", end: str = "\n") -> Path:
    path.write_bytes(start + "".join(text + end for text in lines).encode("utf-8"))
    return path


def _plain(trace: Trace) -> Any:
    return [
        (
            b.value,
            b.first_line,
            b.digest,
            {s: Rows(r.to_rows()) for s, r in b.rows.items()},
            {s: list(n) for s, n in b.lines.items()},
        )
        for b in trace.batches
    ], trace.bad_rows


def _read(reader: Any, path: Path, policy: str, **options: Any) -> Any:
    try:
        return _plain(reader(path, SCHEMAS, policy, **options))
    except (TraceError, RunError) as err:
        return ("error", type(err).__name__, str(err))


def assert_streamed_as_whole(path: Path, **options: Any) -> None:
    for reader in (read_trace, read_trace_columns):
        for policy in ("stop", "skip"):
            whole = _read(reader, path, policy, **options)
            streamed = _read(reader, path, policy, stream=True, **options)
            assert streamed == whole, (reader.__name__, policy)


@pytest.fixture(params=[1 << 24, 150], ids=["one-chunk", "small-chunks"])
def chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The columnar check pass's chunk: the whole file, or a few lines (batches cut across)."""
    monkeypatch.setattr(columnar_trace, "CHUNK_BYTES", request.param)
    return int(request.param)


@pytest.mark.parametrize(
    "case",
    ["canonical", "bom", "no-final-newline", "crlf", "blank", "bad-middle", "bad-last", "order"],
)
def test_a_streamed_trace_reads_as_the_whole_trace(tmp_path: Path, chunk: int, case: str) -> None:
    lines = good_lines()
    start, end = b"", "\n"
    if case == "bom":
        start = b"\xef\xbb\xbf"
    if case == "crlf":
        end = "\r\n"
    if case == "blank":
        lines.insert(7, "   ")
    if case == "bad-middle":
        lines.insert(8, record(1, "l", 1, 2).replace('"k": 1', '"k": "x"'))
    if case == "bad-last":
        lines.append(record(BATCHES - 1, "x", 1, 2))
    if case == "order":
        lines.insert(13, record(0, "l", 1, 2))
    path = write(tmp_path / "t.jsonl", lines, start, end)
    if case == "no-final-newline":
        path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert_streamed_as_whole(path)
    assert_streamed_as_whole(path, lines=True)
    assert _read(read_trace, path, "skip", digests=True, stream=True) == _read(
        read_trace, path, "skip", digests=True
    )


def test_a_streamed_trace_is_checked_before_it_is_read(tmp_path: Path) -> None:
    lines = [*good_lines(), record(BATCHES - 1, "l", 1, 2).replace("2026", "20x6")]
    path = write(tmp_path / "t.jsonl", lines)
    for reader in (read_trace, read_trace_columns):
        with pytest.raises(TraceError) as whole:
            reader(path, SCHEMAS)
        with pytest.raises(TraceError) as streamed:
            reader(path, SCHEMAS, stream=True)
        assert str(streamed.value) == str(whole.value)
        assert f"t.jsonl:{len(lines)}:" in str(streamed.value)


def _parquet(root: Path) -> Path:
    for b in range(BATCHES):
        for s in ("l", "r"):
            frame = pl.DataFrame(
                {
                    "k": [1, 2, 3],
                    "t": pl.Series([f"2026-01-01T00:00:{2 * b:02d}Z"] * 3).str.to_datetime(
                        time_unit="us", time_zone="UTC"
                    ),
                    "v": [f"{s}{b}"] * 3,
                }
            )
            (root / s).mkdir(parents=True, exist_ok=True)
            frame.write_parquet(root / s / f"batch-{b:04d}.parquet")
    return root


def test_a_streamed_parquet_trace_reads_as_the_whole_trace(tmp_path: Path) -> None:
    root = _parquet(tmp_path / "pq")
    assert isinstance(read_trace_columns(root, SCHEMAS).batches, list)
    assert isinstance(read_trace_columns(root, SCHEMAS, stream=True).batches, StreamedBatches)
    for digests in (False, True):
        whole = _plain(read_trace_columns(root, SCHEMAS, digests=digests))
        assert _plain(read_trace_columns(root, SCHEMAS, digests=digests, stream=True)) == whole
    last = root / "r" / f"batch-{BATCHES - 1:04d}.parquet"
    pl.DataFrame({"k": [1], "t": [1], "v": ["x"]}).write_parquet(last)
    with pytest.raises(RunError) as whole_error:
        read_trace_columns(root, SCHEMAS)
    with pytest.raises(RunError) as streamed_error:
        read_trace_columns(root, SCHEMAS, stream=True)
    assert str(streamed_error.value) == str(whole_error.value)


@pytest.mark.parametrize("engine", ["reference", "columnar"])
@pytest.mark.parametrize("form", ["jsonl", "parquet", "jsonl-not-canonical"])
def test_a_run_holds_the_batch_it_runs_and_the_next(tmp_path: Path, engine: str, form: str) -> None:
    if form == "parquet" and engine == "reference":
        pytest.skip("the reference engine reads no Parquet trace")
    if form == "parquet":
        trace: Path = _parquet(tmp_path / "pq")
    else:
        lines = good_lines()
        if form == "jsonl-not-canonical":
            lines = [text.replace(", ", ",") for text in lines]
        trace = write(tmp_path / "t.jsonl", lines)
    runner = Runner(PLAN, trace, None, "stop", None, [MemorySink()], engine=engine)  # type: ignore[arg-type]
    batches = runner.trace.batches
    assert isinstance(batches, StreamedBatches)
    assert batches.reads == []  # checked, and nothing held
    outputs = 0
    for _ in runner.run():
        outputs += 1
        index = runner.engine.cursor.trace_index
        assert max(batches.reads) <= index + 1  # batch k + 2 not read while k runs
        assert len(batches.held) <= StreamedBatches.KEEP
    assert outputs >= BATCHES
    assert sorted(set(batches.reads)) == list(range(BATCHES))
    assert len(batches.reads) == BATCHES  # each read once


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_a_bad_row_in_the_last_batch_stops_the_run_before_any_output(
    tmp_path: Path, engine: str
) -> None:
    spec = tmp_path / "j.sjoin"
    spec.write_text(SPEC)
    lines = [*good_lines(), record(BATCHES - 1, "r", 1, 2).replace('"k": 1', '"k": 1.5')]
    trace = write(tmp_path / "t.jsonl", lines)
    with pytest.raises(TraceError) as expected:
        read_trace(trace, SCHEMAS)
    out = tmp_path / "out.jsonl"
    args = ["run", str(spec), "--trace", str(trace), "--engine", engine, "--output", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert str(expected.value) in result.output
    assert not out.exists() or out.read_text() == ""


def test_a_bad_parquet_file_in_the_last_batch_stops_the_run_before_any_output(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "j.sjoin"
    spec.write_text(SPEC)
    root = _parquet(tmp_path / "pq")
    last = root / "l" / f"batch-{BATCHES - 1:04d}.parquet"
    pl.DataFrame({"k": [1], "t": ["x"], "v": ["x"]}).write_parquet(last)
    out = tmp_path / "out"
    args = ["run", str(spec), "--trace", str(root), "--engine", "columnar"]
    result = CliRunner().invoke(main, [*args, "--output", str(out), "--output-format", "parquet"])
    assert result.exit_code == 1, result.output
    assert f"{last}: column `t` is String, which cannot hold TIMESTAMP" in result.output
    assert not any(out.rglob("*.parquet"))
