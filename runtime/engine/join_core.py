"""The stream-stream join written once: Spark's ``StreamingSymmetricHashJoinExec`` pass order
(reference §1) over a state-table protocol, with a row storage (``join.RowJoinStorage``, the
reference engine) and a polars storage (``columnar/join.ColumnarJoinStorage``).

One batch (``JoinCore.process``): each side's late rows dropped (by the late-events
watermark), then the left pass and the right pass (LeftSemi from Spark 4.2: the right pass
first, removing each left row it matches, then the left pass), then the outer rows of the
preserved sides' evicted rows and the eviction of the other sides, then the metrics.  A pass
splits its rows by the pre-join filter (a preserved side's failing rows come out
null-padded), probes the other side's state, marks the stored rows it matched, emits, and
stores its rows under the append rule (SPARK-49829).

The storage owns the representation: a batch of rows, the pairs a probe finds (in (probe row,
stored row id) order, post-join condition applied), an output part (in probe order) and the
two sides' state.  ``JoinFacts`` derives once, from the plan's ``JoinNode``, what both storages
execute: the post-join predicate (the condition AND the constant filter), the time-range
column positions (the plan's ``time_range`` names columns, the probes need their indices),
each side's pre-join filter, append-rule behaviour and whether it keeps matched flags.

``JoinObserver`` is the core's observation points (``sjoin why``'s lineage,
``runtime/observe/lineage.py``): an operator given one reports what the core did, on the same path
as an unobserved run; an operator without one pays a test of ``None`` per pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from sqlglot import exp

from ...compiler.planning.plan import JoinNode, Side, StateRule
from .eval import Getter, Layout, compile_expr
from .late import Dropped
from .spark_rules import Skipped, rows_removed, state_threshold_us

LEFT, RIGHT = 0, 1

B = TypeVar("B")  # the rows of one side as the operator receives them
P = TypeVar("P")  # a batch after the pre-join filter
Q = TypeVar("Q")  # the pairs a probe finds
M = TypeVar("M")  # which rows of a batch matched
Part = TypeVar("Part")  # an output part
E = TypeVar("E")  # the rows an eviction removed


@dataclass(slots=True)
class JoinMetrics:
    num_rows_total: int = 0
    num_rows_updated: int = 0
    num_rows_removed: int = 0
    num_rows_dropped_by_watermark: int = 0
    side_rows: tuple[int, int] = (0, 0)  # state rows (left, right); Spark reports the sum


def side_layout(side: Side) -> list[tuple[str, str]]:
    """The columns of a side's rows as the join sees them: its input's columns, then the
    window columns it projects before the join."""
    return [(c.name, c.type.name) for c in side.columns] + [
        (w.name, "window") for w in side.windows
    ]


class JoinFacts:
    """What a join executes, derived once from its plan node."""

    def __init__(self, node: JoinNode, ansi: bool) -> None:
        self.node = node
        self.ansi = ansi
        self.semi = node.executed_as == "left_semi"
        self.anti = node.kind.drops_matched
        self.semi_right_first = self.semi and node.quirks.semi_right_first
        self.count_all_removals = node.quirks.count_all_removals
        self.preserved = (node.left.preserved, node.right.preserved)
        # which new rows of each side this batch's eviction would remove at once are not
        # stored (the append rule)
        self.skipped: tuple[Skipped, Skipped] = (
            node.left.evicted_rows_skipped,  # the planner's append rule
            node.right.evicted_rows_skipped,
        )
        # matched flags are read by outer-row emission (the preserved sides) and LeftSemi
        self.track_matched = (node.left.preserved or self.semi, node.right.preserved)
        self.rules: tuple[StateRule, StateRule] = (node.left.state, node.right.state)
        self.layouts = (side_layout(node.left), side_layout(node.right))
        self.one = (Layout.of(("left", self.layouts[0])), Layout.of(("right", self.layouts[1])))
        self.both = Layout.of(("left", self.layouts[0]), ("right", self.layouts[1]))
        self.pre: tuple[Getter | None, Getter | None] = (
            _compiled(node.left.pre_join_filter, self.one[0], ansi),
            _compiled(node.right.pre_join_filter, self.one[1], ansi),
        )
        self.post = _compiled(node.pair_filter, self.both, ansi)
        # a post-join condition that is exactly a time range (the plan says which) is checked
        # as such: (left column index, right column index, lower µs, upper µs)
        self.in_range: tuple[int, int, int, int] | None = None
        if node.time_range is not None:
            tr = node.time_range
            self.in_range = (
                [c for c, _ in self.layouts[0]].index(tr.left_column),
                [c for c, _ in self.layouts[1]].index(tr.right_column),
                tr.lower_us,
                tr.upper_us,
            )
        self.window_times = [compile_expr(e, self.both, ansi=ansi) for e in node.window_times]
        # the WHERE conjuncts Spark keeps in a Filter above the join: an output row (a
        # null-padded one too) that fails them is dropped before it is projected
        self.where_filter = _compiled(node.where_filter, self.both, ansi)


def _compiled(node: exp.Expression | None, layout: Layout, ansi: bool) -> Getter | None:
    return None if node is None else compile_expr(node, layout, ansi=ansi)


class JoinStorage(Protocol[B, P, Q, M, Part, E]):
    """The state table of both sides and the batch operations the core orders.

    Pairs are a probe's (probe row, stored row) matches in (probe row, stored id) order;
    ``claim`` keeps each stored row's first pair (of the stored rows not yet matched, when
    ``unmatched_only``).  Output parts are in probe order; ``ordered`` merges a pass's parts
    by probe row, ``result`` concatenates the batch's parts."""

    def height(self, rows: B) -> int: ...
    def has_event_time(self, side: int) -> bool: ...
    def split_late(self, side: int, rows: B, late_us: int) -> tuple[B, int]: ...
    def late_rows(self, side: int, rows: B, late_us: int) -> Dropped: ...
    def batch(self, side: int, rows: B) -> tuple[P, P | None]: ...
    def probe(self, side: int, batch: P, first: bool = False) -> Q: ...
    def claim(self, pairs: Q, unmatched_only: bool) -> Q: ...
    def matched(self, batch: P, pairs: Q) -> M: ...
    def unmatched(self, batch: P, matched: M) -> P: ...
    def mark(self, side: int, pairs: Q) -> None: ...
    def remove(self, side: int, batch: P, pairs: Q) -> int: ...
    def kept(
        self, side: int, batch: P, matched: M | None, skipped: Skipped, threshold: int
    ) -> tuple[P, M | None]: ...
    def append(self, side: int, batch: P, matched: M | None) -> int: ...
    def emit(self, pairs: Q, left: bool, right: bool) -> Part: ...
    def emit_alone(self, side: int, batch: P) -> Part: ...
    def ordered(self, parts: list[Part]) -> Part: ...
    def evict(self, side: int, threshold: int, ordered: bool) -> E: ...
    def evict_count(self, side: int, threshold: int) -> int: ...
    def evicted_count(self, evicted: E) -> int: ...
    def emit_unmatched(self, side: int, evicted: E) -> Part: ...
    def project(self, part: Part) -> Any: ...
    def result(self, parts: list[Any]) -> Any: ...
    def size(self, side: int) -> int: ...
    def snapshot(self, side: int) -> dict[str, Any]: ...
    def restore(self, side: int, data: dict[str, Any]) -> None: ...


class JoinObserver:
    """What the core reports when observed (``sjoin why``); every point does nothing here.
    The arguments are the storage's own batches, pairs and parts."""

    def batch(
        self, late_ms: int | None, evict_ms: int | None, thresholds: tuple[int | None, int | None]
    ) -> None:
        """A batch starts, with its watermarks and each side's state threshold."""

    def late(self, dropped: Dropped, late_ms: int | None) -> None:
        """Rows dropped as late."""

    def pre(self, side: int, passed: Any, failed: Any) -> None:
        """The pre-join filter's verdicts on a side's rows."""

    def matched(self, pairs: Any) -> None:
        """Pairs the join matched."""

    def stored(self, side: int, batch: Any, matched: Any) -> None:
        """Rows added to a side's state, with the matched flags they were stored with."""

    def removed(self, side: int, pairs: Any) -> None:
        """Stored rows of ``side`` removed at once (LeftSemi from Spark 4.2)."""

    def evicted(self, side: int, evicted: Any, threshold_us: int) -> None:
        """Rows a side's state evicted."""

    def output(self, part: Any, projected: Any) -> None:
        """An output part and the rows projected from it."""


class JoinCore(Generic[B, P, Q, M, Part, E]):
    """One ``join`` of the plan, run batch after batch over a storage."""

    def __init__(
        self,
        facts: JoinFacts,
        storage: JoinStorage[B, P, Q, M, Part, E],
        observer: JoinObserver | None,
    ) -> None:
        self.facts = facts
        self.node = facts.node
        self.storage = storage
        self.observer = observer
        self.left_rule, self.right_rule = facts.rules
        self.post = facts.post  # the post-join predicate (`why --with` tests pairs with it)
        self.late_rows: list[Dropped] | None = None  # kept only when asked (``late.py``)

    # ---------------------------------------------------------------- state

    def snapshot(self) -> dict[str, Any]:
        return {"left": self.storage.snapshot(LEFT), "right": self.storage.snapshot(RIGHT)}

    def restore(self, data: dict[str, Any]) -> None:
        self.storage.restore(LEFT, data["left"])
        self.storage.restore(RIGHT, data["right"])

    def has_state_predicate(self) -> bool:
        return self.left_rule.eviction != "never" or self.right_rule.eviction != "never"

    def state_watermark(self, input_ms: int) -> int:
        """Spark 3.5+'s output watermark: min(state watermarks, input watermark)."""
        values = [input_ms]
        for rule in (self.left_rule, self.right_rule):
            value = rule.state_watermark(input_ms)
            if value is not None:
                values.append(value)
        return min(values)

    # ---------------------------------------------------------------- one batch

    def process(self, left: B, right: B, late_ms: int | None, evict_ms: int | None) -> Any:
        """Run one micro-batch; ``late_ms`` / ``evict_ms`` are the operator's late-events and
        eviction watermarks (None without a watermark).  Returns (output, metrics)."""
        s, facts, observer = self.storage, self.facts, self.observer
        m = JoinMetrics()
        late_us = None if late_ms is None else late_ms * 1000
        thresholds = (
            state_threshold_us(self.left_rule, evict_ms),
            state_threshold_us(self.right_rule, evict_ms),
        )
        if observer is not None:
            observer.batch(late_ms, evict_ms, thresholds)
        out: list[Any] = []
        if facts.semi_right_first:
            self._pass(RIGHT, right, late_us, late_ms, thresholds[RIGHT], out, m)
            # (the left rows this order stores are never skipped by the append rule)
            self._pass(LEFT, left, late_us, late_ms, None, out, m)
        else:
            self._pass(LEFT, left, late_us, late_ms, thresholds[LEFT], out, m)
            self._pass(RIGHT, right, late_us, late_ms, thresholds[RIGHT], out, m)
        self._outer_and_cleanup(thresholds, out, m)
        m.side_rows = (s.size(LEFT), s.size(RIGHT))
        m.num_rows_total = m.side_rows[0] + m.side_rows[1]
        return s.result(out), m

    def _late(self, side: int, rows: B, late_us: int | None, late_ms: int | None, m: Any) -> B:
        """Side ``side``'s rows that are not late; the late ones are counted, and kept in
        ``late_rows`` when a run asks for them (``sjoin run --late-rows``)."""
        s = self.storage
        if late_us is None or not s.has_event_time(side):
            return rows
        kept, dropped = s.split_late(side, rows, late_us)
        if dropped:
            m.num_rows_dropped_by_watermark += dropped
            if self.late_rows is not None or self.observer is not None:
                late = s.late_rows(side, rows, late_us)
                if self.late_rows is not None:
                    self.late_rows.append(late)
                if self.observer is not None:
                    self.observer.late(late, late_ms)
        return kept

    def _pass(
        self,
        side: int,
        rows: B,
        late_us: int | None,
        late_ms: int | None,
        threshold: int | None,
        out: list[Any],
        m: JoinMetrics,
    ) -> None:
        """One side's rows: late filter, pre-join filter, probe of the other side's state,
        marks, output, then the rows stored.  LeftSemi's left pass emits a matched left row
        once (its first match) and stores only the unmatched; its right pass emits each stored
        left row at its first match; Spark 4.2's right-first order removes them instead."""
        s, facts, observer = self.storage, self.facts, self.observer
        if s.height(rows) == 0:  # no row to drop, probe with, mark or store: no output
            return
        batch, failed = s.batch(side, self._late(side, rows, late_us, late_ms, m))
        other = 1 - side
        parts: list[Part] = []
        if failed is not None:
            if observer is not None:
                observer.pre(side, batch, failed)
            if facts.preserved[side]:
                parts.append(s.emit_alone(side, failed))
        matched: M | None = None
        if not facts.semi:
            pairs = s.probe(side, batch)
            s.mark(other, pairs)
            if not facts.anti:
                parts.append(s.emit(pairs, True, True))
            if facts.track_matched[side] or facts.skipped[side] != "none":
                matched = s.matched(batch, pairs)
        elif side == LEFT:  # a left row is emitted once, at its first match
            pairs = s.probe(LEFT, batch, first=True)
            s.mark(RIGHT, pairs)
            parts.append(s.emit(pairs, True, False))
            batch = s.unmatched(batch, s.matched(batch, pairs))  # only those are stored
        else:  # each stored left row at the first right row it matches
            pairs = s.claim(s.probe(RIGHT, batch), not facts.semi_right_first)
            if facts.semi_right_first:
                m.num_rows_removed += s.remove(LEFT, batch, pairs)
                if observer is not None:
                    observer.removed(LEFT, pairs)
            else:
                s.mark(LEFT, pairs)
            parts.append(s.emit(pairs, True, False))
            matched = s.matched(batch, pairs)
        if observer is not None:
            observer.matched(pairs)
        if facts.skipped[side] != "none" and threshold is not None:
            batch, matched = s.kept(side, batch, matched, facts.skipped[side], threshold)
        m.num_rows_updated += s.append(side, batch, matched)
        if observer is not None:
            observer.stored(side, batch, matched)
        self._emit(s.ordered(parts), out)

    def _emit(self, part: Part, out: list[Any]) -> None:
        projected = self.storage.project(part)
        if self.observer is not None:
            self.observer.output(part, projected)
        out.append(projected)

    def _outer_and_cleanup(
        self, thresholds: tuple[int | None, int | None], out: list[Any], m: JoinMetrics
    ) -> None:
        """The preserved sides' evicted rows that never matched come out null-padded (left,
        then right, each in (time, id) order); then the other sides evict."""
        s, observer = self.storage, self.observer
        counted = 0
        uncounted = 0  # the rows an outer side evicts (spark_rules.rows_removed)
        for side in (LEFT, RIGHT):
            threshold = thresholds[side]
            if self.facts.preserved[side] and threshold is not None:
                gone = s.evict(side, threshold, True)
                if observer is not None:
                    observer.evicted(side, gone, threshold)
                uncounted += s.evicted_count(gone)
                self._emit(s.emit_unmatched(side, gone), out)
        for side in (LEFT, RIGHT):
            threshold = thresholds[side]
            if not self.facts.preserved[side] and threshold is not None:
                if observer is None:
                    counted += s.evict_count(side, threshold)
                else:  # the same rows, in the order the count pops them
                    gone = s.evict(side, threshold, False)
                    observer.evicted(side, gone, threshold)
                    counted += s.evicted_count(gone)
        m.num_rows_removed += rows_removed(counted, uncounted, self.facts.count_all_removals)


__all__ = [
    "LEFT",
    "RIGHT",
    "JoinCore",
    "JoinFacts",
    "JoinMetrics",
    "JoinObserver",
    "JoinStorage",
    "side_layout",
]
