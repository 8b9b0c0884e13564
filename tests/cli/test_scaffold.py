"""`sjoin init`: the scaffold checks clean and its generated test goes green, as a new user
would run it."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sjoin.api import check_file
from sjoin.cli.scaffold import ScaffoldError, scaffold

from ..conftest import ROOT


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


@pytest.mark.parametrize(
    "name", ["caf\u00e9", "\uff58", "x\u0663", "1st", "", "a b", "a.b", "`a`", "a\n"]
)
def test_scaffold_names_are_the_specs_plain_identifiers(name: str, tmp_path: Path) -> None:
    """Python's isidentifier takes `café` and a full-width x, which the spec grammar does
    not: the scaffolded spec would not parse.  Nothing is written for such a name."""
    with pytest.raises(ScaffoldError, match="not a valid name"):
        scaffold(name, tmp_path)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["join", "select", "None", "class", "_x9"])
def test_keywords_of_either_language_scaffold_a_valid_spec(name: str, tmp_path: Path) -> None:
    scaffold(name, tmp_path)
    assert check_file(tmp_path / f"{name}.sjoin").ok
    compile((tmp_path / f"test_{name}.py").read_text(), "test.py", "exec")


@pytest.mark.parametrize("name", ["orders", "shipments", "Orders", "SHIPMENTS", "o", "s"])
def test_a_name_the_scaffold_uses_is_refused_or_valid(name: str, tmp_path: Path) -> None:
    """`sjoin init orders` wrote a spec that failed its own check (E002, issue 23): every
    accepted name scaffolds a spec without errors, and a refused one says why and writes
    nothing."""
    try:
        scaffold(name, tmp_path)
    except ScaffoldError as err:
        assert "cannot name the scaffold's join" in str(err) and f"{name}_shipped" in str(err)
        assert not list(tmp_path.iterdir())
        assert name.lower() in ("orders", "shipments")
        return
    assert check_file(tmp_path / f"{name}.sjoin").ok


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True))
@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_accepted_name_scaffolds_a_spec_without_errors(name: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        try:
            scaffold(name, Path(folder))
        except ScaffoldError as err:
            assert "cannot name the scaffold's join" in str(err)
            return
        assert check_file(Path(folder) / f"{name}.sjoin").ok


def test_the_tutorials_widening_edit_keeps_the_rows_test_green(pytester: pytest.Pytester) -> None:
    """The README's edit, taken from its text and applied literally to the scaffold: the
    plan and job snapshots fail, the scaffolded rows test stays green, and after
    `--snapshot-update` everything is green again (issue 16: it was `assert [] == [2]`)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Five minutes", 1)[1].split("\n## ", 1)[0]
    edit = re.search(r"change `([^`]+)` to `([^`]+)`", section)
    assert edit is not None, "the tutorial names its edit"
    before, after = edit.groups()
    scaffold("shipped", pytester.path)
    spec = pytester.path / "shipped.sjoin"
    flags = ("-p", "no:cacheprovider")
    pytester.runpytest_subprocess(*flags, "--snapshot-update").assert_outcomes(passed=2)
    text = spec.read_text()
    assert text.count(before) == 1
    spec.write_text(text.replace(before, after))
    assert check_file(spec).ok
    edited = pytester.runpytest_subprocess(*flags, "-rA")
    edited.assert_outcomes(passed=1, failed=1)
    edited.stdout.fnmatch_lines(["PASSED test_shipped.py::test_shipped_rows"])
    edited.stdout.fnmatch_lines(["FAILED test_shipped.py::test_shipped_plan_and_job*"])
    pytester.runpytest_subprocess(*flags, "--snapshot-update").assert_outcomes(passed=2)
    pytester.runpytest_subprocess(*flags).assert_outcomes(passed=2)


def test_init_says_every_file_and_a_next_step_that_runs_only_the_scaffolds_tests(
    tmp_path: Path,
) -> None:
    """The hint named a bare `pytest`, which from the repo root ran (and re-snapshotted)
    the project's own tests (issue 23): it names the scaffold's test file, and the input
    folder is among the files written."""
    from click.testing import CliRunner

    from sjoin.cli.main import main

    result = CliRunner().invoke(main, ["init", "shipped", "--dir", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"wrote {tmp_path / 'demo' / 'shipped_input'}/" in result.output
    (hint,) = [line for line in lines if line.startswith("next: ")]
    test = str(tmp_path / "demo" / "test_shipped.py")
    assert hint.endswith(f"pytest {test} --snapshot-update; " + hint.rsplit("; ", 1)[1])
    assert hint.rsplit("; ", 1)[1].endswith(f"pytest {test}")
