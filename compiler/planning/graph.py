"""Walks over a graph of named relations, each naming its inputs in order: the Plan's
(``plan.Plan``: ``closure``, ``upstream``, ``sources``, ``stateful_operators``, ``walk``) and
the bound model's (the planner's column pruning).  ``inputs(name)`` gives a relation's
inputs, left before right, or None when no relation has the name (it is left out).

Every walk is iterative, so a chain of 2,000 joins costs its size and no recursion limit,
and stops at a cycle (the binder rejects them; a walk over a hand-made cycle still ends).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Inputs = Callable[[str], Sequence[str] | None]


def preorder(root: str, inputs: Inputs, *, each_read: bool = False) -> list[str]:
    """``root`` and every relation below it, each before its inputs, left before right.

    Each relation once; with ``each_read``, once per read, as Spark expands a plan into a
    tree (a relation read twice is two subtrees: two sources, two stateful operators).  A
    relation reached again below itself (a cycle) is left out there."""
    out: list[str] = []
    seen: set[str] = set()
    on_path: set[str] = set()
    stack: list[tuple[str, bool]] = [(root, False)]
    while stack:
        name, leaving = stack.pop()
        if leaving:
            on_path.discard(name)
            continue
        if name in on_path or (not each_read and name in seen):
            continue
        below = inputs(name)
        if below is None:
            continue
        seen.add(name)
        out.append(name)
        on_path.add(name)
        stack.append((name, True))
        stack += [(b, False) for b in reversed(below)]
    return out


def postorder(root: str, inputs: Inputs) -> list[str]:
    """``root`` and every relation below it, each once and after its inputs (dependency
    order): a depth-first walk, left before right, ``root`` last.  A relation reached again
    while it is being walked (a cycle) is left out there."""
    out: list[str] = []
    entered: set[str] = set()
    stack: list[tuple[str, bool]] = [(root, False)]
    while stack:
        name, leaving = stack.pop()
        if leaving:
            out.append(name)
            continue
        if name in entered:
            continue
        below = inputs(name)
        if below is None:
            continue
        entered.add(name)
        stack.append((name, True))
        stack += [(b, False) for b in reversed(below)]
    return out
