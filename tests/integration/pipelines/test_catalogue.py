"""The catalogue of pipelines (tests/integration/pipelines/catalogue/) is well formed, its
recordings are canonical and say what docs/pipelines.md says, without running Spark (that is
test_catalogue_on_spark.py)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from ...conftest import ROOT, load_script

catalogue = load_script("pipeline_catalogue")
CASES = catalogue.cases()


def expected(case: str) -> dict[str, Any]:
    text = (catalogue.CATALOGUE / case / "expected.json").read_text(encoding="utf-8")
    outcome: dict[str, Any] = json.loads(text)
    return outcome


def streams(case: str) -> list[str]:
    return sorted(p.name for p in (catalogue.CATALOGUE / case / "data").iterdir())


def test_the_catalogue_has_its_cases() -> None:
    assert len(CASES) >= 20
    verdicts = {expected(case)["verdict"] for case in CASES}
    assert verdicts == {"accepted", "rejected"}


@pytest.mark.parametrize("case", CASES)
def test_case_is_a_pipeline_project(case: str) -> None:
    folder = catalogue.CATALOGUE / case
    spec = yaml.safe_load((folder / "spark-pipeline.yml").read_text(encoding="utf-8"))
    # the harness adds storage and database to its copy; the shuffle stays small
    assert spec["name"] == case and "storage" not in spec and "database" not in spec
    assert spec["libraries"] == [{"glob": {"include": "transformations/**"}}]
    assert 1 <= int(spec["configuration"]["spark.sql.shuffle.partitions"]) <= 2
    files = sorted(p.name for p in (folder / "transformations").iterdir())
    assert "inputs.py" in files and "streams.sql" in files and len(files) >= 3
    for stream in streams(case):
        names = sorted(p.name for p in (folder / "data" / stream).iterdir())
        # file NN is read in micro-batch NN: numbered from 00 without a gap
        assert names == [f"{n:02d}.json" for n in range(len(names))], (case, stream)


def _pinned_spark() -> str:
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [d for d in dev["optional-dependencies"]["dev"] if d.startswith("pyspark")]
    return pins[0].split("==")[1]


@pytest.mark.parametrize("case", CASES)
def test_recording_is_canonical(case: str) -> None:
    """As the script writes it (sorted keys, rows sorted), from the Spark the tests pin."""
    path = catalogue.CATALOGUE / case / "expected.json"
    outcome = expected(case)
    assert catalogue.dumps(outcome) == path.read_text(encoding="utf-8")
    assert outcome["spark"] == _pinned_spark()
    if outcome["verdict"] == "rejected":
        assert set(outcome) == {"spark", "verdict", "error"}
        assert outcome["error"]["condition"] and outcome["error"]["flow"]
        return
    assert set(outcome) == {"spark", "verdict", "tables", "flows"}
    for table in outcome["tables"].values():
        names = [name for name, _ in table["columns"]]
        assert all(list(row) == sorted(names) for row in table["rows"])


@pytest.mark.parametrize("case", [c for c in CASES if expected(c)["verdict"] == "accepted"])
def test_recorded_batches_read_each_input_file_once(case: str) -> None:
    """What the recording says of the micro-batches: each stream's flow read its files one
    per batch, in order (`maxFilesPerTrigger` 1 on the file source); each other flow read
    each input file at most once, batch after batch with no no-data batch between two data
    batches (an SDP run reads a backlog: test_catalogue_sjoin.py runs sjoin with --backlog),
    and at most one no-data batch after them."""
    outcome = expected(case)
    data = catalogue.CATALOGUE / case / "data"
    for stream in streams(case):
        files = sorted(f"{stream}/{p.name}" for p in (data / stream).iterdir())
        batches = outcome["flows"][stream]
        assert [b["inputs"] for b in batches] == [[f] for f in files]
        assert [b["batch"] for b in batches] == list(range(len(files)))
    for flow, batches in outcome["flows"].items():
        if flow in streams(case):
            continue
        read = [f for b in batches for f in b["inputs"]]
        assert len(read) == len(set(read)), flow
        assert [b["batch"] for b in batches] == list(range(len(batches)))
        data_batches = [b["batch"] for b in batches if b["inputs"]]
        assert data_batches == list(range(len(data_batches))), flow
        assert len(batches) - len(data_batches) <= 1, flow


def _doc_rows() -> dict[str, str]:
    """The catalogue table of docs/pipelines.md: each case's row, by the case's name."""
    doc = (ROOT / "docs" / "pipelines.md").read_text(encoding="utf-8")
    rows: dict[str, str] = {}
    for line in doc.splitlines():
        found = re.match(
            r"\| \[`([a-z0-9_]+)`\]\(\.\./tests/integration/pipelines/catalogue/\1/\) \|", line
        )
        if found:
            assert found.group(1) not in rows, f"{found.group(1)} twice"
            rows[found.group(1)] = line
    return rows


def test_docs_list_every_case_with_sparks_verdict() -> None:
    rows = _doc_rows()
    assert sorted(rows) == CASES
    for case, row in rows.items():
        outcome = expected(case)
        verdict = row.rstrip(" |").rsplit(" | ", 1)[1]
        if outcome["verdict"] == "accepted":
            assert verdict.startswith("accepted"), case
        else:
            assert verdict.startswith(f"rejected: `{outcome['error']['condition']}`"), case


def test_the_project_command_makes_a_runnable_copy(tmp_path: Path) -> None:
    case = catalogue.CATALOGUE / CASES[0]
    spec = catalogue.project(case, tmp_path / "copy")
    loaded = yaml.safe_load(spec.read_text(encoding="utf-8"))
    assert loaded["storage"] == (tmp_path / "copy" / "pipeline-storage").as_uri()
    assert loaded["database"] == f"cat_{CASES[0]}"
    assert not (tmp_path / "copy" / "expected.json").exists()
    for stream in streams(CASES[0]):
        files = sorted((tmp_path / "copy" / "data" / stream).iterdir())
        times = [int(f.stat().st_mtime) for f in files]
        assert times == [catalogue.BASE_MTIME + n for n in range(len(files))]
