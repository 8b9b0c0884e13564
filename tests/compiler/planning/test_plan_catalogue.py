"""The planner against the plan catalogue (``cases.py``): per join the equi-join keys, each
side's state eviction (kind, column, offset) and the pre-join filters, and per spec the
diagnostic codes, as Spark does it (each case names its source).

A failure here is a disagreement between the planner and Spark (or the reference): the
expectation is Spark's; fix the planner, not the case, unless a real run says otherwise.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from sjoin.api import check_text

from .cases import BY_ID, CASES, REQUIRED_REFS, UNSET, Case, State

IGNORED_CODES = frozenset({"W002"})  # unused-watermark advice: not part of the catalogue


def norm(sql: str | None) -> str | None:
    """SQL text compared ignoring case, blanks and quotes."""
    return None if sql is None else re.sub(r"[\s'\"`]", "", sql).lower()


def describe(state: dict[str, Any]) -> str:
    if state["eviction"] == "never":
        return "never"
    return f"{state['eviction']}({state['column']}, {state['offset_ms']:+d} ms)"


def check_state(actual: dict[str, Any], expected: State, where: str) -> None:
    got = describe(actual)
    assert actual["eviction"] == expected.eviction, f"{where}: planner {got}, expected {expected}"
    if expected.eviction != "never":
        assert actual["offset_ms"] == expected.offset_ms, (
            f"{where}: planner {got}, expected {expected}"
        )
        if expected.column is not None:
            assert actual["column"] == expected.column, (
                f"{where}: planner {got}, expected {expected}"
            )


def plan(case: Case) -> tuple[set[str], dict[str, Any] | None]:
    result = check_text(case.spec, f"{case.id}.sjoin")
    codes = {d.code for d in result.diagnostics} - IGNORED_CODES
    assert "E999" not in codes, [d.message for d in result.diagnostics if d.code == "E999"]
    return codes, (result.plan_json() if result.plan is not None else None)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case) -> None:
    codes, plan_json = plan(case)
    expected = set(case.codes)
    if case.exact:
        assert codes == expected, f"diagnostics {sorted(codes)}, expected {sorted(expected)}"
    else:
        assert expected <= codes, f"diagnostics {sorted(codes)}, expected {sorted(expected)}"
    assert not (codes & case.absent), f"diagnostics {sorted(codes)} must not hold {case.absent}"
    if case.shape is not None and plan_json is not None:
        for name, val in case.shape.settings:  # e.g. the watermark policy reaches the plan
            assert str(plan_json["settings"][name]).lower() == val, plan_json["settings"]
    if not case.joins:
        return
    assert plan_json is not None, "no plan"
    joins = plan_json["joins"]
    assert len(joins) >= len(case.joins)
    for i, want in enumerate(case.joins):
        got = joins[i]
        where = f"join {got['name']}"
        if want.join_type is not None:
            assert got["join_type"] == want.join_type
        if want.keys is not None:
            assert [[norm(a), norm(b)] for a, b in got["keys"]] == [
                [norm(a), norm(b)] for a, b in want.keys
            ], f"{where}: keys {got['keys']}, expected {want.keys}"
        if want.left is not None:
            check_state(got["state"]["left"], want.left, f"{where} left state")
        if want.right is not None:
            check_state(got["state"]["right"], want.right, f"{where} right state")
        for side, pre in (("left", want.pre_left), ("right", want.pre_right)):
            if pre is not UNSET:
                actual = got["sides"][side]["pre_join_filter"]
                assert norm(actual) == norm(pre), (  # type: ignore[arg-type]
                    f"{where}: {side} pre-join filter {actual!r}, expected {pre!r}"
                )


def test_catalogue_is_complete() -> None:
    assert len(CASES) >= 45
    assert len(BY_ID) == len(CASES), "case ids must be unique"
    assert all(c.source.strip() for c in CASES), "every case names its source"
    covered = {ref for c in CASES for ref in c.refs}
    assert covered >= REQUIRED_REFS, f"uncovered reference rows: {sorted(REQUIRED_REFS - covered)}"
    join_types = {j.join_type for c in CASES for j in c.joins if j.join_type}
    assert join_types == {
        "inner",
        "left_outer",
        "right_outer",
        "full_outer",
        "left_semi",
        "left_anti",
    }
    versions = {
        line.split()[1] for c in CASES for line in c.spec.splitlines() if line.startswith("spark ")
    }
    assert {"3.3", "3.4", "3.5", "4.1", "4.2", "4.3"} <= versions
    assert sum(1 for c in CASES if c.spark is not None) >= 12


def test_plan_json_offsets_reproduce_spark_predicates() -> None:
    """The contract's arithmetic on reference §1.10: at W = 90 000 the printed predicates
    are `t <= 84999000` (left) and `t <= 79999000` (right)."""
    _, plan_json = plan(BY_ID["r33_1_between_nonstrict"])
    assert plan_json is not None
    state = plan_json["joins"][0]["state"]
    assert (90_000 + state["left"]["offset_ms"]) * 1000 == 84_999_000
    assert (90_000 + state["right"]["offset_ms"]) * 1000 == 79_999_000


SPARK_RUNS = [c for c in CASES if c.spark is not None and c.spark.error is None]


@pytest.mark.parametrize("case", SPARK_RUNS, ids=[c.id for c in SPARK_RUNS])
def test_cases_spark_runs_have_no_error(case: Case) -> None:
    """A case that Spark runs (tests/integration/spark/test_plan_vs_spark.py) must plan without an
    error, or the Spark test fails: checked here without a JVM."""
    codes, _ = plan(case)
    assert not {c for c in codes if c.startswith("E")}, sorted(codes)
