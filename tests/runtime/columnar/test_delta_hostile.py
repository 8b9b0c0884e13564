"""A Delta trace's log is untrusted input (issue 35, item 19): every commit and data file is
opened without following a link or blocking and read up to a bound; every line is JSON of
bounded depth whose action has the protocol's shape; every loop runs over the files that
exist; a data file outside its table is refused; a protocol Spark's Delta source refuses is
refused. Each case ends in a RunError that names the file (and line), never a hang, an
internal error or a read outside the table; `sjoin run` prints it and exits 1."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.cli.main import main
from sjoin.runtime import RunError
from sjoin.runtime.columnar import delta as delta_module
from sjoin.runtime.columnar.delta import MAX_JSON_DEPTH, READER_FEATURES

from .test_delta import SPEC, _append, _plan, _read

COMMIT0 = f"{0:020d}.json"
COMMIT1 = f"{1:020d}.json"


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """A trace of stream `l`: a table of two versions, a file of one row each."""
    _append(tmp_path / "l", [1])
    _append(tmp_path / "l", [2])
    return tmp_path / "l"


def _commit(table: Path, version: int = 1) -> Path:
    return table / "_delta_log" / f"{version:020d}.json"


def _lines(table: Path, version: int = 1) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _commit(table, version).read_text().splitlines()]


def _write(table: Path, actions: list[Any], version: int = 1) -> None:
    _commit(table, version).write_text(
        "".join((a if isinstance(a, str) else json.dumps(a)) + "\n" for a in actions)
    )


def _refused(table: Path, pattern: str) -> RunError:
    started = time.process_time()
    with pytest.raises(RunError, match=pattern) as caught:
        _read(table.parent, _plan())
    assert time.process_time() - started < 10
    return caught.value


def _change(table: Path, kind: str, update: Any, version: int = 1) -> None:
    actions = _lines(table, version)
    for action in actions:
        if kind in action:
            update(action[kind])
    _write(table, actions, version)


# ------------------------------------------------------------------------ the commit files


def test_a_far_commit_number_is_found_missing_without_counting_up_to_it(table: Path) -> None:
    _commit(table, 100_000_000_000).write_text(_commit(table).read_text())
    _commit(table).unlink()
    error = _refused(table, "lacks the commit of version 1, and has 00000000100000000000.json")
    assert "NNN" not in str(error)


@pytest.mark.parametrize("which", ["commit", "data file"])
def test_a_fifo_is_refused_without_blocking(table: Path, which: str) -> None:
    data = table / _lines(table)[-1]["add"]["path"]
    target = _commit(table) if which == "commit" else data
    target.unlink()
    os.mkfifo(target)
    _refused(table, f"{target}: .* is a FIFO; a Delta trace reads regular files only")


def test_a_commit_linked_to_dev_zero_or_elsewhere_is_refused(table: Path) -> None:
    _commit(table).unlink()
    _commit(table).symlink_to("/dev/zero")
    _refused(table, "the Delta commit is a symbolic link")


def test_a_data_file_linked_elsewhere_is_refused(table: Path, tmp_path: Path) -> None:
    data = table / _lines(table)[-1]["add"]["path"]
    outside = tmp_path / "outside.parquet"
    data.rename(outside)
    data.symlink_to(outside)
    _refused(table, "a data file the Delta log names is a symbolic link")


def test_a_commit_that_is_a_folder_is_refused(table: Path) -> None:
    _commit(table).unlink()
    _commit(table).mkdir()
    _refused(table, "the Delta commit is a directory")


def test_a_log_that_is_a_link_is_refused(
    table: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "log"
    (table / "_delta_log").rename(elsewhere)
    (table / "_delta_log").symlink_to(elsewhere)
    _refused(table, "_delta_log is a symbolic link")


def test_a_commit_over_the_size_bound_is_refused(
    table: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delta_module, "MAX_COMMIT_BYTES", 100)
    _refused(table, "the Delta commit has [0-9,]+ bytes, more than a Delta trace reads \\(100\\)")


def test_a_commit_that_is_not_utf8_is_refused(table: Path) -> None:
    _commit(table).write_bytes(b'{"commitInfo": {"x": "\xff"}}\n')
    _refused(table, f"{_commit(table)}: the Delta commit is not UTF-8 text")


# ------------------------------------------------------------------------ JSON and shapes


def test_json_nested_100k_deep_is_refused(table: Path) -> None:
    _write(table, ['{"commitInfo": ' + "[" * 100_000 + "]" * 100_000 + "}"])
    _refused(table, f"{_commit(table)}:1: .* nested deeper than {MAX_JSON_DEPTH} levels")


def test_json_nested_past_the_depth_bound_is_refused(table: Path) -> None:
    deep = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    _write(table, [*_lines(table), '{"commitInfo": {"x": ' + deep + "}}"])
    last = len(_lines(table))
    _refused(table, f"{_commit(table)}:{last}: .* nested deeper than {MAX_JSON_DEPTH} levels")


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("123", "text"),
        ({"t": 1}, "an object"),
        ("1e400", "a number with a fraction or exponent"),  # inf once parsed
        ("9" * 5_000, "text"),
        (True, "a boolean"),
        (2**64, "an integer out of range"),
        (None, None),
    ],
)
def test_a_modification_time_of_another_kind_is_refused(
    table: Path, value: Any, found: str | None
) -> None:
    raw = value == "1e400"

    def update(add: dict[str, Any]) -> None:
        add["modificationTime"] = "__RAW__" if raw else value

    _change(table, "add", update)
    if raw:
        _commit(table).write_text(_commit(table).read_text().replace('"__RAW__"', "1e400"))
    line = next(i for i, a in enumerate(_lines(table), 1) if "add" in a)
    if found is None:
        _refused(table, f"{_commit(table)}:{line}: the add action lacks `modificationTime`")
    else:
        _refused(
            table,
            f"{_commit(table)}:{line}: the add action's `modificationTime` must be a whole "
            f"number of 64 bits, not {found}",
        )


def test_a_5000_digit_number_is_refused_as_json(table: Path) -> None:
    actions = _lines(table)
    _write(table, actions)
    text = _commit(table).read_text()
    stamp = next(a["add"]["modificationTime"] for a in actions if "add" in a)
    _commit(table).write_text(text.replace(str(stamp), "9" * 5_000))
    _refused(table, f"{_commit(table)}:[0-9]+: the Delta action is not JSON")


def test_configuration_as_a_list_is_refused(table: Path) -> None:
    _change(table, "metaData", lambda m: m.update(configuration=["a"]), version=0)
    _refused(table, "the metaData action's `configuration` must be an object of text values")


# Each field of each action the replay reads, given a value of every wrong kind: always a
# RunError naming the file, line, action and field (the class of the cases above).
WRONG = {
    "text": [1, 1.5, True, [], {}],
    "integer": ["1", 1.5, True, [], {}, 2**63, -(2**63) - 1],
    "boolean": ["true", 1, [], {}],
    "object": ["x", 1, [], True],
    "map": ["x", 1, [], {"k": 1}, {"k": []}],
    "list": ["x", 1, {}, [1], [None]],
}


def _cases() -> list[tuple[str, str, Any]]:
    out = []
    for kind in ("add", "remove", "metaData", "protocol", "txn", "cdc", "domainMetadata"):
        for name, (want, _) in delta_module._SHAPES[kind].items():
            out += [(kind, name, bad) for bad in WRONG[want]]
    return out


@pytest.mark.parametrize(("kind", "name", "bad"), _cases(), ids=str)
def test_every_field_of_every_action_is_checked(
    table: Path, kind: str, name: str, bad: Any
) -> None:
    actions = _lines(table)
    fields = {
        "add": next((a["add"] for a in actions if "add" in a), None),
        "remove": {"path": "x.parquet", "dataChange": True},
        "metaData": next(a["metaData"] for a in _lines(table, 0) if "metaData" in a),
        "protocol": {"minReaderVersion": 1, "minWriterVersion": 2},
        "txn": {"appId": "a", "version": 1},
        "cdc": {"path": "c.parquet", "partitionValues": {}, "size": 1, "dataChange": False},
        "domainMetadata": {"domain": "d", "configuration": "{}", "removed": False},
    }[kind]
    assert fields is not None
    actions = [a for a in actions if kind not in a] + [{kind: {**fields, name: bad}}]
    _write(table, actions)
    _refused(
        table,
        f"{_commit(table)}:{len(actions)}: the {kind} action's `{name}` must be ",
    )


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        ("[1, 2]", "not a Delta action \\(a JSON object naming one action\\)"),
        ("{}", "not a Delta action"),
        ('"add"', "not a Delta action"),
        ('{"add": [], "remove": {}}', "one line holds 2 actions \\(add, remove\\)"),
        ('{"add": "x"}', "the add action is text, not an object"),
        ('{"add": {"path": "a.parquet"}}', "the add action lacks `partitionValues`"),
        ('{"commitInfo": NaN}', "the Delta action is not JSON: NaN is not a JSON number"),
        ('{"commitInfo": {"a": Infinity}}', "the Delta action is not JSON: Infinity is not a"),
    ],
)
def test_a_line_that_is_no_action_is_refused(table: Path, line: str, pattern: str) -> None:
    _write(table, [*_lines(table), line])
    _refused(table, f"{_commit(table)}:[0-9]+: {pattern}")


def test_an_action_of_another_kind_is_ignored_as_spark_ignores_it(table: Path) -> None:
    _write(table, [*_lines(table), '{"someFutureAction": {"x": [1, {"y": 2}]}}'])
    assert len(_read(table.parent, _plan()).batches) == 2


def test_two_metadata_actions_in_one_commit_are_refused(table: Path) -> None:
    meta = next(a for a in _lines(table, 0) if "metaData" in a)
    _write(table, [*_lines(table), meta, meta])
    _refused(table, "a second metaData action in one commit")


def test_a_first_commit_without_protocol_is_refused(table: Path) -> None:
    _write(table, [a for a in _lines(table, 0) if "protocol" not in a], version=0)
    _refused(table, f"the table's first commit \\({COMMIT0}\\) lacks its protocol")


@pytest.mark.parametrize(
    ("schema", "pattern"),
    [
        ('{"fields": ' + "[" * 5_000 + "]" * 5_000 + "}", "nested deeper than"),
        ('{"fields": 3}', "not a struct of named fields"),
        ('{"fields": [{"name": 1}]}', "not a struct of named fields"),
        ("[]", "not a struct of named fields"),
        ("{", "the table's schema \\(schemaString\\) is not JSON"),
    ],
)
def test_a_schema_string_of_another_shape_is_refused(
    table: Path, schema: str, pattern: str
) -> None:
    _change(table, "metaData", lambda m: m.update(schemaString=schema), version=0)
    _refused(table, pattern)


# ------------------------------------------------------------------------ files outside


@pytest.mark.parametrize(
    "path",
    [
        "../../outside/x.parquet",
        "../l2/x.parquet",
        "a/../../x.parquet",
        "%2E%2E/x.parquet",
        "file:///etc/passwd",
        "/etc/passwd",
        "",
    ],
)
def test_a_file_outside_the_table_is_refused(table: Path, path: str) -> None:
    outside = table.parent.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "x.parquet").write_bytes((table / _lines(table)[-1]["add"]["path"]).read_bytes())
    _change(table, "add", lambda a: a.update(path=path))
    if path:
        _refused(table, f"the file {path} is outside the table {table}")
    else:
        _refused(table, "is outside the table")


def test_a_folder_inside_the_table_linked_elsewhere_is_refused(
    table: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data = table / _lines(table)[-1]["add"]["path"]
    away = tmp_path_factory.mktemp("away")
    data.rename(away / data.name)
    (table / "part").symlink_to(away)
    _change(table, "add", lambda a: a.update(path=f"part/{data.name}"))
    _refused(table, f"the file part/{data.name} is outside the table")


def test_an_absolute_path_inside_the_table_is_read(table: Path) -> None:
    data = table / _lines(table)[-1]["add"]["path"]
    _change(table, "add", lambda a: a.update(path=data.resolve().as_uri()))
    assert len(_read(table.parent, _plan()).batches) == 2


def test_a_nul_in_a_path_is_refused(table: Path) -> None:
    _change(table, "add", lambda a: a.update(path="x%00.parquet"))
    _refused(table, "the file path holds a NUL character")


# ------------------------------------------------------------------------ the protocol


@pytest.mark.parametrize(
    ("protocol", "pattern"),
    [
        ({"minReaderVersion": 99, "minWriterVersion": 7}, "needs a Delta reader of version 99"),
        ({"minReaderVersion": 4, "minWriterVersion": 7}, "needs a Delta reader of version 4"),
        (
            {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["timeTravel9"]},
            "reader feature\\(s\\) 'timeTravel9', which Spark's Delta source does not know",
        ),
        ({"minReaderVersion": 0, "minWriterVersion": 2}, None),  # 0 reads as 1
        ({"minReaderVersion": -1, "minWriterVersion": 2}, "must be a whole number"),
    ],
)
def test_a_protocol_spark_refuses_is_refused(
    table: Path, protocol: dict[str, Any], pattern: str | None
) -> None:
    _write(table, [*_lines(table), {"protocol": protocol}])
    if pattern is None:
        assert len(_read(table.parent, _plan()).batches) == 2
    else:
        _refused(table, f"{_commit(table)}:[0-9]+: .*{pattern}")


def test_the_reader_features_spark_knows_are_read(table: Path) -> None:
    features = [f for f in READER_FEATURES if f not in ("columnMapping", "deletionVectors")]
    protocol = {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": features}
    _write(table, [*_lines(table), {"protocol": protocol}])
    assert len(_read(table.parent, _plan()).batches) == 2


def test_the_protocol_checked_at_the_start_is_the_snapshots(table: Path) -> None:
    """A job started at version 1 checks version 1's protocol (the snapshot's), a job
    started at version 0 reads version 1 as a change and checks its protocol then."""
    _write(table, [*_lines(table), {"protocol": {"minReaderVersion": 99, "minWriterVersion": 7}}])
    with pytest.raises(RunError, match="version 99"):
        _read(table.parent, _plan(), at_start=None)
    with pytest.raises(RunError, match="version 99"):
        _read(table.parent, _plan(), at_start={"*": 0})


# ------------------------------------------------------------------------ the command


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (lambda t: _commit(t, 10**11).write_text("{}\n"), "lacks the commit of version"),
        (lambda t: os.mkfifo(_commit(t, 2)), "is a FIFO"),
        (lambda t: _change(t, "add", lambda a: a.update(modificationTime={})), "an object"),
        (lambda t: _change(t, "add", lambda a: a.update(path="../../o/x.parquet")), "outside"),
        (
            lambda t: _write(t, ['{"commitInfo": ' + "[" * 100_000 + "]" * 100_000 + "}"]),
            "nested deeper",
        ),
    ],
    ids=["far commit", "fifo", "modificationTime", "outside", "deep"],
)
def test_sjoin_run_says_what_is_wrong_and_exits_1(
    table: Path, tmp_path: Path, make: Any, pattern: str
) -> None:
    make(table)
    spec = tmp_path / "s.sjoin"
    spec.write_text(SPEC.format(l_from=""))
    result = CliRunner().invoke(main, ["run", str(spec), "--trace", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "E999" not in result.output
    assert "sjoin run: " in result.output and pattern in result.output
