"""The planner's typed time range (``JoinNode.time_range``) means exactly what the post-join
condition means: for every written form of a range, at and around both bounds, ``lower <=
y - x <= upper`` holds exactly when the runtime's evaluator (checked against Spark) says the
condition is true.  Conditions that are not exactly a range get no time range."""

from __future__ import annotations

import pytest

from sjoin.api import check_text
from sjoin.compiler.vocabulary.model import TimeRange
from sjoin.runtime.engine.eval import Layout, compile_expr
from sjoin.runtime.rows.join import side_layout

SPEC = """
stream l (k BIGINT, t TIMESTAMP, u TIMESTAMP, d DATE) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, u TIMESTAMP, d DATE) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R ON L.k = R.k AND {condition}
"""

RANGES = {
    "R.t BETWEEN L.t AND L.t + INTERVAL 1 HOUR": (0, 3_600_000_000),
    "R.t >= L.t - INTERVAL 5 SECONDS AND R.t <= L.t + INTERVAL 10 SECONDS": (
        -5_000_000,
        10_000_000,
    ),
    "R.t > L.t AND R.t < L.t + INTERVAL 1 SECOND": (1, 999_999),
    "L.t <= R.t AND L.t + INTERVAL 2 MINUTES >= R.t": (0, 120_000_000),
    "L.t < R.t + INTERVAL 1 SECOND AND L.t > R.t - INTERVAL 3 SECONDS": (-999_999, 2_999_999),
    "R.t + INTERVAL 1 SECOND >= L.t AND INTERVAL 1 SECOND + L.t >= R.t": (-1_000_000, 1_000_000),
    "R.u >= L.t AND R.u <= L.t + INTERVAL 1 MINUTE": (0, 60_000_000),
    "R.t BETWEEN L.t - INTERVAL 1.5 SECONDS AND L.t + INTERVAL 0.25 SECONDS": (
        -1_500_000,
        250_000,
    ),
}

NOT_RANGES = [
    "R.t >= L.t",  # one bound only
    "R.t >= L.t AND R.t >= L.t - INTERVAL 1 SECOND",  # two lower bounds
    "R.t - INTERVAL 1 SECOND <= L.t AND INTERVAL 1 SECOND + L.t >= R.t",  # two upper bounds
    "R.t >= L.t AND R.u <= L.t + INTERVAL 1 SECOND",  # two right columns
    "R.t BETWEEN L.t AND L.t + INTERVAL 1 HOUR AND L.k > 0 AND R.k > 0 AND L.k < R.k",
    "R.d >= L.d AND R.d <= L.d",  # dates: not microsecond timestamps
    "R.t >= L.t AND R.t <= L.t + INTERVAL 1 SECOND AND 1 = 1",  # a constant conjunct
]


def _join(condition: str):  # type: ignore[no-untyped-def]
    result = check_text(SPEC.format(condition=condition))
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return result.plan.joins[0]


@pytest.mark.parametrize("condition", list(RANGES), ids=str)
def test_range_means_the_condition(condition: str) -> None:
    join = _join(condition)
    tr = join.time_range
    assert isinstance(tr, TimeRange)
    assert (tr.lower_us, tr.upper_us) == RANGES[condition]
    left, right = side_layout(join.left), side_layout(join.right)
    post = compile_expr(
        join.post_join_filter, Layout.of(("left", left), ("right", right)), ansi=True
    )
    xi = [c for c, _ in left].index(tr.left_column)
    yi = [c for c, _ in right].index(tr.right_column)
    x = 1_767_225_600_000_000
    for base in (tr.lower_us, tr.upper_us):
        for delta in (-1_000_001, -1000, -1, 0, 1, 1000, 1_000_001):
            y = x + base + delta
            lrow = [1, x, x, 0]
            rrow = [1, x, x, 0]
            lrow[xi] = x
            rrow[yi] = y
            want = tr.lower_us <= y - x <= tr.upper_us
            assert (post(tuple(lrow), tuple(rrow)) is True) is want, (base, delta)


@pytest.mark.parametrize("condition", NOT_RANGES, ids=str)
def test_other_conditions_have_no_range(condition: str) -> None:
    assert _join(condition).time_range is None
