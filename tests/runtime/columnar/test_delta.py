"""Delta both ways in `sjoin run`, without Spark: a trace written as Delta tables replays the
trace's batches exactly; versions are cut into micro-batches as Spark's Delta source admits
files; every table a replay cannot give exactly is refused with the reason; Delta output
holds what the JSON lines show, and neither a restart nor a new run writes a row twice.
(What Spark does with the same tables: tests/integration/delta/test_delta_on_spark.py.)"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from deltalake import DeltaTable, write_deltalake

from sjoin.cli.main import main
from sjoin.compiler.backends.connectors import delta_connector, packages
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.jvm.delta_driver import delta_plan, read_table, write_trace_tables
from sjoin.runtime import ENGINES, EngineName, RunError, UsageError, run, run_to_files
from sjoin.runtime.columnar.delta import (
    _admitted,
    _File,
    read_delta_trace,
    replay_limits,
)
from sjoin.runtime.columnar.parquet_out import folder_name
from sjoin.runtime.io.trace import schemas_of

from ...conftest import EXAMPLES
from ..harness import plan_of

SPEC = """spark 4.2
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 second{l_from}
stream r (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = l AS a INNER JOIN r AS b ON a.k = b.k AND a.t BETWEEN b.t - INTERVAL 1 SECOND AND b.t
"""


def _plan(l_from: str = "") -> Any:
    return plan_of(SPEC.format(l_from=l_from))


def _append(path: Path, ks: list[int], *, files: int = 1, stream: str = "l") -> None:
    """One commit of rows ``ks`` to a table of stream ``stream``, in ``files`` files (written
    as commits of their own, then joined into one)."""
    first = DeltaTable(str(path)).version() + 1 if (path / "_delta_log").is_dir() else 0
    size = max(1, -(-len(ks) // files))
    for start in range(0, max(len(ks), 1), size):
        part = ks[start : start + size]
        stamps = pl.Series([k * 1_000_000 for k in part], dtype=pl.Int64)
        data: dict[str, Any] = {
            "k": pl.Series(part, dtype=pl.Int64),
            "t": stamps.cast(pl.Datetime("us", "UTC")),
        }
        if stream == "l":
            data["v"] = pl.Series([f"v{k}" for k in part], dtype=pl.String)
        write_deltalake(str(path), pl.DataFrame(data).to_arrow(), mode="append")
    log = path / "_delta_log"
    last = DeltaTable(str(path)).version()
    actions = []
    for version in range(first, last + 1):
        commit = log / f"{version:020d}.json"
        lines = commit.read_text().splitlines()
        actions += [line for line in lines if version == first or '"add"' in line[:8]]
        if version != first:
            commit.unlink()
    (log / f"{first:020d}.json").write_text("".join(line + "\n" for line in actions))


def _shape(trace: Any) -> list[tuple[int, dict[str, list[int]]]]:
    """(version, {stream: keys}) per replayed micro-batch."""
    out = []
    for batch in trace.batches:
        rows = {s: sorted(int(k) for k, *_ in f.to_rows()) for s, f in batch.rows.items()}
        out.append((batch.value, rows))
    return out


# the job started on version 0 of every table: each later commit is a micro-batch of its own
FROM_0 = {"*": 0}


def _read(directory: Path, plan: Any, at_start: Any = FROM_0) -> Any:
    from sjoin.runtime import delta_options

    return read_delta_trace(directory, schemas_of(plan), delta_options(plan), at_start=at_start)


# ------------------------------------------------------------------------ the replay


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_trace_as_delta_tables_replays_its_batches(spec: Path, tmp_path: Path) -> None:
    plan = plan_of(spec.read_text())
    trace = spec.with_suffix(".trace.jsonl")
    write_trace_tables(plan, trace, tmp_path / "tables")
    # a Delta trace holds the streams only: its static tables (a `table`) are empty, as the
    # JSON-lines trace without their lines
    lines = [t for t in trace.read_text().splitlines() if "table" not in json.loads(t)]
    expected = run(plan, lines, engine="reference").batches
    got = run(plan, tmp_path / "tables", delta_at_start=FROM_0).batches
    assert [(b.batch, b.rows, b.progress) for b in got] == [
        (b.batch, b.rows, b.progress) for b in expected
    ]
    assert len(got) > len({b.trace_batch for b in got})  # no-data batches came too


def test_a_version_is_a_micro_batch_even_without_rows(tmp_path: Path) -> None:
    plan = _plan()
    DeltaTable.create(
        str(tmp_path / "l"),
        schema=pl.DataFrame(schema={"k": pl.Int64, "t": pl.Datetime("us", "UTC"), "v": pl.String})
        .to_arrow()
        .schema,
    )
    _append(tmp_path / "r", [1])  # version 0 of r: one row
    _append(tmp_path / "l", [1])  # version 1 of l
    write_deltalake(
        str(tmp_path / "l"),
        pl.DataFrame(
            schema={"k": pl.Int64, "t": pl.Datetime("us", "UTC"), "v": pl.String}
        ).to_arrow(),
        mode="append",
    )  # version 2: no file
    assert _shape(_read(tmp_path, plan)) == [
        (0, {"l": [], "r": [1]}),  # the empty first version is a batch (Spark 4.2 + Delta 4.4)
        (1, {"l": [1]}),
        (2, {"l": []}),
    ]
    # a query that reads r only runs in round 0; one that reads l runs in every round
    result = run(plan, tmp_path, delta_at_start=FROM_0)
    assert [b.trace_batch for b in result.batches if b.data] == [0, 1, 2]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ("", [(0, [0, 1, 2, 3, 4]), (1, [5, 6, 7])]),
        ("maxFilesPerTrigger = '2'", [(0, [0, 1]), (0, [2, 3]), (0, [4]), (1, [5, 6]), (1, [7])]),
        ("maxFilesPerTrigger = '5'", [(0, [0, 1, 2, 3, 4]), (1, [5, 6, 7])]),
        # the file that reaches the byte limit is still admitted, the next one is not
        ("maxBytesPerTrigger = '1'", [(0, [k]) for k in range(5)] + [(1, [k]) for k in (5, 6, 7)]),
        ("maxBytesPerTrigger = '1g'", [(0, [0, 1, 2, 3, 4]), (1, [5, 6, 7])]),
        (
            "maxFilesPerTrigger = '4', maxBytesPerTrigger = '10g'",
            [(0, [0, 1, 2, 3]), (0, [4]), (1, [5, 6, 7])],
        ),
    ],
)
def test_versions_are_cut_as_the_delta_source_admits_files(
    options: str, expected: list[tuple[int, list[int]]], tmp_path: Path
) -> None:
    l_from = f"\nfrom delta (path = 'x'{', ' + options if options else ''})"
    plan = _plan(l_from)
    _append(tmp_path / "l", [0, 1, 2, 3, 4], files=5)  # version 0: five files
    _append(tmp_path / "l", [5, 6, 7], files=3)  # version 1: three files
    shape = [(v, rows["l"]) for v, rows in _shape(_read(tmp_path, plan))]
    assert shape == expected


def test_admission_counts_files_and_bytes_before_taking_each() -> None:
    files = [_File(Path(f"f{i}"), size) for i, size in enumerate([5, 5, 5, 5])]
    limits = replay_limits("s", {"maxBytesPerTrigger": "8"})
    assert [[f.path.name for f in part] for part in _admitted(files, limits)] == [
        ["f0", "f1"],
        ["f2", "f3"],
    ]
    assert _admitted([], limits) == [[]]
    assert replay_limits("s", {}).max_files == 1000
    assert replay_limits("s", {"MAXFILESPERTRIGGER": "7"}).max_files == 7


def test_the_first_version_is_read_in_sparks_file_order(tmp_path: Path) -> None:
    plan = _plan()
    _append(tmp_path / "l", [0, 1, 2], files=3)
    log = tmp_path / "l" / "_delta_log" / f"{0:020d}.json"
    actions = [json.loads(line) for line in log.read_text().splitlines()]
    adds = [a for a in actions if "add" in a]
    for add, when in zip(adds, (30, 10, 20), strict=True):  # modification times out of order
        add["add"]["modificationTime"] = when
    log.write_text("".join(json.dumps(a) + "\n" for a in actions))
    frame = _read(tmp_path, plan).batches[0].rows["l"]
    assert [k for k, *_ in frame.to_rows()] == [1, 2, 0]


def _rewrite(table: Path, version: int, change: Any) -> None:
    log = table / "_delta_log" / f"{version:020d}.json"
    actions = [json.loads(line) for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(a) + "\n" for a in change(actions)))


def _with(key: str, value: Any) -> Any:
    def change(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for action in actions:
            if "add" in action:
                action["add"][key] = value
        return actions

    return change


def _metadata(update: Any) -> Any:
    def change(actions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for action in actions:
            if "metaData" in action:
                update(action["metaData"])
        return actions

    return change


def _remove_first_file(actions: list[dict[str, Any]], table: Path) -> dict[str, Any]:
    first = json.loads((table / "_delta_log" / f"{0:020d}.json").read_text().splitlines()[-1])
    return {"remove": {"path": first["add"]["path"], "dataChange": True}}


REFUSED = {
    "partitioned": (0, _metadata(lambda m: m.update(partitionColumns=["v"])), "partitioned"),
    "column mapping": (
        0,
        _metadata(lambda m: m["configuration"].update({"delta.columnMapping.mode": "name"})),
        "name column mapping",
    ),
    "deletion vector": (1, _with("deletionVector", {"storageType": "u"}), "deletion vector"),
    "remote file": (1, _with("path", "s3://bucket/part.parquet"), "not on this machine"),
    "missing file": (1, _with("path", "gone.parquet"), "data file the Delta log names is missing"),
    "schema change": (
        1,
        lambda a: [
            *a,
            {
                "metaData": {
                    **_meta0,
                    "schemaString": _meta0["schemaString"].replace("long", "integer"),
                }
            },
        ],
        "changes the table's schema",
    ),
    "lacks a column": (
        0,
        _metadata(lambda m: m.update(schemaString=m["schemaString"].replace('"v"', '"w"'))),
        "the table lacks v",
    ),
    "not json": (1, lambda a: "x", "is not JSON"),
}
_meta0: dict[str, Any] = {}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_table_a_replay_cannot_read_exactly_is_refused(case: str, tmp_path: Path) -> None:
    version, change, message = REFUSED[case]
    plan = _plan()
    table = tmp_path / "l"
    _append(table, [1])
    _append(table, [2])
    global _meta0
    _meta0 = next(
        json.loads(line)["metaData"]
        for line in (table / "_delta_log" / f"{0:020d}.json").read_text().splitlines()
        if "metaData" in line
    )
    if case == "not json":
        (table / "_delta_log" / f"{1:020d}.json").write_text("{not json\n")
    else:
        _rewrite(table, version, change)
    with pytest.raises(RunError, match=message):
        _read(tmp_path, plan)


def test_a_log_without_its_first_commits_is_refused(tmp_path: Path) -> None:
    _append(tmp_path / "l", [1])
    _append(tmp_path / "l", [2])
    (tmp_path / "l" / "_delta_log" / f"{0:020d}.json").unlink()
    (tmp_path / "l" / "_delta_log" / f"{1:020d}.checkpoint.parquet").write_bytes(b"")
    with pytest.raises(RunError, match="lacks the commit of version 0 \\(cleaned up behind"):
        _read(tmp_path, _plan())


@pytest.mark.parametrize(
    ("options", "outcome"),
    [
        ("", "deletes rows, which Spark's Delta source refuses; set ignoreDeletes"),
        ("ignoreDeletes = 'true'", [(0, [1]), (1, [2]), (2, [])]),
        ("skipChangeCommits = 'true'", [(0, [1]), (1, [2]), (2, [])]),
        ("ignoreChanges = 'true'", [(0, [1]), (1, [2]), (2, [])]),
    ],
)
def test_a_commit_that_deletes_rows_is_refused_unless_the_options_say(
    options: str, outcome: Any, tmp_path: Path
) -> None:
    plan = _plan(f"\nfrom delta (path = 'x'{', ' + options if options else ''})")
    table = tmp_path / "l"
    _append(table, [1])
    _append(table, [2])
    _append(table, [3])
    _rewrite(table, 2, lambda a: [x for x in a if "add" not in x] + [_remove_first_file(a, table)])
    if isinstance(outcome, str):
        with pytest.raises(RunError, match=outcome):
            _read(tmp_path, plan)
    else:
        assert [(v, r["l"]) for v, r in _shape(_read(tmp_path, plan))] == outcome


@pytest.mark.parametrize(
    ("options", "outcome"),
    [
        ("", "changes rows that were read before"),
        ("ignoreDeletes = 'true'", "changes rows that were read before"),
        ("ignoreChanges = 'true'", [(0, [1]), (1, [2]), (2, [3])]),
        ("skipChangeCommits = 'true'", [(0, [1]), (1, [2]), (2, [])]),
    ],
)
def test_a_commit_that_rewrites_rows_is_refused_unless_the_options_say(
    options: str, outcome: Any, tmp_path: Path
) -> None:
    plan = _plan(f"\nfrom delta (path = 'x'{', ' + options if options else ''})")
    table = tmp_path / "l"
    _append(table, [1])
    _append(table, [2])
    _append(table, [3])
    _rewrite(table, 2, lambda a: [*a, _remove_first_file(a, table)])
    if isinstance(outcome, str):
        with pytest.raises(RunError, match=outcome):
            _read(tmp_path, plan)
    else:
        assert [(v, r["l"]) for v, r in _shape(_read(tmp_path, plan))] == outcome


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("startingVersion = '-1'", "startingVersion must be a version \\(0 or more\\)"),
        ("startingVersion = 'LATEST'", "startingVersion must be a version"),
        ("startingVersion = '2'", "startingVersion 2 is after the table's version when the job"),
        ("startingTimestamp = '2026-01-01'", "startingTimestamp cannot be replayed"),
        ("readChangeFeed = 'true'", "readChangeFeed cannot be replayed"),
        ("excludeRegex = 'x'", "excludeRegex cannot be replayed"),
        ("withEventTimeOrder = 'true'", "withEventTimeOrder cannot be replayed"),
        ("maxFilesPerTrigger = '0'", "maxFilesPerTrigger must be a positive integer"),
        ("maxFilesPerTrigger = 'many'", "maxFilesPerTrigger must be a positive integer"),
        ("maxBytesPerTrigger = '10 parsecs'", "maxBytesPerTrigger must be a positive size"),
        ("ignoreDeletes = 'yes'", "ignoreDeletes must be true or false"),
    ],
)
def test_options_a_replay_cannot_honour_are_refused(
    option: str, message: str, tmp_path: Path
) -> None:
    plan = _plan(f"\nfrom delta (path = 'x', {option})")
    _append(tmp_path / "l", [1])
    with pytest.raises(UsageError, match=message):
        _read(tmp_path, plan)


def test_folders_that_are_no_stream_table_are_refused(tmp_path: Path) -> None:
    plan = _plan()
    _append(tmp_path / "l", [1])
    (tmp_path / "r").mkdir()
    with pytest.raises(UsageError, match="not a Delta table"):
        _read(tmp_path, plan)
    (tmp_path / "r").rmdir()
    _append(tmp_path / "zz", [1])
    with pytest.raises(UsageError, match="`zz` is not a stream of the spec"):
        _read(tmp_path, plan)


def test_a_wrongly_typed_column_names_its_file(tmp_path: Path) -> None:
    frame = pl.DataFrame({"k": ["one"], "t": [1], "v": ["x"]})
    write_deltalake(str(tmp_path / "l"), frame.to_arrow())
    with pytest.raises(RunError, match="column `k` is String, which cannot hold BIGINT"):
        _read(tmp_path, _plan())


def test_the_reference_engine_refuses_a_delta_trace_and_auto_picks_columnar(
    tmp_path: Path,
) -> None:
    plan = _plan()
    _append(tmp_path / "l", [1])
    with pytest.raises(UsageError, match="read by the columnar engine only"):
        run(plan, tmp_path, engine="reference")
    from sjoin.runtime import choose_engine

    assert choose_engine(plan, tmp_path) == ("columnar", "a Delta trace")


# ------------------------------------------------------------------------ the job's start


def _versions(table: Path, count: int, *, files: int = 1, first: int = 0) -> None:
    """``count`` commits of a key each (``first``, ``first + 1``, ...), ``files`` files each."""
    for k in range(first, first + count):
        _append(table, [k * 10 + i for i in range(files)], files=files)


def test_a_job_started_on_many_versions_reads_them_as_one_snapshot(tmp_path: Path) -> None:
    """Spark's Delta source reads the table as the job finds it in its first micro-batch,
    whatever number of versions it holds (issue 35: 7 batches before, 2 on Spark)."""
    plan = _plan()
    _versions(tmp_path / "l", 7)
    _versions(tmp_path / "r", 3)
    assert _shape(_read(tmp_path, plan, at_start=None)) == [
        (2, {"l": [0, 10, 20, 30, 40, 50, 60], "r": [0, 10, 20]})
    ]
    result = run(plan, tmp_path)  # the default: every table at its latest
    assert [b.trace_batch for b in result.batches if b.data] == [2]


@pytest.mark.parametrize(
    ("at_start", "expected"),
    [
        # versions up to 4 in the first read, then 5 and 6 each as it arrives
        ({"*": 4}, [(4, [0, 10, 20, 30, 40]), (5, [50]), (6, [60])]),
        ({"*": 0}, [(v, [v * 10]) for v in range(7)]),
        ({"*": 99}, [(6, [0, 10, 20, 30, 40, 50, 60])]),  # past its latest: its latest
        ({"l": 5, "*": 1}, [(5, [0, 10, 20, 30, 40, 50]), (6, [60])]),
    ],
)
def test_the_versions_a_job_started_on_are_its_first_read(
    at_start: Any, expected: Any, tmp_path: Path
) -> None:
    plan = _plan()
    _versions(tmp_path / "l", 7)
    assert [(v, r["l"]) for v, r in _shape(_read(tmp_path, plan, at_start))] == expected


def test_tables_started_at_different_versions_line_up_by_version(tmp_path: Path) -> None:
    plan = _plan()
    _versions(tmp_path / "l", 5)
    _versions(tmp_path / "r", 5)
    shape = _shape(_read(tmp_path, plan, {"l": 3, "r": 1}))
    assert shape == [
        (1, {"l": [0, 10, 20, 30], "r": [0, 10]}),  # the first read: the lowest start's value
        (2, {"r": [20]}),
        (3, {"r": [30]}),
        (4, {"l": [40], "r": [40]}),
    ]


def test_the_snapshot_holds_the_files_not_removed_and_refuses_no_removal(
    tmp_path: Path,
) -> None:
    """Removes before the start only shape the snapshot (Spark validates the commits it
    reads as changes, not those inside the snapshot); a file added without dataChange (a
    compaction) is in it."""
    plan = _plan()
    table = tmp_path / "l"
    _versions(table, 3)
    _rewrite(table, 2, lambda a: [*a, _remove_first_file(a, table)])  # rewrites rows
    with pytest.raises(RunError, match="version 2 changes rows"):
        _read(tmp_path, plan)  # read as a change from version 0
    assert _shape(_read(tmp_path, plan, None)) == [(2, {"l": [10, 20]})]
    _rewrite(
        table,
        1,
        lambda a: [{**x, "add": {**x["add"], "dataChange": False}} if "add" in x else x for x in a],
    )
    assert _shape(_read(tmp_path, plan, None)) == [(2, {"l": [10, 20]})]
    assert [
        (v, r["l"])
        for v, r in _shape(
            _read(tmp_path, _plan("\nfrom delta (path = 'x', ignoreChanges = 'true')"), {"*": 0})
        )
    ] == [(0, [0]), (1, []), (2, [20])]


def test_a_cut_snapshot_runs_back_to_back(tmp_path: Path) -> None:
    """maxFilesPerTrigger cuts the first read: its parts were all waiting, so no no-data
    batch comes between them (Spark runs a data batch whenever its source has data)."""
    plan = _plan("\nfrom delta (path = 'x', maxFilesPerTrigger = '2')")
    _versions(tmp_path / "l", 5)
    _versions(tmp_path / "r", 5)
    trace = _read(tmp_path, plan, None)
    assert [(v, r["l"]) for v, r in _shape(trace)] == [
        (4, [0, 10]),
        (4, [20, 30]),
        (4, [40]),
    ]
    assert [b.queued for b in trace.batches] == [False, True, True]
    result = run(plan, tmp_path)
    kinds = [(b.trace_batch, b.data) for b in result.batches]
    assert kinds[:3] == [(4, True), (4, True), (4, True)], kinds
    assert all(not data for _, data in kinds[3:])


@pytest.mark.parametrize(
    ("options", "at_start", "expected"),
    [
        # the changes of versions 2..4, admitted across their bounds (the first read's trace
        # batch value: the version the job starts at), then 5 and 6
        (
            "startingVersion = '2', maxFilesPerTrigger = '2'",
            {"*": 4},
            [
                (4, [20, 21]),
                (4, [30, 31]),
                (4, [40, 41]),
                (5, [50, 51]),
                (6, [60, 61]),
            ],
        ),
        (
            "startingVersion = '2', maxFilesPerTrigger = '3'",
            {"*": 4},
            [
                (4, [20, 21, 30]),
                (4, [31, 40, 41]),
                (5, [50, 51]),
                (6, [60, 61]),
            ],
        ),
        ("startingVersion = '2'", None, [(6, [20, 21, 30, 31, 40, 41, 50, 51, 60, 61])]),
        ("startingVersion = '0'", {"*": 0}, [(v, [v * 10, v * 10 + 1]) for v in range(7)]),
        # nothing when the job starts: the source waits for the next version
        ("startingVersion = 'latest'", {"*": 4}, [(5, [50, 51]), (6, [60, 61])]),
        ("startingVersion = 'latest'", None, []),
    ],
)
def test_starting_version_reads_changes_from_it(
    options: str, at_start: Any, expected: Any, tmp_path: Path
) -> None:
    plan = _plan(f"\nfrom delta (path = 'x', {options})")
    _versions(tmp_path / "l", 7, files=2)
    shape = _shape(_read(tmp_path, plan, at_start))
    assert [(v, r["l"]) for v, r in shape] == expected


def test_delta_at_start_values(tmp_path: Path) -> None:
    from sjoin.runtime.columnar.delta import delta_start

    assert delta_start(["3"], ["l", "r"]) == {"*": 3}
    assert delta_start(["latest", "l=2"], ["l", "r"]) == {"*": None, "l": 2}
    assert delta_start(["r = LATEST"], ["l", "r"]) == {"r": None}
    for bad, message in [
        ("-1", "give a table version"),
        ("x=1", "`x` is not a stream of the spec"),
        ("1.5", "give a table version"),
        ("9" * 5000, "give a table version"),
        ("²", "give a table version"),
    ]:
        with pytest.raises(UsageError, match=message):
            delta_start([bad], ["l", "r"])


def test_sjoin_run_says_how_versions_map_to_batches(tmp_path: Path) -> None:
    spec = tmp_path / "s.sjoin"
    spec.write_text(SPEC.format(l_from="\nfrom delta (path = 'x', maxFilesPerTrigger = '2')"))
    trace = tmp_path / "trace"
    _versions(trace / "l", 5)
    _versions(trace / "r", 2)
    args = ["run", str(spec), "--trace", str(trace), "--verbose"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert (
        f"Delta trace: `l` ({trace / 'l'}) starts at version 4 (its latest; --delta-at-start N "
        "starts it at N); its first read is the snapshot of version 4 (5 files)" in result.stderr
    )
    assert (
        "Delta trace: trace batch 1: the first read (`l` 5 files, `r` 2 files): 3 "
        "micro-batches (admission limits)" in result.stderr
    )
    result = CliRunner().invoke(main, [*args, "--delta-at-start", "3"])
    assert result.exit_code == 0, result.output
    assert f"`r` ({trace / 'r'}) starts at version 1 (of 1); its first" not in result.stderr
    assert (
        "starts at version 3 (of 4); its first read is the snapshot of version 3" in result.stderr
    )
    assert "Delta trace: trace batch 4: version 4 (`l` 1 file): 1 micro-batch" in result.stderr
    for bad, message in [
        (["--delta-at-start", "x=1"], "`x` is not a stream of the spec"),
        (["--delta-at-start", "soon"], "give a table version"),
    ]:
        result = CliRunner().invoke(main, [*args, *bad])
        assert result.exit_code == 2 and message in result.stderr, result.output
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(
        '{"batch": 0, "stream": "l", "row": {"k": 1, "t": "2026-01-01T00:00:00Z", "v": "a"}}\n'
    )
    result = CliRunner().invoke(
        main, ["run", str(spec), "--trace", str(jsonl), "--delta-at-start", "0"]
    )
    assert result.exit_code == 2 and "--delta-at-start applies to a Delta trace" in result.stderr


# ------------------------------------------------------------------------ the output


def _counter(rows: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _as_json(frame_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows read back from Delta in the JSON lines' form (times as ISO text)."""
    from datetime import datetime

    def value(v: Any) -> Any:
        if isinstance(v, datetime):
            return v.strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0").rstrip(".") + "Z"
        if isinstance(v, dict):
            return {k: value(x) for k, x in v.items()}
        return v

    return [{k: value(v) for k, v in r.items()} for r in frame_rows]


def _json_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def value(v: Any) -> Any:
        if isinstance(v, str) and v.endswith("Z") and "T" in v:
            return v.replace(".000Z", "Z")
        if isinstance(v, dict):
            return {k: value(x) for k, x in v.items()}
        if isinstance(v, list) and len(v) == 2:  # a window as the JSON lines show it
            return {"start": value(v[0]), "end": value(v[1])}
        return v

    return [{k: value(v) for k, v in r.items()} for r in rows]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_delta_output_holds_the_rows_the_json_lines_show_a_commit_per_batch(
    spec: Path, engine: EngineName, tmp_path: Path
) -> None:
    plan = plan_of(spec.read_text())
    trace = spec.with_suffix(".trace.jsonl")
    result = run(plan, trace, engine="reference")
    run_to_files(plan, trace, output=tmp_path / "out", output_format="delta", engine=engine)
    for relation in result.relations:
        table = tmp_path / "out" / folder_name(relation)
        expected = {b.batch: [r for rel, r in b.rows if rel == relation] for b in result.batches}
        marks = [h.get("sjoin.batch") for h in reversed(DeltaTable(str(table)).history())]
        assert marks[0] is None  # the run's first commit: the table, empty
        assert marks[1:] == [str(b) for b, rows in expected.items() if rows]
        got = _as_json(read_table(table))
        want = [r for rows in expected.values() for r in rows]
        assert _counter(got) == _counter(_json_rows(want)), relation


def test_a_restart_and_a_new_run_write_no_row_twice(tmp_path: Path) -> None:
    spec = EXAMPLES[0]
    plan = plan_of(spec.read_text())
    trace = spec.with_suffix(".trace.jsonl")
    out, checkpoint = tmp_path / "out", tmp_path / "chk"
    run_to_files(plan, trace, output=out, output_format="delta", checkpoint=checkpoint)
    relation = plan.joins[0].name
    table = out / folder_name(relation)
    once = _counter(read_table(table))
    versions = DeltaTable(str(table)).version()
    # the restart writes the pending (last) batch again: its commit is there, so nothing
    run_to_files(plan, trace, output=out, output_format="delta", checkpoint=checkpoint)
    assert DeltaTable(str(table)).version() == versions
    assert _counter(read_table(table)) == once
    # the pending batch's commit lost (killed before it was written): written on restart
    log = table / "_delta_log" / f"{versions:020d}.json"
    log.unlink()
    run_to_files(plan, trace, output=out, output_format="delta", checkpoint=checkpoint)
    assert _counter(read_table(table)) == once
    # a new run replaces the rows
    run_to_files(plan, trace, output=out, output_format="delta")
    assert _counter(read_table(table)) == once


def test_delta_output_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    spec = EXAMPLES[0]
    plan = plan_of(spec.read_text())
    trace = spec.with_suffix(".trace.jsonl")
    with pytest.raises(UsageError, match="--output-format delta writes a directory"):
        run_to_files(plan, trace, output_format="delta")
    taken = tmp_path / "out" / folder_name(plan.joins[0].name)
    taken.mkdir(parents=True)
    (taken / "mine.txt").write_text("x")
    with pytest.raises(UsageError, match="holds files but no Delta table"):
        run_to_files(plan, trace, output=tmp_path / "out", output_format="delta")
    interval = plan_of(
        """spark 4.3
stream l (k BIGINT, t TIMESTAMP) watermark t delay 1 second
stream r (k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = l AS a INNER JOIN r AS b ON a.k = b.k AND a.t BETWEEN b.t - INTERVAL 1 SECOND AND b.t
  SELECT a.k, b.t - a.t AS gap
"""
    )
    small = tmp_path / "t.jsonl"
    small.write_text('{"batch": 0, "stream": "l", "row": {"k": 1, "t": "2026-01-01T00:00:00Z"}}\n')
    with pytest.raises(UsageError, match=r"`gap` of `j` is INTERVAL.*cannot hold"):
        run_to_files(interval, small, output=tmp_path / "o2", output_format="delta")
    result = CliRunner().invoke(
        main, ["run", str(spec), "--trace", str(trace), "--output-format", "delta"]
    )
    assert result.exit_code == 2 and "give it with --output" in result.stderr
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(spec),
            "--trace",
            str(trace),
            "--output-format",
            "delta",
            "--output",
            str(tmp_path / "cli"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert read_table(tmp_path / "cli" / folder_name(plan.joins[0].name))


@pytest.mark.parametrize("module", ["pyarrow", "deltalake"])
def test_delta_output_without_its_packages_says_what_to_install(
    module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """deltalake 1.x no longer installs pyarrow, which polars' to_arrow needs: `sjoin[delta]`
    installs both, and a missing one is a usage error naming it (issue 35), not a failed
    commit saying "No module named 'pyarrow'"."""
    import tomllib

    extras = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    wanted = extras["project"]["optional-dependencies"]["delta"]
    assert {w.split(">")[0] for w in wanted} == {"deltalake", "pyarrow"}
    monkeypatch.setitem(__import__("sys").modules, module, None)  # import raises ImportError
    spec = EXAMPLES[0]
    trace = spec.with_suffix(".trace.jsonl")
    with pytest.raises(
        UsageError, match=f"{module} is not installed: pip install 'sjoin\\[delta\\]'"
    ):
        run_to_files(plan_of(spec.read_text()), trace, output=tmp_path / "o", output_format="delta")
    result = CliRunner().invoke(
        main,
        [
            "run",
            str(spec),
            "--trace",
            str(trace),
            "--output-format",
            "delta",
            "--output",
            str(tmp_path / "c"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert f"{module} is not installed" in result.stderr and "E999" not in result.output


# ------------------------------------------------------------------------ the job


def test_the_job_reads_delta_without_a_schema_and_starts_delta_sessions(tmp_path: Path) -> None:
    plan = delta_plan(plan_of(EXAMPLES[0].read_text()), tmp_path)
    job = compile_pyspark(plan, "spec.sjoin")
    assert 'spark.readStream.format("delta")' in job
    assert ".schema(SCHEMAS" not in job
    assert '"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension"' in job
    assert "for key, value in DELTA_SESSION_CONF.items():" in job
    table_sink = plan_of(
        EXAMPLES[0].read_text().split("\nsink ")[0]
        + f"\nsink {plan.joins[0].name} to delta (table = 'db.t') checkpoint 'c'\n"
    )
    job = compile_pyspark(table_sink, "spec.sjoin")
    assert '.toTable("db.t")' in job and '.option("table"' not in job
    plain = compile_pyspark(plan_of(EXAMPLES[0].read_text()), "spec.sjoin")
    assert "DELTA_SESSION_CONF" not in plain


@pytest.mark.parametrize(
    ("spark", "package"),
    [
        ("4.3", None),
        ("4.3.0", None),
        ("4.2", "io.delta:delta-spark_4.2_2.13:4.4.0"),
        ("4.2.1", "io.delta:delta-spark_4.2_2.13:4.4.0"),
        ("4.1", "io.delta:delta-spark_2.13:4.3.1"),
        ("4.0.2", "io.delta:delta-spark_2.13:4.0.1"),
        ("3.5", "io.delta:delta-spark_2.12:3.3.2"),
    ],
)
def test_the_delta_package_is_the_one_built_on_the_spark_line(
    spark: str, package: str | None
) -> None:
    assert delta_connector(spark) == package
    assert packages(spark, ["delta"]) == ([package] if package else [])


def test_a_restart_reads_the_tables_from_where_its_checkpoint_started_them(
    tmp_path: Path,
) -> None:
    """A restarted query reads on from its checkpoint's offsets, whatever the tables hold
    now (Spark's Delta source resumes from the offset log): the checkpoint keeps each table's
    version when the job started, so a table that grew is not read anew as a first snapshot,
    and the output is the clean run's on the grown tables started where the first run was."""
    plan = _plan()
    tables, checkpoint = tmp_path / "tables", tmp_path / "chk"
    _versions(tables / "l", 4)
    _versions(tables / "r", 3)
    first = run(plan, tables, checkpoint=checkpoint)
    assert [b.trace_batch for b in first.batches if b.data] == [2]  # the lower start
    _append(tables / "l", [40])
    _append(tables / "r", [40])  # both grew since: version 4 of l, version 3 of r
    resumed = run(plan, tables, checkpoint=checkpoint)
    clean = run(plan, tables, delta_at_start={"l": 3, "r": 2})
    after = {b.batch: b.rows for b in resumed.batches}
    assert after == {b.batch: b.rows for b in clean.batches if b.batch in after}
    # the new versions come as batches of their own (without the recorded starts the grown
    # tables' first read would differ from the one consumed, and the restart be refused)
    assert [b.trace_batch for b in resumed.batches if b.data] == [3, 4]
    assert any(40 in row.values() for rows in after.values() for _, row in rows)  # joined
    # an explicit start other than the checkpoint's is refused, naming both
    with pytest.raises(UsageError, match=r"started `l` at version 3.*drop the option"):
        run(plan, tables, checkpoint=checkpoint, delta_at_start={"l": 0})
    with pytest.raises(UsageError, match=r"--delta-at-start \*=1: .* started `l` at version 3"):
        run(plan, tables, checkpoint=checkpoint, delta_at_start={"*": 1})
    # the same versions, or `latest` (which meant the same when the job started), resume
    # resume (here with nothing left to run: every batch was delivered)
    again = run(plan, tables, checkpoint=checkpoint, delta_at_start={"l": 3, "r": None})
    assert again.batches == []
