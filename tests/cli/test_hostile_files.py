"""Hostile files around `sjoin run` (issue 24): every file sjoin writes, against every attack.

- A symbolic link planted inside a folder sjoin owns (a Parquet output's relation folders,
  the checkpoint directory) is never followed, written, read or deleted through: the run is
  refused with the link's path, and what the link points to is left as it was.
- A file sjoin reads back that is a FIFO, a directory or a link to ``/dev/zero`` is refused,
  without hanging or reading forever.
- The paths the user names are followed (the policy of a shell redirection), but no output
  may be an input (the spec, the trace), another output or inside the checkpoint: refused
  before anything is written, however the path is spelled (a link, a hard link, ``./``).
- ``--bad-rows Skip`` is refused with the fix, not taken for a file name.
- A second run on a checkpoint in use is refused.
- A Parquet trace resumes from a checkpoint; a Parquet output reads back as a trace, for
  any relation name.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from sjoin.api import check_file, check_text
from sjoin.cli.main import main
from sjoin.runtime import CheckpointError, UsageError, run, run_to_files
from sjoin.runtime.checkpoints.checkpoint import PAUSE_ENV, Checkpoint
from sjoin.runtime.columnar import parquet_out
from sjoin.runtime.columnar.trace import read_parquet_trace
from sjoin.runtime.engine.values import format_timestamp, parse_timestamp
from sjoin.runtime.io.files import folder_name
from sjoin.runtime.io.trace import schemas_of

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "ad_attribution.sjoin"
TRACE = ROOT / "examples" / "ad_attribution.trace.jsonl"
RELATION = "attributed"  # the example's join: its Parquet folder


def cli(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stderr


def run_args(*extra: object, trace: Path = TRACE) -> list[object]:
    return ["run", SPEC, "--trace", trace, *extra]


def head(batches: int, tmp_path: Path) -> Path:
    lines = [x for x in TRACE.read_text().splitlines() if json.loads(x)["batch"] < batches]
    out = tmp_path / "head.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


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
    """What a planted link points to: a folder with a file of someone else's."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "victim").write_text("precious\n")
    (elsewhere / "batch-0099.parquet").write_text("not sjoin's\n")
    return elsewhere


# --------------------------------------------------------- links inside folders sjoin owns

# (name, where the link goes under tmp_path, extra options, the link targets a folder)
OWNED: list[tuple[str, str, list[str], bool]] = [
    ("a relation's Parquet folder", f"out/{RELATION}", ["--output-format", "parquet"], True),
    (
        "a batch file a new run deletes",
        f"out/{RELATION}/batch-0001.parquet",
        ["--output-format", "parquet"],
        False,
    ),
    ("the checkpoint's state", "ck/state.pkl", ["--checkpoint", "ck"], False),
    ("the checkpoint's trace record", "ck/trace.jsonl", ["--checkpoint", "ck"], False),
    ("the checkpoint's lock", "ck/lock", ["--checkpoint", "ck"], False),
    ("the checkpoint's delivery marker", "ck/delivered", ["--checkpoint", "ck", "-"], False),
]


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
@pytest.mark.parametrize(("what", "where", "options", "folder"), OWNED, ids=[o[0] for o in OWNED])
def test_a_link_inside_a_folder_sjoin_owns_is_refused(
    tmp_path: Path,
    bait: Path,
    what: str,
    where: str,
    options: list[str],
    folder: bool,
    dangling: bool,
) -> None:
    link = tmp_path / where
    link.parent.mkdir(parents=True, exist_ok=True)
    target = bait if folder else bait / "victim"
    if dangling:
        target = bait / "new"
    link.symlink_to(target)
    before = tree(bait)
    args = [o if o not in ("out", "ck") else tmp_path / o for o in options if o != "-"]
    if "--output-format" in args:
        args += ["--output", tmp_path / "out"]
    elif "-" not in options:
        args += ["--output", tmp_path / "o.jsonl"]
    code, err = cli(*run_args(*args))
    assert code == 1, err
    assert f"{link} is a symbolic link inside" in err and "never follows" in err, err
    assert "E999" not in err
    assert tree(bait) == before  # nothing written, read into, or deleted there
    assert link.is_symlink() and os.readlink(link) == str(target)


@pytest.mark.parametrize(("what", "where", "options", "folder"), OWNED, ids=[o[0] for o in OWNED])
def test_a_link_of_the_other_kind_inside_a_folder_sjoin_owns_is_refused(
    tmp_path: Path, bait: Path, what: str, where: str, options: list[str], folder: bool
) -> None:
    """The same paths, each with a link of the other kind: to a folder where sjoin keeps a
    file, to a file where it keeps a folder (issue 35, item 18)."""
    link = tmp_path / where
    link.parent.mkdir(parents=True, exist_ok=True)
    target = bait / "victim" if folder else bait
    link.symlink_to(target)
    before = tree(bait)
    args = [o if o not in ("out", "ck") else tmp_path / o for o in options if o != "-"]
    if "--output-format" in args:
        args += ["--output", tmp_path / "out"]
    elif "-" not in options:
        args += ["--output", tmp_path / "o.jsonl"]
    code, err = cli(*run_args(*args))
    assert code == 1, err
    assert f"{link} is a symbolic link inside" in err and "never follows" in err, err
    assert tree(bait) == before
    assert link.is_symlink() and os.readlink(link) == str(target)


def test_a_link_planted_where_a_restart_writes_is_refused(tmp_path: Path, bait: Path) -> None:
    """A restart rewrites the pending batch's files and writes new ones: a link at any of
    their names is refused, not written through."""
    out, ck = tmp_path / "out", tmp_path / "ck"
    args = ["--output-format", "parquet", "--output", out, "--checkpoint", ck]
    assert cli(*run_args(*args, trace=head(3, tmp_path)))[0] == 0
    folder = out / RELATION
    for n in range(40):
        path = folder / f"batch-{n:04d}.parquet"
        if path.exists():
            path.unlink()
        path.symlink_to(bait / "victim")
    before = tree(bait)
    code, err = cli(*run_args(*args))
    assert code == 1 and "is a symbolic link inside" in err, err
    assert tree(bait) == before


@pytest.mark.parametrize(
    "planted",
    [f"out/{RELATION}/.batch-0000.parquet.tmp", "ck/state.pkl.tmp", "ck/.state.pkl.tmp"],
)
def test_temporary_files_have_names_nobody_can_plant(
    tmp_path: Path, bait: Path, planted: str
) -> None:
    """Files are written under new, unpredictable names (created exclusively): a link at the
    temporary names older versions used is left alone, and the run goes on."""
    link = tmp_path / planted
    link.parent.mkdir(parents=True)
    link.symlink_to(bait / "victim")
    before = tree(bait)
    code, err = cli(
        *run_args(
            "--output-format",
            "parquet",
            "--output",
            tmp_path / "out",
            "--checkpoint",
            tmp_path / "ck",
        )
    )
    assert code == 0, err
    assert tree(bait) == before and link.is_symlink()
    leftovers = [p.name for p in (tmp_path / "ck").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == [link.name] if planted.startswith("ck") else leftovers == []


# --------------------------------------------------------- files read back: regular only


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _folder(path: Path) -> None:
    path.mkdir()


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize("make", [_fifo, _folder, _dev_zero], ids=["FIFO", "folder", "/dev/zero"])
@pytest.mark.parametrize("name", ["state.pkl", "trace.jsonl", "delivered", "lock"])
def test_a_checkpoint_file_that_is_not_a_regular_file_is_refused_at_once(
    tmp_path: Path, name: str, make: Callable[[Path], None]
) -> None:
    """In a child process with a time limit: a FIFO must not hang the run, nor /dev/zero
    feed it forever."""
    ck = tmp_path / "ck"
    ck.mkdir()
    make(ck / name)
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "sjoin.cli.main",
            "run",
            str(SPEC),
            "--trace",
            str(TRACE),
            "--checkpoint",
            str(ck),
        ],
        capture_output=True,
        timeout=120,
        text=True,
    )
    assert process.returncode == 1, process.stderr
    err = process.stderr
    assert str(ck / name) in err and "E999" not in err, err
    assert ("symbolic link" in err) if make is _dev_zero else ("regular file" in err), err


# --------------------------------------------------------- the user's own paths


def test_the_paths_the_user_names_are_followed(tmp_path: Path) -> None:
    """``--output link`` is the user's choice: written where the link points, as a shell
    redirection would; so are --progress, a Parquet --output and --checkpoint."""
    real = tmp_path / "real"
    real.mkdir()
    for name in ("o.jsonl", "p.jsonl"):
        (tmp_path / name).symlink_to(real / name)
    (tmp_path / "pq").symlink_to(real, target_is_directory=True)
    (real / "ck").mkdir()
    (tmp_path / "ck").symlink_to(real / "ck", target_is_directory=True)
    clean = run(check_file(SPEC).plan, TRACE).output_lines()
    args = ["--output", tmp_path / "o.jsonl", "--progress", tmp_path / "p.jsonl"]
    code, err = cli(*run_args(*args, "--checkpoint", tmp_path / "ck"))
    assert code == 0, err
    assert (real / "o.jsonl").read_text().splitlines() == clean
    assert (real / "p.jsonl").read_text() and (real / "ck" / "state.pkl").is_file()
    code, err = cli(*run_args("--output-format", "parquet", "--output", tmp_path / "pq"))
    assert code == 0, err
    assert sorted(p.name for p in (real / RELATION).iterdir())[0] == "batch-0000.parquet"


def test_a_report_through_a_dangling_link_is_written_where_it_points(tmp_path: Path) -> None:
    """The check made before the run leaves no stray file and keeps the link."""
    target = tmp_path / "elsewhere" / "report.html"
    target.parent.mkdir()
    link = tmp_path / "report.html"
    link.symlink_to(target)
    code, err = cli(*run_args("--report", link, "--output", tmp_path / "o.jsonl"))
    assert code == 0, err
    assert link.is_symlink() and target.read_text().startswith("<!DOCTYPE html>")


def test_init_never_writes_through_a_link(tmp_path: Path, bait: Path) -> None:
    """`sjoin init` makes each file anew: a link at one of its names (even dangling) or at
    the input folder it makes is refused, and nothing is written where it points."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "shop_input").symlink_to(bait, target_is_directory=True)
    before = tree(bait)
    code, err = cli("init", "shop", "--dir", work)
    assert code == 2 and "shop_input is a symbolic link" in err, err
    assert tree(bait) == before
    assert [p.name for p in work.iterdir()] == ["shop_input"]  # no file half made
    (work / "shop_input").unlink()
    (work / "shop.sjoin").symlink_to(bait / "new.sjoin")
    code, err = cli("init", "shop", "--dir", work)
    assert code == 2 and "refusing to overwrite" in err and "shop.sjoin" in err, err
    assert tree(bait) == before
    (work / "shop.sjoin").unlink()
    code, err = cli("init", "shop", "--dir", work)
    assert code == 0, err
    assert (work / "shop_input" / "orders" / "batch-0.json").is_file()


# --------------------------------------------------------- outputs against inputs

OUTPUTS = {
    "--output": ["--output", "{}"],
    "--output (parquet)": ["--output-format", "parquet", "--output", "{}"],
    "--progress": ["--progress", "{}"],
    "--bad-rows": ["--bad-rows", "{}"],
    "--report": ["--report", "{}"],
}


def _aliases(path: Path, tmp_path: Path) -> dict[str, Path]:
    """Spellings of one file: itself, ``dir/../name``, a link to it, a hard link."""
    link = tmp_path / f"link-to-{path.name}"
    if not link.exists():
        link.symlink_to(path)
    hard = tmp_path / f"hard-{path.name}"
    if not hard.exists():
        os.link(path, hard)
    return {
        "itself": path,
        "dotted": path.parent / "." / ".." / path.parent.name / path.name,
        "symlink": link,
        "hard link": hard,
    }


@pytest.mark.parametrize("alias", ["itself", "dotted", "symlink", "hard link"])
@pytest.mark.parametrize("input_", ["the spec", "--trace"])
@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_no_output_may_be_an_input(tmp_path: Path, output: str, input_: str, alias: str) -> None:
    spec, trace = tmp_path / "spec.sjoin", tmp_path / "trace.jsonl"
    spec.write_bytes(SPEC.read_bytes())
    trace.write_bytes(TRACE.read_bytes() + b"not json\n")  # one bad row: --bad-rows writes
    victim = spec if input_ == "the spec" else trace
    target = _aliases(victim, tmp_path)[alias]
    before = {p: p.read_bytes() for p in (spec, trace)}
    args = [a.format(target) for a in OUTPUTS[output]]
    if output != "--bad-rows":
        args += ["--bad-rows", "skip"]
    code, err = cli("run", spec, "--trace", trace, *args)
    assert code == 2, err
    assert f"{output.split()[0]} {target}" in err and input_ in err, err
    assert "never writes over what it reads" in err
    assert {p: p.read_bytes() for p in (spec, trace)} == before


def test_no_output_may_be_a_parquet_trace_or_inside_it(tmp_path: Path) -> None:
    trace = _parquet_trace(tmp_path / "pq", TRACE)
    before = tree(trace)
    inside = trace / folder_name("clicks") / "x.jsonl"
    for args in (
        ["--output-format", "parquet", "--output", trace],
        ["--output", inside],
        ["--progress", inside],
        ["--checkpoint", trace],
        ["--checkpoint", trace / "ck"],
    ):
        code, err = cli(*run_args(*args, trace=trace))
        assert code == 2 and "--trace" in err and "E999" not in err, (args, err)
    assert tree(trace) == before


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("--output", "--progress"),
        ("--output", "--bad-rows"),
        ("--progress", "--bad-rows"),
        ("--report", "--output"),
        ("--report", "--progress"),
        ("--report", "--bad-rows"),
    ],
)
def test_two_outputs_may_not_share_a_file(tmp_path: Path, first: str, second: str) -> None:
    path = tmp_path / "same.txt"
    code, err = cli(*run_args(first, path, second, tmp_path / "." / "same.txt"))
    assert code == 2 and "cannot take both" in err and first in err and second in err, err
    assert not path.exists()


@pytest.mark.parametrize("option", ["--output", "--progress", "--bad-rows", "--report"])
def test_no_output_may_be_inside_the_checkpoint(tmp_path: Path, option: str) -> None:
    ck = tmp_path / "ck"
    code, err = cli(*run_args("--checkpoint", ck, option, ck / "state.pkl"))
    assert code == 2 and f"is inside --checkpoint {ck}" in err, err
    assert not ck.exists()


def test_the_checkpoint_may_not_be_a_parquet_output_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, err = cli(
        *run_args("--output-format", "parquet", "--output", out, "--checkpoint", out / RELATION)
    )
    assert code == 2 and "cannot take both" in err, err


def test_devices_may_be_named_by_several_outputs(tmp_path: Path) -> None:
    code, err = cli(*run_args("--output", "/dev/null", "--progress", "/dev/null"))
    assert code == 0, err


def test_compile_does_not_write_over_its_spec(tmp_path: Path) -> None:
    spec = tmp_path / "spec.sjoin"
    spec.write_bytes(SPEC.read_bytes())
    for target in _aliases(spec, tmp_path).values():
        code, err = cli("compile", spec, "-o", target)
        assert code == 2 and "the spec" in err, err
        assert spec.read_bytes() == SPEC.read_bytes()


# --------------------------------------------------------- --bad-rows keywords


@pytest.mark.parametrize("value", ["Skip", "SKIP", "Stop", "STOP", " skip", "skip "])
def test_a_keyword_in_another_case_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.chdir(tmp_path)
    code, err = cli(*run_args("--bad-rows", value))
    assert code == 2, err
    assert f"did you mean {value.strip().lower()}?" in err and f"./{value.strip()}" in err, err
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(UsageError, match="did you mean"):
        run(check_file(SPEC).plan, TRACE, bad_rows=value)


def test_dot_slash_names_a_file_called_like_a_keyword(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(TRACE.read_bytes() + b"not json\n")
    code, err = cli(*run_args("--bad-rows", "./Skip", "--output", "o.jsonl", trace=trace))
    assert code == 0, err
    assert json.loads((tmp_path / "Skip").read_text())["line"] == 52
    code, err = cli(*run_args("--bad-rows", "", trace=trace))
    assert code == 2 and "not an empty name" in err, err


# --------------------------------------------------------- one run per checkpoint


def test_a_second_run_on_a_checkpoint_in_use_is_refused(tmp_path: Path) -> None:
    ck = tmp_path / "ck"
    with Checkpoint(ck):
        code, err = cli(*run_args("--checkpoint", ck, "--output", tmp_path / "o.jsonl"))
        assert code == 1 and f"another sjoin run is using the checkpoint directory {ck}" in err
        with pytest.raises(CheckpointError, match="another sjoin run"):
            run(check_file(SPEC).plan, TRACE, checkpoint=ck)
    assert not (tmp_path / "o.jsonl").exists()
    code, err = cli(*run_args("--checkpoint", ck, "--output", tmp_path / "o.jsonl"))
    assert code == 0, err


def test_a_second_process_is_refused_while_the_first_runs(tmp_path: Path) -> None:
    ck, out = tmp_path / "ck", tmp_path / "o.jsonl"
    env = {**os.environ, PAUSE_ENV: "2:committed"}
    args = ["--checkpoint", str(ck), "--output", str(out)]
    first = subprocess.Popen(
        [sys.executable, "-m", "sjoin.cli.main", "run", str(SPEC), "--trace", str(TRACE), *args],
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert first.stderr is not None
        assert "paused after step 2" in first.stderr.readline().decode()
        code, err = cli(*run_args(*args))
        assert code == 1 and f"(process {first.pid})" in err, err
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        if first.stderr is not None:
            first.stderr.close()
    code, err = cli(*run_args(*args))  # the killed run's lock went with it
    assert code == 0, err
    assert out.read_text().splitlines() == run(check_file(SPEC).plan, TRACE).output_lines()


# --------------------------------------------------------- Parquet traces and outputs


def _parquet_trace(root: Path, jsonl: Path, batches: int | None = None) -> Path:
    """The JSON-lines trace of the example as a Parquet trace (first ``batches``)."""
    plan = check_file(SPEC).plan
    rows: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for line in jsonl.read_text().splitlines():
        record = json.loads(line)
        if batches is None or record["batch"] < batches:
            rows.setdefault((record["batch"], record["stream"]), []).append(record["row"])
    for (batch, stream), values in rows.items():
        node = plan.node(stream)
        columns = {}
        for c in node.columns:  # type: ignore[union-attr]
            cells = [v[c.name] for v in values]
            if c.type.name == "timestamp":
                micros = [None if x is None else parse_timestamp(x) for x in cells]
                columns[c.name] = pl.Series(micros, dtype=pl.Int64).cast(pl.Datetime("us", "UTC"))
            else:
                columns[c.name] = pl.Series(
                    cells, dtype={"bigint": pl.Int64}.get(c.type.name, pl.String)
                )
        frame = pl.DataFrame(columns)
        folder = root / folder_name(stream)
        folder.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(folder / f"batch-{batch:04d}.parquet")
    return root


def test_a_parquet_trace_resumes_from_a_checkpoint(tmp_path: Path) -> None:
    plan = check_file(SPEC).plan
    clean = run(plan, TRACE).output_lines()
    first_part = _parquet_trace(tmp_path / "head", TRACE, batches=3)
    whole = _parquet_trace(tmp_path / "whole", TRACE)
    ck = tmp_path / "ck"
    first = run(plan, first_part, checkpoint=ck)
    second = run(plan, whole, checkpoint=ck)
    assert first.output_lines() + second.output_lines() == clean
    assert [json.loads(x)["line"] for x in (ck / "trace.jsonl").read_text().splitlines()] == [
        0
    ] * len({json.loads(x)["batch"] for x in TRACE.read_text().splitlines()})
    # from the command line too, and a changed batch file is refused, naming its batch
    ck2 = tmp_path / "ck2"
    assert cli(*run_args("--checkpoint", ck2, "--output", tmp_path / "o", trace=first_part))[0] == 0
    changed = first_part / "clicks" / "batch-0001.parquet"
    frame = pl.read_parquet(changed)
    frame.with_columns(pl.lit("someone").alias("user_id")).write_parquet(changed)
    code, err = cli(*run_args("--checkpoint", ck2, "--output", tmp_path / "o", trace=first_part))
    assert code == 1 and "its batch 1 differs from the checkpoint's batch 1" in err, err


HOSTILE_NAMES = [
    "..",
    ".",
    "...",
    "a/b",
    "../up",
    "%41",
    "%",
    "a%2Fb",
    "café",
    "日本語",
    "a\\b",
    " lead",
    "trail ",
    "x" * 200,
]
TWO_WAY = """spark 4.3
stream l (k BIGINT, t TIMESTAMP) watermark t delay 1 second
stream r (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join `{a}` = l AS L INNER JOIN r AS R ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 1 SECOND AND R.t
  SELECT L.k AS k, L.t AS t
join `{b}` = l AS L2 LEFT OUTER JOIN r AS R2 ON L2.k = R2.k
  AND L2.t BETWEEN R2.t - INTERVAL 1 SECOND AND R2.t
  SELECT L2.k AS k, L2.t AS t
"""
READER = """spark 4.3
stream `{a}` (k BIGINT, t TIMESTAMP) watermark t delay 1 second
stream `{b}` (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = `{a}` AS A INNER JOIN `{b}` AS B ON A.k = B.k AND A.t BETWEEN B.t AND B.t
"""


def _two_way_trace(path: Path) -> Path:
    lines = []
    for batch in range(4):
        for stream in ("l", "r"):
            for k in range(3):
                second = batch * 3 + k
                row = {"k": k, "t": f"2026-01-01T00:00:{second:02d}Z"}
                lines.append(json.dumps({"batch": batch, "stream": stream, "row": row}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _pairs() -> Iterator[tuple[str, str]]:
    for name in HOSTILE_NAMES:
        yield name, name + "_2"
    yield "A", "a"  # differ only by case (one folder on a file system that ignores case)
    yield "é", "e\u0301"  # one letter, composed and decomposed


@pytest.mark.parametrize(("a", "b"), list(_pairs()))
def test_a_parquet_output_reads_back_as_a_trace(tmp_path: Path, a: str, b: str) -> None:
    """Output relation folders and trace stream folders are named by one function, so the
    output of one spec is the input of another whatever the names; each stays in the
    output folder."""
    quoted = {k: v.replace("`", "``") for k, v in (("a", a), ("b", b))}
    writer = check_text(TWO_WAY.format(**quoted), "w.sjoin").plan
    reader = check_text(READER.format(**quoted), "r.sjoin").plan
    assert writer is not None and reader is not None, (a, b)
    trace = _two_way_trace(tmp_path / "t.jsonl")
    out = tmp_path / "box" / "out"
    run_to_files(writer, trace, output=out, output_format="parquet")
    files = list((tmp_path / "box").rglob("*.parquet"))
    assert files and all(p.parent.parent == out for p in files)
    assert sorted(p.name for p in out.iterdir()) == sorted({folder_name(a), folder_name(b)})
    wrote: dict[str, list[tuple[Any, ...]]] = {a: [], b: []}
    for batch in run(writer, trace).batches:
        for relation, row in batch.rows:
            wrote[relation].append((row["k"], row["t"]))
    back: dict[str, list[tuple[Any, ...]]] = {a: [], b: []}
    for read in read_parquet_trace(out, schemas_of(reader)).batches:
        for stream, frame in read.rows.items():
            back[stream] += [(k, format_timestamp(t)) for k, t in frame.to_rows()]
    assert back == wrote and all(back.values())
    # and the reader spec runs on it from the command line
    (tmp_path / "r.sjoin").write_text(READER.format(**quoted))
    code, err = cli("run", tmp_path / "r.sjoin", "--trace", out, "--output", tmp_path / "j")
    assert code == 0, err


def test_a_relation_name_too_long_for_a_folder_is_a_clean_error(tmp_path: Path) -> None:
    (tmp_path / "w.sjoin").write_text(TWO_WAY.format(a="x" * 300, b="y"))
    trace = _two_way_trace(tmp_path / "t.jsonl")
    code, err = cli(
        "run",
        tmp_path / "w.sjoin",
        "--trace",
        trace,
        "--output-format",
        "parquet",
        "--output",
        tmp_path / "out",
    )
    assert code == 2 and "File name too long" in err and "E999" not in err, err


def test_relations_sharing_a_folder_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system that ignores case, `A` and `a` are one folder, and their batch files
    would overwrite each other: sjoin sees the two folders are one and refuses.  (Made here
    by folding the names' case, as such a file system does.)"""
    monkeypatch.setattr(parquet_out, "folder_name", lambda name: name.lower())
    plan = check_text(TWO_WAY.format(a="A", b="a"), "w.sjoin").plan
    with pytest.raises(UsageError, match="relations `A` and `a` would share the folder"):
        run_to_files(
            plan,
            _two_way_trace(tmp_path / "t.jsonl"),
            output=tmp_path / "o",
            output_format="parquet",
        )
