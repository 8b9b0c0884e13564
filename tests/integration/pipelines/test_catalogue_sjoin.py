"""sjoin's verdicts and rows on the catalogue's pipelines equal Spark's (issue 28, part 3).

For each case (tests/integration/pipelines/catalogue/CASE/, a pipeline project as a team writes it):
`python -m sjoin check --format json CASE` must reject what Spark rejected, with the
diagnostic that stands for Spark's error (SJOIN_CODE), in the SQL file of the flow that
failed; and accept what Spark ran, except where sjoin is stricter on purpose
(SJOIN_IS_STRICTER). For an accepted case, `python -m sjoin run CASE --trace TRACE --backlog`
on the input micro-batches Spark read (TRACE: the rows of the input files of each batch of the
flow, as expected.json recorded them) must give the final rows of every table Spark wrote, and
(`--progress`) the id and watermark of every batch Spark ran. `--backlog`: an SDP run reads
what is waiting when it starts, batch after batch, and Spark runs no no-data batch between
two data batches, only after the last (the recordings show it; sjoin runs a trace file as
batches that each arrive after the one before has run unless told otherwise).

The SQL front end (issue 28, part 2: `api.check_pipeline`) reads each project.

The same questions are asked of each case written as a `.sjoin` spec by hand
(tests/integration/pipelines/equivalents/CASE.sjoin), on the same micro-batches. Two
cases have none: `left_anti_range` (a `.sjoin` LEFT ANTI join is compiled as a left outer
join that keeps the unmatched rows, which Spark runs; the SQL LEFT ANTI join, run as written,
Spark rejects) and `window_key_with_time_column` (a `.sjoin` join on windows keeps no second
event-time column: sjoin's code projects the window and recomputes the time without the
watermark; the SQL keeps both, and Spark fails).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ...conftest import load_script

catalogue = load_script("pipeline_catalogue")
CASES = catalogue.cases()

# The diagnostic that stands for Spark's error, per rejected case (docs/diagnostics.md). None:
# any error: a `.sjoin` LEFT ANTI join is compiled as a left outer join that keeps the
# unmatched rows, but a pipeline's SQL runs as written, and Spark rejects its LEFT ANTI join.
SJOIN_CODE = {
    "aggregate_without_watermark_key": "E023",
    "full_outer_keys_only": "E021",
    "left_anti_range": None,
    "left_outer_no_watermark": "E021",
    "left_outer_one_bound": "E021",
    "left_outer_range_in_function": "E021",
    "no_equality": "E020",
    "nondeterministic_condition": "E026",
    "unknown_column": "E004",
    "watermark_on_non_timestamp": "E010",
    "window_key_with_time_column": "E025",
}

# Cases Spark runs and sjoin refuses on purpose, with the code that says why.
SJOIN_IS_STRICTER = {
    # Spark runs it, and never emits an unmatched order (the recording has no null row)
    "left_outer_preserved_side_unwatermarked": "E028",
    # Spark takes a month as 31 days (the recorded watermarks are 31 days behind)
    "watermark_delay_in_months": "E013",
}


def expected(case: str) -> dict[str, Any]:
    text = (catalogue.CATALOGUE / case / "expected.json").read_text(encoding="utf-8")
    outcome: dict[str, Any] = json.loads(text)
    return outcome


def sjoin(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sjoin", *args], capture_output=True, text=True, timeout=300
    )


EQUIVALENTS = Path(__file__).parent / "equivalents"


def target(case: str, kind: str) -> Path:
    """What sjoin reads: the pipeline project, or the `.sjoin` equivalent."""
    return catalogue.CATALOGUE / case if kind == "pipeline" else EQUIVALENTS / f"{case}.sjoin"


def _check(case: str, kind: str) -> list[dict[str, Any]]:
    """The errors `sjoin check --format json` reports."""
    done = sjoin("check", "--format", "json", str(target(case, kind)))
    assert done.returncode in (0, 1), done.stdout + done.stderr
    diagnostics: list[dict[str, Any]] = json.loads(done.stdout)["diagnostics"]
    errors = [d for d in diagnostics if d["severity"] == "error"]
    assert (done.returncode == 1) == bool(errors), done.stdout
    return errors


def _defining_file(case: str, relation: str) -> Path:
    """The SQL file of the case that creates ``relation`` (a table or a view)."""
    folder = catalogue.CATALOGUE / case / "transformations"
    found = [
        sql
        for sql in sorted(folder.glob("*.sql"))
        if any(
            f"{kind} {name} " in sql.read_text(encoding="utf-8")
            for kind in ("TABLE", "VIEW")
            for name in (relation, f"`{relation}`")
        )
    ]
    assert len(found) == 1, (case, relation, found)
    return found[0]


KINDS = ["pipeline", "equivalent"]
WITHOUT_EQUIVALENT = {"left_anti_range", "window_key_with_time_column"}


def cases_of(kind: str, only: str | None = None) -> list[Any]:
    """The (case, kind) parameters: every case, or those with a `.sjoin` equivalent; only
    the accepted ones sjoin runs, with ``only="run"``."""
    chosen = [c for c in CASES if kind == "pipeline" or c not in WITHOUT_EQUIVALENT]
    if only == "run":
        chosen = [
            c for c in chosen if expected(c)["verdict"] == "accepted" and c not in SJOIN_IS_STRICTER
        ]
    return [pytest.param(c, kind, id=f"{kind}-{c}") for c in chosen]


@pytest.mark.parametrize(("case", "kind"), [p for k in KINDS for p in cases_of(k)])
def test_sjoin_check_gives_sparks_verdict(case: str, kind: str) -> None:
    outcome = expected(case)
    errors = _check(case, kind)
    codes = {d["code"] for d in errors}
    if case in SJOIN_IS_STRICTER:
        assert outcome["verdict"] == "accepted"
        assert SJOIN_IS_STRICTER[case] in codes, errors
    elif outcome["verdict"] == "accepted":
        assert errors == []
    else:
        code = SJOIN_CODE[case]
        assert errors and (code is None or code in codes), (outcome["error"], errors)
        # at the place: in the SQL file of the flow Spark says failed
        where = (
            _defining_file(case, outcome["error"]["flow"])
            if kind == "pipeline"
            else target(case, kind)
        )
        assert any(Path(d["file"]).resolve() == where.resolve() for d in errors), errors


def test_the_equivalents_are_the_cases() -> None:
    have = sorted(p.stem for p in EQUIVALENTS.glob("*.sjoin"))
    assert have == sorted(set(CASES) - WITHOUT_EQUIVALENT)


def test_every_rejected_case_has_its_code() -> None:
    rejected = {c for c in CASES if expected(c)["verdict"] == "rejected"}
    assert set(SJOIN_CODE) == rejected
    assert {c for c in SJOIN_IS_STRICTER if expected(c)["verdict"] != "accepted"} == set()


def trace(case: str) -> list[dict[str, Any]]:
    """The input rows as the flows of the case's tables read them, batch by batch (Spark's
    batch ids: a trace's batch values only group and order the rows)."""
    outcome = expected(case)
    data = catalogue.CATALOGUE / case / "data"
    streams = {p.name for p in data.iterdir()}
    flows = [f for f in outcome["flows"] if f not in streams]
    assert len(flows) == 1, flows  # one query reads the streams
    records = []
    for batch in outcome["flows"][flows[0]]:
        for name in batch["inputs"]:
            stream = name.split("/", 1)[0]
            for line in (data / name).read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                records.append({"batch": batch["batch"], "stream": stream, "row": row})
    return records


@pytest.mark.parametrize(("case", "kind"), [p for k in KINDS for p in cases_of(k, "run")])
def test_sjoin_run_gives_sparks_rows_and_batches(case: str, kind: str, tmp_path: Path) -> None:
    assert _check(case, kind) == []
    outcome = expected(case)
    records = trace(case)
    (tmp_path / "trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    streams = {r["stream"] for r in records}
    done = sjoin(
        "run",
        str(target(case, kind)),
        "--trace",
        str(tmp_path / "trace.jsonl"),
        "--backlog",
        "--progress",
        str(tmp_path / "progress.jsonl"),
        "--output",
        str(tmp_path / "out.jsonl"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    for table, recorded in outcome["tables"].items():
        if table in streams:
            continue
        columns = [name for name, _ in recorded["columns"]]
        spark_rows = Counter(catalogue.canonical_row(r, columns) for r in recorded["rows"])
        sjoin_rows = Counter(
            catalogue.canonical_row(o["row"], columns) for o in out if o["relation"] == table
        )
        assert sjoin_rows == spark_rows, table
    progress = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    (flow,) = [f for f in outcome["flows"] if f not in streams]
    spark_batches = [(b["batch"], b["watermark"]) for b in outcome["flows"][flow]]
    sjoin_batches = [(p["batch"], catalogue.canonical_value(p["watermark"])) for p in progress]
    assert sjoin_batches == [(b, catalogue.canonical_value(w)) for b, w in spark_batches]
