"""Parity scenarios: a small spec and a few tiny micro-batches each, run through
``sjoin.jvm.verify`` (runtime vs the generated PySpark job on real Spark).

A scenario's batches are Python data: a list of ``{stream: [row dicts]}``; each becomes one
trace batch (one Spark micro-batch).  ``xfail`` holds the reason of a known difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sjoin.runtime.engine.values import format_timestamp

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

Batch = dict[str, list[dict[str, Any]]]


def ts(seconds: float) -> str:
    """ISO timestamp ``seconds`` after 2026-01-01T00:00:00Z."""
    return format_timestamp(round((1_767_225_600 + seconds) * 1_000_000))


def row(k: Any, seconds: float | None, v: str | None = "x") -> dict[str, Any]:
    return {"k": k, "t": None if seconds is None else ts(seconds), "v": v}


def records(batches: list[Batch]) -> list[dict[str, Any]]:
    """The trace records of ``batches`` (batch values 0, 1, ...)."""
    return [
        {"batch": i, "stream": stream, "row": dict(r)}
        for i, batch in enumerate(batches)
        for stream, rows in batch.items()
        for r in rows
    ]


@dataclass(frozen=True)
class ParityScenario:
    name: str
    spec: str
    batches: list[Batch] | None = None  # None: ``trace`` is a JSONL file
    trace: Path | None = None
    relation: str | None = None
    xfail: str | None = None

    def trace_input(self) -> Any:
        return self.trace if self.trace is not None else records(self.batches or [])


KTV = "(k BIGINT, t TIMESTAMP, v STRING)"


def streams(delay_l: str | None = "10 seconds", delay_r: str | None = "10 seconds") -> str:
    wl = f" watermark t delay {delay_l}" if delay_l else ""
    wr = f" watermark t delay {delay_r}" if delay_r else ""
    return f"stream l {KTV}{wl}\nstream r {KTV}{wr}\n"


LR = "SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.k AS rk, R.t AS rt, R.v AS rv"
LEFT_ONLY = "SELECT L.k AS lk, L.t AS lt, L.v AS lv"
RANGE = "L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS"
# three streams of one shape, every watermark 0 s late: the joins over a join below
LMR = "spark 4.3\n" + "".join(
    f"stream {name} {KTV} watermark t delay 0 seconds\n" for name in ("l", "m", "r")
)
# the lower join of those scenarios (its SELECT follows)
JOIN_I = (
    "join i = l AS A INNER JOIN m AS B ON A.k = B.k"
    " AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS\n"
)


def join_spec(
    how: str,
    on: str = RANGE,
    select: str | None = None,
    header: str = "",
    delays: tuple[str | None, str | None] = ("10 seconds", "10 seconds"),
) -> str:
    if select is None:
        select = LEFT_ONLY if how in ("LEFT SEMI", "LEFT ANTI") else LR
    return (
        "spark 4.3\n"
        + header
        + streams(*delays)
        + f"join j = l AS L {how} JOIN r AS R ON {on}\n  {select}\n"
    )


S: list[ParityScenario] = []


def add(name: str, spec: str, batches: list[Batch], **kw: Any) -> None:
    S.append(ParityScenario(name, spec, batches, **kw))


# A batch pattern that moves the watermark well past the first rows, so eviction and outer
# rows show up: rows at 100 s, then 130 s, then 200 s.
def advancing(extra0: Batch | None = None) -> list[Batch]:
    b0: Batch = {
        "l": [row(1, 100, "a"), row(2, 101, "b")],
        "r": [row(1, 98, "c"), row(3, 100, "d")],
    }
    for s, rows in (extra0 or {}).items():
        b0.setdefault(s, []).extend(rows)
    return [
        b0,
        {"l": [row(4, 130, "e")], "r": [row(4, 131, "f")]},
        {"l": [row(5, 200, "g")], "r": [row(5, 200, "h")]},
    ]


# ------------------------------------------------------------------ join types
for how in ("INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER", "LEFT SEMI", "LEFT ANTI"):
    add(f"{how.lower().replace(' ', '_')}_range", join_spec(how), advancing())

# ------------------------------------------------------------------ late rows, the watermark edge
LATE = [
    {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
    # watermark is now 90 s: rows at 85 s are late, the row at exactly 90 s is "at" it
    {"l": [row(1, 85, "late"), row(1, 90, "at"), row(1, 91, "after")], "r": [row(1, 89, "rl")]},
    {"l": [row(9, 150, "z")], "r": [row(9, 150, "z")]},
]
for how in ("INNER", "LEFT OUTER", "FULL OUTER", "LEFT ANTI"):
    add(f"late_and_at_watermark_{how.lower().replace(' ', '_')}", join_spec(how), LATE)

# ------------------------------------------------------------------ bounds
STRICT = "L.k = R.k AND L.t > R.t - INTERVAL 5 SECONDS AND L.t < R.t + INTERVAL 10 SECONDS"
EDGE = [
    {
        "l": [row(1, 100, "a"), row(2, 100, "b")],
        "r": [row(1, 105, "lo"), row(1, 90, "hi"), row(2, 95, "in")],
    },
    {"l": [row(3, 150, "c")], "r": [row(3, 150, "d")]},
    {"l": [row(4, 200, "e")], "r": [row(4, 200, "f")]},
]
add("inner_strict_bounds", join_spec("INNER", STRICT), EDGE)
add("left_outer_strict_bounds", join_spec("LEFT OUTER", STRICT), EDGE)
add("inner_non_strict_bounds_at_edges", join_spec("INNER"), EDGE)
ASYM = "L.k = R.k AND R.t >= L.t AND R.t <= L.t + INTERVAL 1 MINUTE"
ASYM_BATCHES = [
    {"l": [row(1, 100, "a"), row(2, 100, "b")], "r": [row(1, 160, "edge"), row(2, 99, "before")]},
    {"l": [row(3, 200, "c")], "r": [row(1, 161, "past"), row(3, 230, "d")]},
    {"l": [row(4, 400, "e")], "r": [row(4, 400, "f")]},
]
add("inner_asymmetric_bounds", join_spec("INNER", ASYM), ASYM_BATCHES)
add("right_outer_asymmetric_bounds", join_spec("RIGHT OUTER", ASYM), ASYM_BATCHES)
add("left_anti_strict_bounds", join_spec("LEFT ANTI", STRICT), EDGE)
add(
    "inner_asymmetric_delays",
    join_spec("INNER", delays=("2 seconds", "30 seconds")),
    advancing(),
)
add(
    "inner_one_side_watermark",
    join_spec("INNER", delays=("10 seconds", None)),
    advancing(),
)

# ------------------------------------------------------------------ filters Spark infers
# InferFiltersFromConstraints (compiler/planning/infer.py): through an equality of the condition
# Spark filters a side it may filter for the join type (inner and left semi: both, right outer: the
# left, left outer and left anti: the right, full outer: none) below the join, so rows that
# cannot match are never stored (numRowsTotal), and a filter on a column other than the
# watermarked one runs below the watermark node (the far k=1 row does not move it).
INF_RIGHT = RANGE + " AND R.k > 2"  # R.k > 2 gives L.k > 2
INF_LEFT = RANGE + " AND L.k > 2"  # L.k > 2 gives R.k > 2
INF_BATCHES = [
    {
        "l": [row(1, 100, "a"), row(3, 100, "b"), row(1, 500, "far")],
        "r": [row(3, 101, "c"), row(1, 100, "d"), row(2, 600, "far")],
    },
    {"l": [row(4, 130, "e")], "r": [row(4, 131, "f")]},
    {"l": [row(5, 200, "g")], "r": [row(5, 200, "h")]},
]
for how, on in (
    ("INNER", INF_RIGHT),
    ("RIGHT OUTER", INF_RIGHT),
    ("LEFT SEMI", INF_RIGHT),
    ("FULL OUTER", INF_RIGHT),
    ("LEFT OUTER", INF_LEFT),
    ("LEFT ANTI", INF_LEFT),
):
    add(
        f"{how.lower().replace(' ', '_')}_inferred_key_filter",
        join_spec(how, on, header="set multiple_watermark_policy = max\n"),
        INF_BATCHES,
    )
# through an equality of event times: L.t >= X runs above the left watermark node
INF_TIME = "L.k = R.k AND L.t = R.t AND R.t >= TIMESTAMP '2026-01-01 00:01:40'"
INF_TIME_BATCHES = [
    {"l": [row(1, 99, "a"), row(1, 100, "b")], "r": [row(1, 100, "c"), row(1, 99, "d")]},
    {"l": [row(2, 130, "e")], "r": [row(2, 130, "f")]},
    {"l": [row(3, 200, "g")], "r": [row(3, 200, "h")]},
]
for how in ("INNER", "RIGHT OUTER"):
    add(
        f"{how.lower().replace(' ', '_')}_inferred_time_filter",
        join_spec(how, INF_TIME),
        INF_TIME_BATCHES,
    )
# an INT key against a BIGINT one: Spark compares CAST(L.k AS BIGINT) = R.k, so R.k > 2
# gives CAST(L.k AS BIGINT) > 2 on the left (and nothing the other way round)
INF_CAST = (
    """spark 4.3
stream l (k INT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R ON """
    + INF_RIGHT
    + " AND L.k < 5\n  "
    + LR
    + "\n"
)
add("inner_inferred_filter_through_cast", INF_CAST, INF_BATCHES)
# a condition on both sides becomes one side's: R.k > length(L.v) gives L.k > length(L.v)
add(
    "inner_inferred_filter_from_both_sides",
    join_spec("INNER", RANGE + " AND R.k > length(L.v)"),
    [
        {"l": [row(1, 100, "long"), row(3, 100, "ab")], "r": [row(1, 100, "c"), row(3, 101, "d")]},
        {"l": [row(4, 130, "e")], "r": [row(4, 131, "f")]},
        {"l": [row(5, 200, "g")], "r": [row(5, 200, "h")]},
    ],
)

# ------------------------------------------------------------------ key eviction
TEQ = "L.k = R.k AND L.t = R.t"
TEQ_BATCHES = [
    {"l": [row(1, 100, "a"), row(2, 100, "b")], "r": [row(1, 100, "c"), row(2, 101, "d")]},
    {"l": [row(1, 120, "e")], "r": [row(1, 120, "f")]},
    {"l": [row(3, 200, "g")], "r": [row(3, 200, "h")]},
]
add("inner_time_equality_key", join_spec("INNER", TEQ), TEQ_BATCHES)
add("full_outer_time_equality_key", join_spec("FULL OUTER", TEQ), TEQ_BATCHES)
WIN = "L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)"
WIN_SELECT = "SELECT L.k AS k, window(L.t, INTERVAL 10 SECONDS) AS w, L.v AS lv, R.v AS rv"
WIN_BATCHES = [
    {"l": [row(1, 101, "a"), row(2, 105, "b")], "r": [row(1, 109, "c"), row(2, 111, "d")]},
    {"l": [row(3, 130, "e")], "r": [row(3, 135, "f")]},
    {"l": [row(4, 200, "g")], "r": [row(4, 200, "h")]},
]
# every join type on window keys (issue 16: LEFT SEMI failed on Spark 3.5+ with
# MULTIPLE_EVENT_TIME_COLUMNS while the time column was only re-aliased beside its window)
WIN_LEFT_SELECT = "SELECT L.k AS k, L.t AS lt, window(L.t, INTERVAL 10 SECONDS) AS w, L.v AS lv"
for how in ("INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER", "LEFT SEMI", "LEFT ANTI"):
    select = WIN_LEFT_SELECT if how in ("LEFT SEMI", "LEFT ANTI") else WIN_SELECT
    add(f"{how.lower().replace(' ', '_')}_window_key", join_spec(how, WIN, select), WIN_BATCHES)
add("left_semi_window_key_star", join_spec("LEFT SEMI", WIN, ""), WIN_BATCHES)
# window(...).start / .end (issue 16): in a condition the back end writes the field as
# arithmetic on the time column (Spark cannot resolve window() in a join condition), which
# bounds no state; in a SELECT Spark computes the window after the join and drops rows whose
# time is NULL (a null-padded side), as the runtime does
WF = "window(L.t, INTERVAL 10 SECONDS)"
WF_SELECT = f"SELECT L.k AS k, {WF}.start AS ws, {WF}.end AS we, R.t AS rt, R.v AS rv"
WF_BUCKET = f"L.k = R.k AND R.t BETWEEN {WF}.start AND {WF}.end"
add("inner_window_field_range", join_spec("INNER", WF_BUCKET, WF_SELECT), WIN_BATCHES)
WF_RANGE = f"{RANGE} AND R.t >= {WF}.start"
add("left_outer_window_field_filter", join_spec("LEFT OUTER", WF_RANGE, WF_SELECT), advancing())
WF_RIGHT = "window(R.t, INTERVAL 10 SECONDS)"
WF_RIGHT_SELECT = f"SELECT R.k AS k, {WF_RIGHT}.start AS ws, {WF_RIGHT}.end AS we, L.t AS lt"
# a window of the null-padded side (E030, accepted on purpose): Spark runs it as INNER, and
# numRowsRemoved up to 4.2 counts as an inner join's
add(
    "right_outer_window_of_padded_side_accepted",
    join_spec("RIGHT OUTER", RANGE, WF_SELECT, header="set allow_unemitted_outer_rows = true\n"),
    advancing(),
)
add(
    "right_outer_window_field_select",
    join_spec("RIGHT OUTER", RANGE, WF_RIGHT_SELECT),
    advancing(),
)

# ------------------------------------------------------------------ keys and values
NULLS = [
    {
        "l": [row(None, 100, "nk"), row(1, 100, "a"), row(1, None, "nt")],
        "r": [row(None, 100, "nk"), row(1, 101, "b")],
    },
    {"l": [row(2, 200, "c")], "r": [row(2, 200, "d")]},
]
add("inner_null_keys", join_spec("INNER"), NULLS)
add("left_outer_null_keys", join_spec("LEFT OUTER"), NULLS)
add("full_outer_null_keys", join_spec("FULL OUTER"), NULLS)
COMPOSITE = "L.v = R.v AND " + RANGE
COMP_BATCHES = [
    {
        "l": [row(1, 100, "a"), row(1, 100, "b"), row(2, 100, "a")],
        "r": [row(1, 100, "a"), row(2, 100, "b")],
    },
    {"l": [row(3, 200, "c")], "r": [row(3, 200, "c")]},
]
add("inner_composite_key", join_spec("INNER", COMPOSITE), COMP_BATCHES)
add("left_outer_composite_key", join_spec("LEFT OUTER", COMPOSITE), COMP_BATCHES)
DUPS = [
    {
        "l": [row(1, 100, "a"), row(1, 100, "a"), row(1, 102, "b")],
        "r": [row(1, 100, "c"), row(1, 101, "c"), row(1, 103, "d")],
    },
    {"l": [row(1, 104, "e")], "r": [row(1, 99, "f")]},
    {"l": [row(2, 200, "g")], "r": [row(2, 200, "h")]},
]
add("inner_duplicates_many_matches", join_spec("INNER"), DUPS)
add("left_semi_duplicates", join_spec("LEFT SEMI"), DUPS)
add("left_anti_duplicates", join_spec("LEFT ANTI"), DUPS)
add("full_outer_many_matches", join_spec("FULL OUTER"), DUPS)

# ------------------------------------------------------------------ filters
add(
    "left_outer_left_side_filter",
    join_spec("LEFT OUTER", RANGE + " AND L.v <> 'skip'"),
    advancing({"l": [row(1, 100, "skip")]}),
)
add(
    "inner_right_side_filter",
    join_spec("INNER", RANGE + " AND R.v <> 'skip'"),
    advancing({"r": [row(1, 100, "skip")]}),
)
add(
    "left_outer_post_join_filter",
    join_spec("LEFT OUTER", RANGE + " AND L.v <> R.v"),
    advancing({"r": [row(1, 100, "a")]}),
)

# ------------------------------------------------------------------ watermark policy
POLICY = [
    {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
    {"l": [row(2, 200, "c")], "r": [row(2, 120, "d")]},
    {"l": [row(1, 130, "late?")], "r": [row(3, 125, "e")]},
    {"l": [row(4, 300, "f")], "r": [row(4, 300, "g")]},
]
for policy in ("min", "max"):
    for how in ("INNER", "LEFT OUTER"):
        add(
            f"{policy}_policy_{how.lower().replace(' ', '_')}",
            join_spec(how, header=f"set multiple_watermark_policy = {policy}\n"),
            POLICY,
        )

# ------------------------------------------------------------------ unrecognised range
NO_RANGE = "L.k = R.k AND L.v <> R.v"
add(
    "inner_unrecognised_range_state_grows",
    join_spec("INNER", NO_RANGE),
    [
        {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
        {"l": [row(1, 300, "c")], "r": [row(1, 500, "d")]},
        {"l": [row(2, 900, "e")], "r": [row(1, 900, "f")]},
    ],
)
add(
    "inner_key_only_no_watermarks",
    join_spec("INNER", "L.k = R.k", delays=(None, None)),
    [
        {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
        {"l": [row(1, 50, "c")], "r": [row(2, 10, "d")]},
    ],
)

# ------------------------------------------------------------------ chains and aggregates
CHAIN = """spark 4.3
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join ab = a AS A INNER JOIN b AS B
  ON A.k = B.k AND B.t BETWEEN A.t AND A.t + INTERVAL 10 SECONDS
  SELECT A.k AS k, B.t AS t, A.v AS av, B.v AS bv
join abc = ab AS X INNER JOIN c AS C
  ON X.k = C.k AND C.t BETWEEN X.t AND X.t + INTERVAL 10 SECONDS
  SELECT X.k AS k, C.t AS t, X.av AS av, X.bv AS bv, C.v AS cv
"""


def abc(k: int, ta: float, tb: float, tc: float) -> Batch:
    return {"a": [row(k, ta, "a")], "b": [row(k, tb, "b")], "c": [row(k, tc, "c")]}


add(
    "chain_of_two_inner_joins",
    CHAIN,
    [abc(1, 100, 105, 110), abc(2, 130, 131, 145), abc(3, 200, 200, 200)],
)
AGG = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS t, L.v AS lv, R.v AS rv
"""
AGG_BATCHES = [
    {"l": [row(1, 100, "a"), row(1, 103, "b")], "r": [row(1, 100, "c")]},
    {"l": [row(2, 130, "d")], "r": [row(2, 131, "e")]},
    {"l": [row(3, 160, "f")], "r": [row(3, 160, "g")]},
]
add(
    "join_then_window_count_append",
    AGG
    + """aggregate counts = j AS J
  GROUP BY window(J.t, INTERVAL 10 SECONDS)
  SELECT window(J.t, INTERVAL 10 SECONDS) AS w, count(*) AS n, max(J.lv) AS top
  OUTPUT MODE append
""",
    AGG_BATCHES,
)
add(
    "join_then_key_count_update",
    AGG
    + """aggregate per_key = j AS J
  GROUP BY J.k
  SELECT J.k AS k, count(*) AS n, sum(J.k) AS total
  OUTPUT MODE update
""",
    AGG_BATCHES,
)
add(
    "join_then_window_count_update",
    AGG
    + """aggregate counts = j AS J
  GROUP BY window(J.t, INTERVAL 10 SECONDS)
  SELECT window(J.t, INTERVAL 10 SECONDS) AS w, count(*) AS n
  OUTPUT MODE update
""",
    AGG_BATCHES,
)

# an aggregate over a window-key join that groups by, or aggregates, the window the join
# outputs (issue 26, workload (d)): the key is the window struct, its event time the window's
# end (Spark's eviction of a struct key reads its second field), DECIMAL amounts summed
WIN_AGG = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, amount DECIMAL(12, 2)) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)
  SELECT L.k AS k, window(L.t, INTERVAL 10 SECONDS) AS w, L.amount AS amount, R.v AS rv
"""


def amount_row(k: int, seconds: float, amount: str) -> dict[str, Any]:
    return {"k": k, "t": ts(seconds), "amount": amount}


WIN_AGG_BATCHES = [
    {
        "l": [
            amount_row(1, 101, "1.25"),
            amount_row(1, 104, "2.50"),
            amount_row(2, 105, "3.00"),
            amount_row(1, 112, "0.10"),
        ],
        "r": [row(1, 109, "a"), row(2, 108, "b"), row(1, 115, "c")],
    },
    # the watermark is 105 s: window [100, 110) still open, a row of it joins the state
    {
        "l": [amount_row(3, 131, "5.00"), amount_row(1, 107, "9.99")],
        "r": [row(3, 135, "d"), row(1, 102, "e")],
    },
    # the watermark moves to 190 s: every window ends before it (append emits them)
    {"l": [amount_row(4, 200, "1.00")], "r": [row(4, 200, "h")]},
    # rows of a closed window: the join drops them as late
    {"l": [amount_row(1, 150, "7.77"), amount_row(4, 205, "0.01")], "r": [row(1, 151, "z")]},
]
add(
    "window_key_join_then_group_by_window_append",
    WIN_AGG
    + """aggregate a = j AS x GROUP BY x.k, x.w
  SELECT x.k AS k, x.w AS w, count(*) AS n, sum(x.amount) AS total
  OUTPUT MODE append
""",
    WIN_AGG_BATCHES,
)
add(
    "window_key_join_then_group_by_window_update",
    WIN_AGG
    + """aggregate a = j AS x GROUP BY x.w
  SELECT x.w AS w, count(x.w) AS n, approx_count_distinct(x.k) AS keys, max(x.rv) AS top
  OUTPUT MODE update
""",
    WIN_AGG_BATCHES,
)
add(
    "window_key_join_then_window_values_update",
    WIN_AGG
    + """aggregate a = j AS x GROUP BY x.k
  SELECT x.k AS k, min(x.w) AS first_w, max(x.w) AS last_w, count(x.w) AS n,
    approx_count_distinct(x.w) AS windows
  OUTPUT MODE update
""",
    WIN_AGG_BATCHES,
)

# ------------------------------------------------------------------ value types
TYPED = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, amount DECIMAL(10, 2), d DATE) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, x DOUBLE, ok BOOLEAN) watermark t delay 10 seconds
join j = l AS L LEFT OUTER JOIN r AS R
  ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, L.t AS t, L.amount AS amount, L.d AS d, R.x AS x, R.ok AS ok
"""
add(
    "left_outer_decimal_double_date_boolean",
    TYPED,
    [
        {
            "l": [
                {"k": 1, "t": ts(100), "amount": "10.50", "d": "2026-01-01"},
                {"k": 2, "t": ts(100), "amount": 3, "d": None},
            ],
            "r": [{"k": 1, "t": ts(102), "x": 0.1, "ok": True}],
        },
        {"l": [{"k": 3, "t": ts(200), "amount": 1.25, "d": "2026-02-03"}], "r": []},
    ],
)

# DECIMAL arithmetic typed as Spark types it (types.arith_type): a product's, a quotient's and
# a sum's scale decide each value's text; L.amount * R.price is DECIMAL(38, 6) after
# precision loss, so its values are rounded HALF_UP to 6 places
ARITH = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, amount DECIMAL(12, 2)) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, price DECIMAL(38, 10), qty BIGINT) watermark t delay 10 seconds
join j = l AS L LEFT OUTER JOIN r AS R
  ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, L.amount * R.price AS cost, L.amount / R.qty AS per, L.amount + 1 AS plus1,
    L.amount / 3 AS third, L.amount * R.qty AS aq, L.amount % R.qty AS rem,
    L.amount - R.price AS diff, L.amount * 0.05 AS fee, (L.amount + R.price) * -2 AS twice
"""


def priced(k: int, seconds: float, price: str, qty: int) -> dict[str, Any]:
    return {"k": k, "t": ts(seconds), "price": price, "qty": qty}


add(
    "decimal_arithmetic_types",
    ARITH,
    [
        {
            "l": [
                {"k": 1, "t": ts(100), "amount": "10.55"},
                {"k": 2, "t": ts(100), "amount": "1.00"},
                {"k": 3, "t": ts(100), "amount": "-1.00"},
                {"k": 4, "t": ts(100), "amount": "-7.77"},
            ],
            "r": [
                priced(1, 101, "1.2345678912", 3),
                priced(2, 101, "0.0000025000", 7),
                priced(3, 102, "0.0000025000", -4),
                priced(4, 102, "99999999.9999999999", 1000000),
            ],
        },
        {"l": [{"k": 5, "t": ts(200), "amount": "0.01"}], "r": []},
    ],
)

# a value that is one of two DECIMALs (CASE, coalesce) is typed as Spark widens them
# (types.wider_decimal_type): DECIMAL(12, 2) with DECIMAL(10, 4) is DECIMAL(14, 4), so every
# value, from either side, is written at scale 4; with an INT DECIMAL(12, 2); with a
# DECIMAL(38, 10) DECIMAL(38, 10) (bounded, not adjusted)
WIDE = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, amount DECIMAL(12, 2), n INT) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, rate DECIMAL(10, 4), price DECIMAL(38, 10))
  watermark t delay 10 seconds
join j = l AS L LEFT OUTER JOIN r AS R
  ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, CASE WHEN L.k > 1 THEN L.amount ELSE R.rate END AS pick,
    coalesce(R.rate, L.amount) AS first, CASE WHEN L.k = 2 THEN L.n ELSE L.amount END AS n_or,
    coalesce(R.price, L.amount) AS wide
"""
add(
    "decimal_case_coalesce_widen",
    WIDE,
    [
        {
            "l": [
                {"k": 1, "t": ts(100), "amount": "10.55", "n": 7},
                {"k": 2, "t": ts(100), "amount": "1.50", "n": -3},
                {"k": 3, "t": ts(100), "amount": "-7.77", "n": 0},
            ],
            "r": [
                {"k": 1, "t": ts(101), "rate": "0.1234", "price": "1.2345678912"},
                {"k": 2, "t": ts(101), "rate": None, "price": None},
            ],
        },
        {"l": [{"k": 5, "t": ts(200), "amount": "0.01", "n": 1}], "r": []},
    ],
)

# ------------------------------------------------------------------ implicit casts

# A BIGINT key joined with a STRING key (issue 35): Spark 4 (ANSI) casts the STRING to BIGINT,
# so '01', ' 2 ' and '+3' match 1, 2 and 3, a NULL matches nothing (its left row comes out
# null-padded), and the cast key is an equi-join key; the INT compared with a STRING is cast
# with it to BIGINT, a STRING beside a DOUBLE to DOUBLE, and in arithmetic a STRING meets an
# integer as BIGINT.  (A string that does not cast fails the query: test_implicit_casts_on_spark.)
CAST_KEYS = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, n INT, y DOUBLE) watermark t delay 10 seconds
stream r (ref STRING, t TIMESTAMP, code STRING) watermark t delay 10 seconds
join j = l AS L LEFT OUTER JOIN r AS R
  ON L.k = R.ref AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS AND L.n <> R.code
  SELECT L.k AS k, R.ref AS ref, L.n + R.code AS total, L.y = R.code AS same,
    R.code IN (L.n, 7) AS listed
"""
add(
    "bigint_key_string_key_cast",
    CAST_KEYS,
    [
        {
            "l": [
                {"k": 1, "t": ts(100), "n": 5, "y": 1.5},
                {"k": 2, "t": ts(100), "n": 6, "y": 7.0},
                {"k": 3, "t": ts(100), "n": 7, "y": 0.0},
                {"k": 4, "t": ts(100), "n": 8, "y": 0.0},
            ],
            "r": [
                {"ref": "01", "t": ts(101), "code": "10"},
                {"ref": " 2 ", "t": ts(101), "code": "007"},
                {"ref": "+3", "t": ts(102), "code": "7"},
                {"ref": None, "t": ts(102), "code": "1"},
                {"ref": "4", "t": ts(102), "code": None},
            ],
        },
        {"l": [{"k": 5, "t": ts(200), "n": 1, "y": 1.0}], "r": []},
    ],
)

# The same join with ANSI off on Spark 4.3 (`set ansi_enabled = false`, issue 35): the STRING key
# is cast to BIGINT alone, a value that does not cast ('x', 'abc') is NULL and matches nothing
# instead of failing the query, '1.5' casts to 1 (its fraction dropped), the STRING beside an
# INT is cast to INT, and IN compares the STRING and the numbers as text.
add(
    "bigint_key_string_key_cast_no_ansi",
    CAST_KEYS.replace("spark 4.3\n", "spark 4.3\nset ansi_enabled = false\n"),
    [
        {
            "l": [
                {"k": 1, "t": ts(100), "n": 5, "y": 1.5},
                {"k": 2, "t": ts(100), "n": 6, "y": 7.0},
                {"k": 3, "t": ts(100), "n": 7, "y": 0.0},
                {"k": 4, "t": ts(100), "n": 8, "y": 0.0},
            ],
            "r": [
                {"ref": "1.5", "t": ts(101), "code": "10"},
                {"ref": " 2 ", "t": ts(101), "code": "abc"},
                {"ref": "x", "t": ts(102), "code": "7"},
                {"ref": "3", "t": ts(102), "code": "07"},
                {"ref": "4", "t": ts(102), "code": " 9 "},
            ],
        },
        {"l": [{"k": 5, "t": ts(200), "n": 1, "y": 1.0}], "r": []},
    ],
)

# ------------------------------------------------------------------ one watermark or many

# examples/checkout_funnel.sjoin with allowMultiple set either way.  After data batch 1 the
# global watermark is 01:30: with one watermark (false) the second join evicts the 01:25
# purchase and the aggregate closes its window at once; with propagation (true) the second
# join gets 01:19:59.999 from the first and keeps it (numRowsRemoved 1 vs 0 in batch 3).
FUNNEL = (EXAMPLES / "checkout_funnel.sjoin").read_text(encoding="utf-8")
FUNNEL_BATCHES = [
    {
        "impressions": [{"ad_id": 1, "campaign": "a", "impression_time": ts(3600)}],
        "clicks": [{"ad_id": 1, "click_id": "x", "click_time": ts(3900)}],
        "purchases": [{"click_id": "x", "amount": 10.0, "purchase_time": ts(5100)}],
    },
    {
        "impressions": [{"ad_id": 2, "campaign": "b", "impression_time": ts(6000)}],
        "clicks": [{"ad_id": 2, "click_id": "y", "click_time": ts(6300)}],
        "purchases": [{"click_id": "y", "amount": 20.0, "purchase_time": ts(6600)}],
    },
]
for allow in ("false", "true"):
    add(
        f"chain_allow_multiple_{allow}",
        FUNNEL.replace(
            "spark 4.3\n", f"spark 4.3\nset allow_multiple_stateful_operators = {allow}\n"
        ),
        FUNNEL_BATCHES,
    )

# ------------------------------------------------------------------ a watermark on a join's output

# `j AS a watermark lt delay 30 seconds`: Spark's withWatermark on the join's output before the
# aggregate.  With allowMultiple=false Spark runs it with one global watermark, the minimum of
# the three nodes (the streams' and the join output's: 71 s after batch 0, not 90 s); with
# allowMultiple=true it fails at the first batch with a watermark (E034), unless no watermark
# lies below the new node: then it is the query's only one.
REWATERMARK = """spark 4.3
set allow_multiple_stateful_operators = {allow}
stream l (k BIGINT, t TIMESTAMP, v STRING){mark}
stream r (k BIGINT, t TIMESTAMP, v STRING){mark}
join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt, R.t AS rt
aggregate per_window = j AS a watermark lt delay 30 seconds
    GROUP BY window(a.lt, INTERVAL 10 SECONDS)
    SELECT window(a.lt, INTERVAL 10 SECONDS) AS w, count(*) AS n
"""
REWATERMARK_BATCHES: list[Batch] = [
    {"l": [row(1, 100, "a"), row(2, 101, "b")], "r": [row(1, 98, "c"), row(2, 100, "d")]},
    {"l": [row(4, 130, "e")], "r": [row(4, 131, "f")]},
    {"l": [row(5, 200, "g")], "r": [row(5, 200, "h")]},
    {"l": [row(6, 260, "i")], "r": [row(6, 262, "j")]},
    # late for the join (the global watermark is 230 s): dropped there
    {"l": [row(7, 225, "k"), row(8, 300, "m")], "r": [row(7, 226, "n"), row(8, 301, "o")]},
]
add(
    "input_watermark_join_then_window",
    REWATERMARK.format(allow="false", mark=" watermark t delay 10 seconds"),
    REWATERMARK_BATCHES,
)
add(
    "input_watermark_without_watermark_below",
    REWATERMARK.format(allow="true", mark=""),
    REWATERMARK_BATCHES,
)

# `j AS a watermark lt delay 30 seconds` where a join reads it, then joined with a third stream.
# With allowMultiple=false one global watermark, the minimum of the four nodes (the streams' and
# the join output's, which lags: 170 s after batch 2, 200 s after batch 3): a `c` row at 150 s is
# late for j2's right side, and the pair j emits at lt=198 s in batch 4 (its left row stored in
# batch 2, its right row new) is late for j2's left side (lt <= 200 s), so j2 drops it.
REWATERMARK_JOIN = """spark 4.3
set allow_multiple_stateful_operators = {allow}
stream l (k BIGINT, t TIMESTAMP, v STRING){mark}
stream r (k BIGINT, t TIMESTAMP, v STRING){mark}
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt, R.t AS rt
join j2 = j AS a watermark lt delay 30 seconds INNER JOIN c AS C
    ON a.k = C.k AND a.lt BETWEEN C.t - INTERVAL 5 SECONDS AND C.t + INTERVAL 5 SECONDS
    SELECT a.k AS k, a.lt AS lt, a.rt AS rt, C.t AS ct
"""
REWATERMARK_JOIN_BATCHES: list[Batch] = [
    {
        "l": [row(1, 100, "a"), row(2, 101, "b")],
        "r": [row(1, 98, "c"), row(2, 100, "d")],
        "c": [row(1, 99, "e"), row(2, 103, "f")],
    },
    {"l": [row(4, 130, "g")], "r": [row(4, 131, "h")], "c": [row(4, 132, "i")]},
    {"l": [row(5, 200, "j"), row(6, 198, "k")], "r": [row(5, 200, "l")], "c": [row(5, 201, "m")]},
    {
        "l": [row(8, 230, "n")],
        "r": [row(8, 231, "o")],
        "c": [row(8, 232, "p"), row(9, 150, "q")],  # 150 s: late for j2 (watermark 170 s)
    },
    # j pairs the stored l row at 198 s with a new r row: lt 198 s <= 200 s, late for j2
    {"r": [row(6, 201, "r")], "c": [row(6, 202, "s")]},
]
add(
    "input_watermark_join_then_join",
    REWATERMARK_JOIN.format(allow="false", mark=" watermark t delay 10 seconds"),
    REWATERMARK_JOIN_BATCHES,
)
add(
    "input_watermark_join_side_without_watermark_below",
    REWATERMARK_JOIN.format(allow="true", mark=""),
    REWATERMARK_JOIN_BATCHES,
)

# ------------------------------------------------------------------ null-safe keys

# `L.k <=> R.k` is two keys to Spark, (coalesce(k, 0), isnull(k)): a NULL k matches a NULL k
# (NULL rows on both sides, in two batches) and never the default 0; IS DISTINCT FROM
# between the sides stays in the join as a post-join condition, true for NULL against a value.
NULL_SAFE_BATCHES: list[Batch] = [
    {
        "l": [row(1, 100, "a"), row(None, 100, "b"), row(0, 101, "zero")],
        "r": [row(1, 101, "c"), row(None, 102, "d"), row(0, 102, None)],
    },
    {"l": [row(None, 130, "e")], "r": [row(None, 131, "f"), row(2, 131, "g"), row(None, 99, "x")]},
    {"l": [row(5, 200, "h")], "r": [row(5, 200, "i")]},
]
NULL_SAFE = "L.k <=> R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS"
add("null_safe_key_inner", join_spec("INNER", NULL_SAFE), NULL_SAFE_BATCHES)
add("null_safe_key_left_outer", join_spec("LEFT OUTER", NULL_SAFE), NULL_SAFE_BATCHES)
add(
    "null_safe_key_not_distinct_full_outer",
    join_spec("FULL OUTER", NULL_SAFE.replace("<=>", "IS NOT DISTINCT FROM")),
    NULL_SAFE_BATCHES,
)
add(
    "null_safe_residual_is_distinct_from",
    join_spec("LEFT OUTER", NULL_SAFE + " AND L.v IS DISTINCT FROM R.v"),
    NULL_SAFE_BATCHES,
)

# ------------------------------------------------------------------ deduplication
# dropDuplicates / dropDuplicatesWithinWatermark (tests/compiler/planning/test_dedup.py):
# duplicates in
# one batch (the first passes) and in later ones, keys evicted by the watermark (or their
# expiry), late rows dropped on the event time whether or not it is a key, NULL keys and
# NULL times (a NULL time expires at 0 + delay within the watermark: Spark reads it with
# getLong), no-data batches whenever the watermark moves.
DEDUP_STREAM = f"spark 4.3\nstream s {KTV} watermark t delay 5 seconds\n"
DEDUP_BATCHES: list[Batch] = [
    {"s": [row(1, 10, "a"), row(1, 10, "b"), row(2, 12, "c"), row(1, 11, "d"), row(7, None)]},
    {"s": [row(1, 10, "e"), row(3, 30, "f"), row(None, 31, "g"), row(None, 31, "h")]},
    {"s": [row(2, 12, "i"), row(1, 1, "late"), row(4, 40, "j"), row(7, None, "k")]},
    {"s": [row(1, 10, "l"), row(5, 60, "m"), row(3, 58, "n"), row(None, 59, "o")]},
]
add("dedup_key_and_time", DEDUP_STREAM + "dedup d = s ON (k, t)\n", DEDUP_BATCHES)
add("dedup_within_watermark", DEDUP_STREAM + "dedup d = s ON (k) WITHIN WATERMARK\n", DEDUP_BATCHES)
add("dedup_key_never_evicted", DEDUP_STREAM + "dedup d = s ON (k)\n", DEDUP_BATCHES)
add(
    "dedup_all_columns",
    DEDUP_STREAM + "dedup d = s ON (k, t, v)\n",
    DEDUP_BATCHES,
)
add(
    "dedup_double_key",
    "spark 4.3\nstream s (x DOUBLE, v STRING)\ndedup d = s ON (x)\n",
    [
        {
            "s": [
                {"x": 0.0, "v": "a"},
                {"x": -0.0, "v": "b"},  # the key 0.0: dropped
                {"x": "NaN", "v": "c"},
                {"x": "NaN", "v": "d"},  # one NaN key: dropped
                {"x": None, "v": "e"},
                {"x": None, "v": "f"},
            ]
        },
        {"s": [{"x": -0.0, "v": "g"}, {"x": 1.5, "v": "h"}]},
    ],
)
DEDUP_JOIN = f"""spark 4.3
stream l {KTV} watermark t delay 10 seconds
stream r {KTV} watermark t delay 10 seconds
dedup l1 = l ON (k, t)
dedup r1 = r ON (k) WITHIN WATERMARK
join j = l1 AS L INNER JOIN r1 AS R
    ON {RANGE}
    {LR}
"""
add(
    "dedup_then_join",
    DEDUP_JOIN,
    [
        {
            "l": [row(1, 100, "a"), row(1, 100, "a2"), row(2, 101, "b")],
            "r": [row(1, 98, "c"), row(1, 99, "c2"), row(3, 100, "d")],
        },
        {"l": [row(4, 130, "e"), row(1, 100, "a3")], "r": [row(4, 131, "f"), row(1, 120, "c3")]},
        {"l": [row(5, 200, "g")], "r": [row(5, 200, "h"), row(4, 135, "late")]},
    ],
)
add(
    "join_then_dedup",
    join_spec("LEFT OUTER").replace(
        "SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.k AS rk, R.t AS rt, R.v AS rv",
        "SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.v AS rv",
    )
    + "dedup d = j ON (lk) WITHIN WATERMARK\n",
    advancing({"r": [row(1, 99, "c2")]}),
)
# ------------------------------------------------------------------ unions
# Two streams of one shape unioned, each keeping its own watermark node (a: 10 s, b: 30 s),
# feeding a join with a third stream: the global watermark is the min (or max) of the three
# nodes.  Batch 0 gives b a row far ahead, which the join's side filter (v <> 'skip') drops:
# Spark pushes that filter through the Union below each input's watermark node, so b's node
# does not see it (tests/integration/spark/test_union_on_spark.py); batch 2 gives b a row that is
# late under the max policy.
UNION = """spark 4.3
{header}stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 30 seconds
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
union ab = {inputs}
join j = ab AS X {how} JOIN c AS C
  ON X.k = C.k AND X.v <> 'skip' AND C.t BETWEEN X.t AND X.t + INTERVAL 10 SECONDS
  SELECT X.k AS k, X.t AS xt, X.v AS xv, C.t AS ct, C.v AS cv
"""
UNION_BATCHES: list[Batch] = [
    {
        "a": [row(1, 100, "a1"), row(2, 101, "a2")],
        "b": [row(1, 95, "b1"), row(3, 100, "b3"), row(9, 400, "skip")],
        "c": [row(1, 102, "c1"), row(3, 105, "c3")],
    },
    {"a": [row(4, 160, "a4")], "b": [row(4, 120, "b4")], "c": [row(4, 165, "c4"), row(1, 103)]},
    {
        "a": [row(5, 240, "a5")],
        "b": [row(5, 200, "b5"), row(6, 130, "b6")],
        "c": [row(5, 245, "c5"), row(6, 135, "c6")],
    },
    {"a": [row(7, 300, "a7")], "c": [row(7, 301, "c7")]},
]
for policy in ("min", "max"):
    for how in ("INNER", "LEFT OUTER"):
        add(
            f"union_{policy}_policy_{how.lower().replace(' ', '_')}_join",
            UNION.format(
                header=f"set multiple_watermark_policy = {policy}\n",
                inputs="a UNION ALL b",
                how=how,
            ),
            UNION_BATCHES,
        )
# the first input without a watermark: the union's t is no event time (W014), so the join's
# left state is never evicted; b's node still counts in the global watermark
add(
    "union_first_input_without_watermark",
    UNION.format(header="", inputs="c2 UNION ALL b", how="INNER").replace(
        "stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds",
        "stream c2 (k BIGINT, t TIMESTAMP, v STRING)",
    ),
    [{("c2" if s == "a" else s): rows for s, rows in b.items()} for b in UNION_BATCHES],
)
# a union of two joins' outputs feeding an aggregate (a stateful operator below and above)
add(
    "union_of_two_joins_then_window_count",
    """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream m (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 20 seconds
join lr = l AS L INNER JOIN r AS R
  ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS t, R.v AS v
join lm = l AS L INNER JOIN m AS M
  ON L.k = M.k AND M.t BETWEEN L.t AND L.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS t, M.v AS v
union both = lr UNION ALL lm
aggregate counts = both AS B
  GROUP BY window(B.t, INTERVAL 10 SECONDS)
  SELECT window(B.t, INTERVAL 10 SECONDS) AS w, count(*) AS n
  OUTPUT MODE append
""",
    [
        {"l": [row(1, 100), row(2, 104)], "r": [row(1, 101, "r")], "m": [row(2, 105, "m")]},
        {"l": [row(3, 130)], "r": [row(3, 131, "r")], "m": [row(3, 132, "m")]},
        {"l": [row(4, 200)], "r": [row(4, 200, "r")], "m": [row(4, 200, "m")]},
    ],
)

# A LEFT SEMI join over a union: Spark's optimizer pushes it below the union
# (PushDownLeftSemiAntiJoin, "LeftSemi/LeftAnti over Union"), so Spark 4.3 runs one
# stream-stream join per union input, each storing the right side; the planner plans it so
# (compiler/planning/semi_union.py: the joins `j_l`, `j_l2` and the union `j` of them).
# Found by tests/integration/parity/test_random.py's random pipelines.
SEMI_BATCHES = [
    {"l": [row(1, 100)], "r": [row(1, 99)], "r2": [row(7, 90)]},
    {"l2": [row(1, 101), row(4, 102)], "l3": [row(1, 103)]},
    {"l": [row(2, 120)], "l2": [row(2, 121)], "l3": [row(5, 122)], "r": [row(2, 119)]},
    {"r2": [row(5, 121)], "r": [row(3, 200)], "l": [row(3, 201)]},
    {"l2": [row(3, 150), row(3, 202)], "l3": [row(3, 203)], "l": [row(9, 300)]},
]


def semi_spec(
    how: str = "LEFT SEMI",
    left: tuple[str, ...] = ("l", "l2"),
    right: tuple[str, ...] = ("r",),
    unwatermarked: tuple[str, ...] = (),
) -> str:
    """A ``how`` join of ``left`` with ``right`` (each a union of those streams when it has
    several): the streams it reads, each with a watermark unless ``unwatermarked``."""
    lines = ["spark 4.3"]
    for name in (*left, *right):
        mark = "" if name in unwatermarked else " watermark t delay 0 seconds"
        lines.append(f"stream {name} (k BIGINT, t TIMESTAMP, v STRING){mark}")
    sides = []
    for union, names in (("lu", left), ("ru", right)):
        if len(names) > 1:
            lines.append(f"union {union} = {' UNION ALL '.join(names)}")
        sides.append(union if len(names) > 1 else names[0])
    lines.append(f"join j = {sides[0]} AS L {how} JOIN {sides[1]} AS R")
    lines.append("  ON L.k = R.k AND L.t >= R.t AND L.t <= R.t + INTERVAL 5 SECONDS")
    lines.append("  SELECT L.k AS k, L.t AS t")
    return "\n".join(lines) + "\n"


def semi_batches(streams: tuple[str, ...]) -> list[Batch]:
    """``SEMI_BATCHES`` with only the rows of ``streams``."""
    return [{s: rows for s, rows in b.items() if s in streams} for b in SEMI_BATCHES]


add("union_below_a_left_semi_join", semi_spec(), semi_batches(("l", "l2", "r")))
# a union of three inputs: three joins, in the union's order
add(
    "union_of_three_below_a_left_semi_join",
    semi_spec(left=("l", "l2", "l3")),
    semi_batches(("l", "l2", "l3", "r")),
)
# a union input without a watermark: its own join has no left event time (Spark's condition
# reads the input's attributes after the rewrite, not the union's, which carry the first
# input's mark), so that join's left state is never evicted, nor its right state
add(
    "union_below_a_left_semi_join_input_without_watermark",
    semi_spec(unwatermarked=("l2",)),
    semi_batches(("l", "l2", "r")),
)
# the first input without a watermark: the union's `t` carries no mark (W014), yet the join
# over `l2` reads l2's `t`, which does: that join's state is evicted
add(
    "union_below_a_left_semi_join_first_input_without_watermark",
    semi_spec(unwatermarked=("l",)),
    semi_batches(("l", "l2", "r")),
)
# window keys: each derived join projects its input's window before it
add(
    "union_below_a_left_semi_join_on_window_keys",
    semi_spec().replace(
        "L.t >= R.t AND L.t <= R.t + INTERVAL 5 SECONDS",
        "window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)",
    ),
    semi_batches(("l", "l2", "r")),
)
# LEFT ANTI: sjoin writes it as a LEFT OUTER join and a filter (Spark has no stream-stream
# LeftAnti), which the rule does not push: one join over the union
add(
    "union_below_a_left_anti_join",
    semi_spec(how="LEFT ANTI"),
    semi_batches(("l", "l2", "r")),
)
# the union on the right side: the rule pushes a join below a Union on its left only
add(
    "union_right_of_a_left_semi_join",
    semi_spec(left=("l3",), right=("r", "r2")),
    semi_batches(("l3", "r", "r2")),
)
# An aggregate grouping by a window of the column an outer join below null-pads: Spark's
# TimeWindowing puts Filter(isnotnull(lt)) under the aggregate, a null-rejecting filter on the
# left side, so EliminateOuterJoin runs the RIGHT OUTER join as INNER (and infers isnotnull of
# R.k and R.t below it): the right rows with a NULL key or time, and the unmatched ones, are
# not kept as a right outer join keeps them. Found by tests/integration/parity/test_random.py; the
# planner's readers.py models it (W015).
PADDED_RANGE = "ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS"
PADDED_SELECT = "SELECT L.k AS lk, L.t AS lt, R.k AS rk, R.t AS rt"
PADDED_BATCHES = [
    {"l": [row(1, 101)], "r": [row(1, 100), row(None, 100), row(2, None)]},
    {"l": [row(3, 200), row(4, 202)], "r": [row(3, 200)]},
    {"l": [row(5, 300)], "r": [row(5, 300), row(6, 301)]},
]


def padded_spec(how: str, middle: str, reads: str, window: str = "A.lt") -> str:
    """An outer join `j`, the statements ``middle`` between it and the aggregate `a`, which
    reads ``reads`` and groups by a window of ``window``."""
    return (
        "spark 4.3\n"
        "stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds\n"
        "stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds\n"
        f"join j = l AS L {how} JOIN r AS R\n  {PADDED_RANGE}\n  {PADDED_SELECT}\n"
        + middle
        + f"aggregate a = {reads} AS A GROUP BY window({window}, INTERVAL 10 SECONDS)\n"
        f"  SELECT window({window}, INTERVAL 10 SECONDS) AS w, count(*) AS n\n"
        "  OUTPUT MODE append\n"
    )


add(
    "right_outer_join_below_a_window_of_its_null_padded_side",
    padded_spec("RIGHT OUTER", "", "j"),
    PADDED_BATCHES[:2],
)
# LEFT OUTER with the window over its null-padded right side: run as INNER
add(
    "left_outer_join_below_a_window_of_its_null_padded_side",
    padded_spec("LEFT OUTER", "", "j", "A.rt"),
    PADDED_BATCHES,
)
# FULL OUTER with the window over its left side: run as LEFT OUTER (the left side is no
# longer null-padded, the right one still is)
add(
    "full_outer_join_below_a_window_of_its_left_side",
    padded_spec("FULL OUTER", "", "j"),
    PADDED_BATCHES,
)
# the window over the preserved side: no filter on a null-padded column, still RIGHT OUTER
add(
    "right_outer_join_below_a_window_of_its_preserved_side",
    padded_spec("RIGHT OUTER", "", "j", "A.rt"),
    PADDED_BATCHES,
)
# through a view that renames the column (Spark pushes the filter through its projection)
add(
    "right_outer_join_below_a_view_and_a_window_of_its_null_padded_side",
    padded_spec("RIGHT OUTER", "view v = SELECT J.lt AS x, J.rk AS rk FROM j AS J\n", "v", "A.x"),
    PADDED_BATCHES,
)

# A view's WHERE below a dedup that a join reads: Spark's Deduplicate keeps its child's
# constraints (a UnaryNode's), so InferFiltersFromConstraints carries `L.k IN (1, 2)` through
# the key equality to the other side: the right rows with k = 3 never reach the join's state
# (compiler/planning/constraints.py). Found by tests/integration/parity/test_random.py.
add(
    "inferred_filter_from_a_view_below_a_dedup",
    """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
view lv = SELECT X.k, X.t, X.v FROM l AS X WHERE X.k IN (1, 2)
dedup ld = lv ON (k, t)
join j = ld AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt
""",
    [{"l": [row(1, 100)], "r": [row(1, 100), row(3, 100)]}, {"l": [row(2, 101)]}],
)

# The same through a join below: an INNER join's output keeps its inputs' constraints and its
# condition's (Join.validConstraints), so `j` infers `R.k IN (1, 2)` from the view below `i`
add(
    "inferred_filter_from_a_join_below",
    LMR
    + """view lv = SELECT X.k, X.t, X.v FROM l AS X WHERE X.k IN (1, 2)
join i = lv AS A INNER JOIN m AS B ON A.k = B.k AND A.t = B.t
  SELECT A.k AS k, A.t AS t
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt
""",
    [
        {"l": [row(1, 100)], "m": [row(1, 100)], "r": [row(1, 100), row(3, 100)]},
        {"l": [row(2, 101)], "m": [row(2, 101)], "r": [row(3, 101)]},
    ],
)

# a join's condition on its left side only, over a join below: Spark pushes `L.v <> 'b'`
# through the lower join's projection into its left input, below l's watermark node, so the
# lower join never stores l's 'b' rows and l's far-future 'b' row never moves the watermark
add(
    "join_side_filter_pushed_into_a_join_below",
    LMR
    + JOIN_I
    + """  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'b' AND R.v <> 'q'
  SELECT L.k AS k, L.t AS lt, L.v AS lv, L.mv AS mv, R.t AS rt
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b"), row(9, 500, "b")],
            "m": [row(1, 100), row(2, 100), row(3, 100)],
            "r": [row(1, 100), row(2, 100)],
        },
        {"l": [row(3, 102, "c")], "m": [row(1, 101)], "r": [row(3, 101), row(1, 102, "q")]},
        {"l": [row(4, 200, "d")], "m": [row(4, 200)], "r": [row(4, 200)]},
    ],
)

# the same with a sink on the lower join: two queries, which Spark plans apart. The query
# of `j` pushes `L.v <> 'b'` into its own run of `i` (which stores 2 left rows there), the
# query of `i` (its sink) pushes nothing (3 left rows)
add(
    "join_side_filter_pushed_into_a_join_with_a_sink",
    LMR
    + JOIN_I
    + """  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'b' AND R.v <> 'q'
  SELECT L.k AS k, L.t AS lt, L.v AS lv, L.mv AS mv, R.t AS rt
sink i to parquet (path = 'out/i') checkpoint 'chk/i'
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b"), row(9, 500, "b")],
            "m": [row(1, 100), row(2, 100), row(3, 100)],
            "r": [row(1, 100), row(2, 100)],
        },
        {"l": [row(3, 102, "c")], "m": [row(1, 101)], "r": [row(3, 101), row(1, 102, "q")]},
        {"l": [row(4, 200, "d")], "m": [row(4, 200)], "r": [row(4, 200)]},
    ],
)

# a join that two joins read, each a query of its own: each query pushes its own side filter
# into its own run of `i` (`j`'s `L.v <> 'b'`, `k`'s `L.v <> 'c'`), so `i` stores other rows in
# each
add(
    "two_readers_push_their_own_filters_into_a_join",
    LMR
    + JOIN_I
    + """  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'b'
  SELECT L.k AS k, L.t AS lt, L.v AS lv, R.t AS rt
join n = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'c'
  SELECT L.k AS k, L.t AS lt, L.v AS lv, R.t AS rt
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b"), row(3, 100, "c")],
            "m": [row(1, 100), row(2, 100), row(3, 100)],
            "r": [row(1, 100), row(2, 100), row(3, 100)],
        },
        {"l": [row(3, 102, "c")], "m": [row(3, 101)], "r": [row(3, 101)]},
        {"l": [row(4, 200, "d")], "m": [row(4, 200)], "r": [row(4, 200)]},
    ],
)

# a join that two joins read in ONE query (both under a union): Spark's plan of that query
# holds `i` twice, one subtree per reader, each with its reader's filter pushed in (5 rows in
# each `i` after batch 0, Spark 4.3.0); sjoin plans the second read as a copy of `i`
# (compiler/planning/read_twice.py), so it runs two operators as Spark does
add(
    "a_join_read_twice_in_one_query",
    LMR
    + JOIN_I
    + """  SELECT A.k AS k, A.t AS t, A.v AS v
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'b'
  SELECT L.k AS k, L.t AS t, L.v AS v
join n = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'c'
  SELECT L.k AS k, L.t AS t, L.v AS v
union u = j UNION ALL n
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b"), row(3, 100, "c")],
            "m": [row(1, 100), row(2, 100), row(3, 100)],
            "r": [row(1, 100), row(2, 100), row(3, 100)],
        },
        {"l": [row(4, 200, "d")], "m": [row(4, 200)], "r": [row(4, 200)]},
    ],
)

# the same with a sink on `i`: two queries. The query of `u` runs `i` twice, each with its
# reader's filter (Spark plans the query alone: the sink does not stop the pushdown there),
# the query of `i` once, with none
add(
    "a_join_with_a_sink_read_twice_in_another_query",
    LMR
    + JOIN_I
    + """  SELECT A.k AS k, A.t AS t, A.v AS v
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'b'
  SELECT L.k AS k, L.t AS t, L.v AS v
join n = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'c'
  SELECT L.k AS k, L.t AS t, L.v AS v
union u = j UNION ALL n
sink i to parquet (path = 'out/i') checkpoint 'chk/i'
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b"), row(3, 100, "c")],
            "m": [row(1, 100), row(2, 100), row(3, 100)],
            "r": [row(1, 100), row(2, 100), row(3, 100)],
        },
        {"l": [row(4, 200, "d")], "m": [row(4, 200)], "r": [row(4, 200)]},
    ],
)

# a join read twice in the query of `j4` (directly, and below `j2`), where `j2`, the reader of
# the second read, is a query of its own (its sink): the query of `j4` runs two `j0`s, the
# query of `j2` one
add(
    "a_join_read_twice_below_a_query_of_its_own",
    """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
join j0 = r AS x INNER JOIN l AS y
  ON x.k = y.k AND x.t BETWEEN y.t AND y.t + INTERVAL 5 SECONDS
  SELECT x.k AS k, x.t AS t, x.v AS v
join j2 = l AS x INNER JOIN j0 AS y
  ON x.k = y.k AND x.t BETWEEN y.t AND y.t + INTERVAL 5 SECONDS AND y.v <> 'b'
  SELECT x.k AS k, x.t AS t, y.v AS v
join j4 = j0 AS x INNER JOIN j2 AS y
  ON x.k = y.k AND x.t BETWEEN y.t AND y.t + INTERVAL 5 SECONDS AND x.v <> 'c'
  SELECT x.k AS k, x.t AS t, y.v AS v
sink j2 to parquet (path = 'out/j2') checkpoint 'chk/j2'
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b"), row(3, 100, "c")],
            "r": [row(1, 100, "a"), row(2, 100, "b"), row(3, 100, "c")],
        },
        {"l": [row(4, 200, "d")], "r": [row(4, 200, "d")]},
    ],
)

# the same over a LEFT OUTER join below: `L.mv <> 'z'` rejects its null-padded rows, so Spark
# runs it as INNER (EliminateOuterJoin) and pushes the filter into its right input: the lower
# join never stores m's 'z' rows
add(
    "join_side_filter_into_an_outer_join_below",
    LMR
    + """join i = l AS A LEFT OUTER JOIN m AS B
  ON A.k = B.k AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS
  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.mv <> 'z'
  SELECT L.k AS k, L.t AS lt, L.v AS lv, L.mv AS mv, R.t AS rt
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b")],
            "m": [row(1, 100, "y"), row(2, 100, "z"), row(3, 100, "z"), row(5, 100, "z")],
            "r": [row(1, 100), row(2, 100)],
        },
        {"l": [row(3, 102, "c")], "m": [row(1, 101, "z")], "r": [row(3, 101)]},
        {"l": [row(4, 200, "d")], "m": [row(4, 200, "w")], "r": [row(4, 200)]},
    ],
)

# a filter the upper join INFERS for its side (`L.k > 1` from `L.k = R.k AND R.k > 1`): Spark's
# InferFiltersFromConstraints runs once, then the pushdown takes it into the lower join's left
# input only (the lower join's own inference has run by then, so `B.k > 1` is never inferred):
# Spark stores 4 rows in `i` after batch 0, not 6 (Spark 4.3.0, sjoin verify)
add(
    "inferred_filter_pushed_into_a_join_below",
    LMR
    + """join i = l AS A INNER JOIN m AS B
  ON A.k = B.k AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS
  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND R.k > 1
  SELECT L.k AS k, L.t AS lt, L.v AS lv, L.mv AS mv, R.t AS rt
""",
    [
        {
            "l": [row(1, 100), row(2, 100), row(1, 101)],
            "m": [row(1, 100), row(2, 100), row(1, 102)],
            "r": [row(2, 100)],
        },
        {"l": [row(3, 102)], "m": [row(3, 101)], "r": [row(3, 101)]},
        {"l": [row(4, 200)], "m": [row(4, 200)], "r": [row(4, 200)]},
    ],
)

# the same over a LEFT OUTER join below: `L.mv = R.v AND R.v = 'x'` infers `L.mv = 'x'`, whose
# column is the lower join's null-padded one; the equality's isnotnull(L.mv) runs `i` as INNER,
# and the inferred filter goes on into `i`'s right input after `i`'s own inference
add(
    "inferred_filter_into_an_outer_join_below",
    LMR
    + """join i = l AS A LEFT OUTER JOIN m AS B
  ON A.k = B.k AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS
  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv
join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.mv = R.v AND R.v = 'x'
  SELECT L.k AS k, L.t AS lt, L.v AS lv, L.mv AS mv, R.t AS rt
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b"), row(3, 100, "c")],
            "m": [row(1, 100, "x"), row(2, 100, "y"), row(3, 100, "x"), row(4, 100, "x")],
            "r": [row(1, 100, "x"), row(2, 100, "x")],
        },
        {"l": [row(4, 102, "d")], "m": [row(1, 101, "y")], "r": [row(3, 101, "x")]},
        {"l": [row(5, 200, "e")], "m": [row(5, 200, "x")], "r": [row(5, 200, "x")]},
    ],
)

# a join reading a VIEW over a join: its side filter (`L.v <> 'b'`) and the filter it infers
# (`L.k > 1`) go through the view's projection, with the view's WHERE (CombineFilters), into
# the join below: `i` stores only the left rows with k > 1, k <> 7 and v <> 'b'
add(
    "join_side_filter_through_a_view_into_a_join",
    LMR
    + """join i = l AS A INNER JOIN m AS B
  ON A.k = B.k AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS
  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv
view w = SELECT X.k AS k, X.t AS t, X.v AS v FROM i AS X WHERE X.k <> 7
join j = w AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'b' AND R.k > 1
  SELECT L.k AS k, L.t AS lt, L.v AS lv, R.t AS rt
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 100, "b"), row(3, 100, "c"), row(7, 100, "a")],
            "m": [row(1, 100), row(2, 100), row(3, 100), row(7, 100)],
            "r": [row(3, 100), row(2, 100)],
        },
        {"l": [row(3, 102, "c")], "m": [row(3, 101)], "r": [row(3, 101)]},
        {"l": [row(4, 200)], "m": [row(4, 200)], "r": [row(4, 200)]},
    ],
)

# the same through TWO views: PushPredicateThroughNonJoin takes the Filter through each
# Project in turn, each view's WHERE joining it (CombineFilters): `i` stores only the left
# rows with k > 1, k <> 7, k <> 3 and v <> 'b'
add(
    "join_side_filter_through_two_views_into_a_join",
    LMR
    + """join i = l AS A INNER JOIN m AS B
  ON A.k = B.k AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS
  SELECT A.k AS k, A.t AS t, A.v AS v, B.v AS mv
view w = SELECT X.k AS k, X.t AS t, X.v AS v FROM i AS X WHERE X.k <> 7
view w2 = SELECT Y.k AS k, Y.t AS t, Y.v AS v FROM w AS Y WHERE Y.k <> 3
join j = w2 AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> 'b' AND R.k > 1
  SELECT L.k AS k, L.t AS lt, L.v AS lv, R.t AS rt
""",
    [
        {
            "l": [
                row(1, 100, "a"),
                row(2, 100, "b"),
                row(3, 100, "c"),
                row(4, 100, "d"),
                row(7, 100, "a"),
            ],
            "m": [row(1, 100), row(2, 100), row(3, 100), row(4, 100), row(7, 100)],
            "r": [row(4, 100), row(2, 100)],
        },
        {"l": [row(4, 102, "c")], "m": [row(4, 101)], "r": [row(4, 101)]},
        {"l": [row(5, 200)], "m": [row(5, 200)], "r": [row(5, 200)]},
    ],
)

# ------------------------------------------------------------------ WHERE and views (issue 37)
# a WHERE on the null-padded side: EliminateOuterJoin runs the LEFT OUTER join as INNER, so
# left rows whose match fails it, or that never match, never come out null-padded
add(
    "where_left_outer_to_inner",
    join_spec("LEFT OUTER", RANGE + " WHERE R.v <> 'd'"),
    advancing({"l": [row(3, 100, "n")], "r": [row(3, 101, "d")]}),
)
# a WHERE on the preserved side, pushed into it below its watermark node: the row it drops
# (far in the future) never moves the watermark, so the next batch's rows are on time
WHERE_BELOW = [
    {"l": [row(1, 100, "a"), row(2, 500, "b")], "r": [row(1, 101, "c")]},
    {"l": [row(3, 120, "e")], "r": [row(3, 121, "f"), row(2, 500, "g")]},
    {"l": [row(5, 200, "h")], "r": [row(5, 200, "i")]},
]
add(
    "where_pushed_below_the_watermark",
    join_spec("LEFT OUTER", RANGE + " WHERE L.v <> 'b'"),
    WHERE_BELOW,
)
# a view before the join: its WHERE runs below the stream's watermark node too
add(
    "view_before_a_join",
    "spark 4.3\n"
    + streams()
    + "view lv = SELECT L.k, L.t, upper(L.v) AS v FROM l AS L WHERE L.v <> 'b'\n"
    + f"join j = lv AS L LEFT OUTER JOIN r AS R ON {RANGE}\n  {LR}\n",
    WHERE_BELOW,
)
# a view's WHERE over a union: Spark pushes it through the Union and below each input's
# watermark node, so b's node sees no row in batch 0 (its only one is filtered) and counts 0
# in the min policy: the global watermark stays at 0 until b has a row it keeps
add(
    "view_over_a_union_before_a_join",
    """spark 4.3
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 30 seconds
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
union ab = a UNION ALL b
view kept = SELECT X.k, X.t, X.v FROM ab AS X WHERE X.v <> 'skip'
join j = kept AS X LEFT OUTER JOIN c AS C
  ON X.k = C.k AND C.t BETWEEN X.t AND X.t + INTERVAL 10 SECONDS
  SELECT X.k AS k, X.t AS xt, X.v AS xv, C.t AS ct, C.v AS cv
""",
    [
        {"a": [row(1, 100, "a1")], "b": [row(9, 400, "skip")], "c": [row(1, 102, "c1")]},
        {"a": [row(2, 160, "a2")], "c": [row(5, 170, "c5")]},
        {"b": [row(3, 150, "b3")], "c": [row(3, 155, "c3")]},
        {"a": [row(4, 300, "a4")], "b": [row(4, 300, "b4")], "c": [row(4, 301, "c4")]},
    ],
)

# an aggregate's WHERE over a stream: Spark's Filter below the aggregate, its conjunct on v
# pushed below the stream's watermark node (the 900 s row it drops never moves the
# watermark), the one on t above it; the rows it drops never reach the state nor count as
# late (batch 2's late `skip` rows are not in numRowsDroppedByWatermark, its late `x` row is)
add(
    "aggregate_where_over_a_stream",
    """spark 4.3
stream s (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
aggregate a = s AS S WHERE S.v <> 'skip' AND S.t > TIMESTAMP '2026-01-01 00:01:00'
  GROUP BY S.k, window(S.t, INTERVAL 10 SECONDS)
  SELECT S.k, window(S.t, INTERVAL 10 SECONDS) AS w, count(*) AS n, max(S.v) AS top
""",
    [
        {"s": [row(1, 100, "a"), row(2, 101, "b"), row(3, 50, "old"), row(9, 900, "skip")]},
        {"s": [row(1, 130, "c"), row(2, 131, "skip")]},
        {"s": [row(1, 102, "skip"), row(2, 103, "skip"), row(1, 104, "late")]},
        {"s": [row(4, 200, "d")]},
    ],
)
# an aggregate's WHERE over a LEFT OUTER join that only the aggregate reads: Spark pushes it
# through the join's projection; its conjunct on the right side rejects the null-padded rows,
# so EliminateOuterJoin runs the join as INNER, and each one-side conjunct goes below the
# join into its side (the state of each side holds only the rows it keeps)
add(
    "aggregate_where_over_a_left_join",
    join_spec(
        "LEFT OUTER",
        select="SELECT L.k AS k, L.t AS lt, L.v AS lv, R.v AS rv",
    )
    + """aggregate a = j AS J WHERE J.rv <> 'no' AND J.lv <> 'skip'
  GROUP BY J.k, window(J.lt, INTERVAL 30 SECONDS)
  SELECT J.k, window(J.lt, INTERVAL 30 SECONDS) AS w, count(*) AS n
""",
    [
        {
            "l": [row(1, 100, "a"), row(2, 101, "skip"), row(3, 102, "c")],
            "r": [row(1, 98, "x"), row(2, 100, "x"), row(3, 101, "no")],
        },
        {"l": [row(4, 130, "e")], "r": [row(4, 131, "f"), row(1, 104, "g")]},
        {"l": [row(5, 200, "g")], "r": [row(5, 200, "h")]},
        {"l": [row(6, 300, "i")], "r": [row(6, 301, "j")]},
    ],
)
# an aggregate's WHERE over a union that only it reads: Spark pushes it through the Union and
# below each input's watermark node, so b's node sees none of the rows it drops
add(
    "aggregate_where_over_a_union",
    """spark 4.3
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 30 seconds
union ab = a UNION ALL b
aggregate n = ab AS X WHERE X.v <> 'skip'
  GROUP BY window(X.t, INTERVAL 10 SECONDS)
  SELECT window(X.t, INTERVAL 10 SECONDS) AS w, count(*) AS n
""",
    [
        {"a": [row(1, 100, "a1")], "b": [row(9, 400, "skip")]},
        {"a": [row(2, 160, "a2")], "b": [row(3, 150, "b3")]},
        {"a": [row(4, 300, "a4")], "b": [row(4, 300, "b4")]},
        {"a": [row(5, 400, "a5")], "b": [row(5, 400, "b5")]},
    ],
)

# A join's filters on a view go below the view, through its projection, and below its
# stream's watermark node (PushPredicateThroughJoin, then PushPredicateThroughNonJoin): the
# right row at 300 s that `R.v <> 'b'` (or the inferred isnotnull(R.k)) rejects never moves
# r's watermark, so the left rows stay in the state (compiler/planning/view_pushdown.py;
# found by tests/integration/parity/test_random.py).
PUSHED_BATCHES = [
    {"l": [row(1, 100, "a")], "r": [row(1, 101, "a")]},
    {"l": [row(1, 300, "b")], "r": [row(1, 300, "b"), row(None, 301, "a")]},
    {"l": [row(1, 102, "a")], "r": [row(1, 103, "a")]},
    {"l": [row(2, 400, "a")], "r": [row(2, 400, "a")]},
]


def pushed_spec(views: str, right: str, extra: str = "") -> str:
    """A join of `l` and ``right`` (views over `r`, ``views``) on a key and a time range."""
    return (
        "spark 4.3\n"
        "stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 seconds\n"
        "stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 1 seconds\n"
        f"{views}"
        f"join j = l AS L JOIN {right} AS R ON L.k = R.k AND L.t >= R.t - INTERVAL 2 SECONDS "
        f"AND L.t <= R.t{extra}\n"
        "  SELECT L.k AS lk, L.t AS lt, R.v AS rv\n"
    )


add(
    "join_filter_pushed_into_a_view",
    pushed_spec("view rv = SELECT X.k, X.t, X.v FROM r AS X\n", "rv", " AND R.v <> 'b'"),
    PUSHED_BATCHES,
)
# the isnotnull(R.k) the join infers, of a computed column: isnotnull(X.k * 1) below it; the
# right row with a NULL key is r's latest, and r is the slower stream
add(
    "join_not_null_pushed_into_a_view",
    pushed_spec("view rv = SELECT X.k * 1 AS k, X.t, upper(X.v) AS v FROM r AS X\n", "rv"),
    [
        {"l": [row(1, 100, "a")], "r": [row(1, 101, "a")]},
        {"l": [row(1, 300, "b")], "r": [row(1, 250, "b"), row(None, 301, "a")]},
        {"l": [row(1, 248, "a")], "r": [row(1, 249, "a")]},
        {"l": [row(2, 400, "a")], "r": [row(2, 400, "a")]},
    ],
)
# a view's WHERE over another view goes below that view too, with the join's filters
add(
    "view_over_a_view_over_a_stream",
    pushed_spec(
        "view r1 = SELECT X.k, X.t, X.v FROM r AS X\n"
        "view r2 = SELECT Y.k, Y.t, Y.v FROM r1 AS Y WHERE Y.v <> 'b'\n",
        "r2",
    ),
    PUSHED_BATCHES,
)

# A view's WHERE over a join: Spark pushes it through the join's projection into the join
# (PushPredicateThroughNonJoin), where EliminateOuterJoin runs the LEFT OUTER join as INNER:
# the left rows without a match (or matched by a `d` row only) are never stored as a
# preserved side's, and never come out null-padded (the planner's _pushed_wheres)
add(
    "view_where_over_a_left_outer_join",
    join_spec("LEFT OUTER") + "view v = SELECT J.* FROM j AS J WHERE J.rv <> 'd'\n",
    advancing({"l": [row(3, 100, "n")], "r": [row(3, 101, "d")]}),
)

# ------------------------------------------------------------------ a stream's watermark read twice
# A stream read at two places of one query whose readers push different filters below its
# watermark node: Spark plans a watermark node per read, each seeing the rows its reader's
# filters keep. Spark 3.5 counts each node on its own in the global watermark (its tracker
# keys them by their index in the physical plan); from 4.0 (SPARK-50046) the tracker keys
# them by the EventTimeWatermark's nodeId, which both reads keep: one entry, the higher of
# the two (compiler/planning/planner.py ``with_shared_watermarks``). After batch 0 the
# watermark is 120 s on 4.3 and 100 s on 3.5, so batch 1's `a` row at 110 s is late on 4.3
# only (the catalogue job self_join.py, run as written, found it).
ONE_STREAM = "spark 4.3\nstream e (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds\n"
READ_TWICE_BATCHES: list[Batch] = [
    {"e": [row(1, 100, "a"), row(1, 120, "b")], "r": [row(1, 130, "x")]},
    {"e": [row(2, 110, "a"), row(2, 130, "b")], "r": [row(2, 131, "x")]},
    {"e": [row(3, 300, "a"), row(3, 300, "b")], "r": [row(3, 300, "x")]},
]
add(
    "self_join_sides_filter_the_stream_differently",
    ONE_STREAM
    + """join j = e AS L INNER JOIN e AS R
  ON L.k = R.k AND L.v = 'a' AND R.v = 'b' AND R.t BETWEEN L.t AND L.t + INTERVAL 60 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt
""",
    [{"e": b["e"]} for b in READ_TWICE_BATCHES],
)
# the stream read by two joins of one query, each filtering it otherwise
add(
    "a_stream_read_by_two_joins_of_one_query",
    ONE_STREAM
    + """stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
join i = e AS A INNER JOIN r AS B
  ON A.k = B.k AND A.v = 'a' AND A.t BETWEEN B.t - INTERVAL 60 SECONDS AND B.t + INTERVAL 60 SECONDS
  SELECT A.k AS k, A.t AS t, A.v AS v
join j = i AS X INNER JOIN e AS C
  ON X.k = C.k AND C.v = 'b' AND C.t BETWEEN X.t AND X.t + INTERVAL 60 SECONDS
  SELECT X.k AS k, X.t AS xt, C.t AS ct
""",
    READ_TWICE_BATCHES,
)
# the stream twice under a union, through two views that filter it otherwise
add(
    "a_stream_twice_under_a_union",
    ONE_STREAM
    + """stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
view a = SELECT E.* FROM e AS E WHERE E.v = 'a'
view b = SELECT E.* FROM e AS E WHERE E.v = 'b'
union u = a UNION ALL b
join j = u AS U INNER JOIN r AS R
  ON U.k = R.k AND U.t BETWEEN R.t - INTERVAL 60 SECONDS AND R.t + INTERVAL 60 SECONDS
  SELECT U.k AS k, U.t AS ut, R.t AS rt
""",
    READ_TWICE_BATCHES,
)

# ------------------------------------------------------------------ the examples


def on_local_spark(text: str) -> str:
    """The spec retargeted to the local Spark (4.3), as tests/runtime does for the examples:
    the runtime emulates the target version, and e.g. numRowsRemoved of outer joins is
    counted differently before 4.3 (ad_attribution targets 4.0)."""
    return "\n".join(
        "spark 4.3" if line.startswith("spark ") else line for line in text.splitlines()
    )


for example in sorted(EXAMPLES.glob("*.sjoin")):
    S.append(
        ParityScenario(
            f"example_{example.stem}",
            on_local_spark(example.read_text(encoding="utf-8")),
            trace=EXAMPLES / f"{example.stem}.trace.jsonl",
        )
    )

SCENARIOS = {s.name: s for s in S}
assert len(SCENARIOS) == len(S), "scenario names must be unique"
