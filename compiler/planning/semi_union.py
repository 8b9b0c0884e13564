"""A LEFT SEMI join over a union, as Spark's optimizer runs it: one join per union input.

Spark's ``PushDownLeftSemiAntiJoin`` ("LeftSemi/LeftAnti over Union") rewrites
``Join(Union(c1, c2, ...), right, LeftSemi, cond)`` into
``Union(Join(c1, right, LeftSemi, cond1), Join(c2, right, LeftSemi, cond2), ...)``, each
``cond_i`` the condition with the union's output columns replaced by child i's (by position).
The stream-stream join is planned after the optimizer, so Spark runs one
``StreamingSymmetricHashJoinExec`` per union input, each with its own state (its input's rows
on the left, every right row on the right) and its own watermark predicates (the child's
event-time column, not the union's), and unions their outputs (seen on Spark 4.3.0:
``tests/integration/spark/test_semi_over_union_on_spark.py``).

The rewrite is done here, on the bound model, before the planner plans anything: each such
join becomes a derived join per union input (``pushed_joins``) and a union of them under the
join's own name, which the planner then plans as any join and union (state, keys, filters,
watermarks), so the runtime, ``sjoin plan`` and the generated job all show Spark's operators.
The union node records the rewrite (``PushedJoin``).  Views between the join and the union
are copied per input (Spark pushes a deterministic Filter and Project through a Union first:
PushPredicateThroughNonJoin, PushProjectionThroughUnion), and so are window keys (each join
projects its input's window): both seen on Spark 4.3.0 too.

The generated job writes the joins and their union as the plan has them, so Spark reads the
right side once per join (a source per read, as for any relation read twice), where a job
written as the union and then the join reads it once: the same rows, watermark and state per
operator (the Spark test compares a job written so with the runtime, batch by batch).

Spark 3.5 pushes the join too (seen on Spark 3.5.9: the executed plan is a Union of one
``StreamingSymmetricHashJoin`` per union input, each with its own operator id and state), but
its global watermark is not the one sjoin computes.  Spark before 4.0 keys each watermark
node's value by the node's *index* among the ``EventTimeWatermarkExec`` nodes of the batch's
executed plan (``WatermarkTracker.updateWatermark``: ``zipWithIndex``, 0 for an index not
seen yet), and exchange reuse drops nodes from that list: an exchange whose subtree equals
an earlier one's in the batch becomes a ``ReusedExchange``, without its watermark node (the
right side's, where the joins read one subtree of it; and, in a batch where several inputs
have no rows, the empty ``LocalTableScan`` exchanges after the first alike).  The indices
then shift from batch to batch and a node's value lands on another node's index.  On 3.5.9
with ``l UNION ALL l2`` joined with ``r`` (rows of ``l`` and ``r``, then of ``l2`` only,
then of all three): batch 0's list is l, r, l2 (l2 without rows: 0), batch 1's is l, l2
(r's empty exchange reuses l's), so l2's maximum goes to r's index and l2's own index stays
0: the watermark is still 0 in batch 2, where Spark 4.3 (and sjoin) have 99 s.  Spark 4.0
keys the nodes by the logical node's id instead (SPARK-50046, "Use stable order of
EventTimeWatermark node to calculate watermark"), as sjoin does.  sjoin does not model the
index-keyed tracker: on Spark before 4.0 each derived join carries a note that Spark's global
watermark may differ (``derived_notes``), and the parity run holds the two scenarios where it
does as known differences on 3.5 (tests/integration/parity/test_parity.py's ``KNOWN_BY_VERSION``).

What is not rewritten, as Spark does not push the join there or sjoin has not checked it:

- a LEFT ANTI join: sjoin writes it as a LEFT OUTER join and a filter on the right side's
  marker (Spark refuses a stream-stream LeftAnti), and Spark's rule pushes only a LeftSemi or
  LeftAnti ``Join``; one left outer join over the union runs;
- a union on the right side (the rule matches a Union on the left only);
- a watermark defined where the join reads the union (``lu AS L watermark ...``): an
  EventTimeWatermark above the union, which the rule does not push through;
- a stream-static join (a table on a side): stateless, nothing to count per operator.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from ..binding.bound import BoundSpec, Input, Join, OutputItem, Relation, Table, Union, View
from ..vocabulary import annotate
from ..vocabulary.model import SparkVersion
from .plan import JoinNode, PlanNode, PushedJoin, UnionNode
from .split import is_deterministic

# before Spark 4.0 (SPARK-50046), the note on each join of a pushed LEFT SEMI join
INDEX_KEYED_WATERMARK = (
    "Spark before 4.0 keys its watermark nodes by their index in each batch's executed plan, "
    "which the reused exchanges of the joins' sides (the right side read by every join, and "
    "inputs without rows in a batch) shift: Spark's global watermark may differ from the "
    "one sjoin computes (SPARK-50046, fixed in 4.0)"
)


def pushed_joins(
    spec: BoundSpec, keep: frozenset[str] = frozenset()
) -> tuple[BoundSpec, dict[str, PushedJoin]]:
    """``spec`` with each LEFT SEMI join over a union (on its left side) replaced by one
    join per union input and a union of them under the join's name; and, per such union,
    what it stands for.  A spec without one is returned as it is.  The relations in
    ``keep`` (the one `--relation` runs) stay, though only the pushed joins read them."""
    by_name: dict[str, Relation] = {r.name: r for r in spec.relations}
    taken = set(by_name)
    pushed: dict[str, PushedJoin] = {}
    out: list[Relation] = []
    below: set[str] = set()
    for rel in spec.relations:
        out.extend(_expand(rel, by_name, taken, pushed, below))
    if not pushed:
        return spec, pushed
    # the unions and views below the pushed joins: those that only the pushed joins read are
    # no relations of Spark's plan any more (each union input is read by its own join), and
    # are left out, unless a sink or another relation reads them
    sinks = {s.relation for s in spec.sinks} | keep
    while True:
        read = {r for rel in out for _, r in rel.inputs} | sinks
        gone = {r.name for r in out if isinstance(r, Union | View) and r.name not in read} & below
        if not gone:
            return replace(spec, relations=tuple(out)), pushed
        out = [r for r in out if r.name not in gone]


def _expand(
    rel: Relation,
    by_name: dict[str, Relation],
    taken: set[str],
    pushed: dict[str, PushedJoin],
    below: set[str],
) -> list[Relation]:
    """``rel``, or the derived relations and the union it becomes: per union input, a copy
    of each view between the join and the union over that input (Spark pushes their Filter
    and Project through the Union first: PushPredicateThroughNonJoin,
    PushProjectionThroughUnion), then the join over it.  A derived join over a union input
    that is itself a union is expanded again, as Spark's rule applies again."""
    found = _pushable(rel, by_name)
    if found is None:
        return [rel]
    assert isinstance(rel, Join)
    union, views = found
    below.update([union.name, *(v.name for v in views)])
    inputs = union.relations
    derived: list[Relation] = []
    joins: list[str] = []
    for index, relation in enumerate(inputs):
        suffix = relation if inputs.count(relation) == 1 else f"{index}_{relation}"
        child = by_name[relation]
        for view in views:  # the lowest first
            copy = _view_over(view, _fresh(f"{view.name}_{suffix}", taken), child)
            derived.append(copy)
            by_name[copy.name] = child = copy
        name = _fresh(f"{rel.name}_{suffix}", taken)
        expanded = _expand(_join_over(rel, name, child), by_name, taken, pushed, below)
        derived.extend(expanded)
        joins.append(name)
        by_name[name] = expanded[-1]
    new = Union(
        rel.name,
        tuple(joins),
        by_name[joins[0]].columns,
        rel.span,
        rel.name_span,
        tuple(rel.left.span for _ in joins),
    )
    pushed[rel.name] = PushedJoin(rel.how, union.name)
    by_name[rel.name] = new
    return [*derived, new]


def _pushable(rel: Relation, by_name: dict[str, Relation]) -> tuple[Union, tuple[View, ...]] | None:
    """The union ``rel`` is a LEFT SEMI join over, which Spark pushes it below, and the
    views between them (the lowest first), if any."""
    if not isinstance(rel, Join) or rel.how != "left_semi" or rel.left.watermark is not None:
        return None
    if isinstance(by_name.get(rel.right.relation), Table):
        return None
    views: list[View] = []
    below = by_name.get(rel.left.relation)
    while isinstance(below, View) and below.input.watermark is None and _deterministic(below):
        views.insert(0, below)
        below = by_name.get(below.input.relation)
    if not isinstance(below, Union):
        return None
    if any(isinstance(by_name.get(r), Table) for r in below.relations):
        return None
    return below, tuple(views)


def _deterministic(view: View) -> bool:
    """Spark pushes a view's Filter and Project through a Union only when deterministic."""
    parts = [o.expr for o in view.output]
    if view.where is not None:
        parts.append(view.where)
    return all(is_deterministic(p) for p in parts)


def _fresh(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _marked(node: exp.Expression, side: str, child: Relation) -> exp.Expression:
    """A copy of ``node`` whose columns of input ``side`` read ``child`` (same names and
    types as the union's: the binder checked) with the child's event-time marks."""
    marks = {c.name: c.event_time for c in child.columns}
    copy = node.copy()
    for col in copy.find_all(exp.Column):
        if annotate.side(col) == side:
            annotate.set_column(
                col, side=side, event_time=marks.get(col.name, False), relation=child.name
            )
    return copy


def _items(items: tuple[OutputItem, ...], side: str, child: Relation) -> tuple[OutputItem, ...]:
    """Output items over ``child``: a bare column of ``side`` carries the child's mark."""
    marks = {c.name: c.event_time for c in child.columns}
    out = []
    for o in items:
        expr = _marked(o.expr, side, child)
        bare = isinstance(expr, exp.Column) and annotate.side(expr) == side
        out.append(
            replace(o, expr=expr, event_time=marks.get(expr.name, False) if bare else o.event_time)
        )
    return tuple(out)


def _input(inp: Input, child: Relation) -> Input:
    return Input(
        child.name, inp.alias, child.columns, inp.span, time_beside_window=inp.time_beside_window
    )


def _view_over(view: View, name: str, child: Relation) -> View:
    """``view`` named ``name`` over ``child`` (a union input, or a copy of a view over it)."""
    return replace(
        view,
        name=name,
        input=_input(view.input, child),
        where=_marked(view.where, "input", child) if view.where is not None else None,
        output=_items(view.output, "input", child),
    )


def _join_over(join: Join, name: str, child: Relation) -> Join:
    """``join`` named ``name`` with its left side reading ``child`` under the same alias:
    Spark's rewritten condition reads the child's attributes, and so their event-time marks
    (not the union's, which are its first input's)."""
    return replace(
        join,
        name=name,
        left=_input(join.left, child),
        condition=_marked(join.condition, "left", child),
        output=_items(join.output, "left", child),
        where=_marked(join.where, "left", child) if join.where is not None else None,
    )


def derived_notes(nodes: list[PlanNode], spark: SparkVersion) -> list[PlanNode]:
    """``nodes`` with a note on each join that stands for a written join over one input of
    a union (the inputs of a union with ``pushed_join``); before Spark 4.0, a second one:
    Spark's index-keyed watermark tracker, which sjoin does not model (module docstring)."""
    notes: dict[str, tuple[str, ...]] = {}
    for node in nodes:
        if isinstance(node, UnionNode) and node.pushed_join is not None:
            pushed = node.pushed_join
            for relation in node.relations:
                notes[relation] = (
                    f"`{node.name}` as Spark runs it over union input "
                    f"`{_input_of(nodes, relation)}` ({pushed.rule} pushed the LEFT SEMI join "
                    f"below union `{pushed.union}`)",
                )
                if not spark.at_least(4, 0):
                    notes[relation] += (INDEX_KEYED_WATERMARK,)
    return [
        replace(n, notes=(*n.notes, *notes[n.name]))
        if isinstance(n, JoinNode) and n.name in notes
        else n
        for n in nodes
    ]


def _input_of(nodes: list[PlanNode], name: str) -> str:
    """The left input of derived join ``name`` (a union for a nested union's input)."""
    for n in nodes:
        if n.name == name:
            return n.left.relation if isinstance(n, JoinNode) else n.name
    return name
