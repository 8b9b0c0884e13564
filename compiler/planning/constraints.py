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

Computed here for the relations above streams that sjoin models this way: streams and
tables (none), views, dedups and unions.  A join's, an aggregate's and a stream-static
join's output constraints are not computed (none is passed on): Spark's are their
children's and conditions' per join type, not yet modelled.  The predicates are over each
relation's output column names, annotated ``side="input"``; ``for_side`` re-annotates them
for the join side that reads the relation.
"""

from __future__ import annotations

from sqlglot import exp

from ..binding.bound import BoundSpec, Dedup, Union, View
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
        else:
            found[rel.name] = ()
    return found


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
    renamed: dict[str, str] = {}
    for item in view.output:
        plain = strip_parens(item.expr)
        if isinstance(plain, exp.Column):
            renamed.setdefault(plain.name, item.name)
    valid = [*below, *(conjuncts(view.where) if view.where is not None else [])]
    kept = [p for p in (_renamed(p, renamed) for p in valid if _usable(p)) if p is not None]
    if not kept:
        return ()
    return tuple(p for p in infer_step(ConstraintSet(kept), budget) if _usable(p))


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


def _renamed(p: exp.Expression, names: dict[str, str]) -> exp.Expression | None:
    """``p`` over the output names of the columns it reads, None when the projection drops
    one of them (Spark keeps only constraints over a node's output)."""
    if any(c.name not in names for c in find_all(p, exp.Column)):
        return None
    copy = copy_tree(p)
    for col in find_all(copy, exp.Column):
        col.set("this", exp.to_identifier(names[col.name]))
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
