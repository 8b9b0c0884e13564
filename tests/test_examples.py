"""Every example checks clean, and its bound model and plan JSON are snapshotted."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.compiler.bound import pretty

from .conftest import EXAMPLES


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
    data = check_file(Path(__file__).parents[1] / "examples" / "ad_attribution.sjoin").plan_json()
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
