"""Filters Spark infers through the condition's equalities (``compiler/planning/infer.py``, a port
of
``InferFiltersFromConstraints``): which sides get them per join type, through which
expressions, where they run (below or above the watermark node), how they show in
`sjoin plan`, and the E031 bound on the substitutions.

The Spark facts: the sides per join type are ``InferFiltersFromConstraints.inferFilters``;
the expression cases were each run on Spark 4.3.0 (optimized plans: ``CAST(i AS BIGINT) =
k``, ``CAST(i AS DOUBLE)``, ``CAST(d AS TIMESTAMP)``, ``CAST(i AS DECIMAL(12,2))``, a
BETWEEN over ``k + 1``, ``k = k + 1`` inferring nothing, ``IS NOT NULL`` never substituted,
a same-side equality pushed below the join reaching the other side);
tests/integration/spark/test_infer_on_spark.py checks the per-join-type sides and the one-step rule
on
the running Spark, and tests/integration/parity/scenarios.py (``*_inferred_*``) the state rows.
"""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.describe.explain import plan_text
from sjoin.compiler.frontend.limits import MAX_SUBSTITUTIONS
from sjoin.compiler.vocabulary.sql import spark_sql

COLUMNS = (
    "k BIGINT, t TIMESTAMP, n BIGINT, i INT, x DOUBLE, d DATE, v STRING, "
    "dc DECIMAL(12, 2), dd DECIMAL(10, 2), de DECIMAL(12, 4), ds DECIMAL(5, 2)"
)
X = "TIMESTAMP '2026-01-01 00:00:00'"
TX = "CAST('2026-01-01 00:00:00' AS TIMESTAMP)"


def spec(how: str, on: str) -> str:
    select = "SELECT L.k AS lk" if how in ("LEFT SEMI", "LEFT ANTI") else "SELECT L.k AS lk, R.n"
    return (
        "spark 4.3\n"
        f"stream l ({COLUMNS}) watermark t delay 10 seconds\n"
        f"stream r ({COLUMNS}) watermark t delay 10 seconds\n"
        f"join j = l AS L {how} JOIN r AS R ON {on}\n  {select}\n"
    )


def planned(how: str, on: str) -> Any:
    result = check_text(spec(how, on), "infer.sjoin")
    errors = [(d.code, d.message) for d in result.diagnostics if d.severity == "error"]
    assert result.plan is not None and not errors, errors
    return result.plan.joins[0]


def inferred(how: str, on: str) -> tuple[list[str], list[str]]:
    join = planned(how, on)
    return (
        [spark_sql(p) for p in join.left.inferred_filters],
        [spark_sql(p) for p in join.right.inferred_filters],
    )


KEYS = "L.k = R.k AND L.t = R.t"


# ------------------------------------------------------------------ the sides, per join type
@pytest.mark.parametrize(
    ("how", "extra", "left", "right"),
    [
        # a right-only conjunct reaches the left through L.k = R.k ...
        ("INNER", "R.k > 2", ["L.k > 2"], []),
        ("RIGHT OUTER", "R.k > 2", ["L.k > 2"], []),  # kept in the join, inferred on the left
        ("LEFT SEMI", "R.k > 2", ["L.k > 2"], []),
        ("LEFT OUTER", "R.k > 2", [], []),  # the left is preserved: never filtered
        ("LEFT ANTI", "R.k > 2", [], []),
        ("FULL OUTER", "R.k > 2", [], []),  # neither side is filtered
        # ... and a left-only conjunct the right
        ("INNER", "L.k > 2", [], ["R.k > 2"]),
        ("LEFT OUTER", "L.k > 2", [], ["R.k > 2"]),  # kept in the join, inferred on the right
        ("LEFT ANTI", "L.k > 2", [], ["R.k > 2"]),
        ("LEFT SEMI", "L.k > 2", [], ["R.k > 2"]),
        ("RIGHT OUTER", "L.k > 2", [], []),  # the right is preserved
        ("FULL OUTER", "L.k > 2", [], []),
    ],
)
def test_the_sides_spark_filters_per_join_type(
    how: str, extra: str, left: list[str], right: list[str]
) -> None:
    assert inferred(how, f"{KEYS} AND {extra}") == (left, right)


# ------------------------------------------------------------------ through which expressions
@pytest.mark.parametrize(
    ("on", "left", "right"),
    [
        # both ways through an equality of two columns of one type
        (f"{KEYS} AND R.k > 2 AND L.k < 7", ["L.k > 2"], ["R.k < 7"]),
        # through event times: on the time column itself
        (f"{KEYS} AND R.t >= {X}", [f"L.t >= {TX}"], []),
        # BETWEEN is two conjuncts; over an expression too (Spark 4.x)
        (
            f"{KEYS} AND R.k + 1 BETWEEN 5 AND 10",
            ["L.k + 1 >= 5", "L.k + 1 <= 10"],
            [],
        ),
        # the equality is an operand: R.k = 5 gives L.k = 5
        (f"{KEYS} AND R.k = 5", ["L.k = 5"], []),
        (f"{KEYS} AND R.k IN (1, 2)", ["L.k IN (1, 2)"], []),
        # a two-side conjunct becomes one side's
        (f"{KEYS} AND R.k > L.n", ["L.k > L.n"], []),
        # another equality through the first: L.k = R.n gives R.k = R.n
        (f"{KEYS} AND L.k = R.n", [], ["R.k = R.n"]),
        # a computed side of an equality infers nothing
        ("L.k = R.k + 1 AND L.t = R.t AND R.k > 5", [], []),
        # IS NOT NULL (or NOT ... IS NULL) is never substituted (isnotnull is inferred apart)
        (f"{KEYS} AND R.n IS NOT NULL AND NOT (R.k IS NULL)", [], []),
        # what a side already has is not added again
        (f"{KEYS} AND R.k > 2 AND L.k > 2", [], []),
        (f"{KEYS} AND R.k > 2 AND 2 < L.k", [], []),  # the same constraint, operands swapped
        # one step: R.k > R.n gives L.k > R.n and R.k > L.n (both sides), not L.k > L.n
        ("L.k = R.k AND L.n = R.n AND L.t = R.t AND R.k > R.n", [], []),
        # but a same-side equality pushed below the join gives its side one step first
        (f"{KEYS} AND R.k = R.n AND R.n > 5", ["L.k > 5"], []),
    ],
)
def test_what_is_substituted(on: str, left: list[str], right: list[str]) -> None:
    assert inferred("INNER", on) == (left, right)


@pytest.mark.parametrize(
    ("on", "left", "right"),
    [
        # INT = BIGINT is CAST(L.i AS BIGINT) = R.k: R.k is replaced, L.i never
        ("L.i = R.k AND L.t = R.t AND R.k > 5 AND L.i < 9", ["CAST(L.i AS BIGINT) > 5"], []),
        ("R.k = L.i AND L.t = R.t AND R.k > 5", ["CAST(L.i AS BIGINT) > 5"], []),
        # written as Spark's coercion writes it
        ("CAST(L.i AS BIGINT) = R.k AND L.t = R.t AND R.k > 5", ["CAST(L.i AS BIGINT) > 5"], []),
        ("L.i = R.x AND L.t = R.t AND R.x > 5.5", ["CAST(L.i AS DOUBLE) > 5.5"], []),
        (
            f"L.d = R.t AND L.k = R.k AND R.t > {X}",
            [f"CAST(L.d AS TIMESTAMP) > {TX}"],
            [],
        ),
        # decimals: the narrower one is cast to the wider decimal (DecimalPrecision)
        ("L.i = R.dc AND L.t = R.t AND R.dc > 5.5", ["CAST(L.i AS DECIMAL(12, 2)) > 5.5"], []),
        ("L.dd = R.de AND L.t = R.t AND R.de > 5.5", ["CAST(L.dd AS DECIMAL(12, 4)) > 5.5"], []),
        # both cast (DECIMAL(12, 2) for INT and DECIMAL(5, 2)): no column equality, nothing
        ("L.i = R.ds AND L.t = R.t AND R.ds > 5.5", [], []),
        # two columns equal to the same one: through the cast and through the columns
        (
            "L.k = R.k AND L.t = R.t AND L.i = R.k AND R.k > 5",
            ["L.k > 5", "CAST(L.i AS BIGINT) = L.k", "CAST(L.i AS BIGINT) > 5"],
            [],
        ),
    ],
)
def test_through_casts(on: str, left: list[str], right: list[str]) -> None:
    assert inferred("INNER", on) == (left, right)


# ------------------------------------------------------------------ where they run
def test_inferred_filters_run_with_the_pushed_ones_split_at_the_watermark() -> None:
    """A filter on the watermarked column runs above the watermark node (it does not hide
    rows from the watermark), any other below it, as Spark's PushPredicateThroughNonJoin
    leaves them; its columns get their inferred isnotnull."""
    join = planned("RIGHT OUTER", f"L.k = R.k AND L.t = R.t AND R.t >= {X} AND R.n = L.n + 0")
    left = join.left
    assert [spark_sql(p) for p in left.filters_above_watermark] == [f"L.t >= {TX}"]
    assert [spark_sql(p) for p in left.filters_below_watermark] == []
    join = planned("INNER", f"{KEYS} AND R.k > 2")
    assert [spark_sql(p) for p in join.left.filters_below_watermark] == ["L.k > 2"]
    assert [spark_sql(p) for p in join.right.filters_below_watermark] == ["R.k > 2"]
    assert join.left.pushed_filter is None  # what the user wrote is apart from what Spark adds


def test_the_state_rules_are_those_of_the_condition() -> None:
    """Spark derives the state watermarks from the join condition, not from the filters
    below the join, so an inferred time filter changes no eviction."""
    plain = check_text(spec("INNER", KEYS), "a.sjoin").plan_json()["joins"][0]["state"]
    with_filter = check_text(spec("RIGHT OUTER", f"{KEYS} AND R.t >= {X}"), "b.sjoin")
    assert with_filter.plan_json()["joins"][0]["state"] == plain


# ------------------------------------------------------------------ how they show
def test_plan_json_and_text_mark_the_inferred_filters() -> None:
    result = check_text(spec("RIGHT OUTER", f"{KEYS} AND R.k > 2"), "shown.sjoin")
    sides = result.plan_json()["joins"][0]["sides"]
    assert sides["left"]["inferred_filter"] == "L.k > 2"
    assert sides["left"]["pushed_filter"] is None
    assert sides["right"]["inferred_filter"] is None
    assert sides["right"]["pre_join_filter"] == "R.k > 2"
    assert result.plan is not None
    text = plan_text(result.plan)
    assert (
        "left filter      L.k > 2 (inferred by Spark through the condition's equalities, "
        "pushed below the join)"
    ) in text


def test_the_job_does_not_write_them() -> None:
    """Spark infers them itself: the generated job is the job of the same condition."""
    a = check_text(spec("INNER", f"{KEYS} AND R.k > 2"), "a.sjoin")
    assert a.plan is not None and a.plan.joins[0].left.inferred_filters
    job = compile_pyspark(a.plan)
    assert "L.k > 2" not in job and "R.k > 2" in job


# ------------------------------------------------------------------ the bound (E031)
def shared_column(n: int) -> str:
    cols = ", ".join(f"c{i} BIGINT" for i in range(n))
    on = " AND ".join(f"L.k = R.c{i}" for i in range(n))
    return (
        "spark 4.3\n"
        "stream l (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds\n"
        f"stream r (t TIMESTAMP, {cols}) watermark t delay 10 seconds\n"
        f"join j = l AS L INNER JOIN r AS R ON L.t = R.t AND {on}\n  SELECT L.k AS k\n"
    )


def test_equalities_sharing_a_column_are_bounded_by_e031() -> None:
    """n equalities on one column rewrite each other: about n² substitutions (each a filter
    Spark adds too).  Past MAX_SUBSTITUTIONS the spec is refused with E031 at the join's
    condition, never a planner that runs for minutes."""
    n = 150  # 150 * 149 = 22,350 substitutions
    assert n * (n - 1) > MAX_SUBSTITUTIONS
    result = check_text(shared_column(n), "big.sjoin")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == ["E031"]
    assert "would substitute 22,350 predicates" in errors[0].message
    assert result.source.line_col(errors[0].span.start) == (4, 38)
    fine = check_text(shared_column(60), "fine.sjoin")
    assert fine.ok and fine.plan is not None
    assert len(fine.plan.joins[0].right.inferred_filters) == 60 * 59 // 2  # R.ci = R.cj
