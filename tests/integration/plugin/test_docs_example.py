"""docs/testing.md's example, as a user copies it (issue 35, item 15): its test file beside the
shipped example (`examples/` copied into `specs/`) passes, and a row that differs fails with
the message the page shows: only the differing batches and rows, values typed as the schema
says."""

from __future__ import annotations

import re
import shutil

import pytest

from ...conftest import ROOT

DOC = ROOT / "docs" / "testing.md"


def blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


def project(pytester: pytest.Pytester) -> str:
    """The doc's test file in a project holding the shipped example in specs/."""
    (pytester.path / "specs").mkdir()
    for name in ("ad_attribution.sjoin", "ad_attribution.trace.jsonl"):
        shutil.copy(ROOT / "examples" / name, pytester.path / "specs" / name)
    (test,) = [b for b in blocks("python") if b.startswith("# tests/test_joins.py")]
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_joins.py").write_text(test, encoding="utf-8")
    return test


# the Spark test of the page runs on a local Spark of its own (sjoin verify): left to the
# suite's Spark tests, so that this one needs no JVM
NO_SPARK = ("-p", "no:cacheprovider", "-m", "not sjoin_spark")


def test_the_docs_example_passes_beside_the_shipped_example(pytester: pytest.Pytester) -> None:
    project(pytester)
    first = pytester.runpytest_subprocess(*NO_SPARK, "--snapshot-update")
    first.assert_outcomes(passed=2, deselected=1)
    pytester.runpytest_subprocess(*NO_SPARK).assert_outcomes(passed=2, deselected=1)


def test_a_differing_row_fails_as_the_docs_show(pytester: pytest.Pytester) -> None:
    test = project(pytester)
    # the page's failure: ad 105's campaign expected as `spring`, and its BIGINT as 105.0
    wrong = test.replace(
        '"ad_id": 105,\n                    "impression_time": "2026-01-01T09:37:00Z",\n'
        '                    "campaign": "brand",',
        '"ad_id": 105.0,\n                    "impression_time": "2026-01-01T09:37:00Z",\n'
        '                    "campaign": "spring",',
    )
    assert wrong != test
    (pytester.path / "tests" / "test_joins.py").write_text(wrong, encoding="utf-8")
    result = pytester.runpytest_subprocess(*NO_SPARK, "-k", "rows")
    result.assert_outcomes(failed=1, deselected=2)
    out = "\n".join(ln for ln in result.stdout.lines if ln.startswith("E "))  # the message
    (shown,) = [b for b in blocks("text") if b.startswith("AssertionError: the rows of")]
    message = [ln[1:].strip() for ln in out.splitlines()]
    assert [line.strip() for line in shown.splitlines()] == message
    assert "105.0" not in out and "101" not in out  # one batch, one row a side, typed
    assert "batch 4" not in out and "batch 0" not in out


def test_the_failure_shows_unlisted_batches_and_decimals_at_their_scale(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "d.sjoin").write_text(
        "stream p (k BIGINT, t TIMESTAMP, amount DECIMAL(10,2)) watermark t delay 1 second\n"
        "stream q (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
        "join j = p INNER JOIN q ON p.k = q.k AND p.t = q.t SELECT p.k, p.amount\n"
    )
    rows = [
        {"batch": b, "stream": s, "row": {"k": k, "t": f"2026-01-01T00:00:0{k}Z", **extra}}
        for b, k in ((0, 1), (1, 2))
        for s, extra in (("p", {"amount": 49.9}), ("q", {}))
    ]
    import json

    (pytester.path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pytester.makepyfile(
        test_d="""
def test_it(sjoin_run):
    run = sjoin_run("d.sjoin", "d.jsonl")
    run.assert_batches({0: [{"k": 1.0, "amount": 49.9}, {"k": 3, "amount": 1}]})
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = "\n".join(ln for ln in result.stdout.lines if ln.startswith("E "))
    assert "the rows of `j` differ in 2 batches (every batch that emits rows is to be" in out
    assert '{"k": 3, "amount": 1.00}' in out  # expected, typed: BIGINT, DECIMAL(10, 2)
    assert '{"k": 2, "amount": 49.90}' in out  # batch 2: emitted, not listed
    assert "batch 2: not listed, emitted 1 row" in out
    assert '"k": 1,' not in out and '"k": 1.0' not in out  # the row that matches is not shown
