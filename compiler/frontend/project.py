"""A pipeline's files: a SQL file, or a Spark Declarative Pipelines project directory.

A project is what ``spark-pipelines`` reads: ``spark-pipeline.yml`` (or ``.yaml``) names
the source files with its ``libraries`` globs (``folder/**`` or a file path, as SDP allows)
and gives Spark confs in ``configuration``.  Its SQL files are parsed
(``compiler/frontend/sqlparse.py``), its Python files only read for the names of the datasets they
define (``@dp.table``, ``@dp.materialized_view``, ``@dp.temporary_view``,
``dp.create_streaming_table``, ``dp.create_sink``, ``@dp.append_flow``): sjoin runs no
Python.  The columns of a stream the pipeline defines in Python are declared in the schema
file, ``sjoin-schemas.sql`` next to ``spark-pipeline.yml`` (``CREATE STREAMING TABLE name
(col TYPE, ...)`` statements, outside every libraries glob: SDP never reads it).

Every file read is one part of a ``ProjectSource``: spans are places in their files.  What
cannot be read at all (no such path, not UTF-8, no spark-pipeline.yml in a directory) is a
``PipelineError`` for the caller (a usage error); what a file says wrongly is a diagnostic.
"""

from __future__ import annotations

import ast as python_ast
import errno
import glob as globbing
import os
import stat
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

from ..diagnostics.diagnostics import Diagnostics, excerpt
from ..vocabulary.source import (
    SPEC_NAMES,
    PipelineError,
    ProjectSource,
    Source,
    Span,
    is_pipeline,
)
from . import limits, sqlast
from .sqllower import SCHEMA_FILE, Conf, PipelineInput, PythonDataset, PythonDedup
from .sqlparse import parse_sql

SPEC_FIELDS = ("name", "storage", "catalog", "database", "schema", "configuration", "libraries")


@dataclass
class Project:
    """The files of a pipeline, read: the source of all their text and what they say."""

    root: Path
    source: ProjectSource
    given: PipelineInput
    files: list[Path] = field(default_factory=list)
    # past a size limit (E031 reported): nothing of it was parsed
    refused: bool = False


def _real(path: Path) -> Path:
    """``path`` with every link followed (as far as it leads: a loop or a missing part is
    left as written)."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.abspath(path))


def _read(path: Path, room: int) -> str:
    """The text of ``path``, at most ``room`` characters of it (what is left of the
    project's ``MAX_SPEC_CHARS``, and one more: enough for the E031 that refuses it).  A
    path that is no regular file (a FIFO, a device) is refused before it is opened: opening
    a FIFO waits for a writer."""
    try:
        if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
            if os.path.isdir(path):
                raise IsADirectoryError
            raise PipelineError(f"{path} is not a regular file")
        with open(path, encoding="utf-8", errors="surrogatepass", newline="") as f:
            return f.read(room)
    except FileNotFoundError:
        raise PipelineError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise PipelineError(f"{path} is a directory") from None
    except UnicodeDecodeError as err:
        raise PipelineError(f"{path} is not UTF-8 text (byte {err.start})") from None
    except OSError as err:
        raise PipelineError(f"cannot read {path}: {err.strerror}") from None


class _Texts:
    """The files' texts laid end to end, each at its offset in the whole.  Together they
    are read up to one character past ``MAX_SPEC_CHARS`` (``full``: the project is refused
    with E031 before any of it is parsed); a file whose real path is outside ``folder`` (a
    link to elsewhere, or a glob that climbs out) is marked ``outside``: no diagnostic
    shows its text."""

    def __init__(self, folder: Path) -> None:
        self.parts: list[tuple[int, Source]] = []
        self.chunks: list[str] = []
        self.length = 0
        self.folder = _real(folder)

    @property
    def full(self) -> bool:
        return self.length > limits.MAX_SPEC_CHARS

    def outside(self, path: Path) -> bool:
        real = _real(path)
        return real != self.folder and self.folder not in real.parents

    def add(self, path: Path, shown: str | None = None) -> tuple[int, int]:
        text = _read(path, max(0, limits.MAX_SPEC_CHARS + 1 - self.length))
        start = self.length
        self.parts.append((start, Source(shown or str(path), text, outside=self.outside(path))))
        self.chunks.append(text)
        self.length += len(text)
        # a line break between files keeps a statement of one from running into the next
        self.chunks.append("\n")
        self.length += 1
        return start, start + len(text)

    def source(self, path: str) -> ProjectSource:
        """The whole text; past ``MAX_SPEC_CHARS`` it is refused (E031) and none of its
        files is parsed."""
        return ProjectSource(path, "".join(self.chunks), parts=tuple(self.parts))


def read_pipeline(path: str | Path, diags: Diagnostics) -> Project:
    """The pipeline at ``path``: a .sql file (with ``sjoin-schemas.sql`` beside it, when
    there is one), or a project (its directory, or its spark-pipeline.yml)."""
    p = Path(path)
    if p.is_dir():
        found = [p / n for n in SPEC_NAMES if (p / n).is_file()]
        if not found:
            raise PipelineError(
                f"{p} is a directory without spark-pipeline.yml: give a .sjoin spec, a "
                "pipeline's .sql file or a pipeline project's directory"
            )
        if len(found) > 1:
            raise PipelineError(f"{p} holds both spark-pipeline.yml and spark-pipeline.yaml")
        return _project(found[0], diags)
    if p.name in SPEC_NAMES:
        return _project(p, diags)
    if not p.exists():
        raise PipelineError(f"no such file: {p}")
    texts = _Texts(p.parent)
    given = PipelineInput()
    start, end = texts.add(p)
    files = [p]
    schema = p.parent / SCHEMA_FILE
    schema_range = None
    if not texts.full and schema.is_file() and _real(schema) != _real(p):
        schema_range = texts.add(schema)
        files.append(schema)
    source = texts.source(str(p))
    given.span = Span(0, len(source.text))
    sql = [(start, end)] + ([schema_range] if schema_range is not None else [])
    if limits.refuse_text(source.text, diags, sql):
        return Project(p.parent, source, given, files, refused=True)
    given.sql.append(parse_sql(source.text, start, end, str(p), diags))
    if schema_range is not None:
        given.schemas.append(parse_sql(source.text, *schema_range, str(schema), diags))
    return Project(p.parent, source, given, files)


def _project(spec: Path, diags: Diagnostics) -> Project:
    root = spec.parent
    texts = _Texts(root)
    spec_range = texts.add(spec)
    spec_text = texts.chunks[0]
    if limits.refuse_text(spec_text, diags, []):  # its length, before YAML reads it
        source = texts.source(str(root))
        given = PipelineInput(span=Span(0, len(source.text)))
        return Project(root, source, given, [spec], refused=True)
    settings, libraries = _spec(spec_text, spec_range[0], diags)
    given = PipelineInput(confs=settings)
    files: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    walked = [0]  # the entries the globs have listed (MAX_GLOB_ENTRIES)
    for pattern, span in libraries:
        matched = _glob(root, pattern, span, diags, walked)
        for file in matched:
            key = _real(file)
            if key in seen:
                continue
            seen.add(key)
            files.append((file, file.relative_to(root).as_posix()))
    ranges = []
    for file, shown in files:
        if file.suffix not in (".sql", ".py") or texts.full:
            continue
        ranges.append((file, shown, texts.add(file, str(root / shown))))
    schema = root / SCHEMA_FILE
    schema_range = None
    if schema.is_file() and not texts.full:
        if _real(schema) in seen:
            diags.add(
                "E033",
                f"a libraries glob matches {SCHEMA_FILE}",
                Span(spec_range[0], spec_range[0]),
                "SDP would run it",
                f"keep {SCHEMA_FILE} out of every glob: SDP would define its tables a second time",
            )
        else:
            schema_range = texts.add(schema, str(root / SCHEMA_FILE))
    source = texts.source(str(root))
    sql = [r for file, _, r in ranges if file.suffix == ".sql"]
    if limits.refuse_text(source.text, diags, sql + ([schema_range] if schema_range else [])):
        given.span = Span(0, len(source.text))
        return Project(root, source, given, [spec, *(f for f, _ in files)], refused=True)
    for file, shown, (start, end) in ranges:
        if file.suffix == ".sql":
            given.sql.append(parse_sql(source.text, start, end, str(root / shown), diags))
        else:
            given.python.extend(_python(source.text, start, end, diags))
    if schema_range is not None:
        given.schemas.append(parse_sql(source.text, *schema_range, str(schema), diags))
    for file, shown in files:
        if file.suffix not in (".sql", ".py"):
            diags.add(
                "E033",
                f"`{shown}` is matched by a libraries glob, and is no .sql or .py file",
                Span(spec_range[0], spec_range[0]),
                "SDP refuses it",
                "SDP reads .py and .sql files only (PIPELINE_UNSUPPORTED_DEFINITIONS_FILE_"
                "EXTENSION): move it out of the glob's folder",
            )
    given.span = Span(0, len(source.text))
    return Project(root, source, given, [spec, *(f for f, _ in files)])


# ------------------------------------------------------------------ spark-pipeline.yml


def _spec(text: str, offset: int, diags: Diagnostics) -> tuple[list[Conf], list[tuple[str, Span]]]:
    """The confs and the libraries globs of spark-pipeline.yml, each with its place."""
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - pyyaml is a dependency of sjoin
        raise PipelineError("reading spark-pipeline.yml needs pyyaml: pip install pyyaml") from None
    try:
        deep = _yaml_too_deep(yaml, text)
        if deep is not None:
            at = offset + deep
            diags.add(
                "E031",
                f"spark-pipeline.yml nests more than {limits.MAX_NESTING} levels of "
                "mappings and lists",
                Span(at, at + 1),
                f"level {limits.MAX_NESTING + 1} starts here",
                "a pipeline spec is a few levels deep: name, storage, configuration, libraries",
            )
            return [], []
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        at = offset + (mark.index if mark is not None else 0)
        diags.add(
            "E001",
            f"spark-pipeline.yml is not valid YAML: {getattr(err, 'problem', None) or err}",
            Span(at, at + 1),
            "here",
        )
        return [], []

    def span(node: Any) -> Span:
        return Span(offset + node.start_mark.index, offset + node.end_mark.index)

    if not isinstance(root, yaml.MappingNode):
        where = span(root) if root is not None else Span(offset, offset)
        diags.add("E033", "spark-pipeline.yml holds no mapping of fields", where,
                  "not a pipeline spec")  # fmt: skip
        return [], []
    confs: list[Conf] = []
    libraries: list[tuple[str, Span]] = []
    for key_node, value in root.value:
        key = key_node.value
        if key not in SPEC_FIELDS:
            diags.add(
                "E033",
                f"`{key}` is no field of a pipeline spec",
                span(key_node),
                "SDP refuses it",
                "a spec has the fields " + ", ".join(SPEC_FIELDS),
            )
        elif key == "configuration":
            confs.extend(_configuration(value, span, diags))
        elif key == "libraries":
            libraries.extend(_libraries(value, span, diags))
    # `name` and `storage` are SDP's to require (a run may add them to its copy): sjoin
    # reads only the libraries and the confs
    return confs, libraries


def _yaml_too_deep(yaml: Any, text: str) -> int | None:
    """The offset where ``text`` nests mappings and lists more than ``MAX_NESTING`` deep,
    or None: one pass over YAML's events, which need no recursion (composing the nodes
    recurses once per level, and Python's limit would end it: SDP's ``yaml.safe_load``
    fails on such a spec with RecursionError)."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > limits.MAX_NESTING:
                return int(event.start_mark.index)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return None


def _configuration(node: Any, span: Any, diags: Diagnostics) -> list[Conf]:
    import yaml  # type: ignore[import-untyped]

    if not isinstance(node, yaml.MappingNode):
        diags.add("E033", "`configuration` is no mapping of confs", span(node), "not a mapping")
        return []
    out = []
    for key, value in node.value:
        if not isinstance(value, yaml.ScalarNode) or value.tag != "tag:yaml.org,2002:str":
            diags.add(
                "E033",
                f"the value of `{key.value}` is no string",
                span(value),
                "not a string",
                'SDP takes strings only: quote it ("4")',
            )
            continue
        out.append(Conf(str(key.value), str(value.value), span(key), span(value),
                        Span(span(key).start, span(value).end)))  # fmt: skip
    return out


def _libraries(node: Any, span: Any, diags: Diagnostics) -> list[tuple[str, Span]]:
    import yaml  # type: ignore[import-untyped]

    out = []
    entries = node.value if isinstance(node, yaml.SequenceNode) else None
    if entries is None:
        diags.add("E033", "`libraries` is no list", span(node), "not a list")
        return []
    for entry in entries:
        include = None
        if isinstance(entry, yaml.MappingNode):
            for k, v in entry.value:
                if k.value == "glob" and isinstance(v, yaml.MappingNode):
                    for k2, v2 in v.value:
                        if k2.value == "include" and isinstance(v2, yaml.ScalarNode):
                            include = v2
        if include is None:
            diags.add(
                "E033",
                "a library that is no `glob: {include: ...}`",
                span(entry),
                "not read",
                "write `- glob:\\n    include: transformations/**`",
            )
            continue
        if include.tag != "tag:yaml.org,2002:str":
            # SDP's yaml.safe_load makes it a number, a boolean, null, bytes, a date...,
            # and its glob check fails on it (TypeError)
            diags.add(
                "E033",
                "the `include` of a library is no string",
                span(include),
                "SDP fails on it",
                'quote it: `include: "transformations/**"`',
            )
            continue
        out.append((str(include.value), span(include)))
    return out


# errors pathlib's Path.is_file and Path.exists take for "no" (pathlib._ignore_error);
# any other error ends SDP's glob
_NOT_THERE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


class _Refused(Exception):
    """A glob SDP cannot use or sjoin will not walk (already reported)."""


def _glob(
    root: Path, pattern: str, span: Span, diags: Diagnostics, walked: list[int]
) -> list[Path]:
    """The files a libraries glob matches, as SDP matches them: ``Path(root).glob(pattern)``
    (pyspark/pipelines/cli.py) of a file path, or of a folder's ``/**`` with ``/*`` added
    (every file under the folder, through no link to a folder below it; any other glob is
    refused), in a stable order.  What makes pathlib fail (an empty or absolute pattern,
    one naming the folder itself, a path it cannot stat) is E033 at the glob: SDP fails on
    it too.  The walk is sjoin's own (no recursion; pathlib's recurses once per folder
    level) and lists at most ``MAX_GLOB_ENTRIES`` files and folders in all (``walked``)."""

    def refuse(message: str, label: str, help: str, code: str = "E033") -> list[Path]:
        diags.add(code, message, span, label, help)
        return []

    if len(pattern) > limits.MAX_NAME_CHARS:
        return refuse(
            f"a libraries glob is longer than {limits.MAX_NAME_CHARS:,} characters",
            f"{len(pattern):,} characters",
            "name a folder of the project, followed by /**",
            "E031",
        )
    shown = f"`{excerpt(pattern)}`"
    recursive = False
    base = pattern
    if globbing.has_magic(pattern):
        prefix = pattern[:-3] if pattern.endswith("/**") else None
        if prefix is None or globbing.has_magic(prefix):
            return refuse(
                f"SDP refuses the glob {shown}",
                "not a file or a folder/**",
                "write a file path, or a folder followed by /** (PIPELINE_SPEC_INVALID_GLOB_"
                "PATTERN)",
            )
        recursive, base = True, prefix
    if not pattern:
        return refuse(
            "a libraries glob is empty",
            "SDP fails on it",
            "pathlib refuses an empty pattern (ValueError): write a file path, or a folder "
            "followed by /**",
        )
    if pattern.startswith("/"):
        return refuse(
            f"the libraries glob {shown} is an absolute path",
            "SDP fails on it",
            "SDP matches each glob under the folder of spark-pipeline.yml, and pathlib "
            "refuses an absolute pattern (NotImplementedError): write a path relative to it",
        )
    parts = [part for part in base.split("/") if part not in ("", ".")]
    if not parts and not recursive:
        return refuse(
            f"the libraries glob {shown} names the project's folder, not a file",
            "SDP fails on it",
            "pathlib fails on a pattern without a name (IndexError, Python 3.11): write a "
            "file path, or a folder followed by /**",
        )
    if not recursive and base.endswith("/"):
        return []  # pathlib matches folders only: no file
    try:
        if not recursive:
            file = root.joinpath(*parts)
            return [file] if _is_file(file, span, diags) else []
        return sorted(_walk(root.joinpath(*parts), span, diags, walked))
    except _Refused:
        return []


def _is_file(path: Path, span: Span, diags: Diagnostics) -> bool:
    """``path.is_file()`` as pathlib answers it, or E033 where pathlib would fail."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError as err:
        if err.errno in _NOT_THERE:
            return False
        diags.add(
            "E033",
            f"a libraries glob reaches {excerpt(str(path), 80)}, which cannot be read: "
            f"{err.strerror}",
            span,
            "SDP fails on it",
            "keep the globs to the project's own folders",
        )
        raise _Refused from None
    except ValueError:  # a NUL in the path: pathlib raises it too
        return False


def _walk(top: Path, span: Span, diags: Diagnostics, walked: list[int]) -> list[Path]:
    """Every file under the folder ``top`` (``top/**/*``), as pathlib's recursive glob
    finds them: it enters no link to a folder, skips a folder it may not list, and leaves
    out what is under ``__pycache__``; at most ``MAX_GLOB_ENTRIES`` entries in all."""
    try:
        if not stat.S_ISDIR(os.stat(top).st_mode):
            return []
    except (OSError, ValueError):
        return []
    found: list[Path] = []
    folders = [top]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except PermissionError:
            continue  # pathlib skips a folder it may not list
        except OSError as err:
            diags.add(
                "E033",
                f"a libraries glob cannot list {excerpt(str(folder), 80)}: {err.strerror}",
                span,
                "SDP fails on it",
                "keep the globs to the project's own folders",
            )
            raise _Refused from None
        walked[0] += len(entries)
        if walked[0] > limits.MAX_GLOB_ENTRIES:
            diags.add(
                "E031",
                f"the libraries globs walk more than {limits.MAX_GLOB_ENTRIES:,} files and folders",
                span,
                f"this glob passes the limit in {excerpt(os.path.normpath(folder), 80)}",
                "name the project's own folders of pipeline code (a glob that climbs out of "
                "the project walks all that is above it)",
            )
            raise _Refused from None
        for entry in entries:
            path = folder / entry.name
            try:
                is_folder = entry.is_dir() and not entry.is_symlink()
            except OSError:
                is_folder = False
            if is_folder:
                folders.append(path)
            if "__pycache__" not in path.parts and _is_file(path, span, diags):
                found.append(path)
    return found


# ------------------------------------------------------------------ Python files

_DECORATORS = {
    "table": "table",
    "materialized_view": "materialized_view",
    "temporary_view": "temporary_view",
    "view": "temporary_view",
    "append_flow": "flow",
}
_CALLS = {"create_streaming_table": "streaming_table", "create_sink": "sink"}


def _python(text: str, start: int, end: int, diags: Diagnostics) -> list[PythonDataset]:
    """The datasets a Python file of the pipeline defines, by name (sjoin runs no Python):
    each ``@dp.table``-like decorator and ``dp.create_*`` call whose name it can read."""
    code = text[start:end]
    lines = [0]
    for i, ch in enumerate(code):
        if ch == "\n":
            lines.append(i + 1)

    def at(node: Any) -> Span:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_line = getattr(node, "end_lineno", line) or line
        end_col = getattr(node, "end_col_offset", col) or col
        a = start + lines[min(line, len(lines)) - 1] + _utf8_col(code, lines, line, col)
        b = start + lines[min(end_line, len(lines)) - 1] + _utf8_col(code, lines, end_line, end_col)
        return Span(a, max(a, b))

    try:
        tree = python_ast.parse(code)
    except (RecursionError, MemoryError):
        # Python's parser gives up on an expression nested too deeply (100,000 unary
        # minus signs, a sum of 100,000 terms, a chain of 50,000 calls, 5,000 lambdas in
        # each other): RecursionError or MemoryError("Parser stack overflowed"), fast and
        # small (checked on Python 3.11); SDP's import of the file fails the same way
        pos = start + _longest_statement(code)
        diags.add(
            "E031",
            "this Python file nests an expression too deeply for Python's parser",
            Span(pos, pos + 1),
            "in the statement that starts here",
            "split the expression; SDP's import of the file fails on it too",
        )
        return []
    except (SyntaxError, ValueError) as err:
        line = getattr(err, "lineno", 1) or 1
        pos = start + lines[min(line, len(lines)) - 1]
        diags.add(
            "W011",
            f"sjoin cannot read this Python file: {getattr(err, 'msg', err)}",
            Span(pos, pos + 1),
            "not read",
            "the datasets it defines are unknown to sjoin",
        )
        return []
    out: list[PythonDataset] = []
    for node in python_ast.walk(tree):
        if isinstance(node, (python_ast.FunctionDef, python_ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                call = deco if isinstance(deco, python_ast.Call) else None
                func = call.func if call is not None else deco
                kind = _DECORATORS.get(_attr(func))
                if kind is None:
                    continue
                keyword = "target" if kind == "flow" else "name"
                name = _keyword(call, keyword) if call is not None else None
                given = call is not None and any(k.arg == keyword for k in call.keywords)
                if kind == "flow" and name is None:
                    continue
                if name is None and given:
                    diags.add("W011", "sjoin cannot read the name of this dataset", at(deco),
                              "not a string literal")  # fmt: skip
                    continue
                dedups = _dedup_calls(node, at)
                out.append(PythonDataset(name or node.name, kind, at(deco), dedups))
        elif isinstance(node, python_ast.Call):
            kind = _CALLS.get(_attr(node.func))
            if kind is None:
                continue
            name = _keyword(node, "name")
            if name is None and node.args and isinstance(node.args[0], python_ast.Constant):
                name = node.args[0].value if isinstance(node.args[0].value, str) else None
            if name is None:
                diags.add("W011", "sjoin cannot read the name of this dataset", at(node),
                          "not a string literal")  # fmt: skip
                continue
            out.append(PythonDataset(name, kind, at(node)))
    return out


# pyspark's names of the two streaming deduplications -> within the watermark
_DEDUP_METHODS = {
    "dropDuplicates": False,
    "drop_duplicates": False,
    "dropDuplicatesWithinWatermark": True,
    "drop_duplicates_within_watermark": True,
}


def _dedup_calls(function: Any, at: Callable[[Any], Span]) -> tuple[PythonDedup, ...]:
    """The ``.dropDuplicates([...])`` / ``.dropDuplicatesWithinWatermark([...])`` calls in a
    dataset's function, in the file's order, each with its columns when they are one list
    (or tuple) of string literals, positional or ``subset=``."""
    found = []
    for node in python_ast.walk(function):
        if not isinstance(node, python_ast.Call) or not isinstance(node.func, python_ast.Attribute):
            continue
        within = _DEDUP_METHODS.get(node.func.attr)
        if within is None:
            continue
        given = [*node.args, *(k.value for k in node.keywords if k.arg == "subset")]
        keys: tuple[str, ...] | None = None
        if (
            len(given) == 1
            and len(node.keywords) <= 1
            and isinstance(given[0], (python_ast.List, python_ast.Tuple))
        ):
            names = [
                e.value
                for e in given[0].elts
                if isinstance(e, python_ast.Constant) and isinstance(e.value, str)
            ]
            if len(names) == len(given[0].elts):
                keys = tuple(names)
        found.append(PythonDedup(within, keys, at(node)))
    found.sort(key=lambda d: d.span.start)
    return tuple(found)


def _longest_statement(code: str) -> int:
    """The offset of the Python statement with the most tokens (the one that nests too
    deeply), by one pass of ``tokenize`` (no recursion); 0 if the text does not tokenize."""
    lines = [0]
    for i, ch in enumerate(code):
        if ch == "\n":
            lines.append(i + 1)
    best, best_at, count, at = -1, 0, 0, None
    try:
        for token in tokenize.generate_tokens(StringIO(code).readline):
            if at is None:
                at = token.start
            count += 1
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if count > best:
                    best, best_at = count, lines[min(at[0], len(lines)) - 1] + at[1]
                count, at = 0, None
    except (tokenize.TokenError, SyntaxError):
        pass
    if count > best and at is not None:
        best_at = lines[min(at[0], len(lines)) - 1] + at[1]
    return best_at


def _utf8_col(code: str, lines: list[int], line: int, col: int) -> int:
    """Python's column (UTF-8 bytes) as characters."""
    begin = lines[min(line, len(lines)) - 1]
    row = code[begin : begin + col * 4]
    count = 0
    for i, ch in enumerate(row):
        if count >= col:
            return i
        count += len(ch.encode("utf-8", "surrogatepass"))
    return len(row)


def _attr(node: Any) -> str:
    if isinstance(node, python_ast.Attribute):
        return node.attr
    if isinstance(node, python_ast.Name):
        return node.id
    return ""


def _keyword(call: Any, name: str) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            value = keyword.value
            if isinstance(value, python_ast.Constant) and isinstance(value.value, str):
                return value.value
            return None
    return None


__all__ = ["PipelineError", "Project", "SqlFile", "is_pipeline", "read_pipeline"]
SqlFile = sqlast.SqlFile
