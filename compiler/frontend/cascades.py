"""Which diagnostics follow from an error, and are left out (issue 35): one mistake, one
diagnostic, in both syntaxes.

A statement is *broken* when it did not parse or bind (its name is in ``SpecFile.broken`` or
the binder's ``broken``), when its watermark did not bind, or when an error inside it says
that it is not what was written (``CHANGED``: its join may be INNER for an `OUTER` read as an
alias, its stream may have no watermark for a misspelt unit) or that Spark cannot run it or
never emits what it should (``RUNS_NOT``: an outer join whose unmatched rows never come out
feeds an aggregate nothing; E034: a watermark Spark refuses where the statement reads a
relation).  E034 on a stream's read is a ``CHANGED`` error: the binder drops that watermark.
An error in a stream's `from` clause breaks nothing it computes.  The diagnostics that judge a
relation by what flows into it (``DERIVED``: state eviction, output modes, the global
watermark check, event-time columns) are dropped

- in every relation that reads a broken one, directly or through others (a *dependant*);
- in a statement with a ``CHANGED`` error itself (beside Spark's own errors, such as E028,
  the statement's warnings still describe it truly, and stay).

Each diagnostic belongs to the statement whose span holds it; the front ends give every
statement its span (a .sjoin statement, or the SQL statement a pipeline dataset was lowered
from), so the rule is the same for both syntaxes.  Where several statements share a span,
a diagnostic there is dropped only when every one of them follows from a broken one.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Sequence

from ..diagnostics.diagnostics import Diagnostic
from ..vocabulary.source import Span
from . import ast

# judged by what flows into a relation from the relations it reads (W002, judged by what
# reads a stream, is api.CONSUMER_WARNINGS's)
DERIVED = frozenset({"W001", "W010", "E021", "E022", "E023", "E025", "E028"})
# errors after which a statement is not what was written, in what DERIVED reads: a syntax
# error (`a OUTER JOIN b` parsed as INNER with the alias OUTER), a character read as a space,
# a watermark column or a duration (a watermark delay, a range condition's interval)
CHANGED = frozenset({"E001", "E008", "E010", "E013", "E014"})
# Spark's errors that the relation itself cannot run, or never emits what it should: what
# reads it reads nothing Spark would run (E034: a watermark Spark refuses where the relation
# reads its input).  The errors of the checks around a relation
# (E022, E023, E027, E032: each operator Spark names is its own error) mark nothing, nor does
# a type or name error inside a SELECT (its relation's watermarks are what was written).
RUNS_NOT = frozenset({"E020", "E021", "E025", "E026", "E028", "E029", "E030", "E034"})


def reads(statement: ast.Statement) -> list[str]:
    """The relations ``statement`` reads."""
    if isinstance(statement, ast.JoinDecl):
        return [statement.left.name.text, statement.right.name.text]
    if isinstance(statement, ast.AggregateDecl | ast.DedupDecl | ast.ViewDecl):
        return [statement.input.name.text]
    if isinstance(statement, ast.UnionDecl):
        return [i.text for i in statement.inputs]
    if isinstance(statement, ast.SinkDecl):
        return [statement.relation.text]
    return []


def _dropped_watermarks(statements: Sequence[ast.Statement]) -> set[Span]:
    """The spans of the `watermark` clauses on a stream's read (`orders AS o watermark t
    delay ...`): the binder refuses one (E034 there) and binds the read without it, so the
    statement is not what was written, as after a watermark that did not bind."""
    streams = {s.name.text for s in statements if isinstance(s, ast.StreamDecl)}
    refs = [
        ref
        for s in statements
        for ref in (
            (s.left, s.right)
            if isinstance(s, ast.JoinDecl)
            else (s.input,)
            if isinstance(s, ast.AggregateDecl | ast.DedupDecl | ast.ViewDecl)
            else ()
        )
    ]
    return {ref.watermark.span for ref in refs if ref.watermark and ref.name.text in streams}


def _name(statement: ast.Statement) -> str | None:
    name = getattr(statement, "name", None)
    return name.text if isinstance(name, ast.Ident) else None


def without_cascades(
    found: Sequence[Diagnostic], spec: ast.SpecFile | None, broken: Collection[str]
) -> list[Diagnostic]:
    """``found`` less what follows from a broken statement (see the module's docstring).
    ``broken``: the relations the front end or binder left broken (not defined, or a stream
    whose watermark failed to bind)."""
    if spec is None or (not any(d.severity == "error" for d in found) and not broken):
        return list(found)
    statements = sorted(spec.statements, key=lambda s: s.span.start)
    starts = [s.span.start for s in statements]
    # an error in a `from` clause changes what a job reads, not what the relation computes
    sources = [s.source.span for s in statements if isinstance(s, ast.StreamDecl) and s.source]

    def owners(diagnostic: Diagnostic) -> list[int]:
        """The statements whose span holds ``diagnostic`` (several when a pipeline dataset
        was lowered into several statements of one span)."""
        pos = diagnostic.span.start
        last = bisect.bisect_right(starts, pos) - 1
        found = []
        i = last
        while i >= 0 and starts[i] == starts[last]:  # the statements that start there
            span = statements[i].span
            if pos < span.end or span.start == pos:
                found.append(i)
            i -= 1
        return found

    roots = set(broken) | set(spec.broken)
    rewritten: set[int] = set()  # statements not as written: their own DERIVED go too
    dropped = _dropped_watermarks(statements)
    for d in found:
        if d.severity != "error" or any(s.start <= d.span.start < s.end for s in sources):
            continue
        changed = d.code in CHANGED or (d.code == "E034" and d.span in dropped)
        for i in owners(d):
            name = _name(statements[i])
            if name is not None and (changed or d.code in RUNS_NOT):
                roots.add(name)
            if changed:
                rewritten.add(i)
    # every relation that reads a broken one, through any chain
    readers: dict[str, list[str]] = {}
    for statement in statements:
        name = _name(statement)
        if name is not None:
            for read in reads(statement):
                readers.setdefault(read, []).append(name)
    tainted: set[str] = set()
    todo = list(roots)
    while todo:
        for reader in readers.get(todo.pop(), ()):
            if reader not in tainted:
                tainted.add(reader)
                todo.append(reader)
    kept = []
    for d in found:
        # dropped only when every statement that may own it follows from a broken one: where
        # statements share a span (a pipeline dataset lowered into several, or a DataFrame
        # whose every node was made at one call), a span alone does not say which owns it
        held = owners(d)
        if (
            d.code in DERIVED
            and held
            and all(i in rewritten or _name(statements[i]) in tainted for i in held)
        ):
            continue
        kept.append(d)
    return kept
