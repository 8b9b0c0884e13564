"""`sjoin run --late-rows FILE --checkpoint DIR`: a run resumed from its checkpoint leaves the
late-rows file exactly as one run of the whole trace does, on both engines: stopped between
batches and run again on a longer trace, or killed at every batch boundary (after a commit,
before its lines are written; after they are written).  Each commit records the file's size
and the SHA-256 of its content up to there; a restart cuts the file back to that size, and
refuses (exit status 1, the file untouched) a file whose committed part is not what the
checkpoint recorded (another run's file, an edited one, a shorter one) and a checkpoint that
has no record of a late-rows file (its run wrote none): never a file with late rows missing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.api import check_text
from sjoin.cli.main import main
from sjoin.runtime import ENGINES, CheckpointError, run, run_to_files
from sjoin.runtime.checkpoints.checkpoint import PAUSE_ENV, Checkpoint

from ...integration.parity.scenarios import ts

# a join and an aggregate of a stream, two queries: both drop late rows
SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS A LEFT OUTER JOIN r AS B
  ON A.k = B.k AND B.t BETWEEN A.t AND A.t + INTERVAL 10 SECONDS
  SELECT A.k AS k, A.t AS t, B.v AS bv
aggregate c = l AS L
  GROUP BY window(L.t, INTERVAL 20 SECONDS, INTERVAL 10 SECONDS)
  SELECT window(L.t, INTERVAL 20 SECONDS, INTERVAL 10 SECONDS) AS w, count(*) AS n
  OUTPUT MODE append
"""
BATCHES = 7


def write_trace(path: Path, batches: int = BATCHES, seed: int = 27) -> Path:
    """Rows of ``l`` and ``r`` whose times run up to 40 s behind the batch: late rows in most
    batches, for both operators."""
    rnd = random.Random(seed)
    lines = []
    for b in range(batches):
        for stream in ("l", "r"):
            for _ in range(4):
                t = 100 + 20 * b + rnd.randint(-40, 5)
                row = {"k": rnd.randint(1, 3), "t": ts(t), "v": rnd.choice(["x", "y", "é"])}
                lines.append(json.dumps({"batch": b, "stream": stream, "row": row}))
    path.write_text("\n".join(lines) + "\n")
    return path


def head(trace: Path, batches: int, out: Path) -> Path:
    kept = [x for x in trace.read_text().splitlines() if json.loads(x)["batch"] < batches]
    out.write_text("\n".join(kept) + "\n")
    return out


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    spec = tmp_path / "late.sjoin"
    spec.write_text(SPEC)
    return {
        "spec": spec,
        "trace": write_trace(tmp_path / "trace.jsonl"),
        "late": tmp_path / "late.jsonl",
        "out": tmp_path / "out.jsonl",
        "progress": tmp_path / "progress.jsonl",
        "chk": tmp_path / "chk",
    }


def one_go(files: dict[str, Path], tmp_path: Path, engine: Any = "reference") -> bytes:
    """The late-rows file of one run of the whole trace, without a checkpoint."""
    late = tmp_path / "late-one-go.jsonl"
    plan = check_text(SPEC).plan
    run_to_files(plan, files["trace"], output=tmp_path / "o.jsonl", late_rows=late, engine=engine)
    return late.read_bytes()


def test_the_trace_drops_late_rows_in_several_batches(files: dict[str, Path]) -> None:
    plan = check_text(SPEC).plan
    result = run(plan, files["trace"], late_rows=True)
    batches = {r["batch"] for b in result.batches for r in b.late}
    relations = {r["relation"] for b in result.batches for r in b.late}
    assert len(batches) >= 3 and relations == {"j", "c"}


@pytest.mark.parametrize(
    "engines",
    [("reference", "reference"), ("columnar", "columnar"), ("columnar", "reference")],
    ids=lambda e: "-".join(e),
)
def test_runs_in_pieces_give_the_one_go_file(
    files: dict[str, Path], tmp_path: Path, engines: tuple[Any, Any]
) -> None:
    """Three runs on longer and longer heads of the trace, resuming one checkpoint (the
    engines alternating): the late-rows, output and progress files are those of one run."""
    plan = check_text(SPEC).plan
    expected = one_go(files, tmp_path)
    clean = run(plan, files["trace"])
    for i, batches in enumerate((2, 4, BATCHES)):
        trace = head(files["trace"], batches, tmp_path / f"head{batches}.jsonl")
        run_to_files(
            plan,
            trace,
            output=files["out"],
            progress=files["progress"],
            late_rows=files["late"],
            checkpoint=files["chk"],
            engine=engines[i % 2],
        )
    assert files["late"].read_bytes() == expected
    assert files["out"].read_text().splitlines() == clean.output_lines()
    assert files["progress"].read_text().splitlines() == clean.progress_lines()


def test_both_engines_write_the_same_file(files: dict[str, Path], tmp_path: Path) -> None:
    assert one_go(files, tmp_path, "columnar") == one_go(files, tmp_path, "reference")


RUNNER = """
import sys
from sjoin.api import check_file
from sjoin.runtime import run_to_files
spec, trace, late, checkpoint, engine = sys.argv[1:6]
run_to_files(check_file(spec).plan, trace, output="/dev/null", late_rows=late,
             checkpoint=checkpoint, engine=engine)
"""


def _start(args: list[str], pause: str | None) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != PAUSE_ENV}
    if pause is not None:
        env[PAUSE_ENV] = pause
    return subprocess.Popen(
        [sys.executable, "-c", RUNNER, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_kill_at_every_batch_boundary(files: dict[str, Path], tmp_path: Path, engine: str) -> None:
    """SIGKILL the run at each batch boundary in turn, alternately right after the commit
    (the batch's late rows not written yet) and right after its lines are written (the
    commit recorded the size before them), and restart it each time: the late-rows file
    ends as one run's, no line lost or twice."""
    plan = check_text(SPEC).plan
    steps = len(run(plan, files["trace"]).batches)
    expected = one_go(files, tmp_path)
    args = [str(files[k]) for k in ("spec", "trace", "late", "chk")] + [engine]
    for step in range(steps):
        stage = "committed" if step % 2 == 0 else "emitted"
        process = _start(args, f"{step}:{stage}")
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        assert f"paused after step {step} {stage}" in line, line + process.stderr.read().decode()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        process.stderr.close()
    process = _start(args, None)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()
    assert files["late"].read_bytes() == expected


# ------------------------------------------------------------------ files that do not belong


def _cli(files: dict[str, Path], trace: Path, *extra: str) -> tuple[int, str]:
    args = ["run", str(files["spec"]), "--trace", str(trace), "--output", str(files["out"])]
    result = CliRunner().invoke(main, [*args, "--checkpoint", str(files["chk"]), *extra])
    return result.exit_code, result.stderr


def _first_run(files: dict[str, Path], tmp_path: Path) -> Path:
    """A checkpointed run of the trace's first 4 batches, writing the late-rows file; the
    full trace to resume with."""
    part = head(files["trace"], 4, tmp_path / "head.jsonl")
    code, err = _cli(files, part, "--late-rows", str(files["late"]))
    assert code == 0, err
    assert files["late"].read_bytes(), "the first batches drop late rows"
    return files["trace"]


def _edit(late: Path) -> None:  # a character of a committed line changed
    text = late.read_text()
    late.write_text(text.replace('"v": "', '"v": "z', 1))


def _another_run(late: Path) -> None:  # the late rows of another trace, as long or longer
    other = late.parent / "other.jsonl"
    run_to_files(
        check_text(SPEC).plan,
        write_trace(late.parent / "other-trace.jsonl", seed=5),
        output=late.parent / "other-out.jsonl",
        late_rows=other,
    )
    body = other.read_bytes()
    while len(body) < late.stat().st_size:
        body += body
    late.write_bytes(body)


def _shorter(late: Path) -> None:
    late.write_bytes(late.read_bytes()[:-3])


def _line_dropped(late: Path) -> None:  # the first line removed, the file padded back
    lines = late.read_bytes().splitlines(keepends=True)
    late.write_bytes(b"".join(lines[1:]) + lines[0])


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_edit, "is not the --late-rows file that the run of"),
        (_another_run, "is not the --late-rows file that the run of"),
        (_line_dropped, "is not the --late-rows file that the run of"),
        (_shorter, "is shorter than the checkpoint in"),
    ],
    ids=["edited", "another-run", "line-moved", "shorter"],
)
def test_a_file_that_does_not_belong_is_refused(
    files: dict[str, Path], tmp_path: Path, damage: Any, message: str
) -> None:
    trace = _first_run(files, tmp_path)
    damage(files["late"])
    before = files["late"].read_bytes()
    out_before = files["out"].read_bytes()
    code, err = _cli(files, trace, "--late-rows", str(files["late"]))
    assert code == 1, err
    assert message in err and str(files["late"]) in err
    assert "Traceback" not in err
    # nothing was cut: neither the late-rows file nor the output
    assert files["late"].read_bytes() == before
    assert files["out"].read_bytes() == out_before


def test_a_checkpoint_without_late_rows_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    """Its run wrote no late rows: a resumed run would list only the later batches'."""
    part = head(files["trace"], 4, tmp_path / "head.jsonl")
    code, err = _cli(files, part)
    assert code == 0, err
    code, err = _cli(files, files["trace"], "--late-rows", str(files["late"]))
    assert code == 1
    assert "was made by a run without --late-rows" in err
    assert not files["late"].exists()


def test_late_rows_to_a_stream_then_a_file_is_refused(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """A checkpoint whose run wrote its late rows to stderr has no record of a file."""
    part = head(files["trace"], 4, tmp_path / "head.jsonl")
    code, err = _cli(files, part, "--late-rows", "/dev/stderr")
    assert code == 0, err
    code, err = _cli(files, files["trace"], "--late-rows", str(files["late"]))
    assert code == 1
    assert "writing its late rows elsewhere" in err


def test_resuming_without_late_rows_runs(files: dict[str, Path], tmp_path: Path) -> None:
    """Late rows are asked for per run: a checkpoint that kept them resumes without."""
    trace = _first_run(files, tmp_path)
    code, err = _cli(files, trace)
    assert code == 0, err
    plan = check_text(SPEC).plan
    assert files["out"].read_text().splitlines() == run(plan, trace).output_lines()


def test_another_spec_leaves_the_file_alone(files: dict[str, Path], tmp_path: Path) -> None:
    trace = _first_run(files, tmp_path)
    before = files["late"].read_bytes()
    files["spec"].write_text(SPEC.replace("INTERVAL 10 SECONDS)", "INTERVAL 11 SECONDS)"))
    code, err = _cli(files, trace, "--late-rows", str(files["late"]))
    assert code == 1 and "belongs to another spec" in err
    assert files["late"].read_bytes() == before


@pytest.mark.parametrize(
    "late",
    [
        '{"batch": 999, "line": 1}\n',  # a line of another batch
        '{"batch": {b}\n',  # not JSON
        "[]\n",  # not an object
        '{"batch": {b}}',  # no line feed at the end
        7,  # not text
    ],
)
def test_a_resealed_pending_batch_with_wrong_late_rows_is_refused(
    files: dict[str, Path], tmp_path: Path, late: Any
) -> None:
    """The pending batch's late rows, as whoever can write the checkpoint could reseal them:
    refused before anything is written."""
    trace = _first_run(files, tmp_path)
    data = Checkpoint(files["chk"]).load()
    assert data is not None and isinstance(data["pending"]["late"], str)
    if isinstance(late, str):
        late = late.replace("{b}", str(data["pending"]["batch"]))
    data["pending"]["late"] = late
    Checkpoint(files["chk"]).commit(data)
    with pytest.raises(CheckpointError, match=r"malformed: its `pending\.late"):
        run_to_files(
            check_text(SPEC).plan,
            trace,
            output=files["out"],
            late_rows=files["late"],
            checkpoint=files["chk"],
        )
