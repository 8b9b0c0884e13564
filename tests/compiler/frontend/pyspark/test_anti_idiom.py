"""A LEFT ANTI join of two streams as a job writes it (docs/pyspark.md, "Round trip"): Spark
refuses the join itself, so a job keeps the left rows with no match with a left outer join,
a filter `<right column> IS NULL` and a projection of the left's columns.  lower.py reads
that as the LEFT ANTI join only when it is exactly that join; every other shape keeps its
lowering as written (a filter over the outer join).  One job holds every case, read once
(its child process imports pyspark): each case is a query of its own.

The positive cases also plan as their spec: the catalogue job `anti_join_idiom` against its
twin (test_jobs.py) and `unpaid_orders`'s compiled job (test_roundtrip.py)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlglot import exp

from sjoin.compiler.frontend import ast
from sjoin.compiler.vocabulary import sql

pytest.importorskip("pyspark.sql.connect.client.core")

JOB = """
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

spark = SparkSession.builder.getOrCreate()

orders = (
    spark.readStream.schema("order_id BIGINT, amount BIGINT, order_time TIMESTAMP")
    .json("/in/orders")
    .withWatermark("order_time", "10 minutes")
)
payments = (
    spark.readStream.schema("order_id BIGINT, method STRING, pay_time TIMESTAMP")
    .json("/in/payments")
    .withWatermark("pay_time", "10 minutes")
)
ON = (
    "o.order_id = p.order_id"
    " AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 5 MINUTES"
)
LEFT = ["o.order_id", "o.amount", "o.order_time"]


def start(df):
    df.writeStream.format("console").start()


def left_outer(right, on=None, how="left_outer"):
    return orders.alias("o").join(right.alias("p"), on if on is not None else F.expr(ON), how)


# the right key of an equality of ON, IS NULL
by_key_join = left_outer(payments)
by_key = by_key_join.where(F.col("p.order_id").isNull()).select(*LEFT)
start(by_key)

# a marker the right side adds (as `sjoin compile` writes a LEFT ANTI join), IS NULL
marked = payments.withColumn("m", F.lit(True))
by_marker_join = left_outer(marked)
by_marker = by_marker_join.where(F.col("p.m").isNull()).select(
    F.expr("o.order_id").alias("order_id"), F.expr("o.amount").alias("amount")
)
start(by_marker)

# a marker of another literal, unqualified (no left column has its name), a left column
# by its bare name and df["k"]
counted = payments.withColumn("matched", F.lit(1))
bare_marker_join = left_outer(counted)
bare_marker = bare_marker_join.where("matched IS NULL").select(
    F.col("amount"), orders["order_time"].alias("placed")
)
start(bare_marker)

# the key IS NULL and another predicate
conjoined_join = left_outer(payments)
conjoined = conjoined_join.where(
    F.col("p.order_id").isNull() & (F.col("o.amount") > 0)
).select(*LEFT)
start(conjoined)

# a right column no equality of ON makes non-null
nullable_join = left_outer(payments)
nullable = nullable_join.where(F.col("p.method").isNull()).select(*LEFT)
start(nullable)

# a key in an OR of ON: not a top-level conjunct
EITHER = "(o.order_id = p.order_id OR o.amount = 0)"
either_join = left_outer(payments, F.expr(ON.replace("o.order_id = p.order_id", EITHER)))
either = either_join.where(F.col("p.order_id").isNull()).select(*LEFT)
start(either)

# the marker read by ON too
marker_in_on_join = left_outer(
    payments.withColumn("m", F.lit(True)), F.expr(ON) & F.col("p.m")
)
marker_in_on = marker_in_on_join.where(F.col("p.m").isNull()).select(*LEFT)
start(marker_in_on)

# the marked DataFrame read by another relation too
shared = payments.withColumn("m", F.lit(True))
start(shared.where(F.col("method") == "card"))
marker_shared_join = left_outer(shared)
marker_shared = marker_shared_join.where(F.col("p.m").isNull()).select(*LEFT)
start(marker_shared)

# a NULL literal is no marker
null_marker_join = left_outer(payments.withColumn("m", F.lit(None)))
null_marker = null_marker_join.where(F.col("p.m").isNull()).select(*LEFT)
start(null_marker)

# the projection reads a right column
reads_right_join = left_outer(payments)
reads_right = reads_right_join.where(F.col("p.order_id").isNull()).select(*LEFT, "p.method")
start(reads_right)

# an inner join
inner_join = left_outer(payments, how="inner")
inner = inner_join.where(F.col("p.order_id").isNull()).select(*LEFT)
start(inner)

# the filter reads a projection of the join, not the join
not_on_join_join = left_outer(payments)
not_on_join = (
    not_on_join_join.select(*LEFT, F.col("p.order_id").alias("paid"))
    .where(F.col("paid").isNull())
    .select("order_id", "amount")
)
start(not_on_join)

# the filter's output written as it is (its right columns too): no projection
unprojected_join = left_outer(payments)
unprojected = unprojected_join.where(F.col("p.order_id").isNull())
start(unprojected)
"""

READ_AS_ANTI = ["by_key", "by_marker", "bare_marker"]
KEPT = [
    "conjoined",
    "nullable",
    "either",
    "marker_in_on",
    "marker_shared",
    "null_marker",
    "reads_right",
    "inner",
    "not_on_join",
    "unprojected",
]


@pytest.fixture(scope="module")
def statements(lower_job: Any) -> dict[str, ast.Statement]:
    return dict(lower_job("anti_cases", JOB))


def text(node: exp.Expression) -> str:
    return sql.spark_sql(node)


@pytest.mark.parametrize("name", READ_AS_ANTI)
def test_the_idiom_is_a_left_anti_join(statements: dict[str, ast.Statement], name: str) -> None:
    join = statements[name]
    assert isinstance(join, ast.JoinDecl), join
    assert join.how == "left_anti"
    assert join.where is None
    assert f"{name}_join" not in statements  # the projection names the join
    # the join reads the right stream itself: the marker's view is gone
    assert (join.left.name.text, join.right.name.text) == ("orders", "payments")
    assert join.right.alias is not None and join.right.alias.text == "p"


def test_the_marker_view_vanishes(statements: dict[str, ast.Statement]) -> None:
    views = [s for s in statements.values() if isinstance(s, ast.ViewDecl)]
    inputs = [v.input.name.text for v in views]
    # the markers of by_marker and bare_marker are no views; those of the kept cases are
    assert "marked" not in statements and "counted" not in statements
    assert inputs.count("payments") == 3, inputs  # marker_in_on's, shared, null_marker's


def test_the_anti_join_selects_the_projection(statements: dict[str, ast.Statement]) -> None:
    by_key, by_marker, bare = (statements[n] for n in READ_AS_ANTI)
    assert isinstance(by_key, ast.JoinDecl) and by_key.select is not None
    assert [text(i.expr) for i in by_key.select] == ["o.order_id", "o.amount", "o.order_time"]
    assert isinstance(by_marker, ast.JoinDecl) and by_marker.select is not None
    assert [i.alias.text for i in by_marker.select if i.alias] == ["order_id", "amount"]
    # a df["k"] column of the left side is qualified by its alias
    assert isinstance(bare, ast.JoinDecl) and bare.select is not None
    assert [text(i.expr) for i in bare.select] == ["amount", "o.order_time"]


@pytest.mark.parametrize("name", KEPT)
def test_anything_else_keeps_the_filter_over_the_join(
    statements: dict[str, ast.Statement], name: str
) -> None:
    join = statements[f"{name}_join"]
    assert isinstance(join, ast.JoinDecl), join
    assert join.how == ("inner" if name == "inner" else "left_outer")
    assert not isinstance(statements[name], ast.JoinDecl)
    filters = [
        s
        for s in statements.values()
        if isinstance(s, ast.ViewDecl) and s.where is not None and "IS NULL" in text(s.where)
    ]
    assert any(s.name.text in (name, f"{name}_view") for s in filters), [
        s.name.text for s in filters
    ]
