"""A classic DataFrame's analyzed logical plan (Catalyst, read through py4j) as the proto
JSON of a Spark Connect relation, the shape ``lower.py`` reads (docs/pyspark.md, "In your
own tests").

A classic DataFrame (``pyspark.sql.DataFrame`` over a JVM) has no Connect plan: its plan
lives in the JVM.  Each Catalyst node is read through its own methods (``nodeName``,
``child``, ``condition``, ...) and becomes the Connect relation that the same DataFrame call
makes on a Connect session; each expression is Catalyst's own SQL (``Expression.sql()``),
which the lowering reads as it reads an ``expr("...")`` string.  A node sjoin does not
translate keeps its Catalyst name as its kind, so that the lowering reports it (E041)
where every unmodelled relation is reported.

No pyspark import: the objects are py4j proxies of the DataFrame's own JVM.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_JOIN_TYPES = {
    "Inner": "JOIN_TYPE_INNER",
    "LeftOuter": "JOIN_TYPE_LEFT_OUTER",
    "RightOuter": "JOIN_TYPE_RIGHT_OUTER",
    "FullOuter": "JOIN_TYPE_FULL_OUTER",
    "LeftSemi": "JOIN_TYPE_LEFT_SEMI",
    "LeftAnti": "JOIN_TYPE_LEFT_ANTI",
}
# Catalyst's expressions that call user code: sjoin cannot say what they return
_UDFS = ("PythonUDF", "ScalaUDF", "PythonUDAF", "ScalaUDAF", "JavaUDF")
# what the analyzer makes of `window(...)` (TimeWindow is expanded into a projection)
_WINDOW_MARKS = ("precisetimestampconversion(",)
# the units a window's durations are written in (the largest that holds one exactly)
_UNITS = (
    ("DAYS", 86_400_000_000),
    ("HOURS", 3_600_000_000),
    ("MINUTES", 60_000_000),
    ("SECONDS", 1_000_000),
    ("MILLISECONDS", 1_000),
)


def side_mark(plan_id: int) -> str:
    """The placeholder qualifier of a join side's columns (``Translator._sided``)."""
    return f"__sjoin_side_{plan_id}"


SIDE_MARK = re.compile(r"__sjoin_side_(?P<plan_id>[0-9]+)")


def _seq(scala_seq: Any) -> list[Any]:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def _children(node: Any) -> list[Any]:
    return _seq(node.children())


class Translator:
    """One DataFrame's analyzed plan -> Connect relation JSON.  ``named``: a Catalyst plan
    -> the name of the caller's variable that holds a DataFrame of exactly that plan (its
    relation takes the name); ``self.names`` then maps the plan_ids it gave out."""

    def __init__(self, jvm: Any, named: Callable[[Any], str | None]) -> None:
        self.jvm = jvm
        self.named = named
        self.next_id = 0
        self.names: dict[int, str] = {}

    def relation(self, node: Any) -> dict[str, Any]:
        pid = self.next_id
        self.next_id += 1
        name = self.named(node)
        if name is not None:
            self.names[pid] = name
        kind = str(node.nodeName())
        handler = getattr(self, f"_{kind}", None)
        if handler is None:  # the lowering reports it (E041) by this kind
            return {"common": {"plan_id": pid}, kind: {}}
        key, body = handler(node)
        return {"common": {"plan_id": pid}, key: body}

    # ------------------------------------------------------------------ sources
    def _columns(self, node: Any) -> str:
        return ", ".join(
            f"{_quote(str(a.name()))} {a.dataType().sql()}" for a in _seq(node.output())
        )

    def _StreamingRelation(self, node: Any) -> tuple[str, dict[str, Any]]:
        ds = node.dataSource()
        options = dict(self.jvm.scala.jdk.javaapi.CollectionConverters.asJava(ds.options()))
        source = {"format": str(ds.className()), "schema": self._columns(node), "options": options}
        return "read", {"data_source": source, "is_streaming": True}

    def _StreamingRelationV2(self, node: Any) -> tuple[str, dict[str, Any]]:
        options = {str(k): str(v) for k, v in dict(node.extraOptions()).items()}
        source = {
            "format": str(node.sourceName()),
            "schema": self._columns(node),
            "options": options,
        }
        return "read", {"data_source": source, "is_streaming": True}

    # ------------------------------------------------------------------ operators
    def _EventTimeWatermark(self, node: Any) -> tuple[str, dict[str, Any]]:
        return "with_watermark", {
            "input": self.relation(node.child()),
            "event_time": str(node.eventTime().name()),
            "delay_threshold": str(node.delay().toString()),
        }

    def _SubqueryAlias(self, node: Any) -> tuple[str, dict[str, Any]]:
        return "subquery_alias", {"input": self.relation(node.child()), "alias": str(node.alias())}

    def _Filter(self, node: Any) -> tuple[str, dict[str, Any]]:
        condition = node.condition()
        if _is_window(condition):
            return _window_kind(condition), {}
        return "filter", {
            "input": self.relation(node.child()),
            "condition": expression(condition, _aliases(node.child())),
        }

    def _Project(self, node: Any) -> tuple[str, dict[str, Any]]:
        items = _seq(node.projectList())
        marked = [e for e in items if _is_window(e)]
        if marked:
            return _window_kind(marked[0]), {}
        return "project", {
            "input": self.relation(node.child()),
            "expressions": [expression(e, _aliases(node.child())) for e in items],
        }

    def _Join(self, node: Any) -> tuple[str, dict[str, Any]]:
        how = str(node.joinType().toString())
        body: dict[str, Any] = {
            "left": self.relation(node.left()),
            "right": self.relation(node.right()),
            "join_type": _JOIN_TYPES.get(how, f"JOIN_TYPE_{how}"),
        }
        condition = node.condition()
        if condition.isDefined():
            keep = _aliases(node.left(), node.right())
            sides = (
                (body["left"]["common"]["plan_id"], node.left()),
                (body["right"]["common"]["plan_id"], node.right()),
            )
            qualified, marks = self._sided(condition.get(), sides, keep)
            body["join_condition"] = expression(qualified, keep | marks)
        return "join", body

    def _sided(
        self, condition: Any, sides: tuple[tuple[int, Any], ...], keep: frozenset[str]
    ) -> tuple[Any, frozenset[str]]:
        """``condition`` with each column that both sides have a column of its name (in
        any case) qualified by its side, by expression id: Catalyst's SQL writes `k = k`
        for `a.k == b.k`.  The qualifier is ``side_mark(plan_id)`` of the side's relation,
        which the lowering turns into the side's alias (``lower.py``)."""
        names = [{str(a.name()).lower() for a in _seq(n.output())} for _, n in sides]
        shared = names[0] & names[1]
        if not shared:
            return condition, frozenset()
        owner = {str(a.exprId().id()): side_mark(pid) for pid, n in sides for a in _seq(n.output())}
        used: set[str] = set()

        def qualify(e: Any) -> Any:
            kind = str(e.nodeName())
            if kind == "AttributeReference":
                mark = owner.get(str(e.exprId().id()))
                written = _seq(e.qualifier())
                if mark is None or str(e.name()).lower() not in shared:
                    return e
                if written and str(written[-1]) in keep:
                    return e  # `l.k` by the side's own alias: already the side's
                used.add(mark)
                return e.withQualifier(self._seq_of([mark]))
            if kind == "Between":  # its SQL is its input and bounds, not its replacement
                parts = [e.input(), e.lower(), e.upper()]
                new = [qualify(p) for p in parts]
                if all(a is b for a, b in zip(new, parts, strict=True)):
                    return e
                return self.jvm.org.apache.spark.sql.catalyst.expressions.Between.apply(*new)
            kids = _children(e)
            if not kids:
                return e
            new = [qualify(k) for k in kids]
            if all(a is b for a, b in zip(new, kids, strict=True)):
                return e
            return e.withNewChildren(self._seq_of(new))

        return qualify(condition), frozenset(used)

    def _seq_of(self, items: list[Any]) -> Any:
        """A Scala ``Seq`` of ``items``, for Catalyst's methods that take one."""
        java = self.jvm.java.util.ArrayList()
        for item in items:
            java.add(item)
        return self.jvm.scala.jdk.javaapi.CollectionConverters.asScala(java).toSeq()

    def _Aggregate(self, node: Any) -> tuple[str, dict[str, Any]]:
        keys = _seq(node.groupingExpressions())
        below, window_id, call = node.child(), None, ""
        found = _time_window(below)
        if found is not None:  # `groupBy(window(t, ...))`: the call, read below its expansion
            below, window_id, (time, durations) = found
            column = expression(time, _aliases(below))["expression_string"]["expression"]
            call = f"window({', '.join([column, *durations])})"
        keep = _aliases(below)
        key_sql = {str(k.sql()) for k in keys}
        aggs = [e for e in _seq(node.aggregateExpressions()) if str(e.sql()) not in key_sql]
        grouping = [
            {"expression_string": {"expression": call}}
            if window_id is not None and _is_attribute(k, window_id)
            else expression(k, keep)
            for k in keys
        ]
        return "aggregate", {
            "input": self.relation(below),
            "group_type": "GROUP_TYPE_GROUPBY",
            "grouping_expressions": grouping,
            "aggregate_expressions": [expression(e, keep) for e in aggs],
        }

    def _Deduplicate(self, node: Any, within: bool = False) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {
            "input": self.relation(node.child()),
            "column_names": [str(k.name()) for k in _seq(node.keys())],
        }
        if within:
            body["within_watermark"] = True
        return "deduplicate", body

    def _DeduplicateWithinWatermark(self, node: Any) -> tuple[str, dict[str, Any]]:
        return self._Deduplicate(node, within=True)

    def _Union(self, node: Any) -> tuple[str, dict[str, Any]]:
        inputs = _children(node)
        by_name, missing = bool(node.byName()), bool(node.allowMissingCol())
        # Union(a, b, c) is union(union(a, b), c)
        found = self.relation(inputs[0])
        for extra in inputs[1:-1]:
            pid = self.next_id
            self.next_id += 1
            found = {
                "common": {"plan_id": pid},
                "set_op": _union(found, self.relation(extra), by_name, missing),
            }
        return "set_op", _union(found, self.relation(inputs[-1]), by_name, missing)


def _union(left: dict[str, Any], right: dict[str, Any], by_name: bool, missing: bool) -> Any:
    return {
        "left_input": left,
        "right_input": right,
        "set_op_type": "SET_OP_TYPE_UNION",
        "is_all": True,
        "by_name": by_name,
        "allow_missing_columns": missing,
    }


def _aliases(*nodes: Any) -> frozenset[str]:
    """The aliases a node reads its inputs by (a ``SubqueryAlias`` input's)."""
    return frozenset(str(n.alias()) for n in nodes if str(n.nodeName()) == "SubqueryAlias")


def _walk(expr: Any) -> list[Any]:
    out, todo = [], [expr]
    while todo:
        e = todo.pop()
        out.append(e)
        todo += _children(e)
    return out


def _is_window(expr: Any) -> bool:
    """What the analyzer made of ``window(...)``: a time window sjoin reads from a Connect
    plan (its ``window`` call) but not from its expansion."""
    text = str(expr.sql()).lower()
    return any(mark in text for mark in _WINDOW_MARKS)


def _window_kind(expr: Any) -> str:
    """The operation an expansion the translation does not read back names (E041): a
    session window, else a time window."""
    names = {str(e.name()) for e in _walk(expr) if str(e.nodeName()) == "Alias"}
    return "session_window" if "session_window" in names else "window"


def _is_attribute(expr: Any, expr_id: str) -> bool:
    return str(expr.nodeName()) == "AttributeReference" and str(expr.exprId().id()) == expr_id


def _literal(expr: Any) -> int | None:
    if str(expr.nodeName()) != "Literal":
        return None
    value = expr.value()
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _unwrap(expr: Any) -> Any:
    """``expr`` without the conversions and markers TimeWindowing wraps around arithmetic."""
    while str(expr.nodeName()) in ("KnownNullable", "PreciseTimestampConversion", "Cast"):
        expr = expr.child()
    return expr


def _duration(micros: int) -> str | None:
    """A window's duration as an interval, in the largest unit that holds it exactly
    (``1 HOUR``, ``10 MINUTES``: as ``window(t, '1 hour')`` reads on Connect)."""
    for unit, size in _UNITS:
        if micros > 0 and micros % size == 0:
            amount = micros // size
            return f"INTERVAL {amount} {unit[:-1] if amount == 1 else unit}"
    return None


def _window_struct(struct: Any) -> tuple[Any, int, int, int, int] | None:
    """One of TimeWindowing's window structs (``named_struct(start, ..., end, ...)``,
    ResolveTimeWindows.scala's ``getWindow(i)``): its time column, window duration, slide,
    start offset and ``i * slide``, or None when it is no such struct."""
    if str(struct.nodeName()) != "CreateNamedStruct":
        return None
    parts = _children(struct)
    if len(parts) != 4:
        return None
    start, end = _unwrap(parts[1]), _unwrap(parts[3])
    # end: windowStart + windowDuration; windowStart: lastStart - i * slide
    if str(end.nodeName()) != "Add" or str(start.nodeName()) != "Subtract":
        return None
    duration, back = _literal(end.right()), _literal(start.right())
    if duration is None or back is None:
        return None
    # lastStart: ts - CASE WHEN r < 0 THEN r + slide ELSE r END, r = (ts - startTime) % slide
    last = start.left()
    if str(last.nodeName()) != "Subtract" or str(last.right().nodeName()) != "CaseWhen":
        return None
    remainder = last.right().elseValue()
    if remainder.isEmpty():
        return None
    remainder = remainder.get()
    if str(remainder.nodeName()) != "Remainder":
        return None
    slide, shifted = _literal(remainder.right()), remainder.left()
    if slide is None or str(shifted.nodeName()) != "Subtract":
        return None
    offset, ts = _literal(shifted.right()), shifted.left()
    if offset is None or str(ts.nodeName()) != "PreciseTimestampConversion":
        return None
    return ts.child(), duration, slide, offset, back


def _window_alias(items: list[Any]) -> tuple[Any, Any] | None:
    """The alias ``window`` of a window struct among a projection's items, and the struct."""
    for item in items:
        named = str(item.nodeName()) == "Alias" and str(item.name()) == "window"
        if named and _window_struct(item.child()) is not None:
            return item, item.child()
    return None


def _passes_through(items: list[Any], node: Any) -> bool:
    """``items`` are ``node``'s output, in order (the columns beside the window)."""
    output = _seq(node.output())
    return len(items) == len(output) and all(
        _is_attribute(a, str(b.exprId().id())) for a, b in zip(items, output, strict=True)
    )


def _time_window(node: Any) -> tuple[Any, str, tuple[Any, list[str]]] | None:
    """TimeWindowing's expansion of one ``window(t, duration[, slide[, start]])`` under an
    aggregate: the relation below it, the window column's expression id, and the call's
    time column and durations (as intervals); None when ``node`` is no such expansion (a
    tumbling window is ``Project(window AS window, ...) <- Filter(isnotnull(t))``, a sliding
    one ``Filter <- Expand`` of ``ceil(duration / slide)`` windows)."""
    kind = str(node.nodeName())
    if kind == "Project":
        items = _seq(node.projectList())
        found = _window_alias(items)
        below = node.child()
        if found is None or str(below.nodeName()) != "Filter":
            return None
        alias, struct = found
        if not _passes_through([i for i in items if i is not alias], below):
            return None
        parts = _window_struct(struct)
        if parts is None or parts[4] != 0 or parts[1] != parts[2]:
            return None
        time = parts[0]
        condition = below.condition()
        if str(condition.nodeName()) != "IsNotNull" or not condition.child().semanticEquals(time):
            return None
        return _window_call(below.child(), str(alias.exprId().id()), parts)
    if kind == "Filter" and str(node.child().nodeName()) == "Expand":
        expand = node.child()
        output = _seq(expand.output())
        projections = [_seq(p) for p in _seq(expand.projections())]
        if not projections or not output or str(output[0].name()) != "window":
            return None
        structs = [_window_struct(p[0]) for p in projections]
        if any(s is None for s in structs) or any(
            not _passes_through(p[1:], expand.child()) for p in projections
        ):
            return None
        first = structs[0]
        assert first is not None
        time, duration, slide, offset = first[:4]
        if slide <= 0 or len(structs) != -(-duration // slide):
            return None
        # the filter: isnotnull(t) when the slide divides the duration, else the range
        # `t >= window.start AND t < window.end` (of the windows the Expand over-estimates)
        condition = node.condition()
        wanted = "IsNotNull" if duration % slide == 0 else "And"
        if str(condition.nodeName()) != wanted:
            return None
        for i, s in enumerate(structs):
            assert s is not None
            if not s[0].semanticEquals(time) or s[1:] != (duration, slide, offset, i * slide):
                return None
        return _window_call(expand.child(), str(output[0].exprId().id()), first)
    return None


def _window_call(
    below: Any, window_id: str, parts: tuple[Any, int, int, int, int]
) -> tuple[Any, str, tuple[Any, list[str]]] | None:
    time, duration, slide, offset, _ = parts
    args = [duration] if slide == duration and offset == 0 else [duration, slide]
    if offset != 0:
        args.append(offset)
    durations = [_duration(a) for a in args]
    if any(d is None for d in durations):
        return None  # sub-millisecond: no duration of the spec language
    return below, window_id, (time, [d for d in durations if d is not None])


def expression(expr: Any, keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A Catalyst expression as a Connect expression: its SQL as an ``expr()`` string; a
    UDF in it as the UDF (which the lowering reports).  A column keeps its qualifier only
    when it is in ``keep`` (the aliases the node reads directly): an alias below a join or
    a projection does not name the relation the lowering makes of it."""
    nodes = _walk(expr)
    for e in nodes:
        if str(e.nodeName()) in _UDFS:
            try:
                name = str(e.name())
            except Exception:  # a UDF without a name
                name = "a UDF"
            return {"common_inline_user_defined_function": {"function_name": name}}
    text = str(expr.sql())
    for e in nodes:  # Catalyst writes `x BETWEEN a AND b` as between(x, a, b)
        if str(e.nodeName()) == "Between":
            parts = [str(p.sql()) for p in (e.input(), e.lower(), e.upper())]
            text = text.replace(str(e.sql()), f"({parts[0]} BETWEEN {parts[1]} AND {parts[2]})")
    for e in nodes:  # a cast the analyzer added to the type its input already has
        if str(e.nodeName()) == "Cast" and e.child().dataType().equals(e.dataType()):
            text = text.replace(str(e.sql()), f"({e.child().sql()})")
    for e in nodes:
        if str(e.nodeName()) != "AttributeReference":
            continue
        qualifier = [str(q) for q in _seq(e.qualifier())]
        if qualifier and qualifier[-1] not in keep:
            written = str(e.sql())
            text = re.sub(
                r"(?<![\w`.])" + re.escape(written) + r"(?![\w`])",
                lambda _: _quote(str(e.name())),  # noqa: B023 (used at once)
                text,
            )
    return {"expression_string": {"expression": text}}


def _quote(name: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "`" + name.replace("`", "``") + "`"
