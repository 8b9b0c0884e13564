"""`sjoin.check_dataframe(df)` (docs/pyspark.md, "In your own tests"): a streaming DataFrame
built in process, a Spark Connect one offline (no JVM, no server) or a classic one on the
run's Spark session, checked and planned as the same job read from its file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import sjoin
from sjoin.api import check_dataframe, input_error
from sjoin.cli.main import main

pytest.importorskip("pyspark.sql.connect.client.core")

JOBS = Path(__file__).parent / "jobs"
PLACES = {"line", "col", "end_line", "end_col", "file"}


def placeless(plan: dict[str, Any]) -> dict[str, Any]:
    """Plan JSON without the diagnostics' places (the job's lines are not the test's)."""
    out = dict(plan)
    out["diagnostics"] = [
        {k: v for k, v in d.items() if k not in PLACES} for d in plan["diagnostics"]
    ]
    return out


def without_sinks(plan: dict[str, Any]) -> dict[str, Any]:
    """A job's plan JSON less its sinks: a DataFrame is a query that is not started."""
    out = dict(plan)
    out["sinks"] = []
    return out


def job_plan(path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["plan", "--format", "json", str(path)])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


@pytest.fixture(scope="module")
def connect() -> Iterator[Any]:
    """A Spark Connect session with no server: the client builds plans in Python."""
    from pyspark.sql.connect.session import SparkSession

    session = SparkSession.builder.remote("sc://offline.invalid:1").create()
    session.client._closed = True  # no RPC at exit (the ML cache clean-up) to a server
    yield session


def guide_inner_connect(spark: Any) -> Any:
    """guide_inner.py's DataFrames, on a Connect session (variable names as in the job)."""
    from pyspark.sql.connect.functions import col, expr, from_json

    impressions = (
        spark.readStream.format("json")
        .schema("impressionAdId BIGINT, impressionTime TIMESTAMP")
        .load("/data/impressions")
    )
    clicks = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", "broker:9092")
        .option("subscribe", "clicks")
        .load()
        .select(
            from_json(col("value").cast("string"), "clickAdId BIGINT, clickTime TIMESTAMP").alias(
                "c"
            )
        )
        .select("c.*")
    )
    impressionsWithWatermark = impressions.withWatermark("impressionTime", "2 hours")
    clicksWithWatermark = clicks.withWatermark("clickTime", "3 hours")
    joined = impressionsWithWatermark.join(
        clicksWithWatermark,
        expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
    )
    return impressions, clicks, joined


# --------------------------------------------------------------------------- Spark Connect


def test_a_connect_join_plans_as_the_job_it_comes_from(connect: Any) -> None:
    # the relations take the names of the caller's variables that hold them
    impressions, clicks, joined = guide_inner_connect(connect)  # noqa: RUF059
    result = sjoin.check_dataframe(joined)
    assert result.ok, result.diagnostics
    assert result.plan is not None
    assert [s.name for s in result.plan.streams] == ["impressions", "clicks"]
    assert placeless(result.plan_json()) == placeless(
        without_sinks(job_plan(JOBS / "guide_inner.py"))
    )


def test_a_connect_outer_join_without_a_watermark_is_e021_at_the_call(connect: Any) -> None:
    from pyspark.sql.connect.functions import expr

    impressions, clicks, _ = guide_inner_connect(connect)
    unbounded = impressions.join(
        clicks.withWatermark("clickTime", "3 hours"),
        expr("clickAdId = impressionAdId AND clickTime >= impressionTime"),
        "left_outer",
    )
    result = check_dataframe(unbounded)  # the call's line
    assert not result.ok
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == ["E021"]
    line = json.loads(json.dumps(result.plan_json()))["diagnostics"]
    [e021] = [d for d in line if d["code"] == "E021"]
    assert e021["file"] == __file__
    assert "check_dataframe(unbounded)" in Path(__file__).read_text().splitlines()[e021["line"] - 1]
    assert "join `unbounded` (LEFT OUTER)" in e021["message"]


def test_a_udf_in_a_connect_condition_is_e041(connect: Any) -> None:
    from pyspark.sql.connect.functions import udf
    from pyspark.sql.types import BooleanType

    impressions, clicks, _ = guide_inner_connect(connect)
    same = udf(lambda a, b: a == b, BooleanType())
    matched = impressions.join(clicks, same(impressions.impressionAdId, clicks.clickAdId))
    result = check_dataframe(matched)
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["E041"]
    assert "UDF" in result.diagnostics[0].message


def test_warnings_ok_false_fails_on_a_warning(connect: Any) -> None:
    from pyspark.sql.connect.functions import expr

    impressions, clicks, _ = guide_inner_connect(connect)
    inner = impressions.withWatermark("impressionTime", "2 hours").join(
        clicks, expr("clickAdId = impressionAdId")
    )
    assert check_dataframe(inner).ok  # W001: the state grows, Spark runs it
    strict = check_dataframe(inner, warnings_ok=False)
    assert not strict.ok
    assert any(d.severity == "warning" for d in strict.diagnostics)


def test_name_names_the_dataframe(connect: Any) -> None:
    _, _, joined = guide_inner_connect(connect)
    result = check_dataframe(joined, name="attributed")
    assert result.plan is not None and result.plan.query_roots == ("attributed",)


def test_a_caller_without_a_file_gets_the_dataframes_name_as_its_source(connect: Any) -> None:
    """A notebook's cell or `python -c`: every diagnostic underlines the DataFrame's name."""
    from pyspark.sql.connect.functions import expr

    impressions, clicks, _ = guide_inner_connect(connect)
    cell = "unbounded = impressions.join(clicks, expr('clickAdId = impressionAdId'), 'left')\n"
    cell += "result = check_dataframe(unbounded)\n"
    scope = {"impressions": impressions, "clicks": clicks, "expr": expr}
    scope["check_dataframe"] = check_dataframe
    exec(compile(cell, "<cell>", "exec"), scope)
    result = scope["result"]
    assert result.source.path == "<dataframe>" and result.source.text == "unbounded\n"
    [e021] = [d for d in result.diagnostics if d.code == "E021"]
    assert (e021.span.start, e021.span.end) == (0, len("unbounded"))


def test_anything_but_a_dataframe_is_e042_not_a_traceback() -> None:
    result = check_dataframe(42)
    assert input_error(result)
    assert "not a PySpark DataFrame" in result.diagnostics[0].message


# --------------------------------------------------------------------------- classic


GUIDE_JSON = '''
from pyspark.sql import SparkSession
from pyspark.sql.functions import expr

spark = SparkSession.builder.getOrCreate()
impressions = spark.readStream.format("json").schema(
    "impressionAdId BIGINT, impressionTime TIMESTAMP"
).load("{a}")
clicks = spark.readStream.format("json").schema("clickAdId BIGINT, clickTime TIMESTAMP").load("{b}")
impressionsWithWatermark = impressions.withWatermark("impressionTime", "2 hours")
clicksWithWatermark = clicks.withWatermark("clickTime", "3 hours")
joined = impressionsWithWatermark.join(
    clicksWithWatermark,
    expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
)
joined.writeStream.format("parquet").option("path", "/out").option(
    "checkpointLocation", "/chk"
).start()
'''


@pytest.fixture
def folders(tmp_path: Path) -> tuple[str, str]:
    """Two folders a classic file stream reads (Spark checks its path exists)."""
    a, b = tmp_path / "impressions", tmp_path / "clicks"
    a.mkdir()
    b.mkdir()
    return str(a), str(b)


def guide_classic(spark: Any, a: str, b: str) -> Any:
    from pyspark.sql.functions import expr

    impressions = (
        spark.readStream.format("json")
        .schema("impressionAdId BIGINT, impressionTime TIMESTAMP")
        .load(a)
    )
    clicks = spark.readStream.format("json").schema("clickAdId BIGINT, clickTime TIMESTAMP").load(b)
    impressionsWithWatermark = impressions.withWatermark("impressionTime", "2 hours")
    clicksWithWatermark = clicks.withWatermark("clickTime", "3 hours")
    joined = impressionsWithWatermark.join(
        clicksWithWatermark,
        expr("""
    clickAdId = impressionAdId AND
    clickTime >= impressionTime AND
    clickTime <= impressionTime + interval 1 hour
    """),
    )
    return impressions, clicks, joined


@pytest.mark.spark
def test_a_classic_join_plans_as_the_job_it_comes_from(
    spark: Any, folders: tuple[str, str], tmp_path: Path
) -> None:
    """The analyzed plan's SQL differs in form (`INTERVAL '01' HOUR`, parentheses) but not
    in meaning: the keys, the time range, the state and its eviction are the job's."""
    # the relations take the names of the caller's variables that hold them (the job's)
    impressions, clicks, joined = guide_classic(spark, *folders)  # noqa: RUF059
    result = check_dataframe(joined)
    assert result.ok, result.diagnostics
    job = tmp_path / "job.py"
    job.write_text(GUIDE_JSON.format(a=folders[0], b=folders[1]))
    want = without_sinks(job_plan(job))
    got = result.plan_json()
    for plan in (want, got):  # the bound's conjunct as written differs; its meaning does not
        for join in plan["joins"]:
            for side in join["state"].values():
                for bound in side.get("bounds", []):
                    bound.pop("conjunct")
            join.pop("condition", None)
            join.pop("post_join_filter", None)  # `(t + INTERVAL '01' HOUR)`: Catalyst's SQL
    assert placeless(got) == placeless(want)


@pytest.mark.spark
def test_a_classic_outer_join_without_a_watermark_is_e021(
    spark: Any, folders: tuple[str, str]
) -> None:
    from pyspark.sql.functions import expr

    impressions, clicks, _ = guide_classic(spark, *folders)
    unbounded = impressions.join(
        clicks.withWatermark("clickTime", "3 hours"),
        expr("clickAdId = impressionAdId AND clickTime >= impressionTime"),
        "left_outer",
    )
    result = check_dataframe(unbounded)
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["E021"]


@pytest.mark.spark
def test_a_udf_in_a_classic_condition_is_e041(spark: Any, folders: tuple[str, str]) -> None:
    from pyspark.sql.functions import udf
    from pyspark.sql.types import BooleanType

    impressions, clicks, _ = guide_classic(spark, *folders)
    same = udf(lambda a, b: a == b, BooleanType())
    matched = impressions.join(clicks, same(impressions.impressionAdId, clicks.clickAdId))
    result = check_dataframe(matched)
    [error] = [d for d in result.diagnostics if d.severity == "error"]
    assert error.code == "E041" and "UDF" in error.message


@pytest.mark.spark
def test_a_classic_alias_join_then_projection_and_dedup(
    spark: Any, folders: tuple[str, str]
) -> None:
    """Catalyst keeps the alias qualifier on the columns above the join: the projection
    reads them unqualified, as the relation the lowering makes has no such alias."""
    from pyspark.sql.functions import col, expr

    impressions, clicks, _ = guide_classic(spark, *folders)
    i = impressions.withWatermark("impressionTime", "2 hours").alias("i")
    c = clicks.withWatermark("clickTime", "3 hours").alias("c")
    both = i.join(
        c,
        expr(
            "i.impressionAdId = c.clickAdId AND c.clickTime BETWEEN i.impressionTime "
            "AND i.impressionTime + INTERVAL 1 HOUR"
        ),
    )
    firsts = both.filter(col("clickAdId") > 0).select("impressionAdId", "clickTime")
    deduped = firsts.dropDuplicatesWithinWatermark(["impressionAdId"])
    result = check_dataframe(deduped)
    assert result.ok, result.diagnostics
    assert [d.code for d in result.diagnostics if d.severity == "error"] == []


SHARED_NAMES_JOB = """
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()
a = spark.readStream.format("json").schema("k BIGINT, t TIMESTAMP").load("{a}")
a = a.withWatermark("t", "1 minute")
b = spark.readStream.format("json").schema("k BIGINT, t TIMESTAMP, v STRING").load("{b}")
b = b.withWatermark("t", "1 minute")
bound = (b.t >= a.t) & (b.t <= a.t + F.expr("INTERVAL 1 MINUTE"))
j = a.join(b, (a.k == b.k) & bound, "left_outer")
j.writeStream.format("parquet").option("path", "/out").option("checkpointLocation", "/chk").start()
"""


@pytest.mark.spark
def test_a_classic_condition_on_columns_both_sides_have_keeps_each_side(
    spark: Any, folders: tuple[str, str], tmp_path: Path
) -> None:
    """`a.k == b.k` where both sides have `k` and `t`: Catalyst's SQL writes `k = k`, so
    each column is qualified by the side its expression id comes from (before, E006
    "ambiguous" six times); the plan is the job's, read on Connect."""
    from pyspark.sql import functions as F

    a = spark.readStream.format("json").schema("k BIGINT, t TIMESTAMP").load(folders[0])
    a = a.withWatermark("t", "1 minute")
    b = spark.readStream.format("json").schema("k BIGINT, t TIMESTAMP, v STRING").load(folders[1])
    b = b.withWatermark("t", "1 minute")
    j = a.join(
        b, (a.k == b.k) & (b.t >= a.t) & (b.t <= a.t + F.expr("INTERVAL 1 MINUTE")), "left_outer"
    )
    between = a.join(
        b, (a.k == b.k) & b.t.between(a.t, a.t + F.expr("INTERVAL 1 MINUTE")), "left_outer"
    )
    assert check_dataframe(between).ok  # Catalyst's BETWEEN: its SQL is its input and bounds
    result = check_dataframe(j)
    assert result.ok, result.diagnostics
    got = result.plan_json()
    job = tmp_path / "job.py"
    job.write_text(SHARED_NAMES_JOB.format(a=folders[0], b=folders[1]))
    want = job_plan(job)
    [join] = got["joins"]
    assert join["keys"] == want["joins"][0]["keys"]
    for plan in (want, got):  # Catalyst's SQL writes the bound otherwise, meaning the same
        for each in plan["joins"]:
            for side in each["state"].values():
                for bound in side.get("bounds", []):
                    bound.pop("conjunct")
            each.pop("condition", None)
            each.pop("post_join_filter", None)
    assert placeless(got) == placeless(without_sinks(want))


# a window's arguments after its time column -> the same window as the spec writes it
WINDOWS = {
    "tumbling": (("10 minutes",), "INTERVAL 10 MINUTES"),
    "sliding": (("10 minutes", "5 minutes"), "INTERVAL 10 MINUTES, INTERVAL 5 MINUTES"),
    # 3 does not divide 10: Spark's Expand over-estimates and filters on the window's range
    "sliding_uneven": (("10 minutes", "3 minutes"), "INTERVAL 10 MINUTES, INTERVAL 3 MINUTES"),
    "start_offset": (
        ("1 hour", "1 hour", "15 minutes"),
        "INTERVAL 1 HOUR, INTERVAL 1 HOUR, INTERVAL 15 MINUTES",
    ),
}

WINDOWED_TWIN = """
stream events (k BIGINT, t TIMESTAMP, v BIGINT)
{watermark}from json (path = '{path}')

aggregate counted = events
    GROUP BY window(t, {window}), k
    SELECT window(t, {window}) AS window, k, count(1) AS n, sum(v) AS total
"""


def windowed(spark: Any, functions: Any, path: str, args: tuple[str, ...], watermark: bool) -> Any:
    """`groupBy(window(col("t"), ...), "k").agg(...)` on either kind of session.  (Catalyst
    writes `count("*")` as `count(1)`: the count here is `count(lit(1))` on both.)"""
    F = functions
    events = spark.readStream.format("json").schema("k BIGINT, t TIMESTAMP, v BIGINT").load(path)
    if watermark:
        events = events.withWatermark("t", "10 minutes")
    counted = events.groupBy(F.window(F.col("t"), *args), "k").agg(
        F.count(F.lit(1)).alias("n"), F.sum("v").alias("total")
    )
    return events, counted


def spec_plan(path: Path) -> dict[str, Any]:
    """`sjoin plan --format json` of a spec, errors or not."""
    result = CliRunner().invoke(main, ["plan", "--format", "json", str(path)])
    assert result.exit_code in (0, 1), result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


@pytest.mark.spark
@pytest.mark.parametrize("watermark", [True, False], ids=["watermark", "no_watermark"])
@pytest.mark.parametrize("case", list(WINDOWS))
def test_a_classic_time_window_plans_as_on_connect_and_as_its_twin(
    spark: Any, connect: Any, tmp_path: Path, case: str, watermark: bool
) -> None:
    """TimeWindowing expands `window(...)` into a Project (tumbling) or an Expand and a
    Filter (sliding) of arithmetic on the time column; sjoin reads the call back from it,
    so the plan is the Connect DataFrame's (the call as written) and the `.sjoin` twin's.
    Without a watermark the verdict is the same on all three: E023, append without one."""
    import pyspark.sql.connect.functions as connect_functions
    import pyspark.sql.functions as classic_functions

    args, twin_window = WINDOWS[case]
    path = str(tmp_path)
    events, counted = windowed(spark, classic_functions, path, args, watermark)
    classic = check_dataframe(counted)
    events, counted = windowed(connect, connect_functions, path, args, watermark)  # noqa: RUF059
    on_connect = check_dataframe(counted)
    spec = tmp_path / "twin.sjoin"
    spec.write_text(
        WINDOWED_TWIN.format(
            watermark="watermark t delay 10 minutes\n" if watermark else "",
            path=path,
            window=twin_window,
        )
    )
    twin = spec_plan(spec)
    errors = [d.code for d in classic.diagnostics if d.severity == "error"]
    assert errors == ([] if watermark else ["E023"]), classic.diagnostics
    assert placeless(classic.plan_json()) == placeless(on_connect.plan_json())
    assert placeless(classic.plan_json()) == placeless(twin)


@pytest.mark.spark
def test_a_classic_window_of_a_join_plans_as_on_connect(
    spark: Any, connect: Any, folders: tuple[str, str]
) -> None:
    """A windowed count of a join's output: the window's time column is the join's."""
    import pyspark.sql.connect.functions as connect_functions
    import pyspark.sql.functions as classic_functions

    plans = []
    for session, F in ((spark, classic_functions), (connect, connect_functions)):
        impressions = (
            session.readStream.format("json")
            .schema("impressionAdId BIGINT, impressionTime TIMESTAMP")
            .load(folders[0])
            .withWatermark("impressionTime", "2 hours")
        )
        clicks = (
            session.readStream.format("json")
            .schema("clickAdId BIGINT, clickTime TIMESTAMP")
            .load(folders[1])
            .withWatermark("clickTime", "3 hours")
        )
        joined = impressions.join(
            clicks,
            F.expr(
                "clickAdId = impressionAdId AND clickTime >= impressionTime "
                "AND clickTime <= impressionTime + interval 1 hour"
            ),
        )
        per_window = joined.groupBy(F.window("clickTime", "10 minutes", "5 minutes")).count()
        result = check_dataframe(per_window)
        assert result.ok, result.diagnostics
        plans.append(result.plan_json())
    for plan in plans:  # Catalyst's SQL writes the join's bound otherwise, meaning the same
        for join in plan["joins"]:
            for side in join["state"].values():
                for bound in side.get("bounds", []):
                    bound.pop("conjunct")
            join.pop("condition", None)
            join.pop("post_join_filter", None)
    assert placeless(plans[0]) == placeless(plans[1])


def test_a_connect_session_window_is_e041_naming_it(connect: Any) -> None:
    """The same verdict as on a classic session (below): not an unknown function (E017)."""
    import pyspark.sql.connect.functions as F

    events = (
        connect.readStream.format("json")
        .schema("k BIGINT, t TIMESTAMP")
        .load("/in")
        .withWatermark("t", "1 minute")
    )
    sessions = events.groupBy(F.session_window("t", "5 minutes"), "k").count()
    result = check_dataframe(sessions)
    [error] = [d for d in result.diagnostics if d.severity == "error"]
    assert error.code == "E041" and "`session_window`" in error.message


@pytest.mark.spark
def test_a_classic_session_window_is_e041_naming_it(spark: Any, folders: tuple[str, str]) -> None:
    """sjoin's aggregate models time windows, not session windows (readers.py)."""
    from pyspark.sql.functions import count, session_window

    _, _, joined = guide_classic(spark, *folders)
    sessions = joined.groupBy(session_window("clickTime", "10 minutes")).agg(count("*").alias("n"))
    result = check_dataframe(sessions)
    [error] = [d for d in result.diagnostics if d.severity == "error"]
    assert error.code == "E041" and "`session_window`" in error.message


@pytest.mark.spark
def test_a_classic_window_outside_a_group_by_is_e041(spark: Any, folders: tuple[str, str]) -> None:
    """A window projected as a column (not a grouping key) is left to its expansion: E041."""
    from pyspark.sql.functions import window

    _, _, joined = guide_classic(spark, *folders)
    windowed_rows = joined.select(window("clickTime", "10 minutes").alias("w"), "clickAdId")
    result = check_dataframe(windowed_rows)
    [error] = [d for d in result.diagnostics if d.severity == "error"]
    assert error.code == "E041" and "`window`" in error.message


# --------------------------------------------------------------------------- the pytest helpers


def test_sjoin_plan_of_a_connect_join_is_its_snapshot(
    connect: Any, sjoin_plan: Any, snapshot: Any
) -> None:
    _, _, joined = guide_inner_connect(connect)
    assert sjoin_plan(joined) == snapshot


def test_sjoin_check_fails_a_connect_join_with_its_diagnostics(
    connect: Any, sjoin_check: Any
) -> None:
    from pyspark.sql.connect.functions import expr

    impressions, clicks, _ = guide_inner_connect(connect)
    unbounded = impressions.join(clicks, expr("clickAdId = impressionAdId"), "left_outer")
    with pytest.raises(pytest.fail.Exception, match=r"error\[E021\]: join `unbounded`"):
        sjoin_check(unbounded)


def rate_join(spark: Any) -> Any:
    """Two rate streams (no path: a snapshot that does not depend on the machine)."""
    from pyspark.sql.functions import expr

    left = spark.readStream.format("rate").load().withWatermark("timestamp", "10 seconds")
    right = spark.readStream.format("rate").load().withWatermark("timestamp", "10 seconds")
    return left.alias("l").join(
        right.alias("r"),
        expr(
            "l.value = r.value AND r.timestamp BETWEEN l.timestamp "
            "AND l.timestamp + INTERVAL 1 MINUTE"
        ),
        "left_outer",
    )


@pytest.mark.spark
def test_sjoin_plan_of_a_classic_join_is_its_snapshot(
    spark: Any, sjoin_plan: Any, snapshot: Any
) -> None:
    assert sjoin_plan(rate_join(spark), name="matched") == snapshot


@pytest.mark.spark
def test_sjoin_check_fails_a_classic_join_with_its_diagnostics(
    spark: Any, folders: tuple[str, str], sjoin_check: Any
) -> None:
    from pyspark.sql.functions import expr

    impressions, clicks, _ = guide_classic(spark, *folders)
    unbounded = impressions.join(clicks, expr("clickAdId = impressionAdId"), "left_outer")
    with pytest.raises(pytest.fail.Exception, match=r"error\[E021\]: join `unbounded`"):
        sjoin_check(unbounded)
