"""Capacity before deployment (`sjoin plan --rates`): what each stateful operator will hold
at given input rates, derived from the Plan alone.

The model is a steady state of evenly arriving, in-order rows whose event time is the time
they arrive (each stream's event time advances at the wall clock), batches every ``trigger``:

* every stream's watermark is its maximum event time minus its delay, the operator's eviction
  watermark the global one (``min`` policy: the largest delay of the query's streams; ``max``:
  the smallest), computed from the previous batch (``WatermarkUse``), so a data batch evicts
  with a watermark one trigger behind the rows it adds;
* a join side keeps a row while the plan's ``StateRule`` does not evict it: value eviction
  keeps ``delay + trigger - offset`` of event time, key eviction on a window keeps the windows
  whose end the watermark has not passed (on average half a window more), a side that is
  never evicted keeps every row: it grows without limit, at its input rate (W001);
* state bytes are Spark's: per stored row an entry in the side's ``keyWithIndexToValue`` store
  (key: the join keys and an index, value: the stored columns and the matched flag), per
  distinct key one in ``keyToNumValues`` (the key, and a count), each an ``UnsafeRow`` pair
  (null bit set, an 8-byte slot per field, variable-length data word-aligned) plus the HDFS
  state store's per-entry overhead in its in-memory maps, and a fixed cost per store; both
  overheads were measured on Spark 4.3.0 (``benchmarks/capacity.py --measure``, docs/capacity.md);
* output rows per second assume uniformly distributed keys (``--keys N``): a row meets the
  other side's rows of its key inside the time range (a Poisson count), an outer join's
  preserved row that meets none comes out null-padded when its side evicts it.

* a dedup keeps a key per distinct value of its dedup columns while its ``DedupState`` holds
  it (``_Model.dedup``); the relations without state carry rates up: a union the sum of its
  inputs', a view its input's, a stream-static join its stream side's.

Filters are assumed to keep every row (their selectivity is not in the spec), strings to be
``string_bytes`` long.  Nothing here runs or imports Spark: the CLI and the run report read
the result (``Capacity``), ``capacity_json`` and ``capacity_text`` render it.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial, singledispatch
from typing import Any, Literal

from sqlglot import exp

from ..planning.plan import (
    OPERATOR_KINDS,
    AggregateNode,
    DedupNode,
    InputWatermark,
    JoinNode,
    Plan,
    PlanNode,
    Side,
    StaticJoinNode,
    StreamNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from ..vocabulary import annotate
from ..vocabulary.types import (
    BIGINT,
    BOOLEAN,
    SKETCH,
    SqlType,
    duration_ms,
    format_ms,
    is_digits,
    is_number_text,
)
from .capacity_groups import Arrivals, Groups, phases, point_state, seen_by, window_state

# ---------------------------------------------------------------- measured constants
# The HDFS-backed state store (HDFSBackedStateStoreProvider) keeps each version's entries in a
# ConcurrentHashMap of UnsafeRow pairs and reports as memoryUsedBytes the SizeEstimator size of
# the versions it keeps loaded (spark.sql.streaming.maxBatchesToRetainInMemory, 2): per entry
# the map's node and table slot, twice, and the two UnsafeRow objects with their byte arrays'
# headers; per store the maps and the provider's bookkeeping.  Fitted by least squares over
# the runs of `benchmarks/capacity.py --measure` on Spark 4.3.0 (docs/capacity.md).
ENTRY_OVERHEAD_BYTES = 199.5  # measured: see above
STORE_OVERHEAD_BYTES = 1485.0  # measured: per state store instance (4 per join per partition)
# An aggregate's store holds an entry per group (key: the grouping keys, value: the aggregation
# buffers), in the same maps: the bytes per group beyond its UnsafeRow pair, fitted by least
# squares over the runs of `benchmarks/capacity.py --measure-aggregates` on Spark 4.3.0 given
# the store's fixed cost above.  (The groups a batch rewrites cost more in principle, a new
# pair beside the previous version's; the runs do not tell that apart from the noise of
# SizeEstimator's sampling, docs/capacity.md.)
GROUP_OVERHEAD_BYTES = 207.7  # measured: see above
MEASURED_ON = "Spark 4.3.0, HDFS-backed state store"

DEFAULT_STRING_BYTES = 16  # an assumption, printed with the prediction: --string-bytes
STORES_PER_JOIN_PARTITION = 4  # per side: keyToNumValues and keyWithIndexToValue
COUNT_ROW_BYTES = 16  # keyToNumValues' value: one BIGINT (8-byte bit set + 8-byte slot)
# approx_count_distinct's buffer (HyperLogLogPlusPlus at its default relative error 0.05):
# 2^9 registers of 6 bits, 10 to a 64-bit word: 52 BIGINT fields
SKETCH_WORDS = 52

MAX_RATE_DIGITS = 12
MAX_KEY_DIGITS = 15
_UNIT_SECONDS = {
    "s": 1, "sec": 1, "second": 1,
    "m": 60, "min": 60, "minute": 60,
    "h": 3600, "hour": 3600,
    "d": 86400, "day": 86400,
}  # fmt: skip
_TRIGGER_UNITS = {
    "ms": "ms", "s": "seconds", "sec": "seconds", "m": "minutes", "min": "minutes",
    "h": "hours", "d": "days",
}  # fmt: skip
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TRIGGER = re.compile(r"([0-9]+(?:\.[0-9]+)?) ?([a-z]+)")


class CapacityError(ValueError):
    """A bad ``--rates``, ``--keys``, ``--trigger`` or ``--string-bytes`` value: ``option``
    names the option, the message says what it takes (fit for the user)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"{option} {message}")
        self.option = option


def _shown(text: str) -> str:
    return repr(text[:20] + ("..." if len(text) > 20 else ""))


def parse_rates(text: str) -> dict[str, float]:
    """``impressions=5000/s,clicks=200/s`` -> rows per second per stream.  A rate is ASCII
    digits with an optional fraction, per s, min, h or d (also written out: second...)."""
    usage = (
        "takes STREAM=ROWS/UNIT[,...] with ROWS in the digits 0-9 (a fraction allowed) and "
        "UNIT s, min, h or d, e.g. impressions=5000/s,clicks=200/s"
    )
    rates: dict[str, float] = {}
    if not text:
        raise CapacityError("--rates", f"{usage}, not an empty value")
    for part in text.split(","):
        name, eq, rest = part.partition("=")
        amount, slash, unit = rest.partition("/")
        whole = amount.partition(".")[0]
        if (
            not eq
            or not slash
            or _NAME.fullmatch(name) is None
            or not is_number_text(amount)
            or len(whole) > MAX_RATE_DIGITS
            or unit not in _UNIT_SECONDS
        ):
            raise CapacityError("--rates", f"{usage}, not {_shown(part)}")
        if name in rates:
            raise CapacityError("--rates", f"gives stream `{name}` twice")
        rates[name] = float(amount) / _UNIT_SECONDS[unit]
    return rates


def parse_count(option: str, text: str, digits: int = MAX_KEY_DIGITS) -> int:
    """A positive count in ASCII digits (``--keys``, ``--string-bytes``)."""
    if not is_digits(text) or len(text) > digits or int(text) == 0:
        raise CapacityError(
            option, f"takes a count above 0 in 1 to {digits} of the digits 0-9, not {_shown(text)}"
        )
    return int(text)


def parse_keys(text: str) -> tuple[int | None, dict[str, int]]:
    """``--keys``: ``5000`` (every join and grouping key column), or a count per column,
    ``order_id=5000000,merchant_id=5000``, with a plain count beside them for the columns not
    named: -> (that count or None, column -> count).  The names are checked against the
    spec's columns by ``predict``."""
    usage = (
        "takes N or COLUMN=N[,...] (N a count above 0 in 1 to "
        f"{MAX_KEY_DIGITS} of the digits 0-9; a plain N counts every column not named), e.g. "
        "order_id=5000000,merchant_id=5000"
    )
    default: int | None = None
    columns: dict[str, int] = {}
    if not text:
        raise CapacityError("--keys", f"{usage}, not an empty value")
    for part in text.split(","):
        name, eq, count = part.rpartition("=")
        if not eq:
            if default is not None:
                raise CapacityError("--keys", "gives a plain count twice: name the columns")
            if not is_digits(count):
                raise CapacityError("--keys", f"{usage}, not {_shown(part)}")
            default = parse_count("--keys", count)
            continue
        if _NAME.fullmatch(name) is None or not is_digits(count):
            raise CapacityError("--keys", f"{usage}, not {_shown(part)}")
        if name in columns:
            raise CapacityError("--keys", f"gives column `{name}` twice")
        columns[name] = parse_count(f"--keys {name}=", count)
    return default, columns


def parse_trigger(text: str) -> int:
    """``10s``, ``500ms``, ``2min``, ``1h`` or the spec's form ``10 seconds`` -> milliseconds
    (0: batches back to back)."""
    m = _TRIGGER.fullmatch(text)
    unit = None if m is None else _TRIGGER_UNITS.get(m[2], m[2])
    ms = None if m is None or unit is None else duration_ms(m[1], unit)
    if ms is None:
        raise CapacityError(
            "--trigger",
            "takes a duration in the digits 0-9 and a unit (ms, s, min, h, d), e.g. 10s or "
            f"'10 seconds', not {_shown(text)}",
        )
    return ms


# ---------------------------------------------------------------- row layout


def _round8(n: int) -> int:
    return (n + 7) // 8 * 8


def field_bytes(kind: SqlType, string_bytes: int) -> int:
    """The bytes a value of ``kind`` takes in an UnsafeRow: its 8-byte slot, plus its
    variable-length data word-aligned (a string's UTF-8 bytes, a DECIMAL of precision above
    18 as 16 bytes, a window struct as a nested row of two timestamps)."""
    name = kind.name
    if name in ("string", "binary"):
        return 8 + _round8(string_bytes)
    if name == "decimal":
        precision = kind.params[0] if kind.params else 10
        return 8 + (16 if precision > 18 else 0)
    if name == "window":
        return 8 + 24  # struct<start, end>: an 8-byte bit set and two slots
    if name.startswith("array"):
        return 8 + 8 + _round8(4 * 8 + 4 * (string_bytes + 8))  # a few elements: rough
    return 8


def window_tail_ms(lag_ms: float, length_ms: int, slide_ms: int, trigger_ms: int) -> float:
    """How much longer than ``lag_ms`` (how far the eviction watermark is behind the newest
    event time) a row stays in state when its key is a window, on average over batches.

    A row stays until the watermark passes its window's end.  Windows and processing-time
    triggers are both aligned to the epoch, so the batch ends fall on a lattice: over the
    batches the watermark's offset inside a window takes the values of the lattice of
    ``g = gcd(trigger, slide)``, just below each point (the newest row is just before the
    batch's end).  Averaged: ``(slide - g) / 2`` plus the distance from the watermark up to
    the next lattice point, ``g - lag mod g``; sliding windows keep each copy a further
    ``(length - slide) / 2`` (approximate).  Continuous batches (trigger 0): half a window."""
    if trigger_ms <= 0 or slide_ms <= 0:
        return length_ms / 2
    g = math.gcd(trigger_ms, slide_ms)
    return (slide_ms - g) / 2 + (g - int(lag_ms) % g) + (length_ms - slide_ms) / 2


def unsafe_row_bytes(kinds: list[SqlType], string_bytes: int) -> int:
    """An UnsafeRow of fields of ``kinds``: the null bit set (8 bytes per 64 fields) and
    each field's bytes."""
    return 8 * ((len(kinds) + 63) // 64) + sum(field_bytes(k, string_bytes) for k in kinds)


def buffer_kinds(types: tuple[SqlType, ...] | list[SqlType]) -> list[SqlType]:
    """An aggregation buffer's fields (``AggregateNode.buffer_types``), a sketch as its
    words."""
    out: list[SqlType] = []
    for kind in types:
        out.extend([BIGINT] * SKETCH_WORDS if kind == SKETCH else [kind])
    return out


# ---------------------------------------------------------------- the prediction


@dataclass(frozen=True, slots=True)
class Assumptions:
    rates: dict[str, float]  # rows per second per stream
    keys: int | None  # distinct join / group keys, uniform; None: every row its own key
    trigger_ms: int  # time between batches
    trigger_source: str  # "--trigger", "the spec's trigger", "none: back to back"
    string_bytes: int
    partitions: int
    state_store: str
    # distinct values per column (``--keys COLUMN=N``), over ``keys`` for those columns
    key_columns: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SideCapacity:
    side: str  # "left" / "right"
    relation: str
    alias: str
    rate: float | None  # rows per second reaching the side (None: unknown)
    bounded: bool
    retention_ms: float | None  # event time a row stays in state at steady state
    rows: float | None  # steady-state state rows (None when unbounded or unknown)
    keys: float | None  # distinct keys in state
    row_bytes: int  # keyWithIndexToValue key + value UnsafeRow bytes per stored row
    key_bytes: int  # keyToNumValues key + value UnsafeRow bytes per distinct key
    bytes: float | None  # steady-state bytes (HDFS store), its stores' fixed cost aside
    rows_per_hour: float | None  # growth when unbounded
    bytes_per_hour: float | None
    reason: str | None  # why unbounded, from the plan


@dataclass(frozen=True, slots=True)
class AggregateCapacity:
    """What an aggregate keeps: a group per key (and window) that has a row."""

    mode: str  # append, update or complete
    input_rate: float | None  # rows per second reaching it (None: not predicted)
    grouping: str  # "window", "time" (an event time itself) or "keys" (no time)
    window_ms: float | None
    slide_ms: float | None
    lag_ms: float | None  # its eviction watermark behind the newest event time (None: none)
    groups_per_window: float | None  # a window's groups once all its rows are in
    updated_per_batch: float | None  # groups a batch updates (numRowsUpdated)
    key_bytes: int  # the state's key UnsafeRow: the grouping keys
    value_bytes: int  # its value UnsafeRow: the aggregation buffers
    emission_ms: tuple[float, float] | None  # append: after a window's end, it comes out
    reason: str | None  # why its state never shrinks


@dataclass(frozen=True, slots=True)
class DedupCapacity:
    """What a dedup keeps: a key per distinct value of its dedup columns while it is held."""

    method: str  # dropDuplicates or dropDuplicatesWithinWatermark
    eviction: str  # the plan's DedupState.eviction: key, expiry or never
    input_rate: float | None  # rows per second reaching it (None: unknown)
    retention_ms: float | None  # event time a key stays (None: never evicted)
    key_values: int | None  # --keys values of its dedup columns besides a time (None: each row)
    key_bytes: int  # the state's key UnsafeRow: the dedup columns
    value_bytes: int  # its value UnsafeRow: empty, or expiresAtMicros
    reason: str | None  # why it is never evicted


def _filled(n: float, rate: float, elapsed_ms: float) -> float:
    """Distinct keys among the rows of ``elapsed_ms`` at ``rate`` drawn from ``n`` values."""
    return n * -math.expm1(-rate * elapsed_ms / 1000 / n)


@dataclass(frozen=True, slots=True)
class _Time:
    """An aggregate's time grouping: a window of ``column`` (None length: the column itself)."""

    column: str
    length_ms: float | None
    slide_ms: float | None
    start_ms: float


def _linear(per_second: float) -> Callable[[float], float]:
    return lambda elapsed_ms: per_second * elapsed_ms / 1000


def _time_to(groups: Groups, target: float) -> float:
    """The event time until an aggregate that never evicts holds ``target`` groups."""
    if target <= 0:
        return 0.0
    hi = 1000.0
    while seen_by(groups, hi) < target and hi < 1e13:
        hi *= 2
    lo = hi / 2
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if seen_by(groups, mid) < target else (lo, mid)
    return hi


@dataclass(frozen=True, slots=True)
class OperatorCapacity:
    name: str
    kind: str  # "join" or "aggregate"
    sides: tuple[SideCapacity, ...]
    rows: float | None
    bytes: float | None  # with the stores' fixed cost
    partition_bytes: float | None  # bytes per used shuffle partition
    bounded: bool
    warm_up_ms: float | None  # event time until the state is steady
    rows_per_hour: float | None
    bytes_per_hour: float | None
    output_per_second: float | None
    null_latency_ms: dict[str, tuple[float, float]]  # preserved side -> (min, max)
    notes: tuple[str, ...]
    aggregate: AggregateCapacity | None = None
    dedup: DedupCapacity | None = None
    # state rows after an elapsed event time, for a state that grows (or fills up) for ever
    rows_at: Callable[[float], float] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Capacity:
    assumptions: Assumptions
    operators: tuple[OperatorCapacity, ...]
    notes: tuple[str, ...] = field(default=())


def predict(
    plan: Plan,
    rates: dict[str, float],
    *,
    keys: int | None = None,
    trigger_ms: int | None = None,
    string_bytes: int = DEFAULT_STRING_BYTES,
    trigger_source: str = "--trigger",
    key_columns: dict[str, int] | None = None,
) -> Capacity:
    """The steady state of every stateful operator of ``plan`` at ``rates`` (rows/s per
    stream).  A rate for a name that is not a stream of the spec, or no rate for a stream
    that feeds a stateful operator, is a ``CapacityError`` of ``--rates``; ``key_columns``
    naming no column of the spec, one of ``--keys``."""
    streams = {s.name: s for s in plan.streams}
    key_columns = dict(key_columns or {})
    unused = _check_key_columns(plan, key_columns)
    unknown = sorted(set(rates) - set(streams))
    if unknown:
        known = ", ".join(sorted(streams)) or "none"
        raise CapacityError(
            "--rates", f"names `{unknown[0]}`, which is not a stream of the spec (streams: {known})"
        )
    stateful = list(plan.operators)
    needed = sorted({s for n in stateful for s in _streams_under(plan, n.name)} - set(rates))
    if needed:
        raise CapacityError(
            "--rates", f"gives no rate for stream `{needed[0]}`, which feeds a stateful operator"
        )
    if trigger_ms is not None:
        source = trigger_source
    else:
        trigger_ms, source = _spec_trigger(plan)
    assumptions = Assumptions(
        rates=dict(rates),
        keys=keys,
        trigger_ms=trigger_ms,
        trigger_source=source,
        string_bytes=string_bytes,
        partitions=plan.settings.shuffle_partitions,
        state_store=plan.settings.state_store,
        key_columns=key_columns,
    )
    model = _Model(plan, assumptions, streams)
    operators: list[OperatorCapacity] = []
    for node in plan.nodes:  # in the spec's order: a relation's inputs come before it
        found = _step(node, model)
        if found is not None:
            operators.append(found)
    notes = ["filters are assumed to keep every row (their selectivity is not in the spec)"]
    notes.extend(model.passed_notes)
    if keys is None and not key_columns:
        notes.append("no --keys: every row taken as its own key (bytes an upper bound)")
    elif keys is None and model.uncounted:
        notes.append(
            "no plain --keys count: a key column not named in --keys taken as every row its own key"
        )
    notes.extend(
        f"--keys names `{c}`, which is no join key and no grouping key: it changes nothing"
        for c in unused
    )
    if plan.settings.state_store != "hdfs":
        notes.append(
            f"the spec uses the {plan.settings.state_store} state store: bytes are what the "
            "HDFS-backed store would hold; RocksDB reports its own memory"
        )
    return Capacity(assumptions, tuple(operators), tuple(notes))


def _spec_trigger(plan: Plan) -> tuple[int, str]:
    """The spec's time between batches, and where it comes from."""
    if plan.settings.trigger not in ("", "available_now", "once"):
        amount, _, unit = plan.settings.trigger.partition(" ")
        return duration_ms(amount, unit) or 0, "the spec's trigger"
    return 0, "none: batches back to back"


@dataclass(frozen=True, slots=True)
class AggregateLag:
    """How far an aggregate's eviction watermark runs behind the newest event time of its
    input at steady state (``sjoin plan`` without ``--rates``): its streams' delay, a
    trigger or two (the watermark a batch evicts with is the previous batch's), less the
    offset of the joins' state watermarks below it; or why it has none."""

    lag_ms: float | None
    delay_ms: float | None  # its watermark nodes' delay (the policy's pick)
    trigger_ms: int
    trigger_source: str
    offset_ms: float  # the joins' state offset below it (0: read from streams)
    reason: str | None  # why no group is ever evicted
    windowed: bool  # its time grouping is a window (else an event time itself, or none)
    # the relation whose output carries the watermark defined on it that sets ``delay_ms``
    # (`j AS a watermark t delay D`); None: a stream's delay sets it
    marked: str | None = None


def aggregate_lag(plan: Plan, node: AggregateNode) -> AggregateLag:
    """``node``'s watermark lag, the model of ``predict`` without rates (the spec's
    trigger, else batches back to back)."""
    trigger_ms, source = _spec_trigger(plan)
    streams = {s.name: s for s in plan.streams}
    a = Assumptions({}, None, trigger_ms, source, DEFAULT_STRING_BYTES, 1, "hdfs")
    model = _Model(plan, a, streams)
    delay = model.delay_ms(node.name)
    reason = model.no_eviction(node, delay)
    offset = model.offset(node.input) if node.watermarks.eviction.source == "propagated" else 0.0
    lag = None if reason is not None else model.lag(node, delay)
    time, _ = model.grouping(node)
    windowed = time is not None and time.length_ms is not None
    stream_delays = [
        s.delay_ms or 0
        for s in (streams[n] for n in _streams_under(plan, node.name))
        if s.watermark_column is not None
    ]
    marked = next(
        (
            relation
            for relation, mark in model.marks(node.name)
            if mark.delay_ms == delay and delay not in stream_delays
        ),
        None,
    )
    return AggregateLag(lag, delay, trigger_ms, source, offset, reason, windowed, marked)


def _key_names(expr: exp.Expression) -> list[str]:
    return [c.name for c in expr.find_all(exp.Column)]


def _check_key_columns(plan: Plan, key_columns: dict[str, int]) -> list[str]:
    """``CapacityError`` of ``--keys`` for a name that is no column of the spec (with a
    did-you-mean); the names that are no join key and no grouping key (they change
    nothing), in their order."""
    columns: list[str] = []
    used: set[str] = set()
    for node in plan.nodes:
        names = [name for name, _ in node.layout]
        used.update(_key_columns(node))
        columns.extend(n for n in names if n not in columns)
    for name in key_columns:
        if name not in columns:
            close = difflib.get_close_matches(name, columns, n=1, cutoff=0.6)
            hint = f"did you mean `{close[0]}`? " if close else ""
            shown = ", ".join(columns[:30]) + (", ..." if len(columns) > 30 else "")
            raise CapacityError(
                "--keys",
                f"names `{name}`, which is no column of the spec; {hint}(columns: {shown})",
            )
    return [n for n in key_columns if n not in used]


@singledispatch
def _key_columns(node: PlanNode) -> Iterable[str]:
    """The columns a stateful operator's state key reads (what ``--keys`` counts): a join's
    key pairs', an aggregate's grouping keys', a dedup's columns; a relation without state
    has none (a stream-static join's keys store nothing)."""
    return ()


@_key_columns.register
def _(node: JoinNode) -> Iterable[str]:
    return (n for pair in node.keys for k in pair for n in _key_names(k))


@_key_columns.register
def _(node: AggregateNode) -> Iterable[str]:
    return (n for k in node.group_by for n in _key_names(k))


@_key_columns.register
def _(node: DedupNode) -> Iterable[str]:
    return node.keys


def _marks_under(plan: Plan, name: str) -> list[tuple[str, InputWatermark]]:
    """The watermarks defined on the inputs of ``name`` and of the relations below it
    (``j AS a watermark t delay D``): (the relation whose output carries it, its node),
    each relation once, depth first, left before right."""
    node = plan.node(name)
    found = []
    for below in [] if node is None else [node, *plan.upstream(name)]:
        relations = dict(below.inputs)
        found += [(relations[input_name], mark) for input_name, mark in below.input_watermarks]
    return found


def _streams_under(plan: Plan, name: str) -> set[str]:
    return {n.name for n in plan.walk(name) if isinstance(n, StreamNode)}


class _Model:
    def __init__(self, plan: Plan, a: Assumptions, streams: dict[str, StreamNode]) -> None:
        self.plan = plan
        self.a = a
        self.streams = streams
        self.output: dict[str, float | None] = {}
        self.warm: dict[str, float] = {}  # per operator: event time until it is steady
        self.uncounted = False  # a key column had no --keys count (every row its own key)
        self.passed_notes: list[str] = []  # what the stateless relations' rates assume

    def count_of(self, names: list[str]) -> int | None:
        """Distinct values of the columns ``names`` together: the counts of those named in
        ``--keys COLUMN=N`` multiplied, and the plain ``--keys N`` once for all the others
        together (so a plain N alone means N values, as it always did); None when a column
        has no count (every row its own key)."""
        return self._product([self.a.key_columns.get(n) for n in dict.fromkeys(names)])

    def join_keys(self, node: JoinNode) -> int | None:
        """A join's distinct keys: per key pair ``L.a = R.b`` the smaller of the counts given
        for its columns (only those values can match), multiplied over the pairs (those
        without a count: the plain ``--keys N`` once, ``count_of``)."""
        counts: list[int | None] = []
        for pair in node.distinct_keys:
            given = [
                self.a.key_columns[n]
                for k in pair
                for n in _key_names(k)
                if n in self.a.key_columns
            ]
            counts.append(min(given) if given else None)
        return self._product(counts)

    def _product(self, counts: list[int | None]) -> int | None:
        product = 1
        for count in counts:
            if count is not None:
                product = min(product * count, 10**18)
        if any(c is None for c in counts) or not counts:
            if self.a.keys is None:
                self.uncounted = True
                return None
            product = min(product * self.a.keys, 10**18)
        return product

    def rate(self, relation: str) -> float | None:
        """Rows per second out of ``relation``: a stream's given rate, an operator's predicted
        output, a stateless relation's carried through (``stateless``); None: unknown."""
        if relation in self.streams:
            return self.a.rates.get(relation)
        return self.output.get(relation)

    def carry(self, node: PlanNode, rate: float | None) -> None:
        """A relation with no state (``_step``): its output ``rate``, and it is steady when
        its inputs are (which come before it)."""
        self.output[node.name] = rate
        self.warm[node.name] = max((self.warm.get(r, 0.0) for _, r in node.inputs), default=0.0)

    def delay_ms(self, name: str) -> float | None:
        """How far the operator's watermark is behind the newest event time: the policy's
        pick of its watermark nodes' delays, the streams' and those defined on an
        operator's output (whose column is taken as current as the streams')."""
        delays = [
            s.delay_ms or 0
            for s in (self.streams[n] for n in _streams_under(self.plan, name))
            if s.watermark_column is not None
        ]
        delays += [mark.delay_ms for _, mark in self.marks(name)]
        if not delays:
            return None
        return max(delays) if self.plan.settings.multiple_watermark_policy == "min" else min(delays)

    def marks(self, name: str) -> list[tuple[str, InputWatermark]]:
        """The watermarks defined on operators' outputs that move ``name``'s watermark:
        those below it; and where it uses the global watermark, every one of the queries it
        runs in (one above it holds the global watermark back too)."""
        node = self.plan.node(name)
        found = _marks_under(self.plan, name)
        if isinstance(node, OPERATOR_KINDS) and node.watermarks.eviction.source == "global":
            for root in self.plan.query_roots:
                if any(op.name == name for op in self.plan.stateful_operators(root)):
                    found += [m for m in _marks_under(self.plan, root) if m not in found]
        return found

    # ------------------------------------------------------------ joins

    def join(self, node: JoinNode) -> OperatorCapacity:
        a = self.a
        delay = self.delay_ms(node.name)
        lag = a.trigger_ms * (1 if node.watermarks.eviction.batch == "this" else 2)
        notes: list[str] = []
        if any(r in self.output for _, r in node.inputs):
            notes.append(
                "fed by another stateful operator: its input rate is that operator's "
                "predicted output and its rows are taken as current (approximate)"
            )
        n_keys = self.join_keys(node)
        sides = tuple(self.side(node, s, delay, lag, n_keys) for s in (node.left, node.right))
        bounded = all(s.bounded for s in sides)
        rows = sum(s.rows for s in sides) if all(s.rows is not None for s in sides) else None  # type: ignore[misc]
        stores = STORES_PER_JOIN_PARTITION * a.partitions * STORE_OVERHEAD_BYTES
        byts = (
            sum(s.bytes for s in sides) + stores  # type: ignore[misc]
            if all(s.bytes is not None for s in sides)
            else None
        )
        used = a.partitions if n_keys is None else min(a.partitions, n_keys)
        partition = None
        if byts is not None:
            partition = (byts - stores) / used + STORES_PER_JOIN_PARTITION * STORE_OVERHEAD_BYTES
        warm = [s.retention_ms for s in sides if s.retention_ms is not None]
        growth_rows = [s.rows_per_hour for s in sides if s.rows_per_hour is not None]
        growth_bytes = [s.bytes_per_hour for s in sides if s.bytes_per_hour is not None]
        output, latency = self.join_output(node, sides, delay, lag, n_keys)
        self.output[node.name] = output
        upstream = max(self.warm.get(s.relation, 0.0) for s in (node.left, node.right))
        self.warm[node.name] = upstream + (max(warm) if warm else 0.0)
        return OperatorCapacity(
            name=node.name,
            kind="join",
            sides=sides,
            rows=rows,
            bytes=byts,
            partition_bytes=partition,
            bounded=bounded,
            warm_up_ms=max(warm) if warm and bounded else None,
            rows_per_hour=sum(growth_rows) if growth_rows else None,
            bytes_per_hour=sum(growth_bytes) if growth_bytes else None,
            output_per_second=output,
            null_latency_ms=latency,
            notes=tuple(notes),
            rows_at=None if bounded or not growth_rows else _linear(sum(growth_rows) / 3600),
        )

    def side(
        self, node: JoinNode, side: Side, delay: float | None, lag: int, n_keys: int | None
    ) -> SideCapacity:
        a = self.a
        rate = self.rate(side.relation)
        rule = side.state
        key_kinds = list(node.key_types)
        row_bytes = unsafe_row_bytes([*key_kinds, BIGINT], a.string_bytes) + unsafe_row_bytes(
            [*(c.type for c in side.state_columns), BOOLEAN], a.string_bytes
        )
        key_bytes = unsafe_row_bytes(key_kinds, a.string_bytes) + COUNT_ROW_BYTES
        retention: float | None = None
        copies = 1.0  # window copies of a row (sliding windows)
        window_ms: float | None = None
        if rule.eviction != "never" and delay is not None and rule.offset_ms is not None:
            retention = delay + lag - rule.offset_ms
            if rule.window:
                window = next(
                    (w for w in side.windows if rule.column in (w.name, w.time_column)), None
                )
                if window is not None:
                    window_ms = window.duration_us / 1000
                    copies = window_ms / ((window.slide_us or window.duration_us) / 1000)
                    retention += window_tail_ms(
                        retention,
                        window.duration_us // 1000,
                        (window.slide_us or window.duration_us) // 1000,
                        a.trigger_ms,
                    )
            retention = max(retention, 0.0)
        bounded = retention is not None
        rows = keys_in_state = byts = per_hour = bytes_hour = None
        if rate is not None and retention is not None:
            rows = rate * copies * retention / 1000
            keys_in_state = self.distinct(rows, rate, window_ms, n_keys)
            byts = self.bytes(rows, keys_in_state, row_bytes, key_bytes)
        elif rate is not None:
            per_hour = rate * 3600
            per_key = key_bytes + ENTRY_OVERHEAD_BYTES
            new_keys = per_hour if n_keys is None else 0.0  # N keys fill up, then stay
            bytes_hour = per_hour * (row_bytes + ENTRY_OVERHEAD_BYTES) + new_keys * per_key
        return SideCapacity(
            side=side.name,
            relation=side.relation,
            alias=side.alias,
            rate=rate,
            bounded=bounded,
            retention_ms=retention,
            rows=rows,
            keys=keys_in_state,
            row_bytes=row_bytes,
            key_bytes=key_bytes,
            bytes=byts,
            rows_per_hour=per_hour,
            bytes_per_hour=bytes_hour,
            reason=None if bounded else (rule.reason or "no watermark reaches this operator"),
        )

    @staticmethod
    def distinct(rows: float, rate: float, window_ms: float | None, n: int | None) -> float:
        """Distinct state keys among ``rows`` rows of ``n`` uniformly drawn keys (a window
        key: per live window)."""
        if n is None:
            return rows
        if window_ms is None or rate <= 0:
            return n * -math.expm1(-rows / n)
        per_window = rate * window_ms / 1000
        windows = rows / per_window if per_window else 0.0
        return windows * n * -math.expm1(-per_window / n)

    @staticmethod
    def bytes(rows: float, keys: float, row_bytes: int, key_bytes: int) -> float:
        return rows * (row_bytes + ENTRY_OVERHEAD_BYTES) + keys * (key_bytes + ENTRY_OVERHEAD_BYTES)

    def join_output(
        self,
        node: JoinNode,
        sides: tuple[SideCapacity, ...],
        delay: float | None,
        lag: int,
        n: int | None,
    ) -> tuple[float | None, dict[str, tuple[float, float]]]:
        """Output rows per second and, per preserved side, the latency of its null-padded
        rows (event time to emission)."""
        latency: dict[str, tuple[float, float]] = {}
        for s, side in zip(sides, (node.left, node.right), strict=True):
            rule = side.state
            if side.preserved and s.bounded and delay is not None and rule.offset_ms is not None:
                low = max(delay - rule.offset_ms + lag, 0.0)
                high = low + self.a.trigger_ms
                if rule.window:  # a row waits for its window's end, up to a window
                    high += self.match_width_ms(node) or 0.0
                latency[s.side] = (low, high)
        left, right = (s.rate for s in sides)
        width_ms = self.match_width_ms(node)
        if left is None or right is None or width_ms is None or n is None:
            return None, latency
        # expected matches of a left row among the right rows, and of a right row
        lam_left = right * width_ms / 1000 / n
        lam_right = left * width_ms / 1000 / n
        pairs = left * lam_left
        kind = node.kind
        if kind.join_type == "left_semi":
            return left * -math.expm1(-lam_left), latency
        if kind.drops_matched:
            return left * math.exp(-lam_left), latency
        out = pairs
        if "left" in kind.preserved:
            out += left * math.exp(-lam_left)
        if "right" in kind.preserved:
            out += right * math.exp(-lam_right)
        return out, latency

    @staticmethod
    def match_width_ms(node: JoinNode) -> float | None:
        """The event-time width inside which two rows of a key meet: the time range's, or
        a joined window's length; None when the condition has neither."""
        if node.time_range is not None:
            return (node.time_range.upper_us - node.time_range.lower_us) / 1000
        for w in (*node.left.windows, *node.right.windows):
            return w.duration_us / 1000
        return None

    # ------------------------------------------------------------ deduplications

    def dedup(self, node: DedupNode) -> OperatorCapacity:
        """A dedup's keys in state (``DedupState``) at its input's rate, its keys drawn
        uniformly among the ``--keys`` values of its dedup columns other than its event time:

        * ``key`` eviction (the event time among the keys): every row is a key of its own (its
          event time is its own: rows arrive evenly), kept until the eviction watermark passes
          it, ``delay + trigger lag`` of event time (a window key: until the window's end);
        * ``expiry`` (WITHIN WATERMARK): a key is stored by its first row and kept until the
          watermark passes that row's time plus the delay, ``2 delay + lag``; the rows of the
          key meanwhile are dropped; so with N values at λ = rate / N rows per second each, a
          key is in state a fraction λR / (1 + λR) of the time and N λ / (1 + λR) rows pass;
        * ``never``: every key seen stays; without --keys (or with a time among the keys) it
          grows at its input rate, without limit; with N values it fills up to N and stays.

        Bytes: the key UnsafeRow (the dedup columns) and the value (empty, or
        ``expiresAtMicros``) per key, with the aggregate's per-entry overhead of the HDFS
        store (the same one map of key to value; not measured for a dedup itself)."""
        a = self.a
        rate = self.rate(node.input)
        state = node.state
        # the key's types by name alone, as this estimate has always read them: a DECIMAL key
        # of precision above 18 is counted in its slot (its 16 bytes of data are left out)
        key_kinds = [SqlType(k.name) for k in node.key_types]
        key_bytes = unsafe_row_bytes(key_kinds, a.string_bytes)
        value_bytes = unsafe_row_bytes([c.type for c in state.value], a.string_bytes)
        entry = key_bytes + value_bytes + GROUP_OVERHEAD_BYTES
        delay = self.delay_ms(node.name)
        lag = a.trigger_ms * (1 if node.watermarks.eviction.batch == "this" else 2)
        upstream = self.warm.get(node.input, 0.0)
        times = ("timestamp", "timestamp_ntz", "window")
        timed = {c.name for c in state.key if c.type.name in times}
        others = [k for k in node.keys if k not in timed and k != state.column]
        # a time among the keys (other than the window a key eviction reads) makes every row
        # a key of its own: rows arrive evenly, each with its own time
        own = bool(timed - {state.column}) if state.eviction == "key" else bool(timed)
        n = self.count_of(others) if others and not own else None
        notes: list[str] = []
        retention: float | None = None
        window_ms: float | None = None
        if state.eviction != "never" and delay is not None:
            retention = delay + lag + ((state.offset_ms or 0) if state.eviction == "expiry" else 0)
            if state.window:
                window = self.window_column(node.input, state.column or "")
                if window is not None and window.length_ms is not None:
                    window_ms = window.length_ms
                    retention += window_tail_ms(
                        retention, int(window.length_ms), int(window.slide_ms or 0), a.trigger_ms
                    )
                else:
                    notes.append("its window key's length is not known here: kept as its end")
        rows = output = per_hour = warm = None
        rows_at: Callable[[float], float] | None = None
        reason = state.reason
        if rate is None:
            notes.append("no rate reaches it")
        elif state.eviction == "key" and retention is not None:
            rows = rate * retention / 1000
            if window_ms is not None and n is not None:
                rows = self.distinct(rows, rate, window_ms, n)
                output = rate * rows / (rate * retention / 1000) if retention else rate
            else:
                output = rate
                notes.append(
                    "the event time is a dedup column: every row taken as a key of its own "
                    "(rows re-delivered with the same event time are not in the rate)"
                )
            warm = retention
        elif state.eviction == "expiry" and retention is not None:
            if n is None:
                rows, output = rate * retention / 1000, rate
            else:
                held = rate / n * retention / 1000  # λR
                rows, output = n * held / (1 + held), rate / (1 + held)
            warm = retention
        elif timed or n is None:  # never evicted, every row a new key
            per_hour = rate * 3600
            output = rate
            rows_at = _linear(rate)
            reason = reason or "no watermark reaches it"
            if timed:
                notes.append("a time among its dedup columns: every row a new key")
        else:  # never evicted, filling up to the N values of its keys
            rows = float(n)
            output = 0.0
            warm = -math.log(0.05) * n / rate * 1000 if rate > 0 else None
            rows_at = partial(_filled, float(n), rate)
            notes.append(
                f"it holds every key it has seen, up to the {n:,} values of its dedup columns "
                "(--keys), for ever: a value not counted there adds to it (W001)"
            )
        if isinstance(self.plan.node(node.input), OPERATOR_KINDS):
            notes.append(
                "fed by another stateful operator: its input rate is that operator's "
                "predicted output and its rows are taken as current (approximate)"
            )
        stores = a.partitions * STORE_OVERHEAD_BYTES
        byts = partition = bytes_hour = None
        if rows is not None:
            byts = rows * entry + stores
            used = max(1.0, min(float(a.partitions), rows))
            partition = rows * entry / used + STORE_OVERHEAD_BYTES
        if per_hour is not None:
            bytes_hour = per_hour * entry
        bounded = state.eviction != "never" and rows is not None
        self.output[node.name] = output
        self.warm[node.name] = upstream + (warm or 0.0)
        detail = DedupCapacity(
            method="dropDuplicatesWithinWatermark" if node.within_watermark else "dropDuplicates",
            eviction=state.eviction,
            input_rate=rate,
            retention_ms=retention,
            key_values=n,
            key_bytes=key_bytes,
            value_bytes=value_bytes,
            reason=None if state.eviction != "never" else reason,
        )
        return OperatorCapacity(
            name=node.name,
            kind="dedup",
            sides=(),
            rows=rows,
            bytes=byts,
            partition_bytes=partition,
            bounded=bounded,
            warm_up_ms=warm if bounded else None,
            rows_per_hour=per_hour,
            bytes_per_hour=bytes_hour,
            output_per_second=output,
            null_latency_ms={},
            notes=tuple(notes),
            dedup=detail,
            rows_at=rows_at,
        )

    # ------------------------------------------------------------ aggregates

    def aggregate(self, node: AggregateNode) -> OperatorCapacity:
        """An aggregate's groups (``capacity_groups``): per window, the keys that have a row
        in it; the windows the eviction watermark has not passed; a grouping without a
        time, or complete mode, never evicts."""
        a = self.a
        rate = self.rate(node.input)
        key_bytes = unsafe_row_bytes(list(node.key_types), a.string_bytes)
        value_bytes = unsafe_row_bytes(buffer_kinds(node.buffer_types), a.string_bytes)
        entry = key_bytes + value_bytes
        time, others = self.grouping(node)
        groups, why_not = self.groups_of(node, time, others)
        delay = self.delay_ms(node.name)
        reason = self.no_eviction(node, delay)
        lag = None if reason is not None else self.lag(node, delay)
        upstream = self.warm.get(node.input, 0.0)
        notes: list[str] = []
        if time is not None and time.start_ms:
            notes.append("the windows' start offset is not modelled (taken as 0)")
        if why_not is not None:
            notes.append(f"its groups are not predicted: {why_not}")
        joined = isinstance(self.plan.node(node.input), JoinNode)
        if groups is not None and groups.by == "rows" and joined:
            notes.append(
                "grouped by columns other than its join's keys: each row taken to draw its "
                "group among --keys values, uniformly (approximate)"
            )
        elif groups is not None and groups.by == "rows" and groups.groups is None:
            notes.append("no --keys: every row taken as its own group (an upper bound)")
        elif groups is not None and groups.by == "key" and not joined:
            notes.append("its grouping keys taken to have --keys values, uniformly drawn")
        tau = a.trigger_ms
        rows = touched = per_window = per_second = None
        warm = rows_hour = None
        emission: tuple[float, float] | None = None
        rows_at: Callable[[float], float] | None = None
        if groups is not None and time is not None and time.length_ms is not None:
            length, slide = time.length_ms, time.slide_ms or time.length_ms
            ws = window_state(groups, length, slide, lag, tau)
            per_window, per_second = ws.full, ws.per_second
            if lag is not None:
                rows, touched = ws.rows, ws.touched
                warm = upstream + length + lag
                emission = (lag, lag + tau)
            else:
                rows_hour = per_second * 3600
                touched = ws.touched
                rows_at = _linear(per_second)
        elif groups is not None and time is not None:  # grouped by an event time itself
            ps = point_state(groups, lag if lag is not None else 0.0, tau)
            per_window, per_second = None, ps.per_second
            if lag is not None:
                rows, touched = ps.rows, ps.touched
                warm = upstream + lag
                emission = (lag, lag + tau)
            else:
                rows_hour = per_second * 3600
                rows_at = _linear(per_second)
        elif groups is not None:  # no time: every group seen so far stays
            if groups.by == "rows" and groups.groups is None:
                per_second = groups.keys * groups.arrivals.drawn(0.0, 1000.0, 1e3 + 1e9)
                rows_hour = per_second * 3600
                rows_at = _linear(per_second)
            else:
                steady = seen_by(groups, 1e10)
                rows = steady
                warm = upstream + _time_to(groups, 0.95 * steady)
                rows_at = partial(seen_by, groups)
            if tau > 0:  # the rows of a batch can only touch the groups of recent rows
                recent = groups.arrivals.horizon() + tau
                ends = [1e9 + t for t in phases(tau, max(tau, 1))]
                touched = sum(groups.touched(t - recent, 1e18, t, tau) for t in ends) / len(ends)
        bounded = rows is not None and (reason is None or rows_hour is None)
        if reason is not None and rows is not None:
            notes.append(f"{reason}: it holds every group it has seen, at most the --keys values")
        output = None
        if per_second is not None and node.mode == "append":
            output = per_second
        elif touched is not None and node.mode == "update" and tau > 0:
            output = touched * 1000 / tau
        elif node.mode == "complete" and rows is not None and tau > 0:
            output = rows * 1000 / tau
        byts = partition = bytes_hour = None
        stores = a.partitions * STORE_OVERHEAD_BYTES
        if rows is not None:
            payload = rows * (entry + GROUP_OVERHEAD_BYTES)
            byts = payload + stores
            used = max(1.0, min(float(a.partitions), rows))
            partition = payload / used + STORE_OVERHEAD_BYTES
        if rows_hour is not None:
            bytes_hour = rows_hour * (entry + GROUP_OVERHEAD_BYTES)
        self.output[node.name] = None
        self.warm[node.name] = warm if warm is not None else upstream
        detail = AggregateCapacity(
            mode=node.mode,
            input_rate=rate,
            grouping="window" if time is not None and time.length_ms is not None
            else "time" if time is not None else "keys",
            window_ms=None if time is None else time.length_ms,
            slide_ms=None if time is None else time.slide_ms or time.length_ms,
            lag_ms=lag,
            groups_per_window=per_window,
            updated_per_batch=touched,
            key_bytes=key_bytes,
            value_bytes=value_bytes,
            emission_ms=emission if node.mode == "append" else None,
            reason=reason,
        )  # fmt: skip
        return OperatorCapacity(
            name=node.name,
            kind="aggregate",
            sides=(),
            rows=rows,
            bytes=byts,
            partition_bytes=partition,
            bounded=bounded,
            warm_up_ms=warm if bounded else None,
            rows_per_hour=rows_hour,
            bytes_per_hour=bytes_hour,
            output_per_second=output,
            null_latency_ms={},
            notes=tuple(notes),
            aggregate=detail,
            rows_at=rows_at,
        )

    @staticmethod
    def no_eviction(node: AggregateNode, delay: float | None) -> str | None:
        """Why an aggregate never evicts a group, or None when it does."""
        if node.mode == "complete":
            return "complete mode keeps every group for ever (Spark evicts none)"
        if node.watermark_key is None:
            return "no grouping key carries a watermark: no group is ever evicted"
        if delay is None:
            return "no watermark reaches it: no group is ever evicted"
        return None

    def lag(self, node: AggregateNode, delay: float | None) -> float | None:
        """How far the aggregate's eviction watermark is behind its input's newest event
        time: the delay, a trigger (two with the previous batch's watermark), less the
        offset of the joins' state watermarks it is propagated from."""
        if delay is None:
            return None
        use = node.watermarks.eviction
        lag = delay + self.a.trigger_ms * (1 if use.batch == "this" else 2)
        if use.source == "propagated":
            lag -= self.offset(node.input)
        return lag

    def offset(self, relation: str) -> float:
        """How far behind its input watermark the watermark a relation hands on is (a
        join's: the lowest of its sides' state watermarks)."""
        found: dict[str, float] = {}
        for node in self.plan.walk(relation):  # each after its inputs
            found[node.name] = _handed_offset(node, [found.get(r, 0.0) for _, r in node.inputs])
        return found.get(relation, 0.0)

    def grouping(self, node: AggregateNode) -> tuple[_Time | None, list[str]]:
        """The aggregate's time grouping (a window() call, a window column, or the event
        time itself) and the input columns its other grouping keys read."""
        columns = self.input_columns(node.input)
        time: _Time | None = None
        others: list[str] = []
        for index, key in enumerate(node.group_by):
            if annotate.is_call(key, "window"):
                args = list(key.expressions)
                lengths = [annotate.micros(x) for x in args[1:]]
                inner = args[0]
                if isinstance(inner, exp.Column) and lengths and lengths[0]:
                    slide = lengths[1] if len(lengths) > 1 else None
                    start = lengths[2] if len(lengths) > 2 else 0
                    time = _Time(
                        inner.name,
                        lengths[0] / 1000,
                        (slide or lengths[0]) / 1000,
                        (start or 0) / 1000,
                    )
                    continue
            if isinstance(key, exp.Column):
                window = self.window_column(node.input, key.name)
                if window is not None:
                    time = window
                    continue
                kind = columns.get(key.name)
                if index == node.watermark_key_index and kind is not None and kind != "window":
                    time = _Time(key.name, None, None, 0.0)
                    continue
            others.extend(c.name for c in key.find_all(exp.Column))
        return time, others

    def input_columns(self, relation: str) -> dict[str, str]:
        return dict(self.plan.columns_of(relation)) if self.plan.node(relation) else {}

    def window_column(self, relation: str, name: str) -> _Time | None:
        """A window a join projects and outputs as ``name`` (a window key's)."""
        node = self.plan.node(relation)
        if not isinstance(node, JoinNode):
            return None
        out = next((o for o in node.output if o.name == name), None)
        if out is None or not isinstance(out.expr, exp.Column):
            return None
        for side in (node.left, node.right):
            for w in side.windows:
                if w.name == out.expr.name and out.expr.table == side.alias:
                    slide = (w.slide_us or w.duration_us) / 1000
                    return _Time(name, w.duration_us / 1000, slide, 0.0)
        return None

    def groups_of(
        self, node: AggregateNode, time: _Time | None, others: list[str]
    ) -> tuple[Groups | None, str | None]:
        """How the aggregate's input makes its groups, or why that is not predicted."""
        return _groups_from(self.plan.node(node.input), self, node, time, others)

    def stream_groups(
        self, node: AggregateNode, others: list[str]
    ) -> tuple[Groups | None, str | None]:
        """The groups of an aggregate over rows that arrive as a stream's do (a stream's,
        a dedup's or a stateless relation's)."""
        rate = self.rate(node.input)
        if rate is None:
            return None, f"no rate reaches its input `{node.input}`"
        rate /= 1000
        if not others:
            return Groups(Arrivals("stream", rate), 1.0, "none"), None
        groups = self.count_of(others)
        if groups is None:
            return Groups(Arrivals("stream", rate), 1.0, "rows", None), None
        return Groups(Arrivals("stream", rate / groups), float(groups), "key"), None

    def join_groups(
        self, source: JoinNode, time: _Time | None, others: list[str]
    ) -> tuple[Groups | None, str | None]:
        """The groups of an aggregate over a join's output: pairs of the join's sides."""
        a = self.a
        rates = [self.rate(source.left.relation), self.rate(source.right.relation)]
        n = self.join_keys(source)
        if n is None:
            return None, "give --keys (the join's output depends on its keys)"
        if rates[0] is None or rates[1] is None:
            return None, "the rate of its join's inputs is not predicted"
        sides = self.sides_of(source, [*others, *([time.column] if time else [])])
        either = {"left", "right"}
        x_sides = set.intersection(either, *sides.values()) if sides else either
        timed = sides.get(time.column, either) if time is not None else either
        if not x_sides:
            x_sides = timed
        x = "left" if "left" in x_sides else "right"
        if x not in source.kind.output_sides:
            x = source.kind.output_sides[0]
        keyed = all(sides.get(c) == either for c in others)
        by: Literal["key", "none", "rows"] = "none" if not others else "key" if keyed else "rows"
        geometry = self.geometry(source, x)
        if geometry is None:
            return None, f"its join `{source.name}` has no time range or window to match in"
        side = source.left if x == "left" else source.right
        rx, ry = (rates[0], rates[1]) if x == "left" else (rates[1], rates[0])
        emit: Literal["matched", "preserved", "unmatched"] = (
            "unmatched" if source.kind.drops_matched
            else "preserved" if side.preserved
            else "matched"
        )  # fmt: skip
        delay = self.delay_ms(source.name) or 0.0
        lag = delay + a.trigger_ms * (1 if source.watermarks.eviction.batch == "this" else 2)
        rule = side.state
        null = math.inf if rule.eviction == "never" else lag - (rule.offset_ms or 0)
        arrivals = Arrivals(
            "pair",
            rx / n / 1000,
            ry / n / 1000,
            range_ms=geometry[0],
            window_ms=geometry[1],
            emit=emit,
            null_ms=null,
        )
        drawn = self.count_of(others) if by == "rows" else n
        return Groups(arrivals, float(n), by, None if drawn is None else float(drawn)), None

    def sides_of(self, join: JoinNode, names: list[str]) -> dict[str, set[str]]:
        """Per output column of ``join`` named in ``names``: the sides whose rows give its
        value (both for a join key, equal on both sides)."""
        keys = {k.sql() for pair in join.keys for k in pair}
        alias = {join.left.alias: "left", join.right.alias: "right"}
        out: dict[str, set[str]] = {}
        for name in names:
            column = next((o for o in join.output if o.name == name), None)
            if column is None:
                continue
            if column.expr.sql() in keys:
                out[name] = {"left", "right"}
                continue
            found = {alias[c.table] for c in column.expr.find_all(exp.Column) if c.table in alias}
            if found:
                out[name] = found
        return out

    def geometry(
        self, join: JoinNode, x: str
    ) -> tuple[tuple[float, float] | None, float | None] | None:
        """Where a row of side ``x`` meets the other side's: a time range relative to its
        own time, or its window; None when the condition has neither."""
        if join.time_range is not None:
            lo, hi = join.time_range.lower_us / 1000, join.time_range.upper_us / 1000
            return ((lo, hi) if x == "left" else (-hi, -lo)), None
        for w in (*join.left.windows, *join.right.windows):
            return None, w.duration_us / 1000
        if join.left.state.eviction == "never" or join.right.state.eviction == "never":
            return None, None
        return None


@singledispatch
def _step(node: PlanNode, model: _Model) -> OperatorCapacity | None:
    """One relation of ``predict``'s walk, after its inputs: a stateful operator's capacity;
    a relation with no state carries the rate out of it (``_Model.carry``) and gives none."""
    raise TypeError(f"no capacity model for a plan node of kind {type(node).__name__}")


@_step.register
def _(node: JoinNode, model: _Model) -> OperatorCapacity | None:
    return model.join(node)


@_step.register
def _(node: AggregateNode, model: _Model) -> OperatorCapacity | None:
    return model.aggregate(node)


@_step.register
def _(node: DedupNode, model: _Model) -> OperatorCapacity | None:
    return model.dedup(node)


@_step.register
def _(node: StreamNode, model: _Model) -> OperatorCapacity | None:
    return None  # its rate is given (``--rates``)


@_step.register
def _(node: UnionNode, model: _Model) -> OperatorCapacity | None:
    # the sum of its inputs' rates: Spark's Union passes every row of each
    rates = [model.rate(r) for r in node.relations]
    model.carry(node, None if any(r is None for r in rates) else sum(r or 0.0 for r in rates))
    return None


@_step.register
def _(node: ViewNode, model: _Model) -> OperatorCapacity | None:
    model.carry(node, model.rate(node.input))
    if node.where is not None:
        model.passed_notes.append(
            f"view `{node.name}`: its WHERE taken to keep every row (its selectivity "
            "is not in the spec; scale the rate of the streams below it to say it)"
        )
    return None


@_step.register
def _(node: StaticJoinNode, model: _Model) -> OperatorCapacity | None:
    # its stream side's rate, each stream row taken to meet one table row (no state either way)
    model.carry(node, model.rate(node.stream.relation))
    model.passed_notes.append(
        f"stream-static join `{node.name}`: stateless, each stream row taken to meet "
        "one row of the table (how many it meets is not in the spec)"
    )
    return None


@_step.register
def _(node: TableNode, model: _Model) -> OperatorCapacity | None:
    model.carry(node, None)  # read whole in each batch: no rate of its own
    return None


@singledispatch
def _handed_offset(node: PlanNode, below: list[float]) -> float:
    """How far behind its input watermark the watermark ``node`` hands on is, given its
    inputs' (``below``): the lowest of its inputs' (Spark's default output watermark: an
    aggregate's, a dedup's, a view's, a union's, a stream-static join's); a stream or a
    table has none below it."""
    return min(below, default=0.0)


@_handed_offset.register
def _(node: JoinNode, below: list[float]) -> float:
    # the lowest of its sides' state watermarks
    own = [s.state.offset_ms for s in (node.left, node.right) if s.state.offset_ms]
    return min(below) + min([0, *own])


@singledispatch
def _groups_from(
    source: PlanNode | None,
    model: _Model,
    node: AggregateNode,
    time: _Time | None,
    others: list[str],
) -> tuple[Groups | None, str | None]:
    """How aggregate ``node``'s input, ``source``, makes its groups, or why that is not
    predicted: as a stream's rows arrive, for any input but a join's or an aggregate's (a
    stream's, a dedup's or a stateless relation's)."""
    return model.stream_groups(node, others)


@_groups_from.register
def _(
    source: JoinNode, model: _Model, node: AggregateNode, time: _Time | None, others: list[str]
) -> tuple[Groups | None, str | None]:
    return model.join_groups(source, time, others)


@_groups_from.register
def _(
    source: AggregateNode,
    model: _Model,
    node: AggregateNode,
    time: _Time | None,
    others: list[str],
) -> tuple[Groups | None, str | None]:
    return None, "an aggregate of an aggregate's output is not modelled"


# ---------------------------------------------------------------- rendering


def _num(x: float | None, digits: int = 1) -> float | None:
    return None if x is None else round(x, digits)


def capacity_json(cap: Capacity) -> dict[str, Any]:
    a = cap.assumptions
    return {
        "assumptions": {
            "rates_per_second": dict(sorted(a.rates.items())),
            "keys": a.keys,
            "key_columns": dict(a.key_columns),
            "trigger_ms": a.trigger_ms,
            "trigger_source": a.trigger_source,
            "string_bytes": a.string_bytes,
            "shuffle_partitions": a.partitions,
            "state_store": a.state_store,
            "entry_overhead_bytes": ENTRY_OVERHEAD_BYTES,
            "store_overhead_bytes": STORE_OVERHEAD_BYTES,
            "group_overhead_bytes": GROUP_OVERHEAD_BYTES,
            "overheads_measured_on": MEASURED_ON,
        },
        "operators": [
            {
                "name": op.name,
                "kind": op.kind,
                "bounded": op.bounded,
                "state_rows": _num(op.rows),
                "state_bytes": _num(op.bytes, 0),
                "partition_bytes": _num(op.partition_bytes, 0),
                "warm_up_ms": _num(op.warm_up_ms, 0),
                "growth": None
                if op.bounded
                else {
                    "rows_per_hour": _num(op.rows_per_hour),
                    "bytes_per_hour": _num(op.bytes_per_hour, 0),
                },
                "output_rows_per_second": _num(op.output_per_second, 3),
                "null_row_latency_ms": {
                    side: [_num(lo, 0), _num(hi, 0)]
                    for side, (lo, hi) in op.null_latency_ms.items()
                },
                **({"aggregate": _aggregate_json(op.aggregate)} if op.aggregate else {}),
                **({"dedup": _dedup_json(op.dedup)} if op.dedup else {}),
                "sides": {
                    s.side: {
                        "relation": s.relation,
                        "rows_per_second": _num(s.rate, 3),
                        "bounded": s.bounded,
                        "retention_ms": _num(s.retention_ms, 0),
                        "state_rows": _num(s.rows),
                        "state_keys": _num(s.keys),
                        "row_bytes": s.row_bytes,
                        "key_bytes": s.key_bytes,
                        "state_bytes": _num(s.bytes, 0),
                        "rows_per_hour": _num(s.rows_per_hour),
                        "bytes_per_hour": _num(s.bytes_per_hour, 0),
                        "unbounded_reason": s.reason,
                    }
                    for s in op.sides
                },
                "notes": list(op.notes),
            }
            for op in cap.operators
        ],
        "notes": list(cap.notes),
    }


def _dedup_json(d: DedupCapacity) -> dict[str, Any]:
    return {
        "spark_method": d.method,
        "eviction": d.eviction,
        "input_rows_per_second": _num(d.input_rate, 3),
        "retention_ms": _num(d.retention_ms, 0),
        "key_values": d.key_values,
        "key_bytes": d.key_bytes,
        "value_bytes": d.value_bytes,
        "never_evicted": d.reason,
    }


def _aggregate_json(g: AggregateCapacity) -> dict[str, Any]:
    return {
        "mode": g.mode,
        "input_rows_per_second": _num(g.input_rate, 3),
        "grouping": g.grouping,
        "window_ms": _num(g.window_ms, 0),
        "slide_ms": _num(g.slide_ms, 0),
        "eviction_lag_ms": _num(g.lag_ms, 0),
        "groups_per_window": _num(g.groups_per_window),
        "updated_per_batch": _num(g.updated_per_batch),
        "key_bytes": g.key_bytes,
        "value_bytes": g.value_bytes,
        "emitted_after_window_end_ms": None
        if g.emission_ms is None
        else [_num(g.emission_ms[0], 0), _num(g.emission_ms[1], 0)],
        "never_shrinks": g.reason,
    }


def human_count(x: float) -> str:
    if x >= 1e9:
        return f"{x / 1e9:.1f} billion"
    if x >= 1e6:
        return f"{x / 1e6:.1f} million"
    if x >= 1e4:
        return f"{x:,.0f}"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def human_bytes(x: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if x >= size:
            return f"{x / size:.1f} {unit}"
    return f"{x:.0f} B"


def _ms(x: float) -> str:
    return format_ms(round(x))


def _span(lo: float, hi: float) -> str:
    """``lo to hi``, or the one value when they print the same (batches back to back)."""
    low, high = _ms(lo), _ms(hi)
    return low if high == low else f"{low} to {high}"


def _aggregate_lines(op: OperatorCapacity, g: AggregateCapacity) -> list[str]:
    """An aggregate's groups line: what it holds and why that much."""
    sizes = (
        f"{g.key_bytes} B a key + {g.value_bytes} B a buffer, {GROUP_OVERHEAD_BYTES:.0f} B "
        "each in the store"
    )
    if g.grouping == "window" and g.window_ms is not None:
        every = "" if g.slide_ms == g.window_ms else f" every {_ms(g.slide_ms or 0)}"
        shape = f"windows of {_ms(g.window_ms)}{every}"
        if g.groups_per_window is not None:
            shape += f", {human_count(g.groups_per_window)} groups a window"
    elif g.grouping == "time":
        shape = "a group per event time"
    else:
        shape = "a group per key"
    if op.rows is not None and op.bytes is not None:
        if g.lag_ms is not None:
            kept = f"kept until the watermark, {_ms(g.lag_ms)} behind the newest row, passes it"
        else:
            kept = f"every group seen so far ({g.reason})"
        desc = f"{human_count(op.rows)} rows, {human_bytes(op.bytes)} ({shape}, {kept}; {sizes})"
    elif op.rows_per_hour is not None and op.bytes_per_hour is not None:
        desc = (
            f"GROWS WITHOUT LIMIT: +{human_count(op.rows_per_hour)} rows/hour, "
            f"+{human_bytes(op.bytes_per_hour)}/hour ({shape}; {g.reason})"
        )
    else:
        desc = f"not predicted ({shape})"
    lines = [f"    {'groups':<15}{desc}"]
    if g.updated_per_batch is not None:
        lines.append(f"    {'updated':<15}{human_count(g.updated_per_batch)} groups a batch")
    return lines


def _dedup_lines(op: OperatorCapacity, d: DedupCapacity) -> list[str]:
    """A dedup's keys line: what it holds and why that much."""
    sizes = (
        f"{d.key_bytes} B a key + {d.value_bytes} B a value, {GROUP_OVERHEAD_BYTES:.0f} B "
        "each in the store"
    )
    rate = "?" if d.input_rate is None else human_count(d.input_rate)
    if d.eviction == "key":
        kept = f"{rate} rows/s, each its own key, kept {_ms(d.retention_ms or 0)} until the "
        kept += "watermark passes its event time"
    elif d.eviction == "expiry":
        values = ", each its own key" if d.key_values is None else f" of {d.key_values:,} values"
        kept = f"{rate} rows/s{values}, a key kept {_ms(d.retention_ms or 0)} from its "
        kept += "first row (its expiry, the event time plus the delay, then the watermark's lag)"
    else:
        kept = f"NEVER EVICTED: {d.reason}"
    if op.rows is not None and op.bytes is not None:
        desc = f"{human_count(op.rows)} keys, {human_bytes(op.bytes)} ({kept}; {sizes})"
    elif op.rows_per_hour is not None and op.bytes_per_hour is not None:
        desc = (
            f"GROWS WITHOUT LIMIT: +{human_count(op.rows_per_hour)} keys/hour, "
            f"+{human_bytes(op.bytes_per_hour)}/hour ({kept})"
        )
    else:
        desc = "not predicted (no rate reaches it)"
    lines = [f"    {'keys':<15}{desc}"]
    if op.rows is not None and op.partition_bytes is not None:
        steady = (
            f"; steady after {_ms(op.warm_up_ms)} of event time"
            if op.warm_up_ms is not None
            else ""
        )
        lines.append(f"    {'total':<15}{human_bytes(op.partition_bytes)} per partition{steady}")
    elif op.rows_per_hour is not None:
        lines.append(f"    {'total':<15}grows without limit, until the job dies")
    return lines


def capacity_text(cap: Capacity) -> list[str]:
    """The `capacity` section of `sjoin plan --rates`."""
    a = cap.assumptions
    rates = ", ".join(f"{k} {human_count(v)}/s" for k, v in sorted(a.rates.items()))
    keys = f"{a.keys:,} keys" if a.keys is not None else "every row its own key"
    if a.key_columns:
        named = ", ".join(f"{c} {n:,}" for c, n in a.key_columns.items())
        keys = f"keys {named}" + ("" if a.keys is None else f", other key columns {a.keys:,}")
    trigger = f"trigger {_ms(a.trigger_ms)} ({a.trigger_source})"
    lines = [
        "capacity at steady state",
        f"  assumed          {rates}; {keys}; {trigger}; strings {a.string_bytes} bytes; "
        f"{a.partitions} shuffle partitions",
    ]
    for op in cap.operators:
        mode = f" ({op.aggregate.mode})" if op.aggregate is not None else ""
        mode = f" ({op.dedup.method})" if op.dedup is not None else mode
        lines.append(f"  {op.kind} {op.name}{mode}")
        if op.aggregate is not None:
            lines.extend(_aggregate_lines(op, op.aggregate))
        if op.dedup is not None:
            lines.extend(_dedup_lines(op, op.dedup))
        for s in op.sides:
            rate = "?" if s.rate is None else human_count(s.rate)
            if s.bounded and s.rows is not None and s.bytes is not None:
                desc = (
                    f"{human_count(s.rows)} rows, {human_bytes(s.bytes)} "
                    f"({rate} rows/s kept {_ms(s.retention_ms or 0)}; {s.row_bytes} B a row "
                    f"+ {s.key_bytes} B a key, {ENTRY_OVERHEAD_BYTES:.0f} B each in the store)"
                )
            elif not s.bounded and s.rows_per_hour is not None and s.bytes_per_hour is not None:
                desc = (
                    f"GROWS WITHOUT LIMIT: +{human_count(s.rows_per_hour)} rows/hour, "
                    f"+{human_bytes(s.bytes_per_hour)}/hour ({s.reason})"
                )
            else:
                desc = "unknown (no rate reaches it)"
            lines.append(f"    {s.side + ' state':<15}{desc}")
        if op.dedup is not None:  # its total is in its own lines (_dedup_lines)
            pass
        elif op.bounded and op.rows is not None and op.bytes is not None:
            lines.append(
                f"    {'total':<15}{human_count(op.rows)} rows, {human_bytes(op.bytes)}; "
                f"{human_bytes(op.partition_bytes or 0)} per partition; steady after "
                f"{_ms(op.warm_up_ms or 0)} of event time"
            )
        elif not op.bounded and op.rows_per_hour is not None:
            lines.append(
                f"    {'total':<15}grows without limit: +{human_count(op.rows_per_hour)} "
                f"rows/hour, +{human_bytes(op.bytes_per_hour or 0)}/hour, until the job dies"
            )
        for side, (lo, hi) in op.null_latency_ms.items():
            lines.append(
                f"    {'null rows':<15}{side} rows with no match come out {_span(lo, hi)} "
                "after their event time"
            )
        if op.aggregate is not None and op.aggregate.emission_ms is not None:
            lo, hi = op.aggregate.emission_ms
            what = "window's groups" if op.aggregate.grouping == "window" else "row's group"
            end = "its end" if op.aggregate.grouping == "window" else "its event time"
            span = _span(lo, hi)
            lines.append(
                f"    {'results':<15}a {what} come out {span} after {end}, "
                "when the watermark passes it"
            )
        if op.output_per_second is not None:
            lines.append(f"    {'output':<15}{human_count(op.output_per_second)} rows/s")
        elif op.aggregate is not None:
            why = (
                "batches back to back"
                if cap.assumptions.trigger_ms <= 0
                else "its groups are not predicted"
            )
            lines.append(f"    {'output':<15}not predicted ({why})")
        elif op.kind == "join":
            why = "give --keys" if a.keys is None else "no time range or window bounds a match"
            lines.append(f"    {'output':<15}not predicted ({why})")
        lines.extend(f"    {'note':<15}{n}" for n in op.notes)
    lines.extend(f"  note             {n}" for n in cap.notes)
    return lines
