"""The plan catalogue: small specs and what Spark does with each join, as the planner must
predict it.

Every case names the source of its expectation:

* ``ref §3.3 #n`` / ``ref §11`` / ``ref §7.x``: the reference document
  (``/work/shared/reference/spark-stream-join-semantics.md``), which records runs of real
  Spark;
* ``run: Spark 4.3.0``: checked against real local Spark 4.3.0 by
  ``tests/integration/spark/test_plan_vs_spark.py`` (every case with a ``spark`` check is re-run
  there);
* a Spark source file (``StreamingJoinHelper.scala``, ``UnsupportedOperationChecker.scala``)
  where the expectation was read in code.

Where the reference and a real 4.3.0 run differ, the case follows the run and says so.

Offsets follow the plan JSON contract (language brief §5): a row of a side is evicted when
its ``column`` is ``<= W + offset_ms``, W the operator's eviction watermark. Spark prints the
absolute value in the executed plan; at W = 90 000 ms, ``value predicate: (t <= 84999000)``
is offset -5001.

Most cases are one join of two streams with the same columns, built by ``TwoStreamJoin``
(its spec and its PySpark twin come from the same ON text). Pipelines (aggregates, chains)
are written out in full.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# --------------------------------------------------------------------------- expectations

COLUMNS = (
    ("k", "BIGINT"),
    ("t", "TIMESTAMP"),
    ("t2", "TIMESTAMP"),
    ("v", "STRING"),
    ("n", "BIGINT"),
)
SPARK_DDL = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)

Eviction = Literal["key", "value", "never"]
JoinType = Literal["inner", "left_outer", "right_outer", "full_outer", "left_semi", "left_anti"]

UNSET: object = object()  # "not checked" for optional expectations


@dataclass(frozen=True)
class State:
    """Expected ``state.left`` / ``state.right`` of the plan JSON."""

    eviction: Eviction
    column: str | None = None  # for key/value: None = not checked (an expression key)
    offset_ms: int | None = None

    def __str__(self) -> str:
        if self.eviction == "never":
            return "never"
        return f"{self.eviction}({self.column}, {self.offset_ms:+d} ms)"


def key(column: str) -> State:
    return State("key", column, 0)


def value(column: str, offset_ms: int) -> State:
    return State("value", column, offset_ms)


NEVER = State("never")


@dataclass(frozen=True)
class JoinExpect:
    """What one join of the spec must plan to (``None``/``UNSET`` fields are not checked)."""

    left: State | None = None
    right: State | None = None
    keys: tuple[tuple[str, str], ...] | None = None
    join_type: JoinType | None = None
    # pre-join filters kept in the join (Spark's leftOnly / rightOnly): text, None = no
    # filter, UNSET = not checked; compared ignoring case, blanks and quotes
    pre_left: str | object | None = UNSET
    pre_right: str | object | None = UNSET


# --------------------------------------------------------------------------- spec shapes


@dataclass(frozen=True)
class TwoStreamJoin:
    """``stream lhs`` and ``stream rhs`` (columns ``COLUMNS``), one join ``j`` of them."""

    on: str
    how: JoinType = "inner"
    left_alias: str = "L"
    right_alias: str = "R"
    left_delay: str | None = "10 seconds"  # None: no watermark on that stream
    right_delay: str | None = "10 seconds"
    select: tuple[str, ...] | None = None  # None: every column (the spec's default output)
    version: str | None = "4.3"  # the `spark X.Y` line
    settings: tuple[tuple[str, str], ...] = ()

    def spec(self) -> str:
        keyword = {
            "inner": "INNER",
            "left_outer": "LEFT OUTER",
            "right_outer": "RIGHT OUTER",
            "full_outer": "FULL OUTER",
            "left_semi": "LEFT SEMI",
            "left_anti": "LEFT ANTI",
        }[self.how]
        cols = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)
        lines = []
        if self.version:
            lines.append(f"spark {self.version}")
        lines += [f"set {name} = {val}" for name, val in self.settings]
        for name, delay in (("lhs", self.left_delay), ("rhs", self.right_delay)):
            lines.append(f"stream {name} ({cols})")
            if delay:
                lines.append(f"    watermark t delay {delay}")
        lines.append(f"join j = lhs AS {self.left_alias} {keyword} JOIN rhs AS {self.right_alias}")
        lines.append(f"    ON {self.on}")
        if self.select:
            lines.append(f"    SELECT {', '.join(self.select)}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SparkCheck:
    """How ``tests/integration/spark/test_plan_vs_spark.py`` rebuilds the case in PySpark.

    Generic (``custom is None``): the case's ``TwoStreamJoin`` on two MemoryStreams with
    ``withWatermark("t", delay)``; one row per side (key 1) at ``times`` seconds, then, if
    the last executed plan does not run at ``eviction_ms`` yet, an empty batch. ``error``:
    a text the failure must contain; ``error_at``: ``build`` (PySpark's eager analysis of
    ``join``), ``start`` (the streaming checks of ``start()``) or ``batch`` (planning).
    ``custom`` names a dedicated builder in the Spark test (pipelines, the anti rewrite).
    """

    condition: str | None = None  # Spark SQL condition; default: the spec's ON text
    window: str | None = None  # project window(t, this) as `w` on both sides ...
    raw_time: Literal["drop", "realias"] = "drop"  # ... and drop or de-watermark `t`
    times: tuple[int, int] = (100, 100)
    eviction_ms: int = 90_000
    conf: tuple[tuple[str, str], ...] = ()
    error: str | None = None
    error_at: Literal["build", "start", "batch"] = "start"
    custom: str | None = None


@dataclass(frozen=True)
class Case:
    id: str
    spec: str
    source: str
    joins: tuple[JoinExpect, ...] = ()
    codes: frozenset[str] = frozenset()  # diagnostic codes (W002 is not checked)
    exact: bool = True  # codes must be exactly these (else: at least these)
    absent: frozenset[str] = frozenset()  # codes that must not be reported
    refs: tuple[str, ...] = ()  # reference table rows this case stands for
    shape: TwoStreamJoin | None = None
    spark: SparkCheck | None = None


def two(
    id: str,
    on: str,
    source: str,
    *,
    left: State | None = None,
    right: State | None = None,
    keys: tuple[tuple[str, str], ...] | None = None,
    pre_left: str | object | None = UNSET,
    pre_right: str | object | None = UNSET,
    codes: tuple[str, ...] = (),
    exact: bool = True,
    absent: tuple[str, ...] = (),
    refs: tuple[str, ...] = (),
    spark: SparkCheck | None = None,
    **shape: object,
) -> Case:
    assert spark is None or isinstance(spark, SparkCheck), "the Spark version is `version=`"
    join = TwoStreamJoin(on, **shape)  # type: ignore[arg-type]
    return Case(
        id=id,
        spec=join.spec(),
        source=source,
        joins=(
            JoinExpect(
                left=left,
                right=right,
                keys=keys,
                join_type=join.how,
                pre_left=pre_left,
                pre_right=pre_right,
            ),
        ),
        codes=frozenset(codes),
        exact=exact,
        absent=frozenset(absent),
        refs=refs,
        shape=join,
        spark=spark,
    )


RUN = "run: Spark 4.3.0"
ONCE = "run once: Spark 4.3.0 (verified, not re-run by the suite)"
KEY = (("L.k", "R.k"),)
KEY_AB = (("a.k", "b.k"),)
R1 = "L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS"
S11 = "b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE"
AB = {"left_alias": "a", "right_alias": "b"}
CHECK = SparkCheck()
OUTER_REJECTED = (
    "join between two streaming DataFrame/Datasets is not supported without a watermark"
)

# --------------------------------------------------------------------------- §3.3 rows

REF_33 = [
    two(
        "r33_1_between_nonstrict",
        f"L.k = R.k AND {R1}",
        f"ref §3.3 #1 (3.3.4-4.3.0); {RUN}",
        left=value("t", -5001),
        right=value("t", -10001),
        keys=KEY,
        refs=("3.3#1",),
        spark=CHECK,
    ),
    two(
        "r33_2_strict_bounds",
        "L.k = R.k AND L.t > R.t - INTERVAL 5 SECONDS AND L.t < R.t + INTERVAL 10 SECONDS",
        f"ref §3.3 #2 (4.0.1); {RUN}",
        left=value("t", -5000),
        right=value("t", -10000),
        refs=("3.3#2",),
        spark=CHECK,
    ),
    two(
        "r33_3_strict_lower_nonstrict_upper",
        "L.k = R.k AND L.t > R.t - INTERVAL 5 SECONDS AND L.t <= R.t + INTERVAL 10 SECONDS",
        "ref §3.3 #3 (3.3.4, 3.5.1, 4.3.0)",
        left=value("t", -5000),
        right=value("t", -10001),
        refs=("3.3#3",),
    ),
    two(
        "r33_4_interval_on_evicted_side",
        "L.k = R.k AND L.t + INTERVAL 5 SECONDS >= R.t AND R.t + INTERVAL 2 SECONDS > L.t",
        f"ref §3.3 #4 (4.0.1); {RUN}",
        left=value("t", -5001),
        right=value("t", -2000),
        refs=("3.3#4",),
        spark=CHECK,
    ),
    two(
        "r33_5_two_lower_bounds_min_wins",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS AND L.t >= R.t - INTERVAL 8 SECONDS",
        f"ref §3.3 #5 (4.0.1); {ONCE}",
        left=value("t", -8001),
        right=NEVER,
        codes=("W001",),
        refs=("3.3#5",),
    ),
    two(
        "r33_6_cast_between_spark35",
        "L.k = R.k AND CAST(L.t AS LONG) BETWEEN CAST(R.t AS LONG) - 5 AND CAST(R.t AS LONG) + 10",
        "ref §3.3 #6 (3.3.4, 3.4.4, 3.5.1: both bounds; BETWEEN expanded to >= AND <=)",
        left=value("t", -5001),
        right=value("t", -10001),
        version="3.5",
        refs=("3.3#6",),
    ),
    two(
        "r33_6_cast_between_spark43",
        "L.k = R.k AND CAST(L.t AS LONG) BETWEEN CAST(R.t AS LONG) - 5 AND CAST(R.t AS LONG) + 10",
        f"ref §3.3 #6 (4.0.1-4.3.0: _common_expr_0 alias loses the right bound); {RUN} "
        "(left 84 999 needs L.t kept in the join output, see `pruned_event_time_column`)",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001", "W004"),
        refs=("3.3#6",),
        spark=CHECK,
    ),
    two(
        "r33_7_double_cast_fraction",
        "L.k = R.k AND CAST(L.t AS DOUBLE) >= CAST(R.t AS DOUBLE) - 5.5",
        f"ref §3.3 #7 (4.0.1); {RUN}",
        left=value("t", -5501),
        right=NEVER,
        codes=("W001",),
        refs=("3.3#7",),
        spark=CHECK,
    ),
    two(
        "r33_8_milliseconds",
        "L.k = R.k AND L.t >= R.t - INTERVAL 1500 MILLISECONDS",
        f"ref §3.3 #8 (4.0.1); {RUN}",
        left=value("t", -1501),
        right=NEVER,
        codes=("W001",),
        refs=("3.3#8",),
        spark=CHECK,
    ),
    two(
        "r33_9_one_day",
        "L.k = R.k AND L.t >= R.t - INTERVAL 1 DAY",
        f"ref §3.3 #9 (3.3.4, 3.5.1, 4.0.1, 4.3.0); {RUN}",
        left=value("t", -86_400_001),
        right=NEVER,
        codes=("W001",),
        refs=("3.3#9",),
        spark=CHECK,
    ),
    two(
        "r33_9_one_day_spark33",
        "L.k = R.k AND L.t >= R.t - INTERVAL 1 DAY",
        "ref §3.3 #9 and §9 'days field' (3.3.4 already counts days)",
        left=value("t", -86_400_001),
        right=NEVER,
        codes=("W001",),
        version="3.3",
        refs=("3.3#9",),
    ),
    two(
        "r33_10_month_rejected",
        "L.k = R.k AND L.t >= R.t - INTERVAL 1 MONTH",
        "ref §3.3 #10 (Spark: no state watermark); language brief §2/§4 (months are errors)",
        left=NEVER,
        right=NEVER,
        codes=("E013",),
        exact=False,
        refs=("3.3#10",),
    ),
    two(
        "r33_11_or_unrecognised",
        "L.k = R.k AND (L.t >= R.t - INTERVAL 5 SECONDS OR L.v = 'x')",
        f"ref §3.3 #11 (4.0.1); {RUN}",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        refs=("3.3#11",),
        spark=CHECK,
    ),
    two(
        "r33_12_date_trunc",
        "L.k = R.k AND date_trunc('second', L.t) >= R.t - INTERVAL 5 SECONDS",
        "ref §3.3 #12 (4.0.1); StreamingJoinHelper.collectTerms: a function is invalid",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        refs=("3.3#12",),
    ),
    two(
        "r33_13_right_without_watermark",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS",
        f"ref §3.3 #13 (4.0.1); {RUN}",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        right_delay=None,
        refs=("3.3#13",),
        spark=CHECK,
    ),
    two(
        "r33_14_left_without_watermark",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS",
        "ref §3.3 #14 (4.0.1)",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        left_delay=None,
        refs=("3.3#14",),
    ),
    two(
        "r33_15_one_direction",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS",
        f"ref §3.3 #15 (4.0.1); {ONCE}",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001",),
        refs=("3.3#15",),
    ),
    two(
        "r33_16_time_in_keys",
        "L.k = R.k AND L.t = R.t",
        f"ref §3.3 #16 (4.0.1); {RUN}",
        left=key("t"),
        right=key("t"),
        keys=(("L.k", "R.k"), ("L.t", "R.t")),
        refs=("3.3#16",),
        spark=CHECK,
    ),
    two(
        "r33_17_window_keys_drop_raw_time",
        "L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)",
        f"ref §3.3 #17, §11 (window projected as a column, raw time dropped); {RUN}",
        left=key("t"),
        right=key("t"),
        keys=(
            ("L.k", "R.k"),
            ("window(L.t, INTERVAL 10 SECONDS)", "window(R.t, INTERVAL 10 SECONDS)"),
        ),
        refs=("3.3#17",),
        spark=SparkCheck(condition="L.k = R.k AND L.w = R.w", window="10 seconds"),
    ),
]

# --------------------------------------------------------------------------- §11 rows

REF_11 = [
    two(
        f"r11_between_{how}",
        f"a.k = b.k AND {S11}",
        "ref §11 row 1 (every join type that passes analysis; 3.3.4, 3.5.7, 4.3.0); " + ONCE,
        left=value("t", -60001),
        right=value("t", -1),
        keys=KEY_AB,
        codes=("W005",) if how == "full_outer" else (),
        how=how,
        refs=("11#1",),
        **AB,
    )
    for how in ("inner", "left_outer", "right_outer", "full_outer", "left_semi")
] + [
    two(
        "r11_strict_both",
        "a.k = b.k AND b.t > a.t AND b.t < a.t + INTERVAL 1 MINUTE",
        "ref §11 row 2",
        left=value("t", -60000),
        right=value("t", 0),
        refs=("11#2",),
        **AB,
    ),
    two(
        "r11_strict_lower_nonstrict_upper",
        "a.k = b.k AND b.t > a.t AND b.t <= a.t + INTERVAL 1 MINUTE",
        "ref §11 row 3",
        left=value("t", -60001),
        right=value("t", 0),
        refs=("11#3",),
        **AB,
    ),
    two(
        "r11_asymmetric_bounds",
        "a.k = b.k AND b.t >= a.t - INTERVAL 5 MINUTES AND b.t <= a.t + INTERVAL 30 SECONDS",
        f"ref §11 row 4; {ONCE}",
        left=value("t", -30001),
        right=value("t", -300001),
        refs=("11#4",),
        **AB,
    ),
    two(
        "r11_interval_on_other_operand",
        "a.k = b.k AND a.t + INTERVAL 1 HOUR >= b.t AND b.t >= a.t",
        f"ref §11 row 5; {ONCE}",
        left=value("t", -3_600_001),
        right=value("t", -1),
        refs=("11#5",),
        **AB,
    ),
    two(
        "r11_loosest_bound_wins",
        "a.k = b.k AND b.t >= a.t - INTERVAL 10 MINUTES AND b.t >= a.t"
        " AND b.t <= a.t + INTERVAL 1 HOUR AND b.t < a.t + INTERVAL 2 HOURS",
        f"ref §11 row 6 (min over conjuncts); {RUN}",
        left=value("t", -7_200_000),
        right=value("t", -600_001),
        refs=("11#6",),
        spark=CHECK,
        **AB,
    ),
    two(
        "r11_interval_times_two",
        "a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE * 2",
        f"ref §11 row 7 (constant folded before the exec computes it); {RUN}",
        left=value("t", -120_001),
        right=value("t", -1),
        refs=("11#7",),
        spark=CHECK,
        **AB,
    ),
    two(
        "r11_time_in_keys",
        "a.k = b.k AND a.t = b.t",
        "ref §11 row 8",
        left=key("t"),
        right=key("t"),
        keys=(("a.k", "b.k"), ("a.t", "b.t")),
        refs=("11#8",),
        **AB,
    ),
    two(
        "r11_window_keys_realias_raw_time",
        "a.k = b.k AND window(a.t, INTERVAL 1 MINUTE) = window(b.t, INTERVAL 1 MINUTE)",
        f"ref §11 row 9 (raw time re-aliased without watermark metadata); {RUN}",
        left=key("t"),
        right=key("t"),
        refs=("11#9",),
        spark=SparkCheck(
            condition="a.k = b.k AND a.w = b.w", window="1 minute", raw_time="realias"
        ),
        **AB,
    ),
    two(
        "r11_or_of_ranges",
        "a.k = b.k AND (b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE"
        " OR b.t BETWEEN a.t + INTERVAL 5 MINUTES AND a.t + INTERVAL 6 MINUTES)",
        f"ref §11 row 10; {ONCE}",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        refs=("11#10",),
        **AB,
    ),
    two(
        "r11_unix_timestamp",
        "a.k = b.k AND unix_timestamp(b.t) >= unix_timestamp(a.t) - 5",
        "ref §11 row 10 (unix_timestamp is a function: collectTerms invalid)",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        refs=("11#10",),
        **AB,
    ),
    two(
        "r11_range_within_one_side",
        "a.k = b.k AND a.t2 >= a.t - INTERVAL 5 MINUTES AND b.t2 <= b.t",
        "ref §11 row 10 (one-side conjuncts are pushed below an inner join)",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        refs=("11#10",),
        **AB,
    ),
]

# --------------------------------------------------------------------------- filters per join type

FILTERS = "L.k = R.k AND L.v > 'a' AND R.v < 'z' AND " + R1
FILTER_CASES = [
    two(
        f"filters_{how}",
        FILTERS,
        f"ref §2.2 table (PushPredicateThroughJoin); §1.5; {ONCE if how == 'inner' else RUN}",
        left=value("t", -5001),
        right=value("t", -10001),
        pre_left=pre_left,
        pre_right=pre_right,
        codes=("W005",) if how == "full_outer" else (),
        how=how,
        spark=None if how == "inner" else CHECK,
    )
    for how, pre_left, pre_right in (
        ("inner", None, None),
        ("left_outer", "L.v > 'a'", None),
        ("right_outer", None, "R.v < 'z'"),
        ("full_outer", "L.v > 'a'", "R.v < 'z'"),
        ("left_semi", None, None),
    )
]

# --------------------------------------------------------------------------- analysis rules

ANALYSIS = [
    two(
        "e021_left_outer_upper_bound_only",
        "L.k = R.k AND L.t <= R.t + INTERVAL 5 SECONDS",
        f"ref §7.1 [run 4.0.1]; UnsupportedOperationChecker; {RUN}",
        left=NEVER,
        right=value("t", -5001),
        codes=("E021",),
        exact=False,
        how="left_outer",
        spark=SparkCheck(error=OUTER_REJECTED),
    ),
    two(
        "e021_left_outer_upper_bound_only_spark33",
        "L.k = R.k AND L.t <= R.t + INTERVAL 5 SECONDS",
        "ref §7.1 (same rule and text in the 3.3-era file)",
        left=NEVER,
        right=value("t", -5001),
        codes=("E021",),
        exact=False,
        how="left_outer",
        version="3.3",
    ),
    two(
        "left_outer_lower_bound_only_ok",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS",
        f"ref §7.1 [run 4.0.1]: passes, left evicts, right never; {ONCE}",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001",),
        how="left_outer",
    ),
    two(
        "e021_right_outer_lower_bound_only",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS",
        f"ref §7.1 (RightOuter: mirror rule); {RUN}",
        left=value("t", -5001),
        right=NEVER,
        codes=("E021",),
        exact=False,
        how="right_outer",
        spark=SparkCheck(error=OUTER_REJECTED),
    ),
    two(
        "full_outer_one_direction_ok",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS",
        f"ref §7.1 [run 4.0.1]: FullOuter needs either side; right never evicted; {RUN}",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001", "W005"),
        how="full_outer",
        spark=CHECK,
        settings=(("allow_unemitted_outer_rows", "true"),),  # E028 without it
    ),
    two(
        "e021_full_outer_no_range",
        "L.k = R.k AND L.v = R.v",
        "ref §7.1 (FullOuter: watermark in keys or either direction bounded)",
        left=NEVER,
        right=NEVER,
        codes=("E021",),
        exact=False,
        how="full_outer",
    ),
    two(
        "e021_left_semi_no_range",
        "L.k = R.k",
        f"ref §7.1 (LeftSemi like LeftOuter); {RUN}",
        left=NEVER,
        right=NEVER,
        codes=("E021",),
        exact=False,
        how="left_semi",
        spark=SparkCheck(error=OUTER_REJECTED),
    ),
    two(
        "e021_left_outer_or",
        "L.k = R.k AND (L.t >= R.t - INTERVAL 5 SECONDS OR L.v = 'x')",
        f"ref §7.1 [run 4.0.1]: an OR condition fails; {RUN}",
        left=NEVER,
        right=NEVER,
        codes=("E021",),
        exact=False,
        how="left_outer",
        spark=SparkCheck(error=OUTER_REJECTED),
    ),
    two(
        "left_outer_preserved_side_without_watermark",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS",
        f"ref §7.1 and §3.1 [run 4.0.1, 4.3.0]: passes analysis, cleanup left = null, "
        f"right = null; {RUN}",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        absent=("E021",),
        exact=False,
        how="left_outer",
        left_delay=None,
        spark=CHECK,
        settings=(("allow_unemitted_outer_rows", "true"),),  # E028 without it
    ),
    two(
        "left_anti_as_left_outer",
        f"a.k = b.k AND {S11}",
        "language brief §3 (LEFT ANTI = left outer + drop matched); ref §7.1 "
        f"(native LeftAnti rejected); {RUN}",
        left=value("t", -60001),
        right=value("t", -1),
        keys=KEY_AB,
        how="left_anti",
        spark=SparkCheck(custom="left_anti"),
        **AB,
    ),
    two(
        "e021_left_anti_no_range",
        "L.k = R.k AND L.v = R.v",
        "language brief §4 (anti joins whose state cannot be evicted); ref §7.1 LeftOuter rule",
        left=NEVER,
        right=NEVER,
        codes=("E021",),
        exact=False,
        how="left_anti",
    ),
    two(
        "e020_no_equality",
        R1,
        f"ref §7.1 (StreamingJoinStrategy fails at the first batch); {RUN}",
        left=value("t", -5001),
        right=value("t", -10001),
        keys=(),
        codes=("E020",),
        exact=False,
        spark=SparkCheck(error="Stream-stream join without equality predicate", error_at="batch"),
    ),
    two(
        "e021_left_outer_interval_times_two",
        "a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE * 2",
        f"{RUN}: analysis sees the unfolded interval product (collectTerms invalid), so the "
        "left bound is missing and LeftOuter is rejected; the exec would evict a at -120001",
        left=value("t", -120_001),
        right=value("t", -1),
        codes=("E021",),
        exact=False,
        how="left_outer",
        spark=SparkCheck(error=OUTER_REJECTED),
        **AB,
    ),
    two(
        "left_outer_cast_between_spark43",
        "L.k = R.k AND CAST(L.t AS LONG) BETWEEN CAST(R.t AS LONG) - 5 AND CAST(R.t AS LONG) + 10",
        f"{ONCE}: passes analysis, exec left 84 999, right none (ref §3.3 #6 for 4.x)",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001", "W004"),
        how="left_outer",
    ),
    two(
        "right_outer_cast_between_spark43",
        "L.k = R.k AND CAST(L.t AS LONG) BETWEEN CAST(R.t AS LONG) - 5 AND CAST(R.t AS LONG) + 10",
        f"{RUN}: Spark accepts it (analysis sees BETWEEN before the common-expression "
        "rewrite) but the preserved right side is then never evicted",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001", "W004"),
        exact=False,
        absent=("E021",),
        how="right_outer",
        spark=CHECK,
        settings=(("allow_unemitted_outer_rows", "true"),),  # E028 without it
    ),
    two(
        "e028_right_outer_never_emitted",
        "L.k = R.k AND CAST(L.t AS LONG) BETWEEN CAST(R.t AS LONG) - 5 AND CAST(R.t AS LONG) + 10",
        "the case above without the setting: Spark accepts it and never emits the unmatched "
        "right rows, which sjoin rejects as silent data loss",
        left=value("t", -5001),
        right=NEVER,
        codes=("E028", "W004"),
        exact=False,
        absent=("E021", "W001"),
        how="right_outer",
    ),
    two(
        "right_outer_cast_between_spark35",
        "L.k = R.k AND CAST(L.t AS LONG) BETWEEN CAST(R.t AS LONG) - 5 AND CAST(R.t AS LONG) + 10",
        "ref §3.3 #6 (3.x keeps both bounds), §7.1 RightOuter rule",
        left=value("t", -5001),
        right=value("t", -10001),
        how="right_outer",
        version="3.5",
    ),
]

# --------------------------------------------------------------------------- solver shapes

SHAPES = [
    two(
        "cast_long_numbers_are_seconds",
        "L.k = R.k AND CAST(L.t AS LONG) >= CAST(R.t AS LONG) - 5",
        f"ref §3.2 (casts transparent, numeric literals are seconds); {ONCE}",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001",),
    ),
    two(
        "double_upper_bound_strict",
        "L.k = R.k AND CAST(L.t AS DOUBLE) < CAST(R.t AS DOUBLE) + 2.5",
        f"ref §3.2 (DoubleType literal x 1e6 us; strict: no -1); {ONCE}",
        left=NEVER,
        right=value("t", -2500),
        codes=("W001",),
    ),
    two(
        "interval_subtracted_on_other_operand",
        "L.k = R.k AND R.t - INTERVAL 5 SECONDS <= L.t",
        f"ref §3.2 (canonical form l < r, DatetimeSub); {ONCE}",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001",),
    ),
    two(
        "interval_as_first_operand",
        "L.k = R.k AND INTERVAL 10 SECONDS + R.t >= L.t",
        f"ref §3.2 (TimeAdd, commutative terms); {ONCE}",
        left=NEVER,
        right=value("t", -10001),
        codes=("W001",),
    ),
    two(
        "one_week",
        "L.k = R.k AND L.t >= R.t - INTERVAL 1 WEEK",
        f"ref §3.2 (days x 86 400 000 000 us); {ONCE}",
        left=value("t", -604_800_001),
        right=NEVER,
        codes=("W001",),
    ),
    two(
        "two_days_spark34",
        "L.k = R.k AND R.t BETWEEN L.t - INTERVAL 2 DAYS AND L.t",
        "ref §3.2, §9 (days counted since 3.3.4)",
        left=value("t", -1),
        right=value("t", -172_800_001),
        version="3.4",
    ),
    two(
        "numeric_column_of_evicted_side",
        "L.k = R.k AND L.n >= CAST(R.t AS LONG) - 5",
        f"{RUN}: any attribute of the evicted side can be the constraint term "
        "(StreamingJoinHelper: no type check); the predicate is on the side's event time",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001",),
        spark=CHECK,
    ),
    two(
        "other_timestamp_of_evicted_side",
        "L.k = R.k AND L.t2 >= R.t - INTERVAL 5 SECONDS",
        f"ref §3.1 (value predicate always on this side's event-time column); {ONCE}",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001",),
    ),
    two(
        "non_watermark_column_of_other_side",
        "L.k = R.k AND L.t >= R.t2 - INTERVAL 5 SECONDS",
        f"ref §3.2 (a B attribute without watermark metadata is not replaced); {RUN}",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        spark=CHECK,
    ),
    two(
        "timestamp_difference",
        "L.k = R.k AND R.t - L.t <= INTERVAL 5 SECONDS",
        f"{RUN}: timestamp - timestamp is SubtractTimestamps, which collectTerms does not "
        "know (invalid)",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        spark=CHECK,
    ),
    two(
        "e021_left_outer_timestamp_difference",
        "L.k = R.k AND R.t - L.t <= INTERVAL 5 SECONDS",
        f"{RUN}: the same SubtractTimestamps gives LeftOuter no left bound, so Spark rejects "
        "it at start()",
        left=NEVER,
        right=NEVER,
        codes=("E021",),
        exact=False,
        how="left_outer",
        spark=SparkCheck(error=OUTER_REJECTED),
    ),
    two(
        "time_key_on_one_side_only",
        "L.k = R.k AND L.t = R.t2",
        f"ref §3.1 (findJoinKeyOrdinalForWatermark: one ordinal evicts both sides); {RUN}",
        left=key("t"),
        right=key("t2"),
        keys=(("L.k", "R.k"), ("L.t", "R.t2")),
        spark=CHECK,
    ),
    two(
        "time_key_beats_range",
        "L.k = R.k AND L.t = R.t AND L.t2 >= R.t2 - INTERVAL 5 SECONDS",
        "ref §3.1 step 1 (a key predicate wins over any range)",
        left=key("t"),
        right=key("t"),
        keys=(("L.k", "R.k"), ("L.t", "R.t")),
    ),
    two(
        "cast_time_key_is_not_a_watermark_key",
        "L.k = R.k AND CAST(L.t AS LONG) = CAST(R.t AS LONG)",
        f"ref §3.1 (only a NamedExpression with watermark metadata is a watermark key); {RUN}",
        left=NEVER,
        right=NEVER,
        keys=(("L.k", "R.k"), ("CAST(L.t AS BIGINT)", "CAST(R.t AS BIGINT)")),
        codes=("W001",),
        spark=CHECK,
    ),
    two(
        "date_trunc_between_spark43",
        "L.k = R.k AND date_trunc('MINUTE', R.t) BETWEEN L.t AND L.t + INTERVAL 1 MINUTE",
        f"ref §11 (4.3.0 gains a right value predicate -1 ms via _common_expr); {RUN}",
        left=NEVER,
        right=value("t", -1),
        codes=("W001",),
        spark=CHECK,
    ),
    two(
        "date_trunc_between_spark35",
        "L.k = R.k AND date_trunc('MINUTE', R.t) BETWEEN L.t AND L.t + INTERVAL 1 MINUTE",
        "ref §11 (3.3.4 and 3.5.7 give none)",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        version="3.5",
    ),
    two(
        "date_trunc_ge_le_spark43",
        "L.k = R.k AND date_trunc('MINUTE', R.t) >= L.t"
        " AND date_trunc('MINUTE', R.t) <= L.t + INTERVAL 1 MINUTE",
        f"ref §11 (written with >=/<= it gives none in all versions); {ONCE}",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
    ),
    two(
        "always_false_positive_offset",
        "L.k = R.k AND L.t >= R.t + INTERVAL 10 SECONDS AND L.t <= R.t + INTERVAL 5 SECONDS",
        f"ref §3.2 (lower bound above the watermark gives a positive offset); {RUN}",
        left=value("t", 9999),
        right=value("t", -5001),
        codes=("W003",),
        spark=CHECK,
    ),
    two(
        "pruned_event_time_column",
        "L.k = R.k AND L.t2 >= R.t - INTERVAL 5 SECONDS",
        f"{RUN}: L.t is neither selected nor in the condition, so column pruning removes it "
        "from the join's left input: no event-time column, no left state predicate",
        left=NEVER,
        right=NEVER,
        select=("L.k", "L.v", "R.v AS rv"),
        codes=("W001",),
        exact=False,
        spark=CHECK,
    ),
]

SHAPES += [
    two(
        "attribute_twice_spark43",
        "L.k = R.k AND CAST(L.t AS LONG) + CAST(L.t AS LONG)"
        " >= CAST(R.t AS LONG) + CAST(R.t AS LONG) - 5",
        f"{RUN}: 4.3's solver counts every occurrence of an attribute (Seq.count in "
        "StreamingJoinHelper bytecode), two of one side means unsolvable",
        left=NEVER,
        right=NEVER,
        codes=("W001",),
        spark=CHECK,
    ),
    two(
        "attribute_twice_spark41",
        "L.k = R.k AND CAST(L.t AS LONG) + CAST(L.t AS LONG)"
        " >= CAST(R.t AS LONG) + CAST(R.t AS LONG) - 5",
        "StreamingJoinHelper.scala up to 4.1 (AttributeSet + ExpressionSet: equal terms "
        "collapse, so 2L >= 2R - 5 is solved as L >= R - 5); not run",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001",),
        version="4.1",
    ),
    two(
        "timestamp_literal_conjunct_gives_no_bound",
        "L.k = R.k AND L.t >= R.t - INTERVAL 5 SECONDS AND L.t > TIMESTAMP '1969-12-31 23:59:00'",
        f"{RUN}: the literal conjunct stays in the left outer join (leftOnly) and yields no "
        "state watermark (were it evaluated, -60 s x 1e6 would win the min)",
        left=value("t", -5001),
        right=NEVER,
        codes=("W001",),
        how="left_outer",
        spark=CHECK,
    ),
    two(
        "e021_timestamp_literal_only",
        "L.k = R.k AND L.t > TIMESTAMP '1970-01-01 00:01:00'",
        f"{RUN}: a bound by a literal is no state watermark, LeftOuter is rejected",
        left=NEVER,
        right=NEVER,
        codes=("E021",),
        exact=False,
        how="left_outer",
        spark=SparkCheck(error=OUTER_REJECTED),
    ),
]

SHAPES += [
    two(
        "e026_non_deterministic",
        "L.k = R.k AND rand() > 0.5 AND L.t >= R.t - INTERVAL 5 SECONDS",
        f"ref §2.1 (nondeterministic join conditions rejected by the analyser); {RUN}",
        left=value("t", -5001),
        right=NEVER,
        codes=("E026",),
        exact=False,
        spark=SparkCheck(error="INVALID_NON_DETERMINISTIC_EXPRESSIONS", error_at="build"),
    ),
    two(
        "expression_key_written_right_first",
        "R.k = L.k + 1 AND L.t >= R.t - INTERVAL 5 SECONDS",
        f"ref §1.1 (ExtractEquiJoinKeys orients each pair left, right); {RUN}",
        left=value("t", -5001),
        right=NEVER,
        keys=(("L.k + 1", "R.k"),),
        codes=("W001",),
        spark=CHECK,
    ),
    two(
        "time_key_watermarked_on_right_only",
        "L.k = R.k AND L.t2 = R.t",
        f"ref §3.1 (left keys searched first, then right keys; the ordinal evicts both); {RUN}",
        left=key("t2"),
        right=key("t"),
        keys=(("L.k", "R.k"), ("L.t2", "R.t")),
        spark=CHECK,
    ),
]

SHAPES += [
    two(
        "time_key_with_offset",
        "L.k = R.k AND L.t = R.t + INTERVAL 1 SECOND",
        f"ref §3.1 (the watermarked left key's ordinal evicts both; the right key is the "
        f"expression R.t + 1 s); {RUN}",
        left=key("t"),
        right=State("key", None, 0),
        keys=(("L.k", "R.k"), ("L.t", "R.t + INTERVAL 1 SECOND")),
        spark=CHECK,
    ),
]

# --------------------------------------------------------------------------- watermark policy

POLICY = [
    two(
        "policy_max_same_offsets",
        f"L.k = R.k AND {R1}",
        f"ref §4.1 (policy picks W; offsets are relative to W); {RUN} with "
        "multipleWatermarkPolicy=max: L at 100 s, R at 50 s gives W = 90 000",
        left=value("t", -5001),
        right=value("t", -10001),
        codes=("W006",),
        settings=(("multiple_watermark_policy", "max"),),
        spark=SparkCheck(
            times=(100, 50),
            eviction_ms=90_000,
            conf=(("spark.sql.streaming.multipleWatermarkPolicy", "max"),),
        ),
    ),
    two(
        "policy_min_asymmetric_delays",
        f"L.k = R.k AND {R1}",
        f"ref §4.1 (min policy: W = min(100-10, 100-60) s); {RUN}",
        left=value("t", -5001),
        right=value("t", -10001),
        settings=(("multiple_watermark_policy", "min"),),
        right_delay="1 minute",
        spark=SparkCheck(eviction_ms=40_000),
    ),
]

# --------------------------------------------------------------------------- pipelines (§7.1, §7.2)

STREAMS3 = """
stream lhs (k BIGINT, t TIMESTAMP, v STRING)
    watermark t delay 10 seconds
stream rhs (k BIGINT, t TIMESTAMP, v STRING)
    watermark t delay 10 seconds
stream third (k BIGINT, t TIMESTAMP, v STRING)
    watermark t delay 10 seconds
"""


def pipeline(version: str, body: str) -> str:
    return f"spark {version}\n{STREAMS3}\n{body.strip()}\n"


INTERVAL_JOIN = """
join j = lhs AS L {how} JOIN rhs AS R
    ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 1 MINUTE
    SELECT L.k AS k, L.t AS t
"""
TIME_KEY_JOIN = """
join j = lhs AS L {how} JOIN rhs AS R
    ON L.k = R.k AND L.t = R.t
    SELECT L.k AS k, L.t AS t
"""
WINDOW_AGG = """
aggregate c = j AS x
    GROUP BY window(x.t, INTERVAL 10 SECONDS)
    SELECT window(x.t, INTERVAL 10 SECONDS) AS w, count(*) AS n
    OUTPUT MODE append
"""
KEY_AGG = """
aggregate c = j AS x
    GROUP BY x.k
    SELECT x.k, count(*) AS n
    OUTPUT MODE {mode}
"""
SECOND_JOIN = """
join j2 = j AS J INNER JOIN third AS X
    ON J.k = X.k AND X.t BETWEEN J.{col} AND J.{col} + INTERVAL 1 MINUTE
"""
TWO_TIMES_JOIN = """
join j = lhs AS L INNER JOIN rhs AS R
    ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 1 MINUTE
    SELECT L.k AS k, L.t AS lt, R.t AS rt
"""

INTERVAL_STATE = JoinExpect(left=value("t", -60001), right=value("t", -1))


def chain(
    id: str,
    version: str,
    body: str,
    codes: tuple[str, ...],
    source: str,
    *,
    exact: bool = True,
    absent: tuple[str, ...] = (),
    joins: tuple[JoinExpect, ...] = (),
    spark: SparkCheck | None = None,
) -> Case:
    return Case(
        id=id,
        spec=pipeline(version, body),
        source=source,
        joins=joins,
        codes=frozenset(codes),
        exact=exact,
        absent=frozenset(absent),
        spark=spark,
    )


GW = "ref §7.2 table [run 3.3.4, 3.4.4, 3.5.1, 4.0.1-4.3.0]"
PIPELINES = [
    # inner interval join -> window aggregation: OK, error, OK, OK
    *(
        chain(
            f"chain_inner_interval_agg_spark{v.replace('.', '')}",
            v,
            INTERVAL_JOIN.format(how="INNER") + WINDOW_AGG,
            codes,
            GW + (f"; {ONCE}" if v == "4.3" else ""),
            joins=(INTERVAL_STATE,),
        )
        for v, codes in (("3.3", ()), ("3.4", ("E022",)), ("3.5", ()), ("4.3", ()))
    ),
    # left outer interval join -> window aggregation: error, error, OK, OK
    *(
        chain(
            f"chain_left_outer_interval_agg_spark{v.replace('.', '')}",
            v,
            INTERVAL_JOIN.format(how="LEFT OUTER") + WINDOW_AGG,
            codes,
            GW + (f"; {RUN}" if v == "4.3" else ""),
            joins=(INTERVAL_STATE,),
            spark=SparkCheck(custom="left_outer_join_window_agg") if v == "4.3" else None,
        )
        for v, codes in (("3.3", ("E022",)), ("3.4", ("E022",)), ("3.5", ()), ("4.3", ()))
    ),
    # left outer interval join -> inner interval join: error, error, OK
    *(
        chain(
            f"chain_left_outer_then_inner_spark{v.replace('.', '')}",
            v,
            INTERVAL_JOIN.format(how="LEFT OUTER") + SECOND_JOIN.format(col="t"),
            codes,
            GW,
            joins=(INTERVAL_STATE, INTERVAL_STATE),
        )
        for v, codes in (("3.3", ("E022",)), ("3.4", ("E022",)), ("3.5", ()))
    ),
    # inner join with the time in the keys -> aggregation: OK everywhere
    *(
        chain(
            f"chain_inner_time_key_agg_spark{v.replace('.', '')}",
            v,
            TIME_KEY_JOIN.format(how="INNER") + WINDOW_AGG,
            (),
            GW + " row 'inner join with L.t = R.t in keys'",
            joins=(JoinExpect(left=key("t"), right=key("t")),),
        )
        for v in ("3.3", "3.4")
    ),
    # left outer join with the time in the keys -> aggregation: error in 3.3, OK from 3.4
    *(
        chain(
            f"chain_left_outer_time_key_agg_spark{v.replace('.', '')}",
            v,
            TIME_KEY_JOIN.format(how="LEFT OUTER") + WINDOW_AGG,
            codes,
            GW + " row 'left outer join with L.t = R.t in keys'",
            joins=(JoinExpect(left=key("t"), right=key("t")),),
        )
        for v, codes in (("3.3", ("E022",)), ("3.4", ()))
    ),
    # inner -> inner keeping both time columns: OK, error, MULTIPLE_EVENT_TIME_COLUMNS
    *(
        chain(
            f"chain_two_time_columns_spark{v.replace('.', '')}",
            v,
            TWO_TIMES_JOIN + SECOND_JOIN.format(col="lt"),
            codes,
            GW + " rows 4-5; ref §11" + (f"; {RUN}" if v == "4.3" else ""),
            exact=v in ("3.3", "3.4"),
            absent=("E022",) if v in ("3.5", "4.3") else (),
            spark=SparkCheck(
                custom="two_time_columns",
                error="MULTIPLE_EVENT_TIME_COLUMNS",
                error_at="batch",
            )
            if v == "4.3"
            else None,
        )
        for v, codes in (("3.3", ()), ("3.4", ("E022",)), ("3.5", ("E025",)), ("4.3", ("E025",)))
    ),
    chain(
        "chain_two_time_columns_pruned_spark43",
        "4.3",
        TWO_TIMES_JOIN + SECOND_JOIN.format(col="lt") + "    SELECT J.k, J.lt, X.v\n",
        (),
        f"{RUN}: j2's SELECT does not use J.rt, so column pruning drops it below the join; "
        "j2's input keeps one event-time column and the query runs",
        absent=("E025",),
        spark=SparkCheck(custom="two_time_columns_pruned"),
    ),
    Case(
        id="chain_two_time_columns_single_watermark_spark43",
        spec=pipeline(
            "4.3",
            "set allow_multiple_stateful_operators = false\n"
            + TWO_TIMES_JOIN
            + SECOND_JOIN.format(col="lt"),
        ),
        source=f"ref §7.2 (allowMultiple=false: the first event-time column is used); {RUN}: "
        "runs, both joins evict with one watermark (late = eviction = 90 000)",
        joins=(INTERVAL_STATE, JoinExpect(left=value("lt", -60001), right=value("t", -1))),
        absent=frozenset({"E025"}),
        spark=SparkCheck(
            custom="two_time_columns_single_watermark",
            conf=(("spark.sql.streaming.statefulOperator.allowMultiple", "false"),),
        ),
    ),
    chain(
        "chain_computed_time_loses_watermark_spark43",
        "4.3",
        """
join j = lhs AS L INNER JOIN rhs AS R
    ON L.k = R.k AND L.t = R.t
    SELECT L.k AS k, L.t + INTERVAL 1 SECOND AS t
"""
        + SECOND_JOIN.format(col="t"),
        ("W001",),
        f"{RUN}: an expression of the event time carries no watermark metadata, so j2's left "
        "input has no event-time column and j2 evicts neither side",
        joins=(
            JoinExpect(left=key("t"), right=key("t")),
            JoinExpect(left=NEVER, right=NEVER),
        ),
        spark=SparkCheck(custom="computed_time_chain"),
    ),
    chain(
        "chain_agg_over_two_time_columns_spark43",
        "4.3",
        TWO_TIMES_JOIN
        + """
aggregate c = j AS x
    GROUP BY window(x.lt, INTERVAL 10 SECONDS)
    SELECT window(x.lt, INTERVAL 10 SECONDS) AS w, max(x.rt) AS m
    OUTPUT MODE append
""",
        (),
        f"{RUN}: an aggregation whose input carries two watermarked columns (lt, rt) runs; "
        "MULTIPLE_EVENT_TIME_COLUMNS is a join-input check (ref §7.2 names the join side)",
        absent=("E025",),
        joins=(INTERVAL_STATE,),
        spark=SparkCheck(custom="agg_over_two_time_columns"),
    ),
    # output modes (§7.1): Update after an inner join from 4.2 only; outer joins Append only
    *(
        chain(
            f"mode_{how.lower().replace(' ', '_')}_{mode}_spark{v.replace('.', '')}",
            v,
            INTERVAL_JOIN.format(how=how) + KEY_AGG.format(mode=mode),
            codes,
            "ref §7.1 output modes [run 3.3.4-4.1.4 Append only; 4.2.1, 4.3.0 Inner/LeftSemi "
            "Update]" + (f"; {RUN}" if spark else ""),
            spark=spark,
        )
        for how, mode, v, codes, spark in (
            ("INNER", "update", "3.3", ("E023",), None),
            ("INNER", "update", "4.1", ("E023",), None),
            ("INNER", "update", "4.2", (), None),
            ("INNER", "update", "4.3", (), SparkCheck(custom="inner_join_update_agg")),
            ("LEFT SEMI", "update", "4.2", (), None),
            (
                "LEFT OUTER",
                "update",
                "4.3",
                ("E023",),
                SparkCheck(
                    custom="left_outer_join_update_agg",
                    error="LeftOuter join between two streaming DataFrames/Datasets is not "
                    "supported in Update output mode",
                ),
            ),
            ("INNER", "complete", "4.3", ("E023",), None),
        )
    ),
]

CASES: list[Case] = [*REF_33, *REF_11, *FILTER_CASES, *ANALYSIS, *SHAPES, *POLICY, *PIPELINES]
BY_ID: dict[str, Case] = {c.id: c for c in CASES}

# Rows of the reference tables that the catalogue must cover (reference §3.3 and §11).
REQUIRED_REFS = frozenset([f"3.3#{n}" for n in range(1, 18)] + [f"11#{n}" for n in range(1, 11)])

__all__ = [
    "BY_ID",
    "CASES",
    "COLUMNS",
    "NEVER",
    "REQUIRED_REFS",
    "SPARK_DDL",
    "UNSET",
    "Case",
    "JoinExpect",
    "SparkCheck",
    "State",
    "TwoStreamJoin",
]
