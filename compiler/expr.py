"""Small walks over sqlglot expression trees that every stage shares (a leaf module: the
runtime and the back ends may use it; it decides nothing)."""

from __future__ import annotations

from sqlglot import exp


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
