"""What the columnar engine runs, decided from the Plan alone and without polars: the run
picks its engine from this before polars is imported (``runtime.choose_engine``), and the
columnar engine runs every operator named here on the reference operator instead; both read
it through ``runtime/operators.py``'s ``placement``, the one place where it is decided.

A join is not columnar when it has a type without an exact polars dtype (a window is a
struct of two times), computed or floating keys, non-deterministic functions, a time range
too wide for 64-bit arithmetic or on a window, or a window whose sizes are.  An aggregate is
not columnar with sliding windows, computed keys or arguments, floating keys, a function
other than count, sum, avg, min, max and approx_count_distinct (of non-floating values), or
no grouping key.  An aggregate groups by, counts, and takes the min, max and distinct
count of an input column that is a window (another operator's window output, a struct
``{start, end}`` in a frame).  DECIMAL values are columnar where their scale is fixed
(``decimals.py``, also applied by ``operators.place``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from ...compiler.planning.plan import AggregateNode, DedupNode, JoinNode
from ...compiler.vocabulary import annotate
from ...compiler.vocabulary.functions import FUNCTIONS, lookup
from ...compiler.vocabulary.types import SqlType
from ..engine.aggregate_functions import aggregate_calls
from ..engine.eval import Layout, column_slot, compile_expr, kind_of, window_arguments
from ..engine.join_core import side_layout
from ..errors import UnsupportedExpression

# the SQL types with one polars dtype holding exactly the reference runtime's value
# (frames.py maps each; a test checks the two agree)
COLUMNAR_KINDS = frozenset(
    {
        "tinyint",
        "smallint",
        "int",
        "bigint",
        "timestamp",
        "date",
        "interval",
        "double",
        "float",
        "string",
        "binary",
        "boolean",
        "decimal",  # at its column's scale (frames.dtype_of, decimals.py)
    }
)


def columnar_kind(kind: str) -> bool:
    return kind in COLUMNAR_KINDS


_INTS = {"tinyint", "smallint", "int", "bigint"}
_KEY_KINDS = {"timestamp", "date", "string", "binary", "boolean"}
_TIME_KINDS = _INTS | {"timestamp", "date"}
_LIMIT = 2**62  # range bounds beyond this could overflow Int64 arithmetic: not columnar


def _function_names(node: exp.Expression) -> list[str]:
    return [(annotate.function(call) or call.name).lower() for call in node.find_all(exp.Anonymous)]


def _expressions(node: JoinNode) -> list[exp.Expression]:
    found: list[exp.Expression] = [o.expr for o in node.output]
    for part in (node.post_join_filter, node.constant_filter):
        if part is not None:
            found.append(part)
    for side in (node.left, node.right):
        found += [e for e in (side.pre_join_filter,) if e is not None]
        found += [*side.filters_below_watermark, *side.filters_above_watermark]
    for a, b in node.matched_keys:
        found += [a, b]
    return found


def _scale(node: exp.Expression) -> int | None:
    """The scale of a DECIMAL expression's type (None: another type)."""
    found = annotate.sql_type(node)
    if found is None or found.name != "decimal" or len(found.params) != 2:
        return None
    return found.params[1]


def join_unsupported(node: JoinNode, ansi: bool) -> str | None:
    """Why this join cannot run on the columnar operator (None: it can)."""
    for side in (node.left, node.right):
        for column in side.columns:
            if not columnar_kind(column.type.name):
                return f"column `{column.name}` is {column.type}, which has no columnar form"
        for w in side.windows:
            try:
                sizes = window_arguments(w.expr)
            except UnsupportedExpression as err:
                return str(err)
            if any(abs(x or 0) > _LIMIT for x in sizes):
                return "a window() duration or offset is too large for 64-bit arithmetic"
    for o in node.output:
        if not columnar_kind(o.type.name) and o.type.name != "window":
            return f"output `{o.name}` is {o.type}, which has no columnar form"
    for e in _expressions(node):
        for name in _function_names(e):
            function = FUNCTIONS.get(name)
            if function is not None and not function.deterministic:
                return f"it calls {name}(), which is not deterministic"
    left_cols, right_cols = side_layout(node.left), side_layout(node.right)
    one_left = Layout.of(("left", left_cols))
    one_right = Layout.of(("right", right_cols))
    for a, b in node.matched_keys:  # a null-safe key's operands (a NULL is a key)
        if (
            column_slot(compile_expr(a, one_left, ansi=ansi)) is None
            or column_slot(compile_expr(b, one_right, ansi=ansi)) is None
        ):
            return "a join key is computed, not a column"
        ka, kb = kind_of(a, one_left), kind_of(b, one_right)
        if ka == kb == "decimal" and _scale(a) == _scale(b) is not None:
            continue  # DECIMALs of one scale: equal exactly when their unscaled values are
        if not ((ka in _INTS and kb in _INTS) or (ka == kb and ka in _KEY_KINDS | {"window"})):
            return (
                f"a join key compares {ka} with {kb} (only integer, TIMESTAMP, DATE, STRING, "
                "BINARY, BOOLEAN and window keys of one type, and DECIMAL keys of one scale, "
                "are columnar)"
            )
    for side, cols in ((node.left, left_cols), (node.right, right_cols)):
        rule = side.state
        kinds = dict(cols)
        times = _TIME_KINDS | {"window"}  # (a window: its end)
        if rule.eviction == "key":
            assert rule.key_index is not None
            key = node.matched_keys[rule.key_index][0 if side.name == "left" else 1]
            layout = one_left if side.name == "left" else one_right
            if kind_of(key, layout) not in times:
                return f"its {side.name} side is evicted by a key that is not a time"
        elif rule.eviction == "value" and rule.column in kinds and kinds[rule.column] not in times:
            return f"its {side.name} side is evicted by a column that is not a time"
        if side.event_time_column is not None and kinds.get(side.event_time_column) not in times:
            return f"its {side.name} side's event time is not a time column"
    if node.time_range is not None:
        tr = node.time_range
        if abs(tr.lower_us) > _LIMIT or abs(tr.upper_us) > _LIMIT:
            return "its time range is too wide for 64-bit arithmetic"
        if "window" in (dict(left_cols).get(tr.left_column), dict(right_cols).get(tr.right_column)):
            return "its time range compares a window"
    return None


# ------------------------------------------------------------------------ canonical lines

_INT_TEXT = r"-?(?:0|[1-9][0-9]{0,18})"
_STRING_TEXT = r'"[^"\\\x00-\x1f]*"'
# the text of a value of each type in a canonical line (``columnar/trace.py``)
_PIECES = {
    "boolean": "true|false",
    "string": _STRING_TEXT,
    # hours 00-23, minutes and seconds 00-59: polars would read a second 60 (a leap second)
    # as the next minute, where the reference reader refuses it
    "timestamp": (
        r'"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{3})?Z"'
    ),
    "date": r'"[0-9]{4}-[0-9]{2}-[0-9]{2}"',
    **{kind: _INT_TEXT for kind in ("tinyint", "smallint", "int", "bigint")},
}


def dedup_unsupported(node: DedupNode) -> str | None:
    """Why this deduplication cannot run on the columnar operator (None: it can): a column
    without an exact polars dtype (a window) or a floating dedup column (as for the join and
    the aggregate: Spark's NaN and -0.0 key rules are the reference's). A DECIMAL column is
    columnar where its input's values are at its scale (``operators.placement``)."""
    for column in node.columns:
        if column.type.name not in COLUMNAR_KINDS:
            return f"column `{column.name}` is {column.type}, which has no columnar form here"
    for key in node.state.key:
        if key.type.name not in _INTS | _KEY_KINDS:
            return f"dedup column `{key.name}` is {key.type}: floating keys are not columnar"
    return None


def has_canonical_form(kind: SqlType) -> bool:
    """Whether a value of this type can be written in a canonical line."""
    return kind.name in _PIECES


def canonical_line_pattern(
    stream: str, columns: Sequence[str], types: Sequence[SqlType]
) -> str | None:
    """The regular expression (polars' and Python's alike) of a *canonical* trace line of
    ``stream``: the form ``json.dumps`` writes, fields and columns in declared order, the
    values of ``_PIECES``.  The columnar reader reads a trace of such lines in bulk (no
    capture groups: polars runs a test without captures as a DFA, several times faster than
    an extraction).  None when a column's type has no canonical form (DOUBLE, DECIMAL, ...):
    such a trace is read by the reference reader on either engine."""
    parts = []
    for name, kind in zip(columns, types, strict=True):
        piece = _PIECES.get(kind.name)
        if piece is None:
            return None
        parts.append(re.escape(json.dumps(name, ensure_ascii=False)) + f": (?:null|{piece})")
    return (
        r'^\{"batch": '
        + _INT_TEXT
        + r", "
        + re.escape(f'"stream": {json.dumps(stream, ensure_ascii=False)}, "row": {{')
        + ", ".join(parts)
        + r"\}\}$"
    )


# ---------------------------------------------------------------------------- aggregates

_FLOATS = {"double", "float"}
# an input column of kind "window" (a window another operator output: a struct {start, end}
# in a frame) is a key, and the argument of count, min, max and approx_count_distinct
_GROUP_KEY_KINDS = _INTS | {"timestamp", "date", "string", "binary", "boolean", "decimal", "window"}
# (a window is ordered by (start, end), as the reference's tuples and Spark's structs are)
_ORDERED = _INTS | _FLOATS | {"timestamp", "date", "string", "binary", "boolean", "decimal"}
_ORDERED = _ORDERED | {"window"}


@dataclass(frozen=True, slots=True)
class AggregateKey:
    column: int  # the input column: the key's value, or a window's time
    kind: str  # the input column's kind ("window": the column is a window, the key its value)
    window: tuple[int, int] | None  # (duration, start) in µs of a tumbling window()
    scale: int | None = None  # a DECIMAL key's scale

    @property
    def is_window(self) -> bool:
        """Whether the key's values are windows: a ``window()`` of a time column, or an
        input column that is a window (its event time is the window's end)."""
        return self.window is not None or self.kind == "window"


@dataclass(frozen=True, slots=True)
class Accumulation:
    name: str  # count, sum, avg, min, max, approx_count_distinct
    column: int | None  # the argument's input column (None: count(*))
    kind: str  # the argument's kind
    scale: int | None = None  # a DECIMAL argument's scale
    precision: int | None = None  # and its precision


@dataclass(frozen=True, slots=True)
class AggregatePlan:
    """How the columnar aggregate runs one aggregate: its keys, one accumulator per distinct
    aggregate call, and the calls themselves (the output expressions refer to them)."""

    keys: list[AggregateKey]
    accumulators: list[Accumulation]
    calls: list[exp.Expression]


def aggregate_plan(
    node: AggregateNode, input_columns: Sequence[tuple[str, str]], ansi: bool
) -> AggregatePlan | str:
    """The ``AggregatePlan`` of a supported aggregate, or the reason it is not."""
    layout = Layout.of(("input", list(input_columns)))
    kinds = [k for _, k in input_columns]

    def column(e: exp.Expression) -> int | None:
        try:
            found = column_slot(compile_expr(e, layout, ansi=ansi))
        except UnsupportedExpression:
            return None
        return None if found is None else found[1]

    if not node.group_by:
        return "it has no grouping key"
    keys: list[AggregateKey] = []
    for key in node.group_by:
        if annotate.is_call(key, "window"):
            duration, slide, start = window_arguments(key)
            if slide is not None:
                return "a sliding window() puts a row in several groups"
            if abs(duration) > _LIMIT or abs(start) > _LIMIT or duration <= 0:
                return "a window() duration or offset is too large for 64-bit arithmetic"
            index = column(key.expressions[0])
            if index is None:
                return "a window() time is computed, not a column"
            if kinds[index] != "timestamp":
                return "a window() time is not a TIMESTAMP column"
            keys.append(AggregateKey(index, kinds[index], (duration, start)))
            continue
        index = column(key)
        if index is None:
            return f"grouping key `{key.sql(dialect='spark')}` is computed, not a column"
        if kinds[index] not in _GROUP_KEY_KINDS:
            return (
                f"grouping key `{key.sql(dialect='spark')}` is {kinds[index]} (only integer, "
                "TIMESTAMP, DATE, STRING, BINARY, BOOLEAN, DECIMAL and window keys are columnar)"
            )
        keys.append(AggregateKey(index, kinds[index], None, _scale(key)))
    accs: list[Accumulation] = []
    calls: list[exp.Expression] = []
    for out in node.output:
        for name in (
            (annotate.function(c) or c.name).lower() for c in out.expr.find_all(exp.Anonymous)
        ):
            function = FUNCTIONS.get(name)
            if function is not None and not function.deterministic:
                return f"output `{out.name}` calls {name}(), which is not deterministic"
        for call in aggregate_calls(out.expr):
            if any(call == seen for seen in calls):
                continue
            calls.append(call)
            assert isinstance(call, exp.Anonymous)
            fn = lookup(str(annotate.function(call) or call.this).lower())
            assert fn is not None
            args = list(call.expressions)
            text = call.sql(dialect="spark")
            if fn.name == "count" and (not args or isinstance(args[0], exp.Star)):
                accs.append(Accumulation("count", None, "bigint"))
                continue
            if len(args) != 1:
                return f"`{text}` has {len(args)} arguments"
            index = column(args[0])
            if index is None:
                return f"the argument of `{text}` is computed, not a column"
            kind = kind_of(args[0], layout)
            if not (columnar_kind(kind) or kind == "window") or kind != kinds[index]:
                return f"the argument of `{text}` is {kind}, which has no columnar form"
            if fn.name in ("sum", "avg") and kind not in _INTS | _FLOATS | {"decimal"}:
                return f"`{text}` adds {kind} values"
            if fn.name in ("min", "max") and kind not in _ORDERED:
                return f"`{text}` compares {kind} values"
            if fn.name == "approx_count_distinct" and kind in _FLOATS:
                return f"`{text}` counts distinct {kind} values (NaN and -0.0 in a set)"
            if fn.name not in ("count", "sum", "avg", "min", "max", "approx_count_distinct"):
                return f"`{text}` is not columnar"
            found = annotate.sql_type(args[0])
            shape = found.params if found is not None and kind == "decimal" else (None, None)
            accs.append(Accumulation(fn.name, index, kind, shape[1], shape[0]))
    return AggregatePlan(keys, accs, calls)


def aggregate_unsupported(
    node: AggregateNode, input_columns: Sequence[tuple[str, str]], ansi: bool
) -> str | None:
    """Why this aggregate cannot run on the columnar operator (None: it can)."""
    found = aggregate_plan(node, input_columns, ansi)
    return found if isinstance(found, str) else None
