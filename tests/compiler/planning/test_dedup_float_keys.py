"""A dedup's FLOAT/DOUBLE keys per Spark version (``DedupNode.float_keys``): the planner
decides, `sjoin plan` shows it, both engines and the checkpoint check read it.

Spark facts: SPARK-56280 (apache/spark#55088) made ``BaseStreamingDeduplicateExec`` call
``NormalizeFloatingNumbers.normalize`` on its keys; the call is in the spark-sql jars of
4.2.0, 4.2.1 and 4.3.0 and not in those of 3.5.9, 4.0.5 and 4.1.4 (javap of the class).  On
real Spark the parity scenario ``dedup_double_key`` (tests/integration/parity/scenarios.py) keeps
-0.0 and 0.0 as two keys on 3.5 (CI's run, session 36) and as one on 4.3.0; its NaNs are one key
on both."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.planning.plan import DedupNode, Plan
from sjoin.compiler.planning.planner import dedup_float_keys
from sjoin.compiler.vocabulary.model import SparkVersion
from sjoin.runtime import run, run_to_files

SPEC = "stream s (x DOUBLE, v STRING)\ndedup d = s ON (x)\n"
TRACE: list[dict[str, Any]] = [
    {"batch": 0, "stream": "s", "row": {"x": 0.0, "v": "a"}},
    {"batch": 0, "stream": "s", "row": {"x": -0.0, "v": "b"}},
    {"batch": 0, "stream": "s", "row": {"x": "NaN", "v": "c"}},
    {"batch": 0, "stream": "s", "row": {"x": "NaN", "v": "d"}},
    {"batch": 1, "stream": "s", "row": {"x": -0.0, "v": "g"}},
    {"batch": 1, "stream": "s", "row": {"x": 0.0, "v": "h"}},
]


def _plan(spark: str, spec: str = SPEC) -> Plan:
    result = check_text(f"spark {spark}\n{spec}", "d.sjoin")
    assert result.ok and result.plan is not None
    return result.plan  # type: ignore[no-any-return]


def _dedup(plan: Plan) -> DedupNode:
    node = plan.node("d")
    assert isinstance(node, DedupNode)
    return node


@pytest.mark.parametrize(
    ("spark", "expected"),
    [
        ("3.3", "bitwise"),
        ("3.5", "bitwise"),
        ("4.0", "bitwise"),
        ("4.1", "bitwise"),
        ("4.2", "normalized"),
        ("4.3", "normalized"),
    ],
)
def test_the_planner_decides_it_per_version(spark: str, expected: str) -> None:
    assert _dedup(_plan(spark)).float_keys == expected
    assert dedup_float_keys(SparkVersion.parse(spark)) == expected  # type: ignore[arg-type]


def test_no_floating_key_no_decision() -> None:
    plan = _plan("3.5", "stream s (x DOUBLE, k BIGINT)\ndedup d = s ON (k)\n")
    assert _dedup(plan).float_keys is None
    assert "float keys" not in plan_text(plan)
    assert plan_json(plan, [])["dedups"][0]["float_keys"] is None


def test_plan_text_and_json_show_it() -> None:
    old, new = _plan("3.5"), _plan("4.3")
    assert "-0.0 and 0.0 are two keys" in plan_text(old)
    assert "-0.0 and 0.0 are one key" in plan_text(new)
    assert plan_json(old, [])["dedups"][0]["float_keys"] == "bitwise"
    assert plan_json(new, [])["dedups"][0]["float_keys"] == "normalized"


def _rows(plan: Plan, engine: str) -> list[list[str]]:
    result = run(plan, TRACE, engine=engine)  # type: ignore[arg-type]
    return [[r["v"] for _, r in b.rows] for b in result.batches]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_both_engines_honour_it(engine: str) -> None:
    # 3.5: -0.0 is a key of its own (b passes), then both keys are in state (g, h dropped)
    assert _rows(_plan("3.5"), engine) == [["a", "b", "c"], []]
    # 4.3: -0.0 is the key 0.0 (b, g and h dropped); the NaNs one key on both
    assert _rows(_plan("4.3"), engine) == [["a", "c"], []]


def test_a_checkpoint_of_both_zero_keys_restores_where_they_are_two(tmp_path: Path) -> None:
    """The snapshot check reads the field: two keys -0.0 and 0.0 are two keys on 3.5 (a
    restart goes on), one key kept twice on 4.3 (refused as damaged)."""
    plan = _plan("3.5")
    whole, part, chk = tmp_path / "whole", tmp_path / "part", tmp_path / "chk"
    run_to_files(plan, TRACE, output=whole, stderr=io.StringIO())
    run_to_files(plan, TRACE[:4], output=part, checkpoint=chk, stderr=io.StringIO())
    run_to_files(plan, TRACE, output=part, checkpoint=chk, stderr=io.StringIO())
    assert part.read_bytes() == whole.read_bytes()
    lines = [json.loads(line)["row"]["v"] for line in whole.read_text().splitlines()]
    assert lines == ["a", "b", "c"]
