"""Watermarks: per-stream watermark nodes, the global watermark, and which watermark each
stateful operator uses for late rows and for eviction in a batch (reference §4, §5).

* A watermark node sees the rows of one stream *as they reach it* (after the filters Spark
  pushes below it) and, after each batch, moves to ``max(event time) - delay`` if higher.
  Each stream input of a union keeps a node of its own (``UnionNode``).
* The global watermark is ``min`` or ``max`` of the nodes (a node without data counts as 0),
  never moves back, and takes effect in the next batch.  The nodes of a stream the plan
  lists in ``Plan.shared_watermarks`` (Spark 4.0+: one ``nodeId`` for every read of the
  stream's watermark) count as one, at the highest of their watermarks.
* Which watermark each operator uses for late rows and for eviction is the plan's decision
  (``WatermarkUse`` on each join and aggregate node): the global one or the one propagated
  through the operators below (a join outputs ``min(state watermarks, input)``), as of this
  batch or the previous one.  This module only computes the values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...compiler.vocabulary.model import WatermarkChoice, WatermarkUse
from .spark_rules import observed_max_ms


@dataclass(slots=True)
class WatermarkNode:
    """Spark's ``EventTimeWatermarkExec`` on one join (or aggregate) input fed by a stream."""

    name: str
    stream: str
    time_index: int
    delay_ms: int
    watermark_ms: int | None = None  # None until the node has seen a row
    batch_max_ms: int | None = None

    def observe(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Rows reaching the node this batch (``spark_rules.observed_max_ms``)."""
        if rows:
            i = self.time_index
            self.observe_max(observed_max_ms([r[i] for r in rows]))

    def observe_max(self, top_ms: int | None) -> None:
        """A batch (or part of one) reaching the node whose observed maximum is ``top_ms``
        (None: no rows)."""
        if top_ms is not None and (self.batch_max_ms is None or top_ms > self.batch_max_ms):
            self.batch_max_ms = top_ms

    def end_batch(self) -> None:
        if self.batch_max_ms is not None:
            candidate = self.batch_max_ms - self.delay_ms
            if self.watermark_ms is None or candidate > self.watermark_ms:
                self.watermark_ms = candidate
        self.batch_max_ms = None


@dataclass(slots=True)
class WatermarkTracker:
    """The query's watermark nodes and its global watermark (``WatermarkTracker``)."""

    nodes: list[WatermarkNode]
    policy: str = "min"
    global_ms: int = 0
    # the streams whose nodes share one entry of Spark's tracker (``Plan.shared_watermarks``)
    shared: frozenset[str] = frozenset()

    @property
    def enabled(self) -> bool:
        return bool(self.nodes)

    def entries(self) -> list[int]:
        """The tracker's entries: one per node, except that the nodes of a shared stream are
        one entry, the highest of their watermarks (Spark 4.0+ keeps an entry's highest
        value: ``newWatermarkMs > prevWatermarkMs``); an entry without data counts as 0."""
        values: dict[tuple[bool, str | int], int | None] = {}
        for i, n in enumerate(self.nodes):
            key: tuple[bool, str | int] = (
                (True, n.stream) if n.stream in self.shared else (False, i)
            )
            mark, before = n.watermark_ms, values.get(key)
            values[key] = (
                before if mark is None or (before is not None and before >= mark) else mark
            )
        return [0 if v is None else v for v in values.values()]

    def end_batch(self) -> int:
        """Fold this batch's rows into the nodes; returns the (new) global watermark."""
        for node in self.nodes:
            node.end_batch()
        if self.nodes:
            values = self.entries()
            chosen = min(values) if self.policy == "min" else max(values)
            if chosen > self.global_ms:
                self.global_ms = chosen
        return self.global_ms

    def snapshot(self) -> dict[str, Any]:
        return {"global": self.global_ms, "nodes": [n.watermark_ms for n in self.nodes]}

    def restore(self, data: dict[str, Any]) -> None:
        self.global_ms = data["global"]
        for node, value in zip(self.nodes, data["nodes"], strict=True):
            node.watermark_ms = value


@dataclass(frozen=True, slots=True)
class OperatorInput:
    """One input of a stateful operator: a stream (with or without a watermark) or another
    operator of the query."""

    stream_has_watermark: bool | None = None  # set for a stream input
    operator: str | None = None  # set for an operator input


@dataclass(slots=True)
class OperatorLink:
    name: str
    use: WatermarkUse | None  # the plan's decision for this operator (None: a union's link)
    inputs: list[OperatorInput]
    output: Callable[[int], int]  # produceOutputWatermark(input)


def passes_through(input_ms: int) -> int:
    """A stateless node's output watermark: its input one (a union's input watermark is the
    minimum of its inputs' with a watermark, PropagateWatermarkSimulator's rule for a node
    that is neither stateful nor a watermark node)."""
    return input_ms


@dataclass
class WatermarkRules:
    """Which watermark each operator gets in a batch whose global watermark is W."""

    operators: list[OperatorLink]  # topological order
    _cache: dict[int, dict[str, int | None]] = field(default_factory=dict)
    _uses: dict[str, WatermarkUse] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._uses = {op.name: op.use for op in self.operators if op.use is not None}

    def eviction(self, name: str, global_ms: int) -> int | None:
        """Eviction watermark of a batch whose global watermark is ``global_ms``."""
        return self._choose(name, self._uses[name].eviction, 0, global_ms)

    def late(self, name: str, previous_ms: int, global_ms: int) -> int | None:
        """Late-events watermark of a batch with global W whose previous batch ran with
        ``previous_ms`` (0 before the first batch)."""
        return self._choose(name, self._uses[name].late_rows, previous_ms, global_ms)

    def _choose(
        self, name: str, choice: WatermarkChoice, previous_ms: int, global_ms: int
    ) -> int | None:
        value = previous_ms if choice.batch == "previous" else global_ms
        return value if choice.source == "global" else self._inputs(value)[name]

    def _inputs(self, global_ms: int) -> dict[str, int | None]:
        cached = self._cache.get(global_ms)
        if cached is not None:
            return cached
        if len(self._cache) > 64:
            self._cache.clear()
        result: dict[str, int | None] = {}
        if global_ms == 0:
            result = {op.name: global_ms for op in self.operators}
        else:
            outputs: dict[str, int | None] = {}
            for op in self.operators:
                values: list[int] = []
                for inp in op.inputs:
                    if inp.operator is not None:
                        out = outputs.get(inp.operator)
                        if out is not None:
                            values.append(out)
                    elif inp.stream_has_watermark:
                        values.append(global_ms)
                wm = min(values) if values else None
                result[op.name] = None if wm is None else max(wm, 0)
                outputs[op.name] = None if wm is None else op.output(wm)
        self._cache[global_ms] = result
        return result
