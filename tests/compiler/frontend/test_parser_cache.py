"""The parser's cache file (``grammar/__init__.py``): a cold process loads the parser instead
of building it, and nothing about the file (missing, corrupt, truncated, another format,
not the user's own, unwritable) ever breaks or changes a command: the parser is then built
from the grammar, and parses alike."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lark import Lark, Token, Tree

from sjoin import grammar

from ...conftest import EXAMPLES, ROOT

CASES = sorted((ROOT / "tests" / "compiler" / "diagnostics" / "cases").glob("E001_*.sjoin"))


def shape(text: str, parser: Lark) -> Any:
    """The parse of ``text`` with every position (or the syntax error, with its place)."""
    try:
        tree = parser.parse(text)
    except Exception as err:  # lark's syntax errors: compared by kind, place and what was
        # expected, as a sorted list (lark's text lists a set, in an order that varies between
        # a built and a loaded parser; sjoin's own messages sort it: compiler/frontend/parse.py)
        expected = getattr(err, "expected", None) or getattr(err, "allowed", None) or ()
        where = tuple(getattr(err, name, None) for name in ("line", "column", "pos_in_stream"))
        return ("error", type(err).__name__, where, sorted(expected))

    def walk(node: Any) -> Any:
        if isinstance(node, Tree):
            meta = node.meta
            where = (
                (meta.start_pos, meta.end_pos, meta.line, meta.column) if not meta.empty else None
            )
            return (node.data, where, [walk(c) for c in node.children])
        if isinstance(node, Token):
            return (node.type, str(node), node.start_pos, node.end_pos, node.line, node.column)
        return node

    return walk(tree)


TEXTS = [p.read_text() for p in [*EXAMPLES, *CASES]]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty cache directory for this test; ``parser()`` forgets its parser."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    grammar.parser.cache_clear()
    yield tmp_path / "cache" / "sjoin" / "parser"
    grammar.parser.cache_clear()


def the_file() -> Path:
    path = grammar.cache_file(grammar.cache_key(grammar.grammar_text()))
    assert path is not None
    return path


class NoBuild(Lark):
    """A Lark that refuses to build from a grammar: only ``Lark.load`` works."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("the parser was built, not loaded from the cache")


def test_a_cold_process_loads_the_parser_it_built(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = grammar.parser()
    path = the_file()
    assert path.parent == cache and path.is_file()
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)  # mkstemp's: the user's alone
    assert oct(cache.stat().st_mode & 0o077) == oct(0)
    header = path.read_bytes().split(b"\n", 1)[0].split()
    assert header[:2] == [b"sjoin-parser-cache", b"1"]
    grammar.parser.cache_clear()
    monkeypatch.setattr(grammar, "Lark", NoBuild)
    loaded = grammar.parser()
    assert loaded is not built
    for name, value in grammar.OPTIONS.items():
        assert getattr(loaded.options, name) == value
    for text in TEXTS:
        assert shape(text, loaded) == shape(text, built)


def test_the_name_follows_the_grammar_and_lark(monkeypatch: pytest.MonkeyPatch) -> None:
    text = grammar.grammar_text()
    key = grammar.cache_key(text)
    assert grammar.cache_key(text + "\n// changed\n") != key
    monkeypatch.setattr(grammar.lark, "__version__", "0.0.1")
    assert grammar.cache_key(text) != key
    monkeypatch.setitem(grammar.OPTIONS, "strict", False)
    assert grammar.cache_key(text) != key


def _payload(data: bytes) -> tuple[bytes, bytes]:
    header, payload = data.split(b"\n", 1)
    return header, payload


def _with_hash(header: bytes, payload: bytes) -> bytes:
    parts = header.split()
    parts[3] = hashlib.sha256(payload).hexdigest().encode()
    return b" ".join(parts) + b"\n" + payload


def _other_lark() -> bytes:
    """Lark's form of a parser of another grammar."""
    other = Lark('start: "x"', parser="lalr", propagate_positions=True, maybe_placeholders=True)
    buffer = io.BytesIO()
    other.save(buffer)
    return buffer.getvalue()


# each: the valid file's bytes -> what is found in its place
DAMAGE = {
    "empty": lambda d: b"",
    "truncated": lambda d: d[: len(d) // 2],
    "header only": lambda d: _payload(d)[0] + b"\n",
    "a flipped byte": lambda d: d[:-100] + bytes([d[-100] ^ 0x40]) + d[-99:],
    "another format": lambda d: d.replace(b"sjoin-parser-cache 1", b"sjoin-parser-cache 2", 1),
    "another key": lambda d: d.replace(_payload(d)[0].split()[2], b"0" * 64, 1),
    "no header": lambda d: _payload(d)[1],
    "garbage": lambda d: os.urandom(5000),
    "text": lambda d: b"not a parser\n" * 20,
    "a pickle of something else": lambda d: _with_hash(
        _payload(d)[0], pickle.dumps({"data": {}, "memo": {}})
    ),
    "another grammar's parser": lambda d: _with_hash(_payload(d)[0], _other_lark()),
    "the payload cut, hash matching": lambda d: _with_hash(_payload(d)[0], _payload(d)[1][:-500]),
}


@pytest.fixture(scope="module")
def valid() -> tuple[Lark, bytes]:
    """A parser built from the grammar, and the cache file's bytes for it."""
    built = Lark(grammar.grammar_text(), **grammar.OPTIONS)
    key = grammar.cache_key(grammar.grammar_text())
    buffer = io.BytesIO()
    built.save(buffer)
    payload = buffer.getvalue()
    digest = hashlib.sha256(payload).hexdigest()
    return built, b"sjoin-parser-cache 1 %s %s\n" % (key.encode(), digest.encode()) + payload


def test_the_file_written_is_the_file_read(cache: Path, valid: tuple[Lark, bytes]) -> None:
    built, data = valid
    grammar.write_cache(built, the_file(), grammar.cache_key(grammar.grammar_text()))
    assert the_file().read_bytes() == data
    loaded = grammar.read_cache(the_file(), grammar.cache_key(grammar.grammar_text()))
    assert loaded is not None
    for text in TEXTS:
        assert shape(text, loaded) == shape(text, built)


@pytest.mark.parametrize("damage", DAMAGE, ids=lambda x: x)
def test_a_damaged_cache_is_not_read(cache: Path, damage: str, valid: tuple[Lark, bytes]) -> None:
    path = the_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(DAMAGE[damage](valid[1]))
    assert grammar.read_cache(path, grammar.cache_key(grammar.grammar_text())) is None


def test_a_damaged_cache_is_built_and_written_again(
    cache: Path, valid: tuple[Lark, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = the_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(DAMAGE["a flipped byte"](valid[1]))
    again = grammar.parser()
    for text in TEXTS:
        assert shape(text, again) == shape(text, valid[0])
    # written again (a build's bytes vary with hash seeds): the next process loads it
    assert grammar.read_cache(path, grammar.cache_key(grammar.grammar_text())) is not None
    grammar.parser.cache_clear()
    monkeypatch.setattr(grammar, "Lark", NoBuild)
    assert shape(TEXTS[0], grammar.parser()) == shape(TEXTS[0], valid[0])


@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_cache_others_may_write_is_not_read(
    cache: Path, where: str, valid: tuple[Lark, bytes]
) -> None:
    path = the_file()
    path.parent.mkdir(parents=True)
    path.write_bytes(valid[1])
    key = grammar.cache_key(grammar.grammar_text())
    assert grammar.read_cache(path, key) is not None
    target = path if where == "file" else path.parent
    target.chmod(target.stat().st_mode | 0o022)
    assert grammar.read_cache(path, key) is None


def test_a_folder_in_place_of_the_file(cache: Path) -> None:
    the_file().mkdir(parents=True)
    built = grammar.parser()
    assert shape(TEXTS[0], built)[0] != "error"
    assert the_file().is_dir()  # left as found


def test_no_home_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)

    def nowhere() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(grammar.Path, "home", staticmethod(nowhere))
    assert grammar.cache_file("0" * 64) is None
    grammar.parser.cache_clear()
    try:
        assert shape(TEXTS[0], grammar.parser())[0] != "error"
    finally:
        grammar.parser.cache_clear()


def _cli(env_cache: str, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": env_cache}
    done = subprocess.run(
        [sys.executable, "-m", "sjoin", *args], capture_output=True, text=True, env=env
    )
    return done.returncode, done.stdout, done.stderr


def test_the_commands_never_depend_on_the_cache(tmp_path: Path) -> None:
    """`check` and `compile`, on a clean spec and on one with errors, answer the same
    with a fresh cache, a loaded one, a corrupt one and one that cannot be written (its
    folder's place is a file: even root cannot write there)."""
    bad = ROOT / "tests" / "compiler" / "diagnostics" / "cases" / "E001_missing_on.sjoin"
    spec = EXAMPLES[0]
    commands = [("check", str(spec)), ("check", str(bad)), ("compile", str(spec))]
    fresh = str(tmp_path / "fresh")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be\n")
    want = [_cli(fresh, *c) for c in commands]  # builds the parser, writes the cache
    assert [w[0] for w in want] == [0, 1, 0]
    files = list((tmp_path / "fresh" / "sjoin" / "parser").iterdir())
    assert len(files) == 1
    assert [_cli(fresh, *c) for c in commands] == want  # loaded
    files[0].write_bytes(files[0].read_bytes()[:1000])
    assert [_cli(fresh, *c) for c in commands] == want  # corrupt: built, written again
    assert [_cli(str(blocked), *c) for c in commands] == want  # unwritable
