"""Every command on a PySpark job (docs/pyspark.md, "Every command on a job"): `run`, `why`,
`diff`, `compile`, `fmt --to sjoin` and `verify` read a job.py as `check` and `plan` do, and
give what they give for its .sjoin twin; `--entry` on each command that reads a spec; a job
read where pyspark cannot be imported."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from sjoin.cli.main import main

pytest.importorskip("pyspark.sql.connect.client.core")

JOBS = Path(__file__).parents[1] / "compiler" / "frontend" / "pyspark" / "jobs"
JOB = JOBS / "guide_inner.py"
TWIN = JOBS / "guide_inner.sjoin"
TWO = JOBS / "two_entries.py"

# guide_inner's streams (language.md §7): a click 20 minutes after its impression joins in
# batch 0; batch 1 moves both watermarks past the first rows, so they are evicted
GUIDE_TRACE = (
    '{"batch": 0, "stream": "impressions", '
    '"row": {"impressionAdId": 1, "impressionTime": "2024-01-01T10:00:00Z"}}\n'
    '{"batch": 0, "stream": "clicks", '
    '"row": {"clickAdId": 1, "clickTime": "2024-01-01T10:20:00Z"}}\n'
    '{"batch": 0, "stream": "clicks", '
    '"row": {"clickAdId": 3, "clickTime": "2024-01-01T10:30:00Z"}}\n'
    '{"batch": 1, "stream": "impressions", '
    '"row": {"impressionAdId": 2, "impressionTime": "2024-01-01T16:00:00Z"}}\n'
    '{"batch": 1, "stream": "clicks", '
    '"row": {"clickAdId": 2, "clickTime": "2024-01-01T16:30:00Z"}}\n'
)
# two_entries' streams: b's row is 30 minutes after a's, outside `build`'s 5-minute range
# (no output in batch 0) and joined by `build_inner` (a.k = b.k alone)
TWO_TRACE = (
    '{"batch": 0, "stream": "a", "row": {"k": "x", "a_time": "2024-01-01T10:00:00Z"}}\n'
    '{"batch": 0, "stream": "b", "row": {"k": "x", "b_time": "2024-01-01T10:30:00Z"}}\n'
)


def invoke(*args: Any) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def guide_trace(tmp_path: Path) -> Path:
    trace = tmp_path / "guide.trace.jsonl"
    trace.write_text(GUIDE_TRACE)
    return trace


@pytest.fixture
def two_trace(tmp_path: Path) -> Path:
    trace = tmp_path / "two.trace.jsonl"
    trace.write_text(TWO_TRACE)
    return trace


# run, why ----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_run_of_a_job_prints_what_its_twin_prints(engine: str, guide_trace: Path) -> None:
    args = ("--trace", guide_trace, "--engine", engine, "--format", "json", "--trace-batches")
    job, twin = invoke("run", JOB, *args), invoke("run", TWIN, *args)
    assert (job.exit_code, twin.exit_code) == (0, 0), job.output
    assert job.stdout == twin.stdout
    assert job.stderr == twin.stderr
    rows = [json.loads(line) for line in job.stdout.splitlines()]
    assert [r["row"]["impressionAdId"] for r in rows] == [1, 2]


@pytest.mark.parametrize(
    "row",
    [
        ("1",),
        ("clicks: clickAdId = 3",),
        ("1", "--with", "2"),
        ("4", "--with", "5", "--format", "json"),
    ],
    ids=["line", "condition", "pair", "pair-json"],
)
def test_why_of_a_job_tells_what_it_tells_of_its_twin(
    row: tuple[str, ...], guide_trace: Path
) -> None:
    job = invoke("why", JOB, "--trace", guide_trace, *row)
    twin = invoke("why", TWIN, "--trace", guide_trace, *row)
    assert (job.exit_code, twin.exit_code) == (0, 0), job.output
    assert job.stdout == twin.stdout
    assert job.stdout.strip()


# diff --------------------------------------------------------------------------------------

SAME = "OLD and NEW are the same pipeline: every query, operator and setting plans alike"


def test_diff_of_a_job_and_its_twin_is_the_same_pipeline() -> None:
    found = invoke("diff", JOB, TWIN)
    assert found.exit_code == 0, found.output
    assert found.stdout.splitlines()[0] == SAME
    assert "operator 0 (join joined): resumes" in found.stdout


def test_diff_of_two_jobs(tmp_path: Path) -> None:
    copy = tmp_path / "copy.py"
    copy.write_text(JOB.read_text())
    same = invoke("diff", JOB, copy)
    assert same.exit_code == 0, same.output
    assert same.stdout.splitlines()[0] == SAME
    changed = tmp_path / "changed.py"
    text = JOB.read_text()
    assert text.count('"2 hours"') == 1
    changed.write_text(text.replace('"2 hours"', '"30 minutes"'))
    differs = invoke("diff", JOB, changed)
    assert differs.exit_code == 1, differs.output
    assert SAME not in differs.stdout
    assert "operator 0 (join joined): resumes but behaves differently" in differs.stdout
    assert "watermark delay changes from 2 hours to 30 minutes" in differs.stdout
    as_json = invoke("diff", JOB, changed, "--format", "json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)


# compile, fmt --to sjoin -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["guide_inner", "guide_left_outer", "windowed_revenue"])
def test_compile_of_a_job_is_its_twins_job(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # relative names: the header shortens a long path (" ..."), which a checkout's own path
    # would make one differ from the other by more than the name
    monkeypatch.chdir(JOBS)
    job, twin = Path(f"{name}.py"), Path(f"{name}.sjoin")
    found, expected = invoke("compile", job), invoke("compile", twin)
    assert (found.exit_code, expected.exit_code) == (0, 0), found.output
    # the source's name, in the header and in the job's own message, is the one difference
    assert found.stdout.replace(job.as_posix(), "SOURCE") == expected.stdout.replace(
        twin.as_posix(), "SOURCE"
    )
    assert job.as_posix() in found.stdout


def test_compile_of_a_job_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "job_out.py"
    found = invoke("compile", JOB, "-o", out)
    assert found.exit_code == 0, found.output
    assert f"{out}: PySpark job for {JOB}" in found.stderr
    assert out.read_text() == invoke("compile", JOB).stdout


def test_fmt_to_sjoin_of_a_job_plans_as_the_job(tmp_path: Path) -> None:
    spec = tmp_path / "guide.sjoin"
    written = invoke("fmt", JOB, "--to", "sjoin", "-o", spec)
    assert written.exit_code == 0, written.output
    assert f"{spec}: .sjoin spec of {JOB}" in written.stderr
    text = spec.read_text()
    assert text.startswith("-- converted by `sjoin fmt --to sjoin` from ")
    assert "join joined = impressions INNER JOIN clicks" in text
    found = invoke("diff", JOB, spec)
    assert found.exit_code == 0, found.output
    assert found.stdout.splitlines()[0] == SAME
    assert invoke("check", spec).exit_code == 0


# verify on Spark ---------------------------------------------------------------------------


@pytest.mark.spark
def test_verify_a_job_on_spark(spark: Any, guide_trace: Path) -> None:
    found = invoke("verify", JOB, "--trace", guide_trace, "--format", "json")
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["agree"] is True
    assert "generates" not in found.stderr  # the job as written ran


@pytest.mark.spark
def test_verify_generated_runs_the_jobs_plan_and_says_so(spark: Any, guide_trace: Path) -> None:
    found = invoke("verify", JOB, "--trace", guide_trace, "--generated")
    assert found.exit_code == 0, found.output
    assert f"Spark runs the job sjoin generates from {JOB.name}'s plan" in found.stderr


@pytest.mark.spark
def test_an_inner_join_in_update_mode_emits_append_s_rows_on_spark(
    spark: Any, guide_trace: Path
) -> None:
    """update_inner_join.py is guide_inner.py with `outputMode("update")`: Spark 4.3 runs the
    generated job in Update mode and agrees with the runtime, whose rows are Append's."""
    update = JOBS / "update_inner_join.py"
    found = invoke("verify", update, "--trace", guide_trace, "--format", "json")
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["agree"] is True
    rows = [invoke("run", job, "--trace", guide_trace, "--format", "json") for job in (update, JOB)]
    assert rows[0].exit_code == rows[1].exit_code == 0
    # the same rows, but for the relation's name (`matched`, guide_inner's `joined`)
    assert rows[0].stdout.replace('"matched"', '"joined"') == rows[1].stdout


# --entry on every command that reads a spec -------------------------------------------------

# each command that reads a spec, with TWO (the job) and its other arguments ("{trace}": a
# trace of TWO's streams; "{out}": a file under tmp_path)
READERS: dict[str, tuple[str, ...]] = {
    "check": ("check", "{spec}"),
    "plan": ("plan", "{spec}", "--format", "json"),
    "run": ("run", "{spec}", "--trace", "{trace}", "--format", "json"),
    "why": ("why", "{spec}", "--trace", "{trace}", "1"),
    "diff": ("diff", "{spec}", "{spec}"),
    "diff --spark": ("diff", "{spec}", "--spark", "3.5", "--to", "4.0"),
    "compile": ("compile", "{spec}"),
    "fmt": ("fmt", "{spec}", "--to", "sjoin"),
    "verify": ("verify", "{spec}", "--trace", "{trace}"),
    "capture": ("capture", "{spec}", "--from", "kafka://127.0.0.1:9", "-o", "{out}"),
    "produce": ("produce", "{spec}", "--trace", "{trace}", "--to", "kafka://127.0.0.1:9"),
    "jars": ("jars", "{spec}"),
}
# the commands that need neither Spark nor a broker once the spec is read
RUN_HERE = ["check", "plan", "run", "why", "diff", "diff --spark", "compile", "fmt", "jars"]


def _args(command: str, spec: Path, trace: Path, tmp_path: Path, *extra: str) -> list[str]:
    named = {"spec": str(spec), "trace": str(trace), "out": str(tmp_path / "out.jsonl")}
    return [a.format(**named) for a in READERS[command]] + list(extra)


@pytest.mark.parametrize("command", RUN_HERE)
def test_entry_names_the_function_on_every_command(
    command: str, two_trace: Path, tmp_path: Path
) -> None:
    found = invoke(*_args(command, TWO, two_trace, tmp_path, "--entry", "build_inner"))
    # (3.5 and 4.0 differ: ANSI mode's default)
    assert found.exit_code == (1 if command == "diff --spark" else 0), found.output
    assert "E042" not in found.output
    if command == "plan":
        assert [j["join_type"] for j in json.loads(found.stdout)["joins"]] == ["inner"]
    if command == "run":  # `build`'s join outputs nothing in batch 0 (its time range is false)
        rows = [json.loads(line) for line in found.stdout.splitlines()]
        assert [(r["batch"], r["row"]["b_time"]) for r in rows] == [(0, "2024-01-01T10:30:00Z")]
    if command == "why":
        assert "matched right row line 2" in found.stdout
    if command == "fmt":
        assert "INNER JOIN" in found.stdout


def test_fmt_of_a_job_names_its_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(JOBS)
    found = invoke("fmt", "two_entries.py", "--to", "sjoin", "--entry", "build_inner")
    assert found.exit_code == 0, found.output
    assert found.stdout.startswith(
        "-- converted by `sjoin fmt --to sjoin` from two_entries.py --entry build_inner\n"
    )


def test_entry_on_run_is_the_functions_output(two_trace: Path, tmp_path: Path) -> None:
    """Without --entry, `build` (the default) runs: no row in batch 0."""
    found = invoke(*_args("run", TWO, two_trace, tmp_path))
    assert found.exit_code == 0, found.output
    assert all(json.loads(line)["batch"] != 0 for line in found.stdout.splitlines())


@pytest.mark.parametrize("command", list(READERS))
def test_an_entry_the_job_lacks_is_e042_and_exit_2(
    command: str, two_trace: Path, tmp_path: Path
) -> None:
    found = invoke(*_args(command, TWO, two_trace, tmp_path, "--entry", "nope"))
    assert found.exit_code == 2, found.output
    message = "two_entries.py defines no function `nope` at its top level"
    if command == "plan":  # (--format json)
        [d] = json.loads(found.stdout)["diagnostics"]
        assert (d["code"], d["message"]) == ("E042", message)
    else:
        assert f"error[E042]: {message}" in found.stderr
        assert "= help: give --entry a function the job defines at its top level" in found.stderr
    assert "Traceback" not in found.output


@pytest.mark.parametrize("command", list(READERS))
def test_entry_with_a_spec_is_a_usage_error(
    command: str, guide_trace: Path, tmp_path: Path
) -> None:
    found = invoke(*_args(command, TWIN, guide_trace, tmp_path, "--entry", "build"))
    assert found.exit_code == 2, found.output
    assert "Error: --entry goes with a PySpark job (a .py file), and " in found.stderr
    assert ("is not one" if command != "diff" else "are not") in found.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_entry_is_every_job_s_beside_a_spec() -> None:
    """With a job and a spec, --entry is the job's; the spec is read as it is."""
    found = invoke("diff", TWO, TWIN, "--entry", "build_inner")
    assert found.exit_code == 1, found.output  # another pipeline: it differs
    assert "--entry goes with" not in found.output
    checked = invoke("check", TWO, TWIN, "--entry", "build_inner")
    assert checked.exit_code == 0, checked.output


def test_diff_compares_two_entries_of_one_job() -> None:
    """`--entry` twice with OLD NEW: OLD's function, then NEW's."""
    found = invoke("diff", TWO, TWO, "--entry", "build", "--entry", "build_inner")
    assert found.exit_code == 1, found.output
    assert "E042" not in found.output
    assert SAME not in found.stdout
    same = invoke("diff", TWO, TWO, "--entry", "build_inner", "--entry", "build_inner")
    assert same.exit_code == 0, same.output
    assert same.stdout.splitlines()[0] == SAME


@pytest.mark.parametrize(
    "args",
    [
        (TWO, TWO, "--entry", "build", "--entry", "build", "--entry", "build"),
        (TWO, "--spark", "3.5", "--to", "4.0", "--entry", "build", "--entry", "build"),
        (TWO, TWIN, "--entry", "build", "--entry", "build"),
    ],
    ids=["three", "two-for-one", "two-with-a-spec"],
)
def test_diff_entries_that_do_not_fit_are_usage_errors(args: tuple[Any, ...]) -> None:
    found = invoke("diff", *args)
    assert found.exit_code == 2, found.output
    assert "Error: --entry " in found.stderr


# without pyspark -----------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["check", "run", "compile"])
def test_a_job_without_pyspark_is_e042_saying_what_to_install(
    command: str, guide_trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child imports a pyspark that fails (a PYTHONPATH folder ahead of the real one):
    E042 at the job's start, saying to install sjoin[spark], exit 2."""
    hidden = tmp_path / "hidden"
    (hidden / "pyspark").mkdir(parents=True)
    (hidden / "pyspark" / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'pyspark\'", name="pyspark")\n'
    )
    paths = [str(hidden), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    args = {"check": (), "run": ("--trace", guide_trace), "compile": ()}[command]
    found = invoke(command, JOB, *args)
    assert found.exit_code == 2, found.output
    assert found.stdout == ""
    assert (
        f"{JOB}:1:1: error[E042]: reading a PySpark job needs pyspark 4 with its Spark Connect "
        "client, which this Python cannot import (ModuleNotFoundError: No module named "
        "'pyspark'): install `sjoin[spark]`"
    ) in found.stderr
    assert "-m pip install 'sjoin[spark]'" in found.stderr
    as_json = invoke("check", JOB, "--format", "json")
    [d] = json.loads(as_json.stdout)["diagnostics"]
    assert (d["code"], d["line"], d["col"]) == ("E042", 1, 1)
    assert "install `sjoin[spark]`" in d["message"]


def test_a_job_without_the_connect_client_s_packages_is_e042_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyspark without its `connect` extra (grpcio missing: the Connect client refuses to
    load) is the same E042: sjoin[spark] installs pyspark[connect]."""
    hidden = tmp_path / "hidden"
    (hidden / "grpc").mkdir(parents=True)
    (hidden / "grpc" / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'grpc\'", name="grpc")\n'
    )
    paths = [str(hidden), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    found = invoke("plan", JOB)
    assert found.exit_code == 2, found.output
    assert "error[E042]: reading a PySpark job needs pyspark 4 with its Spark Connect" in (
        found.stderr
    )
    assert "grpcio" in found.stderr
    assert "install `sjoin[spark]`" in found.stderr
