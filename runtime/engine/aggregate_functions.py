"""Spark's aggregate functions, a value at a time, and how an aggregate's output reads a
group: shared by the row storage (``runtime/rows/aggregate.py``) and the polars one
(``runtime/columnar/aggregate.py``), which folds the same accumulators where it does not
vectorise, so both storages compute each function one way."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from sqlglot import exp

from ...compiler.planning.plan import AggregateNode
from ...compiler.vocabulary import annotate
from ...compiler.vocabulary.functions import lookup
from ...compiler.vocabulary.types import SqlType, avg_type, sum_type
from .eval import Getter, Layout, compile_expr
from .spark_rules import (
    bigint_adder,
    decimal_adder,
    decimal_average,
    decimal_result,
    double_add,
    max_step,
    min_step,
)

Row = tuple[Any, ...]


class Accumulator:
    """One aggregate call: a mutable list state per group."""

    def __init__(
        self, name: str, arg: Getter | None, kind: str, shape: tuple[int, ...], ansi: bool
    ):
        self.name = name
        self.arg = arg
        self.kind = kind
        self.shape = shape
        self.ansi = ansi
        # a DECIMAL(p, s) argument: the sum's type and the result's (types.sum_type, avg_type)
        self.decimal: tuple[tuple[int, int], tuple[int, int]] | None = None
        if kind == "decimal" and name in ("sum", "avg"):
            argument = SqlType("decimal", shape if len(shape) == 2 else (10, 0))  # Spark's default
            total = sum_type(argument).params
            result = total if name == "sum" else avg_type(argument).params
            self.decimal = ((total[0], total[1]), (result[0], result[1]))
        # one step of a sum or avg (of a DECIMAL: exact, overflowing its sum's type)
        self.add: Callable[[Any, Any], Any] = (
            double_add
            if kind in ("double", "float")
            else decimal_adder(*self.decimal[0])
            if self.decimal is not None
            else bigint_adder(ansi, name)
        )
        # a group's first value: a DOUBLE sum adds it to 0.0 (Spark's Sum), a DECIMAL one is
        # cast to its sum's scale, the others keep it
        self.start: Callable[[Any], Any] = (
            partial(double_add, None)
            if kind in ("double", "float")
            else partial(decimal_adder(*self.decimal[0]), None)
            if self.decimal is not None
            else _same
        )

    def new(self) -> list[Any]:
        if self.name == "count":
            return [0]
        if self.name == "avg":
            return [None, 0]
        if self.name == "approx_count_distinct":
            return [set()]
        return [None]

    def update(self, state: list[Any], row: Row) -> None:
        name = self.name
        value = row if self.arg is None else self.arg(row, None)
        if name == "count":
            if value is not None:
                state[0] += 1
            return
        if value is None:
            return
        if name == "sum":
            state[0] = self.start(value) if state[0] is None else self.add(state[0], value)
        elif name == "avg":
            state[0] = self.start(value) if state[0] is None else self.add(state[0], value)
            state[1] += 1
        elif name == "min":
            state[0] = min_step(state[0], value)
        elif name == "max":
            state[0] = max_step(state[0], value)
        else:
            state[0].add(_hashable(value))

    def result(self, state: list[Any]) -> Any:
        name = self.name
        if name == "count":
            return state[0]
        if name == "avg":
            if state[1] == 0:
                return None
            if self.decimal is not None:
                precision, scale = self.decimal[1]
                average = decimal_average(state[0], state[1], scale)
                return decimal_result(average, precision, scale, self.ansi, name)
            return float(state[0]) / state[1]
        if name == "sum" and self.decimal is not None:
            return decimal_result(state[0], *self.decimal[1], self.ansi, name)
        if name == "sum" and state[0] is not None and self.kind in ("double", "float"):
            return float(state[0])
        if name == "approx_count_distinct":
            return len(state[0])
        return state[0]


def _same(value: Any) -> Any:
    return value


def _hashable(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def group_position(
    node: AggregateNode, calls: Sequence[exp.Expression], sub: exp.Expression
) -> int | None:
    """Where ``sub`` is in a group's tuple (its keys, then each aggregate call's result): a
    GROUP BY key's position, else a call's; None for any other expression."""
    for i, key in enumerate(node.group_by):
        if sub == key:
            return i
    for j, call in enumerate(calls):
        if sub == call:
            return len(node.group_by) + j
    return None


def output_functions(
    node: AggregateNode, calls: Sequence[exp.Expression], layout: Layout, ansi: bool
) -> list[Getter]:
    """Each output expression compiled over a group's tuple (``group_position``)."""

    def resolve(sub: exp.Expression) -> Getter | None:
        at = group_position(node, calls, sub)
        return None if at is None else slot(at)

    return [compile_expr(o.expr, layout, ansi=ansi, resolve=resolve) for o in node.output]


def slot(i: int) -> Getter:
    def slot(a: Any, b: Any) -> Any:
        return a[i]

    return slot


def aggregate_calls(node: exp.Expression) -> list[exp.Expression]:
    """The aggregate function calls in an output expression (outermost ones)."""
    found: list[exp.Expression] = []

    def visit(sub: exp.Expression) -> None:
        if isinstance(sub, exp.Anonymous):
            fn = lookup(str(annotate.function(sub) or sub.this).lower())
            if fn is not None and fn.aggregate:
                found.append(sub)
                return
        for child in sub.iter_expressions():
            visit(child)

    visit(node)
    return found
