"""Every example spec has a realistic trace that runs clean (its rows are also checked
against Spark in test_scenarios.py, as the `example_*` scenarios)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.runtime import run

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.sjoin"))


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_example_trace_runs_clean(spec: Path) -> None:
    trace = spec.with_suffix(".trace.jsonl")
    assert trace.exists(), f"add {trace.name}"
    result = run(check_file(spec).plan, trace)
    assert result.bad_rows == []
    assert [b.batch for b in result.batches] == list(range(len(result.batches)))
    assert any(not b.data for b in result.batches), "a realistic trace advances the watermark"
    for relation in result.relations:
        assert result.rows(relation), f"{relation} emits nothing on its trace"
    assert len({b.watermark for b in result.batches}) > 2
