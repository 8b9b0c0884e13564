"""The Spark facts behind `union` (UnionNode), each seen on Spark 4.3.0 and held against what
sjoin plans: Spark's Union matches its inputs by position and keeps the first input's names
and metadata (so a watermark mark of a later input is lost: W014), widens INT and BIGINT and
refuses another column count (E035 refuses both); it pushes a join side's filter through the
Union and below each input's EventTimeWatermark (``UnionNode.below_watermark``); and a
micro-batch of a union lists the first input's rows, then the second's."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.planning.plan import UnionNode
from sjoin.jvm.spark_driver import StreamDriver

pytestmark = pytest.mark.spark

KTV = "k BIGINT, t TIMESTAMP, v STRING"
SCHEMAS = {"a": KTV, "b": KTV, "c": KTV}
DELAY = "spark.watermarkDelayMs"


def _row(k: int, t: str, v: str) -> dict[str, Any]:
    return {"k": k, "t": f"2026-01-01T00:{t}Z", "v": v}


def _union_of(spec: str, name: str) -> UnionNode:
    result = check_text(spec, "union.sjoin")
    assert result.plan is not None
    node = result.plan.node(name)
    assert isinstance(node, UnionNode)
    return node


def test_a_union_keeps_the_first_inputs_watermark_metadata(spark: Any) -> None:
    with StreamDriver(spark, SCHEMAS) as driver:
        marked = driver.inputs["a"].withWatermark("t", "10 seconds")
        plain = driver.inputs["b"]
        later = driver.inputs["c"].withWatermark("t", "30 seconds")
        first = [dict(f.metadata) for f in marked.union(plain).schema.fields]
        second = [dict(f.metadata) for f in plain.union(marked).schema.fields]
        both = [dict(f.metadata) for f in marked.union(later).schema.fields]
    assert first == [{}, {DELAY: 10_000}, {}]
    assert second == [{}, {}, {}]
    assert both == [{}, {DELAY: 10_000}, {}]  # the first input's delay, not the second's
    spec = (
        "spark 4.3\n"
        "stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds\n"
        "stream b (k BIGINT, t TIMESTAMP, v STRING)\n"
        "union ab = a UNION ALL b\nunion ba = b UNION ALL a\nsink ab to console\n"
        "sink ba to console\n"
    )
    assert _union_of(spec, "ab").event_time_column == "t"
    assert _union_of(spec, "ba").event_time_column is None
    codes = [d.code for d in check_text(spec, "union.sjoin").diagnostics]
    assert codes == ["W014"]  # `ba` loses a's mark


def test_a_union_matches_columns_by_position_and_sjoin_asks_for_the_same(spark: Any) -> None:
    from pyspark.sql import functions as F

    with StreamDriver(spark, SCHEMAS) as driver:
        a = driver.inputs["a"]
        renamed = driver.inputs["b"].select(F.col("k").alias("kk"), "t", "v")
        narrow = driver.inputs["b"].select(F.col("k").cast("int").alias("k"), "t", "v")
        names = a.union(renamed).columns
        widened = narrow.union(a).schema.simpleString()
        with pytest.raises(Exception, match="NUM_COLUMNS_MISMATCH") as caught:
            _ = a.union(driver.inputs["b"].select("k", "t")).schema
    assert names == ["k", "t", "v"]  # `kk` is read as `k`
    assert widened == "struct<k:bigint,t:timestamp,v:string>"
    assert "UNION can only be performed on inputs with the same number of columns" in str(
        caught.value
    )
    for declared, expected in (
        ("kk BIGINT, t TIMESTAMP, v STRING", "column 1"),
        ("k INT, t TIMESTAMP, v STRING", "is INT"),
        ("k BIGINT, t TIMESTAMP", "has 2 columns"),
    ):
        spec = f"spark 4.3\nstream a ({KTV})\nstream b ({declared})\nunion ab = a UNION ALL b\n"
        found = [d for d in check_text(spec, "union.sjoin").diagnostics if d.code == "E035"]
        assert len(found) == 1 and expected in found[0].message


def test_a_join_sides_filter_runs_below_each_inputs_watermark_node(spark: Any) -> None:
    """b's row at 00:06:40 fails the side filter `v <> 'skip'`: Spark runs it below b's
    watermark node, which sees nothing in batch 0, so the global watermark (min of a, b, c)
    stays 0 in batch 1; had the node seen it, the watermark would be a's 90 s then."""
    from pyspark.sql import functions as F

    with StreamDriver(spark, SCHEMAS) as driver:
        a = driver.inputs["a"].withWatermark("t", "10 seconds")
        b = driver.inputs["b"].withWatermark("t", "30 seconds")
        c = driver.inputs["c"].withWatermark("t", "5 seconds")
        joined = (
            a.union(b)
            .alias("X")
            .join(
                c.alias("C"),
                F.expr(
                    "X.k = C.k AND X.v <> 'skip' AND C.t BETWEEN X.t AND X.t + INTERVAL 10 SECONDS"
                ),
            )
            .select("X.k", "X.v", F.col("C.v").alias("cv"))
        )
        driver.start(joined)
        driver.feed(
            {
                "a": [_row(1, "01:40", "a1")],
                "b": [_row(9, "06:40", "skip")],
                "c": [_row(1, "01:41", "c1")],
            }
        )
        driver.feed({"a": [_row(2, "01:50", "a2")], "c": [_row(2, "01:51", "c2")]})
        ran = driver.results()
        plan = driver.executed_plan()
    assert [(r.batch_id, r.watermark) for r in ran] == [
        (0, "1970-01-01T00:00:00.000Z"),
        (1, "1970-01-01T00:00:00.000Z"),
    ]
    below_a = plan.split("EventTimeWatermark")[1]  # a's node: the filter on v is under it
    assert "skip" in below_a.split("EventTimeWatermark")[0]
    spec = """spark 4.3
stream a (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 30 seconds
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
union ab = a UNION ALL b
join j = ab AS X INNER JOIN c AS C
  ON X.k = C.k AND X.v <> 'skip' AND C.t BETWEEN X.t AND X.t + INTERVAL 10 SECONDS
  SELECT X.k AS k, X.v AS v, C.v AS cv
"""
    node = _union_of(spec, "ab")
    assert node.not_null_below_watermark == (("k", "v"), ("k", "v"))  # not isnotnull(t)
    assert [[f.sql() for f in fs] for fs in node.below_watermark] == [["X.v <> 'skip'"]] * 2


def test_a_micro_batch_of_a_union_lists_the_first_inputs_rows_first(spark: Any) -> None:
    with StreamDriver(spark, SCHEMAS) as driver:
        driver.start(driver.inputs["a"].union(driver.inputs["b"]))
        for i in range(3):
            driver.feed(
                {
                    "a": [_row(10 * i + n, "01:40", "a") for n in range(4)],
                    "b": [_row(100 + 10 * i + n, "01:40", "b") for n in range(4)],
                }
            )
        ran = driver.results()
    assert [[r["k"] for r in b.rows] for b in ran] == [
        [10 * i + n for n in range(4)] + [100 + 10 * i + n for n in range(4)] for i in range(3)
    ]
