"""A run stopped and resumed from its checkpoint writes a clean run's output byte for byte, in
the same order (issue 23, item 5), on either engine.

The order of a batch's rows is decided by the state in three places: a join's stored rows
meet a probe in the order they were stored; a preserved side's unmatched rows come out, when
evicted, in (event time, arrival) order; an aggregate emits the groups it evicts in (window
time, creation) order, and in complete mode all its groups in creation order (docs/testing.md,
"The order of a batch's rows").  A snapshot holds each stored row with its id and each group
in creation order, so a resumed run has all it needs.  Before the fix, eviction followed the
*runs* of the event-time index (one per batch that stored rows between two evictions), which
a snapshot does not keep (a restored index is one run): a resumed run gave the same rows in
another order in some batches, on both engines.

Stops are made after every batch of each example's own trace (a shorter trace first, then
the whole one) and after every step (as if killed), at a sample of the steps of a 120-batch
generated trace of three examples, in the runtime scenarios whose order the state decides
(each outer join, semi and anti, a window key, aggregates in each mode), and by SIGKILL in
the middle of a long run (``test_checkpoint.py`` kills at every step of an example's trace).
Each resumed run alternates the engines."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_file, check_text
from sjoin.compiler.planning.plan import Plan
from sjoin.runtime import run, run_to_files
from sjoin.runtime.checkpoints.checkpoint import PAUSE_ENV
from sjoin.runtime.engine.index import EvictionIndex

from ..scenarios import by_name

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "examples").glob("*.sjoin"))
ENGINES = ("reference", "columnar")
T0 = 1_767_225_600  # 2026-01-01T00:00:00Z


def long_trace(plan: Plan, batches: int, seed: int, rows: int = 3) -> list[str]:
    """A trace of ``batches`` batches for any spec: up to ``rows`` rows per stream per batch,
    keys from a few values (so rows match, and several stored rows share a key), times that
    advance half the longest watermark delay per batch and scatter around it (late rows,
    rows that wait, rows that match across batches; now and then a leap, after which one
    batch evicts what several batches stored), and a few NULLs."""
    rng = random.Random(f"{seed}")
    delays = [s.delay_ms for s in plan.streams if s.delay_ms] or [20_000]
    step = max(1, max(delays) // 2000)
    lines = []
    base = T0
    for b in range(batches):
        # now and then time leaps ahead: the watermark passes several windows at once
        base += step * (4 if rng.random() < 0.1 else 1)
        for stream in plan.streams:
            for _ in range(rng.randint(0, rows)):
                row: dict[str, Any] = {}
                for column in stream.columns:
                    kind = column.type.name.upper()
                    if kind == "TIMESTAMP":
                        moment = datetime.fromtimestamp(
                            base + rng.randint(-3 * step, 2 * step), UTC
                        )
                        row[column.name] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
                    elif rng.random() < 0.03:
                        row[column.name] = None
                    elif kind in ("BIGINT", "INT"):
                        row[column.name] = rng.randint(1, 5)
                    elif kind == "STRING":
                        row[column.name] = rng.choice("abc")
                    elif kind == "DOUBLE" or kind.startswith("DECIMAL"):
                        row[column.name] = rng.randint(0, 400) / 4
                    elif kind == "DATE":
                        row[column.name] = (date(2026, 1, 1) + timedelta(days=b // 10)).isoformat()
                    else:
                        raise AssertionError(f"long_trace: add a value for {kind}")
                lines.append(json.dumps({"batch": b, "stream": stream.name, "row": row}))
    return lines


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _batch_of(line: str) -> int:
    return int(json.loads(line)["batch"])


@pytest.fixture(autouse=True)
def _no_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about order, and commit a checkpoint thousands of times: without
    ``fsync`` they take seconds, not minutes.  That a commit survives a kill is
    ``test_checkpoint.py``'s (SIGKILL at every step of a run), and this file's last test's."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def _other(engine: str) -> str:
    return ENGINES[1 - ENGINES.index(engine)]


def _lines(batches: list[Any]) -> tuple[list[str], list[str]]:
    return [x for b in batches for x in b.output_lines()], [b.progress_line() for b in batches]


def _stopped_at_each_step(
    plan: Plan, lines: list[str], engine: str, steps: list[int], work: Path, tail: int = 10**9
) -> None:
    """Run the trace with a checkpoint on ``engine``, as if killed after each of ``steps``
    (the executed batches, counted from 0: the checkpoint's files as they were then), and
    resume each stopped run, alternately on the other engine and on ``engine``, on the
    trace's batches up to ``tail`` after the stop's: each resumed run must write the
    uninterrupted run's lines that follow the stop, byte for byte (and the uninterrupted
    run writes what a run without a checkpoint writes on the reference engine)."""
    trace = _write(work / "trace.jsonl", lines)
    checkpoint = work / "chk"
    kept: dict[int, dict[str, bytes]] = {}
    wanted = set(steps)

    def keep(out: Any, total: int) -> None:
        step = len(kept_steps)
        kept_steps.append(step)
        if step in wanted:
            kept[step] = {p.name: p.read_bytes() for p in checkpoint.iterdir() if p.is_file()}

    kept_steps: list[int] = []
    clean = run(plan, trace, checkpoint=checkpoint, engine=engine, on_batch=keep)  # type: ignore[arg-type]
    plain = run(plan, trace, engine="reference")  # no checkpoint: the same lines
    assert _lines(clean.batches) == _lines(plain.batches)
    steps = [step for step in steps if step < len(clean.batches) - 1]
    assert len(steps) >= 3, len(clean.batches)
    values = sorted({_batch_of(x) for x in lines})
    for i, step in enumerate(steps):
        stopped = work / f"chk-{step}"
        stopped.mkdir()
        for name, data in kept[step].items():
            (stopped / name).write_bytes(data)
        at = values.index(clean.batches[step].trace_batch)  # type: ignore[arg-type]
        last = values[min(at + tail, len(values) - 1)]
        head = [x for x in lines if _batch_of(x) <= last]
        resumed = run(
            plan,
            _write(work / f"trace-{step}.jsonl", head),
            checkpoint=stopped,
            engine=_other(engine) if i % 2 == 0 else engine,  # type: ignore[arg-type]
        )
        expected = [
            b
            for b in clean.batches[step + 1 :]
            if values.index(b.trace_batch) <= values.index(last)
        ]
        got = _lines(resumed.batches)
        assert got == _lines(expected), f"stopped after step {step}"


# ----------------------------------------------------------------- every boundary, examples


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_stop_after_every_batch_of_each_example(tmp_path: Path, spec: Path, engine: str) -> None:
    """A run of the example's trace stopped after each trace batch (it ran a trace of the
    batches before; then the whole trace runs on its checkpoint), and one killed after each
    of its executed batches, data or no-data."""
    plan = check_file(spec).plan
    lines = [x for x in spec.with_suffix(".trace.jsonl").read_text().splitlines() if x.strip()]
    clean = run(plan, _write(tmp_path / "full.jsonl", lines), engine=engine)  # type: ignore[arg-type]
    batches = sorted({_batch_of(x) for x in lines})
    assert len(batches) >= 6
    for i, stop in enumerate(batches[1:]):
        head = _write(tmp_path / f"head-{stop}.jsonl", [x for x in lines if _batch_of(x) < stop])
        checkpoint = tmp_path / f"chk-{stop}"
        first = run(plan, head, checkpoint=checkpoint, engine=engine)  # type: ignore[arg-type]
        second = run(
            plan,
            tmp_path / "full.jsonl",
            checkpoint=checkpoint,
            engine=_other(engine) if i % 2 == 0 else engine,  # type: ignore[arg-type]
        )
        assert first.output_lines() + second.output_lines() == clean.output_lines(), stop
        assert first.progress_lines() + second.progress_lines() == clean.progress_lines(), stop
    work = tmp_path / "killed"
    work.mkdir()
    _stopped_at_each_step(plan, lines, engine, list(range(len(clean.batches))), work, tail=2)


# ------------------------------------------------------------- a long trace, a sample of stops

LONG = 120


@pytest.fixture(scope="module")
def long_traces() -> dict[str, tuple[Plan, list[str]]]:
    """Each example with a trace of 120 batches."""
    traces = {}
    for spec in EXAMPLES:
        plan = check_file(spec).plan
        traces[spec.stem] = (plan, long_trace(plan, LONG, seed=1))
    return traces


# (spec, the engine of the uninterrupted run): the specs whose order the state decides (the
# null-padded rows of a left and of a full outer join, the groups of an append aggregate
# after a chain of joins), each engine making the snapshots of one of them
LONG_RUNS = [
    ("ad_attribution", "columnar"),
    ("ride_matching", "reference"),
    ("checkout_funnel", "reference"),
]
# steps after which a resumed run reordered rows before the fix (found on the reference
# engine; the columnar engine's order was the reference's): ad_attribution's at 9, 131 and
# 167, ride_matching's at 9, 52 and 131, checkout_funnel's aggregate at 100
LONG_STEPS = [9, 52, 100, 131, 167]


@pytest.mark.parametrize(("spec", "engine"), LONG_RUNS)
def test_stop_in_a_long_trace(
    tmp_path: Path, long_traces: dict[str, tuple[Plan, list[str]]], spec: str, engine: str
) -> None:
    plan, lines = long_traces[spec]
    _stopped_at_each_step(plan, lines, engine, LONG_STEPS, tmp_path, tail=20)


# --------------------------------------------- the scenarios whose order the state decides

ORDERED_SCENARIOS = (
    "left_outer_worked_example",
    "right_outer_in_batch_eviction",
    "full_outer_both_sides_null_padded",
    "left_semi_each_left_row_once",
    "left_anti_unmatched_left_rows",
    "window_key_join",
    "join_then_window_aggregate_append",
    "inner_join_then_update_aggregate",
    "sliding_window_aggregate_append",
    "aggregate_complete_mode",
    "left_outer_then_window_aggregate",
)


@pytest.mark.parametrize("name", ORDERED_SCENARIOS)
def test_stop_in_a_long_trace_of_each_kind_of_state(tmp_path: Path, name: str) -> None:
    """Every kind of state whose order shows in the output: each outer join, semi and anti,
    a window key, and aggregates in each output mode, after a join or not."""
    plan = by_name(name).plan
    lines = long_trace(plan, 40, seed=2)
    engine = ENGINES[ORDERED_SCENARIOS.index(name) % 2]
    _stopped_at_each_step(plan, lines, engine, [5, 12, 19], tmp_path, tail=10)


# ----------------------------------------------------------------- the order, as defined


def test_null_padded_rows_come_out_by_event_time_then_arrival(
    long_traces: dict[str, tuple[Plan, list[str]]],
) -> None:
    """ad_attribution's unmatched impressions, in each batch that evicts them: by
    impression time, then in the order they arrived (the trace's; an impression of a NULL
    campaign fails the ON condition's left-only part and comes out at once, in probe order,
    so it is left out); ride_matching's unmatched requests and then its unmatched offers,
    each by its time."""
    plan, lines = long_traces["ad_attribution"]
    output = run(plan, lines, engine="reference").output_lines()
    arrival = {}
    for n, line in enumerate(lines):
        record = json.loads(line)
        if record["stream"] == "impressions":
            r = record["row"]
            arrival.setdefault((r["ad_id"], r["impression_time"], r["campaign"]), n)
    padded: dict[int, list[tuple[str, int]]] = {}
    for line in output:
        record = json.loads(line)
        r = record["row"]
        if r["click_time"] is None and r["campaign"] is not None:
            key = (r["ad_id"], r["impression_time"], r["campaign"])
            padded.setdefault(record["batch"], []).append((r["impression_time"], arrival[key]))
    assert sum(len(v) > 1 for v in padded.values()) > 10
    for batch, rows in padded.items():
        assert rows == sorted(rows), batch

    plan, lines = long_traces["ride_matching"]
    output = run(plan, lines, engine="reference").output_lines()
    sides: dict[int, list[tuple[int, str]]] = {}
    for line in output:
        record = json.loads(line)
        r = record["row"]
        if r["offer_time"] is None:
            sides.setdefault(record["batch"], []).append((0, r["request_time"]))
        elif r["request_time"] is None:
            sides.setdefault(record["batch"], []).append((1, r["offer_time"]))
    assert sum(len({s for s, _ in v}) == 2 for v in sides.values()) > 5
    for batch, rows in sides.items():
        assert rows == sorted(rows), batch


def test_evicted_groups_come_out_by_window_then_creation(
    long_traces: dict[str, tuple[Plan, list[str]]],
) -> None:
    """checkout_funnel's revenue groups, in each batch that emits them: by window, then in
    the order the groups were made."""
    plan, lines = long_traces["checkout_funnel"]
    output = run(plan, lines, engine="reference").output_lines()
    first_seen: dict[tuple[str, str], int] = {}
    for n, line in enumerate(output):
        record = json.loads(line)
        if record["relation"] == "converted":
            r = record["row"]
            start = _window_start(r["purchase_time"])
            first_seen.setdefault((r["campaign"], start), n)
    groups: dict[int, list[tuple[str, int]]] = {}
    for line in output:
        record = json.loads(line)
        if record["relation"] == "revenue":
            r = record["row"]
            start = r["purchase_window"]["start"]
            groups.setdefault(record["batch"], []).append(
                (start, first_seen[(r["campaign"], start)])
            )
    assert sum(len(v) > 1 for v in groups.values()) > 5
    for batch, rows in groups.items():
        assert rows == sorted(rows), batch


def _window_start(stamp: str) -> str:
    """The start of the 10-minute window holding ``stamp`` (``...Z``, whole seconds)."""
    moment = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    start = moment - timedelta(minutes=moment.minute % 10, seconds=moment.second)
    return start.strftime("%Y-%m-%dT%H:%M:%SZ")


LEAP_SPECS = {
    "join": """spark 4.3
stream l (k BIGINT, t TIMESTAMP) watermark t delay 30 seconds
stream r (k BIGINT, t TIMESTAMP) watermark t delay 30 seconds
join j = l AS L LEFT OUTER JOIN r AS R
    ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
    SELECT L.k AS k, L.t AS t, R.t AS rt
""",
    "aggregate": """spark 4.3
stream l (k BIGINT, t TIMESTAMP) watermark t delay 30 seconds
stream r (k BIGINT, t TIMESTAMP) watermark t delay 30 seconds
aggregate a = l AS L GROUP BY window(L.t, INTERVAL 10 SECONDS)
    SELECT window(L.t, INTERVAL 10 SECONDS) AS w, count(*) AS n
    OUTPUT MODE append
""",
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", sorted(LEAP_SPECS))
def test_one_batch_evicts_what_two_batches_stored(tmp_path: Path, kind: str, engine: str) -> None:
    """Batch 0 stores times 5 s and 25 s, batch 1 stores 15 s, batch 2's leap evicts all
    three: they come out as 5, 15, 25 (unmatched left rows; windows), where the runs of the
    index (one per batch) gave 5, 25, 15 before the fix, and a run resumed after batch 0 or 1
    gave 5, 15, 25.  A stop after any step resumes to the same lines."""
    plan = check_text(LEAP_SPECS[kind]).plan
    assert plan is not None

    def row(k: int, seconds: int) -> dict[str, Any]:
        return {"k": k, "t": datetime.fromtimestamp(T0 + seconds, UTC).isoformat()}

    rows = [(0, "l", 1, 5), (0, "l", 2, 25), (1, "l", 3, 15), (2, "l", 4, 200), (2, "r", 9, 200)]
    lines = [json.dumps({"batch": b, "stream": s, "row": row(k, t)}) for b, s, k, t in rows]
    clean = run(plan, lines, engine=engine)  # type: ignore[arg-type]
    if kind == "join":
        evicted = [r["k"] for r in clean.rows() if r["rt"] is None]
        assert evicted == [1, 3, 2]
    else:
        evicted = [r["w"]["start"][17:19] for r in clean.rows()]
        assert evicted == ["00", "10", "20"]
    assert [b.data for b in clean.batches][-1] is False  # the leap's no-data batch evicts
    _stopped_at_each_step(plan, lines, engine, list(range(len(clean.batches))), tmp_path)


@pytest.mark.parametrize("seed", range(6))
def test_the_index_pops_by_time_then_id_whatever_its_runs(seed: int) -> None:
    """``EvictionIndex.pop_upto`` gives the entries in (time, id) order across its runs (one
    per flush): an index built over many batches and one restored in a single run pop alike
    at every threshold."""
    rng = random.Random(seed)
    live = EvictionIndex()
    model: list[tuple[int, int]] = []
    ident = 0
    for _ in range(30):
        for _ in range(rng.randint(0, 6)):
            t = rng.randint(0, 40) + len(model)
            live.add(t, ident, f"k{ident % 3}", ident)
            model.append((t, ident))
            ident += 1
        restored = EvictionIndex()
        for t, i in sorted(model, key=lambda e: e[1]):
            restored.add(t, i, f"k{i % 3}", i)
        threshold = rng.randint(0, 60)
        expected = sorted(e for e in model if e[0] <= threshold)
        model = [e for e in model if e[0] > threshold]
        for index in (live, restored):
            idents, keys, extras = index.pop_upto(threshold)
            assert idents == [i for _, i in expected] == extras
            assert keys == [f"k{i % 3}" for i in idents]
        # the restored copy is rebuilt from the model at each step; the live one carries on
    unordered = EvictionIndex()
    for t, i in model:
        unordered.add(t, i, None)
    assert sorted(unordered.pop_upto(10**9, ordered=False)[0]) == sorted(i for _, i in model)


# ------------------------------------------------------------- killed in a long run (SIGKILL)

RUNNER = """
import sys
from sjoin.api import check_file, check_text
from sjoin.runtime import run_to_files
spec, trace, output, progress, checkpoint, engine = sys.argv[1:7]
run_to_files(
    check_file(spec).plan, trace, output=output, progress=progress, checkpoint=checkpoint,
    engine=engine,
)
"""


def test_killed_midway_through_a_long_trace(
    tmp_path: Path, long_traces: dict[str, tuple[Plan, list[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL a run of ride_matching's long trace (a full outer join: every stop reordered
    its null-padded rows before the fix) three times, after a checkpoint commit or after a
    batch's output, alternating the engines, and restart it each time (the last time to the
    end): the output file is an uninterrupted run's, line for line."""
    monkeypatch.undo()  # the real fsync: a killed run's commits are what they are
    plan, lines = long_traces["ride_matching"]
    clean = run(plan, lines, engine="reference")
    trace = _write(tmp_path / "long.jsonl", lines)
    out, progress, checkpoint = tmp_path / "out.jsonl", tmp_path / "p.jsonl", tmp_path / "chk"
    spec = ROOT / "examples" / "ride_matching.sjoin"
    args = [str(spec), str(trace), str(out), str(progress), str(checkpoint)]
    env = {k: v for k, v in os.environ.items() if k != PAUSE_ENV}
    for n, (step, stage) in enumerate([(21, "committed"), (52, "emitted"), (86, "committed")]):
        process = subprocess.Popen(
            [sys.executable, "-c", RUNNER, *args, ENGINES[n % 2]],
            stderr=subprocess.PIPE,
            env=env | {PAUSE_ENV: f"{step}:{stage}"},
        )
        assert process.stderr is not None
        said = process.stderr.readline().decode()
        assert f"paused after step {step} {stage}" in said, said + process.stderr.read().decode()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        process.stderr.close()
    run_to_files(plan, trace, output=out, progress=progress, checkpoint=checkpoint)
    assert out.read_text().splitlines() == clean.output_lines()
    assert progress.read_text().splitlines() == clean.progress_lines()
