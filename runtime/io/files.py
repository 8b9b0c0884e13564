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
5. **Every write goes through this module.**  A file named on the command line is written
   with ``write_named`` or opened with ``open_named``; a tree of files sjoin names itself
   under a directory the user named (a pipeline project of ``sjoin compile``) with
   ``write_tree``; everything in a folder sjoin owns through ``Folder``.  A write that fails
   (a full disk, no permission) is a ``WriteError`` naming the file and the reason
   (``cannot_write``), never an internal error.  ``tests/test_layout.py`` holds the rest of
   the package to it: no module but this one calls ``open`` to write, ``write_text``,
   ``mkdir``, ``os.replace`` and the like.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from ..errors import UnsafeFileError, UsageError, WriteError

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


def describe_mode(mode: int) -> str:
    """What a file of ``mode`` (``st_mode``) is that is not a regular file, in words."""
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


class NotRegularFile(Exception):
    """``open_regular``'s refusal: the path is a symbolic link, or no regular file (``mode``:
    its ``st_mode``; ``stat.S_IFLNK`` for a link)."""

    def __init__(self, mode: int) -> None:
        super().__init__(describe_mode(mode))
        self.mode = mode

    @property
    def link(self) -> bool:
        return stat.S_ISLNK(self.mode)


class UnreadableFile(OSError):
    """``open_regular``: the file opened, but ``fstat`` failed on it."""


def open_regular(path: str | os.PathLike[str], dir_fd: int | None = None) -> tuple[int, int]:
    """A descriptor of the regular file ``path`` (relative to ``dir_fd`` when given) and its
    size, for reading (rule 3): opened without following a link (``O_NOFOLLOW``) and without
    blocking (a FIFO cannot hang the reader), then checked with ``fstat``.  Raises
    ``FileNotFoundError`` when there is none, ``NotRegularFile`` for a link or a FIFO, device,
    socket or directory, ``UnreadableFile`` when ``fstat`` fails, and the ``OSError`` of the
    open otherwise (``ValueError`` for a path with a NUL)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as err:
        try:
            mode = os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode
        except OSError:
            mode = 0
        if err.errno == errno.ELOOP or stat.S_ISLNK(mode):
            raise NotRegularFile(stat.S_IFLNK) from None
        raise
    try:
        found = os.fstat(fd)
    except OSError as err:
        os.close(fd)
        raise UnreadableFile(err.errno, err.strerror) from None
    if not stat.S_ISREG(found.st_mode):
        os.close(fd)
        raise NotRegularFile(found.st_mode)
    return fd, found.st_size


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

    def refuse_links_inside(self) -> None:
        """Refuse a symbolic link anywhere among this folder's entries (a library that
        writes by path, delta-rs, would follow it)."""
        with os.scandir(self.fd) as entries:
            for entry in entries:
                if entry.is_symlink():
                    self._refuse_link(entry.name)

    def still_at(self, parent: Folder, name: str) -> None:
        """Refuse, before a library writes by path, a folder that is no longer this one at
        ``parent``'s ``name`` (replaced by a link, or by another folder, since it was
        opened)."""
        found = parent.lstat(name)
        if found is not None:
            parent._refuse_link(name, found)
        if found is None or not os.path.samestat(found, os.fstat(self.fd)):
            raise UnsafeFileError(
                f"{self.path} was replaced while sjoin wrote in it ({self.what}); remove "
                "what replaced it, or use another directory"
            )

    def _refuse_link(self, name: str, found: os.stat_result | None = None) -> None:
        found = self.lstat(name) if found is None else found
        if found is not None and stat.S_ISLNK(found.st_mode):
            raise UnsafeFileError(
                f"{self.path / name} is a symbolic link inside {self.what} {self.path}: sjoin "
                "never follows a link in a folder it owns (it could make sjoin write, read "
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
            f"{self.path / name} is {describe_mode(mode)}, where sjoin keeps a regular file of "
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
                    f"{describe_mode(found.st_mode) if found else 'not a directory'}, where sjoin "
                    f"keeps a folder of {self.what} {self.path}; remove it, or use another "
                    "directory"
                ) from None
            raise
        return Folder(fd, self.path / name, self.what)

    def read(self, name: str, limit: int | None = None) -> bytes | None:
        """The bytes of the regular file ``name`` (None when there is none), read up to the
        size it has (rule 3); ``limit`` bounds that size."""
        try:
            fd, size = open_regular(name, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except NotRegularFile as err:
            if err.link:
                self._refuse_link(name)
            raise self._not_regular(name, err.mode) from None
        except OSError:
            self._refuse_entry(name)
            raise
        try:
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
        self,
        name: str,
        payload: bytes | Callable[[IO[bytes]], None],
        *,
        sync: bool = True,
        mode: int = 0o666,
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
        temporary, fd = self._temporary(name, mode)
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
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
        except OSError as err:  # a full disk: named, for the caller's message
            err.filename = str(self.path / name)
            raise

    def _temporary(self, name: str, mode: int = 0o666) -> tuple[str, int]:
        for _ in range(100):
            temporary = f".{name}.{secrets.token_hex(8)}{TEMPORARY_SUFFIX}"
            try:
                fd = os.open(
                    temporary,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC,
                    mode,
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


class LibraryFolder:
    """A folder sjoin owns that a library writes by path (delta-rs writes a Delta table per
    relation): ``name`` in ``parent``, made when missing, held open without following a
    link.  ``ready`` checks it before each write and gives the path to hand the library:
    the folder is still the one held (not replaced by a link), its ``inner`` folders
    (``_delta_log``) are no links, and no entry of those is a link; the folder's own entries
    are checked once, when it is opened (the library's later files there are its own, under
    names nobody can guess).  A library that writes by path cannot be held to a descriptor,
    so this refuses what is planted before the run or between its writes."""

    def __init__(self, parent: Folder, name: str, inner: Sequence[str] = ()) -> None:
        self.parent = parent
        self.name = name
        self.inner = tuple(inner)
        self.folder: Folder | None = None

    def ready(self) -> str:
        if self.folder is None:
            folder = self.parent.child(self.name, create=True)
            assert folder is not None
            self.folder = folder
            folder.refuse_links_inside()
        folder = self.folder
        folder.still_at(self.parent, self.name)
        for name in self.inner:
            inner = folder.child(name, create=False)
            if inner is not None:
                with inner:
                    inner.refuse_links_inside()
        return str(folder.path)

    def close(self) -> None:
        if self.folder is not None:
            self.folder.close()
            self.folder = None


# ------------------------------------------------------------------ writes (rule 5)


def cannot_write(path: str | os.PathLike[str], err: OSError, what: str = "") -> WriteError:
    """The error of a write to ``path`` that failed with ``err`` (``what`` names it before
    its path: "the bad rows to "): its path and the reason; a full disk says so, and that
    the file holds what was written before."""
    reason = err.strerror or str(err)
    if err.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        reason += " (the disk or the quota is full: the file holds what was written before)"
    return WriteError(f"cannot write {what}{os.fspath(path)}: {reason}")


def open_named(path: Path, mode: str = "wb", what: str = "") -> IO[Any]:
    """The file the user named at ``path`` (rule 1: followed when a link, as a shell
    redirection follows it) opened to write with ``mode`` (``wb``, ``w+b`` to make or
    truncate, ``r+b`` to keep, or a text mode, UTF-8).  A path that cannot be opened (a
    missing folder, no permission) is a ``UsageError``; the caller turns a failure to
    write, flush or close into ``cannot_write``'s ``WriteError``."""
    try:
        if "b" in mode:
            return open(path, mode)
        return open(path, mode, encoding="utf-8", errors="backslashreplace")
    except OSError as err:
        raise UsageError(str(cannot_write(path, err, what))) from None


def write_named(path: Path, payload: bytes | str, what: str = "") -> None:
    """Make the file the user named at ``path`` (rule 1) hold ``payload`` (text as UTF-8):
    made or truncated, written, flushed and closed.  A path that cannot be opened is a
    ``UsageError``, a failure after that (a full disk) a ``WriteError``, each naming it."""
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    handle = open_named(path, "wb", what)
    try:
        with handle:
            handle.write(data)
    except OSError as err:
        raise cannot_write(path, err, what) from None


def check_writable(path: Path, what: str = "") -> None:
    """Fail before a run, not after it, when the file the user named at ``path`` (rule 1,
    followed) cannot be written: it is opened to append (made when missing, nothing of it
    changed) and, when this made it, removed again where it was made (not the link to it).
    A ``UsageError`` naming it, with the reason."""
    target = Path(os.path.realpath(path))
    existed = os.path.lexists(target)
    try:
        with open(target, "ab"):
            pass
    except OSError as err:
        raise UsageError(str(cannot_write(path, err, what))) from None
    if not existed:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)


def make_folders(path: Path, mode: int = 0o777) -> None:
    """Make the folder ``path`` and its missing parents (a cache's, the user's to place:
    rule 1, followed)."""
    os.makedirs(path, mode=mode, exist_ok=True)


def write_owned(
    path: Path, payload: bytes, what: str, *, folder_mode: int = 0o777, mode: int = 0o666
) -> None:
    """Make ``path``, a file sjoin names in a folder of its own (a cache: the parser's, the
    jars'), hold ``payload``: the folder made when missing (``folder_mode``), the file
    written under a new temporary name and renamed (rule 2: a link at it is refused,
    never written through).  Raises ``OSError`` or ``UnsafeFileError``."""
    make_folders(path.parent, folder_mode)
    with Folder.open(path.parent, what, create=False) as folder:
        folder.write(path.name, payload, sync=False, mode=mode)


def replace_folder(new: Path, final: Path, what: str) -> None:
    """Put the folder ``new`` (made by sjoin beside ``final``) in the place of ``final``,
    removing the folder an earlier run left there; a link at ``final`` is refused, never
    followed or deleted through.  Raises ``OSError`` or ``UnsafeFileError``."""
    try:
        found = os.lstat(final)
    except FileNotFoundError:
        found = None
    if found is not None:
        if stat.S_ISLNK(found.st_mode):
            raise UnsafeFileError(
                f"{final} is a symbolic link where sjoin keeps {what}: sjoin never follows "
                "a link in a folder it owns; remove the link"
            )
        shutil.rmtree(final)
    os.rename(new, final)


def write_tree(directory: Path, files: dict[str, bytes], what: str) -> None:
    """Write ``files`` (a path relative to ``directory``, parts separated by ``/`` -> its
    bytes) under ``directory``: the user's (rule 1, made when missing), while every folder
    and file beneath it that sjoin names is sjoin's (rule 2).  Everything is checked before
    anything is written: a symbolic link (to a file, a folder, or dangling) or something of
    the wrong kind at any of those paths is refused (``UnsafeFileError``, naming it); each
    file is then written under a new temporary name and renamed, replacing the file of an
    earlier write.  Other files in those folders are left as they are.  A failure to write
    is a ``WriteError``."""
    current = directory
    try:
        with contextlib.ExitStack() as stack:
            root = stack.enter_context(Folder.open(directory, what))
            folders: dict[tuple[str, ...], Folder | None] = {(): root}

            def folder(parts: tuple[str, ...], create: bool) -> Folder | None:
                if parts in folders and (folders[parts] is not None or not create):
                    return folders[parts]
                parent = folder(parts[:-1], create)
                child = None if parent is None else parent.child(parts[-1], create=create)
                if child is not None:
                    stack.enter_context(child)
                folders[parts] = child
                return child

            split = [tuple(relative.split("/")) for relative in files]
            for *parents, leaf in split:  # the checks, before anything is written
                holder = folder(tuple(parents), create=False)
                if holder is not None:
                    found = holder.lstat(leaf)
                    if found is not None:
                        holder._refuse_link(leaf, found)
                        if not stat.S_ISREG(found.st_mode):
                            raise holder._not_regular(leaf, found.st_mode)
            for (*parents, leaf), payload in zip(split, files.values(), strict=True):
                current = directory.joinpath(*parents)
                holder = folder(tuple(parents), create=True)
                assert holder is not None
                current = holder.path / leaf
                holder.write(leaf, payload, sync=False)
    except OSError as err:
        raise cannot_write(current, err) from None


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
