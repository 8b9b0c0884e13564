"""Delta Lake both ways for ``sjoin run``: a trace read from Delta tables, and output written
as Delta tables.

**Delta traces** (``--trace DIR``, ``DIR/<stream>/`` a Delta table per stream). The tables
are replayed as Spark's Delta streaming source (``DeltaSource``, Delta 4.4) reads them in a
job that starts when each table is at a version ``S`` (``--delta-at-start``: its latest by
default) and to which every later version is committed while the job waits for it:

- **The first read** is what the source finds when the job starts: without
  ``startingVersion``, the snapshot of version ``S`` (the files added and not removed by
  then, ordered by modification time, then path, as ``DeltaSourceSnapshot`` orders them);
  with ``startingVersion = K``, the files that versions ``K`` .. ``S`` add with
  ``dataChange``; with ``startingVersion = 'latest'``, nothing (the source waits).
- **Each later version** ``v`` > ``S`` is read alone: the files its commit adds with
  ``dataChange``. Version ``v`` of every table is one round (tables line up by version).
- **Admission limits cut a read into micro-batches**: files are admitted in order while the
  source has capacity, at most ``maxFilesPerTrigger`` (default 1000) and, with
  ``maxBytesPerTrigger``, files until their sizes reach it (the file that passes it is still
  admitted); the rest form the next micro-batch, which was waiting when the one before it
  ran (``TraceBatch.queued``: no no-data batch between them). A read without files is still
  one micro-batch, without rows (Spark's source marks the start and end of every version in
  its offsets). Batch ``j`` of a round holds the ``j``-th part of every table that has one.

The first round's trace batch value is the lowest version the tables start at; a later
round's, its version.

A Delta log is untrusted input: every commit from version 0 must be there (a log cleaned up
behind a checkpoint is refused) and every line of it is an action of the protocol's shape;
files are opened without following links or blocking, must be regular files and are read up
to a bound; a data file must lie inside its table. A table whose rows a replay cannot give
exactly is refused with the reason: partition columns, column mapping, deletion vectors, a
schema changed after version 0, a protocol Spark's Delta 4.4 does not read. A commit that
removes data is refused as Spark's source refuses it, unless the stream's ``from delta``
options say ``ignoreDeletes``, ``ignoreChanges`` or ``skipChangeCommits`` (which skips the
commit). Options that filter or start at a time (``startingTimestamp``, ``readChangeFeed``,
``excludeRegex``, ``withEventTimeOrder``) are refused. The data files are Parquet, read with
polars; reading needs no Delta library.

**Delta output** (``--output-format delta --output DIR``): a Delta table per relation,
``DIR/<relation>/``, written with delta-rs (the ``deltalake`` package and pyarrow,
``sjoin[delta]``): a new run replaces each table's rows and schema in one commit, then each
batch that gives the relation rows appends one commit, marked with its batch id
(``sjoin.batch`` in the commit's information), so a restart from a checkpoint that writes the
pending batch again finds it there and writes nothing twice. Column types are those of the
Parquet output.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import polars as pl

from ...compiler.vocabulary.types import SqlType
from ..engine.batches import Batch, Frame, Rows
from ..errors import RunError, UsageError
from ..io.files import (
    Folder,
    LibraryFolder,
    NotRegularFile,
    UnreadableFile,
    cannot_write,
    describe_mode,
    folder_name,
    open_regular,
)
from ..io.trace import Span, StreamedBatches, StreamSchema, Trace, TraceBatch
from .frames import dtype_of
from .parquet_out import output_frame, unsupported_column
from .trace import _parquet_column

__all__ = [
    "LATEST",
    "DeltaStart",
    "DeltaWriter",
    "delta_start",
    "delta_unsupported_column",
    "is_delta_trace",
    "latest_version",
    "read_delta_trace",
    "replay_limits",
]

_COMMIT = re.compile(r"^([0-9]{20})\.json$")
_CHECKPOINT = re.compile(r"^([0-9]{20})\.checkpoint(\.[0-9]+\.[0-9]+)?\.parquet$")
DEFAULT_MAX_FILES = 1000  # DeltaOptions.MAX_FILES_PER_TRIGGER_OPTION_DEFAULT
_NO_FILE_LIMIT = 2**31 - 1 - 8  # Int.MaxValue - 8: maxBytesPerTrigger alone
LATEST = "latest"
# each stream's version when the job starts (``"*"``: every stream's), None: its latest
DeltaStart = Mapping[str, int | None]
REFUSED_OPTIONS = {
    "startingTimestamp": "the replay does not map a time to a version as Spark does (by "
    "commit times); give the version with startingVersion",
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
    starting_version: int | str | None = None  # a version, LATEST, or None: the snapshot


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
    starting: int | str | None = None
    written = lowered.get("startingversion")
    if written is not None:
        # DeltaOptions: exactly "latest", or a Long (Long.parseLong: an optional sign) >= 0
        text = written[1]
        if text == LATEST:
            starting = LATEST
        elif re.fullmatch(r"[+]?[0-9]{1,19}", text) and int(text) < 2**63:
            starting = int(text)
        else:
            raise UsageError(
                f"stream `{stream}`: startingVersion must be a version (0 or more) or "
                f"latest, not {text[:40]!r}, which Spark refuses"
            )
    skip = flag("skipChangeCommits")
    changes = flag("ignoreChanges") or flag("ignoreFileDeletion") or skip
    return ReplayLimits(
        max_files=max_files,
        max_bytes=max_bytes,
        allow_deletes=changes or flag("ignoreDeletes"),
        allow_changes=changes,
        skip_change_commits=skip,
        starting_version=starting,
    )


def delta_start(values: Sequence[str], streams: Iterable[str]) -> dict[str, int | None]:
    """``--delta-at-start`` values as a ``DeltaStart``: ``N`` or ``latest`` for every
    stream's table, ``STREAM=N`` or ``STREAM=latest`` for one (which wins)."""
    known = set(streams)
    out: dict[str, int | None] = {}
    for value in values:
        stream, sep, version = value.rpartition("=")
        key = stream.strip() if sep else "*"
        if sep and key not in known:
            raise UsageError(
                f"--delta-at-start {value[:80]}: `{key[:80]}` is not a stream of the spec "
                f"(streams: {', '.join(sorted(known)) or 'none'})"
            )
        text = version.strip()
        if text.lower() == LATEST:
            out[key] = None
        elif text.isascii() and text.isdigit() and len(text) <= 18:
            out[key] = int(text)
        else:
            raise UsageError(
                f"--delta-at-start {value[:80]}: give a table version (0 or more) or latest, "
                "for every table or as STREAM=VERSION"
            )
    return out


# --------------------------------------------------------------------------- the log
#
# A Delta log is untrusted input: every file is opened without following a link and without
# blocking, checked to be a regular file and read up to a bound; every line is JSON of
# bounded depth whose action has the shape the Delta protocol gives it; every loop runs over
# the files that exist; and a data file is read only inside its table.

MAX_COMMIT_BYTES = 256 * 2**20  # one commit's JSON (Spark's commits of 100,000 files: ~60 MB)
MAX_JSON_DEPTH = 100  # nesting of one line of a commit (the .sjoin front end's own limit)
_INT64 = 2**63
# Delta 4.4 (Spark's Delta source, delta-spark for Spark 4.x) reads tables up to reader
# version 3; at version 3 every feature the table lists must be one it knows
# (TableFeature.allSupportedFeaturesMap, its reader-writer features), else it refuses the
# table (DELTA_UNSUPPORTED_FEATURES_FOR_READ; a newer version: DELTA_INVALID_PROTOCOL_VERSION)
MAX_READER_VERSION = 3
READER_FEATURES = (
    "catalogManaged",
    "columnMapping",
    "deletionVectors",
    "geospatial",
    "geospatial-dev",
    "timestampNtz",
    "typeWidening",
    "typeWidening-preview",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "variantShredding",
    "variantShredding-preview",
    "variantType",
    "variantType-preview",
)
_READER_FEATURES = {f.lower() for f in READER_FEATURES}

# The shape of each action the Delta protocol defines: field -> (kind, required). A field
# not named is ignored (as Spark's reader ignores unknown fields), and so is an action of
# another kind; ``commitInfo`` is free-form (only an object).
_STR, _INT, _BOOL, _OBJ, _MAP, _STRS = "text", "integer", "boolean", "object", "map", "list"
_SHAPES: dict[str, dict[str, tuple[str, bool]]] = {
    "add": {
        "path": (_STR, True),
        "partitionValues": (_MAP, True),
        "size": (_INT, True),
        "modificationTime": (_INT, True),
        "dataChange": (_BOOL, True),
        "stats": (_STR, False),
        "tags": (_MAP, False),
        "deletionVector": (_OBJ, False),
        "baseRowId": (_INT, False),
        "defaultRowCommitVersion": (_INT, False),
        "clusteringProvider": (_STR, False),
    },
    "remove": {
        "path": (_STR, True),
        "dataChange": (_BOOL, True),
        "deletionTimestamp": (_INT, False),
        "extendedFileMetadata": (_BOOL, False),
        "partitionValues": (_MAP, False),
        "size": (_INT, False),
        "stats": (_STR, False),
        "tags": (_MAP, False),
        "deletionVector": (_OBJ, False),
        "baseRowId": (_INT, False),
        "defaultRowCommitVersion": (_INT, False),
    },
    "metaData": {
        "id": (_STR, True),
        "name": (_STR, False),
        "description": (_STR, False),
        "format": (_OBJ, True),
        "schemaString": (_STR, True),
        "partitionColumns": (_STRS, True),
        "configuration": (_MAP, False),
        "createdTime": (_INT, False),
    },
    "protocol": {
        "minReaderVersion": (_INT, True),
        "minWriterVersion": (_INT, True),
        "readerFeatures": (_STRS, False),
        "writerFeatures": (_STRS, False),
    },
    "commitInfo": {},
    "txn": {"appId": (_STR, True), "version": (_INT, True), "lastUpdated": (_INT, False)},
    "cdc": {
        "path": (_STR, True),
        "partitionValues": (_MAP, True),
        "size": (_INT, True),
        "dataChange": (_BOOL, True),
        "tags": (_MAP, False),
    },
    "domainMetadata": {
        "domain": (_STR, True),
        "configuration": (_STR, True),
        "removed": (_BOOL, True),
    },
    "checkpointMetadata": {"version": (_INT, True), "tags": (_MAP, False)},
    "sidecar": {
        "path": (_STR, True),
        "sizeInBytes": (_INT, True),
        "modificationTime": (_INT, True),
        "tags": (_MAP, False),
    },
}
_NONNEGATIVE = {"size", "sizeInBytes", "minReaderVersion", "minWriterVersion"}


@dataclass(frozen=True)
class _File:
    path: Path
    size: int
    modified: int = 0  # modificationTime: the snapshot's file order is (modified, name)
    name: str = ""  # the path as the log writes it
    change: bool = True  # dataChange: a stream reads the file when its commit comes


@dataclass
class _Version:
    """One commit as the replay reads it."""

    number: int
    commit: Path
    adds: list[_File] = field(default_factory=list)  # every add, in commit order
    removed: set[Path] = field(default_factory=set)  # the files its removes take out
    data_removed: bool = False  # a remove with dataChange
    metadata: Mapping[str, Any] | None = None
    protocol: Mapping[str, Any] | None = None
    protocol_line: int = 0


@dataclass
class _Table:
    """One stream's Delta table: every commit from version 0."""

    stream: str
    root: Path
    versions: list[_Version] = field(default_factory=list)


def _fail(root: Path, message: str) -> RunError:
    return RunError(f"{root}: {message}")


def _kind(value: Any) -> str:
    """What a JSON value is, for a message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction or exponent"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _open_regular(path: Path, what: str) -> tuple[int, int]:
    """A descriptor of the regular file ``path`` and its size (``files.open_regular``: no
    link followed, no FIFO waited on). Raises ``RunError`` naming the file otherwise."""
    try:
        return open_regular(path)
    except FileNotFoundError:
        raise RunError(f"{path}: {what} is missing") from None
    except NotRegularFile as err:
        if err.link:
            raise RunError(
                f"{path}: {what} is a symbolic link; a Delta trace reads regular files only "
                "(a link could make it read files outside the table)"
            ) from None
        raise RunError(
            f"{path}: {what} is {describe_mode(err.mode)}; a Delta trace reads regular files only"
        ) from None
    except UnreadableFile as err:
        raise RunError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    except OSError as err:
        raise RunError(f"{path}: cannot open {what}: {err.strerror or err}") from None
    except ValueError as err:  # an embedded NUL
        raise RunError(f"{path!r}: not a path ({err})") from None


def _read_bytes(path: Path, what: str, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (``_open_regular``), at most ``limit``."""
    fd, size = _open_regular(path, what)
    try:
        if size > limit:
            raise RunError(
                f"{path}: {what} has {size:,} bytes, more than a Delta trace reads ({limit:,})"
            )
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
    except OSError as err:
        raise RunError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while read
        raise RunError(
            f"{path}: {what} has more than {limit:,} bytes, more than a Delta trace reads"
        )
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _load_json(text: str, where: str, what: str) -> Any:
    """``text`` as JSON nested at most ``MAX_JSON_DEPTH`` deep (``where``: file:line)."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise RunError(
            f"{where}: {what} is JSON nested deeper than {MAX_JSON_DEPTH} levels"
        ) from None
    except ValueError as err:
        raise RunError(f"{where}: {what} is not JSON: {err}") from None
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            raise RunError(f"{where}: {what} is JSON nested deeper than {MAX_JSON_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children)
    return value


def _check_field(where: str, kind: str, name: str, value: Any, want: str) -> None:
    """Refuse a field of an action whose value is not of kind ``want``."""
    ok = {
        _STR: lambda v: isinstance(v, str),
        _INT: lambda v: type(v) is int and -_INT64 <= v < _INT64,
        _BOOL: lambda v: isinstance(v, bool),
        _OBJ: lambda v: isinstance(v, dict),
        _MAP: lambda v: (
            isinstance(v, dict) and all(isinstance(x, str) or x is None for x in v.values())
        ),
        _STRS: lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    }[want](value)
    if ok and want == _INT and name in _NONNEGATIVE and value < 0:
        ok = False
    if not ok:
        wanted = {
            _STR: "text",
            _INT: "a whole number of 64 bits" + (", not negative" if name in _NONNEGATIVE else ""),
            _BOOL: "true or false",
            _OBJ: "an object",
            _MAP: "an object of text values",
            _STRS: "a list of text",
        }[want]
        found = _kind(value)
        if want == _INT and type(value) is int:
            found = "an integer out of range" if value >= 0 else "negative"
        raise RunError(f"{where}: the {kind} action's `{name}` must be {wanted}, not {found}")


def _action(where: str, value: Any) -> tuple[str, dict[str, Any]] | None:
    """The (kind, fields) of one line's action after checking its shape; None for an action
    of a kind the protocol does not define here (ignored, as Spark ignores it)."""
    if not isinstance(value, dict) or not value:
        raise RunError(f"{where}: not a Delta action (a JSON object naming one action)")
    known = [k for k in value if k in _SHAPES]
    if len(known) > 1:
        raise RunError(
            f"{where}: one line holds {len(known)} actions ({', '.join(known)}); a Delta "
            "commit has one action per line"
        )
    if not known:
        return None
    kind = known[0]
    fields = value[kind]
    if not isinstance(fields, dict):
        raise RunError(f"{where}: the {kind} action is {_kind(fields)}, not an object")
    for name, (want, required) in _SHAPES[kind].items():
        if name not in fields or fields[name] is None:
            if required:
                raise RunError(f"{where}: the {kind} action lacks `{name}`")
            continue
        _check_field(where, kind, name, fields[name], want)
    return kind, fields


def _commit_files(root: Path) -> list[Path]:
    """The table's commit files, version 0 first; every version must be there."""
    log = root / "_delta_log"
    try:
        mode = os.lstat(log).st_mode
    except OSError as err:
        raise _fail(root, f"cannot read the Delta log: {err.strerror or err}") from None
    if not stat.S_ISDIR(mode):
        raise _fail(
            root,
            f"_delta_log is {describe_mode(mode)}; a Delta table's log is a folder inside it",
        )
    commits: dict[int, Path] = {}
    checkpoints = False
    try:
        names = os.listdir(log)
    except OSError as err:
        raise _fail(root, f"cannot read the Delta log: {err.strerror or err}") from None
    for name in names:
        m = _COMMIT.match(name)
        if m is not None:
            commits[int(m[1])] = log / name
        elif _CHECKPOINT.match(name) is not None:
            checkpoints = True
    if not commits:
        raise _fail(root, "the Delta log has no commit (_delta_log/NNNNNNNNNNNNNNNNNNNN.json)")
    # versions 0, 1, ... with none missing: the first gap is found among the files there
    for expected, version in enumerate(sorted(commits)):
        if version != expected:
            behind = " (cleaned up behind a checkpoint)" if checkpoints else ""
            raise _fail(
                root,
                f"the Delta log lacks the commit of version {expected}{behind}, and has "
                f"{commits[version].name}: a trace is replayed from version 0, so it needs "
                "every commit",
            )
    return [commits[v] for v in range(len(commits))]


def latest_version(root: Path) -> int:
    """The latest version of the Delta table at ``root`` (its every commit there)."""
    return len(_commit_files(root)) - 1


def _inside(root: Path, raw: str, commit: Path, where: str) -> Path:
    """The data file that an action's ``path`` names, which must be inside the table."""
    if "\x00" in raw:
        raise RunError(f"{where}: the file path holds a NUL character")
    parsed = urlparse(raw)
    if parsed.scheme == "file":
        candidate = Path(unquote(parsed.path))
    elif parsed.scheme and len(parsed.scheme) > 1:  # (a drive letter is no scheme)
        raise RunError(
            f"{where}: the file {raw} is not on this machine; sjoin run reads local tables"
        )
    else:
        candidate = root / unquote(raw)
    if "\x00" in str(candidate):
        raise RunError(f"{where}: the file path holds a NUL character")
    table = os.path.realpath(root)
    lexical = os.path.normpath(candidate if candidate.is_absolute() else Path.cwd() / candidate)
    real = os.path.join(os.path.realpath(os.path.dirname(lexical)), os.path.basename(lexical))
    for path in (lexical, real):
        if os.path.commonpath([path, table]) != table or path == table:
            raise RunError(
                f"{where}: the file {raw} is outside the table {root}; a Delta trace reads "
                "only files inside each table"
            )
    return Path(real)


def _read_log(root: Path) -> _Table:
    """Every commit of the table at ``root``, each action's shape checked."""
    table = _Table("", root)
    for version, commit in enumerate(_commit_files(root)):
        data = _read_bytes(commit, "the Delta commit", MAX_COMMIT_BYTES)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise RunError(f"{commit}: the Delta commit is not UTF-8 text: {err}") from None
        entry = _Version(version, commit)
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            where = f"{commit}:{number}"
            found = _action(where, _load_json(line, where, "the Delta action"))
            if found is None:
                continue
            kind, fields = found
            if kind == "add":
                path = _inside(root, fields["path"], commit, where)
                entry.adds.append(
                    _File(
                        path,
                        fields["size"],
                        fields["modificationTime"],
                        fields["path"],
                        fields["dataChange"],
                    )
                )
                if fields.get("deletionVector") is not None:
                    raise _fail(
                        root,
                        f"version {version} adds a file with a deletion vector ({where}); a "
                        "trace cannot read those",
                    )
            elif kind == "remove":
                # a file outside the table was never read: nothing to take out
                with contextlib.suppress(RunError):
                    entry.removed.add(_inside(root, fields["path"], commit, where))
                entry.data_removed = entry.data_removed or fields["dataChange"]
            elif kind in ("metaData", "protocol"):
                if getattr(entry, "metadata" if kind == "metaData" else "protocol") is not None:
                    raise RunError(f"{where}: a second {kind} action in one commit")
                if kind == "metaData":
                    entry.metadata = fields
                else:
                    entry.protocol = fields
                    entry.protocol_line = number
        table.versions.append(entry)
    first = table.versions[0]
    if first.protocol is None or first.metadata is None:
        lacks = "protocol" if first.protocol is None else "metaData"
        raise _fail(root, f"the table's first commit ({first.commit.name}) lacks its {lacks}")
    return table


def _check_protocol(version: _Version) -> None:
    """Refuse a protocol that Spark's Delta source (Delta 4.4) refuses to read."""
    protocol = version.protocol
    if protocol is None:
        return
    where = f"{version.commit}:{version.protocol_line}"
    reader = protocol["minReaderVersion"]
    if reader > MAX_READER_VERSION:
        raise RunError(
            f"{where}: the table needs a Delta reader of version {reader} "
            f"(minReaderVersion); Spark's Delta source reads up to version "
            f"{MAX_READER_VERSION} and refuses the table (DELTA_INVALID_PROTOCOL_VERSION)"
        )
    if reader == MAX_READER_VERSION:
        unknown = [
            f for f in protocol.get("readerFeatures") or [] if f.lower() not in _READER_FEATURES
        ]
        if unknown:
            raise RunError(
                f"{where}: the table needs the reader feature(s) "
                f"{', '.join(repr(f[:80]) for f in unknown[:5])}, which Spark's Delta source "
                "does not know and refuses (DELTA_UNSUPPORTED_FEATURES_FOR_READ)"
            )


def _check_metadata(root: Path, metadata: Mapping[str, Any], stream: StreamSchema) -> str:
    """The schema string of a table's metadata, after refusing what a replay cannot read."""
    if metadata["partitionColumns"]:
        raise _fail(
            root,
            "the table is partitioned (by "
            + ", ".join(str(c)[:80] for c in metadata["partitionColumns"][:10])
            + "); a Delta trace reads unpartitioned tables only",
        )
    configuration = metadata.get("configuration") or {}
    mode = str(configuration.get("delta.columnMapping.mode") or "none").lower()
    if mode != "none":
        raise _fail(
            root,
            f"the table maps its columns ({mode[:40]} column mapping); a trace cannot use that",
        )
    schema: str = metadata["schemaString"]
    parsed = _load_json(schema, str(root), "the table's schema (schemaString)")
    fields = parsed.get("fields") if isinstance(parsed, dict) else None
    if not isinstance(fields, list) or not all(
        isinstance(f, dict) and isinstance(f.get("name"), str) for f in fields
    ):
        raise _fail(root, "the table's schema cannot be read: it is not a struct of named fields")
    names = {f["name"] for f in fields}
    missing = [c for c in stream.columns if c not in names]
    if missing:
        raise _fail(
            root,
            f"the columns of stream `{stream.name}` are {', '.join(stream.columns)}; "
            f"the table lacks {', '.join(missing)}",
        )
    return schema


# --------------------------------------------------------------------------- the replay


@dataclass(frozen=True)
class _Reading:
    """How the job reads one table: its version when the job starts, where its first read
    begins, and the micro-batch parts of that read and of each later version."""

    stream: str
    start: int  # the table's version when the job starts
    latest: int
    starting_version: int | str | None  # the stream's startingVersion (None: the snapshot)
    initial: list[list[_File]] | None  # None: nothing to read when the job starts
    later: dict[int, list[list[_File]]]


def _streamed(table: _Table, version: _Version, limits: ReplayLimits) -> list[_File]:
    """The files a version read as a change gives the stream (``DeltaSource.getFileChanges``
    and ``validateCommitAndDecideSkipping``): its adds with ``dataChange``, unless it removes
    rows (refused, or skipped, as the options say); its protocol must be one Spark reads."""
    root = table.root
    _check_protocol(version)
    chosen = [f for f in version.adds if f.change]
    if version.data_removed:
        if chosen and not limits.allow_changes:
            raise _fail(
                root,
                f"version {version.number} changes rows that were read before (it removes "
                "files and adds others), which Spark's Delta source refuses; set "
                "ignoreChanges or skipChangeCommits in the stream's `from delta` options",
            )
        if not chosen and not limits.allow_deletes:
            raise _fail(
                root,
                f"version {version.number} deletes rows, which Spark's Delta source refuses; "
                "set ignoreDeletes in the stream's `from delta` options",
            )
        if limits.skip_change_commits:
            chosen = []
    return chosen


def _reading(
    table: _Table, stream: StreamSchema, limits: ReplayLimits, at_start: int | None
) -> _Reading:
    """How the job reads ``table`` when it starts with the table at version ``at_start``
    (None: its latest; a later version than the table has: its latest)."""
    root = table.root
    latest = len(table.versions) - 1
    start = latest if at_start is None else min(at_start, latest)
    schema: str | None = None
    for version in table.versions:
        if version.metadata is None:
            continue
        found = _check_metadata(root, version.metadata, stream)
        if schema is not None and found != schema:
            raise _fail(
                root,
                f"version {version.number} changes the table's schema; a trace keeps the "
                "schema of version 0",
            )
        schema = found
    begin = limits.starting_version
    if isinstance(begin, int) and begin > start:
        raise UsageError(
            f"stream `{stream.name}`: startingVersion {begin} is after the table's version "
            f"when the job starts ({start}, {root}); Spark's Delta source refuses a version "
            "the table does not have (VersionNotFoundException)"
        )
    initial: list[list[_File]] | None
    if begin is None:
        # the snapshot of version ``start``: the files added and not removed by then,
        # ordered as DeltaSourceSnapshot orders them (modification time, then path); the
        # protocol Spark checks is the snapshot's
        _check_protocol(next(v for v in reversed(table.versions[: start + 1]) if v.protocol))
        live: dict[Path, _File] = {}
        for version in table.versions[: start + 1]:
            for path in version.removed:
                live.pop(path, None)
            for f in version.adds:
                live[f.path] = f
        initial = _admitted(sorted(live.values(), key=lambda f: (f.modified, f.name)), limits)
    elif not isinstance(begin, int):  # LATEST
        initial = None  # the source waits for the first version after ``start``
    else:
        # the changes of versions ``begin`` .. ``start``, admitted across their bounds
        files: list[_File] = []
        for version in table.versions[begin : start + 1]:
            files += _streamed(table, version, limits)
        initial = _admitted(files, limits)
    later = {
        v.number: _admitted(_streamed(table, v, limits), limits)
        for v in table.versions[start + 1 :]
    }
    return _Reading(stream.name, start, latest, begin, initial, later)


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
    fd, _ = _open_regular(path, "a data file the Delta log names")
    try:
        with os.fdopen(fd, "rb") as handle:
            frame = pl.read_parquet(handle, columns=list(schema.columns))
    except RunError:
        raise
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


def _span(first: int, last: int) -> str:
    return f"version {first}" if first == last else f"versions {first}-{last}"


def _files(count: int) -> str:
    return f"{count} file" + ("" if count == 1 else "s")


def _describe(reading: _Reading, root: Path, asked: bool) -> str:
    """A ``--verbose`` line: how the job reads one table when it starts."""
    at = f"version {reading.start}" + (
        "" if reading.start == reading.latest else f" (of {reading.latest})"
    )
    when = "" if asked else " (its latest; --delta-at-start N starts it at N)"
    if reading.initial is None:
        first = "startingVersion latest: it reads nothing until the next version"
    else:
        count = sum(len(p) for p in reading.initial)
        if reading.starting_version is None:
            what = f"the snapshot of version {reading.start} ({_files(count)})"
        else:
            what = (
                f"the files that {_span(int(reading.starting_version), reading.start)} "
                f"add ({_files(count)}, startingVersion {reading.starting_version})"
            )
        first = f"its first read is {what}"
    return f"Delta trace: `{reading.stream}` ({root}) starts at {at}{when}; {first}"


def read_delta_trace(
    directory: Path,
    schemas: Mapping[str, StreamSchema],
    options: Mapping[str, Mapping[str, str]] | None = None,
    *,
    at_start: DeltaStart | None = None,
    digests: bool = False,
    stream: bool = False,
) -> Trace:
    """A Delta trace: ``<stream>/`` a Delta table under ``directory`` per stream (the folder
    named as ``--output-format delta`` names it), replayed as the module's docstring says.
    ``options``: each stream's ``from delta`` options (its admission limits and
    startingVersion); ``at_start``: each table's version when the job starts (``"*"``: every
    table's; None or missing: its latest). With ``digests`` each batch gets a SHA-256 of the
    files it reads (checkpoints compare it). ``Trace.notes`` says how versions map to
    micro-batches (``--verbose``).  ``stream``: every data file is checked in a pass that
    drops each micro-batch's rows once read, and ``StreamedBatches`` read each micro-batch's
    files again as the run reaches it (memory holds a batch or two, not the tables)."""
    starts = dict(at_start or {})
    unknown = sorted(set(starts) - set(schemas) - {"*"})
    if unknown:
        raise UsageError(f"--delta-at-start: `{unknown[0]}` is not a stream of the spec")
    by_folder = {folder_name(name): name for name in schemas}
    readings: dict[str, _Reading] = {}
    notes: list[str] = []
    try:
        entries = sorted(directory.iterdir())
    except OSError as err:
        raise UsageError(f"{directory}: cannot list the trace: {err.strerror or err}") from None
    for entry in entries:
        if not entry.is_dir() or entry.name.startswith((".", "_")):
            continue
        named = by_folder.get(entry.name)
        if named is None:
            raise UsageError(
                f"{entry}: `{entry.name}` is not a stream of the spec "
                f"(streams: {', '.join(sorted(schemas)) or 'none'})"
            )
        if not (entry / "_delta_log").is_dir():
            raise UsageError(
                f"{entry}: not a Delta table (no _delta_log folder); a Delta trace has one "
                "Delta table per stream"
            )
        limits = replay_limits(named, (options or {}).get(named, {}))
        table = _read_log(entry)
        table.stream = named
        start = starts.get(named, starts.get("*"))
        readings[named] = _reading(table, schemas[named], limits, start)
        notes.append(_describe(readings[named], entry, named in starts or "*" in starts))
    if not readings:
        raise UsageError(f"{directory}: no <stream>/ Delta tables")
    # the rounds: the first read of every table that has one, then each later version
    rounds: list[tuple[int, str, dict[str, list[list[_File]]]]] = []
    first = {s: r.initial for s, r in readings.items() if r.initial is not None}
    if first:
        rounds.append((min(r.start for r in readings.values()), "the first read", first))
    for version in sorted({v for r in readings.values() for v in r.later}):
        present = {s: r.later[version] for s, r in readings.items() if version in r.later}
        rounds.append((version, f"version {version}", present))
    batches: list[TraceBatch] = []
    spans: list[Span] = []
    for value, name, parts_of in rounds:
        parts = max(len(p) for p in parts_of.values())
        streams = ", ".join(
            f"`{s}` {_files(sum(len(x) for x in p))}" for s, p in sorted(parts_of.items())
        )
        notes.append(
            f"Delta trace: trace batch {value}: {name} ({streams}): "
            + ("1 micro-batch" if parts == 1 else f"{parts} micro-batches (admission limits)")
        )
        for j in range(parts):
            chunk = {s: p[j] for s, p in parts_of.items() if j < len(p)}
            digest = None
            if digests:
                hashed = hashlib.sha256(f"delta v{value}.{j}".encode())
                for s, files in sorted(chunk.items()):
                    hashed.update(f"{s}\x00".encode())
                    for f in files:
                        hashed.update(f"{f.path}\x00{f.size}\x00".encode())
                digest = hashed.digest()
            rows = {s: _rows(files, schemas[s]) for s, files in chunk.items()}
            if stream:  # checked, and dropped
                del rows
                spans.append(Span(value, 0, digest=digest, key=(chunk, j > 0)))
                continue
            batches.append(TraceBatch(value, rows, 0, digest, queued=j > 0))
    started = {s: r.start for s, r in readings.items()}
    if stream:

        def load(span: Span) -> TraceBatch:
            chunk, queued = span.key
            rows = {s: _rows(files, schemas[s]) for s, files in chunk.items()}
            return TraceBatch(span.value, rows, 0, span.digest, queued=queued)

        streamed = StreamedBatches(spans, load)
        return Trace(str(directory), streamed, [], notes=notes, delta_start=started)
    return Trace(str(directory), batches, [], notes=notes, delta_start=started)


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


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


_WHAT = "the Delta output directory"


class DeltaWriter:
    """Writes each batch's relations as commits to a Delta table per relation under
    ``directory`` (the module's docstring)."""

    def __init__(self, directory: Path, columns: dict[str, list[tuple[str, SqlType]]]) -> None:
        missing = [name for name in ("deltalake", "pyarrow") if not _importable(name)]
        if missing:
            raise UsageError(
                "--output-format delta writes with delta-rs (the deltalake package) and hands "
                f"it rows as Arrow tables (pyarrow); {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not installed: pip install "
                "'sjoin[delta]'"
            )
        import deltalake

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
    from ...compiler.planning.plan import StreamNode

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
