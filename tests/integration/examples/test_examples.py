"""Every example checks clean, and its bound model and plan JSON are snapshotted."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.compiler.binding.bound import pretty

from ...conftest import EXAMPLES


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_example_checks_clean(spec: Path) -> None:
    result = check_file(spec)
    assert result.ok, [f"{d.code} {d.message}" for d in result.diagnostics]
    assert not any(d.code == "W001" for d in result.diagnostics), "examples keep state bounded"


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_example_says_what_it_answers(spec: Path) -> None:
    assert "Business question:" in spec.read_text()


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_bound_model_snapshot(spec: Path, text_snapshot) -> None:  # type: ignore[no-untyped-def]
    result = check_file(spec)
    assert result.bound is not None
    assert pretty(result.bound) == text_snapshot


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_plan_json_snapshot(spec: Path, json_snapshot) -> None:  # type: ignore[no-untyped-def]
    result = check_file(spec)
    data = result.plan_json()
    for d in data["diagnostics"]:
        d["file"] = spec.name  # snapshots must not depend on where the repo is
    assert data == json_snapshot


def test_brief_offsets_for_ad_attribution() -> None:
    """The offsets the language brief (§5) gives for its example."""
    data = check_file(Path(__file__).parents[3] / "examples" / "ad_attribution.sjoin").plan_json()
    (join,) = data["joins"]
    assert join["join_type"] == "left_outer"
    assert join["keys"] == [["i.ad_id", "c.ad_id"]]
    assert join["state"]["left"] == {
        **join["state"]["left"],
        "eviction": "value",
        "column": "impression_time",
        "offset_ms": -3600001,
    }
    assert join["state"]["right"] == {
        **join["state"]["right"],
        "eviction": "value",
        "column": "click_time",
        "offset_ms": -1,
    }


def test_plan_json_fields_are_documented() -> None:
    """docs/plan-json.md names every field the plan JSON of the examples holds."""
    from sjoin.compiler.describe.explain import PLAN_SCHEMA

    doc = (Path(__file__).resolve().parents[3] / "docs" / "plan-json.md").read_text()
    assert f"schema {PLAN_SCHEMA}" in doc
    free_maps = {"settings", "options", "diagnostics"}  # keys chosen by users, or by §4

    def keys(value: object) -> set[str]:
        if isinstance(value, dict):
            out = set(value)
            for k, v in value.items():
                if k not in free_maps:
                    out |= keys(v)
            return out
        if isinstance(value, list):
            return set().union(*(keys(v) for v in value)) if value else set()
        return set()

    found: set[str] = set()
    for spec in EXAMPLES:
        result = check_file(spec)
        found |= keys(result.plan_json())
    import re

    prose = re.sub(r"```.*?```", "", doc, flags=re.S)  # fenced blocks are examples
    named = {w for code in re.findall(r"`([^`]+)`", prose) for w in re.findall(r"\w+", code)}
    missing = sorted(found - named)
    assert not missing, f"docs/plan-json.md does not describe {missing}"
