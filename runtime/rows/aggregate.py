"""The ``aggregate`` statement on rows: ``RowGroups``, the row storage of the streaming
aggregate's state, which ``aggregate_core.StreamingAggregate`` runs batch by batch
(``AggregateOperator``), folding each group with the accumulators of
``engine/aggregate_functions.py`` (Spark's aggregate functions, a value at a time).

Groups are keyed by the GROUP BY values (a sliding ``window()`` puts a row in several
groups); a group's state is one list per accumulator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from ...compiler.planning.plan import AggregateNode
from ...compiler.vocabulary import annotate
from ...compiler.vocabulary.functions import lookup
from ...compiler.vocabulary.sql import spark_sql
from ...compiler.vocabulary.types import SqlType
from ..engine.aggregate_core import Key, Late, StreamingAggregate
from ..engine.aggregate_functions import (
    Accumulator,
    aggregate_calls,
    output_functions,
)
from ..engine.batches import Batch, Rows
from ..engine.eval import (
    Layout,
    compile_expr,
    kind_of,
    window_arguments,
    window_spans,
)
from ..engine.index import EvictionIndex
from ..engine.late import Dropped
from ..engine.spark_rules import (
    watermark_passed,
)
from ..engine.watermark import WatermarkNode
from ..errors import UnsupportedExpression

Row = tuple[Any, ...]
GroupList = list[tuple[Key, list[list[Any]]]]  # groups with their accumulator states


def _is_window(node: exp.Expression) -> bool:
    return annotate.is_call(node, "window")


class RowGroups:
    """The row storage of an aggregate's state (``aggregate_core.AggregateStore``): each
    group's accumulator states in a dict by key (its order: the groups' creation), and an
    ``EvictionIndex`` of the groups' watermark key times."""

    def __init__(
        self,
        node: AggregateNode,
        input_columns: Sequence[tuple[str, str]],
        ansi: bool,
    ) -> None:
        layout = Layout.of(("input", list(input_columns)))
        self.key_functions: list[Callable[[Row], list[Any]]] = []
        for key in node.group_by:
            self.key_functions.append(self._key_function(key, layout, ansi))
        self.watermark_key = node.watermark_key_index
        self.accumulators: list[Accumulator] = []
        self.calls: list[exp.Expression] = []
        for out in node.output:
            for call in aggregate_calls(out.expr):
                if not any(call == seen for seen in self.calls):
                    self.calls.append(call)
                    self.accumulators.append(self._accumulator(call, layout, ansi))
        self.outputs = output_functions(node, self.calls, layout, ansi)
        self.groups_by_key: dict[Any, list[list[Any]]] = {}
        self.index = EvictionIndex()
        self.counter = 0

    @staticmethod
    def _key_function(
        key: exp.Expression, layout: Layout, ansi: bool
    ) -> Callable[[Row], list[Any]]:
        if _is_window(key):
            duration, slide, start = window_arguments(key)
            time = compile_expr(key.expressions[0], layout, ansi=ansi)

            def windows(row: Row) -> list[Any]:
                ts = time(row, None)
                return [] if ts is None else list(window_spans(ts, duration, slide, start))

            return windows
        g = compile_expr(key, layout, ansi=ansi)
        return lambda row: [g(row, None)]

    @staticmethod
    def _accumulator(call: exp.Expression, layout: Layout, ansi: bool) -> Accumulator:
        assert isinstance(call, exp.Anonymous)
        fn = lookup(str(annotate.function(call) or call.this).lower())
        assert fn is not None
        args = list(call.expressions)
        if fn.name == "count" and (not args or isinstance(args[0], exp.Star)):
            return Accumulator("count", None, "bigint", (), ansi)
        if len(args) != 1:
            raise UnsupportedExpression(f"`{spark_sql(call)}`: one argument expected")
        found = annotate.sql_type(args[0])
        shape = found.params if isinstance(found, SqlType) else ()
        return Accumulator(
            fn.name, compile_expr(args[0], layout, ansi=ansi), kind_of(args[0], layout), shape, ansi
        )

    def _key_time(self, key: tuple[Any, ...]) -> int | None:
        if self.watermark_key is None:
            return None
        value = key[self.watermark_key]
        if value is None:
            return None
        return int(value[1] if isinstance(value, tuple) else value)

    # ---------------------------------------------------------------- the store

    def observed(self, value: Batch, node: WatermarkNode | None) -> list[Row]:
        rows = value.to_rows()
        if node is not None:
            node.observe(rows)
        return rows

    def update(
        self,
        rows: Sequence[Row],
        late_us: int | None,
        keep: bool,
        grouped: list[tuple[Row, Key]] | None,
    ) -> tuple[GroupList, Late]:
        """A row at a time, each of its groups late-tested and then folded in (so the first
        error a batch raises is the first row's, as Spark's pipelined rows raise it)."""
        updated: dict[Any, list[list[Any]]] = {}
        dropped: set[Any] = set()
        late = Dropped(0, [], [], [])
        groups = self.groups_by_key
        for row in rows:
            combos: list[tuple[Any, ...]] = [()]
            for key_of in self.key_functions:
                values = key_of(row)
                combos = [(*c, v) for c in combos for v in values]
            for key in combos:
                t = self._key_time(key)
                if late_us is not None and watermark_passed(t, late_us):
                    dropped.add(key)
                    if keep:
                        late.rows.append(row)
                        late.times.append(t)
                        assert late.groups is not None
                        late.groups.append(key)
                    continue
                states = groups.get(key)
                if states is None:
                    states = groups[key] = [acc.new() for acc in self.accumulators]
                    if t is not None:
                        self.index.add(t, self.counter, key)
                        self.counter += 1
                for acc, state in zip(self.accumulators, states, strict=True):
                    acc.update(state, row)
                updated[key] = states
                if grouped is not None:
                    grouped.append((row, key))
        return list(updated.items()), Late(len(dropped), late if late.rows else None)

    def groups(self) -> GroupList:
        return list(self.groups_by_key.items())

    def evict(self, threshold_us: int) -> GroupList:
        evicted = []
        _, keys, _ = self.index.pop_upto(threshold_us)
        for key in keys:
            states = self.groups_by_key.pop(key, None)
            if states is not None:
                evicted.append((key, states))
        return evicted

    def count(self, groups: GroupList) -> int:
        return len(groups)

    def size(self) -> int:
        return len(self.groups_by_key)

    def emit(self, groups: GroupList) -> list[Row]:
        return [self._output(key, states) for key, states in groups]

    def _output(self, key: Key, states: list[list[Any]]) -> Row:
        group = key + tuple(acc.result(s) for acc, s in zip(self.accumulators, states, strict=True))
        return tuple(g(group, None) for g in self.outputs)

    def nothing(self) -> list[Row]:
        return []

    def group_keys(self, groups: GroupList) -> list[Key]:
        return [key for key, _ in groups]

    def batch(self, out: list[Row]) -> Batch:
        return Rows(out)

    # ---------------------------------------------------------------- checkpoint

    def snapshot(self) -> dict[str, Any]:
        return {
            "groups": [
                (key, [[sorted(s[0], key=repr)] if isinstance(s[0], set) else s for s in states])
                for key, states in self.groups_by_key.items()
            ],
            "counter": self.counter,
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.groups_by_key = {}
        self.index = EvictionIndex()
        self.counter = data["counter"]
        for stored, states in data["groups"]:
            # a NaN key is the trace's NaN object (``math.nan``), as the groups a run makes
            # hold it: a NaN read back from the snapshot is another object, and a dict
            # compares NaN keys by identity
            key = tuple(math.nan if type(v) is float and v != v else v for v in stored)
            restored = [
                [set(s[0])] if acc.name == "approx_count_distinct" else list(s)
                for acc, s in zip(self.accumulators, states, strict=True)
            ]
            self.groups_by_key[key] = restored
            t = self._key_time(key)
            if t is not None:
                self.index.add(t, self.counter, key)
                self.counter += 1


class AggregateOperator(StreamingAggregate[Sequence[Row], GroupList, list[Row]]):
    """One ``aggregate`` of the plan on the row storage (the reference engine's)."""

    store: RowGroups

    def __init__(
        self,
        node: AggregateNode,
        input_columns: Sequence[tuple[str, str]],
        ansi: bool,
    ) -> None:
        super().__init__(node, RowGroups(node, input_columns, ansi))
