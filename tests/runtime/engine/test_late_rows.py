"""`sjoin run --late-rows`: every row an operator drops as late, with its trace line, on
both engines; per batch and operator the lines are the ``numRowsDroppedByWatermark`` the
runtime reports (which tests/runtime/test_scenarios.py holds to Spark's).  An aggregate's
metric counts late groups (Spark counts after the partial aggregation), so its lines,
one per late input row and group, hold that many distinct groups."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings

from sjoin.api import check_text
from sjoin.cli.main import main
from sjoin.compiler.planning.plan import DedupNode, UnionNode
from sjoin.runtime import ENGINES, EngineName, run

from ...integration.parity.scenarios import SCENARIOS, records, row, ts
from ...integration.parity.test_random import Case, cases

SPEC_LR = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
"""

# cases the parity scenarios lack: an aggregate reading a stream (a sliding window: one row
# late for one of its groups only), a chain whose second join drops the first one's rows,
# a self-join (one stream, two inputs) and identical rows in one batch
EXTRA: dict[str, tuple[str, list[dict[str, list[dict[str, Any]]]]]] = {
    "aggregate_on_stream_sliding": (
        SPEC_LR
        + """aggregate c = l AS L
  GROUP BY window(L.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS)
  SELECT window(L.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS) AS w, count(*) AS n
  OUTPUT MODE append
""",
        [
            {"l": [row(1, 100), row(1, 101)]},
            {"l": [row(1, 200)]},
            {"l": [row(2, 186), row(2, 186), row(3, 100), row(4, 192)]},
        ],
    ),
    "aggregate_on_stream_update": (
        SPEC_LR
        + """aggregate c = l AS L GROUP BY L.t SELECT L.t AS t, count(*) AS n OUTPUT MODE update
""",
        [{"l": [row(1, 100)]}, {"l": [row(1, 200)]}, {"l": [row(2, 150), row(3, 150)]}],
    ),
    "chain_drops_derived_rows": (
        """spark 4.3
set allow_multiple_stateful_operators = false
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join ab = a AS A LEFT OUTER JOIN b AS B
  ON A.k = B.k AND B.t BETWEEN A.t AND A.t + INTERVAL 10 SECONDS
  SELECT A.k AS k, A.t AS t, B.v AS bv
join abc = ab AS X INNER JOIN c AS C
  ON X.k = C.k AND C.t BETWEEN X.t AND X.t + INTERVAL 10 SECONDS
  SELECT X.k AS k, C.t AS t, X.bv AS bv, C.v AS cv
""",
        [
            # one global watermark (no propagation): a's row at 100 comes out null-padded
            # once the watermark passes 110, in a batch whose late-events watermark (105)
            # has passed it, and abc drops it
            {"a": [row(1, 100)], "b": [row(9, 100)], "c": [row(1, 100)]},
            {"a": [row(2, 115)], "b": [row(9, 115)], "c": [row(2, 115)]},
            {"a": [row(3, 300)], "b": [row(9, 300)], "c": [row(3, 300)]},
        ],
    ),
    "self_join_identical_rows": (
        SPEC_LR
        + """join j = l AS A INNER JOIN l AS B
  ON A.k = B.k AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS
""",
        [
            {"l": [row(1, 100)]},
            {"l": [row(1, 200)]},
            {"l": [row(1, 150, "same"), row(2, 300), row(1, 150, "same")]},
        ],
    ),
}


def _scenarios() -> list[tuple[str, str, list[dict[str, Any]], str | None]]:
    found = [(s.name, s.spec, s.trace_input(), s.relation) for s in SCENARIOS.values()]
    found += [(name, spec, records(batches), None) for name, (spec, batches) in EXTRA.items()]
    return found


ALL = _scenarios()


def _late_run(spec: str, trace: Any, relation: str | None, engine: EngineName) -> Any:
    result = check_text(spec, "late.sjoin", relation)
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return run(result.plan, trace, relation=relation, engine=engine, late_rows=True)


def _as_read(read: dict[str, Any], traced: dict[str, Any]) -> dict[str, Any]:
    """The traced row's cells as the runtime reads them: a DECIMAL may be traced as a JSON
    string or number, and is read as the exact decimal of its digits."""
    return {
        name: Decimal(str(value)) if isinstance(read.get(name), Decimal) else value
        for name, value in traced.items()
    }


def _trace_records(trace: Any) -> list[dict[str, Any]]:
    if isinstance(trace, Path):
        return [json.loads(line) for line in trace.read_text().splitlines()]
    return list(trace)


def check_late_rows(spec: str, trace: Any, relation: str | None, engine: EngineName) -> int:
    """The properties of the late rows of one run; returns how many there were."""
    res = _late_run(spec, trace, relation, engine)
    source = _trace_records(trace)
    plan = check_text(spec, "late.sjoin", relation).plan
    assert plan is not None
    streams = {s.name for s in plan.streams}
    seen: set[tuple[Any, ...]] = set()
    total = 0
    for batch in res.batches:
        for op in batch.progress["operators"]:
            mine = [r for r in batch.late if r["relation"] == op["relation"]]
            if "group" in (mine[0] if mine else {}):
                count = len({json.dumps(r["group"]) for r in mine})
            else:
                count = len(mine)
            assert count == op["numRowsDroppedByWatermark"], (batch.batch, op, mine)
            total += len(mine)
        for record in batch.late:
            assert record["batch"] == batch.batch
            assert record["trace_batch"] == batch.trace_batch
            if record["stream"] in streams and batch.data:
                # a stream's row: its trace line holds exactly this row, in this batch
                line = record["line"]
                assert isinstance(line, int), record
                traced = source[line - 1]
                assert traced["stream"] == record["stream"]
                assert traced["batch"] == batch.trace_batch
                assert record["row"] == _as_read(record["row"], traced["row"]), (record, traced)
                key = (
                    record.get("query"),
                    record["relation"],
                    record["input"],
                    line,
                    json.dumps(record.get("windows")),
                    json.dumps(record.get("group")),
                )
                assert key not in seen, record  # one line is not dropped twice
                seen.add(key)
            elif record["line"] is not None:
                # a union's or a dedup's row: its stream's row passed on as it is, traced to
                # that stream's line in this batch
                assert batch.data
                assert isinstance(plan.node(record["stream"]), (UnionNode, DedupNode)), record
                traced = source[record["line"] - 1]
                assert traced["batch"] == batch.trace_batch
                assert record["row"] == _as_read(record["row"], traced["row"]), (record, traced)
            else:
                assert record["line"] is None  # another operator's row
    return total


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name,spec,trace,relation", ALL, ids=[a[0] for a in ALL])
def test_late_rows_are_the_metric(
    name: str, spec: str, trace: Any, relation: str | None, engine: EngineName
) -> None:
    check_late_rows(spec, trace, relation, engine)


@pytest.mark.parametrize("name,spec,trace,relation", ALL, ids=[a[0] for a in ALL])
def test_both_engines_give_the_same_late_rows(
    name: str, spec: str, trace: Any, relation: str | None
) -> None:
    reference, columnar = (
        [r for b in _late_run(spec, trace, relation, e).batches for r in b.late] for e in ENGINES
    )
    assert reference == columnar


def test_the_cases_drop_rows_of_every_kind() -> None:
    """The extra cases do what they are for: late stream rows of an aggregate, derived rows
    of a chain, both inputs of a self-join, identical rows told apart by their lines."""
    by_name = {name: (spec, trace) for name, spec, trace, _ in ALL}
    late = {
        name: [r for b in _late_run(*by_name[name], None, "reference").batches for r in b.late]
        for name in EXTRA
    }
    agg = late["aggregate_on_stream_sliding"]
    assert agg and all(r["group"] and r["line"] for r in agg)
    # row(2, 186) twice: each is late for its earlier window [180, 190) only
    twice = [r for r in agg if r["row"]["k"] == 2]
    assert sorted(r["line"] for r in twice) == [4, 5]
    assert {json.dumps(r["group"]) for r in twice} == {
        json.dumps([{"start": ts(180), "end": ts(190)}])
    }
    chain = late["chain_drops_derived_rows"]
    assert any(r["stream"] == "ab" and r["line"] is None for r in chain)
    selfjoin = late["self_join_identical_rows"]
    assert {r["input"] for r in selfjoin} == {"left", "right"}
    assert sorted(r["line"] for r in selfjoin if r["input"] == "left") == [3, 5]


@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_random_traces(case: Case) -> None:
    for engine in ENGINES:
        check_late_rows(case.spec, records(case.batches), None, engine)


# ---------------------------------------------------------------------------- the CLI


def _files(tmp_path: Path, name: str, blank_line: bool = False) -> tuple[Path, Path]:
    scenario = SCENARIOS[name]
    spec = tmp_path / "j.sjoin"
    spec.write_text(scenario.spec)
    trace = tmp_path / "t.jsonl"
    lines = [json.dumps(r) for r in records(scenario.batches or [])]
    if blank_line:  # not the canonical form: the columnar engine reads it row by row
        lines.insert(1, "")
    trace.write_text("\n".join(lines) + "\n")
    return spec, trace


@pytest.mark.parametrize("blank_line", [False, True], ids=["canonical", "blank-line"])
@pytest.mark.parametrize("engine", ENGINES)
def test_cli_late_rows_file(tmp_path: Path, engine: str, blank_line: bool) -> None:
    spec, trace = _files(tmp_path, "late_and_at_watermark_inner", blank_line)
    late = tmp_path / "late.jsonl"
    result = CliRunner().invoke(
        main,
        ["run", str(spec), "--trace", str(trace), "--late-rows", str(late), "--engine", engine],
    )
    assert result.exit_code == 0, result.stderr
    got = [json.loads(line) for line in late.read_text().splitlines()]
    text = trace.read_text().splitlines()
    assert [(r["stream"], r["row"]["v"]) for r in got] == [("l", "late"), ("l", "at"), ("r", "rl")]
    for r in got:  # the line named is the file's line of that row
        assert json.loads(text[r["line"] - 1])["row"]["v"] == r["row"]["v"]
        assert r["watermark"] == ts(90) and r["batch"] == 2 and r["trace_batch"] == 1
    assert "3 late rows dropped by the watermark" in result.stderr


def test_cli_without_late_rows_says_how_to_see_them(tmp_path: Path) -> None:
    spec, trace = _files(tmp_path, "late_and_at_watermark_inner")
    result = CliRunner().invoke(main, ["run", str(spec), "--trace", str(trace)])
    assert result.exit_code == 0
    assert "3 late rows dropped by the watermark (--late-rows FILE lists them)" in result.stderr


def test_cli_table_shows_late_count(tmp_path: Path) -> None:
    spec, trace = _files(tmp_path, "late_and_at_watermark_inner")
    result = CliRunner().invoke(
        main, ["run", str(spec), "--trace", str(trace), "--format", "table", "--color", "never"]
    )
    assert result.exit_code == 0
    # batch 2 emits no row: its title alone says what it dropped
    title = "batch 2 · trace batch 1 · watermark 2026-01-01T00:01:30Z · 3 late rows dropped (j 3)"
    assert title in " ".join(result.stdout.split())


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--output", "{late}"], "--late-rows"),
        (["--progress", "{late}"], "--late-rows"),
    ],
    ids=["same-as-output", "same-as-progress"],
)
def test_cli_late_rows_refusals(tmp_path: Path, extra: list[str], message: str) -> None:
    spec, trace = _files(tmp_path, "late_and_at_watermark_inner")
    late = tmp_path / "late.jsonl"
    args = [a.format(tmp=tmp_path, late=late) for a in extra]
    result = CliRunner().invoke(
        main, ["run", str(spec), "--trace", str(trace), "--late-rows", str(late), *args]
    )
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output
