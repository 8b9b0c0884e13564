"""`sjoin diff` of pipelines around the join, without Spark: what it says for each change of
``pipeline_cases.py`` (which ``test_pipeline_restarts_spark.py`` checks on real Spark), and
a dedup's floating keys across the 4.2 change (SPARK-56280), on a restart and an upgrade."""

from __future__ import annotations

import pytest

from sjoin.api import check_text
from sjoin.compiler.describe.diff import diff_plans, diff_versions

from .catalogue import Case
from .pipeline_cases import CASES, SEEN
from .restart import plan_of


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_verdict_is_what_spark_did(case: Case) -> None:
    """The verdict and error of each case are those Spark 4.3.0 gave (``SEEN``)."""
    (query,) = diff_plans(plan_of(case.old), plan_of(case.new)).queries
    resumed, error = SEEN[case.name]
    assert (query.verdict != "fails") == resumed
    if not resumed:
        assert query.error is not None and query.error.startswith(error)


def _reasons(old: str, new: str) -> dict[str, str]:
    (query,) = diff_plans(plan_of(old), plan_of(new)).queries
    found = {r.topic: r.detail for r in query.reasons}
    found.update({r.topic: r.detail for op in query.operators for r in op.reasons})
    return found


def test_the_reasons_say_what_changes() -> None:
    by = {c.name: c for c in CASES}
    view = _reasons(by["view WHERE changed"].old, by["view WHERE changed"].new)
    assert "x.v <> 'a' to x.v <> 'b'" in view["view"] and "holds no state" in view["view"]
    union = _reasons(by["union input replaced"].old, by["union input replaced"].new)
    assert "from (l, r) to (l, s)" in union["union"] and "at its position" in union["union"]
    added = _reasons(by["union input added"].old, by["union input added"].new)
    assert "refuses the restart" in added["union"]
    delay = by["WITHIN WATERMARK delay changed"]
    eviction = _reasons(delay.old, delay.new)["eviction"]
    assert "t + 10 seconds" in eviction and "t + 20 seconds" in eviction
    assert "keeps the expiresAtMicros it was stored with" in eviction


DOUBLE = (
    "stream s (x DOUBLE, v STRING)\ndedup d = s ON (x)\n"
    "sink d to parquet (path = 'o') checkpoint 'c'\n"
)


def test_a_floating_key_across_spark_4_2() -> None:
    old, new = plan_of("spark 3.5\n" + DOUBLE), plan_of("spark 4.3\n" + DOUBLE)
    (query,) = diff_plans(old, new).queries
    (op,) = query.operators
    assert op.verdict == "differs"
    (reason,) = [r for r in op.reasons if r.topic == "float keys"]
    assert "-0.0 and 0.0 are two keys before the restart" in reason.detail
    a, b = check_text("spark 3.5\n" + DOUBLE, "d"), check_text("spark 4.3\n" + DOUBLE, "d")
    upgrade = diff_versions("d", a.plan, a.diagnostics, b.plan, b.diagnostics, "3.5", "4.3")
    (change,) = [r for r in upgrade.relation_changes["d"] if r.topic == "float keys"]
    assert change.issue == "SPARK-56280" and "two keys on 3.5" in change.detail
    same = diff_versions("d", b.plan, b.diagnostics, b.plan, b.diagnostics, "4.3", "4.3")
    assert "d" not in same.relation_changes
