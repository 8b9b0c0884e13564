"""The columnar engine against the reference engine, without Spark.

``test_parity.py`` checks the reference runtime against real Spark on every parity scenario;
here every parity scenario, and random specs and traces (``test_random.py``'s generator, on
every Spark version the planner knows, so that each version's append rule, LeftSemi order and
removal counting are exercised), run on both engines, which must agree batch by batch:
output rows in output order, watermarks, the progress records, and the output and progress
files byte for byte.  Agreement with the reference makes the columnar engine Spark-exact
wherever the reference is.  ``SJOIN_ENGINE_CASES`` (default 60) sets how many random cases run.
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
from sjoin.compiler.model import SUPPORTED_SPARK
from sjoin.compiler.plan import Plan
from sjoin.runtime import RunError, run, run_to_files

from .scenarios import ParityScenario, S, records
from .test_random import Case, cases


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


def assert_engines_agree(plan: Plan, trace: Any, relation: str | None, tmp: Path) -> None:
    reference = _outcome(plan, trace, relation, "reference")
    columnar = _outcome(plan, trace, relation, "columnar")
    assert columnar == reference
    assert _files(plan, trace, relation, "columnar", tmp) == _files(
        plan, trace, relation, "reference", tmp
    )


@pytest.mark.parametrize("scenario", S, ids=lambda s: s.name)
def test_parity_scenario_on_both_engines(scenario: ParityScenario, tmp_path: Path) -> None:
    assert_engines_agree(_plan(scenario.spec), scenario.trace_input(), scenario.relation, tmp_path)


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
    assert_engines_agree(
        result.plan, records(case.batches), None, tmp_path_factory.mktemp("engines")
    )
