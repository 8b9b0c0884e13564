"""Delta Lake both ways for ``sjoin run``: a trace read from Delta tables, and output written
as Delta tables.

**Delta traces** (``--trace DIR``, ``DIR/<stream>/`` a Delta table per stream). The tables
are replayed as Spark's Delta streaming source (``DeltaSource``, Delta 4.4) reads them when
its query starts on version 0 of every table and each later version of the tables is
committed while the query waits: version ``v`` of every table is one round, and each round
is one micro-batch, or several when a table's files in it pass the source's admission limits.
Round 0 is the table as the query finds it (the snapshot of version 0: its files ordered by
modification time, then path); round ``v`` >= 1 is the files that commit ``v`` adds with
``dataChange``. Spark's source marks the beginning and the end of every version in its
offsets, so a version that adds no file is still a micro-batch, with no rows (checked on
Spark 4.2.1 with Delta 4.4.0). Within a round a table's files are admitted in order while
the source has capacity: at most ``maxFilesPerTrigger`` files (default 1000) and, with
``maxBytesPerTrigger``, files until their sizes reach it (the file that passes it is still
admitted); the rest form the round's next micro-batch. Batch ``j`` of a round holds the
``j``-th part of every table that has one; its trace batch value is the round's version.

Only what the commit log says is read: every commit from version 0 must be there (a log
cleaned up behind a checkpoint is refused), and a table whose rows a replay cannot give
exactly is refused with the reason: partition columns, column mapping, deletion vectors,
files outside the table, a schema changed after version 0. A commit that removes data is
refused as Spark's source refuses it, unless the stream's ``from delta`` options say
``ignoreDeletes``, ``ignoreChanges`` or ``skipChangeCommits`` (which skips the commit).
Options that start elsewhere or filter (``startingVersion``, ``startingTimestamp``,
``readChangeFeed``, ``excludeRegex``, ``withEventTimeOrder``) are refused. The data files are
Parquet, read with polars; reading needs no Delta library.

**Delta output** (``--output-format delta --output DIR``): a Delta table per relation,
``DIR/<relation>/``, written with delta-rs (the ``deltalake`` package, ``sjoin[delta]``): a
new run replaces each table's rows and schema in one commit, then each batch that gives the
relation rows appends one commit, marked with its batch id (``sjoin.batch`` in the commit's
information), so a restart from a checkpoint that writes the pending batch again finds it
there and writes nothing twice. Column types are those of the Parquet output.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import polars as pl

from ...compiler.types import SqlType
from ..batches import Batch, Frame, Rows
from ..errors import RunError, UsageError
from ..files import Folder, LibraryFolder, cannot_write, folder_name
from ..trace import StreamSchema, Trace, TraceBatch
from .frames import dtype_of
from .parquet_out import output_frame, unsupported_column
from .trace import _parquet_column

__all__ = [
    "DeltaWriter",
    "delta_unsupported_column",
    "is_delta_trace",
    "read_delta_trace",
    "replay_limits",
]

_COMMIT = re.compile(r"^([0-9]{20})\.json$")
_CHECKPOINT = re.compile(r"^([0-9]{20})\.checkpoint(\.[0-9]+\.[0-9]+)?\.parquet$")
DEFAULT_MAX_FILES = 1000  # DeltaOptions.MAX_FILES_PER_TRIGGER_OPTION_DEFAULT
_NO_FILE_LIMIT = 2**31 - 1 - 8  # Int.MaxValue - 8: maxBytesPerTrigger alone
REFUSED_OPTIONS = {
    "startingVersion": "the replay starts at version 0, as a query that starts then",
    "startingTimestamp": "the replay starts at version 0, as a query that starts then",
    "readChangeFeed": "the replay reads the files that commits add, not the change feed",
    "excludeRegex": "the replay reads every file that a commit adds",
    "withEventTimeOrder": "the replay reads the first version's files in Spark's file order",
}
_FLAGS = ("ignoreDeletes", "ignoreChanges", "skipChangeCommits", "ignoreFileDeletion")
_BYTE_UNITS = {"": 0, "b": 0, "k": 1, "kb": 1, "m": 2, "mb": 2, "g": 3, "gb": 3, "t": 4, "tb": 4}
_BYTE_UNITS |= {"p": 5, "pb": 5}


def is_delta_trace(directory: Path) -> bool:
    """Whether ``directory`` holds Delta tables (a folder with a ``_delta_log``)."""
    try:
        return any((entry / "_delta_log").is_dir() for entry in directory.iterdir())
    except OSError:
        return False


# --------------------------------------------------------------------------- options


@dataclass(frozen=True)
class ReplayLimits:
    """What a stream's ``from delta`` options make of its replay."""

    max_files: int = DEFAULT_MAX_FILES
    max_bytes: float = math.inf
    allow_deletes: bool = False
    allow_changes: bool = False
    skip_change_commits: bool = False


def _bytes(text: str) -> int | None:
    """``JavaUtils.byteStringAsBytes``: a number of bytes, or with a unit (k, m, g, t, p,
    with or without b), in powers of 1024."""
    m = re.fullmatch(r"\s*([0-9]+)\s*([a-zA-Z]*)\s*", text)
    if m is None or m[2].lower() not in _BYTE_UNITS:
        return None
    return int(m[1]) * int(1024 ** _BYTE_UNITS[m[2].lower()])


def replay_limits(stream: str, options: Mapping[str, str]) -> ReplayLimits:
    """The replay of a stream whose spec reads it ``from delta`` with ``options`` (option
    names as Spark takes them, case-insensitively). Raises ``UsageError`` for an option the
    replay cannot honour or a value Spark would refuse."""
    lowered = {k.lower(): (k, v) for k, v in options.items()}
    for name, why in REFUSED_OPTIONS.items():
        if name.lower() in lowered:
            raise UsageError(
                f"stream `{stream}`: the Delta option {lowered[name.lower()][0]} cannot be "
                f"replayed by sjoin run ({why}); drop it to run the trace"
            )

    def flag(name: str) -> bool:
        written = lowered.get(name.lower())
        if written is None:
            return False
        value = written[1].strip().lower()
        if value not in ("true", "false"):
            raise UsageError(
                f"stream `{stream}`: {written[0]} must be true or false, not {value!r}"
            )
        return value == "true"

    max_files: int | None = None
    written = lowered.get("maxfilespertrigger")
    if written is not None:
        text = written[1].strip()
        if not text.isdigit() or int(text) <= 0:
            raise UsageError(
                f"stream `{stream}`: maxFilesPerTrigger must be a positive integer, not {text!r}"
            )
        max_files = int(text)
    max_bytes: float = math.inf
    written = lowered.get("maxbytespertrigger")
    if written is not None:
        size = _bytes(written[1])
        if size is None or size <= 0:
            raise UsageError(
                f"stream `{stream}`: maxBytesPerTrigger must be a positive size such as 10m, "
                f"not {written[1]!r}"
            )
        max_bytes = size
    if max_files is None:
        max_files = DEFAULT_MAX_FILES if math.isinf(max_bytes) else _NO_FILE_LIMIT
    skip = flag("skipChangeCommits")
    changes = flag("ignoreChanges") or flag("ignoreFileDeletion") or skip
    return ReplayLimits(
        max_files=max_files,
        max_bytes=max_bytes,
        allow_deletes=changes or flag("ignoreDeletes"),
        allow_changes=changes,
        skip_change_commits=skip,
    )


# --------------------------------------------------------------------------- the log


@dataclass(frozen=True)
class _File:
    path: Path
    size: int


@dataclass
class _Table:
    """One stream's Delta table: per version, the files the replay reads."""

    stream: str
    root: Path
    versions: list[list[_File]] = field(default_factory=list)


def _fail(root: Path, message: str) -> RunError:
    return RunError(f"{root}: {message}")


def _commit_files(root: Path) -> list[Path]:
    log = root / "_delta_log"
    commits: dict[int, Path] = {}
    checkpoints: list[int] = []
    for entry in log.iterdir():
        m = _COMMIT.match(entry.name)
        if m is not None:
            commits[int(m[1])] = entry
        elif (c := _CHECKPOINT.match(entry.name)) is not None:
            checkpoints.append(int(c[1]))
    if not commits:
        raise _fail(root, "the Delta log has no commit (_delta_log/NNNNNNNNNNNNNNNNNNNN.json)")
    latest = max(commits)
    missing = [v for v in range(latest + 1) if v not in commits]
    if missing:
        behind = " (cleaned up behind a checkpoint)" if checkpoints else ""
        raise _fail(
            root,
            f"the Delta log lacks the commit of version {missing[0]}{behind}: a trace is "
            "replayed from version 0, so it needs every commit",
        )
    return [commits[v] for v in range(latest + 1)]


def _actions(commit: Path) -> list[dict[str, Any]]:
    try:
        text = commit.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise RunError(f"{commit}: cannot read the Delta commit: {err}") from None
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except ValueError as err:
            raise RunError(f"{commit}:{number}: not a Delta action (JSON): {err}") from None
        if not isinstance(action, dict):
            raise RunError(f"{commit}:{number}: not a Delta action (a JSON object)")
        out.append(action)
    return out


def _data_path(root: Path, add: Mapping[str, Any], commit: Path) -> Path:
    path = add.get("path")
    if not isinstance(path, str) or not path:
        raise RunError(f"{commit}: an add action without a path")
    parsed = urlparse(path)
    if parsed.scheme == "file":
        resolved = Path(unquote(parsed.path))
    elif parsed.scheme:
        raise RunError(
            f"{commit}: the file {path} is not on this machine; sjoin run reads local tables"
        )
    else:
        resolved = root / unquote(path)
    return resolved


def _check_metadata(root: Path, metadata: Mapping[str, Any], stream: StreamSchema) -> str:
    """The schema string of a table's metadata, after refusing what a replay cannot read."""
    if metadata.get("partitionColumns"):
        raise _fail(
            root,
            "the table is partitioned (by "
            + ", ".join(str(c) for c in metadata["partitionColumns"])
            + "); a Delta trace reads unpartitioned tables only",
        )
    configuration = metadata.get("configuration") or {}
    mode = str(configuration.get("delta.columnMapping.mode", "none")).lower()
    if mode != "none":
        raise _fail(
            root, f"the table maps its columns ({mode} column mapping); a trace cannot use that"
        )
    schema = metadata.get("schemaString")
    if not isinstance(schema, str):
        raise _fail(root, "the table's metadata has no schema")
    try:
        fields = {f["name"]: f.get("type") for f in json.loads(schema)["fields"]}
    except (ValueError, KeyError, TypeError) as err:
        raise _fail(root, f"the table's schema cannot be read: {err}") from None
    missing = [c for c in stream.columns if c not in fields]
    if missing:
        raise _fail(
            root,
            f"the columns of stream `{stream.name}` are {', '.join(stream.columns)}; "
            f"the table lacks {', '.join(missing)}",
        )
    return schema


def _read_table(
    root: Path, stream: StreamSchema, limits: ReplayLimits
) -> tuple[_Table, list[list[list[_File]]]]:
    """The table's files per version, and each version cut into micro-batches."""
    table = _Table(stream.name, root)
    schema: str | None = None
    for version, commit in enumerate(_commit_files(root)):
        actions = _actions(commit)
        adds: list[dict[str, Any]] = []
        removed = False
        for action in actions:
            if "metaData" in action:
                found = _check_metadata(root, action["metaData"], stream)
                if schema is not None and found != schema:
                    raise _fail(
                        root,
                        f"version {version} changes the table's schema; a trace keeps the "
                        "schema of version 0",
                    )
                schema = found
            elif "add" in action and isinstance(action["add"], dict):
                adds.append(action["add"])
            elif "remove" in action and isinstance(action["remove"], dict):
                removed = removed or action["remove"].get("dataChange", True) is not False
        if schema is None:
            raise _fail(root, f"version {version} comes before the table's metadata")
        if version == 0:
            # the snapshot of version 0, in DeltaSourceSnapshot's order
            chosen = sorted(
                adds, key=lambda a: (int(a.get("modificationTime") or 0), str(a.get("path")))
            )
        else:
            chosen = [a for a in adds if a.get("dataChange", True) is not False]
            if removed:
                if chosen and not limits.allow_changes:
                    raise _fail(
                        root,
                        f"version {version} changes rows that were read before (it removes "
                        "files and adds others), which Spark's Delta source refuses; set "
                        "ignoreChanges or skipChangeCommits in the stream's `from delta` options",
                    )
                if not chosen and not limits.allow_deletes:
                    raise _fail(
                        root,
                        f"version {version} deletes rows, which Spark's Delta source refuses; "
                        "set ignoreDeletes in the stream's `from delta` options",
                    )
                if limits.skip_change_commits:
                    chosen = []
        files = []
        for add in chosen:
            if add.get("deletionVector"):
                raise _fail(
                    root,
                    f"version {version} adds a file with a deletion vector; a trace cannot "
                    "read those",
                )
            size = add.get("size")
            files.append(_File(_data_path(root, add, commit), size if type(size) is int else 0))
        table.versions.append(files)
    return table, [_admitted(files, limits) for files in table.versions]


def _admitted(files: Sequence[_File], limits: ReplayLimits) -> list[list[_File]]:
    """A version's files as the micro-batches the source admits them in: each takes files
    while it has capacity (files left and bytes left), counting each file as it is taken;
    a version without files is one micro-batch without rows."""
    parts: list[list[_File]] = [[]]
    left_files, left_bytes = limits.max_files, limits.max_bytes
    for file in files:
        if not (left_files > 0 and left_bytes > 0):
            parts.append([])
            left_files, left_bytes = limits.max_files, limits.max_bytes
        parts[-1].append(file)
        left_files -= 1
        left_bytes -= file.size
    return parts


def _columnar(schema: StreamSchema) -> bool:
    """Whether the stream's rows can be a frame (else runtime rows: DECIMAL columns)."""
    return all(dtype_of(kind.name) is not None for kind in schema.types)


def _rows(files: Sequence[_File], schema: StreamSchema) -> Batch:
    """The rows of ``files``: a frame (``c0..``), or runtime rows (tuples) for a stream
    with a column the frames do not hold."""
    columnar = _columnar(schema)
    parts = [_file_rows(f.path, schema, columnar) for f in files]
    if not columnar:
        return Rows([row for part in parts for row in part])
    if parts:
        return Frame(pl.concat(parts, how="vertical"))
    return Frame(
        pl.DataFrame(
            {f"c{i}": pl.Series([], dtype=dtype_of(k.name)) for i, k in enumerate(schema.types)}
        )
    )


def _file_rows(path: Path, schema: StreamSchema, columnar: bool) -> Any:
    try:
        frame = pl.read_parquet(path, columns=list(schema.columns))
    except FileNotFoundError:
        raise RunError(f"{path}: a data file the Delta log names is missing") from None
    except Exception as err:  # polars raises several kinds for a damaged or foreign file
        raise RunError(f"{path}: cannot read Parquet: {err}") from None
    columns: list[Any] = []
    for i, (column, kind) in enumerate(zip(schema.columns, schema.types, strict=True)):
        values = frame.get_column(column)
        if kind.name == "decimal":
            columns.append(_decimals(path, values, kind, column))
        else:
            columns.append(_parquet_column(path, values, kind, column).alias(f"c{i}"))
    if columnar:
        return pl.DataFrame(columns)
    cells = [c if isinstance(c, list) else c.to_list() for c in columns]
    return list(zip(*cells, strict=True)) if cells else []


def _decimals(path: Path, values: pl.Series, kind: Any, column: str) -> list[Any]:
    """A DECIMAL(p, s) column's values as the runtime holds them (``Decimal`` at scale s),
    from a decimal or integer column whose values fit."""
    if not (isinstance(values.dtype, pl.Decimal) or values.dtype.is_integer()):
        raise RunError(
            f"{path}: column `{column}` is {values.dtype}, which cannot hold {str(kind).upper()}"
        )
    precision, scale = kind.params
    quantum = Decimal(1).scaleb(-scale)
    out: list[Any] = []
    for value in values.to_list():
        if value is None:
            out.append(None)
            continue
        d = Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP)
        if len(d.as_tuple().digits) > precision and d != 0:
            raise RunError(f"{path}: column `{column}` has {value}, which does not fit {kind}")
        out.append(d)
    return out


def read_delta_trace(
    directory: Path,
    schemas: Mapping[str, StreamSchema],
    options: Mapping[str, Mapping[str, str]] | None = None,
    *,
    digests: bool = False,
) -> Trace:
    """A Delta trace: ``<stream>/`` a Delta table under ``directory`` per stream (the folder
    named as ``--output-format delta`` names it), replayed as the module's docstring says.
    ``options``: each stream's ``from delta`` options (its admission limits). With
    ``digests`` each batch gets a SHA-256 of the files it reads (checkpoints compare it)."""
    by_folder = {folder_name(name): name for name in schemas}
    tables: dict[str, list[list[list[_File]]]] = {}
    for entry in sorted(directory.iterdir()):
        if not entry.is_dir() or entry.name.startswith((".", "_")):
            continue
        stream = by_folder.get(entry.name)
        if stream is None:
            raise UsageError(
                f"{entry}: `{entry.name}` is not a stream of the spec "
                f"(streams: {', '.join(sorted(schemas)) or 'none'})"
            )
        if not (entry / "_delta_log").is_dir():
            raise UsageError(
                f"{entry}: not a Delta table (no _delta_log folder); a Delta trace has one "
                "Delta table per stream"
            )
        limits = replay_limits(stream, (options or {}).get(stream, {}))
        _, tables[stream] = _read_table(entry, schemas[stream], limits)
    if not tables:
        raise UsageError(f"{directory}: no <stream>/ Delta tables")
    batches: list[TraceBatch] = []
    for version in range(max(len(parts) for parts in tables.values())):
        present = {s: parts[version] for s, parts in tables.items() if version < len(parts)}
        for j in range(max(len(p) for p in present.values())):
            chunk = {s: p[j] for s, p in present.items() if j < len(p)}
            digest = None
            if digests:
                hashed = hashlib.sha256(f"delta v{version}.{j}".encode())
                for s, files in sorted(chunk.items()):
                    hashed.update(f"{s}\x00".encode())
                    for f in files:
                        hashed.update(f"{f.path}\x00{f.size}\x00".encode())
                digest = hashed.digest()
            rows = {s: _rows(files, schemas[s]) for s, files in chunk.items()}
            batches.append(TraceBatch(version, rows, 0, digest))
    return Trace(str(directory), batches, [])


# --------------------------------------------------------------------------- output


def delta_unsupported_column(
    columns: Sequence[tuple[str, SqlType]],
) -> tuple[str, SqlType] | None:
    """The first (column, SQL type) that a Delta table cannot hold, or None: those without
    a Parquet form, and intervals (Delta has no duration type)."""
    found = unsupported_column(columns)
    if found is not None:
        return found
    return next(((n, t) for n, t in columns if t.name == "interval"), None)


_WHAT = "the Delta output directory"


class DeltaWriter:
    """Writes each batch's relations as commits to a Delta table per relation under
    ``directory`` (the module's docstring)."""

    def __init__(self, directory: Path, columns: dict[str, list[tuple[str, SqlType]]]) -> None:
        try:
            import deltalake
        except ImportError:
            raise UsageError(
                "--output-format delta writes with delta-rs, which is not installed: "
                "pip install 'sjoin[delta]'"
            ) from None
        self.deltalake = deltalake
        self.directory = directory
        self.columns = columns
        for relation, cols in columns.items():
            found = delta_unsupported_column(cols)
            if found is not None:
                raise UsageError(
                    f"--output-format delta: column `{found[0]}` of `{relation}` is "
                    f"{found[1]}, which a Delta table cannot hold; use JSON lines"
                )
        if directory.exists() and not directory.is_dir():
            raise UsageError(f"{directory} is not a directory (--output-format delta)")
        self.root: Folder | None = None
        self.tables: dict[str, LibraryFolder] = {}
        if directory.is_dir():  # before the run: what is there already (a link refused)
            try:
                with Folder.open(directory, _WHAT, create=False) as root:
                    for relation in columns:
                        self._check(root, relation)
            except OSError as err:
                raise UsageError(f"cannot read {directory}: {err.strerror or err}") from None

    def _check(self, root: Folder, relation: str) -> None:
        """A relation's folder as the run finds it: none, or a Delta table, or empty; a
        link at it, in it or in its ``_delta_log`` is refused (``files.LibraryFolder``)."""
        table = root.child(folder_name(relation), create=False)
        if table is None:
            return
        with table:
            table.refuse_links_inside()
            log = table.child("_delta_log", create=False)
            if log is None and table.names():
                raise UsageError(
                    f"{table.path} holds files but no Delta table; sjoin run writes a Delta "
                    "table there: choose another --output"
                )
            if log is not None:
                with log:
                    log.refuse_links_inside()

    def _table(self, relation: str) -> str:
        """The path of the relation's table to hand delta-rs, checked (no link at it, in
        it or in its log) just before each use (``files.LibraryFolder``)."""
        library = self.tables.get(relation)
        if library is None:
            if self.root is None:
                try:
                    self.root = Folder.open(self.directory, _WHAT)
                except OSError as err:
                    raise cannot_write(self.directory, err) from None
            library = self.tables[relation] = LibraryFolder(
                self.root, folder_name(relation), ["_delta_log"]
            )
        try:
            return library.ready()
        except OSError as err:
            raise cannot_write(self.directory / folder_name(relation), err) from None

    def close(self) -> None:
        for library in self.tables.values():
            library.close()
        self.tables = {}
        if self.root is not None:
            self.root.close()
            self.root = None

    def _commit(self, relation: str, frame: pl.DataFrame, mode: str, marks: dict[str, str]) -> None:
        table = self._table(relation)
        try:
            properties = self.deltalake.CommitProperties(custom_metadata=marks)
            if mode == "overwrite":
                self.deltalake.write_deltalake(
                    table,
                    frame.to_arrow(),
                    mode="overwrite",
                    schema_mode="overwrite",
                    commit_properties=properties,
                )
            else:
                self.deltalake.write_deltalake(
                    table, frame.to_arrow(), mode="append", commit_properties=properties
                )
        except OSError as err:
            raise cannot_write(table, err) from None
        except Exception as err:  # delta-rs raises its own kinds (a table it cannot commit to)
            raise RunError(f"cannot write the Delta table {table}: {err}") from None

    def clear(self) -> None:
        """A new run: each relation's table is made (or its rows and schema replaced) with
        no rows, in one commit, as a JSON-lines output file is truncated."""
        for relation, cols in self.columns.items():
            self._commit(relation, output_frame(Rows([]), cols), "overwrite", {"sjoin.run": "new"})

    def _last_batch(self, relation: str) -> int | None:
        """The batch id of the table's latest commit, if sjoin wrote it for a batch."""
        table = self._table(relation)
        if not (Path(table) / "_delta_log").is_dir():
            return None
        try:
            history = self.deltalake.DeltaTable(table).history(1)
        except Exception as err:
            raise RunError(f"cannot read the Delta table {table}: {err}") from None
        mark = history[0].get("sjoin.batch") if history else None
        return int(mark) if isinstance(mark, str) and mark.isdigit() else None

    def write(self, batch: int, outputs: Mapping[str, Batch], again: bool = False) -> int:
        """Append a batch's non-empty relations, one commit each; returns the commits
        made. ``again``: the batch may have been written before a restart; a table whose
        latest commit is this batch's is left as it is."""
        written = 0
        for relation, values in outputs.items():
            if not len(values):
                continue
            if again and self._last_batch(relation) == batch:
                continue
            frame = output_frame(values, self.columns[relation])
            self._commit(relation, frame, "append", {"sjoin.batch": str(batch)})
            written += 1
        return written


def relation_columns(plan: Any, relations: Iterable[str]) -> dict[str, list[tuple[str, SqlType]]]:
    """Each output relation's (column, SQL type) pairs."""
    from ...compiler.plan import StreamNode

    columns = {}
    for name in relations:
        node = plan.node(name)
        assert node is not None
        columns[name] = (
            [(c.name, c.type) for c in node.columns]
            if isinstance(node, StreamNode)
            else [(o.name, o.type) for o in node.output]
        )
    return columns
