"""Every parity scenario through ``sjoin.jvm.verify``: the runtime and the generated PySpark job
on real Spark must agree batch by batch (rows, watermark, state metrics, state cleanup).

The specs target Spark 4.3; on another Spark (SJOIN_VERIFY_PYTHON) they are re-planned for it
and a spec that version rejects is skipped with the reason.

Known differences are ``xfail(strict=True)`` with the diagnosis in the reason, so a fix in
the runtime, planner or back end turns them into failures to clean up here.

On the local session the scenarios run a few at a time (`outcomes`), each on a session of its
own made with ``newSession()`` (one JVM and SparkContext; its SQL confs its own, so that one
scenario's confs never reach another's query); each test then judges its scenario's report.
A spec's starts and stops of streaming queries are mostly waiting, which the others fill.
On another pyspark (a child process that runs one job at a time) each test runs its own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.verify import VerifyReport, verify_spec

from .scenarios import ParityScenario, S

pytestmark = pytest.mark.spark

JOBS = 3  # scenarios verified at a time on the local session


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

    try:  # its JVM run as the local one is (tests/conftest.py)
        remote = request.getfixturevalue("remote_spark")(python)
    except SparkUnavailable as err:
        pytest.fail(f"--parity-python {python}: {err}")
    request.addfinalizer(remote.close)
    return remote


def _verify(scenario: ParityScenario, spark: Any) -> VerifyReport:
    result = check_text(scenario.spec, f"{scenario.name}.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, errors
    trace = scenario.trace_input()
    return verify_spec(result, trace, relation=scenario.relation, spark=spark)


@pytest.fixture(scope="module")
def outcomes(
    parity_spark: Any, request: pytest.FixtureRequest
) -> Callable[[ParityScenario], VerifyReport]:
    """The report of a scenario on ``parity_spark``. On a classic local session, those of
    every scenario this run tests on it are made at the first call, ``JOBS`` at a time, each
    on a ``newSession()`` of its own (an exception is kept and raised by its own test)."""
    from pyspark.sql import SparkSession

    if not isinstance(parity_spark, SparkSession):  # a child process: one job at a time
        return lambda scenario: _verify(scenario, parity_spark)
    done: dict[str, VerifyReport | BaseException] = {}
    ran: list[bool] = []

    def one(scenario: ParityScenario) -> VerifyReport | BaseException:
        try:
            return _verify(scenario, parity_spark.newSession())
        except Exception as err:  # reported by the scenario's own test
            return err

    def outcome(scenario: ParityScenario) -> VerifyReport:
        if not ran:
            ran.append(True)
            wanted = {
                item.callspec.params["scenario"].name
                for item in request.session.items
                if item.path == request.path
                and getattr(item, "callspec", None) is not None
                and item.callspec.params.get("parity_spark") is None
            }
            chosen = [s for s in S if s.name in wanted] or [scenario]
            with ThreadPoolExecutor(max_workers=JOBS) as pool:
                done.update(zip([s.name for s in chosen], pool.map(one, chosen), strict=True))
        found = done.pop(scenario.name, None)
        if found is None:  # not among those collected (a rerun): its own run
            return _verify(scenario, parity_spark)
        if isinstance(found, BaseException):
            raise found
        return found

    return outcome


@pytest.mark.parametrize("scenario", [_param(s) for s in S])
def test_parity(
    parity_spark: Any,
    scenario: ParityScenario,
    outcomes: Callable[[ParityScenario], VerifyReport],
) -> None:
    """Like with like: the runtime follows the Spark that runs (the local session, or
    another pyspark: SJOIN_VERIFY_PYTHON, --parity-python)."""
    report = outcomes(scenario)
    if report.rejected:
        pytest.skip(f"Spark {report.compared_as} rejects the spec: " + " ".join(report.rejected))
    assert report.queries, "no query was compared"
    if scenario.name in KNOWN_BY_VERSION.get(str(report.compared_as), {}):
        # a difference found on that version and not modelled yet: it must still be exactly
        # that one (when it goes, this entry goes too)
        assert (
            not report.agree
            and KNOWN_BY_VERSION[str(report.compared_as)][scenario.name] in report.text()
        ), "\n" + report.text()
        return
    assert report.agree, "\n" + report.text()


# Differences found on one Spark version and not modelled yet: version -> scenario -> the text
# of the difference.  (Spark 3.5's dropDuplicates keeping -0.0 and 0.0 as two keys, found by
# CI's 3.5 run of dedup_double_key, is now the planner's DedupNode.float_keys.)
# Spark 3.5's watermark tracker keys its nodes by their index in each batch's executed plan,
# which reused exchanges shift (SPARK-50046, fixed in 4.0; compiler/planning/semi_union.py's
# docstring has the run on 3.5.9): with a LEFT SEMI join pushed below a union, an input's
# watermark lands on another's index, and the global watermark stays 0 a batch longer in the
# first scenario and is 1 s higher than sjoin's in the second.  Found by CI's Spark 3.5 run;
# sjoin notes it on each such join planned for Spark before 4.0, and does not model it.
KNOWN_BY_VERSION: dict[str, dict[str, str]] = {
    "3.5": {
        "union_below_a_left_semi_join": (
            "the watermark is 1970-01-01T00:00:00.000Z in Spark but 2026-01-01T00:01:39Z in the"
            " runtime"
        ),
        "union_of_three_below_a_left_semi_join": (
            "the watermark is 2026-01-01T00:01:40.000Z in Spark but 2026-01-01T00:01:39Z in the"
            " runtime"
        ),
    }
}
