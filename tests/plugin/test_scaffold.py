"""`sjoin init`: the scaffold checks clean and its generated test goes green, as a new user
would run it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import check_file
from sjoin.scaffold import ScaffoldError, scaffold


def test_scaffold_is_green(pytester: pytest.Pytester) -> None:
    files = scaffold("shipped", pytester.path)
    assert [p.name for p in files] == ["shipped.sjoin", "shipped.trace.jsonl", "test_shipped.py"]
    result = check_file(pytester.path / "shipped.sjoin")
    assert result.ok and not result.diagnostics
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update").assert_outcomes(
        passed=2
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


def test_scaffold_refuses_to_overwrite_and_bad_names(tmp_path: Path) -> None:
    scaffold("orders_shipped", tmp_path)
    with pytest.raises(ScaffoldError, match="overwrite"):
        scaffold("orders_shipped", tmp_path)
    with pytest.raises(ScaffoldError, match="not a valid name"):
        scaffold("my-join", tmp_path)
