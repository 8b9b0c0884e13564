"""A join on windows as a job writes it (docs/pyspark.md, "What each call becomes"): each
side adds its window with ``withColumn("w", F.window(t, d))``, with or without the time
recomputed beside it, and the join compares ``a.w = b.w``.  lower.py reads that side as the
stream itself and ``a.w`` as ``window(a.t, d)``, so the join is the spec's join on
``window(a.t, d) = window(b.t, d)``, only when each step is read by the next alone; every
other shape keeps its lowering as written (views that add the columns).  One job holds the
cases that lower cleanly, read once (its child process imports pyspark); a second holds
those that are errors.

The positive case also plans as its spec: the catalogue job `window_join` against its twin
(test_jobs.py), and `iot_window_join`'s compiled job (test_roundtrip.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from sjoin.api import check_pyspark
from sjoin.compiler.frontend import ast
from sjoin.compiler.vocabulary import sql

pytest.importorskip("pyspark.sql.connect.client.core")

HEAD = """
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

temps = (
    spark.readStream.schema("device_id STRING, reading_time TIMESTAMP, celsius DOUBLE")
    .json("/in/temperature")
    .withWatermark("reading_time", "5 seconds")
)
hums = (
    spark.readStream.schema("device_id STRING, reading_time TIMESTAMP, percent DOUBLE")
    .json("/in/humidity")
    .withWatermark("reading_time", "5 seconds")
)
ON = (F.col("t.device_id") == F.col("h.device_id")) & (F.col("t.w") == F.col("h.w"))


def start(df):
    df.writeStream.format("console").start()


def recomputed(df):
    return df.withColumn("w", F.window("reading_time", "10 seconds")).withColumn(
        "reading_time", F.expr("timestamp_micros(unix_micros(reading_time))")
    )
"""

JOB = (
    HEAD
    + """
# as `sjoin compile` writes it: the window, then the time recomputed; a select after
by_compile = recomputed(temps).alias("t").join(recomputed(hums).alias("h"), ON).select(
    F.col("t.device_id"), F.col("t.w").alias("reading_window"), F.col("t.w"), "celsius"
)
start(by_compile)

# both in one withColumns call, no aliases: df["w"] of each side, and `w` bare in the select
left = temps.withColumns(
    {
        "w": F.window("reading_time", "10 seconds"),
        "reading_time": F.timestamp_micros(F.unix_micros("reading_time")),
    }
)
right = recomputed(hums)
by_frames = left.join(right, (left["device_id"] == right["device_id"]) & (left["w"] == right["w"]))
start(by_frames.select("celsius", "percent"))

# no select after the join: its output keeps both sides' window columns
unselected = recomputed(temps).alias("t").join(recomputed(hums).alias("h"), ON)
start(unselected)

# a filter, then a select, over the join's output: the output's window columns
filtered_join = recomputed(temps).alias("t").join(recomputed(hums).alias("h"), ON)
filtered = filtered_join.where(F.col("t.celsius") > 0).select(F.col("t.w"), "percent")
start(filtered)

# the windowed side is read by another query too: the views as written
shared = recomputed(temps)
start(shared)
shared_join = shared.alias("t").join(recomputed(hums).alias("h"), ON)
start(shared_join)

# a star over the join: the window columns too
starred = (
    recomputed(temps).alias("t").join(recomputed(hums).alias("h"), ON).select("t.*", "h.percent")
)
start(starred)

# a sliding window: its fields are a column's in Spark, a call's in sjoin: as written
slid_t = temps.withColumn("w", F.window("reading_time", "10 seconds", "5 seconds"))
slid_h = hums.withColumn("w", F.window("reading_time", "10 seconds", "5 seconds"))
sliding_join = slid_t.alias("t").join(slid_h.alias("h"), ON)
start(sliding_join.select(F.col("t.w.start"), "percent"))

# one stream windowed on both sides, no aliases: as written (the views name the sides)
x = temps.withColumn("w", F.window("reading_time", "10 seconds"))
y = temps.withColumn("w", F.window("reading_time", "10 seconds"))
twice_join = x.join(y, (x["device_id"] == y["device_id"]) & (x["w"] == y["w"]))
start(twice_join.select(x["w"], x["celsius"]))

# another computed column beside the window: the views as written
doubled = recomputed(temps).withColumn("twice", F.col("celsius") * 2)
other_join = doubled.alias("t").join(recomputed(hums).alias("h"), ON)
start(other_join)
"""
)

ERRORS = (
    HEAD
    + """
# the time kept with its mark beside its window: two event-time columns per side
kept = temps.withColumn("w", F.window("reading_time", "10 seconds")).alias("t").join(
    hums.withColumn("w", F.window("reading_time", "10 seconds")).alias("h"), ON
)
start(kept)

# the same, but nothing reads the time after the join: Spark prunes it, and the query runs
pruned = (
    temps.withColumn("w", F.window("reading_time", "10 seconds"))
    .alias("t")
    .join(hums.withColumn("w", F.window("reading_time", "10 seconds")).alias("h"), ON)
    .select(F.col("t.w"), "celsius", "percent")
)
start(pruned)
"""
)

WINDOWS = (
    "window(t.reading_time, INTERVAL '10' SECONDS) = window(h.reading_time, INTERVAL '10' SECONDS)"
)


@pytest.fixture(scope="module")
def statements(lower_job: Any) -> dict[str, ast.Statement]:
    return dict(lower_job("window_cases", JOB))


def text(node: exp.Expression) -> str:
    return sql.spark_sql(node)


def join_of(statements: dict[str, ast.Statement], *names: str) -> ast.JoinDecl:
    found = [statements[n] for n in names if n in statements]
    joins = [s for s in found if isinstance(s, ast.JoinDecl)]
    assert joins, (names, list(statements))
    return joins[0]


def test_a_join_on_window_columns_is_a_join_on_windows(
    statements: dict[str, ast.Statement],
) -> None:
    join = join_of(statements, "by_compile")
    assert text(join.on) == f"t.device_id = h.device_id AND {WINDOWS}"
    # the join reads the streams themselves: no view adds the columns
    assert (join.left.name.text, join.right.name.text) == ("temps", "hums")
    assert join.left.time_beside_window is None and join.right.time_beside_window is None
    assert join.select is not None
    assert [(text(i.expr), i.alias.text if i.alias else None) for i in join.select] == [
        ("t.device_id", None),
        ("window(t.reading_time, INTERVAL '10' SECONDS)", "reading_window"),
        ("window(t.reading_time, INTERVAL '10' SECONDS)", "w"),
        ("celsius", None),
    ]


def test_window_columns_of_unaliased_sides(statements: dict[str, ast.Statement]) -> None:
    join = next(
        s
        for s in statements.values()
        if isinstance(s, ast.JoinDecl)
        and s.select is not None
        and [text(i.expr) for i in s.select] == ["celsius", "percent"]
    )
    assert (join.left.name.text, join.right.name.text) == ("temps", "hums")
    assert text(join.on) == (
        "temps.device_id = hums.device_id AND window(temps.reading_time, INTERVAL '10' SECONDS) "
        "= window(hums.reading_time, INTERVAL '10' SECONDS)"
    )


def test_a_join_with_no_select_keeps_its_window_columns(
    statements: dict[str, ast.Statement],
) -> None:
    join = join_of(statements, "unselected")
    assert text(join.on).endswith(WINDOWS)
    assert join.select is not None
    assert [(text(i.expr), i.alias.text if i.alias else None) for i in join.select] == [
        ("t.device_id", "t_device_id"),
        ("t.reading_time", "t_reading_time"),
        ("t.celsius", "celsius"),
        ("window(t.reading_time, INTERVAL '10' SECONDS)", "t_w"),
        ("h.device_id", "h_device_id"),
        ("h.reading_time", "h_reading_time"),
        ("h.percent", "percent"),
        ("window(h.reading_time, INTERVAL '10' SECONDS)", "h_w"),
    ]


def test_a_reader_of_the_output_reads_its_window_columns(
    statements: dict[str, ast.Statement],
) -> None:
    join = join_of(statements, "filtered_join")
    assert join.select is not None and "t_w" in [i.alias.text for i in join.select if i.alias]
    view = statements["filtered"]
    assert isinstance(view, ast.ViewDecl)
    assert [text(i.expr) for i in view.select] == ["t_w", "percent"]


def test_a_star_over_the_join_names_its_window_columns(
    statements: dict[str, ast.Statement],
) -> None:
    join = join_of(statements, "starred")
    assert join.select is not None
    assert [(text(i.expr), i.alias.text if i.alias else None) for i in join.select] == [
        ("t.device_id", "device_id"),
        ("t.reading_time", "reading_time"),
        ("t.celsius", "celsius"),
        ("window(t.reading_time, INTERVAL '10' SECONDS)", "w"),
        ("h.percent", None),
    ]


@pytest.mark.parametrize("name", ["sliding_join", "twice_join"])
def test_a_sliding_window_or_one_stream_twice_keeps_its_views(
    statements: dict[str, ast.Statement], name: str
) -> None:
    join = next(
        s
        for s in statements.values()
        if isinstance(s, ast.JoinDecl) and s.name.text.startswith(name)
    )
    assert "window(" not in text(join.on), text(join.on)
    for ref in (join.left, join.right):
        assert isinstance(statements[ref.name.text], ast.ViewDecl)


@pytest.mark.parametrize("name", ["shared_join", "other_join"])
def test_anything_else_keeps_its_views(statements: dict[str, ast.Statement], name: str) -> None:
    """The left side as written (the right is the idiom: a window call)."""
    join = join_of(statements, name)
    assert text(join.on) == (
        "t.device_id = h.device_id AND t.w = window(h.reading_time, INTERVAL '10' SECONDS)"
    )
    view = statements[join.left.name.text]
    while isinstance(view, ast.ViewDecl) and not any(
        i.alias is not None and i.alias.text == "w" for i in view.select
    ):
        view = statements[view.input.name.text]
    assert isinstance(view, ast.ViewDecl)
    assert "window(reading_time, INTERVAL '10' SECONDS) AS w" in [
        f"{text(i.expr)} AS {i.alias.text}" for i in view.select if i.alias
    ]


def test_a_time_kept_beside_its_window_is_two_event_time_columns(tmp_path: Path) -> None:
    """E025 at the join, for each side (Spark 4.3 allows several stateful operators: the
    first batch fails with MULTIPLE_EVENT_TIME_COLUMNS), unless nothing reads the time
    after the join (Spark prunes it; both on real Spark in
    tests/integration/spark/test_window_sides_on_spark.py)."""
    path = tmp_path / "kept.py"
    path.write_text(ERRORS, encoding="utf-8")
    result = check_pyspark(path)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert sorted((d.code, d.message.split(" carries")[0]) for d in errors) == [
        ("E025", "input `h`"),
        ("E025", "input `t`"),
    ]
    line = ERRORS.splitlines().index(
        'kept = temps.withColumn("w", F.window("reading_time", "10 seconds")).alias("t").join('
    )
    assert {ERRORS[: d.span.start].count("\n") for d in errors} == {line}


AMBIGUOUS = (
    HEAD
    + """
# a bare `w` that the other side has as a plain column
plain = hums.withColumn("w", F.lit("x"))
KEYS = F.col("t.device_id") == F.col("h.device_id")
one = recomputed(temps).alias("t").join(plain.alias("h"), KEYS)
start(one.select("w", "celsius"))

# a bare `w` that both sides add as their window, in the condition
both = recomputed(temps).alias("t").join(
    recomputed(hums).alias("h"), KEYS & F.col("w").isNotNull()
)
start(both.select("celsius"))

# qualified, each is its side's own: no error
fine = recomputed(temps).alias("t").join(plain.alias("h"), KEYS)
start(fine.select(F.col("t.w").alias("window"), F.col("h.w").alias("tag"), "celsius"))
"""
)


def test_a_bare_window_name_on_both_sides_is_ambiguous(tmp_path: Path) -> None:
    """E006 where Spark says AMBIGUOUS_REFERENCE (seen on Spark 4.3:
    tests/integration/spark/test_window_sides_on_spark.py): a bare `w` that one side adds
    as its window and the other has as a column, or that both add, in a select or in the
    condition; each at its own line, and `t.w` / `h.w` are each side's own."""
    path = tmp_path / "ambiguous.py"
    path.write_text(AMBIGUOUS, encoding="utf-8")
    result = check_pyspark(path)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [(d.code, d.message, d.help) for d in errors] == [
        ("E006", "column `w` is ambiguous", "qualify it: `t.w` or `h.w`")
    ] * 2
    lines = AMBIGUOUS.splitlines()
    assert sorted(AMBIGUOUS[: d.span.start].count("\n") for d in errors) == [
        lines.index('start(one.select("w", "celsius"))'),
        next(i for i, line in enumerate(lines) if 'F.col("w").isNotNull()' in line),
    ]
    assert not result.ok
