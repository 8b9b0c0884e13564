"""`sjoin run` from the command line: the §7 formats, snapshotted per example, and the exit
statuses for bad specs, bad traces and bad options."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.api import check_file
from sjoin.cli.main import main

from ..conftest import EXAMPLES
from ..runtime.harness import plan_of


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_run_example_snapshot(spec: Path, tmp_path: Path, text_snapshot) -> None:  # type: ignore[no-untyped-def]
    progress = tmp_path / "progress.jsonl"
    code, out, err = run(
        "run",
        str(spec),
        "--trace",
        str(spec.with_suffix(".trace.jsonl")),
        "--progress",
        str(progress),
    )
    assert code == 0, err
    lines = out.splitlines()
    for line in lines:
        record = json.loads(line)
        assert set(record) == {"batch", "relation", "row"}
    for line in progress.read_text().splitlines():
        record = json.loads(line)
        assert {"batch", "watermark", "operators"} <= set(record)
    assert "output\n" + out + "progress\n" + progress.read_text() == text_snapshot


def test_run_writes_files_and_filters_relation(tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLES if p.stem == "checkout_funnel")
    output = tmp_path / "out.jsonl"
    code, out, err = run(
        "run",
        str(spec),
        "--trace",
        str(spec.with_suffix(".trace.jsonl")),
        "--relation",
        "revenue",
        "--output",
        str(output),
    )
    assert code == 0, err
    assert out == ""
    relations = {json.loads(line)["relation"] for line in output.read_text().splitlines()}
    assert relations == {"revenue"}


def test_bad_trace_row_stops_with_its_line(tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLES if p.stem == "ad_attribution")
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"batch": 0, "stream": "clicks", "row": {"ad_id": 1, "click_time": '
        '"2026-01-01T00:00:00Z", "user_id": "u"}}\n'
        '{"batch": 0, "stream": "clicks", "row": {"ad_id": "x", "click_time": '
        '"2026-01-01T00:00:00Z", "user_id": "u"}}\n'
    )
    code, _, err = run("run", str(spec), "--trace", str(trace))
    assert code == 1
    assert ":2" in err and "Traceback" not in err
    code, _, err = run("run", str(spec), "--trace", str(trace), "--bad-rows", "skip")
    assert code == 0 and "1 bad row skipped" in err


def test_usage_errors(tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLES if p.stem == "ad_attribution")
    trace = str(spec.with_suffix(".trace.jsonl"))
    assert run("run", str(spec))[0] == 2  # --trace is required
    assert run("run", str(spec), "--trace", str(tmp_path / "none.jsonl"))[0] == 2
    assert run("run", str(spec), "--trace", trace, "--relation", "impressions")[0] == 2


def test_spec_errors_exit_one(tmp_path: Path) -> None:
    spec = tmp_path / "bad.sjoin"
    spec.write_text("stream s (a INT, t STRING) watermark t delay 1 second\n")
    trace = tmp_path / "t.jsonl"
    trace.write_text("")
    code, _, err = run("run", str(spec), "--trace", str(trace))
    assert code == 1 and "E010" in err


def test_progress_to_a_device_or_pipe(tmp_path: Path) -> None:
    """--progress /dev/stderr (or a FIFO) works: such a target is written as a stream."""
    import os
    import threading

    spec = next(p for p in EXAMPLES if p.stem == "ad_attribution")
    fifo = tmp_path / "progress.fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    code, _, err = run(
        "run", str(spec), "--trace", str(spec.with_suffix(".trace.jsonl")), "--progress", str(fifo)
    )
    reader.join(timeout=30)
    assert code == 0, err
    lines = received[0].splitlines()
    assert lines and all(json.loads(line)["batch"] == i for i, line in enumerate(lines))


# A value no column can keep, in line 2 of a three-line trace: each must be a bad row that
# names line 2 and the column of the value, under every --bad-rows policy (issue 13, part 2).
VALUES_SPEC = """spark 4.0
stream a (k BIGINT, t TIMESTAMP, x DOUBLE, s STRING) watermark t delay 1 second
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = a AS A INNER JOIN b AS B ON A.k = B.k AND B.t BETWEEN A.t AND A.t + INTERVAL 1 HOUR
  SELECT A.k, A.t, A.x, A.s, B.t AS bt
"""
GOOD_A = (
    b'{"batch": 0, "stream": "a", "row": {"k": 1, "t": "2026-01-01T00:00:00Z", "x": 1.5, "s": "a"}}'
)
GOOD_B = b'{"batch": 0, "stream": "b", "row": {"k": 1, "t": "2026-01-01T00:10:00Z"}}'


def a_row(
    k: bytes = b"2", t: bytes = b'"2026-01-01T00:00:00Z"', x: bytes = b"1.5", s: bytes = b'"a"'
) -> bytes:
    return b'{"batch": 0, "stream": "a", "row": {"k": %b, "t": %b, "x": %b, "s": %b}}' % (
        k,
        t,
        x,
        s,
    )


UNKEEPABLE = [
    (
        "double 1e400 as an integer",
        a_row(x=b"1" + b"0" * 400),
        b"1" + b"0" * 400,
        "is out of range for DOUBLE",
    ),
    ("double 1e400", a_row(x=b"1e400"), b"1e400", "1E+400 is out of range for DOUBLE"),
    (
        "bigint of 5000 digits",
        a_row(k=b"7" * 5000),
        b"7" * 5000,
        "a number of 5000 digits: more than the 4300",
    ),
    (
        "exponent beyond Decimal",
        a_row(x=b"1e99999999999999999999"),
        b"1e99",
        "its exponent is too large",
    ),
    ("byte 0xff", a_row(s=b'"a\xffb"'), b"\xff", "invalid UTF-8: cannot decode 0xff"),
    ("lone surrogate", a_row(s=b'"\\ud800"'), b'"\\ud800"', "lone surrogate '\\ud800'"),
    (
        "year 10000 in UTC",
        a_row(t=b'"9999-12-31T23:30:00-05:00"'),
        b'"9999-12-31T23:30:00-05:00"',
        "out of range: TIMESTAMP holds years 0001 to 9999 in UTC",
    ),
    (
        "year 0 in UTC",
        a_row(t=b'"0001-01-01T00:30:00+01:00"'),
        b'"0001-01-01T00:30:00+01:00"',
        "out of range: TIMESTAMP holds years 0001 to 9999 in UTC",
    ),
]


@pytest.mark.parametrize(
    ("bad", "needle", "reason"), [c[1:] for c in UNKEEPABLE], ids=[c[0] for c in UNKEEPABLE]
)
@pytest.mark.parametrize("policy", ["stop", "skip", "file"])
def test_unkeepable_value_is_a_bad_row(
    tmp_path: Path, bad: bytes, needle: bytes, reason: str, policy: str
) -> None:
    spec, trace, report = tmp_path / "j.sjoin", tmp_path / "t.jsonl", tmp_path / "bad.jsonl"
    spec.write_text(VALUES_SPEC)
    trace.write_bytes(b"\n".join([GOOD_A, bad, GOOD_B]) + b"\n")
    column = len(bad[: bad.index(needle)].decode()) + 1
    where = f"{trace}:2:{column}: "
    args = ["run", str(spec), "--trace", str(trace)]
    code, out, err = run(*args, "--bad-rows", str(report) if policy == "file" else policy)
    assert "E999" not in err
    if policy == "stop":
        assert code == 1 and out == ""
        assert where in err and reason in err, err
        return
    assert code == 0, err
    assert where in err and "(skipped)" in err and reason in err
    (row,) = [json.loads(line)["row"] for line in out.splitlines()]  # line 1 joined line 3
    assert row == {
        "k": 1,
        "t": "2026-01-01T00:00:00Z",
        "x": 1.5,
        "s": "a",
        "bt": "2026-01-01T00:10:00Z",
    }
    if policy == "file":
        (written,) = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
        assert (written["line"], written["column"]) == (2, column)
        assert reason in written["error"]


def test_byte_order_mark(tmp_path: Path) -> None:
    """A BOM that starts the file is skipped; one that starts a later line is named."""
    spec, trace = tmp_path / "j.sjoin", tmp_path / "t.jsonl"
    spec.write_text(VALUES_SPEC)
    trace.write_bytes(b"\xef\xbb\xbf" + GOOD_A + b"\n" + GOOD_B + b"\n")
    code, out, err = run("run", str(spec), "--trace", str(trace))
    assert code == 0 and len(out.splitlines()) == 1, err
    trace.write_bytes(GOOD_A + b"\n\xef\xbb\xbf" + GOOD_B + b"\n")
    code, out, err = run("run", str(spec), "--trace", str(trace))
    assert code == 1 and "E999" not in err
    assert f"{trace}:2:1: a byte order mark (U+FEFF) starts this line" in err


def test_a_lone_cr_does_not_split_a_line(tmp_path: Path) -> None:
    spec, trace = tmp_path / "j.sjoin", tmp_path / "t.jsonl"
    spec.write_text(VALUES_SPEC)
    with_cr = GOOD_A.replace(b'"x": 1.5,', b'"x": 1.5,\r')  # JSON whitespace, inside line 1
    trace.write_bytes(with_cr + b"\n{bad\r\n" + GOOD_B + b"\r\n")
    code, _, err = run("run", str(spec), "--trace", str(trace))
    assert code == 1
    assert f"{trace}:2:2: bad JSON: Expecting property name" in err  # line 2, not 3
    code, out, err = run("run", str(spec), "--trace", str(trace), "--bad-rows", "skip")
    assert code == 0 and len(out.splitlines()) == 1 and "1 bad row skipped" in err


def test_unwritable_bad_rows_file_is_a_usage_error(tmp_path: Path) -> None:
    spec, trace = tmp_path / "j.sjoin", tmp_path / "t.jsonl"
    spec.write_text(VALUES_SPEC)
    trace.write_bytes(GOOD_A + b"\n{bad\n")
    code, _, err = run(
        "run", str(spec), "--trace", str(trace), "--bad-rows", str(tmp_path / "no" / "bad.jsonl")
    )
    assert code == 2 and "cannot write the bad rows" in err and "E999" not in err


def test_a_computed_timestamp_past_year_9999_is_written(tmp_path: Path) -> None:
    """Input stays within years 0001..9999, but arithmetic may leave them: such a value is
    written in ISO 8601's expanded form (as java.time prints it), not an internal error."""
    spec, trace = tmp_path / "j.sjoin", tmp_path / "t.jsonl"
    spec.write_text(
        VALUES_SPEC.replace("SELECT A.k,", "SELECT A.t + INTERVAL 2 HOURS AS later, A.k,")
    )
    trace.write_bytes(
        a_row(k=b"1", t=b'"9999-12-31T23:00:00Z"')
        + b'\n{"batch": 0, "stream": "b", "row": {"k": 1, "t": "9999-12-31T23:10:00Z"}}\n'
    )
    code, out, err = run("run", str(spec), "--trace", str(trace))
    assert code == 0, err
    assert json.loads(out)["row"]["later"] == "+10000-01-01T01:00:00Z"


def test_progress_to_redirected_stderr_interleaves_whole_lines(tmp_path: Path) -> None:
    """`--progress /dev/stderr 2>FILE`: the progress lines and sjoin's own summary share
    stderr's file offset, so every line of FILE is whole (nothing is written over)."""
    import subprocess
    import sys

    spec = next(p for p in EXAMPLES if p.stem == "ad_attribution")
    err_path = tmp_path / "err.txt"
    with err_path.open("w") as err:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "sjoin.cli.main",
                "run",
                str(spec),
                "--trace",
                str(spec.with_suffix(".trace.jsonl")),
                "--progress",
                "/dev/stderr",
                "--output",
                str(tmp_path / "rows.jsonl"),
            ],
            stderr=err,
            stdout=subprocess.DEVNULL,
        )
    assert done.returncode == 0
    lines = err_path.read_text().splitlines()
    progress = [json.loads(line) for line in lines if line.startswith("{")]
    others = [line for line in lines if not line.startswith("{")]
    assert len(progress) >= 10 and all("batch" in p and "operators" in p for p in progress)
    assert [p["batch"] for p in progress] == sorted(p["batch"] for p in progress)
    assert len(others) == 1 and "batches" in others[0], others


@pytest.mark.parametrize("trace_batches", [False, True], ids=["plain", "trace-batches"])
@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_both_engines_write_the_same_bytes(spec: Path, trace_batches: bool, tmp_path: Path) -> None:
    """`sjoin run --engine columnar` and `--engine reference`: the same output and
    progress files, byte for byte; `--verbose` names the engine and each fallback."""
    files = {}
    for engine in ("columnar", "reference"):
        out, progress = tmp_path / f"{engine}.out", tmp_path / f"{engine}.progress"
        code, _, err = run(
            "run",
            str(spec),
            "--trace",
            str(spec.with_suffix(".trace.jsonl")),
            "--engine",
            engine,
            "--verbose",
            "--output",
            str(out),
            "--progress",
            str(progress),
            *(["--trace-batches"] if trace_batches else []),
        )
        assert code == 0, err
        assert f"engine: {engine}" in err
        if engine == "columnar":  # every join and aggregate: columnar, or why not (issue 23)
            plan = check_file(spec).plan
            assert plan is not None
            for node in (*plan.joins, *plan.aggregates):
                said = [line for line in err.splitlines() if f"`{node.name}` runs " in line]
                assert len(said) == 1, (node.name, err)
        files[engine] = (out.read_bytes(), progress.read_bytes())
    assert files["columnar"] == files["reference"]


def test_parquet_trace_directory(tmp_path: Path) -> None:
    pl = pytest.importorskip("polars")
    spec = tmp_path / "s.sjoin"
    spec.write_text(
        "spark 4.3\n"
        "stream l (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
        "stream r (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
        "join j = l AS L INNER JOIN r AS R ON L.k = R.k "
        "AND L.t BETWEEN R.t - INTERVAL 1 SECOND AND R.t\n"
        "  SELECT L.k AS k, L.t AS lt, R.t AS rt\n"
    )
    lines = []
    for batch in range(3):
        for stream in ("l", "r"):
            times = [f"2026-01-01T00:00:{batch * 2 + i:02d}Z" for i in range(2)]
            frame = pl.DataFrame({"k": [1, 2], "t": times}).with_columns(
                pl.col("t").str.to_datetime(time_unit="us", time_zone="UTC")
            )
            (tmp_path / "pq" / stream).mkdir(parents=True, exist_ok=True)
            frame.write_parquet(tmp_path / "pq" / stream / f"batch-{batch:04d}.parquet")
            lines += [
                json.dumps({"batch": batch, "stream": stream, "row": {"k": k, "t": t}})
                for k, t in zip([1, 2], times, strict=True)
            ]
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    code, from_parquet, err = run("run", str(spec), "--trace", str(tmp_path / "pq"))
    assert code == 0, err
    code, from_json, err = run("run", str(spec), "--trace", str(trace), "--engine", "reference")
    assert code == 0, err
    assert from_parquet == from_json and from_json.count("\n") > 0
    code, _, err = run("run", str(spec), "--trace", str(tmp_path / "pq"), "--engine", "reference")
    assert code == 2 and "read by the columnar engine only" in err


def test_auto_engine_picks_by_rows_per_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--engine auto` (the default): the columnar engine from the rows per batch its costs
    pay off at, the reference one below (runtime/choice.py; the break-even is moved to the
    example's trace here, tests/runtime/test_engine_choice.py tests the rule); same bytes."""
    from sjoin import runtime
    from sjoin.runtime import choice

    spec = EXAMPLES[0]
    trace = spec.with_suffix(".trace.jsonl")
    shape = runtime.scan_trace(trace)
    assert shape is not None and shape.batches > 1
    mean = shape.lines // shape.batches
    monkeypatch.setattr(choice, "COLUMNAR_FIXED_ROWS", 0)
    outputs = []
    for per_batch, engine, compared in ((mean + 1, "reference", "<"), (mean, "columnar", ">=")):
        monkeypatch.setattr(choice, "COLUMNAR_ROWS_PER_BATCH", per_batch)
        out = tmp_path / f"{engine}.out"
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            summary = runtime.run_to_files(
                plan_of(spec.read_text()),
                trace,
                output=out,
                notes=lambda line: print(line, file=sys.stderr),
            )
        assert summary.batches > 0
        assert f"engine: {engine} " in stderr.getvalue(), stderr.getvalue()
        assert (
            f": {shape.batches} batches of {mean} rows on average ({compared} {per_batch} "
            "rows/batch for 1 columnar operator, read in bulk)\n"
        ) in stderr.getvalue()
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_auto_engine_reasons() -> None:
    """The other reasons `auto` gives: rows in memory, and a plan with nothing columnar."""
    from sjoin.runtime import choose_engine

    spec = EXAMPLES[0]
    plan = plan_of(spec.read_text())
    assert choose_engine(plan, ['{"batch": 0, "stream": "x", "row": {}}']) == (
        "reference",
        "the trace rows are given in memory",
    )
    floating_key = plan_of(  # a floating-point join key is not columnar (-0.0, NaN)
        "spark 4.3\n"
        "stream l (k DOUBLE, t TIMESTAMP) watermark t delay 1 second\n"
        "stream r (k DOUBLE, t TIMESTAMP) watermark t delay 1 second\n"
        "join j = l AS L INNER JOIN r AS R ON L.k = R.k "
        "AND L.t BETWEEN R.t - INTERVAL 1 SECOND AND R.t\n"
        "  SELECT L.k AS k\n"
    )
    assert choose_engine(floating_key, spec.with_suffix(".trace.jsonl"))[1] == (
        "no operator of the plan runs columnar"
    )


VERBOSE_SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)
  SELECT L.k AS k, window(L.t, INTERVAL 10 SECONDS) AS w, L.v AS lv, R.v AS rv
aggregate s = r AS S GROUP BY window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS)
  SELECT window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS) AS w, count(*) AS n
  OUTPUT MODE append
"""


@pytest.mark.parametrize("engine", ["columnar", "reference"])
def test_verbose_names_each_operator_and_why_it_falls_back(engine: str, tmp_path: Path) -> None:
    """`sjoin run --verbose` on the columnar engine says, per operator, that it runs columnar
    or that it runs on the reference engine and why (a window-key join runs columnar; a
    sliding-window aggregate does not); the reference engine says it runs every operator;
    without --verbose nothing of it is said."""
    spec = tmp_path / "s.sjoin"
    spec.write_text(VERBOSE_SPEC)
    trace = tmp_path / "t.jsonl"
    rows = [
        {"batch": b, "stream": s, "row": {"k": 1, "t": f"2026-01-01T00:00:{b * 7:02d}Z", "v": s}}
        for b in range(3)
        for s in ("l", "r")
    ]
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["run", str(spec), "--trace", str(trace), "--engine", engine, "--output", "/dev/null"]
    code, _, err = run(*args, "--verbose")
    assert code == 0, err
    said = [line for line in err.splitlines() if line.startswith("sjoin run: ")]
    if engine == "columnar":
        assert said[0].startswith("sjoin run: engine: columnar (polars): ")
        assert said[1:] == [
            "sjoin run: `j` runs columnar",
            "sjoin run: `s` runs on the reference engine: "
            "a sliding window() puts a row in several groups",
        ]
    else:
        assert said == ["sjoin run: engine: reference (row at a time): asked for"]
    code, _, quiet = run(*args)
    assert code == 0 and "sjoin run: " not in quiet, quiet
