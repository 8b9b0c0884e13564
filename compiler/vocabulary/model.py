"""The shared vocabulary of sjoin: Spark versions, join kinds, output modes, formats, and the
typed per-operator decisions that a Plan carries (which watermark, which version quirks).

A leaf module: the AST, the bound model, the plan, the back ends and the runtime all speak
these types, and every fact about a join type lives in one table, ``JOIN_KINDS``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Literal, TypeAlias, get_args

from .source import Span
from .types import SqlType, duration_ms

JoinType: TypeAlias = Literal[
    "inner", "left_outer", "right_outer", "full_outer", "left_semi", "left_anti"
]
SideName: TypeAlias = Literal["left", "right"]
OutputMode: TypeAlias = Literal["append", "update", "complete"]

SUPPORTED_SPARK: tuple[tuple[int, int], ...] = (
    (3, 3),
    (3, 4),
    (3, 5),
    (4, 0),
    (4, 1),
    (4, 2),
    (4, 3),
)
DEFAULT_SPARK = "4.3"


@dataclass(frozen=True, slots=True)
class SparkVersion:
    major: int
    minor: int
    patch: int | None = None  # None: that line's newest release

    @property
    def minor_version(self) -> tuple[int, int]:
        return (self.major, self.minor)

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}"
        return base if self.patch is None else f"{base}.{self.patch}"

    def at_least(self, major: int, minor: int) -> bool:
        return (self.major, self.minor) >= (major, minor)

    @classmethod
    def parse(cls, text: str) -> SparkVersion | None:
        """``X.Y`` or ``X.Y.Z`` in ASCII digits, at most 4 each (the one parser of a version a
        user wrote: the `spark` statement, `diff --spark/--to`, `verify --spark`), else None.
        Not ``int`` on ``str.isdigit``: that takes ``²``, ``٣`` and the full-width 3, and
        ``int`` fails on thousands of digits."""
        m = _VERSION.fullmatch(text)
        if m is None:
            return None
        return cls(int(m[1]), int(m[2]), int(m[3]) if m[3] else None)


_VERSION = re.compile(r"([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,4}))?")


# A Kafka source's options that map a declared column to a field of the record instead of
# the value: option -> the field of Spark's Kafka source it reads. sjoin's own options (Spark
# never sees them); no Spark Kafka source option has these names, in any case.
KAFKA_RECORD_OPTIONS: dict[str, Literal["timestamp", "key"]] = {
    "timestamp_column": "timestamp",  # a TIMESTAMP column: the record's timestamp (ms)
    "key_column": "key",  # a STRING column: the record's key as UTF-8 text
}


@dataclass(frozen=True, slots=True)
class Format:
    """A source or sink: a format name and its options, in written order."""

    format: str
    options: tuple[tuple[str, str], ...]
    span: Span

    def option(self, key: str) -> str | None:
        return next((v for k, v in self.options if k == key), None)

    def record_columns(self) -> dict[str, Literal["timestamp", "key"]]:
        """For a Kafka source: each column read from the record's metadata rather than its
        value (``timestamp_column``, ``key_column``), column name -> ``timestamp``/``key``,
        in the order the options are written; empty for every other format."""
        if self.format != "kafka":
            return {}
        return {v: KAFKA_RECORD_OPTIONS[k] for k, v in self.options if k in KAFKA_RECORD_OPTIONS}


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a relation's output, as Spark's attribute would be."""

    name: str
    type: SqlType
    event_time: bool = False  # carries watermark metadata (EventTimeWatermark.delayKey)
    origin: str = ""  # lineage for messages, e.g. "impressions.impression_time"


# ---------------------------------------------------------------------- settings

WatermarkPolicy: TypeAlias = Literal["min", "max"]
StateStoreName: TypeAlias = Literal["hdfs", "rocksdb"]


def valid_trigger(text: str) -> bool:
    """The `trigger` setting's forms: ``available_now``, ``once`` or a duration such as
    ``10 seconds``; empty is the default (as fast as possible)."""
    if text in ("", "available_now", "once"):
        return True
    amount, _, unit = text.partition(" ")
    return duration_ms(amount, unit) is not None


@dataclass(frozen=True, slots=True)
class Settings:
    """Every `set` setting's value for a plan, the defaults included: built by
    ``compiler.settings.settings_of`` from the one table (names, defaults, choices), and
    checked when built, so a reader takes an attribute and never restates a default."""

    multiple_watermark_policy: WatermarkPolicy
    shuffle_partitions: int
    state_store: StateStoreName
    no_data_micro_batches: bool
    allow_multiple_stateful_operators: bool
    correctness_check: bool
    ansi_enabled: bool  # spark.sql.ansi.enabled (its default: the target version's)
    allow_unemitted_outer_rows: bool
    session_timezone: str
    trigger: str  # "", "available_now", "once" or a duration ("10 seconds")

    def __post_init__(self) -> None:
        bad = [
            name
            for name, ok in (
                (
                    "multiple_watermark_policy",
                    self.multiple_watermark_policy in get_args(WatermarkPolicy),
                ),
                ("shuffle_partitions", _positive_int(self.shuffle_partitions)),
                ("state_store", self.state_store in get_args(StateStoreName)),
                ("no_data_micro_batches", isinstance(self.no_data_micro_batches, bool)),
                (
                    "allow_multiple_stateful_operators",
                    isinstance(self.allow_multiple_stateful_operators, bool),
                ),
                ("correctness_check", isinstance(self.correctness_check, bool)),
                ("ansi_enabled", isinstance(self.ansi_enabled, bool)),
                ("allow_unemitted_outer_rows", isinstance(self.allow_unemitted_outer_rows, bool)),
                ("session_timezone", isinstance(self.session_timezone, str)),
                ("trigger", isinstance(self.trigger, str) and valid_trigger(self.trigger)),
            )
            if not ok
        ]
        if bad:
            raise ValueError(
                "invalid settings: " + ", ".join(f"{n} = {getattr(self, n)!r}" for n in bad)
            )

    def value(self, name: str) -> str | int | bool:
        """A setting's value by name (the table-driven readers: confs, plan JSON, diff)."""
        if name not in _SETTING_NAMES:
            raise KeyError(name)
        value: str | int | bool = getattr(self, name)
        return value

    def items(self) -> tuple[tuple[str, str | int | bool], ...]:
        """Every setting and its value, in the table's order."""
        return tuple((name, self.value(name)) for name in _SETTING_NAMES)


_SETTING_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Settings))


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


# ---------------------------------------------------------------------- join kinds


@dataclass(frozen=True, slots=True)
class JoinKind:
    """Everything sjoin knows about one join type, in one row."""

    join_type: JoinType  # as written in a spec
    keyword: str  # as written in SQL: "LEFT OUTER"
    spark_name: str  # Spark's JoinType in plans and messages: "LeftOuter"
    executed_as: JoinType  # what Spark runs (Spark has no stream-stream LEFT ANTI)
    preserved: tuple[SideName, ...]  # sides whose unmatched rows come out null-padded
    keeps_in_join: tuple[SideName, ...]  # sides whose side-only conjuncts stay in the join
    infers_not_null: tuple[SideName, ...]  # InferFiltersFromConstraints adds isnotnull here
    must_evict: tuple[SideName, ...]  # sides whose state Spark's analysis needs evictable
    drops_matched: bool = False  # LEFT ANTI: keep only the unmatched (null-padded) left rows
    output_sides: tuple[SideName, ...] = ("left", "right")  # sides whose columns rows carry

    @property
    def outer(self) -> bool:
        return bool(self.preserved)


JOIN_KINDS: dict[JoinType, JoinKind] = {
    k.join_type: k
    for k in (
        JoinKind("inner", "INNER", "Inner", "inner", (), (), ("left", "right"), ()),
        JoinKind("left_outer", "LEFT OUTER", "LeftOuter", "left_outer", ("left",), ("left",),
                 ("right",), ("left",)),
        JoinKind("right_outer", "RIGHT OUTER", "RightOuter", "right_outer", ("right",),
                 ("right",), ("left",), ("right",)),
        JoinKind("full_outer", "FULL OUTER", "FullOuter", "full_outer", ("left", "right"),
                 ("left", "right"), (), ("left", "right")),
        JoinKind("left_semi", "LEFT SEMI", "LeftSemi", "left_semi", (), (), ("left", "right"),
                 ("left",), output_sides=("left",)),
        JoinKind("left_anti", "LEFT ANTI", "LeftAnti", "left_outer", ("left",), ("left",),
                 ("right",), ("left",), drops_matched=True, output_sides=("left",)),
    )
}  # fmt: skip


# ---------------------------------------------------------------------- typed decisions


@dataclass(frozen=True, slots=True)
class Bound:
    """One conjunct's state watermark for a side: ``trunc((coef*W*1000 + const_us)/1000) -
    (0 if strict else 1)`` milliseconds, where W is the eviction watermark (ms)."""

    coef: int
    const_us: float
    strict: bool
    conjunct: str  # the conjunct as Spark SQL, for explanations

    def at(self, watermark_ms: int) -> int:
        total = (self.coef * float(watermark_ms) * 1000.0 + self.const_us) / 1000.0
        return math.trunc(total) - (0 if self.strict else 1)


@dataclass(frozen=True, slots=True)
class WatermarkChoice:
    """One watermark a stateful operator uses: the global one, or the one propagated to it
    through the operators below (Spark 3.5+), as of this batch or of the previous one."""

    source: Literal["global", "propagated"]
    batch: Literal["this", "previous"]


@dataclass(frozen=True, slots=True)
class WatermarkUse:
    """Which watermark an operator uses for late rows and for eviction, per the target Spark
    version and ``spark.sql.streaming.statefulOperator.allowMultiple`` (reference §4)."""

    late_rows: WatermarkChoice
    eviction: WatermarkChoice
    # what it hands to the next operator ("input": its input watermark, a deduplication's)
    output: Literal["global", "min_of_state_and_input", "input"]


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A post-join condition that is exactly a time range between two TIMESTAMP columns:
    ``left.left_column + lower_us <= right.right_column <= left.left_column + upper_us``.
    The runtime checks it inline in its probe loops instead of evaluating the condition."""

    left_column: str
    right_column: str
    lower_us: int
    upper_us: int


@dataclass(frozen=True, slots=True)
class JoinQuirks:
    """Version-dependent behaviours of one stream-stream join (reference §8)."""

    append_rule: bool  # SPARK-49829: a row is added to state only if the other side may match
    semi_right_first: bool  # 4.2+: LeftSemi processes the right input before the left
    count_all_removals: bool  # 4.3+: numRowsRemoved counts every removed state row


# ---------------------------------------------------------------------- analysis facts


@dataclass(frozen=True, slots=True)
class EmptyRange:
    """Two range conditions on the same pair of TIMESTAMP columns that no pair of rows can
    satisfy together (W003)."""

    left: str  # e.g. "i.impression_time"
    right: str
    low_ms: int
    high_ms: int
    span: Span  # the later of the two conjuncts


@dataclass(frozen=True, slots=True)
class JoinAnalysis:
    """What Spark's analysis rules and sjoin's warnings judge about one join, worked out
    once by the planner (with the state solver) so that ``hazards`` only reads it."""

    name_span: Span
    how_span: Span
    condition_span: Span
    input_spans: tuple[Span, Span]  # the left and right `relation [AS alias]`
    typed_cleanly: bool  # no part of the condition failed to bind (then nothing is judged)
    nondeterministic: tuple[tuple[str, Span], ...]  # conjuncts Spark rejects, as SQL
    declared_event_time: tuple[tuple[str, ...], tuple[str, ...]]  # watermarked input columns
    event_time_columns: tuple[tuple[str, ...], tuple[str, ...]]  # those reaching the join
    keys_carry_event_time: bool  # a join key has watermark metadata (key eviction)
    analysis_bounds: tuple[bool, bool]  # per side: Spark's analysis check finds a state bound
    always_false: Span | None  # a literal FALSE conjunct
    empty_range: EmptyRange | None
    between_loses_state: tuple[Span | None, Span | None]  # per side: W004's BETWEEN
    time_interval: bool  # Spark 3.4's test: a range comparison on event time
    # per side: (time column, window column) when the input keeps its time column with its
    # watermark mark beside a window of it (a pipeline's SQL subquery, a job's withColumn)
    # and the time reaches the join (Spark prunes it when nothing reads it): two event-time
    # columns Spark counts (E025) where the model above sees one
    time_beside_window: tuple[tuple[str, str] | None, tuple[str, str] | None] = (None, None)
    mode_span: Span | None = None  # its ``OUTPUT MODE`` clause


@dataclass(frozen=True, slots=True)
class AggregateAnalysis:
    name_span: Span
    mode_span: Span | None
    input_event_time: tuple[str, ...]  # the input's watermarked columns, for hints
    # its OUTPUT MODE clause (append without one); the node's ``mode`` is the mode it runs
    # in, its query's when it is below the query's root
    written_mode: OutputMode = "append"
