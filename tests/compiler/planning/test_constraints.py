"""Each relation's constraints (compiler/planning/constraints.py) and the filters a join
infers from them for its other side.  On Spark 4.3.0: the parity scenario
``inferred_filter_from_a_view_below_a_dedup``."""

from __future__ import annotations

from typing import Any

from sjoin.api import check_text
from sjoin.compiler.planning.constraints import relation_constraints

HEAD = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING, w BIGINT) watermark t delay 0 seconds
stream l2 (k BIGINT, t TIMESTAMP, v STRING, w BIGINT) watermark t delay 0 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING, w BIGINT) watermark t delay 0 seconds
"""
JOIN = (
    "join j = {left} AS L INNER JOIN r AS R\n"
    "  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS\n"
    "  SELECT L.k AS k, L.t AS lt, R.t AS rt\n"
)


def _constraints(text: str) -> dict[str, list[str]]:
    result = check_text(HEAD + text, "c.sjoin")
    assert result.bound is not None, [d.message for d in result.diagnostics]
    found = relation_constraints(result.bound, [10_000])
    return {name: [p.sql(dialect="spark") for p in ps] for name, ps in found.items()}


def _right_filter(text: str) -> Any:
    result = check_text(HEAD + text, "c.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    j = result.plan.node("j")
    return [p.sql(dialect="spark") for p in j.right.inferred_filters], [
        p.sql(dialect="spark") for p in j.left.inferred_filters
    ]


def test_a_views_where_is_over_its_output_names_and_a_dedup_keeps_it() -> None:
    found = _constraints(
        "view lv = SELECT X.k AS key, X.t, X.v FROM l AS X WHERE X.k IN (1, 2) AND X.w > 3\n"
        "dedup ld = lv ON (key, t)\n"
    )
    # `X.w > 3` reads a column the projection drops: Spark keeps no constraint on it
    assert found["lv"] == ["key IN (1, 2)"]
    assert found["ld"] == ["key IN (1, 2)"]
    assert found["l"] == []


def test_a_view_adds_one_step_of_inference_and_drops_what_is_not_deterministic() -> None:
    found = _constraints(
        "view lv = SELECT X.k, X.w, X.t FROM l AS X\n"
        "  WHERE X.k = X.w AND X.k > 2 AND X.w < rand()\n"
    )
    assert "k = w" in found["lv"] and "k > 2" in found["lv"] and "w > 2" in found["lv"]
    assert not any("rand" in p for p in found["lv"])


def test_a_union_keeps_what_all_its_inputs_share() -> None:
    found = _constraints(
        "view a = SELECT X.k, X.t FROM l AS X WHERE X.k > 2 AND X.k < 9\n"
        "view b = SELECT X.k, X.t FROM l2 AS X WHERE X.k > 2\n"
        "union u = a UNION ALL b\n"
    )
    assert found["u"] == ["k > 2"]
    one = "view a = SELECT X.k, X.t FROM l AS X WHERE X.k > 2\n"
    assert (
        _constraints(one + "view b = SELECT X.k, X.t FROM l2 AS X\nunion u = a UNION ALL b\n")["u"]
        == []
    )


def test_the_join_infers_the_other_sides_filter_from_a_dedup_of_a_view() -> None:
    right, left = _right_filter(
        "view lv = SELECT X.k, X.t, X.v FROM l AS X WHERE X.k IN (1, 2)\n"
        "dedup ld = lv ON (k, t)\n" + JOIN.format(left="ld")
    )
    assert right == ["R.k IN (1, 2)"]
    assert left == []  # already known of the left rows: not filtered again


def test_a_join_below_passes_on_its_inputs_and_conditions_constraints() -> None:
    lower = (
        "view lv = SELECT X.k, X.t, X.v FROM l AS X WHERE X.k IN (1, 2)\n"
        "join i = lv AS A {how} JOIN l2 AS B ON A.k = B.k AND A.t = B.t AND B.w > 4\n"
        "  SELECT A.k AS k, A.t AS t, B.w AS w\n"
    )
    found = _constraints(lower.format(how="INNER"))
    assert "k IN (1, 2)" in found["i"] and "w > 4" in found["i"]
    right, _ = _right_filter(lower.format(how="INNER") + JOIN.format(left="i"))
    assert right == ["R.k IN (1, 2)"]
    # a LEFT OUTER join knows its left input's constraints only
    found = _constraints(lower.format(how="LEFT OUTER"))
    assert found["i"] == ["k IN (1, 2)"]
    assert _constraints(lower.format(how="FULL OUTER"))["i"] == []


def test_an_aggregate_keeps_those_on_its_grouping_columns() -> None:
    found = _constraints(
        "view lv = SELECT X.k, X.t, X.w FROM l AS X WHERE X.k IN (1, 2) AND X.w > 0\n"
        "aggregate a = lv AS A GROUP BY A.k, window(A.t, INTERVAL 10 SECONDS)\n"
        "  SELECT A.k AS key, window(A.t, INTERVAL 10 SECONDS) AS win, count(*) AS n\n"
    )
    assert found["a"] == ["key IN (1, 2)"]
