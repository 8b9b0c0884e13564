"""The annotations that parser, binder and planner put on sqlglot expression nodes.

sqlglot keeps a free-form ``meta`` dict on every node.  This module is the only place that
names its keys: every other module reads and writes annotations through these typed
functions, so a key cannot be misspelt, read with the wrong type, or read in one module and
forgotten in another.  What each annotation means:

- ``span``: where the node is in the spec (parser).
- ``name_span`` / ``unit_span``: a function call's name, an interval's unit (parser).
- ``spelling``: which of two spellings of one expression was written, for ``sjoin fmt`` to
  write it back: ``::`` for a CAST written ``x::T``, ``||`` for a concat() written
  ``a || b``, ``is not distinct from`` for a ``<=>`` written so (parser).
- ``type_ref``: the written type of a CAST or typed literal; ``typed_literal`` marks
  ``TIMESTAMP '...'``-style literals (parser).
- ``type``: the node's SQL type (binder).
- ``side`` / ``event_time`` / ``relation``: a column's input (``left``/``right`` of a join,
  ``input`` of an aggregate), whether it carries Spark's watermark metadata, and its
  relation (binder).
- ``function``: the resolved name of a function call (binder).
- ``micros``: an interval's exact length (binder).
- ``window_of`` / ``written``: a column the planner projected for a window key, and the
  ``window(...)`` call it stands for (planner).
- ``state_variant``: the form of a BETWEEN conjunct that Spark's state watermark reads
  (``compiler/planning/state.py``).
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from .source import Span
from .types import SqlType

# -- reading ---------------------------------------------------------------------------------


def _get(node: exp.Expr, key: str) -> Any:
    meta = getattr(
        node, "_meta", None
    )  # sqlglot creates the dict on first use of .meta; do not create it to read
    return None if meta is None else meta.get(key)


def span(node: exp.Expr) -> Span | None:
    found = _get(node, "span")
    return found if isinstance(found, Span) else None


def name_span(node: exp.Expr) -> Span | None:
    found = _get(node, "name_span")
    return found if isinstance(found, Span) else None


def unit_span(node: exp.Expr) -> Span | None:
    found = _get(node, "unit_span")
    return found if isinstance(found, Span) else None


def type_ref(node: exp.Expr) -> object:
    """The parser's ``ast.TypeRef`` (typed loosely: the runtime may import this module, but
    never the AST)."""
    return _get(node, "type_ref")


def is_typed_literal(node: exp.Expr) -> bool:
    return bool(_get(node, "typed_literal"))


def spelling(node: exp.Expr) -> str | None:
    """The operator ``node`` was written with when the language has two for it (parser)."""
    found = _get(node, "spelling")
    return found if isinstance(found, str) else None


def sql_type(node: exp.Expr) -> SqlType | None:
    """The bound SQL type (None before binding, or for nodes the binder does not type)."""
    found = _get(node, "type")
    return found if isinstance(found, SqlType) else None


def side(node: exp.Expr) -> str:
    """The input a bound column reads: ``left``, ``right``, ``input``; ``""`` if none."""
    found = _get(node, "side")
    return found if isinstance(found, str) else ""


def is_event_time(node: exp.Expr) -> bool:
    """The column carries Spark's event-time (watermark) metadata."""
    return bool(_get(node, "event_time"))


def relation(node: exp.Expr) -> str | None:
    found = _get(node, "relation")
    return found if isinstance(found, str) else None


def function(node: exp.Expr) -> str | None:
    """The resolved name of a function call (``window``, ``date_format``, ...)."""
    found = _get(node, "function")
    return found if isinstance(found, str) else None


def is_call(node: exp.Expr, name: str) -> bool:
    """``node`` is a bound call of the function ``name``."""
    return isinstance(node, exp.Anonymous) and function(node) == name


def micros(node: exp.Expr) -> int | None:
    """The exact length of a bound interval in microseconds."""
    found = _get(node, "micros")
    return int(found) if isinstance(found, int | float) and not isinstance(found, bool) else None


def interval_micros(node: exp.Expr) -> int:
    """The exact length of an interval the binder has accepted (it always has a length)."""
    found = micros(node)
    if found is None:
        raise ValueError(f"interval without a bound length: {node.sql()}")
    return found


def window_of(node: exp.Expr) -> str | None:
    """The event-time column that a planner-projected window column was computed from."""
    found = _get(node, "window_of")
    return str(found) if found else None


def computed_below(node: exp.Expr) -> str | None:
    """Of a window call that stands for a column a join's side computes below the join (a
    pipeline subquery's ``window(t, ...) AS w``, a job's ``withColumn("w", window(...))``):
    that column's name.  Spark reads the column there, not the time it was computed from."""
    found = _get(node, "computed_below")
    return str(found) if found else None


def written(node: exp.Expr) -> exp.Expression | None:
    """The expression the user wrote that a planner-projected column stands for."""
    found = _get(node, "written")
    return found if isinstance(found, exp.Expression) else None


def state_variant(node: exp.Expr) -> exp.Expression | None:
    found = _get(node, "state_variant")
    return found if isinstance(found, exp.Expression) else None


def state_variant_or_self(node: exp.Expression) -> exp.Expression:
    variant = state_variant(node)
    return node if variant is None else variant


# -- writing ---------------------------------------------------------------------------------


def set_span(node: exp.Expr, where: Span) -> None:
    node.meta["span"] = where


def set_name_span(node: exp.Expr, where: Span) -> None:
    node.meta["name_span"] = where


def set_unit_span(node: exp.Expr, where: Span) -> None:
    node.meta["unit_span"] = where


def set_type_ref(node: exp.Expr, ref: object, *, typed_literal: bool = False) -> None:
    node.meta["type_ref"] = ref
    if typed_literal:
        node.meta["typed_literal"] = True


def set_spelling(node: exp.Expr, written: str) -> None:
    node.meta["spelling"] = written


def set_type(node: exp.Expr, kind: SqlType) -> None:
    node.meta["type"] = kind


def set_column(
    node: exp.Expression,
    *,
    side: str,
    event_time: bool,
    kind: SqlType | None = None,
    relation: str | None = None,
) -> None:
    """Annotate a bound column with its input, event-time mark, type and relation."""
    node.meta.update(side=side, event_time=event_time)
    if kind is not None:
        node.meta["type"] = kind
    if relation is not None:
        node.meta["relation"] = relation


def copy_column(target: exp.Expression, source: exp.Expression) -> None:
    """Give ``target`` every annotation of ``source``."""
    if source._meta:
        target.meta.update(source.meta)


def set_function(node: exp.Expr, name: str) -> None:
    node.meta["function"] = name


def set_micros(node: exp.Expr, value: int) -> None:
    node.meta["micros"] = value


def set_window_of(node: exp.Expr, column: str, written_as: exp.Expression) -> None:
    node.meta["window_of"] = column
    node.meta["written"] = written_as


def set_computed_below(node: exp.Expr, column: str) -> None:
    node.meta["computed_below"] = column


def set_state_variant(node: exp.Expr, variant: exp.Expression) -> None:
    node.meta["state_variant"] = variant
