"""Catalogue cases (``tests/compiler/planning/cases.py``) against real local Spark 4.3.0.

Each case with a ``SparkCheck`` is rebuilt in PySpark: two MemoryStream inputs through
``StreamDriver``, ``withWatermark("t", delay)``, ``.join(other, F.expr(condition), how)``
(window keys projected as a column on each side, the raw time dropped or re-aliased
without watermark metadata, reference §11). One row per side goes in, then Spark's no-data
batch or an empty batch makes the eviction watermark 90 000 ms (delays of 10 s). From the
executed plan (``parse_join_plan``) it compares, for each side:

* ``state cleanup``: ``None`` <-> ``never``, else the kind and ``value_ms - W`` <->
  the planner's ``offset_ms`` (and both against the catalogue's expectation, whose
  ``source`` says "run: Spark 4.3.0");
* the condition split: ``leftOnly``/``rightOnly`` <-> the sides' ``pre_join_filter``,
  ``both`` present <-> ``post_join_filter`` present; and the equi-join keys.

Cases that Spark rejects assert the error (when PySpark builds the join, at ``start()`` for
the streaming checks, or at the first batch for planning errors) and that the planner
reports the case's error code.
Pipelines and the LEFT ANTI rewrite have their own builders below.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.jvm.spark_driver import StreamDriver, parse_join_plan, split_top_level

from ...compiler.planning.cases import (
    BY_ID,
    CASES,
    SPARK_DDL,
    Case,
    SparkCheck,
    State,
    TwoStreamJoin,
)

pytestmark = pytest.mark.spark

SPARK_CASES = [c for c in CASES if c.spark is not None]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TIME_BUDGET_S = 180
TIMER: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def _timer() -> None:
    """Start the clock at this module's first test (the Spark session may already run)."""
    TIMER.setdefault("start", time.monotonic())


# --------------------------------------------------------------------------- helpers


def iso(seconds: int) -> str:
    return (EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def row(seconds: int, k: int = 1) -> dict[str, Any]:
    return {"k": k, "t": iso(seconds), "t2": iso(seconds), "v": "m", "n": seconds}


def norm(sql: str | None) -> str | None:
    """Spark's printed and sjoin's Spark SQL text, comparable: no expression ids, no
    watermark delays, no qualifiers, case, blanks, quotes or parentheses."""
    if sql is None:
        return None
    text = sql.lower()
    text = re.sub(r"cast\('([^']*)' as timestamp\)|timestamp\s*'([^']*)'", r"\1\2", text)
    text = re.sub(r"interval\s*'(-?)0*(\d+)'\s*([a-z]+?)s?\b", r"interval \1\2 \3", text)
    text = re.sub(r"interval\s*(\d+)\s*([a-z]+?)s?\b", r"interval \1 \2", text)
    text = re.sub(r"#\d+l?", "", text)
    text = re.sub(r"-t\d+ms", "", text)
    text = re.sub(r"\b[a-z_][a-z0-9_]*\.(?=[a-z_`])", "", text)
    return re.sub(r"[\s'\"`()]", "", text)


def spark_keys(plan: str) -> list[list[tuple[str | None, str | None]]]:
    """The equi-join key pairs of each StreamingSymmetricHashJoin node, normalized."""
    found = []
    for line in plan.splitlines():
        start = line.find("StreamingSymmetricHashJoin ")
        if start < 0:
            continue
        head = line[start + len("StreamingSymmetricHashJoin ") : line.index(", condition = [")]
        left, right = split_top_level(head)[:2]
        lefts = split_top_level(left.strip()[1:-1])
        rights = split_top_level(right.strip()[1:-1])
        found.append([(norm(a), norm(b)) for a, b in zip(lefts, rights, strict=True)])
    return found


def planner(case: Case) -> tuple[set[str], dict[str, Any]]:
    result = check_text(case.spec, f"{case.id}.sjoin")
    assert result.plan is not None, [d.message for d in result.diagnostics]
    return {d.code for d in result.diagnostics}, result.plan_json()


def spark_state(cleanup: dict[str, Any] | None, eviction_ms: int) -> tuple[str, int | None]:
    if cleanup is None:
        return ("never", None)
    return (cleanup["kind"], cleanup["value_ms"] - eviction_ms)


def planner_state(state: dict[str, Any]) -> tuple[str, int | None]:
    return (state["eviction"], state.get("offset_ms"))


def expected_state(state: State) -> tuple[str, int | None]:
    return (state.eviction, state.offset_ms)


def compare_join(case: Case, node: dict[str, Any], join: dict[str, Any], index: int = 0) -> None:
    """Spark's join node against the catalogue expectation and the planner's join."""
    evict = node["eviction_watermark_ms"]
    want = case.joins[index] if index < len(case.joins) else None
    for side in ("left", "right"):
        seen = spark_state(node["state_cleanup"][side], evict)
        if want is not None and getattr(want, side) is not None:
            assert seen == expected_state(getattr(want, side)), (
                f"{side}: Spark {seen} (W={evict}), catalogue {getattr(want, side)}: "
                "the catalogue is wrong"
            )
        predicted = planner_state(join["state"][side])
        assert predicted == seen, f"{side} state: planner {predicted}, Spark {seen} (W={evict})"


def compare_split(node: dict[str, Any], join: dict[str, Any]) -> None:
    cond = node["condition"]
    for side, label in (("left", "leftOnly"), ("right", "rightOnly")):
        predicted = join["sides"][side]["pre_join_filter"]
        assert norm(predicted) == norm(cond[label]), (
            f"{label}: planner {predicted!r}, Spark {cond[label]!r}"
        )
    assert (join["post_join_filter"] is None) == (cond["both"] is None), (
        f"both: planner {join['post_join_filter']!r}, Spark {cond['both']!r}"
    )


def assert_rejected_by_planner(case: Case, codes: set[str]) -> None:
    errors = {c for c in case.codes if c.startswith("E")}
    assert errors, f"{case.id}: a case Spark rejects must expect an error code"
    assert errors <= codes, f"planner reports {sorted(codes)}, expected {sorted(errors)}"


def assert_spark_error(err: BaseException, check: SparkCheck) -> None:
    assert check.error is not None
    names = {type(err).__name__, *(k.__name__ for k in type(err).__mro__)}
    assert names & {"AnalysisException", "StreamingQueryException", "CapturedException"}, names
    assert check.error in str(err), str(err)[:500]


@contextmanager
def session_conf(spark: Any, conf: tuple[tuple[str, str], ...]) -> Iterator[None]:
    saved = {name: spark.conf.get(name, None) for name, _ in conf}
    for name, val in conf:
        spark.conf.set(name, val)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, old)


def join_inputs(inputs: dict[str, Any], shape: TwoStreamJoin, check: SparkCheck) -> tuple[Any, Any]:
    """Both join inputs: watermark, optional window column, alias."""
    from pyspark.sql import functions as F

    sides = []
    for name, delay, alias in (
        ("left", shape.left_delay, shape.left_alias),
        ("right", shape.right_delay, shape.right_alias),
    ):
        df = inputs[name]
        if delay:
            df = df.withWatermark("t", delay)
        if check.window:
            df = df.withColumn("w", F.window("t", check.window))
            if check.raw_time == "drop":
                df = df.drop("t")
            else:
                df = df.withColumn("t", F.col("t").alias("t", metadata={}))
        sides.append(df.alias(alias))
    return sides[0], sides[1]


def output(left: Any, right: Any, shape: TwoStreamJoin, how: str) -> list[Any]:
    """The spec's SELECT (default: every column of both sides, semi/anti: the left's)."""
    from pyspark.sql import functions as F

    if shape.select:
        return [F.expr(item) for item in shape.select]
    cols = [F.col(f"{shape.left_alias}.{c}").alias(f"{shape.left_alias}_{c}") for c in left.columns]
    if how not in ("left_semi", "left_anti"):
        cols += [
            F.col(f"{shape.right_alias}.{c}").alias(f"{shape.right_alias}_{c}")
            for c in right.columns
        ]
    return cols


def last_joins(driver: StreamDriver) -> tuple[list[dict[str, Any]], str]:
    plan = driver.executed_plan()
    return parse_join_plan(plan), plan


def feed_until_watermark(driver: StreamDriver, check: SparkCheck, inputs: tuple[str, ...]) -> None:
    """One row per input, then an empty batch unless a no-data batch already ran at W."""
    rows = {"left": [row(check.times[0])], "right": [row(check.times[1])]}
    driver.feed({name: rows.get(name, [row(check.times[0])]) for name in inputs})
    nodes, _ = last_joins(driver)
    cleanup = nodes[-1]["state_cleanup"]
    if cleanup["left"] is None and cleanup["right"] is None:
        return  # no predicate at W = 0 means none at any W: no need for another batch
    if nodes[-1]["eviction_watermark_ms"] != check.eviction_ms:
        driver.feed({inputs[0]: []})


# --------------------------------------------------------------------------- generic cases


def run_generic(spark: Any, case: Case) -> None:
    from pyspark.sql import functions as F

    shape, check = case.shape, case.spark
    assert shape is not None and check is not None
    codes, plan_json = planner(case)
    with (
        session_conf(spark, check.conf),
        StreamDriver(spark, {"left": SPARK_DDL, "right": SPARK_DDL}) as driver,
    ):
        left, right = join_inputs(driver.inputs, shape, check)
        condition = check.condition or shape.on
        if check.error and check.error_at == "build":
            with pytest.raises(Exception) as err:
                left.join(right, F.expr(condition), shape.how)
            assert_spark_error(err.value, check)
            assert_rejected_by_planner(case, codes)
            return
        joined = left.join(right, F.expr(condition), shape.how)
        query = joined.select(*output(left, right, shape, shape.how))
        if check.error and check.error_at == "start":
            with pytest.raises(Exception) as err:
                driver.start(query)
            assert_spark_error(err.value, check)
            assert_rejected_by_planner(case, codes)
            return
        driver.start(query)
        if check.error:
            with pytest.raises(Exception) as err:
                feed_until_watermark(driver, check, ("left", "right"))
            assert_spark_error(err.value, check)
            assert_rejected_by_planner(case, codes)
            return
        feed_until_watermark(driver, check, ("left", "right"))
        (node,), plan = last_joins(driver)
    assert not {c for c in codes if c.startswith("E")}, f"Spark runs it; planner: {sorted(codes)}"
    if node["state_cleanup"]["left"] or node["state_cleanup"]["right"]:
        assert node["eviction_watermark_ms"] == check.eviction_ms
    join = plan_json["joins"][0]
    compare_join(case, node, join)
    compare_split(node, join)
    (keys,) = spark_keys(plan)
    if check.window:
        assert len(keys) == len(join["keys"])
    else:
        assert keys == [(norm(a), norm(b)) for a, b in join["keys"]], (
            f"keys: planner {join['keys']}, Spark {keys}"
        )


# --------------------------------------------------------------------------- custom builders

THREE = {"left": SPARK_DDL, "right": SPARK_DDL, "third": SPARK_DDL}


def watermarked(driver: StreamDriver, name: str, alias: str) -> Any:
    return driver.inputs[name].withWatermark("t", "10 seconds").alias(alias)


def interval_join(driver: StreamDriver, how: str) -> Any:
    """``join j`` of the pipeline cases: L ⋈ R on k and R.t within a minute after L.t."""
    from pyspark.sql import functions as F

    cond = "L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 1 MINUTE"
    joined = watermarked(driver, "left", "L").join(
        watermarked(driver, "right", "R"), F.expr(cond), how
    )
    return joined.select(F.col("L.k").alias("k"), F.col("L.t").alias("t"))


def window_agg(how: str) -> Callable[[Any, Case], None]:
    def run(spark: Any, case: Case) -> None:
        from pyspark.sql import functions as F

        codes, plan_json = planner(case)
        with StreamDriver(spark, {"left": SPARK_DDL, "right": SPARK_DDL}) as driver:
            counts = interval_join(driver, how).groupBy(F.window("t", "10 seconds")).count()
            driver.start(counts.select(F.col("window.end").alias("end"), "count"))
            feed_until_watermark(driver, case.spark or SparkCheck(), ("left", "right"))
            (node,), _ = last_joins(driver)
        assert not {c for c in codes if c.startswith("E")}, sorted(codes)
        assert node["eviction_watermark_ms"] == 90_000
        compare_join(case, node, plan_json["joins"][0])

    return run


def update_agg(how: str) -> Callable[[Any, Case], None]:
    def run(spark: Any, case: Case) -> None:
        codes, _ = planner(case)
        check = case.spark
        assert check is not None
        with StreamDriver(spark, {"left": SPARK_DDL, "right": SPARK_DDL}) as driver:
            counts = interval_join(driver, how).groupBy("k").count()
            if check.error:
                with pytest.raises(Exception) as err:
                    driver.start(counts, output_mode="update")
                assert_spark_error(err.value, check)
                assert_rejected_by_planner(case, codes)
                return
            driver.start(counts, output_mode="update")
            driver.feed({"left": [row(100)], "right": [row(100)]})
            results = driver.results()
        assert not {c for c in codes if c.startswith("E")}, sorted(codes)
        assert [r["count"] for b in results for r in b.rows] == [1]

    return run


def two_time_columns(pruned: bool, single: bool = False) -> Callable[[Any, Case], None]:
    """§7.2 row 5: the first join keeps L.t and R.t, both watermarked. If the second join's
    output needs both (the spec's default SELECT), its input has two event-time columns:
    MULTIPLE_EVENT_TIME_COLUMNS at the first batch. If it does not use J.rt, Spark prunes
    the column below the join and the query runs; with allowMultiple=false (``single``) it
    runs too, every operator using the one global watermark."""

    def run(spark: Any, case: Case) -> None:
        from pyspark.sql import functions as F

        codes, plan_json = planner(case)
        check = case.spark
        assert check is not None
        with session_conf(spark, check.conf), StreamDriver(spark, THREE) as driver:
            cond = "L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 1 MINUTE"
            first = watermarked(driver, "left", "L").join(
                watermarked(driver, "right", "R"), F.expr(cond)
            )
            first = first.select(
                F.col("L.k").alias("k"), F.col("L.t").alias("lt"), F.col("R.t").alias("rt")
            ).alias("J")
            third = watermarked(driver, "third", "X")
            second = first.join(
                third, F.expr("J.k = X.k AND X.t BETWEEN J.lt AND J.lt + INTERVAL 1 MINUTE")
            )
            if pruned:  # SELECT J.k, J.lt, X.v
                cols = [F.col("J.k"), F.col("J.lt"), F.col("X.v")]
            else:  # the default output: every column, J_k / X_k for the shared name
                cols = [F.col("J.k").alias("J_k"), F.col("J.lt"), F.col("J.rt")]
                cols += [F.col(f"X.{c}").alias("X_k" if c == "k" else c) for c in third.columns]
            driver.start(second.select(*cols))  # analysis passes (3.5+: joins may be chained)
            rows = {"left": [row(100)], "right": [row(100)], "third": [row(100)]}
            if pruned or single:
                feed_until_watermark(driver, check, ("left", "right", "third"))
                nodes, _ = last_joins(driver)
            else:
                with pytest.raises(Exception) as err:
                    driver.feed(rows)
        if pruned or single:
            assert not {c for c in codes if c.startswith("E")}, sorted(codes)
            assert len(nodes) == 2
            for index, node in enumerate(reversed(nodes)):  # the plan lists j2 above j
                if single:  # one watermark for all; else j2 gets j's output watermark
                    assert node["eviction_watermark_ms"] == check.eviction_ms
                    assert node["late_events_watermark_ms"] == check.eviction_ms
                compare_join(case, node, plan_json["joins"][index], index)
        else:
            assert_spark_error(err.value, check)
            assert_rejected_by_planner(case, codes)
            assert "E022" not in codes

    return run


def computed_time_chain(spark: Any, case: Case) -> None:
    """j outputs ``L.t + INTERVAL 1 SECOND AS t`` (no watermark metadata); j2 joins it."""
    from pyspark.sql import functions as F

    codes, plan_json = planner(case)
    check = case.spark
    assert check is not None
    with StreamDriver(spark, THREE) as driver:
        first = watermarked(driver, "left", "L").join(
            watermarked(driver, "right", "R"), F.expr("L.k = R.k AND L.t = R.t")
        )
        first = first.select(
            F.col("L.k").alias("k"), F.expr("L.t + INTERVAL 1 SECOND").alias("t")
        ).alias("J")
        third = watermarked(driver, "third", "X")
        second = first.join(
            third, F.expr("J.k = X.k AND X.t BETWEEN J.t AND J.t + INTERVAL 1 MINUTE")
        )
        cols = [F.col("J.k").alias("J_k"), F.col("J.t").alias("J_t")]
        cols += [F.col(f"X.{c}").alias(f"X_{c}") for c in third.columns]
        driver.start(second.select(*cols))
        feed_until_watermark(driver, check, ("left", "right", "third"))
        nodes, _ = last_joins(driver)
    assert not {c for c in codes if c.startswith("E")}, sorted(codes)
    assert len(nodes) == 2
    for index, node in enumerate(reversed(nodes)):  # the plan lists j2 above j
        compare_join(case, node, plan_json["joins"][index], index)


def agg_over_two_time_columns(spark: Any, case: Case) -> None:
    """j keeps L.t AS lt and R.t AS rt; a window aggregation on lt also reads rt."""
    from pyspark.sql import functions as F

    codes, plan_json = planner(case)
    check = case.spark
    assert check is not None
    with StreamDriver(spark, {"left": SPARK_DDL, "right": SPARK_DDL}) as driver:
        cond = "L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 1 MINUTE"
        first = watermarked(driver, "left", "L").join(
            watermarked(driver, "right", "R"), F.expr(cond)
        )
        first = first.select(
            F.col("L.k").alias("k"), F.col("L.t").alias("lt"), F.col("R.t").alias("rt")
        )
        agg = first.groupBy(F.window("lt", "10 seconds")).agg(F.max("rt").alias("m"))
        driver.start(agg.select(F.col("window.end").alias("end"), "m"))
        feed_until_watermark(driver, check, ("left", "right"))
        (node,), _ = last_joins(driver)
    assert not {c for c in codes if c.startswith("E")}, sorted(codes)
    compare_join(case, node, plan_json["joins"][0])


def left_anti(spark: Any, case: Case) -> None:
    """Native LeftAnti is rejected; sjoin's rewrite (left outer, drop matched rows) runs
    with the state cleanup the planner predicts."""
    from pyspark.sql import functions as F

    shape = case.shape
    assert shape is not None
    codes, plan_json = planner(case)
    check = SparkCheck()
    with StreamDriver(spark, {"left": SPARK_DDL, "right": SPARK_DDL}) as driver:
        left, right = join_inputs(driver.inputs, shape, check)
        with pytest.raises(Exception) as err:
            driver.start(left.join(right, F.expr(shape.on), "left_anti"))
    assert_spark_error(
        err.value,
        SparkCheck(
            error="LeftAnti joins with a streaming DataFrame/Dataset on the right are not supported"
        ),
    )
    with StreamDriver(spark, {"left": SPARK_DDL, "right": SPARK_DDL}) as driver:
        left, right = join_inputs(driver.inputs, shape, check)
        rewritten = (
            left.join(right, F.expr(shape.on), "left_outer")
            .where(F.col(f"{shape.right_alias}.k").isNull())
            .select(*output(left, right, shape, "left_anti"))
        )
        driver.start(rewritten)
        feed_until_watermark(driver, check, ("left", "right"))
        (node,), _ = last_joins(driver)
    assert not {c for c in codes if c.startswith("E")}, sorted(codes)
    assert node["join_type"] == "LeftOuter" and plan_json["joins"][0]["join_type"] == "left_anti"
    compare_join(case, node, plan_json["joins"][0])


CUSTOM: dict[str, Callable[[Any, Case], None]] = {
    "left_anti": left_anti,
    "agg_over_two_time_columns": agg_over_two_time_columns,
    "computed_time_chain": computed_time_chain,
    "interval_join_window_agg": window_agg("inner"),
    "left_outer_join_window_agg": window_agg("left_outer"),
    "inner_join_update_agg": update_agg("inner"),
    "left_outer_join_update_agg": update_agg("left_outer"),
    "two_time_columns": two_time_columns(pruned=False),
    "two_time_columns_pruned": two_time_columns(pruned=True),
    "two_time_columns_single_watermark": two_time_columns(pruned=False, single=True),
}


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("case", SPARK_CASES, ids=[c.id for c in SPARK_CASES])
def test_case_against_spark(spark: Any, case: Case) -> None:
    assert "run: Spark 4.3.0" in case.source, "a Spark-checked case cites the run"
    assert case.spark is not None
    if case.spark.custom:
        CUSTOM[case.spark.custom](spark, case)
    else:
        run_generic(spark, case)


def test_enough_cases_checked() -> None:
    assert len(SPARK_CASES) >= 12
    assert all(c.spark.custom in CUSTOM for c in SPARK_CASES if c.spark and c.spark.custom)
    assert all(c.shape is not None for c in SPARK_CASES if c.spark and not c.spark.custom)
    assert BY_ID  # catalogue imported


def test_spark_time_budget(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Runs last in this module: the whole comparison must stay fast. The time is reported
    always; the budget is only enforced when the machine is not overloaded (load average
    above the CPU count makes wall time meaningless)."""
    elapsed = time.monotonic() - TIMER["start"]
    load = os.getloadavg()[0]
    line = f"plan-vs-Spark: {len(SPARK_CASES)} cases in {elapsed:.1f} s (load {load:.1f})"
    with capsys.disabled():
        print(f"\n{line}")
    if load <= (os.cpu_count() or 1):
        assert elapsed < TIME_BUDGET_S, line
