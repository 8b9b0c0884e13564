"""The whole shape of a checkpoint snapshot, checked against the plan before any of it is
used (``recovery.Recovery._restore``).

``state.pkl``'s checksum catches damage, not intent: whoever can write the checkpoint
directory can also seal a snapshot of their own making.  Pickle cannot run code here (the
unpickler resolves no name but ``decimal.Decimal``), so what remains is data of the wrong
shape, and this module refuses it: every field of the snapshot, down to each cell of each
row kept in state, must have the type the plan gives it, every container its exact length
or keys, every number its range; and the parts that must agree do (a join's stored key is
the key of its row, an average's sum is null exactly when its count is 0, the ids of a
side's rows are distinct and below its next id).  Both engines write the reference form
(the columnar one converts its frames), so one check serves both.  A snapshot that passes
restores on either engine without an error; one that does not is refused with the path of
the first field at fault.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from functools import singledispatch
from typing import Any

from ...compiler.planning.plan import (
    AggregateNode,
    DedupNode,
    JoinNode,
    PlanNode,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ...compiler.vocabulary import annotate
from ...compiler.vocabulary.types import SqlType
from ..engine.eval import window_arguments
from ..engine.values import json_converter
from ..errors import RunError
from ..query import Engine
from ..rows.aggregate import AggregateOperator
from ..rows.dedup import DedupOperator
from ..rows.join import JoinOperator

INT64 = 2**63
_INT_BOUNDS = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": INT64}
_INT64_KINDS = ("timestamp", "date", "interval")
_PENDING = (
    "batch", "query", "watermark", "data", "rows", "progress", "state_sides", "trace_batch", "late",
)  # fmt: skip
_TOP = ("fingerprint", "backlog", "step", "trace", "engine", "pending", "offsets")
_OPERATOR_METRICS = (
    "relation",
    "numRowsTotal",
    "numRowsUpdated",
    "numRowsRemoved",
    "numRowsDroppedByWatermark",
)
_FILES = ("rows", "progress", "late")  # a file's offset: its SHA-256 beside it
_OFFSETS = (*_FILES, "parquet", "delta", *(f"{k}_sha256" for k in _FILES))

Check = Callable[[Any], str | None]  # a value -> what is wrong with it, or None


class SnapshotError(Exception):
    """A field of the snapshot is not what the plan says; ``where`` is its path."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where = where
        self.problem = problem


def _brief(value: Any) -> str:
    """A value for a message, however large (an integer of thousands of digits has no
    ``repr`` in Python 3.11+)."""
    if type(value) is int and value.bit_length() > 128:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except Exception:
        return _what(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _what(value: Any) -> str:
    if value is None:
        return "null"
    return type(value).__name__


# ------------------------------------------------------------------------- cells


def cell_check(kind: str, window_us: int | None = None, output: bool = False) -> Check:
    """The check of a runtime value of SQL type ``kind`` (nullable): the Python type the
    runtime holds it as, in the range the type and both engines can hold.  ``output``: a
    cell of a join's or aggregate's output row, where a DOUBLE may also be a DECIMAL (the
    plan types a division as DOUBLE; of DECIMALs the runtime computes a DECIMAL, as Spark
    does)."""
    if output and kind in ("double", "float"):
        real, exact = cell_check(kind), cell_check("decimal")
        return lambda v: exact(v) if type(v) is Decimal else real(v)
    if kind in _INT_BOUNDS or kind in _INT64_KINDS:
        bound = _INT_BOUNDS.get(kind, INT64)

        def integer(v: Any) -> str | None:
            if type(v) is not int:
                return f"{kind.upper()} is held as an integer, not {_what(v)}"
            if not -bound <= v < bound:
                return f"{_brief(v)} is out of range for {kind.upper()}"
            return None

        return integer
    if kind in ("double", "float"):
        return lambda v: None if type(v) is float else f"{kind.upper()} is a float, not {_what(v)}"
    if kind == "decimal":

        def decimal(v: Any) -> str | None:
            if type(v) is not Decimal:
                return f"DECIMAL is a Decimal, not {_what(v)}"
            if not v.is_finite():
                return f"{_brief(v)} is not a finite DECIMAL"
            _sign, digits, exponent = v.as_tuple()
            assert isinstance(exponent, int)
            if len(digits) > 38 or exponent < -38 or (v and v.adjusted() >= 38):
                return f"{_brief(v)} has more digits than a DECIMAL holds (38)"
            return None

        return decimal
    if kind in ("string", "binary"):

        def text(v: Any) -> str | None:
            if type(v) is not str:
                return f"{kind.upper()} is a string, not {_what(v)}"
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return "the string holds a lone surrogate"
            return None

        return text
    if kind == "boolean":
        return lambda v: None if type(v) is bool else f"BOOLEAN is a bool, not {_what(v)}"
    if kind == "window":

        def window(v: Any) -> str | None:
            if type(v) is not tuple or len(v) != 2:
                return f"a window is a (start, end) tuple, not {_what(v)}"
            start, end = v
            if type(start) is not int or type(end) is not int:
                return "a window's start and end are integers"
            if not (-INT64 <= start < end < INT64):
                return f"the window ({_brief(start)}, {_brief(end)}) does not end after it starts"
            if window_us is not None and end - start != window_us:
                return f"the window ({start}, {end}) is not {window_us} µs long"
            return None

        return window
    if kind == "array<string>":

        def strings(v: Any) -> str | None:
            if type(v) is not list or any(type(s) is not str for s in v):
                return f"an ARRAY<STRING> is a list of strings, not {_what(v)}"
            return None

        return strings
    if kind == "null":
        return lambda v: f"a NULL column holds nothing but null, not {_what(v)}"
    # a type the runtime keeps as a plain value (none other is planned)
    return lambda v: (
        None
        if type(v) in (int, float, str, bool, Decimal)
        else f"{kind.upper()} is a plain value, not {_what(v)}"
    )


def _nullable(check: Check) -> Check:
    return lambda v: None if v is None else check(v)


def _json_cell_check(kind: str) -> Check:
    """A cell of a pending output row, JSON-ready (``values.json_converter``)."""
    if json_converter(kind) is None:
        return _nullable(cell_check(kind, output=True))
    if kind == "window":

        def window(v: Any) -> str | None:
            if v is None:
                return None
            if type(v) is not dict or list(v) != ["start", "end"]:
                return f"a window is written as {{start, end}}, not {_what(v)}"
            if type(v["start"]) is not str or type(v["end"]) is not str:
                return "a window's start and end are written as text"
            return None

        return window
    return lambda v: None if v is None or type(v) is str else f"{kind} is text, not {_what(v)}"


# ------------------------------------------------------------------------ walker


class _Walk:
    """Checks with a path: ``at(part)`` descends, ``fail(problem)`` raises."""

    def __init__(self) -> None:
        self.path: list[str] = []

    def where(self) -> str:
        text = ""
        for part in self.path:
            text += part if part.startswith("[") else ("." if text else "") + part
        return text or "the snapshot"

    def fail(self, problem: str) -> None:
        raise SnapshotError(self.where(), problem)

    def at(self, part: str | int) -> _Walk:
        self.path.append(f"[{part}]" if isinstance(part, int) else part)
        return self

    def up(self, levels: int = 1) -> None:
        del self.path[-levels:]

    def exact_dict(self, value: Any, keys: Sequence[str], optional: Sequence[str] = ()) -> None:
        if type(value) is not dict:
            self.fail(f"expected a dict, got {_what(value)}")
        missing = [k for k in keys if k not in value]
        extra = [_brief(k) for k in value if k not in keys and k not in optional]
        if missing:
            self.fail(f"lacks {', '.join(f'`{k}`' for k in missing)}")
        if extra:
            self.fail(f"has unknown part(s) {', '.join(extra)}")

    def of_type(self, value: Any, kind: type, what: str) -> None:
        if type(value) is not kind:
            self.fail(f"expected {what}, got {_what(value)}")

    def integer(self, value: Any, low: int = -INT64, high: int = INT64 - 1) -> None:
        if type(value) is not int:
            self.fail(f"expected an integer, got {_what(value)}")
        if not low <= value <= high:
            self.fail(f"{_brief(value)} is out of range ({low}..{high})")

    def optional_integer(self, value: Any, low: int = -INT64, high: int = INT64 - 1) -> None:
        if value is not None:
            self.integer(value, low, high)

    def tuple_of(self, value: Any, length: int, what: str) -> None:
        if type(value) is not tuple or len(value) != length:
            self.fail(f"expected {what}, got {_what(value)}")

    def list_of(self, value: Any, what: str) -> None:
        if type(value) is not list:
            self.fail(f"expected {what}, got {_what(value)}")

    def cells(self, row: Any, checks: Sequence[Check], names: Sequence[str]) -> None:
        """A row: a tuple of exactly one cell per column, each as its type says."""
        if type(row) is not tuple or len(row) != len(checks):
            self.fail(f"expected a row of {len(checks)} column(s), got {_what(row)}")
        for i, (cell, check) in enumerate(zip(row, checks, strict=True)):
            problem = None if cell is None else check(cell)
            if problem is not None:
                self.at(i).fail(f"column `{names[i]}`: {problem}")


# ------------------------------------------------------------------------ snapshot


def _is_sha256(value: Any) -> bool:
    return type(value) is str and len(value) == 64 and not value.strip("0123456789abcdef")


def check_delta_start(value: Any, walk: _Walk | None = None) -> None:
    """A Delta trace's start versions as a checkpoint records them: stream -> version."""
    if walk is None:
        walk = _Walk().at("trace").at("delta_start")
    if type(value) is not dict:
        walk.fail(f"expected a dict, got {_what(value)}")
    for stream, version in value.items():
        if type(stream) is not str:
            walk.fail(f"expected stream names, got {_what(stream)}")
        walk.at(stream).integer(version, 0)
        walk.up()


def check_snapshot(data: Mapping[str, Any], engine: Engine, keep_outputs: bool) -> None:
    """Raise ``SnapshotError`` unless ``data`` is, in every field, a snapshot that
    ``engine``'s plan and relation could have written (``engine`` is a reference engine of
    that plan: its queries and operators give the shapes).  ``keep_outputs``: the run writes
    Parquet, so the pending batch's raw outputs are part of it."""
    walk = _Walk()
    walk.exact_dict(data, _TOP, optional=("pending_outputs",))
    walk.at("fingerprint").of_type(data["fingerprint"], str, "a string")
    walk.up()
    # the run's schedule: a replay's batches back to back, or a batch at a time
    walk.at("backlog").of_type(data["backlog"], bool, "true or false")
    walk.up()
    walk.at("step").integer(data["step"], 0)
    walk.up()
    trace = data["trace"]
    walk.at("trace").exact_dict(trace, ("batches", "sha256"), optional=("delta_start",))
    walk.at("batches").integer(trace["batches"], 0)
    walk.up()
    if not _is_sha256(trace["sha256"]):
        walk.at("sha256").fail("expected 64 hexadecimal digits")
    walk.up()
    if "delta_start" in trace:
        check_delta_start(trace["delta_start"], walk.at("delta_start"))
        walk.up()
    offsets = data["offsets"]
    walk.at("offsets").exact_dict(offsets, (), optional=_OFFSETS)
    for key, value in offsets.items():
        if key.endswith("_sha256"):
            if value is not None and not _is_sha256(value):
                walk.at(key).fail("expected 64 hexadecimal digits or null")
        else:
            walk.at(key).optional_integer(value, 0)
            walk.up()
    walk.up()
    queries = {q.root: q for q in engine.queries}
    _check_engine(walk.at("engine"), data["engine"], engine)
    walk.up()
    pending = data["pending"]
    _check_pending(walk.at("pending"), pending, engine)
    walk.up()
    if keep_outputs != ("pending_outputs" in data):
        walk.fail(
            "`pending_outputs` is there exactly when the run writes Parquet"
            if keep_outputs
            else "has `pending_outputs`, which only a run writing Parquet keeps"
        )
    if keep_outputs:
        query = queries[pending["query"]]
        outputs = data["pending_outputs"]
        walk.at("pending_outputs").exact_dict(outputs, query.outputs)
        for relation in query.outputs:
            names = [name for name, _ in engine.plan.columns_of(relation)]
            checks = _relation_checks(engine, relation)
            rows = outputs[relation]
            walk.at(relation).list_of(rows, "a list of rows")
            for i, row in enumerate(rows):
                walk.at(i).cells(row, checks, names)
                walk.up()
            walk.up()
        walk.up()


def _relation_checks(engine: Engine, relation: str) -> list[Check]:
    """A relation's output row, as runtime values."""
    node = engine.plan.node(relation)
    assert node is not None, relation
    return _output_checks(node, engine)


@singledispatch
def _output_checks(node: PlanNode, engine: Engine) -> list[Check]:
    raise TypeError(f"no output rows of a {type(node).__name__} ({node.name})")


@_output_checks.register
def _(node: JoinNode | AggregateNode, engine: Engine) -> list[Check]:
    return [cell_check(o.type.name, output=True) for o in node.output]


@_output_checks.register
def _(node: DedupNode, engine: Engine) -> list[Check]:
    return _relation_checks(engine, node.input)  # its input's rows, passed through


@_output_checks.register
def _(
    node: StreamNode | UnionNode | ViewNode | TableNode | StaticJoinNode, engine: Engine
) -> list[Check]:
    return [cell_check(kind) for _, kind in engine.plan.columns_of(node.name)]


def _check_engine(walk: _Walk, value: Any, engine: Engine) -> None:
    walk.exact_dict(value, ("cursor", "queries"))
    cursor = value["cursor"]
    walk.at("cursor").tuple_of(cursor, 3, "(trace index, query index, data done)")
    walk.at(0).integer(cursor[0], 0)
    walk.up()
    walk.at(1).integer(cursor[1], 0, len(engine.queries))
    walk.up()
    walk.at(2).of_type(cursor[2], bool, "a bool")
    walk.up(2)
    queries = value["queries"]
    walk.at("queries").exact_dict(queries, [q.root for q in engine.queries])
    for query in engine.queries:
        snapshot = queries[query.root]
        walk.at(query.root).exact_dict(
            snapshot, ("batch_id", "previous_ms", "last_eviction", "watermarks", "operators")
        )
        walk.at("batch_id").integer(snapshot["batch_id"], 0)
        walk.up()
        walk.at("previous_ms").integer(snapshot["previous_ms"])
        walk.up()
        evictions = snapshot["last_eviction"]
        # every operator's eviction watermark once the query has run a batch, none before
        ran = list(query.operators) if snapshot["batch_id"] > 0 else []
        walk.at("last_eviction").exact_dict(evictions, ran)
        for name, ms in evictions.items():
            walk.at(name).optional_integer(ms)
            walk.up()
        walk.up()
        marks = snapshot["watermarks"]
        walk.at("watermarks").exact_dict(marks, ("global", "nodes"))
        walk.at("global").integer(marks["global"])
        walk.up()
        nodes = marks["nodes"]
        walk.at("nodes").list_of(nodes, "a list of watermarks")
        if len(nodes) != len(query.tracker.nodes):
            walk.fail(f"expected {len(query.tracker.nodes)} watermark(s), got {len(nodes)}")
        for i, ms in enumerate(nodes):
            walk.at(i).optional_integer(ms)
            walk.up()
        walk.up(2)
        operators = snapshot["operators"]
        walk.at("operators").exact_dict(operators, list(query.operators))
        for name, op in query.operators.items():
            walk.at(name)
            # the reference engine's operators (``check_snapshot`` is given its engine)
            if isinstance(op, JoinOperator):
                _check_join(walk, operators[name], op)
            elif isinstance(op, DedupOperator):
                _check_dedup(walk, operators[name], op)
            else:
                assert isinstance(op, AggregateOperator)
                _check_aggregate(walk, operators[name], op)
            walk.up()
        walk.up(2)
    walk.up()


def _side_checks(op: JoinOperator, side: str) -> tuple[list[Check], list[str]]:
    node_side = op.node.left if side == "left" else op.node.right
    checks = [cell_check(c.type.name) for c in node_side.columns]
    checks += [cell_check("window", w.duration_us) for w in node_side.windows]
    names = [c.name for c in node_side.columns] + [w.name for w in node_side.windows]
    return checks, names


def _same_key(a: Any, b: Any) -> bool:
    """Keys compare equal, a NaN equal to a NaN (Spark normalises NaN keys)."""

    def norm(v: Any) -> Any:
        if type(v) is float and math.isnan(v):
            return "NaN"
        if type(v) is tuple:
            return tuple(norm(x) for x in v)
        return v

    return bool(norm(a) == norm(b))


def _check_join(walk: _Walk, value: Any, op: JoinOperator) -> None:
    walk.exact_dict(value, ("left", "right"))
    for side, key_of in (("left", op.left_key), ("right", op.right_key)):
        walk.at(side)
        _check_side(walk, value[side], key_of, *_side_checks(op, side))
        walk.up()


def _check_side(
    walk: _Walk,
    value: Any,
    key_of: Callable[[Any], Any],
    checks: list[Check],
    names: list[str],
) -> None:
    walk.exact_dict(value, ("next_id", "values"))
    walk.at("next_id").integer(value["next_id"], 0)
    walk.up()
    next_id = value["next_id"]
    values = value["values"]
    walk.at("values").list_of(values, "a list of stored rows")
    seen: set[int] = set()
    for i, entry in enumerate(values):
        walk.at(i).tuple_of(entry, 4, "(key, id, row, matched)")
        key, ident, row, matched = entry
        walk.at(1).integer(ident, 0, next_id - 1)
        if ident in seen:
            walk.fail(f"id {ident} is stored twice")
        seen.add(ident)
        walk.up()
        walk.at(2).cells(row, checks, names)
        walk.up()
        walk.at(3).of_type(matched, bool, "a bool")
        walk.up()
        try:
            expected = key_of(row)
        except (RunError, TypeError, ValueError, ArithmeticError, IndexError) as err:
            walk.at(0).fail(f"the key of the stored row cannot be computed: {err}")
        if not _same_key(key, expected):
            walk.at(0).fail("the stored key is not the key of its row")
        walk.up()
    walk.up()


def _accumulator_check(op: AggregateOperator, j: int) -> Callable[[Any], str | None]:
    acc = op.store.accumulators[j]
    value = _nullable(cell_check(acc.kind))
    if acc.decimal is not None:  # a DECIMAL sum that overflowed its type is NaN (sticky)
        finite = value
        value = lambda v: None if type(v) is Decimal and v.is_nan() else finite(v)  # noqa: E731
    if acc.name == "count":
        return lambda s: (
            None
            if type(s) is list and len(s) == 1 and type(s[0]) is int and 0 <= s[0] < INT64
            else "count() keeps [a count of 0 or more]"
        )
    if acc.name == "avg":

        def avg(s: Any) -> str | None:
            if type(s) is not list or len(s) != 2:
                return "avg() keeps [sum, count]"
            if type(s[1]) is not int or not 0 <= s[1] < INT64:
                return "avg()'s count is an integer of 0 or more"
            if (s[0] is None) != (s[1] == 0):
                return "avg()'s sum is null exactly when its count is 0"
            return value(s[0])

        return avg
    if acc.name == "approx_count_distinct":
        element = cell_check(acc.kind)

        def distinct(s: Any) -> str | None:
            if type(s) is not list or len(s) != 1 or type(s[0]) is not list:
                return "approx_count_distinct() keeps [a list of the values seen]"
            for v in s[0]:
                if v == "NaN" and acc.kind in ("double", "float"):
                    continue
                problem = "null is not counted" if v is None else element(v)
                if problem is not None:
                    return problem
            try:
                if len(set(s[0])) != len(s[0]):
                    return "approx_count_distinct()'s values are not distinct"
            except TypeError:
                return "approx_count_distinct()'s values cannot be told apart"
            return None

        return distinct

    def single(s: Any) -> str | None:
        if type(s) is not list or len(s) != 1:
            return f"{acc.name}() keeps [its value]"
        return value(s[0])

    return single


def _key_checks(op: AggregateOperator) -> list[Check]:
    checks = []
    for key in op.node.group_by:
        if annotate.is_call(key, "window"):
            checks.append(cell_check("window", window_arguments(key)[0]))
        else:
            found = annotate.sql_type(key)
            checks.append(cell_check(found.name if isinstance(found, SqlType) else "unknown"))
    return checks


def _check_aggregate(walk: _Walk, value: Any, op: AggregateOperator) -> None:
    walk.exact_dict(value, ("groups", "counter"))
    walk.at("counter").integer(value["counter"], 0)
    walk.up()
    key_checks = _key_checks(op)
    key_names = [f"group by {i + 1}" for i in range(len(key_checks))]
    states = [_accumulator_check(op, j) for j in range(len(op.store.accumulators))]
    groups = value["groups"]
    walk.at("groups").list_of(groups, "a list of groups")
    seen: set[Any] = set()
    for i, group in enumerate(groups):
        walk.at(i).tuple_of(group, 2, "(key, states)")
        key, accs = group
        walk.at(0).cells(key, key_checks, key_names)
        try:
            if key in seen:
                walk.fail("the group is kept twice")
            seen.add(key)
        except TypeError:
            walk.fail("the group's key cannot be told apart")
        walk.up()
        walk.at(1).list_of(accs, "a list of aggregate states")
        if len(accs) != len(states):
            walk.fail(f"expected {len(states)} aggregate state(s), got {len(accs)}")
        for j, (state, check) in enumerate(zip(accs, states, strict=True)):
            problem = check(state)
            if problem is not None:
                walk.at(j).fail(problem)
        walk.up(2)
    walk.up()


def _check_dedup(walk: _Walk, value: Any, op: DedupOperator) -> None:
    """A dedup's keys: each its dedup columns' values and its eviction time (µs, or null
    when the state is never evicted), no key twice."""
    from ..rows.dedup import _canonical

    walk.exact_dict(value, ("keys",))
    key_checks = [cell_check(c.type.name) for c in op.node.state.key]
    names = list(op.node.keys)
    never = op.node.state.eviction == "never"
    keys = value["keys"]
    walk.at("keys").list_of(keys, "a list of keys")
    seen: set[Any] = set()
    for i, entry in enumerate(keys):
        walk.at(i).tuple_of(entry, 2, "(key, eviction time)")
        values, when = entry
        walk.at(0).cells(values, key_checks, names)
        try:
            canonical = _canonical(values, op.node.float_keys == "bitwise")
            if canonical in seen:
                walk.fail("the key is kept twice")
            seen.add(canonical)
        except TypeError:
            walk.fail("the key cannot be told apart")
        walk.up()
        if never and when is not None:
            walk.at(1).fail("a key of a state never evicted has no eviction time")
        elif not never:
            walk.at(1).optional_integer(when)
            walk.up()
        walk.up()
    walk.up()


def _check_pending(walk: _Walk, value: Any, engine: Engine) -> None:
    walk.exact_dict(value, _PENDING)
    walk.at("batch").integer(value["batch"], 0)
    walk.up()
    queries = {q.root: q for q in engine.queries}
    query = queries.get(value["query"]) if type(value["query"]) is str else None
    if query is None:
        walk.at("query").fail(f"{_brief(value['query'])} is not a query of this run")
    watermark = value["watermark"]
    if watermark is not None and type(watermark) is not str:
        walk.at("watermark").fail(f"expected text or null, got {_what(watermark)}")
    walk.at("data").of_type(value["data"], bool, "a bool")
    walk.up()
    trace_batch = value["trace_batch"]
    walk.at("trace_batch").optional_integer(trace_batch)
    walk.up()
    assert query is not None
    rows = value["rows"]
    walk.at("rows").list_of(rows, "a list of (relation, row)")
    columns: dict[str, tuple[list[str], list[Check]]] = {}
    for relation in query.outputs:
        layout = engine.plan.columns_of(relation)
        columns[relation] = (
            [name for name, _ in layout],
            [_json_cell_check(kind) for _, kind in layout],
        )
    for i, entry in enumerate(rows):
        walk.at(i).tuple_of(entry, 2, "(relation, row)")
        relation, row = entry
        if type(relation) is not str or relation not in columns:
            walk.at(0).fail(f"{_brief(relation)} is not an output of query `{query.root}`")
        names, checks = columns[relation]
        walk.at(1)
        if type(row) is not dict or list(row) != names:
            walk.fail(f"expected a row of the columns of `{relation}` in order")
        for name, check in zip(names, checks, strict=True):
            problem = check(row[name])
            if problem is not None:
                walk.at(name).fail(problem)
        walk.up(2)
    walk.up()
    _check_progress(walk.at("progress"), value["progress"], value, query, len(engine.queries))
    walk.up()
    sides = value["state_sides"]
    joins = [name for name, op in query.operators.items() if isinstance(op, JoinOperator)]
    walk.at("state_sides").exact_dict(sides, joins)
    for name in joins:
        pair = sides[name]
        walk.at(name).tuple_of(pair, 2, "(left rows, right rows)")
        for i in (0, 1):
            walk.at(i).integer(pair[i], 0)
            walk.up()
        walk.up()
    walk.up()
    _check_late(walk.at("late"), value["late"], value["batch"])
    walk.up()


def _check_late(walk: _Walk, late: Any, batch: int) -> None:
    """The pending batch's ``--late-rows`` lines (null: the run kept none): JSON objects,
    one a line, each of that batch."""
    if late is None:
        return
    if type(late) is not str:
        walk.fail(f"expected the late rows' lines or null, got {_what(late)}")
    if late and not late.endswith("\n"):
        walk.fail("the late rows' lines end in a line feed")
    for number, line in enumerate(late[:-1].split("\n") if late else []):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if type(record) is not dict or record.get("batch") != batch:
            walk.at(number).fail(f"expected a late row of batch {batch} as a JSON object")


def _check_progress(walk: _Walk, value: Any, pending: Any, query: Any, queries: int) -> None:
    keys: tuple[str, ...] = ("batch", "query", "watermark", "operators")
    if queries == 1:  # one query: its progress lines name none
        keys = ("batch", "watermark", "operators")
    walk.exact_dict(value, keys)
    if list(value) != list(keys):
        walk.fail(f"expected its parts in the order {', '.join(keys)}")
    if value["batch"] != pending["batch"] or type(value["batch"]) is not int:
        walk.at("batch").fail("is not the pending batch's id")
    if queries > 1 and value["query"] != query.root:
        walk.at("query").fail("is not the pending batch's query")
    if value["watermark"] != pending["watermark"]:
        walk.at("watermark").fail("is not the pending batch's watermark")
    operators = value["operators"]
    walk.at("operators").list_of(operators, "a list of operator metrics")
    if len(operators) != len(query.report_order):
        walk.fail(f"expected {len(query.report_order)} operator(s), got {len(operators)}")
    for i, (metrics, name) in enumerate(zip(operators, query.report_order, strict=True)):
        walk.at(i).exact_dict(metrics, _OPERATOR_METRICS)
        if list(metrics) != list(_OPERATOR_METRICS):
            walk.fail(f"expected its parts in the order {', '.join(_OPERATOR_METRICS)}")
        if metrics["relation"] != name:
            walk.at("relation").fail(f"expected `{name}`")
        for key in _OPERATOR_METRICS[1:]:
            walk.at(key).integer(metrics[key], 0)
            walk.up()
        walk.up()
    walk.up()
