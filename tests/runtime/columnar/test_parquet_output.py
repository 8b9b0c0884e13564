"""`sjoin run --output-format parquet`: a file per relation per batch, holding exactly the
values the JSON lines show, on both engines; hostile relation names stay inside the folder;
a new run replaces an earlier run's batch files and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from sjoin.cli.main import main
from sjoin.compiler.vocabulary.types import ARRAY_STRING, BIGINT
from sjoin.runtime import ENGINES, EngineName, UsageError, run, run_to_files
from sjoin.runtime.columnar.parquet_out import folder_name, unsupported_column
from sjoin.runtime.engine.values import json_converter

from ...conftest import EXAMPLES
from ..harness import plan_of


def _micros(stamp: Any) -> int:
    return int(pl.Series([stamp]).dt.epoch("us").item())


def _json_ready(frame: pl.DataFrame, kinds: list[str]) -> list[dict[str, Any]]:
    """Rows read back from Parquet, as the JSON-ready dicts `run()` gives."""
    converted = []
    for column, kind in zip(frame.columns, kinds, strict=True):
        values = frame.get_column(column)
        if kind == "timestamp":
            values = values.dt.epoch("us")
        elif kind == "date" or kind == "interval":
            values = values.cast(pl.Int64)
        elif kind == "window":
            values = pl.Series(
                [
                    None if v is None else (_micros(v["start"]), _micros(v["end"]))
                    for v in values.to_list()
                ],
                dtype=pl.Object,
            )
        convert = json_converter(kind)
        converted.append(
            [None if v is None or convert is None else convert(v) for v in values.to_list()]
            if convert is not None
            else values.to_list()
        )
    return [dict(zip(frame.columns, row, strict=True)) for row in zip(*converted, strict=True)]


def _read_back(directory: Path, plan: Any) -> dict[tuple[int, str], list[dict[str, Any]]]:
    found = {}
    for relation in [n.name for n in plan.nodes if n.name not in {t.name for t in plan.tables}]:
        folder = directory / folder_name(relation)
        if not folder.is_dir():
            continue
        node = plan.node(relation)
        kinds = [o.type.name for o in node.output]
        for path in sorted(folder.glob("batch-*.parquet")):
            batch = int(path.stem.split("-")[1])
            found[(batch, relation)] = _json_ready(pl.read_parquet(path), kinds)
    return found


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_parquet_output_holds_what_the_json_lines_show(
    spec: Path, engine: EngineName, tmp_path: Path
) -> None:
    plan = plan_of(spec.read_text())
    trace = spec.with_suffix(".trace.jsonl")
    expected: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for batch in run(plan, trace, engine="reference").batches:
        for relation, row in batch.rows:
            expected.setdefault((batch.batch, relation), []).append(row)
    summary = run_to_files(
        plan, trace, output=tmp_path / "out", output_format="parquet", engine=engine
    )
    assert summary.rows == sum(len(rows) for rows in expected.values())
    assert _read_back(tmp_path / "out", plan) == expected


HOSTILE = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, d DECIMAL(10,2)) watermark t delay 1 second
stream r (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join `{name}` = l AS L INNER JOIN r AS R ON L.k = R.k
  AND L.t BETWEEN R.t - INTERVAL 1 SECOND AND R.t
  SELECT L.k AS `a/b`, L.t AS `..`, L.d AS d, R.t AS rt, window(L.t, '1 second') AS w
"""


@pytest.mark.parametrize("name", ["../up", "a/b", "..", ".", "%41", "x\\y"])
def test_hostile_relation_names_stay_inside_the_output_folder(tmp_path: Path, name: str) -> None:
    plan = plan_of(HOSTILE.format(name=name.replace("`", "``")))
    trace = tmp_path / "t.jsonl"
    trace.write_text(
        '{"batch": 0, "stream": "l", "row": {"k": 1, "t": "2026-01-01T00:00:00.500Z", "d": 1.25}}\n'
        '{"batch": 0, "stream": "r", "row": {"k": 1, "t": "2026-01-01T00:00:01Z"}}\n'
    )
    out = tmp_path / "box" / "out"
    run_to_files(plan, trace, output=out, output_format="parquet")
    files = [p for p in (tmp_path / "box").rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].parent.parent == out, files
    assert files[0].parent.name == folder_name(name)
    frame = pl.read_parquet(files[0])
    assert frame.columns == ["a/b", "..", "d", "rt", "w"]
    assert frame.dtypes[2] == pl.Decimal(10, 2)
    assert _read_back(out, plan) == {
        (0, name): [row for _, row in run(plan, trace).batches[0].rows]
    }


def test_a_new_run_replaces_old_batch_files_and_nothing_else(tmp_path: Path) -> None:
    spec = EXAMPLES[0]
    plan = plan_of(spec.read_text())
    out = tmp_path / "out"
    relation = plan.joins[0].name
    stale = out / folder_name(relation) / "batch-9999.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    keep = out / folder_name(relation) / "notes.txt"
    keep.write_text("mine")
    run_to_files(plan, spec.with_suffix(".trace.jsonl"), output=out, output_format="parquet")
    assert not stale.exists() and keep.read_text() == "mine"


def test_unsupported_types_and_options_are_refused(tmp_path: Path) -> None:
    assert unsupported_column([("a", BIGINT), ("x", ARRAY_STRING)]) == ("x", ARRAY_STRING)
    spec = EXAMPLES[0]
    plan = plan_of(spec.read_text())
    with pytest.raises(UsageError, match="give it with --output"):
        run_to_files(plan, spec.with_suffix(".trace.jsonl"), output_format="parquet")
    a_file = tmp_path / "f"
    a_file.write_text("")
    with pytest.raises(UsageError, match="not a directory"):
        run_to_files(plan, spec.with_suffix(".trace.jsonl"), output=a_file, output_format="parquet")
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(spec),
            "--trace",
            str(spec.with_suffix(".trace.jsonl")),
            "--output-format",
            "parquet",
        ],
    )
    assert result.exit_code == 2 and "give it with --output" in result.stderr


def test_a_checkpoint_resumes_only_with_the_output_format_that_made_it(tmp_path: Path) -> None:
    from sjoin.runtime import CheckpointError

    spec = EXAMPLES[0]
    plan = plan_of(spec.read_text())
    trace = spec.with_suffix(".trace.jsonl")
    for made, then in (("jsonl", "parquet"), ("parquet", "jsonl")):
        checkpoint = tmp_path / f"chk-{made}"
        out = {"jsonl": tmp_path / f"{made}.jsonl", "parquet": tmp_path / f"{made}-pq"}
        run_to_files(plan, trace, output=out[made], output_format=made, checkpoint=checkpoint)
        with pytest.raises(CheckpointError, match="resume it with the same --output-format"):
            run_to_files(plan, trace, output=out[then], output_format=then, checkpoint=checkpoint)
