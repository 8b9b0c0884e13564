"""Every parity scenario through ``sjoin.jvm.verify``: the runtime and the generated PySpark job
on real Spark must agree batch by batch (rows, watermark, state metrics, state cleanup).

The specs target Spark 4.3; on another Spark (SJOIN_VERIFY_PYTHON) they are re-planned for it
and a spec that version rejects is skipped with the reason.

Known differences are ``xfail(strict=True)`` with the diagnosis in the reason, so a fix in
the runtime, planner or back end turns them into failures to clean up here."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.verify import verify_spec

from .scenarios import ParityScenario, S

pytestmark = pytest.mark.spark


def _param(s: ParityScenario) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=s.xfail)] if s.xfail else []
    return pytest.param(s, id=s.name, marks=marks)


@pytest.mark.parametrize("scenario", [_param(s) for s in S])
def test_parity(verify_spark: Any, scenario: ParityScenario) -> None:
    """Like with like: the runtime follows the Spark that runs (``verify_spark``: the local
    session, or another pyspark with SJOIN_VERIFY_PYTHON)."""
    result = check_text(scenario.spec, f"{scenario.name}.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, errors
    trace = scenario.trace_input()
    report = verify_spec(result, trace, relation=scenario.relation, spark=verify_spark)
    if report.rejected:
        pytest.skip(f"Spark {report.compared_as} rejects the spec: " + " ".join(report.rejected))
    assert report.queries, "no query was compared"
    assert report.agree, "\n" + report.text()
