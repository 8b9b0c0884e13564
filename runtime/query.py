"""Streaming queries over the plan, and the order in which their micro-batches run.

A ``Query`` is what one Spark streaming query would be: a root relation (a sink's, or one
nothing else reads) with every operator below it, its own watermark nodes, global
watermark and batch ids.  ``Engine`` runs the queries over a trace: for each trace batch,
each query that reads one of its streams runs a data batch, then the no-data batches Spark
would run after it (§5), before the next trace batch, as a driver that waits for
``processAllAvailable`` between steps sees them; for a backlog (``Trace.backlog``: a replayed
topic) the data batches run back to back, as Spark runs batches that were all waiting.
Its cursor and the queries' state are plain data, so a checkpoint can stop and resume it
between any two batches.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import singledispatch
from typing import Any, ClassVar

from ..compiler.planning.plan import (
    AggregateNode,
    DedupNode,
    InputWatermark,
    JoinNode,
    Plan,
    PlanNode,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..compiler.vocabulary.model import WatermarkChoice, WatermarkUse
from .engine.batches import Batch, Rows
from .engine.late import LateDrops
from .engine.union import UnionOperator
from .engine.watermark import (
    OperatorInput,
    OperatorLink,
    WatermarkNode,
    WatermarkRules,
    WatermarkTracker,
    passes_through,
)
from .errors import UsageError
from .io.trace import Trace, TraceBatch
from .operators import (
    STEP_KINDS,
    EngineName,
    Metrics,
    Operator,
    Placement,
    StepNode,
    fallbacks,
    make_operator,
    place,
    placement,
)
from .static_join import StaticJoinOperator, TableVersions

Row = tuple[Any, ...]
# a view's link in the watermark rules: it is asked for no late-row or eviction watermark
# (``Query._run_batch``), only for the watermark it passes on (its input's)
_NOW = WatermarkChoice("global", "this")
_STATELESS = WatermarkUse(_NOW, _NOW, "global")
MAX_NO_DATA_BATCHES = 16  # a safety net: one no-data batch always settles the watermarks


@dataclass(slots=True)
class OperatorReport:
    relation: str
    num_rows_total: int
    num_rows_updated: int
    num_rows_removed: int
    num_rows_dropped_by_watermark: int
    side_rows: tuple[int, int] | None = None  # a join's state rows (left, right)


@dataclass(slots=True)
class BatchResult:
    """One executed micro-batch of a query: output rows per relation (runtime values)."""

    query: str
    batch_id: int
    watermark_ms: int | None  # the batch's event-time watermark (None: no watermark)
    data: bool  # False for a no-data batch
    outputs: dict[str, Batch]  # relation -> its rows, or (the columnar engine) its frame
    operators: list[OperatorReport]
    # the trace's `batch` value of the step that ran it: a data batch's own trace batch, or
    # the trace batch after whose data batch a no-data batch ran (the engine's mapping from
    # trace batches to Spark batch ids; docs/testing.md, "Batch numbers")
    trace_batch: int | None = None
    # what each operator dropped as late, when the run keeps it (``late.py``; `--late-rows`)
    late: list[LateDrops] = field(default_factory=list)


def query_roots(plan: Plan, relation: str | None) -> list[str]:
    """The queries a run executes: the one a sink on ``relation`` would run, or, for every
    join and aggregate, one per sink and one per relation that nothing else reads."""
    operators = plan.written_operators
    if relation is not None:
        node = plan.node(relation)
        what = "not a relation of the spec" if node is None else _not_a_query(node)
        if what is not None:
            raise UsageError(
                f"cannot run `{relation}`: {what}; choose a join or aggregate: "
                + (", ".join(operators) or "(the spec has none)")
            )
        return [relation]
    return list(plan.query_roots)


@singledispatch
def _not_a_query(node: PlanNode) -> str | None:
    """Why no query can run relation ``node`` (None: one can): every relation a query
    computes can be run, only a source cannot."""
    return None


@_not_a_query.register
def _(node: StreamNode) -> str | None:
    return "a stream"


@_not_a_query.register
def _(node: TableNode) -> str | None:
    return "a static table"


# a stream-static join's link in the watermark propagation: it uses no watermark itself (no
# late rows, no eviction: never asked) and hands on its input's
_PASSES_ON = WatermarkUse(
    WatermarkChoice("global", "this"), WatermarkChoice("global", "this"), "global"
)


class Query:
    """One streaming query: its operators, watermark nodes and batch counter.  Each join and
    aggregate runs the operator ``operators.make_operator`` builds for ``engine`` from the
    operator's placement (``placements``: the engine's, decided once per run)."""

    engine: ClassVar[EngineName] = "reference"

    def __init__(
        self,
        plan: Plan,
        root: str,
        outputs: Sequence[str],
        placements: Mapping[str, Placement] | None = None,
    ) -> None:
        self.plan = plan
        self.root = root
        self.outputs = list(outputs)
        self.nodes = plan.closure(root)
        found = place(plan) if placements is None else placements
        self.streams = {n.name for n in self.nodes if isinstance(n, StreamNode)}
        # the static tables it reads and their rows in this batch (``run_batch``), and its
        # stream-static joins: stateless, run on rows by either engine (``static_join.py``)
        self.tables = {n.name for n in self.nodes if isinstance(n, TableNode)}
        self.table_rows: Mapping[str, Batch] = {}
        self.static: dict[str, StaticJoinOperator] = {}
        self.operators: dict[str, Operator] = {}
        self.unions: dict[str, UnionOperator] = {}
        self.inputs: dict[str, tuple[tuple[str, str], ...]] = {}
        self.node_of_input: dict[tuple[str, str], WatermarkNode] = {}
        links: list[OperatorLink] = []
        wm_nodes: list[WatermarkNode] = []
        # each node's step in a batch (``_run_batch``), chosen once here by its kind
        self.steps: list[tuple[PlanNode, Step]] = []
        for node in self.nodes:
            wired = _wire(node, self, found, wm_nodes)
            if wired is not None:  # None: a source, whose rows the batch gives
                link, step = wired
                links.append(link)
                self.steps.append((node, step))
        # the operators that run on the reference operator although the engine is columnar
        self.fallbacks = fallbacks(found, list(self.operators)) if self.engine == "columnar" else {}
        self.tracker = WatermarkTracker(
            wm_nodes,
            plan.settings.multiple_watermark_policy,
            shared=frozenset(plan.shared_watermarks),
        )
        self.rules = WatermarkRules(links)
        self.no_data_batches = plan.settings.no_data_micro_batches
        self.report_order = self._report_order()
        self.keep_late = False
        self.batch_id = 0
        self.previous_ms = 0  # the watermark the previous batch ran with (0 before batch 0)
        self.last_eviction: dict[str, int | None] = {}

    def _operator_link(
        self, node: StepNode, found: Mapping[str, Placement], wm_nodes: list[WatermarkNode]
    ) -> OperatorLink:
        """A join's, aggregate's, dedup's or view's operator (``operators.make_operator``),
        its inputs, each with the watermark node the plan puts on it, and its link."""
        op = make_operator(self.plan, node, self.engine, found[node.name])
        self.operators[node.name] = op
        self.inputs[node.name] = node.inputs
        marks = dict(node.input_watermarks)
        inputs = [
            self._input(node.name, name, self.plan.node(relation), wm_nodes, marks.get(name))
            for name, relation in self.inputs[node.name]
        ]
        return OperatorLink(node.name, _watermark_use(node), inputs, op.state_watermark)

    def _input(
        self,
        consumer: str,
        side: str,
        source: PlanNode | None,
        wm_nodes: list[WatermarkNode],
        mark: InputWatermark | None = None,
    ) -> OperatorInput:
        """How ``consumer``'s input ``side`` gets its watermark from relation ``source``:
        from a watermark node of its own (a stream's, or the plan's ``mark`` on an
        operator's output), none (a table, a stream without one), or from the operator."""
        assert source is not None
        watermarked = _watermarked_column(source, mark)
        if watermarked is None:
            return _unwatermarked_input(source)
        index, delay_ms = watermarked
        node = WatermarkNode(f"{consumer}.{side}", source.name, index, delay_ms)
        wm_nodes.append(node)
        self.node_of_input[(consumer, side)] = node
        return OperatorInput(stream_has_watermark=True)

    def _union_link(self, node: UnionNode, wm_nodes: list[WatermarkNode]) -> OperatorLink:
        """A union's inputs, each stream input with a watermark node of its own (Spark keeps
        each child's ``EventTimeWatermark`` below the ``Union``); its output watermark is
        its input one (``watermark.passes_through``)."""
        self.inputs[node.name] = node.inputs
        self.unions[node.name] = UnionOperator(node, self.plan.ansi)
        inputs = [
            self._input(node.name, name, self.plan.node(relation), wm_nodes)
            for name, relation in node.inputs
        ]
        return OperatorLink(node.name, None, inputs, passes_through)

    def _static_link(self, node: StaticJoinNode, wm_nodes: list[WatermarkNode]) -> OperatorLink:
        """A stream-static join's operator, and its place in the watermark propagation: a
        stateless node hands on the watermark of its inputs (the table's has none)."""
        self.static[node.name] = StaticJoinOperator(node, self.plan.ansi)
        self.inputs[node.name] = node.inputs
        inputs = [
            self._input(node.name, name, self.plan.node(relation), wm_nodes)
            for name, relation in node.inputs
        ]
        return OperatorLink(node.name, _PASSES_ON, inputs, lambda input_ms: input_ms)

    def _report_order(self) -> list[str]:
        """Spark lists stateOperators in plan pre-order from the root, left before right."""
        return [node.name for node in self.plan.stateful_operators(self.root)]

    def keep_late_rows(self) -> None:
        """Have every operator keep the rows it drops as late (``BatchResult.late``)."""
        self.keep_late = True
        for op in self.operators.values():
            op.late_rows = []

    def reads(self, batch: TraceBatch) -> bool:
        return any(stream in self.streams for stream in batch.rows)

    # ---------------------------------------------------------------- batches

    def run_batch(self, rows: Mapping[str, Batch] | None) -> BatchResult:
        """Run one micro-batch: a data batch with ``rows`` per stream, or a no-data batch.

        The cyclic garbage collector is paused while the batch runs: the operators create
        no reference cycles, and its scans of a large state cost about 40% of the time.
        """
        paused = gc.isenabled()
        gc.disable()
        try:
            return self._run_batch(rows)
        finally:
            if paused:
                gc.enable()

    def _run_batch(self, rows: Mapping[str, Batch] | None) -> BatchResult:
        watermark_ms = self.tracker.global_ms
        has_wm = self.tracker.enabled
        given = rows or {}
        produced: dict[str, Batch] = {s: given.get(s) or Rows([]) for s in self.streams}
        produced.update((t, self.table_rows.get(t) or Rows([])) for t in self.tables)
        reports: dict[str, OperatorReport] = {}
        dropped: list[LateDrops] = []
        now = _BatchState(watermark_ms, has_wm, produced, reports, dropped)
        for node, step in self.steps:
            step(self, node, now)
        self.tracker.end_batch()
        result = BatchResult(
            self.root,
            self.batch_id,
            watermark_ms if has_wm else None,
            rows is not None,
            {name: produced[name] for name in self.outputs},
            [reports[name] for name in self.report_order],
            late=dropped,
        )
        self.previous_ms = watermark_ms
        self.batch_id += 1
        return result

    def _static_step(self, node: StaticJoinNode, now: _BatchState) -> None:
        """A stream-static join's batch (``static_join.StaticJoinOperator``)."""
        produced = now.produced
        left, right = (produced[relation] for _, relation in node.inputs)
        mark = self.node_of_input.get((node.name, node.stream.name))
        produced[node.name] = self.static[node.name].step(left, right, mark)

    def _union_step(self, node: UnionNode, now: _BatchState) -> None:
        """A union's batch (``union.UnionOperator``): its inputs' rows in order, each input's
        observed by its watermark node."""
        inputs = self.inputs[node.name]
        now.produced[node.name] = self.unions[node.name].step(
            [now.produced[relation] for _, relation in inputs],
            [self.node_of_input.get((node.name, name)) for name, _ in inputs],
        )

    def _stateful_step(self, node: StepNode, now: _BatchState) -> None:
        """A join's, aggregate's or dedup's batch: run with the batch's late-row and
        eviction watermarks when the query has a watermark."""
        stateful = now.has_wm
        late = self.rules.late(node.name, self.previous_ms, now.watermark_ms) if stateful else None
        evict = self.rules.eviction(node.name, now.watermark_ms) if stateful else None
        self._operator_step(node, now, late, evict)

    def _view_step(self, node: StepNode, now: _BatchState) -> None:
        """A view's batch: stateless, asked for no late-row or eviction watermark."""
        self._operator_step(node, now, None, None)

    def _operator_step(
        self, node: StepNode, now: _BatchState, late: int | None, evict: int | None
    ) -> None:
        out, metrics = self._process(node, now.produced, late, evict)
        if self.keep_late:
            op = self.operators[node.name]
            if op.late_rows and late is not None:
                now.dropped.append(LateDrops(node.name, late, op.late_rows))
            op.late_rows = []
        now.produced[node.name] = out
        self.last_eviction[node.name] = evict
        now.reports[node.name] = OperatorReport(
            node.name,
            metrics.num_rows_total,
            metrics.num_rows_updated,
            metrics.num_rows_removed,
            metrics.num_rows_dropped_by_watermark,
            getattr(metrics, "side_rows", None),
        )

    def _process(
        self,
        node: StepNode,
        produced: Mapping[str, Batch],
        late: int | None,
        evict: int | None,
    ) -> tuple[Batch, Metrics]:
        """One operator's batch: its inputs, each with its watermark node, to its operator
        (which filters and observes them, ``Operator.step``)."""
        inputs = self.inputs[node.name]
        return self.operators[node.name].step(
            [produced[relation] for _, relation in inputs],
            [self.node_of_input.get((node.name, name)) for name, _ in inputs],
            late,
            evict,
        )

    def needs_no_data_batch(self) -> bool:
        """Whether Spark would now run a no-data batch (``shouldRunAnotherBatch``): some
        operator that evicts by the watermark would get a higher eviction watermark."""
        if not self.no_data_batches or not self.tracker.enabled or self.batch_id == 0:
            return False
        new_ms = self.tracker.global_ms
        for name, op in self.operators.items():
            current = self.last_eviction.get(name)
            upcoming = self.rules.eviction(name, new_ms)
            if current is None or upcoming is None or not op.has_state_predicate():
                continue
            if upcoming > current:
                return True
        return False

    # ---------------------------------------------------------------- checkpoint

    def snapshot(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "previous_ms": self.previous_ms,
            "last_eviction": dict(self.last_eviction),
            "watermarks": self.tracker.snapshot(),
            "operators": {name: op.snapshot() for name, op in self.operators.items()},
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.batch_id = data["batch_id"]
        self.previous_ms = data["previous_ms"]
        self.last_eviction = dict(data["last_eviction"])
        self.tracker.restore(data["watermarks"])
        for name, op in self.operators.items():
            op.restore(data["operators"][name])


@dataclass(slots=True)
class _BatchState:
    """What the steps of one micro-batch share (``Query._run_batch``)."""

    watermark_ms: int
    has_wm: bool
    produced: dict[str, Batch]  # relation -> its rows in this batch
    reports: dict[str, OperatorReport]
    dropped: list[LateDrops]


Step = Callable[[Query, Any, _BatchState], None]  # one node's part of a batch


@singledispatch
def _wire(
    node: PlanNode, query: Query, found: Mapping[str, Placement], wm_nodes: list[WatermarkNode]
) -> tuple[OperatorLink, Step] | None:
    """Node ``node``'s place in ``query``: its operator and link in the watermark
    propagation, and its step in a batch; None for a source, whose rows a batch gives."""
    raise TypeError(f"a query cannot run a {type(node).__name__} ({node.name})")


@_wire.register
def _(
    node: StreamNode | TableNode,
    query: Query,
    found: Mapping[str, Placement],
    wm_nodes: list[WatermarkNode],
) -> tuple[OperatorLink, Step] | None:
    return None


@_wire.register
def _(
    node: StaticJoinNode,
    query: Query,
    found: Mapping[str, Placement],
    wm_nodes: list[WatermarkNode],
) -> tuple[OperatorLink, Step] | None:
    return query._static_link(node, wm_nodes), Query._static_step


@_wire.register
def _(
    node: UnionNode, query: Query, found: Mapping[str, Placement], wm_nodes: list[WatermarkNode]
) -> tuple[OperatorLink, Step] | None:
    return query._union_link(node, wm_nodes), Query._union_step


@_wire.register
def _(
    node: JoinNode | AggregateNode | DedupNode,
    query: Query,
    found: Mapping[str, Placement],
    wm_nodes: list[WatermarkNode],
) -> tuple[OperatorLink, Step] | None:
    return query._operator_link(node, found, wm_nodes), Query._stateful_step


@_wire.register
def _(
    node: ViewNode, query: Query, found: Mapping[str, Placement], wm_nodes: list[WatermarkNode]
) -> tuple[OperatorLink, Step] | None:
    return query._operator_link(node, found, wm_nodes), Query._view_step


@singledispatch
def _watermark_use(node: PlanNode) -> WatermarkUse:
    """An operator's link's use of the watermarks (``WatermarkRules``)."""
    raise TypeError(f"no operator runs for a {type(node).__name__} ({node.name})")


@_watermark_use.register
def _(node: JoinNode | AggregateNode | DedupNode) -> WatermarkUse:
    return node.watermarks  # the plan's decision


@_watermark_use.register
def _(node: ViewNode) -> WatermarkUse:
    return _STATELESS


@singledispatch
def _watermarked_column(source: PlanNode, mark: InputWatermark | None) -> tuple[int, int] | None:
    """The column of ``source``'s rows a watermark node on its reader's input observes, and
    its delay: (column index, delay ms); None: the input has no watermark node."""
    raise TypeError(f"no relation of kind {type(source).__name__} ({source.name})")


@_watermarked_column.register
def _(
    source: JoinNode | AggregateNode | DedupNode | ViewNode | StaticJoinNode,
    mark: InputWatermark | None,
) -> tuple[int, int] | None:
    # the plan's watermark node on an operator's output (withWatermark on it): it sees that
    # output's rows and hands the operator the global watermark, as a stream's node does
    # (PropagateWatermarkSimulator: a node outputs the global)
    if mark is None:
        return None
    return [o.name for o in source.output].index(mark.column), mark.delay_ms


@_watermarked_column.register
def _(source: StreamNode, mark: InputWatermark | None) -> tuple[int, int] | None:
    if source.watermark_column is None or source.delay_ms is None:
        return None
    return [c.name for c in source.columns].index(source.watermark_column), source.delay_ms


@_watermarked_column.register
def _(source: TableNode | UnionNode, mark: InputWatermark | None) -> tuple[int, int] | None:
    return None


@singledispatch
def _unwatermarked_input(source: PlanNode) -> OperatorInput:
    """An input with no watermark node of its own: from a source, none; from a relation a
    query computes, that relation's output watermark."""
    raise TypeError(f"no relation of kind {type(source).__name__} ({source.name})")


@_unwatermarked_input.register
def _(source: StreamNode | TableNode) -> OperatorInput:
    return OperatorInput(stream_has_watermark=False)


@_unwatermarked_input.register
def _(
    source: JoinNode | AggregateNode | DedupNode | ViewNode | UnionNode | StaticJoinNode,
) -> OperatorInput:
    return OperatorInput(operator=source.name)


@dataclass
class Cursor:
    """Where the engine stands: trace batch, query, and whether that query's data batch of
    that trace batch has run."""

    trace_index: int = 0
    query_index: int = 0
    data_done: bool = False


@dataclass
class Engine:
    """The queries of a run, stepped over a trace batch by batch."""

    plan: Plan
    relation: str | None = None
    queries: list[Query] = field(init=False)
    cursor: Cursor = field(default_factory=Cursor)
    # each operator's placement (``operators.place``); worked out here when not given
    placements: Mapping[str, Placement] | None = None
    # static tables' rows given apart from the trace (``sjoin run --table NAME=PATH``): each
    # such table's rows before the trace gives it any (``TableVersions``)
    given_tables: Mapping[str, Batch] = field(default_factory=dict)
    query_class: ClassVar[type[Query]] = Query  # ColumnarEngine: ColumnarQuery

    def __post_init__(self) -> None:
        if self.placements is None:
            self.placements = place(self.plan)
        roots = query_roots(self.plan, self.relation)
        owner: dict[str, str] = {}
        for root in roots:  # as the query runs it (a copy may be in its shared closure only)
            for node in self.plan.for_query(root).closure(root):
                if _not_a_query(node) is None:  # a relation a query computes
                    owner.setdefault(node.name, root)
        for root in roots:
            owner[root] = root
        if self.relation is not None:
            owner = {self.relation: self.relation}
        # each query on the plan as it runs it: Spark plans each query on its own
        # (``Plan.apart``), its relations' placements decided for its nodes
        self.queries = []
        for root in roots:
            plan = self.plan.for_query(root)
            apart = [
                n
                for q in self.plan.apart
                if q.root == root
                for n in q.nodes
                if isinstance(n, STEP_KINDS)
            ]
            placed = {**self.placements, **{n.name: placement(plan, n) for n in apart}}
            outputs = [n for n, o in owner.items() if o == root]
            self.queries.append(self.query_class(plan, root, outputs, placed))

    @property
    def fallbacks(self) -> dict[str, str]:
        """Operator -> why it runs on the reference operator (a columnar engine's)."""
        found: dict[str, str] = {}
        for q in self.queries:
            found.update(q.fallbacks)
        return found

    def keep_late_rows(self) -> None:
        """Have every query keep the rows its operators drop as late (``--late-rows``)."""
        for q in self.queries:
            q.keep_late_rows()

    def output_relations(self) -> list[str]:
        return [name for q in self.queries for name in q.outputs]

    def batches(self, trace: Trace) -> Iterator[BatchResult]:
        """Every executed micro-batch from the cursor on; the cursor moves past each batch
        before it is yielded, so a snapshot taken then resumes right after it."""
        c = self.cursor
        tables = TableVersions(self.plan, trace, self.given_tables)
        while c.trace_index < len(trace.batches):
            batch = trace.batches[c.trace_index]
            while c.query_index < len(self.queries):
                query = self.queries[c.query_index]
                query.table_rows = tables.at(c.trace_index)
                if not c.data_done:
                    c.data_done = True
                    if query.reads(batch):
                        result = query.run_batch(batch.rows)
                        result.trace_batch = batch.value
                        yield result
                for _ in range(MAX_NO_DATA_BATCHES if self._settles(trace, query) else 0):
                    if not query.needs_no_data_batch():
                        break
                    result = query.run_batch(None)
                    result.trace_batch = batch.value
                    yield result
                c.query_index += 1
                c.data_done = False
            c.trace_index += 1
            c.query_index = 0

    def _settles(self, trace: Trace, query: Query) -> bool:
        """Whether ``query`` runs the no-data batches Spark would run after the cursor's
        trace batch: always when the trace is fed a batch at a time; for a backlog (every
        batch waiting when the query started), or before a batch that was waiting when this
        one ran (``TraceBatch.queued``), only when the query's sources have nothing in the
        next batch (Spark runs a data batch whenever one has data), and after the last
        batch unless the trigger is ``once`` (one batch, then Spark stops; ``available_now``
        runs the no-data batches its last data batch calls for, then stops: seen on Spark
        4.3, tests/integration/kafka/test_record_columns.py)."""
        following = self.cursor.trace_index + 1
        if following < len(trace.batches) and trace.batches[following].queued:
            return not query.reads(trace.batches[following])
        if not trace.backlog:
            return True
        if following < len(trace.batches):
            return not query.reads(trace.batches[following])
        return self.plan.settings.trigger != "once"

    def snapshot(self) -> dict[str, Any]:
        return {
            "cursor": (self.cursor.trace_index, self.cursor.query_index, self.cursor.data_done),
            "queries": {q.root: q.snapshot() for q in self.queries},
        }

    def restore(self, data: dict[str, Any]) -> None:
        ti, qi, done = data["cursor"]
        self.cursor = Cursor(ti, qi, done)
        for q in self.queries:
            q.restore(data["queries"][q.root])


class ColumnarQuery(Query):
    """A ``Query`` of the columnar engine: the same scheduling, with each join and aggregate
    that ``operators.place`` places columnar run on its polars storage and fed frames
    (``batches.Batch``: a frame or rows, each operator taking the form it runs on); an
    operator that is not columnar runs on rows (``Engine.fallbacks`` says which and why)."""

    engine = "columnar"


class ColumnarEngine(Engine):
    """The ``Engine`` with ``ColumnarQuery`` queries (`--engine columnar`)."""

    query_class = ColumnarQuery
