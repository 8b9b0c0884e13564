"""Runtime scenarios, each with the same job written by hand in PySpark.

Every scenario here runs on the runtime; ``record_spark.py`` runs the PySpark jobs on real
Spark (through ``sjoin.jvm.spark_driver``) and stores what Spark reported in
``spark_recorded.json``, which ``test_scenarios.py`` compares the runtime against.  A few
are also compared live (``@pytest.mark.spark``).  The PySpark jobs import pyspark lazily.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .harness import Scenario, ts

KTV = "(k BIGINT, t TIMESTAMP, v STRING)"


def two_streams(delay_l: str | None = "10 seconds", delay_r: str | None = "10 seconds") -> str:
    wl = f" watermark t delay {delay_l}" if delay_l else ""
    wr = f" watermark t delay {delay_r}" if delay_r else ""
    return f"stream l {KTV}{wl}\nstream r {KTV}{wr}\n"


def row(k: Any, seconds: float | None, v: str | None) -> dict[str, Any]:
    return {"k": k, "t": None if seconds is None else ts(seconds), "v": v}


def F() -> Any:
    from pyspark.sql import functions

    return functions


def sides(
    inputs: dict[str, Any], delay_l: str | None = "10 seconds", delay_r: str | None = "10 seconds"
) -> tuple[Any, Any]:
    left, right = inputs["l"], inputs["r"]
    if delay_l:
        left = left.withWatermark("t", delay_l)
    if delay_r:
        right = right.withWatermark("t", delay_r)
    return left.alias("L"), right.alias("R")


def lr_select(df: Any) -> Any:
    f = F()
    return df.select(
        f.col("L.k").alias("lk"),
        f.col("L.t").alias("lt"),
        f.col("L.v").alias("lv"),
        f.col("R.k").alias("rk"),
        f.col("R.t").alias("rt"),
        f.col("R.v").alias("rv"),
    )


LR_SELECT = "SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.k AS rk, R.t AS rt, R.v AS rv"
RANGE = "L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS"


def range_join_job(how: str, condition: str = RANGE, **delays: Any) -> Any:
    def job(inputs: dict[str, Any]) -> Any:
        left, right = sides(inputs, **delays)
        return lr_select(left.join(right, F().expr(condition), how))

    return job


def range_spec(
    how: str, condition: str = RANGE, header: str = "spark 4.3\n", streams: str | None = None
) -> str:
    return (
        header
        + (streams or two_streams())
        + f"join j = l AS L {how} JOIN r AS R ON {condition}\n  {LR_SELECT}\n"
    )


SCENARIOS: list[Scenario] = []


def scenario(s: Scenario) -> Scenario:
    SCENARIOS.append(s)
    return s


# ---------------------------------------------------------------- inner joins

INNER_WORKED = scenario(
    Scenario(
        "inner_worked_example",  # reference §1.10
        range_spec("INNER"),
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"l": [row(1, 85, "c")]},
        ],
        spark_job=range_join_job("inner"),
    )
)

scenario(
    Scenario(
        "inner_new_append_rule",  # reference §1.7: L80 stored then evicted in the same batch
        range_spec("INNER"),
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"l": [row(1, 80, "c")], "r": [row(1, 75, "d"), row(2, 95, "e")]},
            {"l": [row(3, 200, "f")], "r": [row(3, 200, "g")]},
        ],
        spark_job=range_join_job("inner"),
    )
)

scenario(
    Scenario(
        "inner_many_matches_and_duplicates",
        range_spec("INNER"),
        [
            {
                "l": [row(1, 100, "a"), row(1, 100, "a"), row(1, 101, "b"), row(2, 100, "x")],
                "r": [row(1, 100, "c"), row(1, 102, "d"), row(1, 102, "d")],
            },
            {"l": [row(1, 103, "e")], "r": [row(1, 99, "f"), row(2, 94, "y")]},
            {"l": [row(1, 130, "g")], "r": [row(1, 130, "h")]},
        ],
        spark_job=range_join_job("inner"),
    )
)

COMPOSITE = "L.k = R.k AND L.v = R.v AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t"
scenario(
    Scenario(
        "inner_composite_key",
        range_spec("INNER", COMPOSITE),
        [
            {
                "l": [row(1, 100, "a"), row(1, 100, "b"), row(2, 100, "a")],
                "r": [row(1, 102, "a"), row(1, 102, "c"), row(2, 103, "a")],
            },
            {"l": [row(2, 110, "a")], "r": [row(1, 104, "b")]},
        ],
        spark_job=range_join_job("inner", COMPOSITE),
    )
)

STRICT = "L.k = R.k AND L.t > R.t - INTERVAL 5 SECONDS AND L.t < R.t + INTERVAL 10 SECONDS"
scenario(
    Scenario(
        "inner_strict_bounds",  # state watermarks W-5000 / W-10000 exactly (§3.3 row 2)
        range_spec("INNER", STRICT),
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 95, "edge"), row(1, 110, "edge2")]},
            {"l": [row(1, 85, "p"), row(1, 85.001, "q")], "r": [row(1, 80, "s")]},
            {"l": [row(1, 140, "z")], "r": [row(1, 140, "w")]},
        ],
        spark_job=range_join_job("inner", STRICT),
    )
)

scenario(
    Scenario(
        "inner_non_strict_bounds_at_the_edge",  # rows exactly on a bound match (<=, >=)
        range_spec("INNER"),
        [
            {
                "l": [row(1, 100, "a")],
                "r": [row(1, 105, "lo"), row(1, 90, "hi"), row(1, 106, "out")],
            },
            {"l": [row(1, 84.999, "p"), row(1, 85, "q")], "r": [row(1, 79.999, "s")]},
            {"l": [row(1, 150, "y")], "r": [row(1, 150, "z")]},
        ],
        spark_job=range_join_job("inner"),
    )
)

scenario(
    Scenario(
        "late_rows_exactly_at_the_watermark",  # a row at the late watermark is late (<=)
        range_spec("INNER"),
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"l": [row(1, 90, "at"), row(1, 90.001, "after")], "r": [row(1, 90, "at_r")]},
            {"l": [row(2, 120, "c")]},
            {"l": [row(2, 91, "late")], "r": [row(2, 120, "d"), row(2, 110, "at110")]},
        ],
        spark_job=range_join_job("inner"),
    )
)

OR_RANGE = "L.k = R.k AND (L.t >= R.t - INTERVAL 5 SECONDS OR L.v = 'x')"
scenario(
    Scenario(
        "unrecognised_range_never_evicts",  # OR: no state predicate, no no-data batch (§5)
        range_spec("INNER", OR_RANGE),
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"l": [row(1, 200, "c")], "r": [row(1, 300, "d")]},
            {"l": [row(1, 10, "x")], "r": [row(1, 400, "e")]},
        ],
        spark_job=range_join_job("inner", OR_RANGE),
    )
)

TIME_KEY = "L.k = R.k AND L.t = R.t"
scenario(
    Scenario(
        "time_equality_key_eviction",  # key predicate on both sides (§3.1, §3.3 row 16)
        range_spec("INNER", TIME_KEY),
        [
            {"l": [row(1, 100, "a"), row(1, 100, "a2")], "r": [row(1, 100, "b")]},
            {"l": [row(1, 95, "c")], "r": [row(1, 100, "d"), row(1, 95, "e")]},
            {"r": [row(2, 130, "f")]},
        ],
        spark_job=range_join_job("inner", TIME_KEY),
    )
)

PUSHED = RANGE + " AND L.v <> 'skip' AND R.v <> 'skip'"
scenario(
    Scenario(
        "inner_pushed_filters_do_not_advance_watermark",  # §2.3
        range_spec("INNER", PUSHED),
        [
            {"l": [row(1, 100, "a"), row(2, 500, "skip")], "r": [row(1, 100, "b")]},
            {"r": [row(3, 600, "skip")]},
            {"l": [row(1, 200, "c")], "r": [row(1, 200, "d")]},
        ],
        spark_job=range_join_job("inner", PUSHED),
    )
)

scenario(
    Scenario(
        "inner_null_keys_are_filtered",  # inferred isnotnull(k) below the watermark (§1.4)
        range_spec("INNER"),
        [
            {
                "l": [row(None, 500, "nl"), row(1, 100, "a")],
                "r": [row(None, 500, "nr"), row(1, 100, "b")],
            },
            {"l": [row(1, 102, "c")]},
        ],
        spark_job=range_join_job("inner"),
    )
)

# ---------------------------------------------------------------- outer joins

LEFT_OUTER = scenario(
    Scenario(
        "left_outer_worked_example",  # reference §1.8
        range_spec("LEFT OUTER"),
        [
            {"l": [row(1, 100, "a"), row(2, 100, "x")], "r": [row(1, 100, "b")]},
            {"l": [row(3, 130, "y")], "r": [row(3, 130, "z")]},
        ],
        spark_job=range_join_job("left_outer"),
    )
)

scenario(
    Scenario(
        "left_outer_pre_join_filter_emits_at_once",  # §1.5
        range_spec("LEFT OUTER", RANGE + " AND L.v > 'a'"),
        [
            {"l": [row(1, 100, "a"), row(1, 100, "b")], "r": [row(1, 100, "c")]},
            {"l": [row(2, 130, "d")], "r": [row(2, 130, "e")]},
        ],
        spark_job=range_join_job("left_outer", RANGE + " AND L.v > 'a'"),
    )
)

scenario(
    Scenario(
        "left_outer_null_keys",  # left null key stored and emitted on eviction; right one
        range_spec("LEFT OUTER"),  # filtered below the watermark node (§1.4)
        [
            {"l": [row(None, 100, "nl")], "r": [row(None, 100, "nr"), row(1, 100, "b")]},
            {"l": [row(1, 130, "c")], "r": [row(None, 900, "far")]},
            {"l": [row(2, 150, "d")], "r": [row(2, 150, "e")]},
        ],
        spark_job=range_join_job("left_outer"),
    )
)

RIGHT_OUTER = scenario(
    Scenario(
        "right_outer_in_batch_eviction",  # §1.7: R75 stored, evicted, output null-padded
        range_spec("RIGHT OUTER"),
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"r": [row(1, 75, "d")]},
            {"l": [row(5, 130, "p")], "r": [row(5, 131, "q"), row(6, 131, "lonely")]},
        ],
        spark_job=range_join_job("right_outer"),
    )
)

FULL_OUTER = scenario(
    Scenario(
        "full_outer_both_sides_null_padded",
        range_spec("FULL OUTER"),
        [
            {
                "l": [row(1, 100, "a"), row(2, 100, "lonely_l")],
                "r": [row(1, 101, "b"), row(3, 100, "lonely_r")],
            },
            {"l": [row(4, 140, "c")], "r": [row(4, 141, "d")]},
            {"l": [row(5, 200, "e")], "r": [row(6, 200, "f")]},
        ],
        spark_job=range_join_job("full_outer"),
    )
)

scenario(
    Scenario(
        "full_outer_null_keys_match",  # no anyNull check: NULL keys join (§1.4)
        range_spec("FULL OUTER"),
        [
            {"l": [row(None, 100, "nl")], "r": [row(None, 100, "nr")]},
            {"l": [row(1, 150, "a")], "r": [row(1, 150, "b")]},
        ],
        spark_job=range_join_job("full_outer"),
    )
)

POSITIVE_OFFSET = "L.k = R.k AND L.t BETWEEN R.t + INTERVAL 5 SECONDS AND R.t + INTERVAL 20 SECONDS"
scenario(
    Scenario(
        "left_outer_positive_offset",  # §1.7: c stored and evicted in the same batch
        range_spec("LEFT OUTER", POSITIVE_OFFSET),
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"l": [row(2, 92, "c")]},
            {"l": [row(3, 200, "d")], "r": [row(3, 200, "e")]},
        ],
        spark_job=range_join_job("left_outer", POSITIVE_OFFSET),
    )
)

# ---------------------------------------------------------------- semi and anti

SEMI = scenario(
    Scenario(
        "left_semi_each_left_row_once",  # §1.2: 4.2+ order, eager removal
        range_spec("LEFT SEMI", RANGE).replace(LR_SELECT, "SELECT L.k AS lk, L.t AS lt, L.v AS lv"),
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b"), row(1, 101, "c")]},
            {"l": [row(2, 100, "d")]},
            {"r": [row(2, 101, "e"), row(2, 102, "f")]},
            {"l": [row(3, 150, "g")], "r": [row(3, 150, "h")]},
        ],
        spark_job=lambda inputs: (
            lambda lr: (
                lr[0]
                .join(lr[1], F().expr(RANGE), "left_semi")
                .select(
                    F().col("L.k").alias("lk"),
                    F().col("L.t").alias("lt"),
                    F().col("L.v").alias("lv"),
                )
            )
        )(sides(inputs)),
    )
)


def anti_job(inputs: dict[str, Any]) -> Any:
    """Spark has no stream-stream LEFT ANTI: a left outer join keeping the null-padded rows
    (R.k is never NULL on a matched row: the inferred isnotnull(R.k) filter)."""
    left, right = sides(inputs)
    f = F()
    return (
        left.join(right, f.expr(RANGE), "left_outer")
        .where(f.col("R.k").isNull())
        .select(f.col("L.k").alias("k"), f.col("L.t").alias("t"), f.col("L.v").alias("v"))
    )


scenario(
    Scenario(
        "left_anti_unmatched_left_rows",
        "spark 4.3\n" + two_streams() + f"join j = l AS L LEFT ANTI JOIN r AS R ON {RANGE}\n",
        [
            {"l": [row(1, 100, "a"), row(2, 100, "x")], "r": [row(1, 100, "b")]},
            {"l": [row(3, 130, "y")], "r": [row(4, 130, "z")]},
            {"l": [row(5, 160, "w")]},
        ],
        spark_job=anti_job,
    )
)

# ---------------------------------------------------------------- watermarks

scenario(
    Scenario(
        "min_policy_waits_for_slow_stream",  # §4.1 example
        range_spec("INNER"),
        [
            {"l": [row(1, 100, "a")]},
            {"r": [row(1, 200, "b")]},
            {"l": [row(1, 300, "c")]},
        ],
        spark_job=range_join_job("inner"),
    )
)


def max_policy_job(inputs: dict[str, Any]) -> Any:
    return range_join_job("inner")(inputs)


MAX_POLICY = scenario(
    Scenario(
        "max_policy_follows_fast_stream",
        range_spec("INNER", header="spark 4.3\nset multiple_watermark_policy = max\n"),
        [
            {"l": [row(1, 100, "a")]},
            {"r": [row(1, 95, "b"), row(2, 150, "c")]},
            {"l": [row(2, 160, "d"), row(3, 300, "e")]},
        ],
        spark_job=max_policy_job,
    )
)

WINDOW_SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND window(L.t, INTERVAL 10 SECONDS) = window(R.t, INTERVAL 10 SECONDS)
  SELECT L.k AS k, window(L.t, INTERVAL 10 SECONDS) AS w, L.v AS lv, R.v AS rv
"""


def window_job(inputs: dict[str, Any]) -> Any:
    f = F()
    left = (
        inputs["l"]
        .withWatermark("t", "5 seconds")
        .withColumn("w", f.window("t", "10 seconds"))
        .drop("t")
        .alias("L")
    )
    right = (
        inputs["r"]
        .withWatermark("t", "5 seconds")
        .withColumn("w", f.window("t", "10 seconds"))
        .drop("t")
        .alias("R")
    )
    return left.join(right, f.expr("L.k = R.k AND L.w = R.w"), "inner").select(
        f.col("L.k").alias("k"),
        f.col("L.w").alias("w"),
        f.col("L.v").alias("lv"),
        f.col("R.v").alias("rv"),
    )


scenario(
    Scenario(
        "window_key_join",  # key eviction on window.end (§3.3 row 17)
        WINDOW_SPEC,
        [
            {
                "l": [row(1, 101, "a"), row(1, 109.5, "b")],
                "r": [row(1, 105, "c"), row(1, 111, "d")],
            },
            {"l": [row(1, 112, "e")], "r": [row(1, 104, "late?")]},
            {"l": [row(1, 130, "f")], "r": [row(1, 131, "g")]},
        ],
        spark_job=window_job,
    )
)

NO_DATA_OFF = scenario(
    Scenario(
        "no_data_batches_disabled",  # §1.3 example setup: W moves only with data batches
        range_spec("LEFT OUTER", header="spark 4.3\nset no_data_micro_batches = false\n"),
        [
            {"l": [row(1, 100, "a"), row(2, 100, "x")], "r": [row(1, 100, "b")]},
            {"l": [row(1, 80, "c")], "r": [row(1, 75, "d")]},
            {"l": [row(3, 200, "e")]},
            {"r": [row(3, 201, "f")]},
        ],
        spark_job=range_join_job("left_outer"),
    )
)

# ---------------------------------------------------------------- chains

CHAIN_SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS t, L.v AS lv, R.v AS rv
aggregate counts = j AS J
  GROUP BY window(J.t, INTERVAL 10 SECONDS)
  SELECT window(J.t, INTERVAL 10 SECONDS) AS w, count(*) AS n, max(J.lv) AS top
  OUTPUT MODE append
"""


def chain_job(inputs: dict[str, Any]) -> Any:
    f = F()
    left, right = sides(inputs)
    joined = left.join(right, f.expr(RANGE), "inner").select(
        f.col("L.k").alias("k"),
        f.col("L.t").alias("t"),
        f.col("L.v").alias("lv"),
        f.col("R.v").alias("rv"),
    )
    return joined.groupBy(f.window("t", "10 seconds").alias("w")).agg(
        f.count(f.lit(1)).alias("n"), f.max("lv").alias("top")
    )


CHAIN = scenario(
    Scenario(
        "join_then_window_aggregate_append",  # §4.3: the aggregate evicts at the join's
        CHAIN_SPEC,  # output watermark min(state wms, input)
        [
            {"l": [row(1, 100, "a"), row(1, 103, "b")], "r": [row(1, 100, "c")]},
            {"l": [row(2, 130, "d")], "r": [row(2, 131, "e")]},
            {"l": [row(3, 160, "f")], "r": [row(3, 160, "g")]},
        ],
        relation="counts",
        spark_job=chain_job,
    )
)

UPDATE_SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS t, L.v AS lv, R.v AS rv
aggregate per_key = j AS J
  GROUP BY J.k
  SELECT J.k AS k, count(*) AS n, sum(J.k) AS total
  OUTPUT MODE update
"""


def update_job(inputs: dict[str, Any]) -> Any:
    f = F()
    left, right = sides(inputs)
    joined = left.join(right, f.expr(RANGE), "inner").select(
        f.col("L.k").alias("k"),
        f.col("L.t").alias("t"),
        f.col("L.v").alias("lv"),
        f.col("R.v").alias("rv"),
    )
    return joined.groupBy("k").agg(f.count(f.lit(1)).alias("n"), f.sum("k").alias("total"))


scenario(
    Scenario(
        "inner_join_then_update_aggregate",  # 4.2+: inner join followed by Update mode
        UPDATE_SPEC,
        [
            {"l": [row(1, 100, "a"), row(2, 100, "b")], "r": [row(1, 100, "c"), row(2, 101, "d")]},
            {"l": [row(1, 105, "e")], "r": [row(1, 106, "f")]},
            {"l": [row(3, 200, "g")], "r": [row(3, 200, "h")]},
        ],
        relation="per_key",
        spark_job=update_job,
        output_mode="update",
    )
)

THREE_WAY_SPEC = """spark 4.3
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join ab = a AS A LEFT OUTER JOIN b AS B
  ON A.k = B.k AND B.t BETWEEN A.t AND A.t + INTERVAL 5 SECONDS
  SELECT A.k AS k, A.t AS t, A.v AS av, B.v AS bv
join abc = ab AS X INNER JOIN c AS C
  ON X.k = C.k AND C.t BETWEEN X.t AND X.t + INTERVAL 20 SECONDS
  SELECT X.k AS k, X.av AS av, X.bv AS bv, C.v AS cv
"""


def three_way_job(inputs: dict[str, Any]) -> Any:
    f = F()
    a = inputs["a"].withWatermark("t", "10 seconds").alias("A")
    b = inputs["b"].withWatermark("t", "10 seconds").alias("B")
    c = inputs["c"].withWatermark("t", "10 seconds").alias("C")
    ab = (
        a.join(
            b, f.expr("A.k = B.k AND B.t BETWEEN A.t AND A.t + INTERVAL 5 SECONDS"), "left_outer"
        )
        .select(
            f.col("A.k").alias("k"),
            f.col("A.t").alias("t"),
            f.col("A.v").alias("av"),
            f.col("B.v").alias("bv"),
        )
        .alias("X")
    )
    return ab.join(
        c, f.expr("X.k = C.k AND C.t BETWEEN X.t AND X.t + INTERVAL 20 SECONDS"), "inner"
    ).select(
        f.col("X.k").alias("k"),
        f.col("X.av").alias("av"),
        f.col("X.bv").alias("bv"),
        f.col("C.v").alias("cv"),
    )


scenario(
    Scenario(
        "left_outer_then_inner_chain",  # 3.5+ propagation: outer nulls feed the next join
        THREE_WAY_SPEC,
        [
            {
                "a": [row(1, 100, "a1"), row(2, 100, "a2")],
                "b": [row(1, 102, "b1")],
                "c": [row(1, 110, "c1"), row(2, 115, "c2")],
            },
            {"a": [row(3, 140, "a3")], "b": [row(3, 141, "b3")], "c": [row(3, 150, "c3")]},
            {"a": [row(4, 200, "a4")], "b": [row(4, 200, "b4")], "c": [row(4, 200, "c4")]},
        ],
        relation="abc",
        spark_job=three_way_job,
    )
)


def by_name(name: str) -> Scenario:
    return next(s for s in SCENARIOS if s.name == name)


# ---------------------------------------------------------------- aggregates over a stream

AGG_STREAM = "stream s (k BIGINT, t TIMESTAMP, x DOUBLE) watermark t delay 10 seconds\n"


def srow(k: Any, seconds: float, x: float | None) -> dict[str, Any]:
    return {"k": k, "t": ts(seconds), "x": x}


def sliding_job(inputs: dict[str, Any]) -> Any:
    f = F()
    s = inputs["s"].withWatermark("t", "10 seconds")
    return s.groupBy(f.window("t", "10 seconds", "5 seconds").alias("w")).agg(
        f.count(f.lit(1)).alias("n"),
        f.sum("x").alias("total"),
        f.avg("x").alias("mean"),
        f.min("x").alias("lo"),
        f.max("k").alias("top"),
        f.approx_count_distinct("k").alias("keys"),
    )


scenario(
    Scenario(
        "sliding_window_aggregate_append",  # a row falls in two windows; late groups dropped
        "spark 4.3\n"
        + AGG_STREAM
        + """aggregate a = s AS S
  GROUP BY window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS)
  SELECT window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS) AS w, count(*) AS n,
         sum(S.x) AS total, avg(S.x) AS mean, min(S.x) AS lo, max(S.k) AS top,
         approx_count_distinct(S.k) AS keys
  OUTPUT MODE append
""",
        [
            {"s": [srow(1, 101, 1.0), srow(2, 104, 2.0), srow(1, 107, None)]},
            {"s": [srow(3, 121, 4.0)]},
            {"s": [srow(4, 103, 8.0), srow(5, 113, 16.0)]},
            {"s": [srow(6, 160, 32.0)]},
        ],
        spark_job=sliding_job,
    )
)


def update_stream_job(inputs: dict[str, Any]) -> Any:
    f = F()
    s = inputs["s"].withWatermark("t", "10 seconds")
    return s.groupBy(f.window("t", "10 seconds").alias("w"), "k").agg(
        f.count("x").alias("n"), f.sum("x").alias("total")
    )


scenario(
    Scenario(
        "window_aggregate_update_and_late_rows",
        "spark 4.3\n"
        + AGG_STREAM
        + """aggregate a = s AS S
  GROUP BY window(S.t, INTERVAL 10 SECONDS), S.k
  SELECT window(S.t, INTERVAL 10 SECONDS) AS w, S.k AS k, count(S.x) AS n, sum(S.x) AS total
  OUTPUT MODE update
""",
        [
            {"s": [srow(1, 101, 1.0), srow(1, 102, 2.0), srow(2, 105, None)]},
            {"s": [srow(1, 103, 4.0), srow(1, 125, 8.0)]},
            {"s": [srow(1, 109, 16.0), srow(1, 126, 32.0)]},
        ],
        spark_job=update_stream_job,
        output_mode="update",
    )
)


def complete_job(inputs: dict[str, Any]) -> Any:
    f = F()
    s = inputs["s"].withWatermark("t", "10 seconds")
    return s.groupBy("k").agg(f.count(f.lit(1)).alias("n"), f.max("t").alias("last"))


scenario(
    Scenario(
        "aggregate_complete_mode",
        "spark 4.3\n"
        + AGG_STREAM
        + """aggregate a = s AS S
  GROUP BY S.k
  SELECT S.k AS k, count(*) AS n, max(S.t) AS last
  OUTPUT MODE complete
""",
        [
            {"s": [srow(1, 101, 1.0), srow(2, 102, 2.0)]},
            {"s": [srow(1, 50, 4.0)]},
            {"s": [srow(3, 300, 8.0)]},
        ],
        spark_job=complete_job,
        output_mode="complete",
    )
)


# ---------------------------------------------------------------- the examples and their traces

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def batches_from_trace(path: Path) -> list[dict[str, list[dict[str, Any]]]]:
    """A trace file as the list of scenario batches (its batch values are 0, 1, 2, ...)."""
    batches: list[dict[str, list[dict[str, Any]]]] = []
    for text in path.read_text().splitlines():
        record = json.loads(text)
        while len(batches) <= record["batch"]:
            batches.append({})
        batches[record["batch"]].setdefault(record["stream"], []).append(record["row"])
    return batches


def example_spec(name: str) -> str:
    """The example spec, targeting the Spark the recordings come from (4.3)."""
    text = (EXAMPLES / f"{name}.sjoin").read_text()
    return "\n".join(
        "spark 4.3" if line.startswith("spark ") else line for line in text.splitlines()
    )


def ad_attribution_job(inputs: dict[str, Any]) -> Any:
    f = F()
    i = inputs["impressions"].withWatermark("impression_time", "2 hours").alias("i")
    c = inputs["clicks"].withWatermark("click_time", "3 hours").alias("c")
    condition = (
        "i.ad_id = c.ad_id AND c.click_time BETWEEN i.impression_time AND "
        "i.impression_time + INTERVAL 1 HOUR AND i.campaign <> 'internal'"
    )
    return i.join(c, f.expr(condition), "left_outer").select(
        "i.ad_id", "i.impression_time", "i.campaign", "c.click_time", "c.user_id"
    )


def checkout_funnel_job(inputs: dict[str, Any]) -> Any:
    f = F()
    i = inputs["impressions"].withWatermark("impression_time", "10 minutes").alias("i")
    c = inputs["clicks"].withWatermark("click_time", "10 minutes").alias("c")
    p = inputs["purchases"].withWatermark("purchase_time", "10 minutes").alias("p")
    clicked = (
        i.join(
            c,
            f.expr(
                "i.ad_id = c.ad_id AND c.click_time >= i.impression_time "
                "AND c.click_time <= i.impression_time + INTERVAL 10 MINUTES"
            ),
            "inner",
        )
        .select("i.campaign", "c.click_id", "c.click_time")
        .alias("k")
    )
    converted = clicked.join(
        p,
        f.expr(
            "k.click_id = p.click_id AND p.purchase_time >= k.click_time "
            "AND p.purchase_time <= k.click_time + INTERVAL 30 MINUTES"
        ),
        "inner",
    ).select("k.campaign", "p.amount", "p.purchase_time")
    return converted.groupBy(
        f.col("campaign"), f.window("purchase_time", "10 minutes").alias("purchase_window")
    ).agg(f.count(f.lit(1)).alias("purchases"), f.sum("amount").alias("revenue"))


def iot_window_join_job(inputs: dict[str, Any]) -> Any:
    f = F()

    def side(name: str, alias: str) -> Any:
        return (
            inputs[name]
            .withWatermark("reading_time", "5 seconds")
            .withColumn("w", f.window("reading_time", "10 seconds"))
            .drop("reading_time")
            .alias(alias)
        )

    t, h = side("temperature", "t"), side("humidity", "h")
    return t.join(h, f.expr("t.device_id = h.device_id AND t.w = h.w"), "inner").select(
        f.col("t.device_id").alias("device_id"),
        f.col("t.w").alias("reading_window"),
        "t.celsius",
        "h.percent",
    )


def ride_matching_job(inputs: dict[str, Any]) -> Any:
    f = F()
    r = inputs["requests"].withWatermark("request_time", "30 seconds").alias("r")
    o = inputs["offers"].withWatermark("offer_time", "30 seconds").alias("o")
    condition = (
        "r.request_id = o.request_id AND r.zone = o.zone AND o.offer_time >= r.request_time "
        "AND o.offer_time < r.request_time + INTERVAL 2 MINUTES"
    )
    return r.join(o, f.expr(condition), "full_outer").select(
        f.col("r.zone").alias("r_zone"),
        f.col("r.request_id").alias("r_request_id"),
        "r.rider_id",
        "r.request_time",
        f.col("o.zone").alias("o_zone"),
        f.col("o.request_id").alias("o_request_id"),
        "o.driver_id",
        "o.offer_time",
    )


def unpaid_orders_job(inputs: dict[str, Any]) -> Any:
    f = F()
    o = inputs["orders"].withWatermark("order_time", "1 minute").alias("o")
    p = inputs["payments"].withWatermark("payment_time", "1 minute").alias("p")
    condition = (
        "o.order_id = p.order_id AND p.payment_time >= o.order_time "
        "AND p.payment_time <= o.order_time + INTERVAL 15 MINUTES"
    )
    return (
        o.join(p, f.expr(condition), "left_outer")
        .where(f.col("p.order_id").isNull())
        .select("o.order_id", "o.customer_id", "o.amount", "o.order_time")
    )


for _name, _job, _relation in (
    ("ad_attribution", ad_attribution_job, None),
    ("checkout_funnel", checkout_funnel_job, "revenue"),
    ("iot_window_join", iot_window_join_job, None),
    ("ride_matching", ride_matching_job, None),
    ("unpaid_orders", unpaid_orders_job, None),
):
    scenario(
        Scenario(
            f"example_{_name}",
            example_spec(_name),
            batches_from_trace(EXAMPLES / f"{_name}.trace.jsonl"),
            relation=_relation,
            spark_job=_job,
        )
    )


# ---------------------------------------------------------------- more edges

scenario(
    Scenario(
        "null_event_times",  # NULL reads as 0 ms at the watermark node; a preserved row with
        range_spec("LEFT OUTER"),  # a NULL time is stored but never evicted
        [
            {
                "l": [row(1, None, "nt"), row(1, 100, "a")],
                "r": [row(1, None, "rnt"), row(1, 100, "b")],
            },
            {"l": [row(2, 150, "c")], "r": [row(2, 150, "d")]},
            {"l": [row(3, 200, "e")], "r": [row(3, 200, "f")]},
        ],
        spark_job=range_join_job("left_outer"),
    )
)

TIME_FILTER = RANGE + " AND L.t > TIMESTAMP '1970-01-01 00:01:00' AND R.v <> 'skip'"
scenario(
    Scenario(
        "time_filter_stays_above_the_watermark_node",  # §2.3: L.t > ... is not pushed below
        range_spec("INNER", TIME_FILTER),
        [
            {"l": [row(1, 50, "early"), row(1, 100, "a")], "r": [row(1, 100, "b")]},
            {"l": [row(2, 30, "early2")], "r": [row(2, 300, "skip")]},
            {"l": [row(3, 200, "c")], "r": [row(3, 200, "d")]},
        ],
        spark_job=range_join_job("inner", TIME_FILTER),
    )
)

OUTER_AGG_SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L LEFT OUTER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS t, R.v AS rv
aggregate per_window = j AS J GROUP BY window(J.t, INTERVAL 20 SECONDS)
  SELECT window(J.t, INTERVAL 20 SECONDS) AS w, count(*) AS n, count(J.rv) AS matched
  OUTPUT MODE append
"""


def outer_agg_job(inputs: dict[str, Any]) -> Any:
    f = F()
    left, right = sides(inputs)
    joined = left.join(right, f.expr(RANGE), "left_outer").select(
        f.col("L.k").alias("k"), f.col("L.t").alias("t"), f.col("R.v").alias("rv")
    )
    return joined.groupBy(f.window("t", "20 seconds").alias("w")).agg(
        f.count(f.lit(1)).alias("n"), f.count("rv").alias("matched")
    )


scenario(
    Scenario(
        "left_outer_then_window_aggregate",  # null-padded rows reach the aggregate late
        OUTER_AGG_SPEC,  # and are counted (3.5+ propagation: the aggregate waits)
        [
            {"l": [row(1, 100, "a"), row(2, 101, "x")], "r": [row(1, 100, "b")]},
            {"l": [row(3, 130, "y")], "r": [row(3, 131, "z")]},
            {"l": [row(4, 170, "p")], "r": [row(4, 170, "q")]},
            {"l": [row(5, 230, "s")], "r": [row(5, 230, "u")]},
        ],
        relation="per_window",
        spark_job=outer_agg_job,
    )
)

SLIDING_SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k
  AND window(L.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS)
    = window(R.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS)
  SELECT L.k AS k, window(L.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS) AS w,
         L.v AS lv, R.v AS rv
"""


def sliding_window_job(inputs: dict[str, Any]) -> Any:
    f = F()

    def side(name: str, alias: str) -> Any:
        return (
            inputs[name]
            .withWatermark("t", "5 seconds")
            .withColumn("w", f.window("t", "10 seconds", "5 seconds"))
            .drop("t")
            .alias(alias)
        )

    left, right = side("l", "L"), side("r", "R")
    return left.join(right, f.expr("L.k = R.k AND L.w = R.w"), "inner").select(
        f.col("L.k").alias("k"),
        f.col("L.w").alias("w"),
        f.col("L.v").alias("lv"),
        f.col("R.v").alias("rv"),
    )


scenario(
    Scenario(
        "sliding_window_key_join",  # each row is in two windows: one state row per window
        SLIDING_SPEC,
        [
            {"l": [row(1, 101, "a"), row(1, 107, "b")], "r": [row(1, 104, "c"), row(1, 112, "d")]},
            {"l": [row(1, 113, "e")], "r": [row(1, 103, "late?")]},
            {"l": [row(1, 140, "f")], "r": [row(1, 141, "g")]},
        ],
        spark_job=sliding_window_job,
    )
)


def window_in_select_job(inputs: dict[str, Any]) -> Any:
    f = F()
    left, right = sides(inputs)
    return left.join(right, f.expr(RANGE), "right_outer").select(
        f.window("L.t", "10 seconds").alias("w"), f.col("R.v").alias("rv")
    )


scenario(
    Scenario(
        "window_in_select_drops_null_time_rows",  # TimeWindowing adds isnotnull(L.t) above
        range_spec(  # E030, accepted on purpose
            "RIGHT OUTER", header="spark 4.3\nset allow_unemitted_outer_rows = true\n"
        ).replace(
            LR_SELECT, "SELECT window(L.t, INTERVAL 10 SECONDS) AS w, R.v AS rv"
        ),  # the join runs as INNER (EliminateOuterJoin): lonely vanishes
        [
            {"l": [row(1, 100, "a")], "r": [row(1, 100, "b"), row(2, 100, "lonely")]},
            {"l": [row(3, 150, "c")], "r": [row(3, 150, "d")]},
        ],
        spark_job=window_in_select_job,
    )
)
