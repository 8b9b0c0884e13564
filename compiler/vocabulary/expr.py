"""Small walks over sqlglot expression trees that every stage shares (a leaf module: the
runtime and the back ends may use it; it decides nothing)."""

from __future__ import annotations

from typing import TypeVar

from sqlglot import exp

E = TypeVar("E", bound=exp.Expr)


def strip_parens(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def conjuncts(node: exp.Expression) -> list[exp.Expression]:
    """Top-level AND terms (through parentheses), left to right, as Spark's
    splitConjunctivePredicates; without recursion, whatever the shape of the AND tree."""
    found = []
    stack = [node]
    while stack:
        part = strip_parens(stack.pop())
        if isinstance(part, exp.And):
            stack += (part.expression, part.this)
        else:
            found.append(part)
    return found


def nodes(node: exp.Expr) -> list[exp.Expr]:
    """Every node of ``node``'s tree, ``node`` first, in the breadth-first order of sqlglot's
    ``node.walk()``; a list built in one loop, about half the cost of sqlglot's nested
    generators, which the planner's walks over each of 100,000 conjuncts add up."""
    found = [node]
    append = found.append
    for sub in found:  # the list grows as it is read: breadth first
        for value in sub.args.values():
            if type(value) is list:
                for item in value:
                    if isinstance(item, exp.Expr):
                        append(item)
            elif isinstance(value, exp.Expr):
                append(value)
    return found


def find_all(node: exp.Expr, *types: type[E]) -> list[E]:
    """``node.find_all(*types)`` (same nodes, same order) as a list, through ``nodes``."""
    return [sub for sub in nodes(node) if isinstance(sub, types)]


def copy_tree(node: E) -> E:
    """A copy of ``node``'s tree, as ``node.copy()``, except that each node's annotations
    (sqlglot's ``meta``) are a new dict of the same values instead of a deep copy: they are
    spans, types, names and read-only trees, and deep-copying them was half the cost of
    each copy of a condition of 100,000 conjuncts."""
    root = node.__class__()
    stack: list[tuple[exp.Expr, exp.Expr]] = [(node, root)]
    while stack:
        original, copy = stack.pop()
        if original.comments is not None:
            copy.comments = list(original.comments)
        copy._type = original._type
        if original._meta is not None:
            copy._meta = dict(original._meta)
        for key, value in original.args.items():
            if isinstance(value, exp.Expr):
                child = value.__class__()
                stack.append((value, child))
                copy.set(key, child)
            elif type(value) is list:
                copy.args[key] = []
                for item in value:
                    if isinstance(item, exp.Expr):
                        child = item.__class__()
                        stack.append((item, child))
                        copy.append(key, child)
                    else:
                        copy.append(key, item)
            else:
                copy.args[key] = value
    return root
