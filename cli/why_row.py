"""`sjoin why`'s command line: the trace row a ROW argument names (``locate``: ``FILE:LINE``,
``LINE`` or ``stream: col = value AND ...``; every bad ROW a ``WhyError``), and what
``reports/why.py`` tells of it printed as lines (``text``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..compiler.planning.plan import Plan, StreamNode
from ..reports.why import cell
from ..runtime.engine.values import dumps
from ..runtime.io.trace import BadRow, Trace, read_json_value, read_value
from ..runtime.observe.lineage import Lineage


class WhyError(Exception):
    """A ROW argument that names no row (or several): a usage error, said in words."""


# ------------------------------------------------------------------------------ ROW


def locate(
    text: str,
    trace_path: Path,
    plan: Plan,
    log: Lineage,
    trace: Trace,
    what: str = "ROW",
) -> int:
    """The trace line that ``text`` names: ``FILE:LINE`` (FILE the trace), ``LINE``, or
    ``STREAM: COL = VALUE [AND ...]`` (``COL IS [NOT] NULL`` too) matching exactly one row."""
    stripped = text.strip()
    if not stripped:
        raise WhyError(f"{what} is empty: give FILE:LINE, LINE, or `stream: column = value`")
    if _DIGITS.fullmatch(stripped):  # ASCII digits only: `²` is a digit to isdigit()
        return _line(stripped, trace_path, log, trace, what)
    found = re.fullmatch(r"(.*):([0-9]+)", stripped, re.DOTALL)
    if found is not None and plan.node(found.group(1).strip()) is None:
        file, number = found.group(1), found.group(2)
        if not _same_file(Path(file), trace_path):
            raise WhyError(
                f"{what} {_q(text)} names a line of {_cut(file)}, but the trace is {trace_path}: "
                "name a line of the --trace file"
            )
        return _line(number, trace_path, log, trace, what)
    if ":" not in stripped:
        raise WhyError(
            f"{what} {_q(text)} is neither FILE:LINE nor `stream: column = value`: "
            "write e.g. `clicks: ad_id = 7`"
        )
    stream, _, predicate = stripped.partition(":")
    return _matching(stream.strip(), predicate, text, plan, log, what)


def _q(text: str) -> str:
    """An argument as a message quotes it: back-quoted, a long one cut in the middle."""
    return f"`{_cut(text)}`"


def _cut(text: str) -> str:
    return text if len(text) <= 120 else f"{text[:60]}...{text[-40:]} ({len(text)} characters)"


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve(strict=True) == b.resolve(strict=True)
    except OSError:
        return False


_DIGITS = re.compile(r"[0-9]+")
# a line number longer than this is beyond any file (and never made an int: Python refuses
# to read one of more than 4,300 digits)
_MAX_LINE_DIGITS = 18


def _line(digits: str, trace_path: Path, log: Lineage, trace: Trace, what: str) -> int:
    """The line ``digits`` (ASCII digits) names, when it holds a row."""
    if len(digits.lstrip("0")) > _MAX_LINE_DIGITS:
        total = _count_lines(trace_path)
        shown = digits if len(digits) <= 40 else f"{digits[:12]}...{digits[-6:]}"
        raise WhyError(
            f"{what}: {trace_path} has no line {shown} ({len(digits)} digits; it has "
            f"{total} line{'s' if total != 1 else ''})"
        )
    number = int(digits)
    if number in log.rows_at:
        return number
    bad: BadRow | None = next((b for b in trace.bad_rows if b.line == number), None)
    if bad is not None:
        raise WhyError(f"{what}: line {number} of {trace_path} is a bad row: {bad.reason}")
    total = _count_lines(trace_path)
    if number < 1 or number > total:
        raise WhyError(
            f"{what}: {trace_path} has no line {number} (it has {total} line"
            f"{'s' if total != 1 else ''})"
        )
    raise WhyError(f"{what}: line {number} of {trace_path} holds no row (it is blank)")


def _count_lines(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


_TOKEN = re.compile(
    r"\s+|(?P<name>`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*)|(?P<string>'(?:[^']|'')*')"
    r"|(?P<number>-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)|(?P<op>=)"
)


def _tokens(predicate: str, offset: int, text: str, what: str) -> list[tuple[str, str, int]]:
    out = []
    at = 0
    while at < len(predicate):
        m = _TOKEN.match(predicate, at)
        if m is None or m.end() == at:
            column = offset + at + 1
            raise WhyError(
                f"{what} {_q(text)}, column {column}: unexpected `{predicate[at]}`; write "
                "`column = value` conditions joined by AND (strings in single quotes)"
            )
        if m.lastgroup is not None:
            out.append((m.lastgroup, m.group(m.lastgroup), offset + at + 1))
        at = m.end()
    return out


def _matching(stream: str, predicate: str, text: str, plan: Plan, log: Lineage, what: str) -> int:
    node = plan.node(stream)
    if not isinstance(node, StreamNode):
        names = ", ".join(s.name for s in plan.streams)
        kind = "is not a stream" if node is not None else "is not a stream of the spec"
        raise WhyError(f"{what} {_q(text)}: {_q(stream)} {kind}; streams: {names}")
    offset = text.index(":") + 1
    tokens = _tokens(predicate, offset, text, what)
    if not tokens:
        raise WhyError(f"{what} {_q(text)}: no condition after `{stream}:`; write `column = value`")
    columns = {c.name: (i, c) for i, c in enumerate(node.columns)}
    tests: list[tuple[int, Any, str]] = []  # (column index, value or a NULL test, words)
    i = 0

    def expect(kinds: tuple[str, ...], words: str) -> tuple[str, str, int]:
        nonlocal i
        if i >= len(tokens):
            raise WhyError(f"{what} {_q(text)}: it ends where {words} should be")
        tok = tokens[i]
        if tok[0] not in kinds:
            raise WhyError(
                f"{what} {_q(text)}, column {tok[2]}: expected {words}, got {_q(tok[1])}"
            )
        i += 1
        return tok

    while True:
        _, name, at = expect(("name",), "a column name")
        if name.startswith("`"):
            name = name[1:-1].replace("``", "`")
        if name not in columns:
            raise WhyError(
                f"{what} {_q(text)}, column {at}: `{stream}` has no column {_q(name)}; its "
                "columns: " + ", ".join(columns)
            )
        index, column = columns[name]
        if i < len(tokens) and tokens[i][0] == "name" and tokens[i][1].upper() == "IS":
            i += 1
            negate = False
            if i < len(tokens) and tokens[i][1].upper() == "NOT":
                negate, i = True, i + 1
            _, word, at2 = expect(("name",), "NULL")
            if word.upper() != "NULL":
                raise WhyError(f"{what} {_q(text)}, column {at2}: expected NULL, got {_q(word)}")
            tests.append((index, ("not null",) if negate else ("null",), f"{name} IS NULL"))
        else:
            expect(("op",), "`=`")
            kind, literal, at3 = expect(("string", "number", "name"), "a value")
            value = _literal(kind, literal, at3, column.type, name, text, what)
            tests.append((index, value, f"{name} = {literal}"))
        if i == len(tokens):
            break
        _, word, at4 = expect(("name",), "AND")
        if word.upper() != "AND":
            raise WhyError(f"{what} {_q(text)}, column {at4}: expected AND, got {_q(word)}")
    found = [
        line
        for line, (_, s, row) in sorted(log.rows_at.items())
        if s == stream and all(_holds(row[c], v) for c, v, _ in tests)
    ]
    if not found:
        raise WhyError(f"{what} {_q(text)}: no row of `{stream}` in the trace has that")
    if len(found) > 1:
        shown = ", ".join(str(n) for n in found[:10]) + (", ..." if len(found) > 10 else "")
        raise WhyError(
            f"{what} {_q(text)}: {len(found)} rows of `{stream}` have that (lines {shown}); "
            "add a condition, or name one by its line"
        )
    return found[0]


def _holds(value: Any, test: Any) -> bool:
    if test == ("null",):
        return value is None
    if test == ("not null",):
        return value is not None
    if isinstance(value, float) and isinstance(test, float):
        return value.hex() == test.hex()
    return bool(value == test) and value is not None


def _literal(
    kind: str, literal: str, at: int, sql_type: Any, name: str, text: str, what: str
) -> Any:
    # the value is read by the trace reader's own rules and limits (runtime/io/trace.py): a
    # string as a JSON string, a number or true/false as its JSON text, so a ROW names a
    # value exactly when a trace line could hold it (and `1e999999999` is never expanded)
    string: str | None = None  # a string's value, else the value's JSON text
    json_text = ""
    if kind == "string":
        string = literal[1:-1].replace("''", "'")
    elif kind == "number":
        if re.match(r"-?0[0-9]", literal):
            raise WhyError(
                f"{what} {_q(text)}, column {at}: {_q(literal)} has a leading zero, which a "
                "number in a trace (JSON) may not have"
            )
        json_text = literal
    elif literal.lower() in ("true", "false"):
        json_text = literal.lower()
    elif literal.upper() == "NULL":
        raise WhyError(
            f"{what} {_q(text)}, column {at}: write `{name} IS NULL` (NULL never equals)"
        )
    else:
        raise WhyError(
            f"{what} {_q(text)}, column {at}: expected a value (a number, 'a string', true or "
            f"false), got {_q(literal)}"
        )
    try:
        if string is not None:
            return read_value(sql_type, string)
        return read_json_value(sql_type, json_text)
    except ValueError as err:
        raise WhyError(f"{what} {_q(text)}, column {at}: `{name}` is {sql_type}: {err}") from None


# ------------------------------------------------------------------------------ text


def text(found: dict[str, Any]) -> str:
    """A ``life`` or ``pair`` result as the lines ``sjoin why`` prints."""
    if "rows" in found:
        return str(found["text"])
    row = found["row"]
    lines = [
        f"line {row['line']}: a row of {'table ' if row.get('table') else ''}`{row['stream']}` "
        f"in trace batch {row['trace_batch']}: "
        + ", ".join(f"{k} = {cell(v)}" for k, v in row["values"].items())
    ]
    for section in found["operators"]:
        what = section["row"]
        copy_of = section.get("copy_of")
        place = section["input"] + (f"; `{copy_of}` as read again in its query" if copy_of else "")
        if what.get("line") is not None:
            head = f"in `{section['relation']}` ({place})"
        else:
            head = f"in `{section['relation']}` ({place}), as {_row_words(what)}"
        lines.append("")
        lines.append(head + ":")
        lines += [f"  {e['text']}" for e in section["events"]]
    if not found["operators"]:
        lines.append("no operator reads its stream in this run")
    lines.append("")
    if found["outputs"]:
        lines.append("output rows it is part of:")
        for out in found["outputs"]:
            lines.append(
                f"  `{out['relation']}` batch {out['batch']}: {dumps(out['row'])} (lines "
                + ", ".join(str(n) for n in out["lines"])
                + ")"
            )
    else:
        lines.append("it is part of no output row")
    return "\n".join(lines)


def _row_words(d: dict[str, Any]) -> str:
    lines = ", ".join(str(n) for n in d.get("lines", []))
    return f"the output row of `{d.get('output_of')}` from batch {d.get('batch')} (lines {lines})"
