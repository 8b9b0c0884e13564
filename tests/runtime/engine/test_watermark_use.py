"""Which watermark each operator uses is the plan's typed decision, and the runtime follows
it.  With ``allow_multiple_stateful_operators = false`` Spark (3.5+: the
``UseSingleWatermarkPropagator``) gives every operator this batch's global watermark for
both late rows and eviction; with true the second join evicts with the watermark propagated
from the first.  The expected figures were recorded on Spark 4.3.0 (stateOperators of the
four batches, and the executed plans' eventTimeWatermarkForEviction); the parity scenarios
``chain_allow_multiple_false`` / ``_true`` (tests/integration/parity) check them live on every CI
run.
"""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.describe.explain import plan_text
from sjoin.compiler.planning.planner import watermark_use
from sjoin.compiler.vocabulary.model import SparkVersion, WatermarkChoice, WatermarkUse
from sjoin.compiler.vocabulary.settings import settings_of
from sjoin.runtime import run

from ...integration.parity.scenarios import SCENARIOS, records

GLOBAL_NOW = WatermarkChoice("global", "this")

# batch 3 (the no-data batch after the watermark reaches 01:30) on Spark 4.3.0:
# (numRowsTotal, numRowsUpdated, numRowsRemoved) of revenue, converted, clicked
SPARK_BATCH_3 = {
    "false": {"revenue": (1, 0, 1), "converted": (3, 0, 1), "clicked": (2, 0, 2)},
    "true": {"revenue": (2, 0, 0), "converted": (4, 0, 0), "clicked": (2, 0, 2)},
}


def _plan(allow: str) -> Any:
    result = check_text(SCENARIOS[f"chain_allow_multiple_{allow}"].spec)
    assert result.ok and result.plan is not None
    return result.plan


def test_single_watermark_for_every_operator_when_multiple_are_not_allowed() -> None:
    plan = _plan("false")
    for name in ("clicked", "converted", "revenue"):
        use = plan.node(name).watermarks
        assert use == WatermarkUse(GLOBAL_NOW, GLOBAL_NOW, "global"), name
    text = plan_text(plan)
    assert "propagated" not in text
    assert "eviction: this batch's global watermark" in text


def test_propagated_watermark_for_later_operators_when_allowed() -> None:
    plan = _plan("true")
    assert plan.node("clicked").watermarks.eviction == GLOBAL_NOW
    for name in ("converted", "revenue"):
        use = plan.node(name).watermarks
        assert use.eviction == WatermarkChoice("propagated", "this"), name
        assert use.late_rows == WatermarkChoice("propagated", "previous"), name


@pytest.mark.parametrize(
    ("version", "late", "output"),
    [
        ("3.3", GLOBAL_NOW, "global"),
        ("3.4", WatermarkChoice("global", "previous"), "global"),
        ("3.5", WatermarkChoice("global", "previous"), "min_of_state_and_input"),
        ("4.3", WatermarkChoice("global", "previous"), "min_of_state_and_input"),
    ],
)
def test_first_operator_per_version(version: str, late: WatermarkChoice, output: str) -> None:
    major, minor = (int(p) for p in version.split("."))
    use = watermark_use(
        SparkVersion(major, minor), settings_of({}, SparkVersion(major, minor)), first_stateful=True
    )
    assert use == WatermarkUse(late, GLOBAL_NOW, output)  # type: ignore[arg-type]
    single = watermark_use(
        SparkVersion(major, minor),
        settings_of({"allow_multiple_stateful_operators": False}, SparkVersion(major, minor)),
        True,
    )
    assert single == WatermarkUse(GLOBAL_NOW, GLOBAL_NOW, "global")


@pytest.mark.parametrize("allow", ["false", "true"])
def test_runtime_follows_the_plan_as_spark_did(allow: str) -> None:
    scenario = SCENARIOS[f"chain_allow_multiple_{allow}"]
    result = run(_plan(allow), records(scenario.batches or []))
    batches = {b.batch: b for b in result.batches}
    assert sorted(batches) == [0, 1, 2, 3]
    figures = {
        op["relation"]: (op["numRowsTotal"], op["numRowsUpdated"], op["numRowsRemoved"])
        for op in batches[3].progress["operators"]
    }
    assert figures == SPARK_BATCH_3[allow]
    revenue = [row for relation, row in batches[3].rows if relation == "revenue"]
    if allow == "false":
        assert [(r["campaign"], r["purchases"], r["revenue"]) for r in revenue] == [("a", 1, 10.0)]
    else:
        assert revenue == []
