"""What Spark knows of each relation's rows before a join reads it: its *constraints*.

Spark's ``InferFiltersFromConstraints`` starts a join's inference from its children's
``constraints`` (``QueryPlanConstraints``), which each plan node derives from the node
below: a Filter adds its conjuncts, a Project keeps those over the columns it passes on
(renamed as it renames them), a Deduplicate and an EventTimeWatermark keep their child's (a
``UnaryNode``'s), and a Union keeps those all its inputs share (``Union.validConstraints``,
by position; sjoin's union inputs have the same column names).  Each node then adds one
step of inference (``constraints = valid + inferAdditionalConstraints(valid)``), and keeps
only the deterministic predicates over its own output.  So a view's ``WHERE X.k IN (1, 2)``
under a dedup reaches the join above, which infers ``R.k IN (1, 2)`` for the other side
through ``L.k = R.k``: the right rows with ``k = 3`` never reach its state (seen on Spark
4.3.0: the parity scenario ``inferred_filter_from_a_view_below_a_dedup``).

Computed for every relation: streams and tables (none), views, dedups, unions, joins (per
join type as written, stream-static ones too) and aggregates (over their grouping columns).
One step of inference per statement, where Spark runs one per plan node (a join's Project
and Join are two): a chain of substitutions across both is not followed.  The predicates
are over each relation's output column names, annotated ``side="input"``; ``for_side``
re-annotates them for the join side that reads the relation.
"""

from __future__ import annotations

from sqlglot import exp

from ..binding.bound import Aggregate, BoundSpec, Dedup, Join, OutputItem, Union, View
from ..vocabulary import annotate
from ..vocabulary.expr import conjuncts, copy_tree, find_all, strip_parens
from ..vocabulary.types import SqlType
from .infer import ConstraintSet, infer_step, is_not_null_test, key
from .split import is_deterministic

Constraints = tuple[exp.Expression, ...]


def relation_constraints(spec: BoundSpec, budget: list[int]) -> dict[str, Constraints]:
    """Per relation, the predicates Spark's constraint propagation knows of its output rows
    (over its output column names); ``budget`` bounds the inference steps as the join's."""
    found: dict[str, Constraints] = {}
    for rel in spec.relations:
        if isinstance(rel, View):
            found[rel.name] = _view(rel, found.get(rel.input.relation, ()), budget)
        elif isinstance(rel, Dedup):
            found[rel.name] = found.get(rel.input.relation, ())
        elif isinstance(rel, Union):
            found[rel.name] = _shared([found.get(r, ()) for r in rel.relations])
        elif isinstance(rel, Join):
            found[rel.name] = _join(rel, found, budget)
        elif isinstance(rel, Aggregate):
            found[rel.name] = _aggregate(rel, found.get(rel.input.relation, ()), budget)
        else:
            found[rel.name] = ()
    return found


def _join(join: Join, found: dict[str, Constraints], budget: list[int]) -> Constraints:
    """A Project over a Join (and the Filter of its WHERE): Spark's ``Join.validConstraints``
    per join type (INNER: both inputs' and the condition's conjuncts; LEFT SEMI: the left
    input's and the condition's; LEFT OUTER and LEFT ANTI: the left input's; RIGHT OUTER:
    the right's; FULL OUTER: none), the WHERE's conjuncts, one step of inference, over the
    columns the SELECT passes on.  The type as written: where a filter makes Spark run the
    join narrower it knows more, never less."""
    sides = {}
    for side, inp in (("left", join.left), ("right", join.right)):
        types = {c.name: c.type for c in inp.columns}
        sides[side] = for_side(found.get(inp.relation, ()), side, inp.alias, types)
    on = conjuncts(join.condition)
    valid: list[exp.Expression] = {
        "inner": [*sides["left"], *sides["right"], *on],
        "left_semi": [*sides["left"], *on],
        "left_outer": [*sides["left"]],
        "left_anti": [*sides["left"]],
        "right_outer": [*sides["right"]],
    }.get(join.how, [])
    if join.where is not None:
        valid += conjuncts(join.where)
    return _projected(valid, join.output, budget)


def _aggregate(agg: Aggregate, below: Constraints, budget: list[int]) -> Constraints:
    """An Aggregate over its WHERE's Filter: the input's constraints and the WHERE's, over
    the grouping columns it outputs as they are (``Aggregate.validConstraints``)."""
    valid = [*below, *(conjuncts(agg.where) if agg.where is not None else [])]
    return _projected(valid, agg.output, budget)


def for_side(
    predicates: Constraints, side: str, alias: str, types: dict[str, SqlType]
) -> Constraints:
    """``predicates`` over a join side's columns: each column of side ``side``, qualified
    by ``alias``, typed as that input's column (what ``infer.key`` and the casts read)."""
    out = []
    for p in predicates:
        copy = copy_tree(p)
        for col in find_all(copy, exp.Column):
            col.set("table", exp.to_identifier(alias))
            annotate.set_column(
                col,
                side=side,
                event_time=annotate.is_event_time(col),
                kind=types.get(col.name),
            )
        out.append(copy)
    return tuple(out)


def _view(view: View, below: Constraints, budget: list[int]) -> Constraints:
    """A Project over a Filter: the input's constraints and the WHERE's conjuncts, over the
    columns the projection passes on (a plain column, under its output name), then one step
    of inference."""
    valid = [*below, *(conjuncts(view.where) if view.where is not None else [])]
    return _projected(valid, view.output, budget)


def _projected(
    valid: list[exp.Expression], output: tuple[OutputItem, ...], budget: list[int]
) -> Constraints:
    """The predicates ``valid`` of a node's input, one step of inference on, over the
    columns ``output`` passes on as they are (a plain column, under its output name)."""
    renamed: dict[tuple[str, str], str] = {}
    for item in output:
        plain = strip_parens(item.expr)
        if isinstance(plain, exp.Column):
            renamed.setdefault((annotate.side(plain), plain.name), item.name)
    usable = [p for p in valid if _usable(p)]
    if not usable:
        return ()
    closed = infer_step(ConstraintSet(usable), budget)
    kept = [p for p in (_renamed(p, renamed) for p in closed) if p is not None]
    return tuple(p for p in kept if _usable(p))


def _usable(p: exp.Expression) -> bool:
    """A predicate Spark keeps as a constraint that sjoin's inference reads: deterministic,
    over columns, no isnotnull (inferred apart) and no window column."""
    columns = list(find_all(p, exp.Column))
    return (
        bool(columns)
        and is_deterministic(p)
        and not is_not_null_test(p)
        and not any(annotate.window_of(c) for c in columns)
    )


def _renamed(p: exp.Expression, names: dict[tuple[str, str], str]) -> exp.Expression | None:
    """``p`` over the output names of the columns it reads, None when the projection drops
    one of them (Spark keeps only constraints over a node's output)."""
    if any((annotate.side(c), c.name) not in names for c in find_all(p, exp.Column)):
        return None
    copy = copy_tree(p)
    for col in find_all(copy, exp.Column):
        col.set("this", exp.to_identifier(names[(annotate.side(col), col.name)]))
        col.set("table", None)
        annotate.set_column(
            col,
            side="input",
            event_time=annotate.is_event_time(col),
            kind=annotate.sql_type(col),
        )
    return copy


def _shared(inputs: list[Constraints]) -> Constraints:
    """A union's constraints: those every input has (by identity as a constraint)."""
    if not inputs or any(not c for c in inputs):
        return ()
    common = set.intersection(*({key(p) for p in c} for c in inputs))
    return tuple(p for p in inputs[0] if key(p) in common)
