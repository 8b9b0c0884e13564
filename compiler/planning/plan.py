"""Frozen plan nodes: what Spark will do with each relation of a spec.

The planner decides; ``explain`` prints a plan, back ends compile it and the runtime runs it,
and none of them re-derives a decision.  The sqlglot trees inside a plan are shared: never
call ``.replace()``, ``.set()`` or ``.pop()`` on them (copy first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Literal, TypeAlias

from sqlglot import exp

from ..vocabulary.model import (
    JOIN_KINDS,
    AggregateAnalysis,
    Bound,
    Column,
    Format,
    JoinAnalysis,
    JoinKind,
    JoinQuirks,
    JoinType,
    OutputMode,
    Settings,
    SparkVersion,
    TimeRange,
    WatermarkUse,
)
from ..vocabulary.source import Span
from ..vocabulary.types import SqlType
from . import graph

# the metadata of a field of SQL types that a plan's canonical dump (``canonical.py``: a
# checkpoint's identity) writes as their Spark SQL text, ``DECIMAL(10, 2)``, as it wrote the
# field when it held text: an identity does not change with the field's Python type
TYPES_AS_TEXT = {"canonical": "text"}

Eviction: TypeAlias = Literal["key", "value", "never"]


@dataclass(frozen=True, slots=True)
class StateRule:
    """One join side's state eviction, as Spark prints it in ``state cleanup [...]``.

    A row is evicted in a batch with eviction watermark W (ms) when its ``column`` (for a
    window key: the window's end) is ``<= W + offset_ms``.  For value eviction the exact
    per-batch value is ``min(b.at(W) for b in bounds)``: ``offset_ms`` is that minus W for
    any W large enough that the truncation rounds down.
    """

    eviction: Eviction
    column: str | None = None
    offset_ms: int | None = None
    reason: str | None = None  # set exactly when eviction == "never" (checked when built)
    key_index: int | None = None  # for key eviction: which key pair
    window: bool = False  # the key is a window struct: compare its end
    bounds: tuple[Bound, ...] = ()  # for value eviction: every usable conjunct

    def __post_init__(self) -> None:
        """The rule checks itself when built: a reason exactly when the side is never
        evicted, and each eviction with the fields it reads (and no others)."""
        never = self.eviction == "never"
        wrong = [
            what
            for what, bad in (
                ("a reason exactly when the side is never evicted", never != bool(self.reason)),
                (
                    "a column and an offset exactly when the side is evicted",
                    any(never != (x is None) for x in (self.column, self.offset_ms)),
                ),
                (
                    "a key index exactly for key eviction",
                    (self.eviction == "key") != (self.key_index is not None),
                ),
                (
                    "bounds exactly for value eviction",
                    (self.eviction == "value") != bool(self.bounds),
                ),
                ("a window only for key eviction", self.window and self.eviction != "key"),
            )
            if bad
        ]
        if self.eviction not in ("key", "value", "never"):
            wrong.insert(0, f"an eviction of key, value or never, not {self.eviction!r}")
        if wrong:
            raise ValueError(f"invalid StateRule {self!r}: it needs " + "; ".join(wrong))

    def state_watermark(self, watermark_ms: int) -> int | None:
        """The value Spark compares ``column`` with in a batch whose eviction watermark is W."""
        if self.eviction == "key":
            return watermark_ms
        if self.eviction == "value":
            return min(b.at(watermark_ms) for b in self.bounds)
        return None


@dataclass(frozen=True, slots=True)
class InputWatermark:
    """A watermark defined on an operator's input that reads another join or aggregate
    (``j AS a watermark t delay D``; Spark's ``withWatermark`` on that output): Spark puts
    an ``EventTimeWatermarkExec`` there, which sees the input's rows, moves to
    ``max(column) - delay`` and counts in the global watermark beside the streams' nodes;
    ``column`` is the input's one event-time column from there on.  From Spark 3.5 with
    ``allowMultiple`` Spark refuses it when a watermark node lies below it (hazards: E034).
    An aggregate's input (``AggregateNode.input_watermark``) or a join side's
    (``Side.input_watermark``)."""

    column: str
    delay_ms: int
    span: Span  # the `watermark` clause


@dataclass(frozen=True, slots=True)
class WindowColumn:
    """A window that Spark cannot compute inside a join condition: each side projects it as
    a column before the join (it inherits the watermark of its time column), and the raw
    time column is recomputed without watermark metadata so the side keeps one event-time
    column (Spark 3.5+ rejects two)."""

    name: str
    time_column: str
    duration_us: int
    slide_us: int | None
    expr: exp.Expression  # the window() call as written


# "all" such rows, only the "matched" ones (an unmatched one must still come out null-padded),
# or "none" (every new row is stored)
EvictedRowsSkipped: TypeAlias = Literal["none", "matched", "all"]


@dataclass(frozen=True, slots=True)
class Side:
    """One input of a join, with everything the join does to its rows."""

    name: Literal["left", "right"]
    relation: str
    alias: str
    columns: tuple[Column, ...]
    event_time_column: str | None  # the column Spark late-filters on (window: its end)
    event_time_is_window: bool
    pushed_filter: exp.Expression | None  # side-only conjuncts pushed below the join
    # the filters Spark's InferFiltersFromConstraints adds below the join through the
    # condition's equalities (compiler/planning/infer.py); run with the pushed ones, never written
    inferred_filters: tuple[exp.Expression, ...]
    not_null: tuple[str, ...]  # columns with an inferred isnotnull filter below the join
    pre_join_filter: exp.Expression | None  # leftOnly / rightOnly kept in the join
    state: StateRule
    preserved: bool  # unmatched rows come out null-padded (outer joins)
    retention: str  # how long a row stays in state, in words
    # the append rule (SPARK-49829, ``planner.evicted_rows_skipped``): which of this side's new
    # rows are left out of state when this batch's eviction would remove them at once
    evicted_rows_skipped: EvictedRowsSkipped
    windows: tuple[WindowColumn, ...] = ()  # projected before the join
    # Spark's plan of a stream input: the pushed and inferred conjuncts and inferred isnotnull
    # filters run below the input's watermark node, except those on its watermarked column (or a
    # window of it), which Spark keeps above it; window not-null filters go with the window
    filters_below_watermark: tuple[exp.Expression, ...] = ()
    filters_above_watermark: tuple[exp.Expression, ...] = ()
    not_null_below_watermark: tuple[str, ...] = ()
    not_null_above_watermark: tuple[str, ...] = ()
    # what this side's state stores per row (Spark's value schema, the matched flag aside):
    # the input columns that the join keeps after column pruning (those the keys, the
    # conditions kept in the join and the needed outputs read), then projected windows
    state_columns: tuple[Column, ...] = ()
    # a watermark defined on the side's input (it reads a join or aggregate): its node, whose
    # column is the side's one event-time column
    input_watermark: InputWatermark | None = None
    # the join this side reads, that Spark pushes the side's filters into (through its
    # projection, as a WHERE after its own): its plan holds them; this join still runs them
    filters_pushed_into: str | None = None
    # the filters the join that reads this one inferred for the rows it reads, pushed into
    # this side after Spark's one pass of inference (so they infer nothing more here), and
    # that join's name; run with the side's filters, below or above its watermark node
    inferred_above: tuple[exp.Expression, ...] = ()
    inferred_above_by: str | None = None


@dataclass(frozen=True, slots=True)
class OutputColumn:
    name: str
    expr: exp.Expression
    type: SqlType  # printed as Spark SQL text (``DECIMAL(10, 2)``) in the plan JSON
    event_time: bool


@dataclass(frozen=True, slots=True)
class StreamNode:
    name: str
    columns: tuple[Column, ...]
    watermark_column: str | None
    delay_ms: int | None
    source: Format | None
    name_span: Span  # the stream's name in its `stream` statement
    watermark_span: Span | None = None

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """A stream reads no relation."""
        return ()

    @property
    def layout(self) -> tuple[tuple[str, str], ...]:
        """Its rows' layout: (column name, canonical type name)."""
        return tuple((c.name, c.type.name) for c in self.columns)

    @property
    def input_watermarks(self) -> tuple[tuple[str, InputWatermark], ...]:
        return ()


@dataclass(frozen=True, slots=True)
class PaddedWindow:
    """A null-rejecting filter on a column of a side the written outer join null-pads, so
    that Spark's EliminateOuterJoin runs a narrower join: a window() in the join's SELECT
    (TimeWindowing filters isnotnull(time); E030 unless accepted), or, with ``reader``, a
    filter a relation reading the join adds, pushed down to it (compiler/planning/readers.py:
    an aggregate's window(), ``how`` "window"; a join's inferred isnotnull, "join"; W015)."""

    side: str  # "left" or "right": the null-padded side whose column is rejected when NULL
    time_column: str  # that side's column
    span: Span | None  # the window() call (or the reader's conjunct) in the spec
    reader: str | None = None  # the relation whose filter it is; None: the join's SELECT
    how: str = "window"  # "window" (TimeWindowing's isnotnull) or "join" (an inferred one)


@dataclass(frozen=True, slots=True)
class NullSafeKey:
    """A null-safe equality between a join's sides, ``left <=> right`` (or IS NOT DISTINCT
    FROM): Spark's ExtractEquiJoinKeys makes it two of the join's key pairs,
    ``keys[index]`` = (coalesce(left, d), coalesce(right, d)) and ``keys[index + 1]`` =
    (isnull(left), isnull(right)), so a NULL key matches a NULL key and no other."""

    left: exp.Expression
    right: exp.Expression
    index: int


@dataclass(frozen=True, slots=True)
class JoinNode:
    name: str
    join_type: JoinType  # as written
    executed_as: JoinType  # what Spark runs: left_anti runs as left_outer
    left: Side
    right: Side
    keys: tuple[tuple[exp.Expression, exp.Expression], ...]
    condition: exp.Expression  # the whole ON condition, windows replaced by their columns
    post_join_filter: exp.Expression | None
    constant_filter: exp.Expression | None  # conjuncts without columns (folded by Spark)
    output: tuple[OutputColumn, ...]
    null_rows: tuple[str, ...]  # explanations of outer null emission, per preserved side
    may_emit_late_rows: bool
    late_rows_reason: str
    watermarks: WatermarkUse
    quirks: JoinQuirks
    analysis: JoinAnalysis
    time_range: TimeRange | None = None  # post_join_filter, when it is exactly a time range
    # the time arguments of window() calls in the output: Spark's TimeWindowing adds
    # isnotnull(time), so an output row whose window time is NULL is dropped
    window_times: tuple[exp.Expression, ...] = ()
    # the windows of null-padded sides (and the readers' null-rejecting filters on them) that
    # made the planner plan the join as Spark's EliminateOuterJoin runs it (executed_as);
    # hazards reports them (E030 for the join's own SELECT, W015 for a reader's)
    padded_windows: tuple[PaddedWindow, ...] = ()
    notes: tuple[str, ...] = ()
    # the state's key schema: one SQL type per key pair
    key_types: tuple[SqlType, ...] = field(default=(), metadata=TYPES_AS_TEXT)
    null_safe_keys: tuple[NullSafeKey, ...] = ()  # the <=> keys among ``keys``
    # ``WHERE`` (compiler/planning/where.py): the whole condition as written; the conjuncts Spark
    # keeps in a Filter above the join (the engines drop the output rows, null-padded ones
    # included, that fail it); the conjuncts pushed into a side (also in that side's
    # filters); and, when a conjunct rejects a side's null-padded rows, Spark's
    # EliminateOuterJoin: (the type before, the type ``executed_as`` then is, the conjuncts)
    where: exp.Expression | None = None
    where_filter: exp.Expression | None = None
    where_pushed: tuple[tuple[str, exp.Expression], ...] = ()
    where_eliminated: tuple[JoinType, JoinType, tuple[exp.Expression, ...]] | None = None
    # ``OUTPUT MODE``: the mode of the query the join ends (append when not written); in
    # Update mode a join emits the rows it emits in Append (it never retracts one)
    mode: OutputMode = "append"

    @property
    def kind(self) -> JoinKind:
        return JOIN_KINDS[self.join_type]

    @property
    def pair_filter(self) -> exp.Expression | None:
        """What the engines check per matched pair: the post-join filter AND the constant
        filter (Spark keeps both in the join's condition, checked after the key match)."""
        parts = [p for p in (self.post_join_filter, self.constant_filter) if p is not None]
        if len(parts) < 2:
            return parts[0] if parts else None
        return exp.And(this=parts[0], expression=parts[1])

    @property
    def matched_keys(self) -> tuple[tuple[exp.Expression, exp.Expression], ...]:
        """Per pair of ``keys``, what the engines compare, a NULL matching a NULL as a state
        store's key rows do: the pair itself; for both pairs of a null-safe key, its operands
        (``l <=> r`` holds exactly when (coalesce(l, d), isnull(l)) = (coalesce(r, d),
        isnull(r))), so the key's positions stay Spark's."""
        if not self.null_safe_keys:
            return self.keys
        out = list(self.keys)
        for key in self.null_safe_keys:
            out[key.index] = out[key.index + 1] = (key.left, key.right)
        return tuple(out)

    @property
    def distinct_keys(self) -> tuple[tuple[exp.Expression, exp.Expression], ...]:
        """The key pairs whose values tell keys apart: ``keys`` without a null-safe key's
        (isnull(l), isnull(r)) pair, which repeats what its coalesce pair's operands say."""
        skipped = {key.index + 1 for key in self.null_safe_keys}
        return tuple(pair for i, pair in enumerate(self.keys) if i not in skipped)

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads): its ``left`` and ``right`` sides, in the order
        the engines' ``Operator.step`` takes them."""
        return ((self.left.name, self.left.relation), (self.right.name, self.right.relation))

    @property
    def layout(self) -> tuple[tuple[str, str], ...]:
        """Its output rows' layout: (column name, canonical type name)."""
        return tuple((o.name, o.type.name) for o in self.output)

    @property
    def input_watermarks(self) -> tuple[tuple[str, InputWatermark], ...]:
        """The watermark nodes the plan puts on its sides that read another operator
        (``Side.input_watermark``), by input name (``inputs``)."""
        return tuple(
            (side.name, side.input_watermark)
            for side in (self.left, self.right)
            if side.input_watermark is not None
        )


class OneInput:
    """What a node reading one relation (``input``) says of its graph: an aggregate, a
    deduplication, a view. A mixin of slotted dataclasses, so it holds no slots itself."""

    __slots__ = ()
    if TYPE_CHECKING:  # the node's own fields (a default here would become theirs)
        input: str
        input_watermark: InputWatermark | None

        @property
        def output(self) -> tuple[OutputColumn, ...]: ...

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads): its one ``input``."""
        return (("input", self.input),)

    @property
    def layout(self) -> tuple[tuple[str, str], ...]:
        """Its output rows' layout: (column name, canonical type name)."""
        return tuple((o.name, o.type.name) for o in self.output)

    @property
    def input_watermarks(self) -> tuple[tuple[str, InputWatermark], ...]:
        """The watermark node the plan puts on its input when that input reads another
        operator (``InputWatermark``), by input name (``inputs``)."""
        return () if self.input_watermark is None else (("input", self.input_watermark),)


@dataclass(frozen=True, slots=True)
class AggregateWhere:
    """An aggregate's ``WHERE`` (``df.where(cond).groupBy(...)``): Spark's Filter between
    the input and the aggregate, below its state store, so the rows it drops are never
    grouped, stored or late.  Spark's optimizer pushes it down as it pushes a view's WHERE:
    into the one join or view below that nothing else reads (``pushed_into``: that node's
    plan holds it, PushPredicateThroughNonJoin through its projection, then the join's
    EliminateOuterJoin and PushPredicateThroughJoin; the aggregate runs no filter of its
    own), else split at its input's watermark node as a view's (its conjuncts below and
    above it, the isnotnull filters inferred from those above, pushed below)."""

    condition: exp.Expression  # as written (bound, over the input's columns)
    filters_below_watermark: tuple[exp.Expression, ...] = ()
    filters_above_watermark: tuple[exp.Expression, ...] = ()
    not_null_below_watermark: tuple[str, ...] = ()
    pushed_into: str | None = None

    @property
    def filters(self) -> tuple[exp.Expression, ...]:
        """The conjuncts the aggregate runs itself, those below its input's watermark node
        first (none when ``pushed_into`` holds them)."""
        return (*self.filters_below_watermark, *self.filters_above_watermark)


@dataclass(frozen=True, slots=True)
class AggregateNode(OneInput):
    name: str
    input: str
    alias: str
    group_by: tuple[exp.Expression, ...]
    output: tuple[OutputColumn, ...]
    mode: OutputMode
    watermark_key: str | None  # the grouping key carrying the watermark (append eviction)
    watermark_key_index: int | None  # its position in group_by
    watermarks: WatermarkUse
    analysis: AggregateAnalysis
    # the state's key schema: one SQL type per grouping key
    key_types: tuple[SqlType, ...] = field(default=(), metadata=TYPES_AS_TEXT)
    # its value schema: the aggregation buffers, in order (``types.SKETCH``: a sketch)
    buffer_types: tuple[SqlType, ...] = field(default=(), metadata=TYPES_AS_TEXT)
    # a watermark defined on the input (it reads a join or aggregate): its node
    input_watermark: InputWatermark | None = None
    # its WHERE: a filter of the input's rows before they are grouped (None: none)
    where: AggregateWhere | None = None


DedupEviction: TypeAlias = Literal["key", "expiry", "never"]


FloatKeys: TypeAlias = Literal["normalized", "bitwise"]


@dataclass(frozen=True, slots=True)
class DedupState:
    """A deduplication's state, as Spark's ``StreamingDeduplicateExec`` (``dropDuplicates``)
    or ``StreamingDeduplicateWithinWatermarkExec`` (``dropDuplicatesWithinWatermark``) keeps it.

    The key is the dedup columns.  ``dropDuplicates`` stores an empty value and removes a key
    in a batch with eviction watermark W (ms) when its ``column``, the key column carrying the
    watermark (a window key: the window's end), is ``<= W`` ("key"); without such a key the
    state is never evicted ("never", with the ``reason``).  ``dropDuplicatesWithinWatermark``
    stores, per key, ``expiresAtMicros`` = the first row's ``column`` (the input's event-time
    column) + ``offset_ms`` (its watermark delay), and removes the key when that is ``<= W``
    ("expiry")."""

    key: tuple[Column, ...]
    value: tuple[Column, ...]  # () for Spark's empty value row
    eviction: DedupEviction
    column: str | None = None
    offset_ms: int | None = None
    window: bool = False  # key eviction on a window key: its end is compared
    reason: str | None = None  # set exactly when eviction == "never"

    def __post_init__(self) -> None:
        never = self.eviction == "never"
        if self.eviction not in ("key", "expiry", "never") or (
            never != bool(self.reason)
            or never != (self.column is None)
            or never != (self.offset_ms is None)
            or (self.window and self.eviction != "key")
        ):
            raise ValueError(f"invalid DedupState {self!r}")


@dataclass(frozen=True, slots=True)
class DedupNode(OneInput):
    """``dedup NAME = REL ON (cols) [WITHIN WATERMARK]``: Spark's streaming deduplication.
    The first row of a key in input order passes; its output is its input's columns."""

    name: str
    input: str
    alias: str
    columns: tuple[Column, ...]  # its input's (and its output's) columns, marks kept
    keys: tuple[str, ...]  # the dedup columns, in the order written
    within_watermark: bool  # dropDuplicatesWithinWatermark (Spark 3.5+)
    state: DedupState
    # the input's event-time column: a row whose value is <= the late-rows watermark is
    # dropped before the state is read (numRowsDroppedByWatermark); None: no late drops
    late_column: str | None
    late_is_window: bool  # the late column is a window: its end is compared
    watermarks: WatermarkUse
    name_span: Span
    within_span: Span | None  # the `WITHIN WATERMARK` words
    key_spans: tuple[Span, ...]
    # the input's watermarked columns (Spark refuses two with allowMultiple: E025)
    input_event_time: tuple[str, ...] = ()
    # a watermark defined on the input (it reads a join, aggregate or dedup): its node
    input_watermark: InputWatermark | None = None
    # how its FLOAT/DOUBLE dedup columns are compared (None: it has none): "normalized", one
    # key for -0.0 and 0.0 and one for every NaN (SPARK-56280: BaseStreamingDeduplicateExec
    # runs NormalizeFloatingNumbers on its keys, Spark 4.2+); "bitwise", the key's UnsafeRow
    # bytes, so -0.0 and 0.0 are two keys (Spark 3.5 and before; a NaN read from input is
    # always Double.NaN's one bit pattern, so the NaNs of a trace are one key either way)
    float_keys: FloatKeys | None = None

    @property
    def output(self) -> tuple[OutputColumn, ...]:
        """Its output columns: its input's, each passed through as it is."""
        return tuple(
            OutputColumn(c.name, exp.column(c.name, self.alias), c.type, c.event_time)
            for c in self.columns
        )

    @property
    def key_types(self) -> tuple[SqlType, ...]:
        """The state's key schema: one SQL type per dedup column."""
        return tuple(c.type for c in self.state.key)


@dataclass(frozen=True, slots=True)
class PushedJoin:
    """On a union that stands for a join Spark's optimizer pushed below the union it read
    (``compiler/planning/semi_union.py``): Spark's PushDownLeftSemiAntiJoin runs a LEFT SEMI
    join over a union as one join per union input, so the union's inputs are those joins
    (one stream-stream join operator each, with its own state) and its name the join's."""

    how: JoinType  # the join as written: "left_semi"
    union: str  # the union the written join read as its left side
    rule: str = "PushDownLeftSemiAntiJoin"


@dataclass(frozen=True, slots=True)
class UnionNode:
    """``union NAME = A UNION ALL B ...``: Spark's ``Union``, stateless: each micro-batch's
    rows of its inputs, the first input's then the next's.  Each input keeps its own
    watermark node (a stream input's ``EventTimeWatermark`` stays below the union and counts
    in the global watermark by the policy); ``columns`` are the first input's, with its
    event-time marks only (``Union.mergeChildOutputs`` keeps the first child's metadata)."""

    name: str
    relations: tuple[str, ...]  # the inputs, in the written order
    columns: tuple[Column, ...]
    name_span: Span  # the union's name in its statement
    # the filters of the one join side (or view: ``"input"``) that reads the union
    # (``pushed_side``, the name its conjuncts' columns are qualified by), which Spark
    # pushes through the Union into each input (PushPredicateThroughNonJoin), and there below
    # the input's watermark node unless they read its watermarked column: per input, the
    # conjuncts and isnotnull columns its watermark node runs below it (what it observes)
    pushed_side: Literal["left", "right", "input"] | None = None
    below_watermark: tuple[tuple[exp.Expression, ...], ...] = ()
    not_null_below_watermark: tuple[tuple[str, ...], ...] = ()
    # the join this union stands for, pushed below the union it read (its inputs are the
    # joins Spark runs, one per input of that union), if any
    pushed_join: PushedJoin | None = None

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads): ``"0"``, ``"1"``, ... in the written order."""
        return tuple((str(i), r) for i, r in enumerate(self.relations))

    @property
    def layout(self) -> tuple[tuple[str, str], ...]:
        """Its rows' layout: (column name, canonical type name), the first input's."""
        return tuple((c.name, c.type.name) for c in self.columns)

    @property
    def input_watermarks(self) -> tuple[tuple[str, InputWatermark], ...]:
        """A union defines no watermark of its own."""
        return ()

    @property
    def event_time_column(self) -> str | None:
        """The column downstream operators see as event time (the first input's), if any."""
        return next((c.name for c in self.columns if c.event_time), None)


@dataclass(frozen=True, slots=True)
class ViewNode(OneInput):
    """``view NAME = SELECT ... FROM REL [WHERE cond]``: Spark's Project over a Filter of one
    relation, stateless (no state, no late rows, no watermark of its own).  Over a stream
    with a watermark, Spark's PushPredicateThroughNonJoin moves the WHERE's deterministic
    conjuncts that do not read the watermarked column below the stream's EventTimeWatermark
    (its node sees only the rows they keep); the rest stay above it."""

    name: str
    input: str
    alias: str
    where: exp.Expression | None  # the whole WHERE, as written (bound)
    output: tuple[OutputColumn, ...]
    name_span: Span  # the view's name in its statement
    filters_below_watermark: tuple[exp.Expression, ...] = ()
    filters_above_watermark: tuple[exp.Expression, ...] = ()
    # the isnotnull filters Spark's InferFiltersFromConstraints adds for the columns a
    # conjunct above the node proves non-null, pushed below it (those not watermarked):
    # ``amount > rand()`` stays above, ``isnotnull(amount)`` runs below (Spark 4.3.0)
    not_null_below_watermark: tuple[str, ...] = ()
    # a watermark defined on the input (it reads a join or aggregate): its node
    input_watermark: InputWatermark | None = None
    # the one operator whose filters on this view are pushed into it after its WHERE
    # (``view_pushdown``): the filters above hold them too
    pushed_from: str | None = None
    # the join below that Spark pushes its WHERE into (through the join's projection, then
    # PushPredicateThroughJoin and EliminateOuterJoin): the join's plan holds it after the
    # join's own WHERE; the view still runs it, keeping the same rows
    where_pushed_into: str | None = None

    @property
    def filters(self) -> tuple[exp.Expression, ...]:
        """Its WHERE's conjuncts and the conjuncts pushed into it, those below its input's
        watermark node first."""
        return (*self.filters_below_watermark, *self.filters_above_watermark)


@dataclass(frozen=True, slots=True)
class SinkNode:
    relation: str
    target: Format
    checkpoint: str | None
    mode: OutputMode  # the query's output mode: its aggregate's, else append


@dataclass(frozen=True, slots=True)
class Check:
    """A pipeline-level verdict, printed under the joins in `sjoin plan`."""

    name: str
    verdict: Literal["ok", "error", "warning"]
    detail: str
    # the relations it judges, the one it is about last (`output mode of X`: X; `global
    # watermark: A -> B`: A, B): read these, never the name, whose text holds user names
    relations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TableNode:
    """A static table (``table`` statement): read in batch by ``spark.read`` in each
    micro-batch; no watermark, not a streaming source (``Plan.sources`` leaves it out)."""

    name: str
    columns: tuple[Column, ...]
    source: Format
    name_span: Span

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """A table reads no relation."""
        return ()

    @property
    def layout(self) -> tuple[tuple[str, str], ...]:
        """Its rows' layout: (column name, canonical type name)."""
        return tuple((c.name, c.type.name) for c in self.columns)

    @property
    def input_watermarks(self) -> tuple[tuple[str, InputWatermark], ...]:
        return ()


@dataclass(frozen=True, slots=True)
class StaticInput:
    """One input of a stream-static join: the stream side, or the static table."""

    name: Literal["left", "right"]
    relation: str
    alias: str
    columns: tuple[Column, ...]
    static: bool  # the table's side: read whole in each micro-batch, never stored


@dataclass(frozen=True, slots=True)
class StaticJoinNode:
    """A stream-static join (compiler/planning/tables.py): a stateless operator.  Each micro-batch's
    rows of the stream side are joined with the table's rows as the table is in that
    micro-batch; nothing is stored for either side, no watermark is needed or used, nothing
    is evicted, and no row is dropped as late (Spark plans it as a batch join: a broadcast or
    sort-merge join, no StreamingSymmetricHashJoinExec).  Only the join types Spark allows
    with the table on that side are planned (E038 refuses the rest)."""

    name: str
    join_type: JoinType
    static_side: Literal["left", "right"]
    left: StaticInput
    right: StaticInput
    keys: tuple[tuple[exp.Expression, exp.Expression], ...]  # the equi-join keys
    condition: exp.Expression  # the whole ON condition, evaluated per (stream, table) pair
    output: tuple[OutputColumn, ...]
    state: str  # what it stores, in words: nothing
    name_span: Span  # the join's name in its statement
    # the stream side's rows that reach its watermark node (a stream input with a watermark):
    # those that pass the stream-only conjuncts Spark pushes below the join (inner, semi and
    # anti joins; not those on the watermarked column, which stay above the node) and the
    # isnotnull filters InferFiltersFromConstraints adds there
    filters_below_watermark: tuple[exp.Expression, ...] = ()
    not_null_below_watermark: tuple[str, ...] = ()

    @property
    def kind(self) -> JoinKind:
        return JOIN_KINDS[self.join_type]

    @property
    def inputs(self) -> tuple[tuple[str, str], ...]:
        """(input name, the relation it reads): ``left`` then ``right``."""
        return ((self.left.name, self.left.relation), (self.right.name, self.right.relation))

    @property
    def stream(self) -> StaticInput:
        return self.right if self.static_side == "left" else self.left

    @property
    def table(self) -> StaticInput:
        return self.left if self.static_side == "left" else self.right

    @property
    def layout(self) -> tuple[tuple[str, str], ...]:
        """Its output rows' layout: (column name, canonical type name)."""
        return tuple((o.name, o.type.name) for o in self.output)

    @property
    def input_watermarks(self) -> tuple[tuple[str, InputWatermark], ...]:
        return ()


PlanNode: TypeAlias = (
    StreamNode
    | JoinNode
    | AggregateNode
    | DedupNode
    | UnionNode
    | ViewNode
    | TableNode
    | StaticJoinNode
)
OperatorNode: TypeAlias = JoinNode | AggregateNode | DedupNode  # a stateful operator
OPERATOR_KINDS = (JoinNode, AggregateNode, DedupNode)  # isinstance's form of OperatorNode


def mode_operator(nodes: Mapping[str, PlanNode], root: str) -> JoinNode | AggregateNode | None:
    """The join or aggregate whose ``OUTPUT MODE`` is the mode of the query rooted at
    ``root``: the root itself, or the one under the views (stateless filters and
    projections) the query ends in, as a PySpark job's ``join(...).where(...)`` written in
    Update mode runs.  None: the query ends in no such operator."""
    node, seen = nodes.get(root), set()
    while isinstance(node, ViewNode) and node.name not in seen:
        seen.add(node.name)
        node = nodes.get(node.input)
    return node if isinstance(node, JoinNode | AggregateNode) else None


@dataclass(frozen=True)
class QueryApart:
    """The relations that the query rooted at ``root`` runs otherwise than the plan's shared
    nodes: Spark optimizes each query on its own, so a relation that another query also
    runs (a join with a sink of its own that a join above reads) gets that query's
    pushdown here and none there."""

    root: str
    nodes: tuple[PlanNode, ...]


@dataclass(frozen=True)
class Plan:
    spark: SparkVersion
    settings: Settings  # every setting's value, the defaults included
    nodes: tuple[PlanNode, ...]  # topological (spec) order
    sinks: tuple[SinkNode, ...]
    checks: tuple[Check, ...] = field(default=())
    ansi: bool = True  # spark.sql.ansi.enabled: its default for the target version
    query_roots: tuple[str, ...] = ()  # one query per sink, then per unconsumed operator
    query_modes: dict[str, OutputMode] = field(default_factory=dict)  # per operator as a root
    # the Spark confs a generated job sets: only those of the settings the spec sets
    spark_conf: dict[str, str] = field(default_factory=dict)
    # the result-changing confs the spec leaves to the cluster: conf -> (the value the plan
    # was made for, the `set` statement that pins it); a job warns where its cluster differs
    assumed_conf: dict[str, tuple[str, str]] = field(default_factory=dict)
    # every conf the results depend on, at the value the plan was made for, set or not by the
    # spec (settings.semantic_conf): what `sjoin verify` sets on the Spark it compares with
    result_conf: dict[str, str] = field(default_factory=dict)
    setting_spans: dict[str, Span] = field(default_factory=dict)  # the settings a spec sets
    # the `set` statements (as .sjoin writes them) of the settings the spec sets that are no
    # Spark conf: what a pipeline's SQL holds in `-- sjoin:` lines (the rest: spark_conf)
    set_statements: tuple[str, ...] = ()
    spark_span: Span | None = None  # the spec's `spark` statement, when it has one
    # the queries whose relations Spark plans otherwise than ``nodes`` has them, because it
    # plans each query on its own (``Planner.planned_apart``): those relations' nodes there
    apart: tuple[QueryApart, ...] = ()
    # the relations the planner copied for a later read of them in one query (Spark's plan
    # holds each read as a subtree of its own: ``read_twice.py``): copy -> the written one
    # (left out of the canonical dump when empty: every other plan keeps its identity)
    copies: dict[str, str] = field(default_factory=dict, metadata={"canonical": "omit_empty"})
    # the watermarked streams read at more than one place (a self-join, a stream read by two
    # joins of one query or twice under a union) whose watermark nodes in one query count as
    # ONE node in the global watermark, at the highest of their watermarks: from Spark 4.0
    # (SPARK-50046) the WatermarkTracker keys a node by its EventTimeWatermark's ``nodeId``,
    # which every read of the stream's one ``withWatermark`` keeps; Spark 3.3 to 3.5 key each
    # node by its place in the physical plan, so each counts on its own (empty there); left
    # out of the canonical dump when empty
    shared_watermarks: tuple[str, ...] = field(default=(), metadata={"canonical": "omit_empty"})

    @property
    def joins(self) -> tuple[JoinNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, JoinNode))

    @property
    def streams(self) -> tuple[StreamNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, StreamNode))

    @property
    def aggregates(self) -> tuple[AggregateNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, AggregateNode))

    @property
    def dedups(self) -> tuple[DedupNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, DedupNode))

    @property
    def unions(self) -> tuple[UnionNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, UnionNode))

    @property
    def views(self) -> tuple[ViewNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, ViewNode))

    @property
    def operators(self) -> tuple[OperatorNode, ...]:
        """The stateful operators (joins, aggregates, dedups), in plan order."""
        return tuple(n for n in self.nodes if isinstance(n, OPERATOR_KINDS))

    @property
    def written_operators(self) -> tuple[str, ...]:
        """The operators as the spec writes them, in plan order: a LEFT SEMI join Spark
        pushes below a union is the union of its derived joins, under the join's name (the
        derived joins are no names the user wrote); a relation's copies for its later reads
        in one query (``copies``) are left out, as the relation is there."""
        derived = {
            r for n in self.nodes if isinstance(n, UnionNode) and n.pushed_join for _, r in n.inputs
        } | set(self.copies)
        return tuple(
            n.name
            for n in self.nodes
            if n.name not in derived
            and (isinstance(n, OPERATOR_KINDS) or (isinstance(n, UnionNode) and n.pushed_join))
        )

    @property
    def tables(self) -> tuple[TableNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, TableNode))

    @property
    def static_joins(self) -> tuple[StaticJoinNode, ...]:
        return tuple(n for n in self.nodes if isinstance(n, StaticJoinNode))

    def node(self, name: str) -> PlanNode | None:
        return self._by_name.get(name)

    def mode_operator(self, root: str) -> JoinNode | AggregateNode | None:
        """The operator whose OUTPUT MODE is the query's (the module's ``mode_operator``)."""
        return mode_operator(self._by_name, root)

    def for_query(self, root: str) -> Plan:
        """The plan as the query rooted at ``root`` runs it: its relations that Spark plans
        otherwise in that query (``apart``) in place of the shared nodes."""
        found = next((q for q in self.apart if q.root == root), None)
        if found is None:
            return self
        by_name = {n.name: n for n in found.nodes}
        return replace(self, nodes=tuple(by_name.get(n.name, n) for n in self.nodes), apart=())

    @cached_property
    def _by_name(self) -> dict[str, PlanNode]:
        """Nodes by name (the first of a name): the pipeline checks look names up once per
        operator input, which a scan would make quadratic in a chain of 2,000 joins."""
        index: dict[str, PlanNode] = {}
        for n in self.nodes:
            index.setdefault(n.name, n)
        return index

    # ------------------------------------------------------------------ the graph
    # Every node names its inputs (``inputs``: (input name, relation), left before right);
    # these are the plan's only walks over them, each iterative (``graph.py``).

    def _node(self, name: str) -> PlanNode:
        node = self.node(name)
        if node is None:
            raise KeyError(f"no relation `{name}` in the plan")
        return node

    def inputs_of(self, name: str) -> tuple[tuple[str, str], ...]:
        """The inputs of relation ``name`` in the order ``Operator.step`` takes them: (input
        name, the relation it reads); a join's ``left`` and ``right``, an aggregate's
        ``input``, none for a stream.  KeyError for a name of no relation."""
        return self._node(name).inputs

    def columns_of(self, name: str) -> list[tuple[str, str]]:
        """The row layout of relation ``name``: (column name, canonical type name), a
        stream's columns or an operator's output.  KeyError for a name of no relation."""
        return list(self._node(name).layout)

    def readers(self, name: str) -> tuple[str, ...]:
        """The joins, aggregates and unions that read relation ``name``, in plan order, each
        once."""
        return self._readers.get(name, ())

    @cached_property
    def _readers(self) -> dict[str, tuple[str, ...]]:
        found: dict[str, dict[str, None]] = {}
        for n in self.nodes:
            for _, relation in n.inputs:
                found.setdefault(relation, {})[n.name] = None
        return {relation: tuple(names) for relation, names in found.items()}

    def _input_names(self, name: str) -> tuple[str, ...] | None:
        node = self.node(name)
        return None if node is None else tuple(relation for _, relation in node.inputs)

    def _nodes(self, names: list[str]) -> list[PlanNode]:
        return [self._by_name[n] for n in names]

    def closure(self, root: str) -> list[PlanNode]:
        """``root`` and every node below it, in plan (topological) order."""
        needed = set(graph.preorder(root, self._input_names)) | {root}
        return [n for n in self.nodes if n.name in needed]

    def upstream(self, name: str) -> list[PlanNode]:
        """Every relation below ``name`` (not itself), each once, depth first in input
        order (left before right)."""
        return self._nodes(graph.preorder(name, self._input_names)[1:])

    def walk(self, root: str) -> list[PlanNode]:
        """``root`` and every relation below it, each once, in dependency order: each after
        its inputs, depth first, left before right, ``root`` last."""
        return self._nodes(graph.postorder(root, self._input_names))

    def stateful_walk(self, root: str) -> list[OperatorNode]:
        """The stateful operators of ``walk(root)``: each after the operators it reads."""
        return [n for n in self.walk(root) if isinstance(n, OPERATOR_KINDS)]

    def sources(self, root: str) -> list[str]:
        """The stream reads of the query rooted at ``root`` in Spark's source order
        (``sources/0``, ...): pre-order, left before right.  A stream read twice (e.g.
        joined again with a join of its own) is two sources: Spark gives the second read a
        new instance of the relation."""
        tree = graph.preorder(root, self._input_names, each_read=True)
        return [name for name in tree if isinstance(self._by_name[name], StreamNode)]

    def stateful_operators(self, root: str) -> list[OperatorNode]:
        """The stateful operators of the query rooted at ``root`` in Spark's operator-id
        order (how its progress lists them and its checkpoint numbers their state): pre-order
        from the root, a join's left input before its right; an operator read twice is two
        operators, as in Spark's plan."""
        tree = self._nodes(graph.preorder(root, self._input_names, each_read=True))
        return [n for n in tree if isinstance(n, OPERATOR_KINDS)]
