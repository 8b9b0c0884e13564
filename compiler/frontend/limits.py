"""How large a spec sjoin accepts, and the refusal past each limit (E031).

Every stage is linear in a spec's size, but Python walking sqlglot trees costs tens of
microseconds per node, so a spec as large as a user may generate (a 100,000-item IN list, a
chain of 1,000 joins) would take a minute and gigabytes.  Past these limits `sjoin check`
(and every command that reads a spec) refuses the spec with one E031 at the place where it
passes the limit, and plans nothing.  Under them, checking, planning and compiling take a
few seconds and a few hundred MiB on a small machine (`benchmarks/parser_limits.py`, figures
in docs/benchmarks.md; docs/language.md states the limits).

Each limit is checked before the work it bounds, so that a refusal is itself fast and small:

- ``MAX_SPEC_CHARS``: the text; ``api.read_spec`` reads at most one character past it and
  ``api.check_text`` refuses it before anything else (``refuse_text``);
- ``MAX_TOKENS``, ``MAX_NAME_CHARS``, ``MAX_STRING_CHARS``: one regex scan of the text before
  it is parsed (``refuse_text``);
- ``MAX_NESTING``: levels of one expression, on the parse tree before it becomes an AST
  (E001, ``parse._limit_nesting``: deeper nesting is a syntax problem, not a size);
- ``MAX_RELATIONS``: streams, joins and aggregates, counted on the AST before binding
  (``refuse_statements``);
- ``MAX_COLUMNS``: the columns of all relations together, counted by the binder before it
  builds each relation's columns (``ColumnBudget``): a join without SELECT keeps every column
  of both sides, so a chain of n such joins has n² columns and a self-join of self-joins 2^n.
- ``MAX_GLOB_ENTRIES``: the files and folders a pipeline project's ``libraries`` globs walk
  (``compiler/frontend/project.py``), counted as they are listed: a glob that climbs out of the
  project (``../../**``) would otherwise walk the whole file system.  The project's files
  together are held to ``MAX_SPEC_CHARS`` (each read only up to what is left of it), and
  the nesting of its YAML and SQL to ``MAX_NESTING``.
- ``MAX_SUBSTITUTIONS``: the predicates Spark's filter inference rewrites through the join
  conditions' equalities (``compiler/planning/infer.py``), counted by the planner before it rewrites
  them: n equalities that share one column rewrite each other, n² predicates.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..diagnostics.diagnostics import Diagnostics
from ..vocabulary.source import Span
from .ast import AggregateDecl, DedupDecl, JoinDecl, SpecFile, StreamDecl, UnionDecl, ViewDecl

MAX_SPEC_CHARS = 1_000_000
MAX_TOKENS = 50_000
MAX_NAME_CHARS = 1_000
MAX_STRING_CHARS = 100_000
MAX_NESTING = 100
MAX_RELATIONS = 1_000
MAX_COLUMNS = 20_000
MAX_SUBSTITUTIONS = 20_000
MAX_GLOB_ENTRIES = 10_000

# The grammar's tokens as its terminals match them (grammar/sjoin.lark), after white space
# and comments: a string, a name (plain or back-quoted), a number, a two-character operator,
# any other character.  An unclosed string, name or comment runs to the end of its line (of
# the text), as far as the parser would read it before its syntax error.  Possessive
# repeats: no backtracking, no memory per character.
_TOKEN = re.compile(
    r"(?:\s++|--[^\r\n]*+|/\*[\s\S]*?(?:\*/|\Z))*+"
    r"(?P<token>(?P<string>'(?:[^'\r\n]|'')*+'?)"
    r"|(?P<name>`(?:[^`\r\n]|``)*+`?|[A-Za-z_][A-Za-z0-9_]*+)"
    r"|[0-9]++(?:\.[0-9]++)?+|[<>!=]=|<>|.)?",
    re.DOTALL,
)
_LONG_TOKEN = min(MAX_NAME_CHARS, MAX_STRING_CHARS)


def tokens(text: str) -> Iterator[re.Match[str]]:
    """The tokens of ``text`` as the limits count them: one match each, whose ``token``
    group is the token (white space and comments before it are not tokens)."""
    return (m for m in _TOKEN.finditer(text) if m.start("token") >= 0)


def refuse_text(text: str, diags: Diagnostics, ranges: list[tuple[int, int]] | None = None) -> bool:
    """E031 at the first place where ``text`` passes a limit of its length, its number of
    tokens, or the length of one name or string; whether it did.  Linear: one scan, and a
    few integer operations per token.  ``ranges``: the parts of ``text`` whose tokens count
    (a pipeline project's SQL files, each scanned on its own so that a comment left open
    in one does not hide the next; its YAML and Python are held to the length only)."""
    if len(text) > MAX_SPEC_CHARS:
        diags.add(
            "E031",
            f"the spec is longer than {MAX_SPEC_CHARS:,} characters",
            Span(MAX_SPEC_CHARS, MAX_SPEC_CHARS + 1),
            f"character {MAX_SPEC_CHARS + 1:,} is here",
            "split the spec into several files, one per pipeline",
        )
        return True
    count = 0
    scans = (
        _TOKEN.finditer(text, a, b) for a, b in (ranges if ranges is not None else [(0, len(text))])
    )
    for m in (m for scan in scans for m in scan if m.start("token") >= 0):
        start = m.start("token")
        count += 1
        if count > MAX_TOKENS:
            diags.add(
                "E031",
                f"the spec has more than {MAX_TOKENS:,} tokens",
                Span(start, m.end()),
                f"token {MAX_TOKENS + 1:,}",
                "split the spec into several files, one per pipeline; a long IN list or "
                "many conditions may be better kept in a lookup stream joined on its key",
            )
            return True
        length = m.end() - start
        if length <= _LONG_TOKEN:
            continue
        written = m.group("token")
        chars = _characters(written)
        if written[0] == "'":
            if chars > MAX_STRING_CHARS:
                diags.add(
                    "E031",
                    f"a string literal is longer than {MAX_STRING_CHARS:,} characters",
                    Span(start, start + 1),
                    f"{chars:,} characters from here",
                    "keep large values out of the spec (in a file the job reads)",
                )
                return True
        elif m.start("name") >= 0 and chars > MAX_NAME_CHARS:
            diags.add(
                "E031",
                f"a name is longer than {MAX_NAME_CHARS:,} characters",
                Span(start, start + 1),
                f"{chars:,} characters from here",
                "use a shorter name",
            )
            return True
    return False


def _characters(written: str) -> int:
    """The characters a token stands for: a string or a back-quoted name without its
    quotes, a doubled quote counted once."""
    quote = written[0]
    if quote not in "'`":
        return len(written)
    inner = written[1:-1] if len(written) > 1 and written.endswith(quote) else written[1:]
    return len(inner) - inner.count(quote * 2)


def refuse_statements(spec: SpecFile, diags: Diagnostics) -> bool:
    """E031 at the first relation past ``MAX_RELATIONS``; whether there is one."""
    count = 0
    for stmt in spec.statements:
        if isinstance(
            stmt, StreamDecl | JoinDecl | AggregateDecl | DedupDecl | UnionDecl | ViewDecl
        ):
            count += 1
            if count > MAX_RELATIONS:
                diags.add(
                    "E031",
                    f"the spec defines more than {MAX_RELATIONS:,} relations (streams, "
                    "joins and aggregates)",
                    stmt.name.span,
                    f"relation {MAX_RELATIONS + 1:,}",
                    "split the spec into several files, one per pipeline",
                )
                return True
    return False


class ColumnBudget:
    """The columns of all relations, counted by the binder as it defines each relation,
    before it builds the relation's columns (``MAX_COLUMNS``)."""

    def __init__(self, diags: Diagnostics) -> None:
        self.diags = diags
        self.used = 0
        self.refused = False

    @property
    def room(self) -> int:
        """How many more columns the spec may have."""
        return MAX_COLUMNS - self.used

    def take(self, count: int) -> None:
        self.used += count

    def refuse(self, span: Span, label: str, help: str) -> None:
        """E031 at ``span``, where the columns pass the limit."""
        self.diags.add(
            "E031",
            f"the relations of the spec have more than {MAX_COLUMNS:,} columns in all",
            span,
            label,
            help,
        )
        self.refused = True
