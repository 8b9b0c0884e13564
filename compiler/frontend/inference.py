"""The columns of a pipeline's Python-defined streams, inferred from a trace (W012).

A stream the pipeline defines in Python has no column list sjoin can read; its columns are
declared in ``sjoin-schemas.sql``.  When they are not, and a JSON-lines trace is given
(`sjoin run|verify DIR --trace T`), each such stream's columns are what its rows hold:
in the order they first appear, a JSON boolean BOOLEAN, an integer BIGINT, any other number
DOUBLE, a string TIMESTAMP when every value of the column is an ISO-8601 timestamp (the
trace's own form), else STRING.  W012 says so, with the columns, to be copied into the
schema file.  A column whose values are all NULL, or that holds an array or an object, is
not inferred: the stream stays unknown and the read of it says why.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..diagnostics.diagnostics import Diagnostics
from ..vocabulary.source import Span
from . import ast
from .sqllower import SCHEMA_FILE, PipelineInput

MAX_LINES = 100_000  # trace lines read to infer from: a sample, not the whole run
_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?"
    r"(Z|[+-][0-9]{2}:?[0-9]{2})?"
)


def _wanted(given: PipelineInput) -> dict[str, Span]:
    """The Python-defined datasets with no declared columns, and where each is defined."""
    declared = {
        s.name.text
        for file in [*given.sql, *given.schemas]
        for s in file.statements
        if hasattr(s, "name") and hasattr(s, "columns")
    }
    return {
        p.name: p.span
        for p in given.python
        if p.kind in ("table", "streaming_table", "temporary_view") and p.name not in declared
    }


def infer_streams(
    given: PipelineInput, trace: Path, diags: Diagnostics
) -> dict[str, tuple[ast.ColumnDecl, ...]]:
    wanted = _wanted(given)
    if not wanted:
        return {}
    kinds: dict[str, dict[str, set[str]]] = {name: {} for name in wanted}
    try:
        with open(trace, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f):
                if number >= MAX_LINES:
                    break
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # the run reports bad lines where it reads them
                if not isinstance(record, dict):
                    continue
                stream, row = record.get("stream"), record.get("row")
                if stream not in kinds or not isinstance(row, dict):
                    continue
                for column, value in row.items():
                    kinds[stream].setdefault(str(column), set()).add(_kind(value))
    except OSError:
        return {}  # the run reports an unreadable trace
    out: dict[str, tuple[ast.ColumnDecl, ...]] = {}
    for name, columns in kinds.items():
        span = wanted[name]
        decls: list[ast.ColumnDecl] = []
        for column, found in columns.items():
            found.discard("null")
            kind = _type(found)
            if kind is None:
                decls = []
                break
            ident = ast.Ident(column, span)
            decls.append(ast.ColumnDecl(ident, ast.TypeRef(kind, (), span), span))
        if not decls:
            continue
        out[name] = tuple(decls)
        listed = ", ".join(f"{_shown(d.name.text)} {d.type.name}" for d in decls)
        diags.add(
            "W012",
            f"the columns of `{name}` are inferred from the trace: ({listed})",
            span,
            "columns from the trace",
            f"declare them in {SCHEMA_FILE}: CREATE STREAMING TABLE {_shown(name)} ({listed})",
        )
    return out


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "bigint"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "timestamp" if _TIMESTAMP.fullmatch(value) else "string"
    return "other"


def _type(kinds: set[str]) -> str | None:
    if not kinds or "other" in kinds:
        return None
    if kinds <= {"bigint"}:
        return "BIGINT"
    if kinds <= {"bigint", "double"}:
        return "DOUBLE"
    if kinds == {"boolean"}:
        return "BOOLEAN"
    if kinds == {"timestamp"}:
        return "TIMESTAMP"
    if kinds <= {"timestamp", "string"}:
        return "STRING"
    return None


def _shown(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else (
        "`" + name.replace("`", "``") + "`"
    )  # fmt: skip
