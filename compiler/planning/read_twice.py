"""A relation read twice in one query, as Spark plans it: two subtrees, two operators.

Spark expands a streaming query's logical plan into a tree: a DataFrame that a query reads
twice (a join whose output two joins read, under a union; a self-join of a join's output)
is two subtrees, each with its own stateful operators and state, and its optimizer pushes
each reader's filters into that reader's subtree only (seen on Spark 4.3.0 and 3.5: parity
``a_join_read_twice_in_one_query``, `i` holds 5 rows after batch 0 in each of Spark's two
operators).

The rewrite is done here, on the bound model, before the planner plans anything (as
``semi_union.py`` does Spark's LEFT SEMI over a union): per query, walked in Spark's
pre-order from its root (left before right), the first read of a relation keeps it, and each
later read whose subtree holds a stateful operator (a stream-stream join, an aggregate, a
dedup) reads a copy of that subtree under a fresh name (``i_2``, ...), down to, but not
including, the streams and tables (a stream read twice is already two sources:
``Plan.sources``).  The planner then plans each copy as any relation (each reader's pushdown
lands in its own copy), the runtime runs distinct operators, the PySpark back end writes
the copy as a DataFrame of its own (Spark's same plan), and the operator ids, pre-order,
keep Spark's order.

A relation read twice whose subtree holds no state (a view over a stream, a stream) is not
copied: nothing is counted per operator there.  The copies are no names the user wrote: the
Plan maps each to the relation it copies (``Plan.copies``), which ``Plan.written_operators``
leaves out, the checks' diagnostics name (``written_names``) and report once, and which
`sjoin plan` notes on the copy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ..binding.bound import (
    Aggregate,
    BoundSpec,
    Dedup,
    Input,
    Join,
    Relation,
    Stream,
    Table,
    Union,
    View,
)
from ..diagnostics.diagnostics import Diagnostic

# at most this many copies per spec: in a spec whose reads multiply (each level reading the
# one below twice, 2^n reads in Spark's tree), the reads past it share one node, as before the
# copies; a spec that reads a relation again a few times stays far below it
MAX_COPIES = 64


@dataclass
class _Frame:
    name: str
    copying: bool
    out: list[str]
    got: list[str] = field(default_factory=list)


def copied_reads(
    spec: BoundSpec, roots: Iterable[str], reserved: Iterable[str] = ()
) -> tuple[BoundSpec, dict[str, str]]:
    """``spec`` with each later read, in one query, of a relation that holds state reading a
    copy of it (module docstring); and each copy's written relation.  The queries are walked
    in ``roots``' order; a copy's name is none of the spec's nor of ``reserved``.  A spec
    without such a read is returned as it is."""
    current: dict[str, Relation] = {r.name: r for r in spec.relations}
    taken = set(current) | set(reserved)
    stateful = _holds_state(spec)
    copies: dict[str, str] = {}
    after: dict[str, list[str]] = {}  # a written relation -> its copies, in order
    planned = 0  # the copies made and being made
    for root in roots:
        seen: set[str] = set()
        on_path: set[str] = set()
        top: list[str] = []
        stack: list[tuple[str, bool, list[str]] | _Frame] = [(root, False, top)]
        while stack:
            item = stack.pop()
            if isinstance(item, _Frame):
                on_path.discard(item.name)
                item.out.append(_leave(item, current, copies, after, taken))
                continue
            name, copying, out = item
            rel = current.get(name)
            if rel is None or isinstance(rel, Stream | Table) or name in on_path:
                out.append(name)  # a source, or a cycle (the binder refuses them)
                continue
            written = copies.get(name, name)
            full = planned >= MAX_COPIES  # past it, later reads read the one node
            if copying and full:
                out.append(name)
                continue
            if not copying and name in seen:
                if not stateful.get(written, False) or full:
                    out.append(name)
                    continue
                copying = True
            planned += copying  # each frame entered copying makes one copy
            seen.add(name)
            on_path.add(name)
            frame = _Frame(name, copying, out)
            stack.append(frame)
            stack.extend((r, copying, frame.got) for _, r in reversed(rel.inputs))
    if not copies:
        return spec, copies
    relations: list[Relation] = []
    for rel in spec.relations:
        relations.append(current[rel.name])
        relations.extend(current[c] for c in after.get(rel.name, ()))
    return replace(spec, relations=tuple(relations)), copies


def _leave(
    frame: _Frame,
    current: dict[str, Relation],
    copies: dict[str, str],
    after: dict[str, list[str]],
    taken: set[str],
) -> str:
    """The name the reader of ``frame`` reads: the relation with its inputs re-pointed at
    the copies its walk made, or, when copying, a new copy of it."""
    rel = current[frame.name]
    reads = [r for _, r in rel.inputs]
    if not frame.copying:
        if frame.got != reads:
            current[frame.name] = _reading(rel, frame.name, frame.got)
        return frame.name
    written = copies.get(frame.name, frame.name)
    index = 2
    while f"{written}_{index}" in taken:
        index += 1
    name = f"{written}_{index}"
    taken.add(name)
    copies[name] = written
    current[name] = _reading(rel, name, frame.got)
    after.setdefault(written, []).append(name)
    return name


def _reading(rel: Relation, name: str, reads: list[str]) -> Relation:
    """``rel`` named ``name``, its inputs reading ``reads`` (same columns: a copy's)."""

    def at(inp: Input, relation: str) -> Input:
        return inp if inp.relation == relation else replace(inp, relation=relation)

    if isinstance(rel, Join):
        return replace(rel, name=name, left=at(rel.left, reads[0]), right=at(rel.right, reads[1]))
    if isinstance(rel, Union):
        return replace(rel, name=name, relations=tuple(reads))
    if isinstance(rel, Aggregate | Dedup | View):
        return replace(rel, name=name, input=at(rel.input, reads[0]))
    return rel


def _holds_state(spec: BoundSpec) -> dict[str, bool]:
    """Per relation, whether it or a relation below it is a stateful operator."""
    by_name = {r.name: r for r in spec.relations}
    out: dict[str, bool] = {}
    for rel in spec.relations:  # inputs first: the binder orders them so
        own = isinstance(rel, Aggregate | Dedup) or (
            isinstance(rel, Join)
            and not any(isinstance(by_name.get(r), Table) for _, r in rel.inputs)
        )
        out[rel.name] = own or any(out.get(r, False) for _, r in rel.inputs)
    return out


def written_names(text: str, copies: dict[str, str]) -> str:
    """``text`` with each copy's quoted name (`` `i_2` ``) the written relation's."""
    for copy, written in copies.items():
        text = text.replace(f"`{copy}`", f"`{written}`")
    return text


def written_words(text: str, copies: dict[str, str]) -> str:
    """``text`` with each copy's name, as a word (a check's ``global watermark: i_2 -> n``),
    the written relation's."""
    for copy, written in copies.items():
        pattern = re.compile(rf"(?<![\w`]){re.escape(copy)}(?![\w`])")
        text = pattern.sub(written.replace("\\", "\\\\"), text)
    return text


def once(found: list[Diagnostic], copies: dict[str, str]) -> list[Diagnostic]:
    """``found`` with the copies named as written, each diagnostic once (a copy's repeats
    its relation's, at the same place)."""
    if not copies:
        return found
    out: list[Diagnostic] = []
    seen: set[tuple[str, int, int, str]] = set()
    for d in found:
        d = replace(d, message=written_names(d.message, copies))
        key = (d.code, d.span.start, d.span.end, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
