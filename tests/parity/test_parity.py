"""Every parity scenario through ``sjoin.jvm.verify``: the runtime and the generated PySpark job
on real Spark must agree batch by batch (rows, watermark, state metrics, state cleanup).

The specs target Spark 4.3; on another Spark (SJOIN_VERIFY_PYTHON) they are re-planned for it
and a spec that version rejects is skipped with the reason.

Known differences are ``xfail(strict=True)`` with the diagnosis in the reason, so a fix in
the runtime, planner or back end turns them into failures to clean up here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.verify import verify_spec

from .scenarios import ParityScenario, S

pytestmark = pytest.mark.spark


def _param(s: ParityScenario) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=s.xfail)] if s.xfail else []
    return pytest.param(s, id=s.name, marks=marks)


def _python_id(python: str | None) -> str:
    """``local``, or the interpreter's environment (``spark-3.5`` for sjoin's cached one)."""
    return "local" if python is None else Path(python).parent.parent.name or python


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """With ``--parity-python PATH`` (scripts/test.sh: Spark 3.5's), every scenario runs on
    the local Spark and on that pyspark, in one run (tests/conftest.py)."""
    pythons = metafunc.config.getoption("parity_python")
    if pythons and "parity_spark" in metafunc.fixturenames:
        targets = [None, *pythons]
        metafunc.parametrize("parity_spark", targets, indirect=True, ids=_python_id)


@pytest.fixture(scope="session")
def parity_spark(request: pytest.FixtureRequest) -> Any:
    """What a scenario is verified on: ``verify_spark`` (the local session, or the pyspark
    of SJOIN_VERIFY_PYTHON), or the --parity-python interpreter's, in one child process."""
    python = getattr(request, "param", None)
    if python is None:
        return request.getfixturevalue("verify_spark")
    from sjoin.jvm.spark_driver import SparkUnavailable
    from sjoin.jvm.spark_env import RemoteSpark

    try:
        remote = RemoteSpark(python)
    except SparkUnavailable as err:
        pytest.fail(f"--parity-python {python}: {err}")
    request.addfinalizer(remote.close)
    return remote


@pytest.mark.parametrize("scenario", [_param(s) for s in S])
def test_parity(parity_spark: Any, scenario: ParityScenario) -> None:
    """Like with like: the runtime follows the Spark that runs (the local session, or
    another pyspark: SJOIN_VERIFY_PYTHON, --parity-python)."""
    result = check_text(scenario.spec, f"{scenario.name}.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, errors
    trace = scenario.trace_input()
    report = verify_spec(result, trace, relation=scenario.relation, spark=parity_spark)
    if report.rejected:
        pytest.skip(f"Spark {report.compared_as} rejects the spec: " + " ".join(report.rejected))
    assert report.queries, "no query was compared"
    assert report.agree, "\n" + report.text()
