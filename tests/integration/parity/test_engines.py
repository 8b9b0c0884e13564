"""The columnar engine against the reference engine, without Spark.

``test_parity.py`` checks the reference runtime against real Spark on every parity scenario;
here every parity scenario, and random specs and traces (``test_random.py``'s generator, on
every Spark version the planner knows, so that each version's append rule, LeftSemi order and
removal counting are exercised), run on both engines, which must agree batch by batch:
output rows in output order, watermarks, the progress records, and the output and progress
files byte for byte.  Agreement with the reference makes the columnar engine Spark-exact
wherever the reference is.  ``SJOIN_ENGINE_CASES`` (default 60) sets how many random cases run.

A columnar run may run an operator on the reference operator (a *fallback*), and then that
operator's agreement proves nothing about the columnar one.  So each case also asserts which
operators ran columnar: every operator runs ``ColumnarJoin`` / ``ColumnarAggregate`` except
the fallbacks listed, with their reasons, in ``COLUMNAR_FALLBACKS`` (the parity scenarios;
random specs have none); a new fallback, or a listed one that no longer falls back, fails.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from sjoin.api import check_text
from sjoin.compiler.planning.plan import Plan
from sjoin.compiler.vocabulary.model import SUPPORTED_SPARK
from sjoin.runtime import RunError, run, run_to_files
from sjoin.runtime.columnar.aggregate import ColumnarAggregate
from sjoin.runtime.columnar.dedup import ColumnarDedup
from sjoin.runtime.columnar.join import ColumnarJoin
from sjoin.runtime.columnar.view import ColumnarView
from sjoin.runtime.engine.view import ViewOperator
from sjoin.runtime.query import ColumnarEngine
from sjoin.runtime.rows.aggregate import AggregateOperator
from sjoin.runtime.rows.dedup import DedupOperator
from sjoin.runtime.rows.join import JoinOperator

from .scenarios import ParityScenario, S, records, ts
from .test_random import Case, cases, pipeline_cases


def _plan(spec: str) -> Plan:
    result = check_text(spec, "engines.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, errors
    return result.plan


def _outcome(plan: Plan, trace: Any, relation: str | None, engine: Any) -> Any:
    """Every batch (rows in order, progress), or the error the run stops with."""
    try:
        result = run(plan, trace, relation=relation, engine=engine)
    except RunError as err:
        return ("error", type(err).__name__, str(err))
    return [(b.batch, b.query, b.watermark, b.data, b.rows, b.progress) for b in result.batches]


def _files(plan: Plan, trace: Any, relation: str | None, engine: Any, directory: Path) -> Any:
    output, progress = directory / f"{engine}.out", directory / f"{engine}.progress"
    try:
        run_to_files(
            plan,
            trace,
            relation=relation,
            output=output,
            progress=progress,
            engine=engine,
            stderr=io.StringIO(),
        )
    except RunError as err:
        return ("error", str(err))
    return output.read_bytes(), progress.read_bytes()


# Why an operator runs on the reference operator in a columnar run (``support.py``'s words).

# THE table of the parity scenarios' fallbacks: (scenario, operator) -> why.  Every other
# operator of every scenario runs columnar.  The same list, by reason, is in
# docs/benchmarks.md ("Not columnar").
COLUMNAR_FALLBACKS: dict[tuple[str, str], str] = {
    # the STRING key is cast to BIGINT (Spark's implicit cast, issue 35): a computed key
    ("bigint_key_string_key_cast", "j"): "a join key is computed, not a column",
    ("bigint_key_string_key_cast_no_ansi", "j"): "a join key is computed, not a column",
    # a DOUBLE dedup key (Spark's NaN and -0.0 key rules are the reference's)
    ("dedup_double_key", "d"): "dedup column `x` is DOUBLE: floating keys are not columnar",
}


def assert_runs_columnar(plan: Plan, relation: str | None, fallbacks: dict[str, str]) -> None:
    """The columnar engine runs every operator of the run on the columnar operators except
    ``fallbacks`` (operator -> reason), which run on the reference ones."""
    engine = ColumnarEngine(plan, relation)
    assert engine.fallbacks == fallbacks
    for query in engine.queries:
        for name, op in query.operators.items():
            expected = (
                (JoinOperator, AggregateOperator, DedupOperator, ViewOperator)
                if name in fallbacks
                else (ColumnarJoin, ColumnarAggregate, ColumnarDedup, ColumnarView)
            )
            assert isinstance(op, expected), (name, type(op).__name__)


def assert_engines_agree(plan: Plan, trace: Any, relation: str | None, tmp: Path) -> None:
    reference = _outcome(plan, trace, relation, "reference")
    columnar = _outcome(plan, trace, relation, "columnar")
    assert columnar == reference
    assert _files(plan, trace, relation, "columnar", tmp) == _files(
        plan, trace, relation, "reference", tmp
    )


@pytest.mark.parametrize("scenario", S, ids=lambda s: s.name)
def test_parity_scenario_on_both_engines(scenario: ParityScenario, tmp_path: Path) -> None:
    plan = _plan(scenario.spec)
    fallbacks = {op: why for (name, op), why in COLUMNAR_FALLBACKS.items() if name == scenario.name}
    assert_runs_columnar(plan, scenario.relation, fallbacks)
    assert_engines_agree(plan, scenario.trace_input(), scenario.relation, tmp_path)


def test_the_fallback_table_names_parity_scenarios() -> None:
    """A fallback listed for a scenario that no longer exists is a stale line."""
    names = {s.name for s in S}
    assert {name for name, _ in COLUMNAR_FALLBACKS} <= names


def test_the_docs_list_every_fallback() -> None:
    """docs/benchmarks.md ("Not columnar") names each scenario of the table, and says how
    many operators fall back."""
    doc = (Path(__file__).resolve().parents[3] / "docs" / "benchmarks.md").read_text()
    for name, _ in COLUMNAR_FALLBACKS:
        assert f"`{name}`" in doc, name
    operators = sum(len(_plan(s.spec).operators) for s in S)
    assert f"Of the parity scenarios' {operators} operators, {len(COLUMNAR_FALLBACKS)} run" in doc


def test_a_new_fallback_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check bites: a join that starts to fall back (here: every join, by a patched
    rule) no longer matches its scenario's line of the table."""
    import sjoin.runtime.columnar.support as support

    scenario = next(s for s in S if s.name == "inner_range")
    plan = _plan(scenario.spec)
    assert_runs_columnar(plan, scenario.relation, {})
    monkeypatch.setattr(support, "join_unsupported", lambda node, ansi: "a new reason")
    with pytest.raises(AssertionError):
        assert_runs_columnar(plan, scenario.relation, {})
    assert_runs_columnar(plan, scenario.relation, {"j": "a new reason"})


VERSIONS = [f"{major}.{minor}" for major, minor in SUPPORTED_SPARK]


@settings(
    max_examples=int(os.environ.get("SJOIN_ENGINE_CASES", "60")),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(case=cases(), version=st.sampled_from(VERSIONS))
def test_random_specs_agree_on_both_engines(
    case: Case, version: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    spec = case.spec.replace("spark 4.3\n", f"spark {version}\n", 1)
    note(spec)
    note(repr(case.batches))
    result = check_text(spec, "random.sjoin")
    if not result.ok or result.plan is None:  # a version may reject what 4.3 accepts
        return
    assert_runs_columnar(result.plan, None, {})  # the generator's joins are all columnar
    assert_engines_agree(
        result.plan, records(case.batches), None, tmp_path_factory.mktemp("engines")
    )


@settings(
    max_examples=int(os.environ.get("SJOIN_PIPELINE_CASES", "40")),
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(case=pipeline_cases())
def test_random_pipelines_agree_on_both_engines(
    case: Case, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Issue 37's property: random pipelines of the operators around the join (unions,
    views with WHERE, dedups with and without WITHIN WATERMARK, stream-static joins) with
    the join and an aggregate, on random traces: both engines agree on every batch (rows,
    watermark, every operator's metrics, the output files), all of it on columnar operators.
    ``SJOIN_PIPELINE_CASES`` (default 40) sets how many run."""
    note(case.spec)
    note(repr(case.trace()))
    result = check_text(case.spec, "pipeline.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, "\n" + case.spec + "\n".join(errors)
    assert_runs_columnar(result.plan, None, {})
    assert_engines_agree(result.plan, case.trace(), None, tmp_path_factory.mktemp("pipelines"))


# ------------------------------------------------------------------ aggregates

AGGREGATE_SCENARIOS = [s for s in S if "\naggregate " in s.spec]


def test_parity_scenarios_include_aggregates() -> None:
    assert len(AGGREGATE_SCENARIOS) >= 4


@pytest.mark.parametrize("scenario", AGGREGATE_SCENARIOS, ids=lambda s: s.name)
def test_parity_aggregates_run_on_the_columnar_operator(scenario: ParityScenario) -> None:
    plan = _plan(scenario.spec)
    assert not {node.name for node in plan.aggregates} & set(
        ColumnarEngine(plan, scenario.relation).fallbacks
    )


STREAM = """spark 4.3
stream s (k STRING, g BIGINT, t TIMESTAMP, x DOUBLE, i BIGINT) watermark t delay 10 seconds
"""
WINDOW = "window(S.t, INTERVAL 10 SECONDS)"
FUNCTIONS = (
    "count(*) AS n, count(S.x) AS nx, sum(S.x) AS sx, avg(S.x) AS ax, min(S.x) AS lx, "
    "max(S.x) AS hx, sum(S.i) AS si, avg(S.i) AS ai, max(S.k) AS hk, "
    "approx_count_distinct(S.g) AS dg"
)
# (name, GROUP BY, SELECT, mode, why it falls back: None when it runs columnar)
ENGINE_AGGREGATES = [
    ("window_append", WINDOW, f"{WINDOW} AS w, {FUNCTIONS}", "append", None),
    (
        "window_key_update",
        f"{WINDOW}, S.k",
        f"S.k AS k, {WINDOW} AS w, {FUNCTIONS}",
        "update",
        None,
    ),
    ("key_complete", "S.k", f"S.k AS k, {FUNCTIONS}", "complete", None),
    (
        "expressions_update",
        "S.g",
        "S.g + 1 AS g1, sum(S.i) * 2 AS s2, max(S.k) AS hk",
        "update",
        None,
    ),
    (
        "sliding_falls_back",
        "window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS)",
        "window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS) AS w, count(*) AS n",
        "append",
        "a sliding window() puts a row in several groups",
    ),
]


def _s(k: str | None, seconds: float | None, x: float | None, i: int | None, g: int = 1) -> Any:
    return {"k": k, "g": g, "t": None if seconds is None else ts(seconds), "x": x, "i": i}


AGGREGATE_BATCHES = [
    {"s": [_s("a", 101, 1.5, 3), _s("b", 102, None, None, 2), _s(None, 103, 0.1, -4)]},
    {"s": [_s("a", 104, float("inf"), 7), _s("a", 111, -0.0, 1), _s("c", None, 2.0, 2)]},
    {"s": [_s("b", 95, 1e16, 5, 3), _s("b", 125, 1.0, None), _s("a", 126, 0.2, 2**40)]},
    {"s": [_s("d", 160, None, 1)]},
]


@pytest.mark.parametrize("case", ENGINE_AGGREGATES, ids=lambda c: c[0])
def test_aggregates_agree_on_both_engines(case: Any, tmp_path: Path) -> None:
    _, group_by, select, mode, why = case
    plan = _plan(
        STREAM + f"aggregate a = s AS S GROUP BY {group_by} SELECT {select} OUTPUT MODE {mode}\n"
    )
    assert_runs_columnar(plan, None, {} if why is None else {"a": why})
    assert_engines_agree(plan, records(AGGREGATE_BATCHES), None, tmp_path)


ANSI_TWO_ERRORS = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, a INT, b INT) watermark t delay 1 second
stream r (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = l AS L INNER JOIN r AS R ON L.k = R.k
  AND L.t BETWEEN R.t - INTERVAL 1 SECOND AND R.t
  SELECT L.k AS k, 10 / L.a AS x, element_at(split('a,b', ','), L.b) AS y
"""


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ({"a": 1, "b": 5}, {"a": 0, "b": 1}, "INVALID_ARRAY_INDEX_IN_ELEMENT_AT"),
        ({"a": 0, "b": 1}, {"a": 1, "b": 5}, "DIVIDE_BY_ZERO"),
        ({"a": 1, "b": 1}, {"a": 0, "b": 5}, "DIVIDE_BY_ZERO"),
    ],
)
def test_the_first_ansi_error_is_the_same_on_both_engines(
    first: dict[str, int], second: dict[str, int], expected: str, tmp_path: Path
) -> None:
    """Two output rows that each raise an ANSI error in a different column: both engines
    evaluate the output row by row, each row's columns in order, so they stop with the same
    error (the first row's first failing column)."""
    stamp = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.500Z"]
    trace = [
        {"batch": 0, "stream": "l", "row": {"k": 1, "t": stamp[i], **values}}
        for i, values in enumerate((first, second))
    ] + [{"batch": 0, "stream": "r", "row": {"k": 1, "t": "2026-01-01T00:00:01Z"}}]
    plan = _plan(ANSI_TWO_ERRORS)
    assert_runs_columnar(plan, None, {})
    assert_engines_agree(plan, trace, None, tmp_path)
    outcome = _outcome(plan, trace, None, "columnar")
    assert outcome[0] == "error" and expected in outcome[2], outcome
