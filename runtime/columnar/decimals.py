"""Which DECIMAL values the columnar engine holds exactly, decided from the Plan alone and
without polars (``operators.placement`` asks before polars is imported).

A DECIMAL column is a polars ``Decimal(38, s)`` column (``frames.dtype_of``): every value at
one scale ``s``, the scale of the column's SQL type.  The reference runtime's values are
Python ``Decimal``s whose scale is what the evaluator leaves (``eval.py``: arithmetic rounds
to its result type's scale, ``types.arith_type``; a cast to DECIMAL(p, s) rounds to s; a
CASE, coalesce, nvl, if, greatest or least casts each branch to its type,
``types.common_type``; but one whose DECIMAL type has no (precision, scale) keeps its
argument's scale), which is not always the scale the plan's type says.  So an operator runs
columnar only when every DECIMAL value it reads or writes is known, from the expression alone,
to be at its column's scale with at most 38 digits: ``value_shape`` derives the (precision,
scale) of an expression's DECIMAL values by the evaluator's own rules, and
``decimal_unsupported`` names the first output (of the operator, or of a relation it reads)
where that fails, so that only such an operator, not every DECIMAL, runs on the reference
operator.
"""

from __future__ import annotations

from sqlglot import exp

from ...compiler.planning.plan import (
    AggregateNode,
    DedupNode,
    JoinNode,
    OutputColumn,
    Plan,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ...compiler.vocabulary import annotate
from ..engine.eval import decimal_arith_shape, decimal_shape, kind_of

Shape = tuple[int, int]  # (precision, scale) of an expression's DECIMAL values
MAX_DIGITS = 38  # what a polars Decimal (and Spark's DECIMAL) holds

_FLOATS = ("double", "float")
_AGGREGATES = ("sum", "avg", "min", "max")


# nodes whose value is never a DECIMAL: truth values, intervals, a window's fields
_NEVER_DECIMAL = (
    exp.Predicate,
    exp.Connector,
    exp.Not,
    exp.Is,
    exp.In,
    exp.Between,
    exp.Like,
    exp.Interval,
    exp.Dot,
)
# functions of DECIMAL arguments whose value is another type (eval.py converts it)
_NOT_DECIMAL_FUNCTIONS = frozenset(
    {"floor", "ceil", "sqrt", "signum", "concat", "lpad", "rpad", "length", "count"}
    | {"timestamp_seconds", "timestamp_millis", "approx_count_distinct"}
)

# functions whose value is one of their arguments', each cast by eval.py to the call's type
# (``types.common_type``: DECIMALs widen to ``types.wider_decimal_type``)
_ONE_OF_ITS_ARGUMENTS = frozenset({"coalesce", "nvl", "if", "greatest", "least"})


def _function(node: exp.Anonymous) -> str:
    return (annotate.function(node) or node.name).lower()


class Unfixed(Exception):
    """The scale of an expression's DECIMAL values is not fixed by the expression (the
    message says where)."""


def _decimal_kind(node: exp.Expression) -> bool:
    return kind_of(node) == "decimal"


def _involves_decimal(node: exp.Expression) -> bool:
    return any(isinstance(sub, exp.Expression) and _decimal_kind(sub) for sub in node.walk())


def _arith(node: exp.Expression) -> Shape | None:
    ka, kb, kr = kind_of(node.this), kind_of(node.expression), kind_of(node)
    if {ka, kb} & {"timestamp", "date", "interval"}:
        return None
    divides = isinstance(node, exp.Div)
    # the result's kind as eval._arith picks it: a quotient of numbers is a DOUBLE, but of
    # DECIMALs (and integers) a DECIMAL
    if divides and kr != "decimal" and "decimal" not in (ka, kb):
        kr = "double"
    if divides and "decimal" in (ka, kb) and not {ka, kb} & set(_FLOATS):
        kr = "decimal"
    if kr != "decimal":
        return None
    # eval.py rounds every DECIMAL result of arithmetic to its type's scale
    return decimal_arith_shape(node)


def value_shape(node: exp.Expression) -> Shape | None:
    """The (precision, scale) of the DECIMAL values ``node`` gives on the reference
    evaluator (``eval.py``), every value at exactly that scale; None when its values are not
    DECIMALs.  Raises ``Unfixed`` when the expression does not fix their scale (a function or
    a construct whose DECIMAL result keeps its argument's scale, which may vary by row)."""
    if isinstance(node, exp.Paren):
        return value_shape(node.this)
    if isinstance(node, exp.Column):
        found = annotate.sql_type(node)
        if found is not None and found.name == "decimal" and len(found.params) == 2:
            return found.params[0], found.params[1]
        return None
    if isinstance(node, exp.Literal):
        if node.is_string or node.this.isdigit():
            return None
        return decimal_shape(node, "decimal")
    if isinstance(node, exp.Neg):
        return value_shape(node.this)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
        return _arith(node)
    if isinstance(node, exp.Cast):
        if not _decimal_kind(node):
            return None
        found = annotate.sql_type(node)
        if found is not None and len(found.params) == 2:
            return found.params[0], found.params[1]  # rounded to the target's scale
        inner = value_shape(node.this)
        if inner is None:
            raise Unfixed(f"`{node.sql(dialect='spark')}` keeps its value's own scale")
        return inner
    if isinstance(node, exp.Case):
        found = annotate.sql_type(node)
        if not _decimal_kind(node):
            return None
        if found is not None and len(found.params) == 2:
            return found.params[0], found.params[1]  # every branch cast to the CASE's type
        raise Unfixed(f"`{node.sql(dialect='spark')}` keeps each branch's own scale")
    if isinstance(node, exp.Anonymous) and _function(node) in _ONE_OF_ITS_ARGUMENTS:
        found = annotate.sql_type(node)
        if not _decimal_kind(node):
            return None
        if found is not None and len(found.params) == 2:
            return found.params[0], found.params[1]  # every argument cast to the call's type
        raise Unfixed(f"`{node.sql(dialect='spark')}` keeps each argument's own scale")
    if not _decimal_kind(node) and (
        isinstance(node, _NEVER_DECIMAL)
        or (isinstance(node, exp.Anonymous) and _function(node) in _NOT_DECIMAL_FUNCTIONS)
    ):
        return None
    if isinstance(node, exp.Anonymous) and _function(node) in _AGGREGATES:
        found = annotate.sql_type(node)
        if found is None or found.name != "decimal":
            return None
        if _function(node) in ("min", "max"):  # one of the argument's values
            return value_shape(node.expressions[0])
        # a DECIMAL sum or average: rounded to its type's scale (spark_rules.decimal_adder)
        return found.params[0], found.params[1]
    if not _involves_decimal(node):
        return None
    raise Unfixed(
        f"`{node.sql(dialect='spark')}` computes on DECIMAL values and the columnar engine "
        "does not derive the scale of its result"
    )


def output_unsupported(output: OutputColumn) -> str | None:
    """Why an output column's values cannot be a polars column of its type (None: they
    can)."""
    name, declared = output.name, output.type
    if declared.name != "decimal" and not _involves_decimal(output.expr):
        return None
    text = output.expr.sql(dialect="spark")
    try:
        shape = value_shape(output.expr)
    except Unfixed as err:
        return f"output `{name}`: {err}"
    if declared.name != "decimal":
        if shape is not None:
            return f"output `{name}` is {declared}, but `{text}` gives DECIMAL values"
        return None
    if shape is None:
        return f"output `{name}` is {declared}, but `{text}` gives no DECIMAL values"
    precision, scale = shape
    if len(declared.params) != 2 or declared.params[1] != scale:
        return (
            f"output `{name}` is {declared}, but `{text}` gives DECIMAL values of scale "
            f"{scale}, which one polars column of its type cannot hold"
        )
    if precision > MAX_DIGITS:
        return (
            f"output `{name}`: `{text}` may give DECIMAL values of {precision} digits, more "
            f"than a polars Decimal holds ({MAX_DIGITS})"
        )
    return None


def relation_unsupported(plan: Plan, relation: str) -> str | None:
    """Why the DECIMAL values of a relation (a stream, or a join's or aggregate's output,
    and the relations that feeds on) are not all at their columns' scales (None: they are):
    the first operator, in dependency order, with such an output."""
    for node in plan.walk(relation):
        if isinstance(node, StreamNode | TableNode | DedupNode | UnionNode):
            continue  # read at their scales (streams, tables), or passed on (the others)
        found = _outputs_unsupported(node)
        if found is not None:
            return f"`{node.name}`'s {found}"
    return None


def decimal_unsupported(
    plan: Plan, node: JoinNode | AggregateNode | ViewNode | StaticJoinNode
) -> str | None:
    """Why an operator's DECIMAL values cannot be polars columns (None: they can): an output
    of its own, or of a relation it reads, whose values are not at its column's scale."""
    for _, source in node.inputs:
        found = relation_unsupported(plan, source)
        if found is not None:
            return f"it reads {found}"
    return _outputs_unsupported(node)


def _outputs_unsupported(node: JoinNode | AggregateNode | ViewNode | StaticJoinNode) -> str | None:
    for output in node.output:
        found = output_unsupported(output)
        if found is not None:
            return found
    return None
