"""The append rule (SPARK-49829) as the planner decides it per join side: which new rows this
batch's eviction would remove at once are left out of state (``Side.evicted_rows_skipped``),
read by both engines, shown by `sjoin plan` in text and JSON."""

from __future__ import annotations

import pytest

from sjoin.api import check_text
from sjoin.compiler.describe.explain import join_json, plan_text

SPEC = """\
spark {version}
stream a(k BIGINT, t TIMESTAMP) watermark t delay 1 second
stream b(k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = a AS x RIGHT OUTER JOIN b AS y
  ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE
  SELECT x.k, y.t
"""


@pytest.mark.parametrize(
    ("version", "left", "right"),
    [
        ("3.5.8", "all", "all"),  # before the fix: no row the eviction removes is stored
        ("3.5.9", "none", "matched"),  # the fix: a right outer side keeps unmatched rows
        ("3.4.3", "all", "all"),
        ("3.4.4", "none", "matched"),
        ("4.0", "none", "matched"),
    ],
)
def test_each_side_carries_the_append_rule(version: str, left: str, right: str) -> None:
    result = check_text(SPEC.format(version=version))
    assert result.plan is not None, result.diagnostics
    (join,) = result.plan.joins
    assert (join.left.evicted_rows_skipped, join.right.evicted_rows_skipped) == (left, right)
    sides = join_json(join)["sides"]
    assert (sides["left"]["evicted_rows_skipped"], sides["right"]["evicted_rows_skipped"]) == (
        left,
        right,
    )


def test_an_inner_join_right_side_skips_every_evicted_row() -> None:
    result = check_text(SPEC.format(version="4.0").replace("RIGHT OUTER", "INNER"))
    assert result.plan is not None
    (join,) = result.plan.joins
    assert (join.left.evicted_rows_skipped, join.right.evicted_rows_skipped) == ("none", "all")


def test_plan_text_shows_each_evicted_sides_rule() -> None:
    result = check_text(SPEC.format(version="3.5.8"))
    assert result.plan is not None
    text = plan_text(result.plan)
    assert text.count("new rows that this batch's eviction removes at once are not stored") == 2
    fixed = check_text(SPEC.format(version="4.0"))
    assert fixed.plan is not None
    text = plan_text(fixed.plan)
    assert "new rows are all stored, also those this batch's eviction removes at once" in text
    assert "removes at once are not stored once matched (an unmatched one is" in text
