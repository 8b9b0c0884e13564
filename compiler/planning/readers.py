"""The null-rejecting filters that the readers of a join add above it, as Spark's optimizer
carries them down to the join (issue 37): what makes ``EliminateOuterJoin`` run an outer join
as a narrower one although the join itself has no WHERE.

Two readers add such a filter:

- an aggregate grouping by ``window(time, ...)``: Spark's analyzer rule ``TimeWindowing``
  (``ResolveTimeWindows.scala``, ``TimeWindowResolution.buildTimeWindowRewrite``) puts
  ``Filter(isnotnull(time))`` under the aggregate (a tumbling window, and a sliding one whose
  duration is a multiple of its slide; another sliding window filters ``time >= window.start
  AND time < window.end``, which rejects a NULL time as well; ``SessionWindowing`` does the
  same for ``session_window``, which sjoin does not model); a window() of a window column
  (its window_time) adds no filter;
- a join that infers ``isnotnull`` of its input's columns (``InferFiltersFromConstraints``,
  per join type ``JoinKind.infers_not_null``): an INNER (or LEFT SEMI) stream-static or
  stream-stream join on a column of the join below, e.g. ``J.lk = D.k``.

``PushDownPredicates`` then moves the filter down through views' projections (a plain column
renamed), the inputs of a union, stream-static and stream-stream joins (for a column of the
side that reads the join), to the join whose output column it reads, and EliminateOuterJoin
runs it as INNER (or a FULL OUTER join as LEFT/RIGHT OUTER).  A filter on the column of a
watermark defined on a read stays above that EventTimeWatermark (PushPredicateThroughNonJoin),
a Deduplicate or an aggregate stops it, and a relation that is a query of its own (a sink, or
nothing reads it) runs unfiltered in that query.  A join converts only when every read of it,
in every query, rejects the column: one JoinNode holds the join for all of them.

Checked on Spark 4.3.0's optimized plans (tests/integration/spark/test_reader_filters_on_spark.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from ..binding.bound import Aggregate, BoundSpec, Join, Relation, Stream, Table, Union, View
from ..vocabulary import annotate
from ..vocabulary import types as t
from ..vocabulary.expr import conjuncts, find_all, strip_parens
from ..vocabulary.model import JOIN_KINDS
from ..vocabulary.source import Span
from .split import not_null_columns


@dataclass(frozen=True, slots=True)
class Rejection:
    """A reader's null-rejecting filter on one column: the relation that adds it, what it is
    (``"window"``: an aggregate's window() of it; ``"join"``: a join's inferred isnotnull),
    and the text that adds it (the window() call, the join's conjunct)."""

    reader: str
    how: str
    span: Span | None


Rejected = dict[str, Rejection]  # a relation's column -> the filter every read of it adds


def query_roots(spec: BoundSpec) -> set[str]:
    """The relations that head a query of their own: each sink's relation, and every
    operator nothing reads (as ``planner.query_roots`` says of the plan)."""
    read = {r for rel in spec.relations for _, r in rel.inputs}
    roots = {s.relation for s in spec.sinks}
    roots |= {
        rel.name
        for rel in spec.relations
        if not isinstance(rel, Stream | Table) and rel.name not in read
    }
    return roots


def rejected_columns(
    spec: BoundSpec, roots: set[str], scope: set[str] | None = None
) -> dict[str, Rejected]:
    """Per relation, the output columns that every read of it (by the relations in
    ``scope``, all when None) rejects when NULL, with the filter that does.  A relation in
    ``roots`` runs as its own query: nothing rejects its columns there."""
    relations = [r for r in spec.relations if scope is None or r.name in scope]
    reads: dict[str, list[tuple[Relation, str]]] = {}
    for rel in relations:
        for input_name, source in rel.inputs:
            reads.setdefault(source, []).append((rel, input_name))
    found: dict[str, Rejected] = {}
    for rel in reversed(relations):  # readers after what they read
        if rel.name in roots or rel.name not in reads:
            found[rel.name] = {}
            continue
        common: Rejected | None = None
        for reader, input_name in reads[rel.name]:
            mine = _rejected_by(spec, reader, input_name, found.get(reader.name, {}))
            common = mine if common is None else {c: r for c, r in common.items() if c in mine}
        found[rel.name] = common or {}
    return found


def _rejected_by(spec: BoundSpec, reader: Relation, input_name: str, above: Rejected) -> Rejected:
    """The columns of ``reader``'s input ``input_name`` that reach no output of ``reader``
    when NULL: its own filter's, and those of its columns rejected above it (``above``)
    that are plain columns of that input."""
    out: Rejected = {}
    if isinstance(reader, Aggregate):
        for key in reader.group_by:
            for call in find_all(key, exp.Anonymous):
                if annotate.is_call(call, "window") and call.expressions:
                    time = strip_parens(call.expressions[0])
                    # window() of a window column is its window_time: no filter (TimeWindowing)
                    if isinstance(time, exp.Column) and annotate.sql_type(time) != t.WINDOW:
                        out.setdefault(
                            time.name, Rejection(reader.name, "window", annotate.span(call))
                        )
    elif isinstance(reader, Join):
        if input_name in JOIN_KINDS[reader.how].infers_not_null:
            for part in conjuncts(reader.condition):
                for col in not_null_columns(part):
                    if annotate.side(col) == input_name:
                        out.setdefault(
                            col.name,
                            Rejection(reader.name, "join", annotate.span(part) or reader.span),
                        )
        for item in reader.output:
            plain = strip_parens(item.expr)
            if (
                item.name in above
                and isinstance(plain, exp.Column)
                and annotate.side(plain) == input_name
            ):
                out.setdefault(plain.name, above[item.name])
    elif isinstance(reader, View):
        for item in reader.output:
            plain = strip_parens(item.expr)
            if item.name in above and isinstance(plain, exp.Column):
                out.setdefault(plain.name, above[item.name])
    elif isinstance(reader, Union):
        out.update(above)  # the same column names in every input (checked by the binder)
    inp = getattr(reader, "input", None)
    if isinstance(reader, Join):
        inp = reader.left if input_name == "left" else reader.right
    if inp is not None and inp.watermark is not None:
        # a filter on the watermark's column stays above its EventTimeWatermark
        out.pop(inp.watermark.column, None)
    return out
