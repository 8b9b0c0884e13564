"""Row lineage (`sjoin why`): the reference engine run with an observer that records what
happens to every row, opt-in, so that a normal run pays nothing.

``trace_run`` runs a plan over a trace on the reference engine whose queries
(``TracedQuery``) run observed operators: ``TracedJoin`` is the reference ``JoinOperator``
itself, with its decisions reported, never re-made, and each ``AggregateOperator`` runs as
it does in ``sjoin run`` with an ``AggregateLineage`` as its observer (the hooks of
``aggregate_core``: the groups each row was late for or folded into, each output's group).
The join's: each side's filters are the operator's own, applied a row at a
time; the late rows are those the operator keeps in ``late_rows`` (``late.py``); the pre-join
filter, the post-join condition and the projection are the operator's compiled functions,
wrapped to report each call; the state is the operator's ``SideState`` reporting each row
stored, evicted (with the threshold the operator computed by ``spark_rules``) or removed.
(The one change: the inline time-range check of the probes is left to the post-join
condition, which the plan says is exactly that range, ``JoinNode.time_range``.)

A row is known by its identity: each trace row is a tuple object of its own (``origin``: its
line), a window projected before a join makes a new tuple (``alias``: the row it came from),
and each output row is a new tuple whose ``Output`` names the rows it came from, so rows are
followed downstream through chains (join -> join, join -> aggregate).  Every row recorded is
kept alive by the ``Lineage``, so no identity is reused while it lasts.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..compiler.plan import AggregateNode, JoinNode, Plan
from .aggregate import AggregateOperator
from .batches import Batch, Rows
from .errors import UsageError
from .join import JoinMetrics, JoinOperator, SideState
from .late import Dropped
from .query import BatchResult, Engine, Query
from .spark_rules import state_threshold_us
from .trace import Trace, read_trace, schemas_of
from .watermark import WatermarkNode

Row = tuple[Any, ...]


@dataclass(slots=True)
class Event:
    """One thing that happened to one row in one operator and batch."""

    kind: str  # arrived, filtered, late, pre, stored, matched, evicted, removed, grouped
    query: str
    batch: int
    relation: str  # the operator
    input: int  # the operator's input the row came in on (0: left or an aggregate's input)
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Output:
    """One output row of an operator and where it came from."""

    index: int
    query: str
    batch: int
    relation: str
    row: Row
    left: Row | None  # a join's rows (None: the null-padded side); an aggregate's: None
    right: Row | None
    group: tuple[Any, ...] | None = None  # an aggregate's group


@dataclass(slots=True)
class BatchInfo:
    """What an operator's batch ran with."""

    watermark_ms: int | None  # the batch's (global) watermark
    late_ms: int | None  # the late-events watermark
    evict_ms: int | None  # the eviction watermark
    thresholds_us: tuple[int | None, int | None] = (None, None)  # each side's state threshold


class Lineage:
    """Everything ``trace_run`` recorded."""

    def __init__(self) -> None:
        self.events: dict[int, list[Event]] = {}
        self.outputs: list[Output] = []
        self.output_of: dict[int, Output] = {}  # id(output row) -> its Output
        self.origin: dict[int, int] = {}  # id(trace row) -> its line
        self.rows_at: dict[int, tuple[int, str, Row]] = {}  # line -> (trace batch, stream, row)
        self.alias: dict[int, Row] = {}  # id(windowed row) -> the row it was made of
        self.windowed: dict[int, list[Row]] = {}  # id(row) -> the windowed rows made of it
        self.batches: dict[tuple[str, int, str], BatchInfo] = {}  # (query, batch, operator)
        self.trace_batch: dict[tuple[str, int], int | None] = {}  # (query, batch) -> trace
        self.data: dict[tuple[str, int], bool] = {}
        self.results: list[BatchResult] = []
        self._keep: list[Any] = []
        self.query = ""
        self.batch = 0
        self.watermark_ms: int | None = None
        self.operators: dict[tuple[str, str], Any] = {}  # (query, join) -> its TracedJoin
        # (query, aggregate, group) -> the rows folded into the group, with their batches
        self.folded: dict[tuple[str, str, Any], list[tuple[int, Row]]] = {}

    def event(self, row: Row, kind: str, relation: str, side: int, **detail: Any) -> None:
        found = self.events.get(id(row))
        if found is None:
            found = self.events[id(row)] = []
            self._keep.append(row)
        found.append(Event(kind, self.query, self.batch, relation, side, detail))
        if kind == "grouped":
            key = (self.query, relation, detail["group"])
            self.folded.setdefault(key, []).append((self.batch, row))

    def output(
        self,
        relation: str,
        row: Row,
        left: Row | None,
        right: Row | None,
        group: tuple[Any, ...] | None = None,
    ) -> None:
        out = Output(len(self.outputs), self.query, self.batch, relation, row, left, right, group)
        self.outputs.append(out)
        self.output_of[id(row)] = out
        self._keep.append(row)

    def made_of(self, made: Row, row: Row) -> None:
        """``made`` (a row with its windows) was made of ``row``."""
        self.alias[id(made)] = row
        self.windowed.setdefault(id(row), []).append(made)
        self._keep.append(made)

    def events_of(self, row: Row) -> list[Event]:
        return self.events.get(id(row), [])

    # ------------------------------------------------------------------ following rows

    def descendants(self, row: Row) -> list[Row]:
        """``row``, the windowed rows made of it and every output row made of any of these,
        at any depth (an aggregate's output: of a group the row was folded into)."""
        found: list[Row] = [row]
        seen = {id(row)}
        groups: dict[tuple[str, str, Any], list[Output]] = {}
        for out in self.outputs:
            if out.group is not None:
                groups.setdefault((out.query, out.relation, out.group), []).append(out)
        by_parent: dict[int, list[Output]] = {}
        for out in self.outputs:
            for parent in (out.left, out.right):
                if parent is not None:
                    by_parent.setdefault(id(parent), []).append(out)
        i = 0
        while i < len(found):
            current = found[i]
            i += 1
            nxt: list[Row] = list(self.windowed.get(id(current), []))
            nxt += [o.row for o in by_parent.get(id(current), [])]
            for e in self.events_of(current):
                if e.kind == "grouped":
                    nxt += [
                        o.row
                        for o in groups.get((e.query, e.relation, e.detail["group"]), [])
                        if o.batch >= e.batch
                    ]
            for r in nxt:
                if id(r) not in seen:
                    seen.add(id(r))
                    found.append(r)
        return found

    def lines_of(self, row: Row) -> list[int]:
        """The trace lines a row came from (a join's output: both sides', recursively; an
        aggregate's: those of every row folded into its group up to the batch it came out
        in, the rows ``descendants`` follows to it)."""
        line = self.origin.get(id(row))
        if line is not None:
            return [line]
        parent = self.alias.get(id(row))
        if parent is not None:
            return self.lines_of(parent)
        out = self.output_of.get(id(row))
        if out is None:
            return []
        if out.group is not None:
            folded = self.folded.get((out.query, out.relation, out.group), [])
            return [n for batch, r in folded if batch <= out.batch for n in self.lines_of(r)]
        return [n for p in (out.left, out.right) if p is not None for n in self.lines_of(p)]


class TracedSideState(SideState):
    """A join side's state that reports each row stored, evicted and removed."""

    def __init__(self, base: SideState, report: Callable[..., None], side: int) -> None:
        super().__init__(base.time_of, base.track_matched)
        self.report = report
        self.side = side
        self.threshold: int | None = None

    def append(self, key: Any, row: Row, matched: bool) -> None:
        super().append(key, row, matched)
        self.report(row, "stored", self.side, matched=matched)

    def evict(self, threshold_us: int) -> list[tuple[Row, bool]]:
        gone = super().evict(threshold_us)
        for row, matched in gone:
            self.report(row, "evicted", self.side, threshold_us=threshold_us, matched=matched)
        return gone

    def evict_count(self, threshold_us: int) -> int:
        return len(self.evict(threshold_us))  # the same rows; only the order of the pops differs

    def remove(self, key: Any, ident: int) -> None:
        row = self.by_key[key][ident]
        super().remove(key, ident)
        self.report(row, "removed", self.side)


class TracedJoin(JoinOperator):
    """``JoinOperator`` reporting every row's life to a ``Lineage``."""

    def __init__(self, node: JoinNode, ansi: bool, log: Lineage) -> None:
        super().__init__(node, ansi)
        self.log = log
        name = node.name

        def report(row: Row, kind: str, side: int, **detail: Any) -> None:
            log.event(row, kind, name, side, **detail)

        self.report = report
        log.operators[(log.query, name)] = self
        self.original_post = self.post  # the condition alone, for `why --with`
        self.left = TracedSideState(self.left, report, 0)
        self.right = TracedSideState(self.right, report, 1)
        for side, attr in ((0, "pre_left"), (1, "pre_right")):
            pre = getattr(self, attr)
            if pre is not None:
                setattr(self, attr, self._reported_pre(pre, side))
        # every pair the probes find goes through the post-join condition (the plan's time
        # range is exactly that condition): a true one is a match
        post = self.post if self.post is not None else (lambda a, b: True)
        self.in_range = None

        def matched(a: Row, b: Row) -> Any:
            value = post(a, b)
            if value is True:
                report(a, "matched", 0, other=b)
                report(b, "matched", 1, other=a)
            return value

        self.post = matched
        project = self.project
        null_left, null_right = self.null_left, self.null_right

        def projected(a: Row, b: Row) -> Any:
            out = project(a, b)
            if out is not None:
                log.output(name, out, None if a is null_left else a, None if b is null_right else b)
            return out

        self.project = projected

    def _reported_pre(self, pre: Any, side: int) -> Any:
        report = self.report

        def reported(row: Row, other: Any) -> Any:
            value = pre(row, other)
            report(row, "pre", side, passed=value is True)
            return value

        return reported

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Rows, JoinMetrics]:
        """``JoinOperator.step`` a row at a time through each side's filters (the same
        filters: each keeps or drops a row on its own), reporting each row's fate."""
        log, report = self.log, self.report
        prepared = []
        for side, (value, side_input, node) in enumerate(
            zip(inputs, self.side_inputs, watermarks, strict=True)
        ):
            rows = value.to_rows()
            below = []
            for r in rows:
                report(r, "arrived", side)
                if side_input.filter_below([r]):
                    below.append(r)
                else:
                    report(r, "filtered", side, stage="below")
            if node is not None:
                node.observe(below)
            above = []
            for r in below:
                made = side_input.filter_above([r])
                if not made:
                    report(r, "filtered", side, stage="above")
                for m in made:
                    if m is not r:
                        log.made_of(m, r)
                    above.append(m)
            prepared.append(above)
        log.batches[(log.query, log.batch, self.node.name)] = BatchInfo(
            log.watermark_ms,
            late_ms,
            evict_ms,
            (
                state_threshold_us(self.left_rule, evict_ms),
                state_threshold_us(self.right_rule, evict_ms),
            ),
        )
        self.late_rows = []
        out, metrics = self.process(prepared[0], prepared[1], late_ms, evict_ms)
        for dropped in self.late_rows:
            for r, t in zip(dropped.rows, dropped.times, strict=True):
                report(r, "late", dropped.input, time_us=t, watermark_ms=late_ms)
        self.late_rows = None
        return Rows(out), metrics


class AggregateLineage:
    """An aggregate's observer (``aggregate_core.AggregateObserver``): each row's arrival,
    the groups the operator dropped it as late for or folded it into, and each output row's
    group, as the operator reports them."""

    def __init__(self, log: Lineage, name: str) -> None:
        self.log = log
        self.name = name

    def arrived(self, data: Sequence[Row], late_ms: int | None, evict_ms: int | None) -> None:
        log = self.log
        for r in data:
            log.event(r, "arrived", self.name, 0)
        log.batches[(log.query, log.batch, self.name)] = BatchInfo(
            log.watermark_ms, late_ms, evict_ms
        )

    def late(self, dropped: Dropped, late_ms: int | None) -> None:
        for r, t, g in zip(dropped.rows, dropped.times, dropped.groups or [], strict=True):
            self.log.event(r, "late", self.name, 0, time_us=t, watermark_ms=late_ms, group=g)

    def grouped(self, pairs: Sequence[tuple[Row, tuple[Any, ...]]]) -> None:
        for r, key in pairs:
            self.log.event(r, "grouped", self.name, 0, group=key)

    def emitted(self, out: list[Row], keys: Sequence[tuple[Any, ...]]) -> None:
        for row, key in zip(out, keys, strict=True):
            self.log.output(self.name, row, None, None, key)


class TracedQuery(Query):
    """A reference ``Query`` whose operators report to a ``Lineage`` (``attach``)."""

    def attach(self, log: Lineage) -> None:
        self.log = log
        log.query = self.root
        for name in list(self.operators):
            node = self.plan.node(name)
            if isinstance(node, JoinNode):
                self.operators[name] = TracedJoin(node, self.plan.ansi, log)
            else:
                op = self.operators[name]
                assert isinstance(node, AggregateNode) and isinstance(op, AggregateOperator)
                op.observer = AggregateLineage(log, name)

    def _run_batch(self, rows: Mapping[str, Batch] | None) -> BatchResult:
        log = self.log
        log.query, log.batch = self.root, self.batch_id
        log.watermark_ms = self.tracker.global_ms if self.tracker.enabled else None
        return super()._run_batch(rows)


class TracedEngine(Engine):
    query_class = TracedQuery


def trace_run(
    plan: Plan, trace: str | os.PathLike[str], relation: str | None = None
) -> tuple[Lineage, Trace]:
    """Run ``plan`` over a JSON-lines trace file on the observed reference engine (bad
    rows skipped: ``why`` names them when asked for one).  ``UsageError`` for a path that is
    not a regular file: a device such as /dev/zero has no end, and a FIFO has no lines to
    name (it is not even opened: that would wait for a writer)."""
    try:
        mode = os.stat(trace).st_mode
    except OSError as err:
        raise UsageError(f"cannot read trace {trace}: {err.strerror or err}") from None
    if not stat.S_ISREG(mode):
        raise UsageError(
            f"trace {trace} is not a regular file ({_kind(mode)}): `why` reads a JSON-lines "
            "file, whose rows it names by line"
        )
    schemas = schemas_of(plan)
    read = read_trace(trace, schemas, "skip", lines=True)
    log = Lineage()
    for batch in read.batches:
        for stream, rows in batch.rows.items():
            for row, line in zip(rows.to_rows(), batch.lines.get(stream, []), strict=True):
                log.origin[id(row)] = line
                log.rows_at[line] = (batch.value, stream, row)
    engine = TracedEngine(plan, relation)
    for q in engine.queries:
        assert isinstance(q, TracedQuery)
        q.attach(log)
    for result in engine.batches(read):
        log.trace_batch[(result.query, result.batch_id)] = result.trace_batch
        log.data[(result.query, result.batch_id)] = result.data
        log.results.append(result)
    return log, read


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a directory" if stat.S_ISDIR(mode) else "not a file"
