"""The checkpoint-compatibility catalogue on real local Spark: each case runs OLD to a
checkpoint and NEW on it, and `sjoin diff OLD NEW` must have said what Spark did (resumes or
fails, with Spark's error; a pinned setting keeps the checkpoint's value). The recorded table
(catalogue_results.json, cited by the docs) must be what this Spark does today."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from sjoin.compiler.describe.diff import diff_plans

from .catalogue import CASES, NEW_BATCHES, OLD_BATCHES, RESULTS, Case, renamed
from .restart import plan_of, restart
from .verdicts import null_padded

pytestmark = pytest.mark.spark

RECORDED = {row["change"]: row for row in json.loads(RESULTS.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def templates() -> Iterator[dict[str, tuple[str, int]]]:
    """OLD's finished checkpoints, one per OLD spec, copied for each case that starts there."""
    found: dict[str, tuple[str, int]] = {}
    yield found
    for directory, _ in found.values():
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_sjoin_diff_says_what_spark_does(
    spark: Any, templates: dict[str, tuple[str, int]], case: Case
) -> None:
    old, new = plan_of(case.old), plan_of(case.new)
    query = case.query(diff_plans(old, new))
    new_batches = [renamed(b, case) for b in NEW_BATCHES]
    outcome = restart(spark, case.old, case.new, OLD_BATCHES, new_batches, templates, case.root)
    assert outcome.resumed == (query.verdict != "fails"), (query, outcome)
    if not outcome.resumed:
        assert outcome.error == query.error, outcome.message
    else:
        pinned = old.settings.shuffle_partitions
        assert outcome.shuffle_partitions == pinned  # the checkpoint's, whatever NEW says
    if case.null_rows is not None:  # stored unmatched rows under the new join type
        assert (null_padded(outcome.rows) > 0) == case.null_rows, outcome.rows
    row = RECORDED[case.name]
    if spark.version == row["spark"]:
        assert (row["resumed"], row["error"]) == (outcome.resumed, outcome.error)
        assert row["null_padded_rows"] == null_padded(outcome.rows)
