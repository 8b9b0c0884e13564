"""``--checkpoint DIR``: the run's state after each micro-batch, so that a killed run resumes
where it stopped and its output ends up exactly as a clean run's.

After computing batch k the runner *commits* one snapshot (``state.pkl``: every operator's
state, the watermarks, batch ids, the trace position, batch k's output and the size each
output file had before batch k) by writing a temporary file, fsync-ing it and
``os.replace``-ing it over the old one; only then does it append batch k's lines to the
output files.  A restart truncates each output file back to the recorded size and writes
batch k's lines again, so a kill at any point neither loses nor duplicates a line.  Output
that cannot be truncated (stdout) is re-sent only if the ``delivered`` marker says batch k
never got out.

``state.pkl`` is ``sjoin checkpoint``, a line ``sha256 HEX`` and a body: a line ``format N``
and the pickled snapshot.  The SHA-256 of the body is checked before anything is unpickled,
so a damaged file (a flipped byte, a torn copy) is refused, never resumed from.  Snapshots
hold only plain data (tuples, lists, dicts, numbers, strings, ``Decimal``) and are read back
with an unpickler that resolves no name but ``decimal.Decimal``: pickle runs code only
through the names it resolves, so a snapshot made by someone else cannot run any.  A
checksum can be made by anyone, so ``snapshot.check_snapshot`` then checks the whole
snapshot against the plan (every field's type, length, range) before any of it is used.

Each snapshot also records how many trace batches the run has consumed and a running
SHA-256 over their digests (``read_trace(digests=True)``: the lines of each batch's rows, or
a Parquet trace's files).  A restart recomputes it on the trace it is given and refuses a
trace whose consumed part differs.  ``trace.jsonl`` lists each consumed batch's digest; it
only serves to name the first batch that differs.

The directory is the run's alone (``files.Folder``): a run holds ``lock`` (``flock``) from
start to end, so a second run on it is refused; its files are reached without following a
link, written under new unpredictable temporary names and renamed into place, and read back
only when they are regular files, up to the size they have.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import io
import json
import os
import pickle
import re
import sys
import time
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...compiler.planning.canonical import canonical_text
from ...compiler.planning.plan import Plan
from ..errors import CheckpointError, UnsafeFileError
from ..io.files import Folder

FORMAT_VERSION = 2
STATE_FILE = "state.pkl"
DELIVERED_FILE = "delivered"
TRACE_FILE = "trace.jsonl"  # one line per consumed trace batch: index, batch, line, sha256
LOCK_FILE = "lock"  # held (flock) by the run using the directory; holds its process id
MAGIC = b"sjoin checkpoint\n"
_CHECKSUM = re.compile(rb"sha256 ([0-9a-f]{64})\n")
_FORMAT = re.compile(rb"format ([0-9]{1,9})\n")
# the parts of a snapshot and their types
REQUIRED: dict[str, type] = {
    "fingerprint": str,
    "step": int,
    "engine": dict,
    "pending": dict,
    "offsets": dict,
    "trace": dict,
}
PAUSE_ENV = "SJOIN_RUNTIME_TEST_PAUSE"  # test hook: "SEQ:STAGE" (STAGE committed|emitted)


class _PlainUnpickler(pickle.Unpickler):
    """Only builtin containers and ``decimal.Decimal`` come out of a snapshot."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("decimal", "Decimal"):
            from decimal import Decimal

            return Decimal
        raise CheckpointError(
            f"checkpoint holds an unexpected object {module}.{name}; it was not written by "
            "sjoin and is not loaded"
        )


# id(plan) -> (the plan, weakly; relation -> fingerprint): a run commits after every batch,
# and the plan's dump (its SQL written out by sqlglot) costs more than a small run's batch.
# A Plan is frozen; it holds dicts, so it is no dict key itself.
_FINGERPRINTS: dict[int, tuple[weakref.ref[Plan], dict[str | None, str]]] = {}


def fingerprint(plan: Plan, relation: str | None) -> str:
    """What a checkpoint's state depends on: the SHA-256 of the plan's canonical dump
    (``compiler/planning/canonical.py``: every decision the run reads, field by field: relations,
    conditions, columns, state rules, watermark use, version quirks, settings) and the
    relation chosen.  Sinks are left out: the runtime writes none of them.  A changed spec
    or another Spark target cannot reuse the checkpoint."""
    key = id(plan)
    entry = _FINGERPRINTS.get(key)
    if entry is None or entry[0]() is not plan:
        entry = (weakref.ref(plan, lambda _: _FINGERPRINTS.pop(key, None)), {})
        _FINGERPRINTS[key] = entry
    known = entry[1]
    if relation not in known:
        known[relation] = _fingerprint(plan, relation)
    return known[relation]


def _fingerprint(plan: Plan, relation: str | None) -> str:
    text = canonical_text(dataclasses.replace(plan, sinks=()), relation=relation)
    return hashlib.sha256(text.encode()).hexdigest()


def legacy_fingerprint(plan: Plan, relation: str | None) -> str:
    """The identity a checkpoint of sjoin before the canonical dump recorded: the SHA-256 of
    `sjoin plan --format json` (less its sinks, and less the fields added since:
    ``sides.*.evicted_rows_skipped``) with the relation.  Asked only when a checkpoint's
    identity is not ``fingerprint``'s, so that a checkpoint made before resumes; the
    explainer is imported only then."""
    from ...compiler.describe.explain import plan_json

    shown = plan_json(plan, [])
    shown.pop("sinks", None)
    for join in shown["joins"]:
        for side in join["sides"].values():
            side.pop("evicted_rows_skipped", None)
    shown["relation"] = relation
    text = json.dumps(shown, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Checkpoint:
    """One checkpoint directory, held for the run: opened once (the path the user gave is
    followed), locked against a second run, every file in it reached without following a
    link (``files.Folder``)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        try:
            self.folder = Folder.open(self.directory, "the checkpoint directory")
        except OSError as err:
            raise CheckpointError(
                f"cannot use {self.directory} as the checkpoint directory: {err.strerror or err}"
            ) from None
        self.lock_fd = -1
        try:
            self._lock()
            self.folder.remove_temporaries()  # a killed run's, never renamed into place
        except BaseException:
            self.close()
            raise

    def _lock(self) -> None:
        """Hold ``lock`` exclusively until ``close``: a second run on this directory is
        refused, not let to interleave its commits with this one's (POSIX ``flock``)."""
        import fcntl

        try:
            fd = self.folder.open_lock(LOCK_FILE)
        except OSError as err:
            raise CheckpointError(
                f"cannot lock {self.directory / LOCK_FILE}: {err.strerror or err}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            try:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            except OSError:
                holder = ""
            os.close(fd)
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise CheckpointError(
                    f"cannot lock {self.directory / LOCK_FILE}: {err.strerror or err}"
                ) from None
            who = f" (process {holder})" if holder.isdigit() else ""
            raise CheckpointError(
                f"another sjoin run is using the checkpoint directory {self.directory}{who}; "
                "wait for it to end, or give this run another checkpoint directory"
            ) from None
        self.lock_fd = fd
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # the pid only makes the message of a refused second run clearer

    def close(self) -> None:
        """Release the lock and the directory."""
        if self.lock_fd >= 0:
            os.close(self.lock_fd)
            self.lock_fd = -1
        self.folder.close()

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a Checkpoint dropped unclosed still lets go of its lock
        if getattr(self, "folder", None) is not None:
            self.close()

    @property
    def state_path(self) -> Path:
        return self.directory / STATE_FILE

    def _read(self, name: str, limit: int | None = None) -> bytes | None:
        try:
            return self.folder.read(name, limit)
        except UnsafeFileError as err:
            raise CheckpointError(str(err)) from None
        except OSError as err:
            raise CheckpointError(
                f"cannot read checkpoint {self.directory / name}: {err.strerror or err}"
            ) from None

    def _write(self, name: str, payload: bytes) -> None:
        try:
            self.folder.write(name, payload)
        except UnsafeFileError as err:
            raise CheckpointError(str(err)) from None
        except OSError as err:
            raise CheckpointError(
                f"cannot write checkpoint {self.directory / name}: {err.strerror or err}"
            ) from None

    def load(self) -> dict[str, Any] | None:
        """The last committed snapshot, or None for a fresh directory.  Only its top level
        is checked here; ``snapshot.check`` checks the rest against the plan."""
        raw = self._read(STATE_FILE)
        if raw is None:
            return None
        payload = self._verified(raw)
        try:
            data = _PlainUnpickler(io.BytesIO(payload)).load()
        except CheckpointError:
            raise
        except Exception as err:  # the checksum held, so the file was made to be this way
            raise CheckpointError(f"cannot read checkpoint {self.state_path}: {err}") from None
        if type(data) is not dict:
            raise CheckpointError(f"{self.state_path} holds no snapshot; {_NEW_DIRECTORY}")
        missing = [key for key in REQUIRED if key not in data]
        if missing:
            raise CheckpointError(
                f"{self.state_path} lacks {', '.join(f'`{k}`' for k in missing)}: it is not a "
                f"complete checkpoint; {_NEW_DIRECTORY}"
            )
        wrong = [key for key, kind in REQUIRED.items() if type(data[key]) is not kind]
        if wrong:
            raise CheckpointError(
                f"{self.state_path} has a malformed {', '.join(f'`{k}`' for k in wrong)}; "
                f"{_NEW_DIRECTORY}"
            )
        return data

    def _verified(self, raw: bytes) -> bytes:
        """The pickled snapshot in ``raw``, once its checksum and format are checked."""
        if not raw.startswith(MAGIC):
            if raw.startswith(b"\x80"):  # format 1 was a bare pickle
                raise CheckpointError(
                    f"{self.state_path} was written by an older sjoin (checkpoint format 1); "
                    f"{_NEW_DIRECTORY}"
                )
            raise CheckpointError(
                f"{self.state_path} is not an sjoin checkpoint, or is damaged; {_NEW_DIRECTORY}"
            )
        checksum = _CHECKSUM.match(raw, len(MAGIC))
        if checksum is None:
            raise CheckpointError(
                f"{self.state_path} is damaged: its checksum line is unreadable; {_NEW_DIRECTORY}"
            )
        body = raw[checksum.end() :]
        if hashlib.sha256(body).hexdigest().encode() != checksum[1]:
            raise CheckpointError(
                f"{self.state_path} is damaged: its content does not match its SHA-256 "
                f"checksum; {_NEW_DIRECTORY}"
            )
        form = _FORMAT.match(body)
        version = int(form[1]) if form is not None else None
        if form is None or version != FORMAT_VERSION:
            raise CheckpointError(
                f"{self.state_path} was written by another sjoin version (checkpoint format "
                f"{version}; this one reads format {FORMAT_VERSION}); {_NEW_DIRECTORY}"
            )
        return body[form.end() :]

    def commit(self, data: dict[str, Any]) -> None:
        """Atomically replace the snapshot: a new temporary file, fsync, rename, fsync the
        directory."""
        body = b"format %d\n" % FORMAT_VERSION + pickle.dumps(data, protocol=5)
        checksum = hashlib.sha256(body).hexdigest().encode()
        self._write(STATE_FILE, MAGIC + b"sha256 " + checksum + b"\n" + body)

    # ------------------------------------------------------ consumed trace batches

    @property
    def trace_path(self) -> Path:
        return self.directory / TRACE_FILE

    def reset_trace_batches(self, entries: Iterable[dict[str, Any]]) -> None:
        """Start ``trace.jsonl`` afresh with these batches (a new run, or a resumed one)."""
        self._write(TRACE_FILE, b"".join(_entry_line(e) for e in entries))

    def add_trace_batches(self, entries: Iterable[dict[str, Any]]) -> None:
        """Append batches consumed since the last commit (before committing it).  Not
        synced: the file only helps to name a differing batch; the snapshot's checksum,
        not this file, decides whether a trace matches."""
        try:
            with self.folder.open_append(TRACE_FILE) as handle:
                handle.writelines(_entry_line(e) for e in entries)
        except UnsafeFileError as err:
            raise CheckpointError(str(err)) from None
        except OSError as err:
            raise CheckpointError(f"cannot write {self.trace_path}: {err.strerror}") from None

    def trace_batches(self) -> dict[int, dict[str, Any]]:
        """The recorded batches by index; a line that cannot be read is left out."""
        found: dict[int, dict[str, Any]] = {}
        raw = self._read(TRACE_FILE)
        for line in (raw or b"").splitlines():
            try:
                entry = json.loads(line)
                found[int(entry["index"])] = entry
            except (ValueError, TypeError, KeyError, RecursionError):
                continue
        return found

    def delivered(self) -> int:
        """The last step whose output reached a sink that cannot be rewound (-1: none)."""
        raw = self._read(DELIVERED_FILE, limit=64)
        try:
            return int((raw or b"").strip() or -1)
        except ValueError:
            return -1

    def mark_delivered(self, step: int) -> None:
        self._write(DELIVERED_FILE, str(step).encode())


_NEW_DIRECTORY = "use a new checkpoint directory (or remove this one) to start afresh"


def _entry_line(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry).encode() + b"\n"


def pause_for_test(stage: str, step: int) -> None:
    """Test hook: with ``SJOIN_RUNTIME_TEST_PAUSE=STEP:STAGE`` the process announces itself on
    stderr and waits there to be killed (kill-and-restart tests)."""
    wanted = os.environ.get(PAUSE_ENV)
    if wanted != f"{step}:{stage}":
        return
    print(f"sjoin-runtime: paused after step {step} {stage}", file=sys.stderr, flush=True)
    while True:
        time.sleep(60)
