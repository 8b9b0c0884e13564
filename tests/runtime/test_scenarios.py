"""The runtime against Spark, batch by batch: output multisets, watermark and the state
metrics (numRowsTotal/Updated/Removed/DroppedByWatermark) of every executed batch,
no-data batches included.

Expectations come from ``spark_recorded.json`` (real Spark runs of the hand-written PySpark
job of each scenario; see its ``_comment`` and ``record_spark.py``); a handful are also
re-run live on Spark.
"""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.runtime import ENGINES, EngineName

from .harness import assert_same
from .record_spark import load
from .scenarios import SCENARIOS, by_name

RECORDED = load()
LIVE = [
    "inner_worked_example",
    "left_outer_worked_example",
    "full_outer_both_sides_null_padded",
    "left_semi_each_left_row_once",
    "join_then_window_aggregate_append",
]


def test_every_scenario_is_recorded() -> None:
    assert sorted(RECORDED) == sorted(s.name for s in SCENARIOS)
    assert len(SCENARIOS) >= 20


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_runtime_matches_recorded_spark(scenario: Any, engine: EngineName) -> None:
    assert_same(scenario.run_runtime(engine), RECORDED[scenario.name])


@pytest.mark.spark
@pytest.mark.parametrize("name", LIVE)
def test_runtime_matches_live_spark(spark: Any, name: str) -> None:
    """One Spark run, both engines against it."""
    scenario = by_name(name)
    want = scenario.run_spark(spark)
    for engine in ENGINES:
        assert_same(scenario.run_runtime(engine), want)
    assert want == RECORDED[name], "Spark itself changed: re-record with record_spark.py"
