"""Late rows made visible (`sjoin run --late-rows FILE`): every row an operator drops as late
(its event time at or below the late-events watermark, ``spark_rules.watermark_passed``),
written as one JSON line with where it came from.

An operator keeps what it drops only when a run asks (its ``late_rows`` is a list, not None:
``Query.keep_late_rows``), as a ``Dropped`` per input and batch: the rows as the operator saw
them, the time its late test read, and (an aggregate) the group each row was late for.  A
normal run pays nothing.  ``LateRecords`` makes them into the lines, each row traced back to
its trace line: the trace batch's rows of that stream are matched by value, identical rows
of one batch in the order the trace gives them (rows equal in every value get the same
verdict, so which of them is which does not change a line's content).  A row that came from
another operator (a chain) has no line of its own: ``"line": null``; so has a row of a trace
without lines (Parquet, Delta, a replayed topic).

Per batch and operator, a join's lines are exactly its ``numRowsDroppedByWatermark``; an
aggregate's metric counts the late *groups* (Spark counts after the partial aggregation:
one row per group), so its lines (one per late input row and group) name the group, and
the distinct groups are the metric (``tests/runtime/engine/test_late_rows.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import singledispatch
from typing import Any

from ...compiler.planning.plan import (
    AggregateNode,
    DedupNode,
    JoinNode,
    Plan,
    PlanNode,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
    WindowColumn,
)

Row = tuple[Any, ...]


@dataclass(slots=True)
class Dropped:
    """The rows one input of an operator lost to the watermark in one batch."""

    input: int  # the operator's input (``Plan.inputs_of`` order: left 0, right 1)
    rows: list[Row]  # each row as the operator saw it (a join side's windows appended)
    times: list[int | None]  # the time (µs) the late test read: a window's end
    groups: list[tuple[Any, ...]] | None = None  # an aggregate's: the late group of each row


@dataclass(slots=True)
class LateDrops:
    """What one operator dropped as late in one batch, and the watermark it dropped it by."""

    relation: str
    watermark_ms: int
    drops: list[Dropped] = field(default_factory=list)


def _canonical(value: Any) -> Any:
    """A value as a dict key that tells apart what JSON tells apart: NaN equals NaN, and
    -0.0 is not 0.0 (a float is keyed by its hex form)."""
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, tuple):
        return tuple(_canonical(v) for v in value)
    if isinstance(value, dict):  # a window from a frame: {"start": .., "end": ..}
        return tuple(_canonical(v) for v in value.values())
    return value


def _window(value: Any) -> tuple[int, int] | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return int(value["start"]), int(value["end"])
    return int(value[0]), int(value[1])


class LateRecords:
    """The ``--late-rows`` lines of each executed batch."""

    def __init__(self, plan: Plan) -> None:
        from .values import json_converter

        self.plan = plan
        self._inputs: dict[str, tuple[tuple[str, str], ...]] = {}
        self._converters: dict[str, list[Any]] = {}
        self._names: dict[str, list[str]] = {}
        for node in plan.nodes:
            self._converters[node.name] = [json_converter(kind) for _, kind in node.layout]
            self._names[node.name] = [name for name, _ in node.layout]
            if node.inputs:
                self._inputs[node.name] = node.inputs

    def _json_row(self, relation: str, values: Sequence[Any]) -> dict[str, Any]:
        cells = {}
        for name, convert, value in zip(
            self._names[relation], self._converters[relation], values, strict=False
        ):
            cells[name] = value if value is None or convert is None else convert(value)
        return cells

    def records(
        self,
        late: Sequence[LateDrops],
        batch_id: int,
        trace_batch: int | None,
        data: Any,
        query: str | None,
    ) -> list[dict[str, Any]]:
        """The lines of one executed batch (``trace_batch``: the trace batch whose step ran
        it; ``data``: the ``TraceBatch`` of a data batch, whose rows and lines the stream rows
        are matched against; None for a no-data batch, whose inputs are other operators'
        rows)."""
        from .values import format_timestamp, format_watermark, json_converter

        out: list[dict[str, Any]] = []
        for drops in late:
            node = self.plan.node(drops.relation)
            assert node is not None, drops.relation
            inputs = self._inputs[drops.relation]
            group_types = _group_types(node)
            for dropped in drops.drops:
                input_name, source = inputs[dropped.input]
                width = len(self._names[source])
                lines = self._lines(source, data)
                taken: dict[Any, int] = {}
                windows = _input_windows(node, dropped.input)
                for i, row in enumerate(dropped.rows):
                    values = row[:width]
                    group = dropped.groups[i] if dropped.groups is not None else None
                    line = None
                    if lines is not None:
                        canon = _canonical(values)
                        found = lines.get(canon, ())
                        key = (canon, _canonical(row[width:]), _canonical(group))
                        nth = taken.get(key, 0)
                        taken[key] = nth + 1
                        line = found[nth] if nth < len(found) else None
                    t = dropped.times[i]
                    record: dict[str, Any] = {"batch": batch_id}
                    if query is not None:
                        record["query"] = query
                    record.update(
                        {
                            "trace_batch": trace_batch,
                            "relation": drops.relation,
                            "input": input_name,
                            "stream": source,
                            "line": line,
                            "event_time": None if t is None else format_timestamp(t),
                            "watermark": format_watermark(drops.watermark_ms),
                            "row": self._json_row(source, values),
                        }
                    )
                    if windows:
                        record["windows"] = {
                            w.name: None
                            if (span := _window(v)) is None
                            else {
                                "start": format_timestamp(span[0]),
                                "end": format_timestamp(span[1]),
                            }
                            for w, v in zip(windows, row[width:], strict=True)
                        }
                    if group is not None and group_types is not None:
                        cells = []
                        for kind, v in zip(group_types, group, strict=True):
                            convert = json_converter(kind)
                            cells.append(v if v is None or convert is None else convert(v))
                        record["group"] = cells
                    out.append(record)
        return out

    def _lines(self, source: str, trace_batch: Any) -> Mapping[Any, list[int]] | None:
        """A stream's rows of the trace batch (by value) -> their line numbers, in order.  A
        union's or a dedup's rows are its streams' rows passed on as they are (a union's in
        the order of its inputs), so they are traced to those streams' lines."""
        if trace_batch is None:
            return None
        streams = self._passed_from(source)
        if streams is None:
            return None
        found: dict[Any, list[int]] = {}
        for stream in streams:
            numbers = trace_batch.lines.get(stream)
            rows = trace_batch.rows.get(stream)
            if numbers is None or rows is None:
                continue
            if not isinstance(numbers, list):  # a column (the columnar bulk reader's)
                numbers = numbers.to_list()
            for row, number in zip(rows.to_rows(), numbers, strict=True):
                found.setdefault(_canonical(row), []).append(int(number))
        return found

    def _passed_from(self, source: str) -> list[str] | None:
        """The streams whose rows ``source``'s rows are, unchanged (itself for a stream;
        through unions and dedups; None: rows an operator made)."""
        found: list[str] = []
        todo = [source]
        while todo:
            node = self.plan.node(todo.pop(0))
            origin = None if node is None else _rows_from(node)
            if origin is None:
                return None
            if isinstance(origin, str):
                found.append(origin)
            else:
                todo[:0] = origin
        return found


@singledispatch
def _input_windows(node: PlanNode, index: int) -> tuple[WindowColumn, ...]:
    """The window columns a late row of input ``index`` carries after its input's columns
    (``LateRows.windows``): a join side's; none for another operator."""
    raise TypeError(f"no late rows of a {type(node).__name__} ({node.name})")


@_input_windows.register
def _(node: JoinNode, index: int) -> tuple[WindowColumn, ...]:
    return (node.left if index == 0 else node.right).windows


@_input_windows.register
def _(node: AggregateNode | DedupNode, index: int) -> tuple[WindowColumn, ...]:
    return ()


@singledispatch
def _group_types(node: PlanNode) -> tuple[str, ...] | None:
    """The SQL types of the group a late row was dropped from (an aggregate's grouping
    keys); None: the operator drops rows of no group."""
    raise TypeError(f"no late rows of a {type(node).__name__} ({node.name})")


@_group_types.register
def _(node: AggregateNode) -> tuple[str, ...] | None:
    return tuple(kind.name for kind in node.key_types)


@_group_types.register
def _(node: JoinNode | DedupNode) -> tuple[str, ...] | None:
    return None


@singledispatch
def _rows_from(node: PlanNode) -> str | tuple[str, ...] | None:
    """Where relation ``node``'s rows come from unchanged: a stream's own name; the
    relations a union or a dedup passes on as they are; None: rows an operator made."""
    raise TypeError(f"no relation of kind {type(node).__name__} ({node.name})")


@_rows_from.register
def _(node: StreamNode) -> str | tuple[str, ...] | None:
    return node.name


@_rows_from.register
def _(node: UnionNode | DedupNode) -> str | tuple[str, ...] | None:
    return tuple(relation for _, relation in node.inputs)


@_rows_from.register
def _(
    node: JoinNode | AggregateNode | ViewNode | TableNode | StaticJoinNode,
) -> str | tuple[str, ...] | None:
    return None
