"""Issue 16: every relation that can run as its own query is checked, whatever the sinks.

`shipped` selects k.order_time, so run alone its input `k` carries two event-time columns
(MULTIPLE_EVENT_TIME_COLUMNS on Spark 3.5+); under the final aggregate Spark prunes the
column.  Without a sink `check` and `compile` fail with E025; with a sink on the aggregate
`check` warns (W010), and `run`/`verify --relation shipped` refuse with E025 before any
batch (no Spark, no stack trace)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.api import check_file, check_text
from sjoin.cli.main import main

CASES = Path(__file__).parents[1] / "compiler" / "diagnostics" / "cases"
NO_SINK = CASES / "E025_intermediate_without_sink.sjoin"
WITH_SINK = CASES / "W010_intermediate_fails_alone.sjoin"
TRACE = "".join(
    json.dumps({"batch": 0, "stream": stream, "row": {"order_id": 1, column: at}}) + "\n"
    for stream, column, at in (
        ("orders", "order_time", "2026-01-01T00:00:00Z"),
        ("shipments", "ship_time", "2026-01-01T00:10:00Z"),
        ("deliveries", "delivery_time", "2026-01-01T00:20:00Z"),
    )
)


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout + result.stderr


def codes(text: str, relation: str | None = None) -> list[tuple[str, str]]:
    result = check_text(text, "spec.sjoin", relation)
    return [(d.severity, d.code) for d in result.diagnostics]


def test_without_sinks_every_relation_is_a_query() -> None:
    code, out = cli("check", str(NO_SINK))
    assert code == 1
    assert "error[E025]" in out and "when `shipped` runs as its own query" in out
    code, out = cli("compile", str(NO_SINK))
    assert code == 1 and "error[E025]" in out


def test_with_a_sink_an_intermediate_that_fails_alone_is_a_warning(tmp_path: Path) -> None:
    code, out = cli("check", str(WITH_SINK))
    assert code == 0, out
    assert "warning[W010]" in out and "`shipped` cannot run as its own query" in out
    trace = tmp_path / "t.jsonl"
    trace.write_text(TRACE)
    code, out = cli("run", str(WITH_SINK), "--trace", str(trace), "--relation", "hourly")
    assert code == 0, out


def test_relation_picks_the_query_and_its_errors(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text(TRACE)
    for command in ("run", "verify"):
        code, out = cli(command, str(WITH_SINK), "--trace", str(trace), "--relation", "shipped")
        assert code == 1, out
        assert "error[E025]" in out and "input `k` of join `shipped`" in out
        assert "warning[W010]" not in out
        assert "Traceback" not in out and "Spark batches" not in out


def test_the_plan_for_a_relation_prunes_as_that_query() -> None:
    text = WITH_SINK.read_text()
    assert codes(text) == [("warning", "W010")]
    assert codes(text, "shipped") == [("error", "E025")]
    assert codes(text, "hourly") == [("warning", "W010")]
    assert codes(text, "k") == [("warning", "W010")]
    # a relation whose columns are all used elsewhere plans as before: no warning
    kept = text.replace(
        "SELECT k.order_id, k.order_time, d.delivery_time", "SELECT k.order_id, d.delivery_time"
    )
    assert codes(kept) == []


def test_verify_spec_plans_for_the_relation_it_is_given() -> None:
    """The API (what `@pytest.mark.sjoin_spark` calls): a spec checked for its own queries,
    verified for `shipped`, is refused with E025 before Spark starts."""
    from sjoin.jvm.verify import SpecError, verify_spec

    checked = check_file(WITH_SINK)
    assert checked.ok
    with pytest.raises(SpecError, match=r"(?s)`shipped` cannot run as its own query.*E025"):
        verify_spec(checked, [line for line in TRACE.splitlines() if line], relation="shipped")
