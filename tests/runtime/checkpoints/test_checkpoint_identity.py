"""A checkpoint's identity is the SHA-256 of the plan's canonical dump
(compiler/planning/canonical.py),
not of what `sjoin plan` shows: stable from process to process, blind to where statements
stand in the spec, changed by any decision; and a checkpoint made before (whose identity
was the plan JSON's) still resumes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_file, check_text
from sjoin.compiler.planning import canonical
from sjoin.compiler.planning.canonical import canonical_text, dump
from sjoin.runtime import CheckpointError, run
from sjoin.runtime.checkpoints.checkpoint import Checkpoint, fingerprint, legacy_fingerprint

from .test_checkpoint import SPEC, TRACE, split_trace


def test_the_identity_is_the_same_in_another_process() -> None:
    plan = check_file(SPEC).plan
    code = (
        "import sys; from sjoin.api import check_file; "
        "from sjoin.runtime.checkpoints.checkpoint import fingerprint; "
        "print(fingerprint(check_file(sys.argv[1]).plan, 'attributed'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(SPEC)], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == fingerprint(plan, "attributed")
    assert fingerprint(plan, "attributed") != fingerprint(plan, None)


def test_places_in_the_spec_change_nothing_and_decisions_do() -> None:
    text = SPEC.read_text()
    plan = check_text(text).plan
    moved = check_text("-- a comment above the spec\n\n" + text).plan
    assert plan is not None and moved is not None
    assert fingerprint(moved, None) == fingerprint(plan, None)
    changed = check_text(text.replace("delay 2 hours", "delay 3 hours", 1)).plan
    assert changed is not None and "delay 2 hours" in text
    assert fingerprint(changed, None) != fingerprint(plan, None)


def test_the_identity_does_not_read_the_explainer(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = check_file(SPEC).plan
    before = canonical_text(plan)
    import sjoin.compiler.describe.explain as explain

    monkeypatch.setattr(explain, "plan_json", lambda *_: {"shown": "otherwise"})
    monkeypatch.setattr(explain, "plan_text", lambda *_: "shown otherwise")
    assert canonical_text(plan) == before
    again = check_file(SPEC).plan  # a new plan object: nothing cached
    assert fingerprint(again, None) == fingerprint(plan, None)


def test_the_dump_holds_every_field_and_no_span() -> None:
    plan = check_file(SPEC).plan
    data = dump(plan)
    assert data["@"] == "Plan" and data["spark"] == {"@": "SparkVersion", "major": 4, "minor": 0,
                                                      "patch": None}  # fmt: skip
    (join,) = data["nodes"][2:]
    assert join["@"] == "JoinNode"
    assert join["left"]["evicted_rows_skipped"] == "none"
    assert join["analysis"]["name_span"] is None  # a place in the text: no decision
    assert isinstance(join["condition"], str)  # SQL as Spark SQL text


def test_a_value_without_a_stable_form_is_refused() -> None:
    with pytest.raises(TypeError, match="no canonical form for object"):
        dump({"x": object()})
    assert canonical.dump(frozenset({"b", "a"})) == ["a", "b"]


def _saved(checkpoint: Path) -> dict[str, Any]:
    data = Checkpoint(checkpoint).load()
    assert data is not None
    return data


def test_a_checkpoint_of_the_explainer_identity_resumes(tmp_path: Path) -> None:
    """A checkpoint written by sjoin before the canonical dump (its identity: the plan JSON's
    SHA-256) resumes as if it had been written now, and is written on with the new one."""
    plan = check_file(SPEC).plan
    clean = run(plan, TRACE)
    checkpoint = tmp_path / "chk"
    first = run(plan, split_trace(TRACE, tmp_path, 3), checkpoint=checkpoint)
    data = _saved(checkpoint)
    assert data["fingerprint"] == fingerprint(plan, None)
    data["fingerprint"] = legacy_fingerprint(plan, None)
    assert data["fingerprint"] != fingerprint(plan, None)
    Checkpoint(checkpoint).commit(data)
    second = run(plan, TRACE, checkpoint=checkpoint)
    assert first.output_lines() + second.output_lines() == clean.output_lines()
    assert _saved(checkpoint)["fingerprint"] == fingerprint(plan, None)


def test_a_checkpoint_of_another_identity_is_refused_clearly(tmp_path: Path) -> None:
    plan = check_file(SPEC).plan
    checkpoint = tmp_path / "chk"
    run(plan, split_trace(TRACE, tmp_path, 2), checkpoint=checkpoint)
    data = _saved(checkpoint)
    data["fingerprint"] = "0" * 64
    Checkpoint(checkpoint).commit(data)
    with pytest.raises(CheckpointError, match="belongs to another spec or relation; use a new"):
        run(plan, TRACE, checkpoint=checkpoint)
