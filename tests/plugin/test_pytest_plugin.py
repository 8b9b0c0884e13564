"""The pytest plugin as a user's project sees it: snapshot a spec's plan and job, run a
trace on the runtime and assert its batches."""

from __future__ import annotations

import shutil

import pytest

from ..conftest import ROOT

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
