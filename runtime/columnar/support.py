"""What the columnar engine runs, decided from the Plan alone and without polars: the run
picks its engine from this before polars is imported (``runtime.choose_engine``), and the
columnar query runs every operator named here on the reference operator instead.

A join is not columnar when it has windows, a type without an exact polars dtype (DECIMAL,
...), computed or floating keys, non-deterministic functions, or a time range too wide for
64-bit arithmetic.
"""

from __future__ import annotations

from sqlglot import exp

from sjoin.compiler import annotate
from sjoin.compiler.functions import FUNCTIONS
from sjoin.compiler.plan import AggregateNode, JoinNode, Plan

from ..eval import Layout, column_slot, compile_expr, kind_of
from ..join import side_layout

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
    }
)


def columnar_kind(kind: str) -> bool:
    return kind in COLUMNAR_KINDS


_INTS = {"tinyint", "smallint", "int", "bigint"}
_KEY_KINDS = {"timestamp", "date", "string", "binary", "boolean"}
_TIME_KINDS = _INTS | {"timestamp", "date"}
_LIMIT = 2**62  # range bounds beyond this could overflow Int64 arithmetic: not columnar


def type_name(text: str) -> str:
    return text.split("(")[0].lower()


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
    for a, b in node.keys:
        found += [a, b]
    return found


def join_unsupported(node: JoinNode, ansi: bool) -> str | None:
    """Why this join cannot run on the columnar operator (None: it can)."""
    if node.window_times:
        return "its output calls window() (rows whose window time is NULL are dropped)"
    for side in (node.left, node.right):
        if side.windows or side.event_time_is_window:
            return f"its {side.name} side projects a window"
        for column in side.columns:
            if not columnar_kind(column.type.name):
                return f"column `{column.name}` is {column.type}, which has no columnar form"
    for o in node.output:
        if not columnar_kind(type_name(o.type)):
            return f"output `{o.name}` is {o.type}, which has no columnar form"
    for e in _expressions(node):
        for name in _function_names(e):
            if name == "window":
                return "it calls window()"
            function = FUNCTIONS.get(name)
            if function is not None and not function.deterministic:
                return f"it calls {name}(), which is not deterministic"
    left_cols, right_cols = side_layout(node.left), side_layout(node.right)
    one_left = Layout.of(("left", left_cols))
    one_right = Layout.of(("right", right_cols))
    for a, b in node.keys:
        if (
            column_slot(compile_expr(a, one_left, ansi=ansi)) is None
            or column_slot(compile_expr(b, one_right, ansi=ansi)) is None
        ):
            return "a join key is computed, not a column"
        ka, kb = kind_of(a, one_left), kind_of(b, one_right)
        if not ((ka in _INTS and kb in _INTS) or (ka == kb and ka in _KEY_KINDS)):
            return (
                f"a join key compares {ka} with {kb} (only integer, TIMESTAMP, DATE, STRING, "
                "BINARY and BOOLEAN keys of one type are columnar)"
            )
    for side, cols in ((node.left, left_cols), (node.right, right_cols)):
        rule = side.state
        kinds = dict(cols)
        if rule.eviction == "key":
            if rule.window or rule.key_index is None:
                return f"its {side.name} side is evicted by a window key"
            key = node.keys[rule.key_index][0 if side.name == "left" else 1]
            layout = one_left if side.name == "left" else one_right
            if kind_of(key, layout) not in _TIME_KINDS:
                return f"its {side.name} side is evicted by a key that is not a time"
        elif (
            rule.eviction == "value"
            and rule.column in kinds
            and kinds[rule.column] not in _TIME_KINDS
        ):
            return f"its {side.name} side is evicted by a column that is not a time"
        if (
            side.event_time_column is not None
            and kinds.get(side.event_time_column) not in _TIME_KINDS
        ):
            return f"its {side.name} side's event time is not a time column"
    if node.time_range is not None:
        tr = node.time_range
        if abs(tr.lower_us) > _LIMIT or abs(tr.upper_us) > _LIMIT:
            return "its time range is too wide for 64-bit arithmetic"
    return None


def operator_unsupported(plan: Plan, name: str) -> str | None:
    """Why the operator ``name`` runs on the reference operator in a columnar run (None: it
    runs columnar)."""
    node = plan.node(name)
    if isinstance(node, AggregateNode):
        return "aggregates run on the reference operator"
    if isinstance(node, JoinNode):
        return join_unsupported(node, plan.ansi)
    return None
