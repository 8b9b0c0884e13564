"""The .sjoin grammar and its parser.

One cached LALR parser: deterministic and linear in the input, so large or hostile specs
cannot make parsing blow up.  ``strict=True`` turns any grammar conflict into an error when
the parser is built.

Building the tables from the grammar takes about half a second, more than a whole cold
`sjoin check`, so the built parser is kept in a file of the user's cache directory
(``$XDG_CACHE_HOME/sjoin/parser``, else ``~/.cache/sjoin/parser``; the folder of sjoin's other
caches), named by a hash of the grammar's text, the options below, Lark's version and Python's:
a changed grammar or upgraded Lark gets a new name, never a stale parser.  The file holds a
header (its format, that key, the SHA-256 of the rest) and Lark's own form of the parser
(``Lark.save``).  It is read only when its header and hash are right and it is the user's own
(owned by the user, not writable by group or others, nor is its folder), and anything wrong
with it (missing, truncated, corrupt, another format, unreadable) means the parser is built
from the grammar as if there were no cache; the same parser either way
(``tests/compiler/frontend/test_parser_cache.py``).  It is written to a temporary file renamed into
place, so a reader never sees half of it, and a cache that cannot be written (a read-only or
missing home, a full disk) only means the next process builds the parser again.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
import sys
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

import lark
from lark import Lark

# every option the parser is built with (and part of its cache file's name)
OPTIONS: Final[dict[str, Any]] = {
    "parser": "lalr",
    "propagate_positions": True,
    "maybe_placeholders": True,
    "strict": True,
}
# the first line of a cache file: this format, the key (its name), the payload's SHA-256
_FORMAT: Final = b"sjoin-parser-cache 1"


# The expression grammar both front ends share (expr.lark), appended to each of theirs
SHARED: Final = "expr.lark"
FRONT_ENDS: Final = ("sjoin.lark", "pipeline_sql.lark")


def source_text(name: str) -> str:
    """The text of the grammar file ``name`` as it is written."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def grammar_text(name: str = "sjoin.lark") -> str:
    """The grammar the parser of ``name`` is built from: a front end's own rules, then the
    shared expression grammar (``expr.lark``), so that both front ends read every expression
    alike."""
    text = source_text(name)
    if name in FRONT_ENDS:
        text = f"{source_text(SHARED)}\n{text}"
    return text


def cache_key(text: str, options: dict[str, Any] | None = None) -> str:
    """What the built parser depends on: the grammar, the options, Lark and Python."""
    parts = [
        text,
        repr(sorted((OPTIONS if options is None else options).items())),
        f"lark {lark.__version__}",
        f"python {sys.version_info[0]}.{sys.version_info[1]}",
    ]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def cache_file(key: str) -> Path | None:
    """The cache file of the parser of ``key`` (None: no home directory to put it in)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no home directory known
            return None
    return Path(base) / "sjoin" / "parser" / f"sjoin-{key[:32]}.lark"


@lru_cache(maxsize=1)
def parser() -> Lark:
    return _parser("sjoin.lark")


@lru_cache(maxsize=1)
def sql_parser() -> Lark:
    """The parser of one statement of a pipeline's SQL file (``pipeline_sql.lark``)."""
    return _parser("pipeline_sql.lark")


@lru_cache(maxsize=1)
def clause_parser() -> Lark:
    """The .sjoin grammar started at a `from` clause (a `-- sjoin: from ...` annotation of a
    pipeline's SQL file, compiler/frontend/sqlparse.py), or at a `dedup ON (...)` clause (a
    `-- sjoin: dedup ...` line of its sjoin-schemas.sql): ``parse(text, start=...)``."""
    return _parser("sjoin.lark", start=["from_clause", "dedup_clause"])


def _parser(name: str, **extra: Any) -> Lark:
    """The parser of grammar ``name`` with OPTIONS (and ``extra`` ones), from the cache when
    it holds it, else built and kept there."""
    options = {**OPTIONS, **extra}
    text = grammar_text(name)
    key = cache_key(text, options)
    path = cache_file(key)
    if path is not None:
        cached = read_cache(path, key, options)
        if cached is not None:
            return cached
    built = Lark(text, **options)
    if path is not None:
        write_cache(built, path, key)
    return built


def _owned(st: os.stat_result) -> bool:
    """The user's own, and not writable by group or others (POSIX; elsewhere, True)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return True
    return st.st_uid == getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_cache(path: Path, key: str, options: dict[str, Any] | None = None) -> Lark | None:
    """The parser in ``path``, or None when there is none to trust (``parser``)."""
    try:
        with open(path, "rb") as file:
            found = os.fstat(file.fileno())
            if not (stat.S_ISREG(found.st_mode) and _owned(found) and _owned(path.parent.stat())):
                return None
            header = file.readline(256).split()
            payload = file.read()
        if len(header) != 4 or b" ".join(header[:2]) != _FORMAT:
            return None
        if header[2] != key.encode() or header[3] != hashlib.sha256(payload).hexdigest().encode():
            return None
        loaded = Lark.load(io.BytesIO(payload))
    except Exception:  # missing, unreadable or not what it says: build the parser instead
        return None
    # the loaded parser is the one these options build
    wanted = OPTIONS if options is None else options
    if any(getattr(loaded.options, name, None) != value for name, value in wanted.items()):
        return None
    return loaded


def write_cache(built: Lark, path: Path, key: str) -> None:
    """Keep ``built`` in ``path`` (written whole, then renamed into place); a failure to
    write only costs the next process a build."""
    buffer = io.BytesIO()
    built.save(buffer)
    payload = buffer.getvalue()
    header = b"%s %s %s\n" % (_FORMAT, key.encode(), hashlib.sha256(payload).hexdigest().encode())
    from ..runtime.errors import UnsafeFileError
    from ..runtime.io.files import write_owned

    with contextlib.suppress(OSError, UnsafeFileError):  # a link there is not written through
        write_owned(path, header + payload, "the parser cache", folder_mode=0o700, mode=0o600)
