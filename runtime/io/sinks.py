"""Where a run's lines and rows go, batch by batch: a sink per destination (the caller's
memory, a shown table, stdout or another stream, a pipe, a file rewound on restart, a Parquet
or Delta output directory).  A rewindable sink reports its size to each checkpoint commit and
is cut back to it on restart (``recovery.py``); a file written with a checkpoint also reports
the SHA-256 of what it holds, and a restart refuses a file whose committed part is not that
(another run's file, or one edited since) rather than cut it."""

from __future__ import annotations

import hashlib
import io
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Literal

from ...compiler.planning.plan import Plan
from ..errors import CheckpointError
from .files import Place, cannot_write, folder_name, open_named
from .output import BatchOutput

OutputFormat = Literal["jsonl", "parquet", "delta"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("jsonl", "parquet", "delta")


class Sink:
    """A destination of a run's batches (the base: writes nothing, cannot be rewound)."""

    kind: str  # "rows", "progress" or "late" (`--late-rows`)
    rewindable = False
    needs_outputs = False  # keeps each batch's raw outputs (a frame or rows per relation)

    @property
    def offset_key(self) -> str:
        """The key of this sink's position in a checkpoint's offsets."""
        return self.kind

    trace_batches = False  # add "trace_batch" to each line (`sjoin run --trace-batches`)

    def text(self, out: BatchOutput) -> Iterable[bytes]:
        """What the sink writes of a batch: UTF-8 lines, each ending in LF, in chunks."""
        if self.kind == "rows":
            return out.output_text(self.trace_batches)
        if self.kind == "late":
            return out.late_text()
        return [(out.progress_line(self.trace_batches) + "\n").encode("utf-8")]

    def start(self, offset: int | None, digest: str | None = None) -> None:
        """Open for a run that resumes after ``offset`` (None: a new run); ``digest``: the
        SHA-256 of what the sink held at that offset, as the checkpoint recorded it."""

    def verify(self, offset: int | None, digest: str | None = None) -> None:
        """Check, before any sink is started, that what the sink holds is what a resumed
        run's checkpoint recorded (``offset``, ``digest``); raise ``CheckpointError`` if not."""

    def size(self) -> int | None:
        return None

    def digest(self) -> str | None:
        """The SHA-256 of what the sink holds (None: not tracked)."""
        return None

    def write(self, chunks: Iterable[bytes]) -> None: ...

    def deliver(self, out: BatchOutput) -> None:
        self.write(self.text(out))

    def bind(self, plan: Plan, relations: Sequence[str]) -> None:
        """Learn the run's output relations (before ``start``)."""

    def places(self, relations: Sequence[str]) -> list[Place]:
        """The paths the sink writes (``files.check_places``)."""
        return []

    def close(self) -> None: ...


class MemorySink(Sink):
    """``run()``'s sink: the caller gets the batches themselves, no text."""

    kind = "rows"

    def text(self, out: BatchOutput) -> Iterable[bytes]:
        return []


class ShowSink(Sink):
    """The rows shown by the caller (``show_rows``), batch by batch, instead of as lines."""

    kind = "rows"

    def __init__(self, show: Callable[[BatchOutput], None]) -> None:
        self.show = show

    def text(self, out: BatchOutput) -> Iterable[bytes]:
        self.show(out)
        return []


class StreamSink(Sink):
    """A stream this process holds (stdout, stderr): a failure to write to it (a full
    disk, a closed pipe) is a ``WriteError`` naming it."""

    def __init__(self, stream: IO[str], kind: str) -> None:
        self.stream = stream
        self.kind = kind

    @property
    def shown(self) -> str:
        """The stream's name in messages."""
        path = getattr(self, "path", None)
        return (
            str(path)
            if path is not None
            else str(getattr(self.stream, "name", "a stream")).strip("<>")
        )

    def deliver(self, out: BatchOutput) -> None:
        binary = getattr(self.stream, "buffer", None)  # a text stream's bytes underneath
        if self.kind != "rows" or binary is None:
            self.write(self.text(out))
            return
        try:
            self.stream.flush()  # what was written as text goes first
            out.write_text(binary, self.trace_batches)
            binary.flush()
        except OSError as err:
            raise cannot_write(self.shown, err) from None

    def write(self, chunks: Iterable[bytes]) -> None:
        binary = getattr(self.stream, "buffer", None)  # a text stream's bytes underneath
        try:
            if binary is not None:
                self.stream.flush()  # what was written as text goes first
            for chunk in chunks:
                if binary is not None:
                    binary.write(chunk)
                else:
                    self.stream.write(chunk.decode("utf-8"))
            (binary or self.stream).flush()
        except OSError as err:
            raise cannot_write(self.shown, err) from None


class PipeSink(StreamSink):
    """A device or a pipe (``/dev/stderr``, a FIFO): written as a stream, it cannot be
    rewound, like stdout.  Opened at ``start``, once every path of the run is checked."""

    def __init__(self, path: Path, kind: str, option: str) -> None:
        self.path = path
        self.option = option
        self.kind = kind

    def places(self, relations: Sequence[str]) -> list[Place]:
        return [Place(self.option, self.path)]

    def start(self, offset: int | None, digest: str | None = None) -> None:
        self.stream = open_named(self.path, "w")

    def close(self) -> None:
        stream = getattr(self, "stream", None)
        if stream is not None:
            del self.stream
            try:
                stream.close()
            except OSError as err:  # what it still held could not be written
                raise cannot_write(self.path, err) from None


def path_sink(path: Path, kind: str, option: str, durable: bool = True) -> Sink:
    """A sink for ``--output`` / ``--progress PATH``.  A path that is this process's own
    stdout or stderr (``/dev/stderr``, even when stderr is redirected to a file) is written
    through that stream, so that both share one file offset and interleave whole lines;
    opening the file anew would write over what the stream writes.  ``durable``: a regular
    file is synced to the disk after each batch (``FileSink``)."""
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        try:
            if os.path.samestat(os.stat(path), os.fstat(fd)):
                return StreamSink(stream, kind)
        except (OSError, ValueError):
            continue
    if path.exists() and not path.is_file():
        return PipeSink(path, kind, option)
    return FileSink(path, kind, option, durable)


KEEP_CACHED = 256 << 20  # bytes of an output file kept in the page cache behind its end


class FileSink(Sink):
    """An output file written so that it can be rewound to the end of a committed batch.
    A ``durable`` one (a run with ``--checkpoint``) is synced to the disk after each batch,
    so that the size the next commit records is on the disk even if the machine stops, and
    keeps the SHA-256 of what it holds, which the commit records beside the size; without a
    checkpoint nothing reads either, and the sync would only make the run wait for the disk
    (at 1.4 million lines a batch, most of the run's time)."""

    rewindable = True
    CHUNK = 1 << 20

    def __init__(self, path: Path, kind: str, option: str, durable: bool = True) -> None:
        self.path = path
        self.kind = kind
        self.option = option
        self.durable = durable
        self.handle: io.BufferedRandom | None = None
        self.checkpoint = "the checkpoint"  # named in refusals (``Runner`` sets its path)
        self.hash = hashlib.sha256()
        self.hashed = 0  # the bytes of the file ``hash`` has read

    def places(self, relations: Sequence[str]) -> list[Place]:
        return [Place(self.option, self.path)]

    def verify(self, offset: int | None, digest: str | None = None) -> None:
        """Open the file and check that it holds what the checkpoint recorded: at least
        ``offset`` bytes, whose SHA-256 is ``digest``; nothing is cut yet (``start``)."""
        if self.handle is not None:
            return
        handle = open_named(self.path, "r+b" if self.path.exists() else "w+b")
        end = handle.seek(0, os.SEEK_END)
        if offset is not None and end < offset:
            handle.close()
            raise CheckpointError(
                f"{self.path} is shorter than {self.checkpoint} recorded ({end} < {offset} "
                "bytes): restart with the same output files, or with a new checkpoint directory"
            )
        self.handle = handle  # type: ignore[assignment]
        self.hash, self.hashed = hashlib.sha256(), 0
        if offset and (self.durable or digest is not None):
            self._hash_to(offset)
            if digest is not None and self.hash.hexdigest() != digest:
                self.close()
                raise CheckpointError(
                    f"{self.path} is not the {self.option} file that the run of "
                    f"{self.checkpoint} wrote: its first {offset} bytes differ from what it "
                    "recorded (another run's file, or edited since); restart with that run's "
                    "file as it was, or with a new checkpoint directory"
                )

    def start(self, offset: int | None, digest: str | None = None) -> None:
        self.verify(offset, digest)
        assert self.handle is not None
        try:
            self.handle.truncate(offset or 0)
        except OSError as err:
            raise cannot_write(self.path, err) from None
        self.handle.seek(offset or 0)

    def _hash_to(self, end: int) -> None:
        """Fold the file's bytes from ``hashed`` up to ``end`` into ``hash``; the handle is
        left at ``end``."""
        assert self.handle is not None
        self.handle.seek(self.hashed)
        while self.hashed < end:
            chunk = self.handle.read(min(self.CHUNK, end - self.hashed))
            if not chunk:
                break
            self.hash.update(chunk)
            self.hashed += len(chunk)
        self.handle.seek(end)

    def size(self) -> int | None:
        assert self.handle is not None
        return self.handle.tell()

    def digest(self) -> str | None:
        if not self.durable:
            return None
        assert self.handle is not None
        self._hash_to(self.handle.tell())
        return self.hash.hexdigest()

    def deliver(self, out: BatchOutput) -> None:
        if self.kind != "rows":
            self.write(self.text(out))
            return
        assert self.handle is not None
        try:
            out.write_text(self.handle, self.trace_batches)  # columns: straight into the file
            self._sync()
        except OSError as err:  # a full disk: the checkpoint still holds the batch pending
            raise cannot_write(self.path, err) from None

    def write(self, chunks: Iterable[bytes]) -> None:
        assert self.handle is not None
        try:
            for chunk in chunks:
                self.handle.write(chunk)
            self._sync()
        except OSError as err:  # a full disk: the checkpoint still holds the batch pending
            raise cannot_write(self.path, err) from None

    def _sync(self) -> None:
        assert self.handle is not None
        self.handle.flush()
        if self.durable:
            os.fsync(self.handle.fileno())
        self._release()

    def _release(self) -> None:
        """Let the kernel write out, and then drop from memory, what lies more than
        ``KEEP_CACHED`` bytes behind the end of the file: the run never reads it again (with a
        checkpoint, once the next commit has read it back for its SHA-256).
        Without it a long output (gigabytes of JSON lines) stays in memory as dirty pages
        until the kernel throttles the writer to the disk's pace and reclaims memory in the
        writer's own time (issue 26: 2 GiB written in 4 MB pieces took 1.9-4.7 s of system
        time and 7-21 s, and 0.6 s and 2.2 s with this)."""
        assert self.handle is not None
        end = self.handle.tell() - KEEP_CACHED
        if self.durable:  # the next commit reads back the bytes not hashed yet: keep them
            end = min(end, self.hashed)
        if end > 0 and hasattr(os, "posix_fadvise"):
            os.posix_fadvise(self.handle.fileno(), 0, end, os.POSIX_FADV_DONTNEED)

    def close(self) -> None:
        if self.handle is not None:
            handle, self.handle = self.handle, None
            try:
                handle.close()
            except OSError as err:  # what it still held could not be written
                raise cannot_write(self.path, err) from None


class ParquetSink(Sink):
    """``--output-format parquet``: a file per relation per batch under a directory
    (``columnar/parquet_out.py``).  A new run removes the batch files of an earlier one; a
    restart keeps them and writes the pending batch again, replacing its files."""

    kind = "rows"
    rewindable = True
    needs_outputs = True
    offset_key = "parquet"  # type: ignore[assignment]  # files written, not bytes

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.files = 0

    def bind(self, plan: Plan, relations: Sequence[str]) -> None:
        from ..columnar.delta import relation_columns
        from ..columnar.parquet_out import ParquetWriter

        self.writer = ParquetWriter(self.directory, relation_columns(plan, relations))

    def places(self, relations: Sequence[str]) -> list[Place]:
        return folder_places(self.directory, relations)

    def start(self, offset: int | None, digest: str | None = None) -> None:
        if offset is None:
            self.writer.clear()
        else:
            self.writer.remove_temporaries()
        self.files = offset or 0

    def size(self) -> int | None:
        return self.files

    def deliver(self, out: BatchOutput) -> None:
        assert out.make_outputs is not None
        self.files += self.writer.write(out.batch, out.make_outputs())

    def close(self) -> None:
        if hasattr(self, "writer"):
            self.writer.close()


def folder_places(directory: Path, relations: Sequence[str]) -> list[Place]:
    """An output directory (the user's) and each relation's folder in it (sjoin's): the
    places of a Parquet or Delta output."""
    return [
        Place("--output", directory),
        *(Place("--output", directory / folder_name(r), tree=True) for r in relations),
    ]


class DeltaSink(Sink):
    """``--output-format delta``: a Delta table per relation under a directory, a commit per
    batch that gives it rows (``columnar/delta.py``).  A new run replaces the tables' rows;
    a restart writes the pending batch again where its commit is not there yet."""

    kind = "rows"
    rewindable = True
    needs_outputs = True
    offset_key = "delta"  # type: ignore[assignment]  # commits made, not bytes

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.commits = 0
        self.again = False

    def bind(self, plan: Plan, relations: Sequence[str]) -> None:
        from ..columnar.delta import DeltaWriter, relation_columns

        self.writer = DeltaWriter(self.directory, relation_columns(plan, relations))

    def places(self, relations: Sequence[str]) -> list[Place]:
        return folder_places(self.directory, relations)

    def start(self, offset: int | None, digest: str | None = None) -> None:
        if offset is None:
            self.writer.clear()
        self.commits = offset or 0
        self.again = offset is not None  # the pending batch may be written already

    def size(self) -> int | None:
        return self.commits

    def deliver(self, out: BatchOutput) -> None:
        assert out.make_outputs is not None
        self.commits += self.writer.write(out.batch, out.make_outputs(), again=self.again)
        self.again = False

    def close(self) -> None:
        if hasattr(self, "writer"):
            self.writer.close()
