"""Restarts of pipelines around the join on real local Spark: each case of
``pipeline_cases.py`` runs OLD to a checkpoint and NEW on it (``restart.py``), and `sjoin diff
OLD NEW` must have said what Spark did: resumes or fails, with Spark's error; what this Spark
did must be what ``SEEN`` records for it (4.3.0, cited by docs/changing-a-running-query.md)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from sjoin.compiler.describe.diff import diff_plans

from .catalogue import NEW_BATCHES, OLD_BATCHES, Case
from .pipeline_cases import CASES, SEEN, SEEN_ON
from .restart import plan_of, restart

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def templates() -> Iterator[dict[str, tuple[str, int]]]:
    found: dict[str, tuple[str, int]] = {}
    yield found
    for directory, _ in found.values():
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sjoin_diff_says_what_spark_does(
    spark: Any, templates: dict[str, tuple[str, int]], case: Case
) -> None:
    (query,) = diff_plans(plan_of(case.old), plan_of(case.new)).queries
    outcome = restart(spark, case.old, case.new, OLD_BATCHES, NEW_BATCHES, templates)
    assert outcome.resumed == (query.verdict != "fails"), (query, outcome)
    if not outcome.resumed:
        assert query.error is not None and outcome.error is not None
        assert query.error.startswith(outcome.error) or outcome.error.startswith(
            query.error[:40]
        ), outcome.message
    if spark.version == SEEN_ON:
        resumed, error = SEEN[case.name]
        assert outcome.resumed == resumed
        assert (outcome.error or "").startswith(error), outcome.message
