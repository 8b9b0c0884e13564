"""The other streamed inputs (issue 40, item 1): a Delta trace is read one micro-batch at a
time after a check pass that holds no rows, as a trace file is; a file-based static table no
longer reads a streamed trace again at the start.  Each: a bad file in the LAST batch still
refused before any output, the batches held at once bounded (counted, not timed), the
outputs those of the trace read whole.  (A replayed topic: tests/integration/kafka/
test_replay_streamed.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from deltalake import write_deltalake

from sjoin.api import check_text
from sjoin.cli.main import main
from sjoin.runtime import RunError, delta_options, run
from sjoin.runtime.columnar.delta import read_delta_trace
from sjoin.runtime.io.sinks import MemorySink
from sjoin.runtime.io.trace import StreamedBatches, Trace, schemas_of
from sjoin.runtime.runner import Runner

SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 second
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 second
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 1 SECOND AND R.t + INTERVAL 1 SECOND
"""
VERSIONS = 6
FROM_0 = {"*": 0}


def _plan(text: str = SPEC) -> Any:
    result = check_text(text, "s.sjoin")
    assert result.plan is not None and result.ok
    return result.plan


def _frame(b: int, s: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "k": pl.Series([1, 2, 3], dtype=pl.Int64),
            "t": pl.Series([2 * b * 1_000_000] * 3, dtype=pl.Int64).cast(pl.Datetime("us", "UTC")),
            "v": [f"{s}{b}"] * 3,
        }
    )


def _delta(root: Path) -> Path:
    """Two Delta tables, a commit per version of each (``VERSIONS``)."""
    for b in range(VERSIONS):
        for s in ("l", "r"):
            write_deltalake(str(root / s), _frame(b, s).to_arrow(), mode="append")
    return root


def _plain(trace: Trace) -> list[tuple[int, bool, dict[str, Any], bytes | None]]:
    return [
        (b.value, b.queued, {s: sorted(r.to_rows()) for s, r in b.rows.items()}, b.digest)
        for b in trace.batches
    ]


def test_a_streamed_delta_trace_reads_as_the_whole_trace(tmp_path: Path) -> None:
    plan = _plan()
    root = _delta(tmp_path / "d")
    schemas, options = schemas_of(plan), delta_options(plan)
    for digests in (False, True):
        whole = read_delta_trace(root, schemas, options, at_start=FROM_0, digests=digests)
        streamed = read_delta_trace(
            root, schemas, options, at_start=FROM_0, digests=digests, stream=True
        )
        assert isinstance(whole.batches, list)
        assert isinstance(streamed.batches, StreamedBatches)
        assert streamed.batches.reads == []  # checked, and nothing held
        assert _plain(streamed) == _plain(whole)
        assert (streamed.notes, streamed.delta_start) == (whole.notes, whole.delta_start)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_delta_run_holds_a_batch_or_two_and_outputs_what_the_whole_trace_gives(
    tmp_path: Path, checkpoint: bool
) -> None:
    plan = _plan()
    root = _delta(tmp_path / "d")
    whole = read_delta_trace(root, schemas_of(plan), delta_options(plan), at_start=FROM_0)
    expected = run(plan, whole, engine="columnar").batches
    runner = Runner(
        plan,
        root,
        None,
        "stop",
        tmp_path / "cp" if checkpoint else None,
        [MemorySink()],
        engine="columnar",
        delta_at_start=FROM_0,
    )
    batches = runner.trace.batches
    assert isinstance(batches, StreamedBatches)
    got = []
    for out in runner.run():
        got.append(out)
        assert max(batches.reads) <= runner.engine.cursor.trace_index + 1
        assert len(batches.held) <= StreamedBatches.KEEP
    assert batches.most_held <= StreamedBatches.KEEP
    assert len(batches.reads) == len(batches) == VERSIONS  # each read once
    assert [(b.batch, b.rows, b.progress["operators"]) for b in got] == [
        (b.batch, b.rows, b.progress["operators"]) for b in expected
    ]


def test_a_bad_delta_file_in_the_last_batch_stops_the_run_before_any_output(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "j.sjoin"
    spec.write_text(SPEC)
    plan = _plan()
    root = _delta(tmp_path / "d")
    # the last version of l's data file replaced by one whose `k` is no BIGINT
    log = sorted((root / "l" / "_delta_log").glob("*.json"))[-1]
    added = [json.loads(line)["add"] for line in log.read_text().splitlines() if '"add"' in line]
    bad = _frame(VERSIONS - 1, "l").with_columns(pl.col("k").cast(pl.String))
    bad.write_parquet(root / "l" / added[0]["path"])
    with pytest.raises(RunError) as whole:
        read_delta_trace(root, schemas_of(plan), delta_options(plan), at_start=FROM_0)
    out = tmp_path / "out.jsonl"
    args = ["run", str(spec), "--trace", str(root), "--delta-at-start", "0", "--output", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert str(whole.value) in result.output
    assert not out.exists() or out.read_text() == ""


# ------------------------------------------------------------- a file-based static table

TABLE = """spark 4.3
table customers (customer_id BIGINT, segment STRING) from parquet (path = 'dim/c')
stream orders (order_id BIGINT, customer_id BIGINT, order_time TIMESTAMP)
  watermark order_time delay 10 minutes
join e = orders AS o LEFT OUTER JOIN customers AS c ON o.customer_id = c.customer_id
"""


def _table_trace(path: Path, batches: int, table_at: int) -> Path:
    lines = []
    for b in range(batches):
        if b == table_at:
            for cid, segment in ((1, "gold"), (2, "silver")):
                row = {"customer_id": cid, "segment": segment}
                lines.append(json.dumps({"batch": b, "table": "customers", "row": row}))
        for i in range(3):
            row = {
                "order_id": 10 * b + i,
                "customer_id": i,
                "order_time": f"2026-01-01T08:{b:02d}:00Z",
            }
            lines.append(json.dumps({"batch": b, "stream": "orders", "row": row}))
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.mark.parametrize("engine", ["reference", "columnar"])
@pytest.mark.parametrize("table_at", [0, 3])
def test_a_file_table_does_not_read_the_streamed_trace_again(
    tmp_path: Path, engine: str, table_at: int
) -> None:
    plan = _plan(TABLE)
    trace = _table_trace(tmp_path / "t.jsonl", 5, table_at)
    expected = run(plan, trace.read_text().splitlines(), engine=engine).batches  # type: ignore[arg-type]
    runner = Runner(plan, trace, None, "stop", None, [MemorySink()], engine=engine)  # type: ignore[arg-type]
    batches = runner.trace.batches
    assert isinstance(batches, StreamedBatches)
    got = list(runner.run())
    # the table's batch once more at most (its rows hold from the first batch on), no other
    assert len(batches.reads) <= len(batches) + (table_at != 0)
    assert batches.reads.count(0) == 1
    assert batches.most_held <= StreamedBatches.KEEP
    assert [(b.batch, b.rows) for b in got] == [(b.batch, b.rows) for b in expected]
    assert any("gold" in r.values() for b in got for _, r in b.rows)
