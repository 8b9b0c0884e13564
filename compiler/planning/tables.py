"""Static tables and stream-static joins: the planner's decisions about them.

A ``table`` statement is a relation Spark reads in batch (``spark.read``): it has no
watermark and is no streaming source.  A ``join`` of a stream (or of any streaming relation)
with a table is a stream-static join, which Spark plans as a batch join (a broadcast or
sort-merge join) run again in every micro-batch against the table as it is then: a stateless
operator, with no state for either side, no watermark needed and no eviction.

Spark allows it per join type and side, in ``UnsupportedOperationChecker.checkForStreaming``
(``case j @ Join(left, right, joinType, condition, _)``): an inner join with the table on
either side; LEFT OUTER and LEFT SEMI only with the stream on the left; LEFT ANTI only with
the table on the right; RIGHT OUTER only with the stream on the right; FULL OUTER never.
``refusal`` gives Spark's own message for the rest (E038), checked on Spark 4.3 by
``tests/integration/spark/test_stream_static_on_spark.py``.
"""

from __future__ import annotations

from typing import Literal

from sqlglot import exp

from ..binding.bound import BoundSpec, Join, Stream, Table
from ..diagnostics.diagnostics import Diagnostics
from ..vocabulary import annotate
from ..vocabulary.expr import conjuncts, find_all
from ..vocabulary.model import JOIN_KINDS, JoinType
from .plan import OutputColumn, StaticInput, StaticJoinNode, TableNode
from .split import not_null_columns, split_condition

StaticSide = Literal["left", "right"]

# Spark's messages (UnsupportedOperationChecker, _LEGACY_ERROR_TEMP_3102), by (join type, the
# table's side); a pair not here is allowed
_REFUSED: dict[tuple[JoinType, StaticSide], str] = {
    ("full_outer", "right"): "FullOuter joins with streaming DataFrames/Datasets on the left "
    "and a static DataFrame/Dataset on the right is not supported",
    ("full_outer", "left"): "FullOuter joins with streaming DataFrames/Datasets on the right "
    "and a static DataFrame/Dataset on the left is not supported",
    ("left_anti", "left"): "LeftAnti joins with a streaming DataFrame/Dataset on the right "
    "are not supported",
    ("left_outer", "left"): "LeftOuter join with a streaming DataFrame/Dataset on the right "
    "and a static DataFrame/Dataset on the left is not supported",
    ("left_semi", "left"): "LeftSemi join with a streaming DataFrame/Dataset on the right "
    "and a static DataFrame/Dataset on the left is not supported",
    ("right_outer", "right"): "RightOuter join with a streaming DataFrame/Dataset on the left "
    "and a static DataFrame/DataSet on the right not supported",
}

# what the plan says a stream-static join stores
NO_STATE = (
    "none: a stream-static join is stateless; the table is read whole in each micro-batch "
    "and never stored, the stream's rows are joined with it in their micro-batch and never "
    "stored, nothing is evicted and no row is dropped as late"
)


def refusal(how: JoinType, static_side: StaticSide) -> str | None:
    """Spark's reason for refusing a stream-static join of this type with the table on
    ``static_side``, or None when Spark runs it."""
    return _REFUSED.get((how, static_side))


def static_side(spec: BoundSpec, j: Join) -> StaticSide | None:
    """The side of ``j`` that is a table, if one is (the binder refuses two)."""
    if isinstance(spec.relation(j.left.relation), Table):
        return "left"
    if isinstance(spec.relation(j.right.relation), Table):
        return "right"
    return None


def plan_table(rel: Table) -> TableNode:
    return TableNode(rel.name, rel.columns, rel.source, rel.name_span)


def plan_static_join(
    spec: BoundSpec, j: Join, side: StaticSide, diags: Diagnostics
) -> StaticJoinNode:
    """The plan of a stream-static join; E038 with Spark's reason for a join type Spark
    refuses with the table on that side (still planned, so that what reads it is checked)."""
    reason = refusal(j.how, side)
    kind = JOIN_KINDS[j.how]
    if reason is not None:
        other: StaticSide = "right" if side == "left" else "left"
        allowed = [
            f"`{JOIN_KINDS[how].keyword}`"
            for how in JOIN_KINDS
            if refusal(how, side) is None and how != j.how
        ]
        diags.add(
            "E038",
            f"join `{j.name}`: Spark refuses a {kind.keyword} join of a stream with a static "
            f"table on the {side}: {reason}",
            j.how_span,
            f"{kind.keyword} with the table on the {side}",
            f"with the table on the {side} Spark runs "
            + ", ".join(allowed)
            + (
                f"; or put the stream on the {side} and the table on the {other}"
                if refusal(j.how, other) is None
                else ""
            ),
        )
    split = split_condition(conjuncts(j.condition), j.how)
    stream_side: StaticSide = "right" if side == "left" else "left"
    stream = j.right if side == "left" else j.left
    source = spec.relation(stream.relation)
    marked = source.watermark.column if isinstance(source, Stream) and source.watermark else None
    pushed = split.pushed_left if stream_side == "left" else split.pushed_right
    not_null: list[str] = []
    if stream_side in kind.infers_not_null:
        for part in (*split.key_conjuncts, *split.both, *split.left_only, *split.right_only,
                     *pushed):  # fmt: skip
            for col in not_null_columns(part):
                if annotate.side(col) == stream_side and col.name not in (*not_null, marked):
                    not_null.append(col.name)
    left, right = j.left, j.right
    inputs = {
        "left": StaticInput("left", left.relation, left.alias, left.columns, side == "left"),
        "right": StaticInput("right", right.relation, right.alias, right.columns, side == "right"),
    }
    return StaticJoinNode(
        name=j.name,
        join_type=j.how,
        static_side=side,
        left=inputs["left"],
        right=inputs["right"],
        keys=split.keys,
        condition=j.condition,
        output=tuple(OutputColumn(o.name, o.expr, o.type, o.event_time) for o in j.output),
        state=NO_STATE,
        name_span=j.name_span,
        filters_below_watermark=tuple(
            p for p in pushed if marked not in {c.name for c in find_all(p, exp.Column)}
        ),
        not_null_below_watermark=tuple(not_null),
    )
