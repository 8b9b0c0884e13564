"""Where each relation and expression of a PySpark job was made: file, line and column.

Child side (``install``): two hooks in the Connect client.  ``LogicalPlan._fresh_plan_id``
runs when a relation is built, so ``PLAN_SITES`` maps every plan_id to the job's frames at
that moment; ``Expression.__init__`` gives every expression whose proto PySpark leaves
without an origin (``F.expr``, ``F.window``, ``df["k"]``, ...) a call site of its own.
PySpark's own origins are partial and are cached off for the whole process when a Column is
made before a session exists (``_enable_debugging_cache``), hence the hooks.

Parent side (``Locator``): a site (UTF-8 byte columns, as ``co_positions`` gives them) as a
``Span`` of the job's text (characters), the span of a method call's ``.name(...)`` (so a
join's diagnostics point at its ``.join(`` line), and of the text inside a string literal
(``expr("...")``), so that a diagnostic inside it points at its place.

This module imports no pyspark at its top: the parent process reads sites without it.
"""

from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass
from typing import Any

from ...vocabulary.source import Span

_THIS_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_SKIPPED: tuple[str, ...] = (_THIS_PACKAGE, os.path.dirname(os.__file__) + os.sep)


def _skipped_dirs() -> tuple[str, ...]:
    """pyspark's, the standard library's and this package's folders: not the job's frames."""
    pyspark = sys.modules.get("pyspark")
    if pyspark is not None and pyspark.__file__:
        return (*_SKIPPED, os.path.dirname(pyspark.__file__) + os.sep)
    return _SKIPPED


def is_user(filename: str) -> bool:
    """Whether a frame of ``filename`` is the job's (or its helpers') own code."""
    if filename.startswith("<"):
        return False
    return not os.path.abspath(filename).startswith(_skipped_dirs())


@dataclass(frozen=True)
class Site:
    """One frame of the job: ``col`` and ``end_col`` are UTF-8 byte offsets (None when
    Python gives none), as ``co_positions`` and ``ast`` count them."""

    file: str
    line: int
    col: int | None
    end_line: int | None
    end_col: int | None
    function: str

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "function": self.function,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Site:
        return Site(
            str(data["file"]),
            int(data["line"]),
            data.get("col"),
            data.get("end_line"),
            data.get("end_col"),
            str(data.get("function", "")),
        )


def user_frames(limit: int = 8) -> list[Site]:
    """The job's frames on the current stack, innermost first (at most ``limit``)."""
    out: list[Site] = []
    frame = sys._getframe(1)
    skipped = _skipped_dirs()
    while frame is not None and len(out) < limit:
        name = frame.f_code.co_filename
        if not name.startswith("<") and not os.path.abspath(name).startswith(skipped):
            index = frame.f_lasti // 2  # one position per 2-byte code unit (3.11+)
            position = next(
                (p for i, p in enumerate(frame.f_code.co_positions()) if i == index), None
            )
            line, end_line, col, end_col = position or (frame.f_lineno, None, None, None)
            out.append(
                Site(
                    os.path.abspath(name),
                    line or frame.f_lineno,
                    col,
                    end_line,
                    end_col,
                    frame.f_code.co_name,
                )
            )
        frame = frame.f_back  # type: ignore[assignment]
    return out


# plan_id -> the job's frames when the relation was built (child process)
PLAN_SITES: dict[int, list[Site]] = {}
SITE_SEPARATOR = "\x1f"  # between the fields of a site in an expression's call_site


def install() -> None:
    """The two hooks (child process only; the patches are for the rest of the process)."""
    import pyspark.errors.utils as errors_utils
    from pyspark.sql.connect import expressions, plan
    from pyspark.sql.connect.proto import common_pb2

    fresh = plan.LogicalPlan._fresh_plan_id
    expression_init = expressions.Expression.__init__

    def fresh_plan_id() -> int:
        plan_id: int = fresh()
        PLAN_SITES[plan_id] = user_frames()
        return plan_id

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        expression_init(self, *args, **kwargs)
        sites = user_frames(1)
        if sites:
            s = sites[0]
            fields = (s.file, s.line, s.col, s.end_line, s.end_col)
            self.origin = common_pb2.Origin(
                python_origin=common_pb2.PythonOrigin(
                    fragment=type(self).__name__,
                    call_site=SITE_SEPARATOR.join("" if f is None else str(f) for f in fields),
                )
            )

    setattr(plan.LogicalPlan, "_fresh_plan_id", staticmethod(fresh_plan_id))  # noqa: B010
    setattr(expressions.Expression, "__init__", init)  # noqa: B010
    # PySpark caches "debugging enabled" at its first Column; with no session yet it caches
    # False and records no origin for the rest of the process
    setattr(errors_utils, "_enable_debugging_cache", True)  # noqa: B010


def parse_call_site(text: str) -> Site | None:
    """The site ``install`` wrote into an expression's origin (None: PySpark's own)."""
    parts = text.split(SITE_SEPARATOR)
    if len(parts) != 5:
        return None

    def num(p: str) -> int | None:
        return int(p) if p else None

    return Site(parts[0], int(parts[1]), num(parts[2]), num(parts[3]), num(parts[4]), "")


class Locator:
    """Sites in one job file as spans of its text."""

    def __init__(self, path: str, text: str) -> None:
        self.path = os.path.abspath(path)
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts: list[int] = []
        at = 0
        for line in self.lines:
            self.starts.append(at)
            at += len(line)
        self._calls: dict[tuple[int, int], ast.Call] | None = None

    def offset(self, line: int, byte_col: int | None) -> int:
        """The character offset of (1-based line, UTF-8 byte column)."""
        if line < 1 or line > len(self.lines):
            return len(self.text)
        row = self.lines[line - 1]
        chars = len(row.encode("utf-8")[: byte_col or 0].decode("utf-8", "ignore"))
        return self.starts[line - 1] + chars

    def first(self, sites: list[Site]) -> Site | None:
        """The innermost frame of ``sites`` in this file (a helper's caller in the job)."""
        return next((s for s in sites if os.path.abspath(s.file) == self.path), None)

    def span(self, site: Site | None) -> Span:
        """The span of a site: a method call's ``name(...)`` when the site is a call
        (``.join(`` for a join), else the whole instruction; the file's start without one."""
        if site is None:
            return Span(0, 0)
        call = self.call(site)
        if call is not None:
            return self.call_span(call)
        start = self.offset(site.line, site.col)
        end = self.offset(site.end_line or site.line, site.end_col) if site.end_col else start
        return Span(start, max(start, end))

    def call(self, site: Site) -> ast.Call | None:
        """The call whose end is the site's end (the call the instruction made)."""
        if site.end_line is None or site.end_col is None:
            return None
        if self._calls is None:
            self._calls = {}
            try:
                tree = ast.parse(self.text)
            except (SyntaxError, ValueError):
                tree = ast.Module(body=[], type_ignores=[])
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and node.end_lineno is not None:
                    self._calls[(node.end_lineno, node.end_col_offset or 0)] = node
        return self._calls.get((site.end_line, site.end_col))

    def call_span(self, call: ast.Call) -> Span:
        end = self.offset(call.end_lineno or call.lineno, call.end_col_offset)
        func = call.func
        if isinstance(func, ast.Attribute) and func.value.end_lineno is not None:
            # the attribute's name: the first occurrence after the object's end
            after = self.offset(func.value.end_lineno, func.value.end_col_offset)
            found = self.text.find(func.attr, after, end)
            if found >= 0:
                return Span(found, end)
        return Span(self.offset(call.lineno, call.col_offset), end)

    def string_argument(self, site: Site | None, value: str) -> int | None:
        """The offset of ``value``'s first character inside the call's string literal
        argument at ``site`` (``expr("...")``, ``filter("...")``), when the literal holds it
        verbatim (one plain quoted string: no escapes, no prefix, no concatenation)."""
        if site is None:
            return None
        call = self.call(site)
        if call is None:
            return None
        for arg in call.args:
            if isinstance(arg, ast.Constant) and arg.value == value and arg.end_lineno:
                start = self.offset(arg.lineno, arg.col_offset)
                end = self.offset(arg.end_lineno, arg.end_col_offset)
                written = self.text[start:end]
                for quote in ('"""', "'''", '"', "'"):
                    if written.startswith(quote) and written[len(quote) : -len(quote)] == value:
                        return start + len(quote)
        return None
