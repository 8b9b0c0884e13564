"""The pytest plugin as a user's project sees it: snapshot a spec's plan and job, run a
trace on the runtime and assert its batches."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ...conftest import ROOT

USER_TEST = """
def test_plan_and_job(sjoin_snapshot):
    sjoin_snapshot("ad_attribution.sjoin")


def test_trace(sjoin_run):
    run = sjoin_run("ad_attribution.sjoin", "ad_attribution.trace.jsonl", relation="attributed")
    batches = run.batches("attributed")
    assert batches, "the trace emits rows"
    run.assert_batches(batches, relation="attributed")
    first = min(batches)
    with __import__("pytest").raises(AssertionError):
        run.assert_batches({first: []}, relation="attributed")
"""


def test_user_project_snapshots_and_runs(pytester: pytest.Pytester) -> None:
    for name in ("ad_attribution.sjoin", "ad_attribution.trace.jsonl"):
        shutil.copy(ROOT / "examples" / name, pytester.path / name)
    pytester.makepyfile(test_join=USER_TEST)
    first = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update")
    first.assert_outcomes(passed=2)
    snapshots = sorted(p.name for p in pytester.path.rglob("__snapshots__/**/*") if p.is_file())
    assert snapshots == ["test_plan_and_job.json", "test_plan_and_job.py"]
    again = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    again.assert_outcomes(passed=2)
    spec = pytester.path / "ad_attribution.sjoin"
    spec.write_text(spec.read_text().replace("INTERVAL 1 HOUR", "INTERVAL 2 HOURS"))
    changed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    changed.assert_outcomes(passed=1, failed=1)  # the plan changed: the snapshot catches it


def test_a_spec_with_errors_fails_with_its_diagnostics(pytester: pytest.Pytester) -> None:
    (pytester.path / "bad.sjoin").write_text(
        "stream s (a INT, t STRING) watermark t delay 1 second\n"
    )
    pytester.makepyfile(test_bad="def test_it(sjoin_snapshot):\n    sjoin_snapshot('bad.sjoin')\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*error[[]E010[]]*"])


DECIMAL_SPEC = """
stream p (k BIGINT, t TIMESTAMP, amount DECIMAL(10,2)) watermark t delay 1 second
stream q (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = p INNER JOIN q ON p.k = q.k AND p.t = q.t SELECT p.k, p.amount
"""


def test_rows_are_json_ready_and_batches_compare_by_value(tmp_path: Path) -> None:
    """DECIMAL comes back as the JSON number the output line holds; `assert_batches` compares
    numbers by value, lists every batch by default and only the listed ones with only=True."""
    from sjoin.testing import Run

    spec = tmp_path / "d.sjoin"
    spec.write_text(DECIMAL_SPEC)
    trace = [
        {"batch": b, "stream": s, "row": r}
        for b, k in ((0, 1), (1, 2))
        for s, r in (
            ("p", {"k": k, "t": "2026-01-01T00:00:00Z", "amount": 49.99}),
            ("q", {"k": k, "t": "2026-01-01T00:00:00Z"}),
        )
    ]
    from sjoin.api import check_file
    from sjoin.runtime import run as run_plan

    plan = check_file(spec).plan
    assert plan is not None
    result = Run(spec, trace, run_plan(plan, trace))
    assert result.rows("j") == [{"k": 1, "amount": 49.99}, {"k": 2, "amount": 49.99}]
    assert all(type(r["amount"]) is float for r in result.rows())
    batches = result.batches("j")
    assert len(batches) == 2
    first, second = sorted(batches)
    result.assert_batches(
        {first: [{"k": 1, "amount": 49.99}], second: [{"k": 2.0, "amount": 49.99}]}
    )
    with pytest.raises(AssertionError):
        result.assert_batches({first: [{"k": 1, "amount": 49.99}]})  # batch `second` unlisted
    result.assert_batches({first: [{"k": 1, "amount": 49.99}]}, only=True)
    result.assert_batches({first + 1: []}, only=True)  # a batch that emits nothing
    with pytest.raises(AssertionError):
        result.assert_batches({second: []}, only=True)


def test_assert_batches_keys_on_spark_batch_ids_or_trace_batches(tmp_path: Path) -> None:
    """The scaffold's trace: trace batch 1 runs as Spark batch 2, and the unshipped order 2
    comes out in the no-data batch 3 after it; trace batch 2 runs as batch 4 and is followed
    by the no-data batch 5.  `by="trace_batch"` keys on the trace's own values, a no-data
    batch counting for the trace batch it followed."""
    from sjoin.api import check_file
    from sjoin.cli.scaffold import scaffold
    from sjoin.runtime import run as run_plan
    from sjoin.testing import Run

    spec, trace, _ = scaffold("shipped", tmp_path)
    plan = check_file(spec).plan
    assert plan is not None
    result = Run(spec, trace, run_plan(plan, trace))
    shipped = {"order_id": 1, "order_time": "2026-01-01T09:00:00Z", "amount": 25.0}
    shipped |= {"ship_time": "2026-01-01T15:00:00Z", "carrier": "ups"}
    unshipped = {"order_id": 2, "order_time": "2026-01-01T09:30:00Z", "amount": 12.5}
    unshipped |= {"ship_time": None, "carrier": None}
    late = {"order_id": 4, "order_time": "2026-01-09T08:00:00Z", "amount": 8.0}
    late |= {"ship_time": "2026-01-09T09:00:00Z", "carrier": "ups"}
    third = {"order_id": 3, "order_time": "2026-01-02T12:00:00Z", "amount": 40.0}
    third |= {"ship_time": None, "carrier": None}
    result.assert_batches({0: [shipped], 3: [unshipped], 4: [late], 5: [third]})
    by_trace = {0: [shipped], 1: [unshipped], 2: [late, third]}
    result.assert_batches(by_trace, by="trace_batch")
    assert result.batches(by="trace_batch") == by_trace
    result.assert_batches({1: [unshipped]}, by="trace_batch", only=True)
    with pytest.raises(AssertionError, match="differ in 1 trace batch:"):
        result.assert_batches({3: [unshipped]}, by="trace_batch", only=True)
    with pytest.raises(ValueError, match="trace_batch"):
        result.batches(by="spark")  # type: ignore[arg-type]
