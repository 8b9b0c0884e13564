"""A re-sealed ``state.pkl``: every field of the snapshot mutated in turn (wrong type, null,
deleted, an extra part, a wrong length), sealed again with a valid checksum, as whoever can
write the checkpoint directory could; the restart must refuse it cleanly (CheckpointError)
or, where the mutation leaves a snapshot of the right shape, run to the end; never any other
exception (the CLI's E999).  Mutations no field accepts must be refused.  Each accepted one
runs on both engines."""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.api import check_text
from sjoin.cli.main import main
from sjoin.runtime import CheckpointError, RunError, run_to_files
from sjoin.runtime.checkpoints.checkpoint import Checkpoint

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

AGGREGATE = """spark 4.3
stream s (k STRING, g BIGINT, t TIMESTAMP, x DOUBLE, i INT, b BOOLEAN, d DECIMAL(6, 2))
  watermark t delay 10 seconds
aggregate a = s AS S
  GROUP BY window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS), S.k
  SELECT S.k AS k, window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS) AS w, count(*) AS n,
         sum(S.x) AS sx, sum(S.d) AS sd, avg(S.i) AS ai, min(S.b) AS lb, max(S.g) AS mg,
         approx_count_distinct(S.x) AS dx
  OUTPUT MODE update
"""


def _aggregate_trace(path: Path) -> Path:
    rnd = random.Random(24)
    lines = []
    for batch in range(6):
        for _ in range(4):
            row = {
                "k": rnd.choice(["a", "b", "é"]),
                "g": rnd.randint(-3, 3),
                "t": f"2026-01-01T00:00:{batch * 8 + rnd.randint(0, 7):02d}Z",
                "x": rnd.choice([1.5, "NaN", None, 2.0]),
                "i": rnd.randint(-5, 5),
                "b": rnd.choice([True, False, None]),
                "d": rnd.choice([1.25, -3.5, None]),
            }
            lines.append(json.dumps({"batch": batch, "stream": "s", "row": row}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _head(trace: Path, batches: int, out: Path) -> Path:
    lines = [x for x in trace.read_text().splitlines() if json.loads(x)["batch"] < batches]
    out.write_text("\n".join(lines) + "\n")
    return out


# ---------------------------------------------------------------------- the mutations


Path_ = tuple[Any, ...]  # keys and indexes from the snapshot's top down


def _paths(value: Any, path: Path_ = ()) -> Iterator[Path_]:
    """Every node (containers and leaves); of a long list, its first and last elements
    (the elements of a list all have one shape)."""
    yield path
    if isinstance(value, dict):
        for key in value:
            yield from _paths(value[key], (*path, key))
    elif isinstance(value, (list, tuple)):
        indexes = range(len(value)) if len(value) <= 2 else (0, len(value) - 1)
        for i in indexes:
            yield from _paths(value[i], (*path, i))


def _get(data: Any, path: Path_) -> Any:
    for part in path:
        data = data[part]
    return data


def _set(data: Any, path: Path_, make: Callable[[Any], Any]) -> Any:
    """A copy of ``data`` with the node at ``path`` replaced by ``make(node)`` (tuples are
    rebuilt on the way up); ``make`` may return ``_DELETE``."""
    if not path:
        return make(data)
    head, rest = path[0], path[1:]
    child = _set(data[head], rest, make)
    if isinstance(data, dict):
        out = dict(data)
        if child is _DELETE:
            del out[head]
        else:
            out[head] = child
        return out
    items = list(data)
    if child is _DELETE:
        del items[head]
    else:
        items[head] = child
    return tuple(items) if isinstance(data, tuple) else items


_DELETE: Any = object()
# values no field of a snapshot takes: a mutation to one of these must be refused
FOREIGN = {"bytes": b"x", "frozenset": frozenset({1}), "bytearray": bytearray(b"x")}
# values some fields take: refused or, where the field takes them, run
PLAIN = {
    "None": None,
    "str": "x",
    "int": 7,
    "negative": -1,
    "huge int": 2**70,
    "giant int": 10**5000,  # beyond the digits Python turns into text
    "long str": "x" * 100_000,
    "float": 1.5,
    "nan": float("nan"),
    "bool": True,
    "decimal": Decimal("1.5"),
    "empty list": [],
    "empty tuple": (),
    "empty dict": {},
}


def _mutations(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(label, mutated snapshot, must be refused) for each node and mutation."""
    for path in _paths(data):
        if not path:
            continue
        node = _get(data, path)
        parent = _get(data, path[:-1])
        where = "/".join(map(str, path))
        for name, value in FOREIGN.items():
            yield f"{where} := {name}", _set(data, path, lambda _, v=value: v), True
        for name, value in PLAIN.items():
            yield f"{where} := {name}", _set(data, path, lambda _, v=value: v), False
        yield f"{where} wrapped in a list", _set(data, path, lambda v: [v]), False
        yield f"{where} wrapped in a tuple", _set(data, path, lambda v: (v,)), False
        # deleted: a dict's part is needed (but for an output's offset: a run may add an
        # output file); an element of a tuple is too (rows, keys, pairs); a list's may not be
        must = isinstance(parent, tuple) or (isinstance(parent, dict) and path[0] != "offsets")
        yield f"{where} deleted", _set(data, path, lambda _: _DELETE), must
        if isinstance(node, dict):
            yield f"{where} + a part", _set(data, path, lambda v: {**v, "zz": 1}), True
            if node:
                first = next(iter(node))
                renamed = {("zz" if k == first else k): v for k, v in node.items()}
                yield f"{where} part renamed", _set(data, path, lambda _, r=renamed: r), True
        if isinstance(node, tuple):
            yield f"{where} + an element", _set(data, path, lambda v: (*v, None)), True
            if node:
                yield f"{where} as a list", _set(data, path, lambda v: list(v)), True
        if isinstance(node, list):
            yield f"{where} + null", _set(data, path, lambda v: [*v, None]), True
            if node:
                yield f"{where} as a tuple", _set(data, path, lambda v: tuple(v)), False


# ---------------------------------------------------------------------- the runs


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A folder in memory where there is one (``/dev/shm``): each run syncs its files, and
    thousands of runs on a disk would spend minutes in fsync alone."""
    if os.access("/dev/shm", os.W_OK):
        with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="sjoin-") as folder:
            yield Path(folder)
    else:
        yield tmp_path


CASES = {
    # a left outer join, JSON lines to files (offsets of both files)
    "ad_attribution": (
        (EXAMPLES / "ad_attribution.sjoin").read_text(),
        EXAMPLES / "ad_attribution.trace.jsonl",
        "jsonl",
    ),
    # windows projected into a join's sides
    "iot_window_join": (
        (EXAMPLES / "iot_window_join.sjoin").read_text(),
        EXAMPLES / "iot_window_join.trace.jsonl",
        "jsonl",
    ),
    # a chain of joins and an aggregate, two queries
    "checkout_funnel": (
        (EXAMPLES / "checkout_funnel.sjoin").read_text(),
        EXAMPLES / "checkout_funnel.trace.jsonl",
        "jsonl",
    ),
    # every accumulator, a sliding window key, Parquet output (the pending batch's outputs)
    "aggregate": (AGGREGATE, None, "parquet"),
}


def _run(plan: Any, trace: Path, work: Path, fmt: str, engine: str) -> None:
    run_to_files(
        plan,
        trace,
        output=work / ("out" if fmt == "parquet" else "o.jsonl"),
        progress=work / "p.jsonl",
        checkpoint=work / "chk",
        output_format=fmt,  # type: ignore[arg-type]
        engine=engine,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_mutation_of_a_resealed_snapshot_is_refused_or_runs(scratch: Path, case: str) -> None:
    tmp_path = scratch
    text, trace, fmt = CASES[case]
    plan = check_text(text, f"{case}.sjoin").plan
    assert plan is not None
    if trace is None:
        trace = _aggregate_trace(tmp_path / "trace.jsonl")
    base = tmp_path / "base"
    base.mkdir()
    _run(plan, _head(trace, 3, tmp_path / "head.jsonl"), base, fmt, "reference")
    snapshot = Checkpoint(base / "chk").load()
    assert snapshot is not None
    work = tmp_path / "work"
    outcomes = {"refused": 0, "ran": 0}
    for label, mutated, must_refuse in _mutations(snapshot):
        engines = ["reference", "columnar"]
        for engine in engines:
            if work.exists():
                shutil.rmtree(work)
            shutil.copytree(base, work)
            with Checkpoint(work / "chk") as checkpoint:
                checkpoint.commit(mutated)
            try:
                _run(plan, trace, work, fmt, engine)
            except CheckpointError as err:
                assert str(work / "chk") in str(err), (label, err)
                outcomes["refused"] += 1
                break  # refused before any engine restores: the other engine would be too
            except RunError as err:  # e.g. an ANSI overflow of a mutated but typed number
                assert not must_refuse, (label, err)
                outcomes["ran"] += 1
            else:
                assert not must_refuse, f"{label}: accepted"
                outcomes["ran"] += 1
    assert outcomes["refused"] > 10 * outcomes["ran"], outcomes


def test_a_refused_mutation_exits_1_from_the_cli(scratch: Path) -> None:
    tmp_path = scratch
    spec = EXAMPLES / "ad_attribution.sjoin"
    trace = EXAMPLES / "ad_attribution.trace.jsonl"
    plan = check_text(spec.read_text(), str(spec)).plan
    base = tmp_path / "base"
    base.mkdir()
    _run(plan, _head(trace, 3, tmp_path / "head.jsonl"), base, "jsonl", "reference")
    snapshot = Checkpoint(base / "chk").load()
    assert snapshot is not None
    refused = [(label, m) for label, m, must in _mutations(snapshot) if must]
    work = tmp_path / "work"
    for label, mutated in random.Random(24).sample(refused, 25):
        if work.exists():
            shutil.rmtree(work)
        shutil.copytree(base, work)
        with Checkpoint(work / "chk") as checkpoint:
            checkpoint.commit(mutated)
        result = CliRunner().invoke(
            main,
            [
                "run",
                str(spec),
                "--trace",
                str(trace),
                "--checkpoint",
                str(work / "chk"),
                "--output",
                str(work / "o.jsonl"),
                "--progress",
                str(work / "p.jsonl"),
            ],
        )
        assert result.exit_code == 1, (label, result.stderr)
        assert "E999" not in result.stderr and "malformed" in result.stderr, (label, result.stderr)


# ---------------------------------------------------------------------- no false refusal


def _every_run() -> Iterator[tuple[str, Any, Any, str | None]]:
    from ..harness import trace_records
    from ..scenarios import SCENARIOS

    for s in SCENARIOS:
        yield s.name, s.plan, trace_records(s.batches), s.relation
    for spec in sorted(EXAMPLES.glob("*.sjoin")):
        yield (
            spec.stem,
            check_text(spec.read_text(), str(spec)).plan,
            spec.with_suffix(".trace.jsonl"),
            None,
        )


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_every_snapshot_a_run_commits_passes_the_check(
    scratch: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """The check refuses no snapshot sjoin writes: each one committed by every scenario and
    example, on either engine (and with a Parquet output, the pending batch's outputs), is
    checked as it is committed."""
    from sjoin.runtime.checkpoints.snapshot import check_snapshot
    from sjoin.runtime.query import Engine

    shapes: list[Engine] = []
    committed = Checkpoint.commit

    def commit(self: Checkpoint, data: dict[str, Any]) -> None:
        check_snapshot(data, shapes[-1], "pending_outputs" in data)
        committed(self, data)

    monkeypatch.setattr(Checkpoint, "commit", commit)
    count = 0
    for i, (name, plan, trace, relation) in enumerate(_every_run()):
        shapes.append(Engine(plan, relation))
        if not isinstance(trace, Path):
            path = scratch / f"{i}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in trace))
            trace = path
        for fmt in ("jsonl", "parquet"):
            work = scratch / f"{i}-{name}-{fmt}"
            run_to_files(
                plan,
                trace,
                relation=relation,
                output=work / "out",
                checkpoint=work / "chk",
                output_format=fmt,  # type: ignore[arg-type]
                engine=engine,  # type: ignore[arg-type]
            )
            count += 1
    assert count > 50
