"""How a run touches the file system: the rules every file sjoin writes, deletes or reads back
follows (docs/testing.md, "Files a run writes").

1. **A path named on the command line is the user's.**  It is used as given and, like a
   shell redirection, followed when it is a symbolic link: ``--output link`` writes where
   ``link`` points, because the user chose that path.
2. **Inside a folder sjoin owns, nothing is followed.**  Those folders are the
   ``--checkpoint`` directory and each relation's folder of a Parquet ``--output`` directory.
   ``Folder`` holds such a folder open and reaches every entry relative to its descriptor
   with ``O_NOFOLLOW``: a symbolic link found there is refused (``UnsafeFileError``, naming
   it), never written, read or deleted through.  A file is written under an unpredictable
   temporary name created exclusively (``O_CREAT | O_EXCL``) in the same folder, then renamed
   over its final name (``os.replace``), so it is whole or absent and nothing planted can be
   written through.
3. **A file sjoin reads back must be a regular file.**  It is opened without following a
   link and without blocking (a FIFO cannot hang the run), checked with ``fstat`` and read
   up to the size it has (``/dev/zero`` cannot feed it forever).
4. **No path is written that is read, or written twice.**  ``check_places`` refuses an
   output that is the spec or the trace, another output, or lies inside a folder another
   option owns (the checkpoint directory), before anything is written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import quote

from .errors import UnsafeFileError, UsageError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
TEMPORARY_SUFFIX = ".tmp"
_TEMPORARY = re.compile(r"^\.(.+)\.[0-9a-f]{16}\.tmp$")


def folder_name(relation: str) -> str:
    """A relation's (or a stream's) folder in a Parquet directory: its name, with ``%``
    written ``%25`` and percent-encoded only where the name could not be one path
    component: ``/``, NUL and the other control characters, and a name of dots (``.``,
    ``..``), whose dots become ``%2E``.  Other characters, non-ASCII ones included, stay as
    they are, so a folder reads as its relation's name.  ``read_parquet_trace`` maps folders
    back to streams with this same function, so an output directory reads back as a trace."""
    encoded = "".join(
        quote(c, safe="", errors="surrogatepass") if c in "%/\\" or not c.isprintable() else c
        for c in relation
    )
    return encoded.replace(".", "%2E") if set(encoded) <= {"."} else encoded


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


class Folder:
    """A folder sjoin owns, held open by a descriptor: every entry is reached relative to it
    and never through a symbolic link (rule 2).  ``what`` names the folder in messages
    ("the checkpoint directory")."""

    def __init__(self, fd: int, path: Path, what: str) -> None:
        self.fd = fd
        self.path = path
        self.what = what

    @classmethod
    def open(cls, path: Path, what: str, *, create: bool = True) -> Folder:
        """The folder at the user's ``path`` (followed, rule 1), made when missing."""
        if create:
            os.makedirs(path, exist_ok=True)
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        return cls(fd, path, what)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ entries

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry itself (a link is not followed), or None when there is none."""
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def names(self) -> list[str]:
        return sorted(os.listdir(self.fd))

    def _refuse_link(self, name: str, found: os.stat_result | None = None) -> None:
        found = self.lstat(name) if found is None else found
        if found is not None and stat.S_ISLNK(found.st_mode):
            raise UnsafeFileError(
                f"{self.path / name} is a symbolic link inside {self.what} {self.path}: sjoin "
                "never follows a link in a folder it owns (it could make the run write, read "
                "or delete files elsewhere); remove the link, or use another directory"
            )

    def _refuse_entry(self, name: str) -> None:
        """After a failed open: refuse a link or a non-regular entry by name."""
        found = self.lstat(name)
        if found is not None:
            self._refuse_link(name, found)
            if not stat.S_ISREG(found.st_mode):
                raise self._not_regular(name, found.st_mode)

    def _not_regular(self, name: str, mode: int) -> UnsafeFileError:
        return UnsafeFileError(
            f"{self.path / name} is {_describe(mode)}, where sjoin keeps a regular file of "
            f"{self.what} {self.path}; remove it, or use another directory"
        )

    def child(self, name: str, *, create: bool = True) -> Folder | None:
        """The folder ``name`` inside this one, made when missing (``create``; else None),
        opened without following a link."""
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=self.fd)
        try:
            fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=self.fd)
        except FileNotFoundError:
            if create:
                raise
            return None
        except OSError as err:
            self._refuse_link(name)
            if err.errno == errno.ENOTDIR:
                found = self.lstat(name)
                raise UnsafeFileError(
                    f"{self.path / name} is "
                    f"{_describe(found.st_mode) if found else 'not a directory'}, where sjoin "
                    f"keeps a folder of {self.what} {self.path}; remove it, or use another "
                    "directory"
                ) from None
            raise
        return Folder(fd, self.path / name, self.what)

    def read(self, name: str, limit: int | None = None) -> bytes | None:
        """The bytes of the regular file ``name`` (None when there is none), read up to the
        size it has (rule 3); ``limit`` bounds that size."""
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError:
            self._refuse_entry(name)
            raise
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode):
                raise self._not_regular(name, found.st_mode)
            size = found.st_size
            if limit is not None and size > limit:
                raise UnsafeFileError(
                    f"{self.path / name} has {size:,} bytes, more than such a file of "
                    f"{self.what} ever holds ({limit:,}); remove it, or use another directory"
                )
            chunks = []
            while size > 0:
                chunk = os.read(fd, min(size, 1 << 24))
                if not chunk:
                    break
                chunks.append(chunk)
                size -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def open_append(self, name: str) -> IO[bytes]:
        """The regular file ``name`` opened to append to (made when missing)."""
        try:
            fd = os.open(
                name,
                os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _CLOEXEC,
                0o666,
                dir_fd=self.fd,
            )
        except OSError:
            self._refuse_entry(name)
            raise
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            os.close(fd)
            raise self._not_regular(name, found.st_mode)
        return os.fdopen(fd, "ab")

    def open_lock(self, name: str) -> int:
        """A descriptor of the regular file ``name`` (made when missing), to lock."""
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=self.fd)
        except OSError:
            self._refuse_entry(name)
            raise
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            os.close(fd)
            raise self._not_regular(name, found.st_mode)
        return fd

    def write(
        self, name: str, payload: bytes | Callable[[IO[bytes]], None], *, sync: bool = True
    ) -> None:
        """Make ``name`` hold ``payload`` (bytes, or a function writing to a binary file)
        atomically: a new temporary file, created exclusively under an unpredictable name,
        is written (and synced with ``sync``), then renamed over ``name``.  A link or a
        non-regular entry at ``name`` is refused, not replaced."""
        found = self.lstat(name)
        if found is not None:
            self._refuse_link(name, found)
            if not stat.S_ISREG(found.st_mode):
                raise self._not_regular(name, found.st_mode)
        temporary, fd = self._temporary(name)
        try:
            with os.fdopen(fd, "wb") as handle:
                if isinstance(payload, bytes):
                    handle.write(payload)
                else:
                    payload(handle)
                handle.flush()
                if sync:
                    os.fsync(handle.fileno())
            os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=self.fd)
            raise
        if sync:
            with contextlib.suppress(OSError):
                os.fsync(self.fd)

    def create(self, name: str, payload: bytes) -> None:
        """Make the new regular file ``name`` holding ``payload``: ``FileExistsError`` when
        anything, a link included, has that name already."""
        try:
            fd = os.open(
                name,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                0o666,
                dir_fd=self.fd,
            )
        except FileExistsError as err:
            err.filename = str(self.path / name)
            raise
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)

    def _temporary(self, name: str) -> tuple[str, int]:
        for _ in range(100):
            temporary = f".{name}.{secrets.token_hex(8)}{TEMPORARY_SUFFIX}"
            try:
                fd = os.open(
                    temporary,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                    0o666,
                    dir_fd=self.fd,
                )
            except FileExistsError:
                continue
            return temporary, fd
        raise FileExistsError(errno.EEXIST, "no free temporary name", str(self.path))

    def remove(self, name: str) -> None:
        """Delete the regular file ``name`` (a link there is refused, not deleted: nothing is
        ever deleted through one)."""
        found = self.lstat(name)
        if found is None:
            return
        self._refuse_link(name, found)
        if not stat.S_ISREG(found.st_mode):
            raise self._not_regular(name, found.st_mode)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    def remove_temporaries(self, base: Callable[[str], bool] = lambda _: True) -> None:
        """Delete the temporary files that a killed run left (``.NAME.<16 hex>.tmp`` whose
        NAME passes ``base``); a link of that name is only unlinked, never followed."""
        for name in self.names():
            found = _TEMPORARY.match(name)
            if found is not None and base(found[1]):
                try:
                    os.unlink(name, dir_fd=self.fd)
                except OSError:  # a directory of that name, or gone already: not ours
                    continue


# ------------------------------------------------------------------ places (rule 4)


@dataclass(frozen=True)
class Place:
    """A path a run reads or writes: ``option`` is how the user named it (``--output``, "the
    spec"); ``tree`` makes everything under it its own (the checkpoint directory, a
    relation's Parquet folder, a Parquet trace)."""

    option: str
    path: Path
    tree: bool = False

    def __str__(self) -> str:
        return f"{self.option} {self.path}"


def _stream_of_this_process(path: Path) -> bool:
    """Whether ``path`` is this process's stdout or stderr (``/dev/stdout``): written
    through that stream, it may well be named twice."""
    for fd in (1, 2):
        try:
            if os.path.samestat(os.stat(path), os.fstat(fd)):
                return True
        except (OSError, ValueError):
            continue
    return False


def _where(path: Path) -> tuple[str, os.stat_result | None] | None:
    """The resolved path and, when it exists, its stat; None for a device, a FIFO or a
    socket (``/dev/null`` may be named by several options; they hold no data)."""
    try:
        found: os.stat_result | None = os.stat(path)
    except (OSError, ValueError):
        found = None
    if found is not None and not (stat.S_ISREG(found.st_mode) or stat.S_ISDIR(found.st_mode)):
        return None
    try:
        resolved = os.path.realpath(path)
    except (OSError, ValueError):
        resolved = os.path.abspath(path)
    return os.path.normcase(resolved), found


def _inside(inner: str, outer: str) -> bool:
    return inner != outer and inner.startswith(outer.rstrip(os.sep) + os.sep)


def _clash(a: Place, b: Place) -> str | None:
    """How ``a`` and ``b`` overlap, in words, or None."""
    wa, wb = _where(a.path), _where(b.path)
    if wa is None or wb is None:
        return None
    (ra, sa), (rb, sb) = wa, wb
    if ra == rb or (sa is not None and sb is not None and os.path.samestat(sa, sb)):
        folder = a.tree or b.tree or (sa is not None and stat.S_ISDIR(sa.st_mode))
        return "is" if folder else "is the same file as"
    if b.tree and _inside(ra, rb):
        return "is inside"
    if a.tree and _inside(rb, ra):
        return "holds"
    return None


def check_places(reads: Iterable[Place], writes: Sequence[Place]) -> None:
    """Refuse, before anything is written, a path written that is a path read (the spec,
    the trace), or another path written, or that overlaps a folder one of them owns
    (``UsageError``, naming both options)."""
    reads = list(reads)
    writes = [w for w in writes if not _stream_of_this_process(w.path)]
    for i, place in enumerate(writes):
        for read in reads:
            how = _clash(place, read)
            if how is not None:
                raise UsageError(
                    f"{place} {how} {read}: sjoin never writes over what it reads; "
                    "choose another path"
                )
        for other in writes[i + 1 :]:
            if other.option == place.option and other.tree and place.tree:
                continue  # one option's own folders (a Parquet output's relations)
            how = _clash(place, other)
            if how is not None:
                raise UsageError(
                    f"{place} {how} {other}: one file or folder cannot take both; choose "
                    "another path for one of them"
                )
