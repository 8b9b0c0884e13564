"""Every parity scenario's spec checks clean without Spark, so a planner change that
rejects one fails here, in seconds, before the Spark run."""

from __future__ import annotations

import pytest

from sjoin.api import check_text

from .scenarios import ParityScenario, S


@pytest.mark.parametrize("scenario", S, ids=lambda s: s.name)
def test_scenario_checks_clean(scenario: ParityScenario) -> None:
    result = check_text(scenario.spec, f"{scenario.name}.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok, errors
