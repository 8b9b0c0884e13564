"""The runtime's API and its output formats (language brief §7)."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.runtime import (
    QueryError,
    RunError,
    TraceError,
    UsageError,
    iter_batches,
    output_line,
    progress_line,
    run,
    run_to_files,
)

from .harness import plan_of, trace_records
from .scenarios import range_spec, row

ROOT = Path(__file__).resolve().parents[2]
AD = ROOT / "examples" / "ad_attribution.sjoin"
AD_TRACE = ROOT / "examples" / "ad_attribution.trace.jsonl"


def test_line_formats_are_the_briefs() -> None:
    row_ = {"ad_id": 1, "impression_time": "2026-01-01T00:00:00Z", "campaign": "a", "x": None}
    assert output_line(0, "attributed", row_) == (
        '{"batch": 0, "relation": "attributed", "row": {"ad_id": 1, '
        '"impression_time": "2026-01-01T00:00:00Z", "campaign": "a", "x": null}}'
    )
    progress = {
        "batch": 2,
        "watermark": "2026-01-01T00:00:00Z",
        "operators": [
            {"relation": "attributed", "numRowsTotal": 3, "numRowsUpdated": 2, "numRowsRemoved": 0}
        ],
    }
    assert progress_line(progress) == (
        '{"batch": 2, "watermark": "2026-01-01T00:00:00Z", "operators": [{"relation": '
        '"attributed", "numRowsTotal": 3, "numRowsUpdated": 2, "numRowsRemoved": 0}]}'
    )
    special = {"d": Decimal("12.50"), "f": float("nan"), "s": 'q"é', "b": True}
    assert output_line(1, "r", special) == (
        '{"batch": 1, "relation": "r", "row": {"d": 12.50, "f": "NaN", "s": "q\\"é", "b": true}}'
    )


def test_run_returns_batches_with_progress_records() -> None:
    result = run(check_file(AD).plan, AD_TRACE)
    assert result.relations == ["attributed"]
    first = result.batches[0]
    assert first.progress == {
        "batch": 0,
        "watermark": "1970-01-01T00:00:00Z",
        "operators": [
            {
                "relation": "attributed",
                "numRowsTotal": first.progress["operators"][0]["numRowsTotal"],
                "numRowsUpdated": first.progress["operators"][0]["numRowsUpdated"],
                "numRowsRemoved": 0,
                "numRowsDroppedByWatermark": 0,
            }
        ],
    }
    assert [b.batch for b in result.batches] == list(range(len(result.batches)))
    assert all(json.loads(line)["relation"] == "attributed" for line in result.output_lines())
    assert len(result.progress_lines()) == len(result.batches)
    internal = [r for r in result.rows() if r["campaign"] == "internal"]
    assert internal and all(r["click_time"] is None for r in internal)


def test_iter_batches_yields_what_run_returns() -> None:
    plan = check_file(AD).plan
    assert plan is not None
    whole = run(plan, AD_TRACE).batches
    streamed = list(iter_batches(plan, AD_TRACE))
    assert streamed == whole
    assert [b.counts for b in streamed] == [b.counts for b in whole]
    assert sum(b.row_count for b in streamed) == len(run(plan, AD_TRACE).rows()) > 0


def test_output_rows_are_built_only_when_used() -> None:
    plan = check_file(AD).plan
    assert plan is not None
    batches = list(iter_batches(plan, AD_TRACE))
    made = [b for b in batches if "rows" in vars(b)]
    assert made == []  # counting and progress need no row dicts
    with_rows = [b for b in batches if b.row_count]
    assert with_rows
    for b in with_rows:
        assert len(b.rows) == b.row_count
        assert {rel: sum(1 for r, _ in b.rows if r == rel) for rel in b.counts} == b.counts
        assert b.rows is b.rows  # built once
    copy = type(with_rows[0]).of(
        with_rows[0].batch,
        with_rows[0].query,
        with_rows[0].watermark,
        with_rows[0].data,
        with_rows[0].rows,
        with_rows[0].progress,
        trace_batch=with_rows[0].trace_batch,
    )
    assert copy == with_rows[0] and copy.counts == with_rows[0].counts


def test_run_to_files_streams_the_same_lines(tmp_path: Path) -> None:
    plan = check_file(AD).plan
    clean = run(plan, AD_TRACE)
    out, progress = tmp_path / "out.jsonl", tmp_path / "progress.jsonl"
    summary = run_to_files(plan, AD_TRACE, output=out, progress=progress)
    assert out.read_text().splitlines() == clean.output_lines()
    assert progress.read_text().splitlines() == clean.progress_lines()
    assert (summary.batches, summary.rows, summary.bad_rows) == (
        len(clean.batches),
        len(clean.rows()),
        0,
    )
    stdout = io.StringIO()
    run_to_files(plan, AD_TRACE, stdout=stdout)
    assert stdout.getvalue().splitlines() == clean.output_lines()


def test_bad_rows_skip_reports_on_stderr(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text(AD_TRACE.read_text() + '{"batch": 99, "stream": "clicks", "row": {}}\n')
    plan = check_file(AD).plan
    with pytest.raises(TraceError, match="missing column `ad_id`"):
        run_to_files(plan, trace, stdout=io.StringIO())
    stderr = io.StringIO()
    summary = run_to_files(plan, trace, stdout=io.StringIO(), stderr=stderr, bad_rows="skip")
    assert summary.bad_rows == 1
    lines = len(AD_TRACE.read_text().splitlines())
    column = len('{"batch": 99, "stream": "clicks", "row": ') + 1  # where the row starts
    assert f"t.jsonl:{lines + 1}:{column}: missing column `ad_id`" in stderr.getvalue()


def test_relation_choice() -> None:
    plan = check_file(ROOT / "examples" / "checkout_funnel.sjoin").plan
    trace = ROOT / "examples" / "checkout_funnel.trace.jsonl"
    everything = run(plan, trace)
    assert everything.relations == ["clicked", "converted", "revenue"]
    only = run(plan, trace, relation="clicked")
    assert only.relations == ["clicked"]
    # a query on `clicked` alone has its own watermark (purchases do not hold it back)
    assert [o["relation"] for o in only.batches[0].progress["operators"]] == ["clicked"]
    assert [o["relation"] for o in everything.batches[0].progress["operators"]] == [
        "revenue",
        "converted",
        "clicked",
    ]
    with pytest.raises(UsageError, match="`nope`: not a relation of the spec; choose"):
        run(plan, trace, relation="nope")
    with pytest.raises(UsageError, match="`clicks`: a stream"):
        run(plan, trace, relation="clicks")


def test_independent_joins_run_as_separate_queries() -> None:
    spec = range_spec("INNER") + (
        "stream m (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds\n"
        "join j2 = m AS M INNER JOIN r AS R ON M.k = R.k AND M.t = R.t\n"
    )
    plan = plan_of(spec)
    result = run(
        plan,
        trace_records(
            [{"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]}, {"m": [row(1, 100, "c")]}]
        ),
    )
    queries = [(b.query, b.batch, b.data) for b in result.batches]
    assert queries == [
        ("j", 0, True),
        ("j", 1, False),
        ("j2", 0, True),
        ("j2", 1, True),
        ("j2", 2, False),
    ]
    assert all(b.progress["query"] == b.query for b in result.batches)


def test_query_errors_surface_as_run_errors() -> None:
    spec = range_spec("INNER").replace("SELECT L.k AS lk", "SELECT L.k / (R.k - R.k) AS lk")
    with pytest.raises(QueryError, match="DIVIDE_BY_ZERO") as err:
        run(plan_of(spec), trace_records([{"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]}]))
    assert isinstance(err.value, RunError)


def test_state_sides_add_up_to_num_rows_total() -> None:
    plan = check_file(ROOT / "examples" / "checkout_funnel.sjoin").plan
    assert plan is not None
    trace = ROOT / "examples" / "checkout_funnel.trace.jsonl"
    joins = {j.name for j in plan.joins}
    seen = 0
    for out in iter_batches(plan, trace):
        assert set(out.state_sides) == joins & {op["relation"] for op in out.progress["operators"]}
        for op in out.progress["operators"]:
            if op["relation"] in out.state_sides:
                left, right = out.state_sides[op["relation"]]
                assert left + right == op["numRowsTotal"]
                seen += left > 0 and right > 0
    assert seen  # some batch keeps rows on both sides
