"""Row lineage (`sjoin why`): the reference engine run with an observer that records what
happens to every row, opt-in, so that a normal run pays nothing.

``trace_run`` runs a plan over a trace on the reference engine whose queries
(``TracedQuery``) run observed operators.  A join is the reference ``JoinOperator`` itself,
given a ``JoinLineage`` observer (``join_core.JoinObserver``): the core reports what it did on
the path an unobserved run takes, decisions never re-made: each side's rows as its filters
kept them, the late rows, the pre-join filter's verdicts, the pairs it matched, the rows it
stored, removed and evicted (with the threshold it computed by ``spark_rules``) and each output
row with the rows it was made of.  Each ``AggregateOperator`` runs as it does in ``sjoin run``
with an ``AggregateLineage`` as its observer (the hooks of ``aggregate_core``: the groups each
row was late for or folded into, each output's group).

A row is known by its identity: each trace row is a tuple object of its own (``origin``: its
line), a window projected before a join makes a new tuple (``alias``: the row it came from),
and each output row is a new tuple whose ``Output`` names the rows it came from, so rows are
followed downstream through chains (join -> join, join -> aggregate).  Every row recorded is
kept alive by the ``Lineage``, so no identity is reused while it lasts.
"""

from __future__ import annotations

import os
import stat
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
    ViewNode,
)
from ...compiler.vocabulary.expr import conjuncts
from ..engine.batches import Batch
from ..engine.eval import compile_expr
from ..engine.late import Dropped
from ..engine.view import ViewOperator
from ..errors import UsageError
from ..io.trace import Trace, read_trace, schemas_of, table_schemas
from ..operators import Operator
from ..query import BatchResult, Engine, Query
from ..rows.aggregate import AggregateOperator
from ..rows.dedup import DedupOperator
from ..rows.join import JoinOperator, Pair, RowBatch, RowInputObserver

Row = tuple[Any, ...]


@dataclass(slots=True)
class Event:
    """One thing that happened to one row in one operator and batch."""

    # arrived, filtered, late, pre, stored, matched, evicted, removed, grouped, where (a
    # join's WHERE above it), kept, duplicate, suppressed (a dedup's)
    kind: str
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
    # the row itself, passed on unchanged (a union's or a dedup's output: ``left`` is it)
    passed: bool = False


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
        self.operators: dict[tuple[str, str], Any] = {}  # (query, join) -> its observed operator
        # (query, aggregate, group) -> the rows folded into the group, with their batches
        self.folded: dict[tuple[str, str, Any], list[tuple[int, Row]]] = {}
        # (query, batch, stream-static join) -> the table's rows it joined in that batch
        self.tables: dict[tuple[str, int, str], list[Row]] = {}

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

    def passed(self, relation: str, row: Row) -> None:
        """``row`` came out of ``relation`` as it went in (a union, a dedup): an output of
        that relation, though the row stays known as what it was (``output_of`` is not
        changed)."""
        out = Output(len(self.outputs), self.query, self.batch, relation, row, row, None)
        out.passed = True
        self.outputs.append(out)
        self._keep.append(row)

    def outputs_of(self, rows: Sequence[Row]) -> list[Output]:
        """The outputs that are one of ``rows``, in the order they came out: a row an
        operator made, and a row a union or a dedup passed on."""
        ids = {id(r) for r in rows}
        return [o for o in self.outputs if id(o.row) in ids]

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
            if out.passed:
                continue
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


class JoinLineage(RowInputObserver):
    """The observer of one ``JoinOperator`` (``join_core.JoinObserver``): reports every
    row's life to a ``Lineage``."""

    def __init__(self, node: JoinNode, log: Lineage) -> None:
        self.log = log
        self.node = node
        self.name = node.name
        self.window_times: list[Any] = []
        self.where: list[Any] = []
        self.null: tuple[Row, Row] = ((), ())  # the operator's null rows (``attach``)

    def attach(self, op: JoinOperator) -> None:
        self.null = op.row_storage.null
        self.log.operators[(self.log.query, self.name)] = op
        facts = op.facts
        self.window_times = facts.window_times
        where = self.node.where_filter
        # the WHERE's conjuncts above the join, each compiled as the operator compiles the
        # whole (to name the one that is not true; the verdict is the operator's)
        self.where = [
            compile_expr(c, facts.both, ansi=facts.ansi)
            for c in ([] if where is None else conjuncts(where))
        ]

    def report(self, row: Row, kind: str, side: int, **detail: Any) -> None:
        self.log.event(row, kind, self.name, side, **detail)

    def inputs(
        self,
        side: int,
        rows: Sequence[Row],
        below: Sequence[Row],
        kept: Sequence[Row],
        made: list[list[Row]],
        rejected: tuple[list[tuple[Row, int]], list[tuple[Row, int]]],
    ) -> None:
        """Each row's fate in the side's filters: the test that dropped it (below or above
        the watermark node, by its index in the plan's order), or, kept, the rows with
        windows it made (none: a NULL time, so no window)."""
        report, log = self.report, self.log
        for r in rows:
            report(r, "arrived", side)
        for stage, dropped in zip(("below", "above"), rejected, strict=True):
            for r, index in dropped:
                report(r, "filtered", side, stage=stage, index=index)
        for r, found in zip(kept, made, strict=True):
            if not found:
                report(r, "filtered", side, stage="window")
                continue
            for m in found:
                if m is not r:
                    log.made_of(m, r)

    def batch(
        self, late_ms: int | None, evict_ms: int | None, thresholds: tuple[int | None, int | None]
    ) -> None:
        log = self.log
        log.batches[(log.query, log.batch, self.name)] = BatchInfo(
            log.watermark_ms, late_ms, evict_ms, thresholds
        )

    def late(self, dropped: Dropped, late_ms: int | None) -> None:
        for r, t in zip(dropped.rows, dropped.times, strict=True):
            self.report(r, "late", dropped.input, time_us=t, watermark_ms=late_ms)

    def pre(self, side: int, passed: RowBatch, failed: RowBatch) -> None:
        for r in passed.rows:
            self.report(r, "pre", side, passed=True)
        for r in failed.rows:
            self.report(r, "pre", side, passed=False)

    def matched(self, pairs: list[Pair]) -> None:
        for _, _, a, b in pairs:
            self.report(a, "matched", 0, other=b)
            self.report(b, "matched", 1, other=a)

    def stored(self, side: int, batch: RowBatch, matched: set[int] | None) -> None:
        flags = matched or ()
        for p, r in zip(batch.pos, batch.rows, strict=True):
            self.report(r, "stored", side, matched=p in flags)

    def removed(self, side: int, pairs: list[Pair]) -> None:
        for _, _, a, b in pairs:
            self.report(a if side == 0 else b, "removed", side)

    def evicted(self, side: int, evicted: list[tuple[Row, bool]], threshold_us: int) -> None:
        for row, matched in evicted:
            self.report(row, "evicted", side, threshold_us=threshold_us, matched=matched)

    def output(self, part: list[Pair], projected: list[Row]) -> None:
        null_left, null_right = self.null
        for (_, _, a, b), out in zip(part, projected, strict=True):
            left = None if a is null_left else a
            right = None if b is null_right else b
            if out is not None:
                self.log.output(self.name, out, left, right)
                continue
            # no output row: an output window's time is NULL (Spark's TimeWindowing filter),
            # or the WHERE's Filter above the join is not true for the pair (the operator's
            # own verdict; the conjunct is named for the words)
            if any(time(a, b) is None for time in self.window_times):
                continue
            failed = next((i for i, f in enumerate(self.where) if f(a, b) is not True), 0)
            for side, r in ((0, left), (1, right)):
                if r is not None:
                    other = right if side == 0 else left
                    self.report(r, "where", side, index=failed, other=other)


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


class AggregateWhereLineage:
    """The observer of an aggregate's WHERE (``view.ViewObserver`` of the view operator the
    aggregate runs it by): the test that dropped each row, at the aggregate (the rows it
    keeps reach the aggregate as they are, and ``AggregateLineage`` sees them arrive)."""

    def __init__(self, log: Lineage, name: str) -> None:
        self.log = log
        self.name = name

    def arrived(self, rows: Sequence[Row]) -> None:
        """The aggregate's own observer tells the rows that pass."""

    def filtered(self, rows: Sequence[Row], kept: Sequence[Row], stage: str, index: int) -> None:
        passed = {id(r) for r in kept}
        for r in rows:
            if id(r) not in passed:
                self.log.event(r, "filtered", self.name, 0, stage=stage, index=index)

    def projected(self, rows: Sequence[Row], out: Sequence[Row]) -> None:
        """The kept rows pass unprojected."""


class DedupLineage:
    """A dedup's observer (``dedup_core.DedupObserver``): each row's arrival, the rows the
    dedup's late filter dropped, the rows that passed (their key now in state, by them) and
    those dropped as duplicates (of the row whose key is in state), and the keys evicted.
    The key is the store's own (``RowDedupStore.key_of``)."""

    def __init__(self, log: Lineage, op: DedupOperator) -> None:
        self.log = log
        self.name = op.node.name
        self.store = op.store
        self.holder: dict[Any, Row] = {}  # a key in state -> the row that put it there
        self.before: dict[Any, tuple[Row, int | None]] = {}

    def arrived(self, data: Any, late_ms: int | None, evict_ms: int | None) -> None:
        log = self.log
        for r in data:
            log.event(r, "arrived", self.name, 0)
        log.batches[(log.query, log.batch, self.name)] = BatchInfo(
            log.watermark_ms, late_ms, evict_ms
        )

    def late(self, dropped: Dropped, late_ms: int | None) -> None:
        for r, t in zip(dropped.rows, dropped.times, strict=True):
            self.log.event(r, "late", self.name, 0, time_us=t, watermark_ms=late_ms)

    def admitted(self, data: Any, out: Any) -> None:
        log, holder = self.log, self.holder
        passed = {id(r) for r in out}
        for r in data:
            key, values = self.store.key_of(r)
            if id(r) in passed:
                holder[key] = r
                log.event(r, "kept", self.name, 0, key=values)
                log.passed(self.name, r)
            else:
                first = holder[key]
                log.event(r, "duplicate", self.name, 0, key=values, other=first)
                log.event(first, "suppressed", self.name, 0, key=values, other=r)

    def evicting(self, evict_ms: int) -> None:
        self.before = dict(self.store.keys)

    def evicted(self, evict_ms: int) -> None:
        keys = self.store.keys
        for key, (values, when) in self.before.items():
            if key not in keys:
                row = self.holder.pop(key, None)
                if row is not None:
                    self.log.event(
                        row, "evicted", self.name, 0, key=values, time_us=when, evict_ms=evict_ms
                    )
        self.before = {}


class ViewLineage:
    """A view's observer (``view.ViewObserver``): each row's arrival, the test that dropped
    it (below or above the watermark node), and the output row each kept row became."""

    def __init__(self, log: Lineage, name: str) -> None:
        self.log = log
        self.name = name

    def arrived(self, rows: Sequence[Row]) -> None:
        log = self.log
        for r in rows:
            log.event(r, "arrived", self.name, 0)
        log.batches[(log.query, log.batch, self.name)] = BatchInfo(log.watermark_ms, None, None)

    def filtered(self, rows: Sequence[Row], kept: Sequence[Row], stage: str, index: int) -> None:
        passed = {id(r) for r in kept}
        for r in rows:
            if id(r) not in passed:
                self.log.event(r, "filtered", self.name, 0, stage=stage, index=index)

    def projected(self, rows: Sequence[Row], out: Sequence[Row]) -> None:
        for r, o in zip(rows, out, strict=True):
            self.log.output(self.name, o, r, None)


class UnionLineage:
    """A union's observer (``union.UnionObserver``): the input each row came through; it
    passes every row on as it is."""

    def __init__(self, log: Lineage, name: str) -> None:
        self.log = log
        self.name = name

    def came(self, index: int, rows: Sequence[Row]) -> None:
        log = self.log
        for r in rows:
            log.event(r, "arrived", self.name, index)
            log.passed(self.name, r)


class StaticJoinLineage:
    """A stream-static join's observer (``static_join.StaticJoinObserver``): each stream
    row's arrival with the table's rows of the micro-batch, the table rows it matched, and
    each output row with the rows it was made of."""

    def __init__(self, log: Lineage, node: StaticJoinNode) -> None:
        self.log = log
        self.name = node.name
        self.stream_at = 1 if node.static_side == "left" else 0

    def arrived(self, stream: Sequence[Row], table: Sequence[Row]) -> None:
        log = self.log
        for r in stream:
            log.event(r, "arrived", self.name, self.stream_at)
        log.tables[(log.query, log.batch, self.name)] = list(table)
        log.batches[(log.query, log.batch, self.name)] = BatchInfo(log.watermark_ms, None, None)

    def matched(self, row: Row, matches: Sequence[Row]) -> None:
        log = self.log
        log.event(row, "matched", self.name, self.stream_at, others=list(matches))
        for t in matches:
            log.event(t, "matched", self.name, 1 - self.stream_at, others=[row])

    def output(self, row: Row, table_row: Row | None, out: Row) -> None:
        left, right = (row, table_row) if self.stream_at == 0 else (table_row, row)
        self.log.output(self.name, out, left, right)


class TracedQuery(Query):
    """A reference ``Query`` whose operators report to a ``Lineage`` (``attach``): each
    operator of the run itself, given an observer (a join is built with its own)."""

    def attach(self, log: Lineage) -> None:
        self.log = log
        log.query = self.root
        for name, op in list(self.operators.items()):
            node = self.plan.node(name)
            assert node is not None, name
            self.operators[name] = _observed(node, op, self.plan.ansi, log)
        for name, union in self.unions.items():
            union.observer = UnionLineage(log, name)
        for static in self.static.values():
            static.observer = StaticJoinLineage(log, static.node)

    def _run_batch(self, rows: Mapping[str, Batch] | None) -> BatchResult:
        log = self.log
        log.query, log.batch = self.root, self.batch_id
        log.watermark_ms = self.tracker.global_ms if self.tracker.enabled else None
        return super()._run_batch(rows)


@singledispatch
def _observed(node: PlanNode, op: Operator, ansi: bool, log: Lineage) -> Operator:
    """Operator ``op`` of ``node``, reporting to ``log``: given an observer, or (a join)
    built again with its own."""
    raise TypeError(f"no lineage of a {type(node).__name__} ({node.name})")


@_observed.register
def _(node: JoinNode, op: Operator, ansi: bool, log: Lineage) -> Operator:
    observer = JoinLineage(node, log)
    join = JoinOperator(node, ansi, observer)
    observer.attach(join)
    return join


@_observed.register
def _(node: DedupNode, op: Operator, ansi: bool, log: Lineage) -> Operator:
    assert isinstance(op, DedupOperator)
    op.observer = DedupLineage(log, op)
    return op


@_observed.register
def _(node: ViewNode, op: Operator, ansi: bool, log: Lineage) -> Operator:
    assert isinstance(op, ViewOperator)
    op.observer = ViewLineage(log, node.name)
    return op


@_observed.register
def _(node: AggregateNode, op: Operator, ansi: bool, log: Lineage) -> Operator:
    assert isinstance(op, AggregateOperator)
    op.observer = AggregateLineage(log, node.name)
    if isinstance(op.where, ViewOperator):
        op.where.observer = AggregateWhereLineage(log, node.name)
    return op


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
    # the streams' rows and the static tables' (a table's rows in a batch: its version)
    schemas = {**schemas_of(plan), **table_schemas(plan)}
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
