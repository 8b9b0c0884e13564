"""Every writer of sjoin goes through ``runtime/io/files.py`` (issue 35, items 18, 23, 24).

- A link planted at any path a writer names itself (a file of a `compile --target pipeline`
  project, its ``transformations`` folder, a Delta output table, its ``_delta_log`` or a
  file there, the parser cache, the jars cache) is refused with its path, whether it points
  to a file, a folder or nowhere, and what it points to is left as it was.
- A write that fails (a full disk, ``/dev/full``) is an error naming the file, not E999,
  and a run with a checkpoint resumed after it gives the rows a clean run gives.
- No output is any file a command read: a pipeline's ``sjoin-schemas.sql`` included.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.api import check_file
from sjoin.cli.main import main
from sjoin.runtime import RunError, UnsafeFileError, UsageError, run, run_to_files
from sjoin.runtime.io import files as files_mod
from sjoin.runtime.io.sinks import FileSink

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "ad_attribution.sjoin"
TRACE = ROOT / "examples" / "ad_attribution.trace.jsonl"
RELATION = "attributed"
PIPELINE_SPEC = ROOT / "examples" / "iot_window_join.sjoin"  # Spark 4.1+: compiles to a pipeline


def cli(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stderr


def tree(root: Path) -> dict[str, str]:
    """Every entry under ``root`` (links as their target, files as a digest)."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[rel] = "dir"
    return found


@pytest.fixture
def bait(tmp_path: Path) -> Path:
    """What a planted link points to: a folder holding a file of someone else's."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "victim").write_text("precious\n")
    return elsewhere


def plant(link: Path, bait: Path, kind: str) -> Path:
    """A link at ``link`` to a file, to a folder or to nowhere; returns its target."""
    link.parent.mkdir(parents=True, exist_ok=True)
    target = {"to a file": bait / "victim", "to a folder": bait, "dangling": bait / "new"}[kind]
    link.symlink_to(target)
    return target


KINDS = ["to a file", "to a folder", "dangling"]


# --------------------------------------------------------- compile --target pipeline -o DIR

PIPELINE_PATHS = [
    "spark-pipeline.yml",
    "sjoin-schemas.sql",
    "transformations/pipeline.py",
    "transformations/relation_000.sql",
    "transformations",
]


def test_the_pipeline_project_writes_these_paths(tmp_path: Path) -> None:
    """The paths the link tests plant at are every path the writer writes."""
    code, err = cli("compile", PIPELINE_SPEC, "--target", "pipeline", "-o", tmp_path / "out")
    assert code == 0, err
    written = {str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*")}
    assert written == set(PIPELINE_PATHS)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", PIPELINE_PATHS)
def test_compile_pipeline_never_writes_through_a_link(
    tmp_path: Path, bait: Path, where: str, kind: str
) -> None:
    out = tmp_path / "out"
    link = out / where
    target = plant(link, bait, kind)
    before = tree(bait)
    code, err = cli("compile", PIPELINE_SPEC, "--target", "pipeline", "-o", out)
    assert code == 2, err
    assert f"{link} is a symbolic link inside" in err and "never follows" in err, err
    assert "E999" not in err
    assert tree(bait) == before
    assert link.is_symlink() and os.readlink(link) == str(target)
    # everything is checked before anything is written: no file of the project is there
    assert not [p for p in out.rglob("*") if p.is_file() and not p.is_symlink()]


def test_compile_pipeline_replaces_the_files_of_an_earlier_compile(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("compile", PIPELINE_SPEC, "--target", "pipeline", "-o", out)[0] == 0
    (out / "spark-pipeline.yml").write_text("stale\n")
    (out / "mine.txt").write_text("the user's\n")
    code, err = cli("compile", PIPELINE_SPEC, "--target", "pipeline", "-o", out)
    assert code == 0, err
    assert (out / "spark-pipeline.yml").read_text() != "stale\n"
    assert (out / "mine.txt").read_text() == "the user's\n"
    assert not [p.name for p in out.rglob("*.tmp")]


# --------------------------------------------------------- --output-format delta
# (deltalake is an extra: these tests skip without it)

DELTA_PATHS = [
    RELATION,  # the relation's table folder
    f"{RELATION}/_delta_log",
    f"{RELATION}/_delta_log/00000000000000000000.json",
    f"{RELATION}/_delta_log/_last_checkpoint",
    f"{RELATION}/part-00000-planted-c000.snappy.parquet",
]


def delta_run(out: Path, *extra: object) -> tuple[int, str]:
    return cli("run", SPEC, "--trace", TRACE, "--output-format", "delta", "--output", out, *extra)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", DELTA_PATHS)
def test_a_delta_output_never_writes_through_a_link(
    tmp_path: Path, bait: Path, where: str, kind: str
) -> None:
    pytest.importorskip("deltalake")
    out = tmp_path / "out"
    if where != RELATION:  # a table there already: the link is planted among its files
        assert delta_run(out)[0] == 0
        if (out / where).is_dir():
            shutil.rmtree(out / where)
        (out / where).unlink(missing_ok=True)
    link = out / where
    target = plant(link, bait, kind)
    before = tree(bait)
    code, err = delta_run(out)
    assert code == 1, err
    assert f"{link} is a symbolic link inside" in err and "never follows" in err, err
    assert "E999" not in err
    assert tree(bait) == before
    assert link.is_symlink() and os.readlink(link) == str(target)


@pytest.mark.parametrize("other", ["a Delta table", "an empty folder"])
def test_a_link_to_another_table_or_an_empty_folder_gets_nothing(
    tmp_path: Path, other: str
) -> None:
    """A link at out/REL to another Delta table, or to an empty folder, is refused: the
    table is not overwritten or appended to, the folder gets no table."""
    pytest.importorskip("deltalake")
    elsewhere = tmp_path / "elsewhere"
    if other == "a Delta table":
        assert delta_run(elsewhere)[0] == 0
        elsewhere = elsewhere / RELATION
    else:
        elsewhere.mkdir()
    before = tree(elsewhere)
    out = tmp_path / "out"
    out.mkdir()
    (out / RELATION).symlink_to(elsewhere)
    code, err = delta_run(out)
    assert code == 1 and "is a symbolic link inside" in err, err
    assert tree(elsewhere) == before


# --------------------------------------------------------- caches sjoin keeps


@pytest.mark.parametrize("kind", KINDS)
def test_the_parser_cache_is_never_written_through_a_link(
    tmp_path: Path, bait: Path, kind: str
) -> None:
    from sjoin import grammar

    cache = tmp_path / "cache" / "parser.lark"
    target = plant(cache, bait, kind)
    before = tree(bait)
    grammar.write_cache(grammar.parser(), cache, "k" * 64)  # a failure only costs a build
    assert tree(bait) == before
    assert cache.is_symlink() and os.readlink(cache) == str(target)


@pytest.mark.parametrize("kind", KINDS)
def test_a_cache_file_is_never_written_through_a_link(
    tmp_path: Path, bait: Path, kind: str
) -> None:
    """``files.write_owned``: the jars cache's marker and refusal files."""
    link = tmp_path / "jars" / "spark-kafka-4.3.0.refused"
    plant(link, bait, kind)
    before = tree(bait)
    with pytest.raises(UnsafeFileError, match="is a symbolic link inside"):
        files_mod.write_owned(link, b"x\n", "the jars cache")
    assert tree(bait) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_fetched_jar_folder_never_replaces_through_a_link(
    tmp_path: Path, bait: Path, kind: str
) -> None:
    new = tmp_path / "jars" / ".fetching"
    new.mkdir(parents=True)
    (new / "a.jar").write_bytes(b"jar")
    final = tmp_path / "jars" / "spark-kafka-4.3.0"
    plant(final, bait, kind)
    before = tree(bait)
    with pytest.raises(UnsafeFileError, match="is a symbolic link"):
        files_mod.replace_folder(new, final, "the jars cache")
    assert tree(bait) == before and (new / "a.jar").is_file()


def test_a_linked_folder_on_the_way_to_a_written_file_is_refused(
    tmp_path: Path, bait: Path
) -> None:
    """``files.write_tree``: a link at any folder between the user's directory and a file
    is refused, at any depth."""
    (tmp_path / "out" / "a").mkdir(parents=True)
    (tmp_path / "out" / "a" / "b").symlink_to(bait)
    before = tree(bait)
    with pytest.raises(UnsafeFileError, match="out/a/b is a symbolic link inside"):
        files_mod.write_tree(tmp_path / "out", {"x": b"1", "a/b/c/d.txt": b"2"}, "a test")
    assert tree(bait) == before
    assert not (tmp_path / "out" / "x").exists()  # nothing written before the checks


# --------------------------------------------------------- outputs that fail

needs_dev_full = pytest.mark.skipif(
    not os.path.exists("/dev/full"), reason="no /dev/full on this system"
)


@needs_dev_full
@pytest.mark.parametrize(
    "args",
    [
        ["--output", "/dev/full"],
        ["--output", "{tmp}/o.jsonl", "--late-rows", "/dev/full"],
        ["--output", "{tmp}/o.jsonl", "--progress", "/dev/full"],
        ["--output", "{tmp}/o.jsonl", "--checkpoint", "{tmp}/ck", "--late-rows", "/dev/full"],
    ],
    ids=["--output", "--late-rows", "--progress", "--late-rows with a checkpoint"],
)
def test_a_full_disk_is_an_error_naming_the_file(tmp_path: Path, args: list[str]) -> None:
    code, err = cli("run", SPEC, "--trace", TRACE, *(a.format(tmp=tmp_path) for a in args))
    assert code == 1, err
    assert "cannot write /dev/full: No space left on device" in err, err
    assert "E999" not in err


@needs_dev_full
@pytest.mark.parametrize("command", ["compile", "fmt"])
def test_a_full_disk_under_compile_and_fmt_is_an_error(command: str) -> None:
    extra = ["--to", "sjoin"] if command == "fmt" else []
    code, err = cli(command, SPEC, *extra, "-o", "/dev/full")
    assert code == 2 and "cannot write /dev/full: No space left on device" in err, err
    assert "E999" not in err


def test_a_full_disk_mid_run_leaves_a_checkpoint_a_restart_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills while batch 3's lines are written (ENOSPC from the flush): the run
    stops naming the file; the checkpoint still holds batch 3 as pending, so a restart
    on a disk with room cuts the file back to batch 2's end and gives the clean run's
    lines, none twice, none missing."""
    plan = check_file(SPEC).plan
    clean = run(plan, TRACE).output_lines()
    out, ck = tmp_path / "o.jsonl", tmp_path / "ck"
    syncs = {"n": 0}
    original = FileSink._sync

    def full(self: FileSink) -> None:
        syncs["n"] += 1
        if syncs["n"] == 4:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        original(self)

    monkeypatch.setattr(FileSink, "_sync", full)
    with pytest.raises(RunError, match=f"cannot write {out}: No space left on device"):
        run_to_files(plan, TRACE, output=out, checkpoint=ck)
    monkeypatch.setattr(FileSink, "_sync", original)
    run_to_files(plan, TRACE, output=out, checkpoint=ck)
    assert out.read_text().splitlines() == clean


def test_stdout_full_is_an_error_naming_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "sjoin", "run", str(SPEC), "--trace", str(TRACE)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert "cannot write stdout: No space left on device" in done.stderr
    assert "E999" not in done.stderr


# --------------------------------------------------------- no output is an input


def _pipeline_sql(tmp_path: Path) -> Path:
    """A pipeline's .sql file with sjoin-schemas.sql beside it (which it reads)."""
    project = tmp_path / "project"
    assert cli("compile", PIPELINE_SPEC, "--target", "pipeline", "-o", project)[0] == 0
    work = tmp_path / "w"
    work.mkdir()
    (work / "p.sql").write_bytes((project / "transformations" / "relation_000.sql").read_bytes())
    (work / "sjoin-schemas.sql").write_bytes((project / "sjoin-schemas.sql").read_bytes())
    return work / "p.sql"


@pytest.mark.parametrize("alias", ["itself", "symlink", "hard link", "dotted"])
@pytest.mark.parametrize(
    "command",
    [
        ["fmt", "{spec}", "--to", "sjoin", "-o", "{out}"],
        ["fmt", "{spec}", "--to", "sql", "-o", "{out}"],
        ["compile", "{spec}", "-o", "{out}"],
        [
            "run",
            "{spec}",
            "--trace",
            str(ROOT / "examples" / "iot_window_join.trace.jsonl"),
            "--output",
            "{out}",
        ],
    ],
    ids=["fmt --to sjoin", "fmt --to sql", "compile", "run --output"],
)
def test_no_output_is_a_file_the_pipeline_read(
    tmp_path: Path, command: list[str], alias: str
) -> None:
    spec = _pipeline_sql(tmp_path)
    schemas = spec.parent / "sjoin-schemas.sql"
    before = schemas.read_bytes()
    out = {
        "itself": schemas,
        "symlink": tmp_path / "link.sql",
        "hard link": tmp_path / "hard.sql",
        "dotted": spec.parent / "." / ".." / "w" / "sjoin-schemas.sql",
    }[alias]
    if alias == "symlink":
        out.symlink_to(schemas)
    elif alias == "hard link":
        os.link(schemas, out)
    code, err = cli(*(a.format(spec=spec, out=out) for a in command))
    assert code == 2 and "the pipeline's file" in err and "never writes over" in err, err
    assert schemas.read_bytes() == before


def test_a_pipeline_project_is_not_compiled_over_a_file_it_read(tmp_path: Path) -> None:
    """-o DIR where DIR's sjoin-schemas.sql is the one the .sql file read."""
    spec = _pipeline_sql(tmp_path)
    before = (spec.parent / "sjoin-schemas.sql").read_bytes()
    code, err = cli("compile", spec, "--target", "pipeline", "-o", spec.parent)
    assert code == 2 and "never writes over" in err, err
    assert (spec.parent / "sjoin-schemas.sql").read_bytes() == before
    assert not (spec.parent / "spark-pipeline.yml").exists()


def test_capture_checks_its_output_against_what_it_read(tmp_path: Path) -> None:
    spec = tmp_path / "s.sjoin"
    spec.write_bytes(SPEC.read_bytes())
    code, err = cli("capture", spec, "--from", "kafka://127.0.0.1:9", "-o", spec)
    assert code == 2 and "the spec" in err and "never writes over" in err, err
    assert spec.read_bytes() == SPEC.read_bytes()


def test_the_report_check_names_the_users_path(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "r.html"
    code, err = cli(
        "run", SPEC, "--trace", TRACE, "--output", tmp_path / "o.jsonl", "--report", missing
    )
    assert code == 2 and f"cannot write the report to {missing}" in err, err


def test_json_lines_of_the_written_trace(tmp_path: Path) -> None:
    """``write_trace`` (`sjoin capture`) writes through ``files.open_named``; a folder
    that does not exist is a usage error naming the path."""
    from sjoin.runtime.io.kafka_trace import write_trace
    from sjoin.runtime.io.trace import read_trace, schemas_of

    plan = check_file(SPEC).plan
    trace = read_trace(TRACE, schemas_of(plan))
    out = tmp_path / "t.jsonl"
    lines = out.read_text().splitlines() if write_trace(plan, trace, out) else []
    assert lines and all(json.loads(line)["stream"] for line in lines)
    with pytest.raises(UsageError, match=f"cannot write the trace to {tmp_path}/no/t.jsonl"):
        write_trace(plan, trace, tmp_path / "no" / "t.jsonl")


FULL_STDOUT = [
    ["compile", str(SPEC)],
    ["plan", str(SPEC)],
    ["run", str(SPEC), "--trace", str(TRACE), "--format", "table"],
]


@pytest.mark.parametrize("command", FULL_STDOUT, ids=["compile", "plan", "run --format table"])
def test_any_command_on_a_full_stdout_says_so(command: list[str]) -> None:
    import subprocess
    import sys

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "sjoin", *command],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    assert done.returncode == 1, done.stderr
    assert "cannot write stdout: No space left on device" in done.stderr
    assert "E999" not in done.stderr and "Exception ignored" not in done.stderr


def _enospc(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_under_a_parquet_output_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_mod.Folder, "write", _enospc)
    out = tmp_path / "out"
    code, err = cli("run", SPEC, "--trace", TRACE, "--output-format", "parquet", "--output", out)
    assert code == 1, err
    assert f"cannot write {out / RELATION / 'batch-0000.parquet'}: No space left" in err, err


def test_a_full_disk_under_init_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(self: files_mod.Folder, name: str, payload: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path / name))

    monkeypatch.setattr(files_mod.Folder, "create", full)
    result = CliRunner().invoke(main, ["init", "demo", "--dir", str(tmp_path)])
    assert result.exit_code != 0 and "E999" not in result.stderr, result.stderr
    assert f"cannot write {tmp_path / 'demo.sjoin'}: No space left" in result.stderr
