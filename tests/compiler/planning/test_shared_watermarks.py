"""A stream's one watermark read at several places of a query: from Spark 4.0 its watermark
nodes are one entry of the WatermarkTracker (keyed by the EventTimeWatermark's nodeId), before
4.0 each node is one (keyed by its index): ``Plan.shared_watermarks``.  Spark's side: parity
``self_join_sides_filter_the_stream_differently``, ``a_stream_read_by_two_joins_of_one_query``
and ``a_stream_twice_under_a_union`` (4.3 and 3.5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import check_pipeline, check_text
from sjoin.compiler.describe.diff import diff_versions
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.planning.canonical import canonical_text
from sjoin.compiler.vocabulary.model import SparkVersion

SELF_JOIN = """stream e (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream o (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
join j = e AS L INNER JOIN e AS R
  ON L.k = R.k AND L.v = 'a' AND R.v = 'b' AND R.t BETWEEN L.t AND L.t + INTERVAL 60 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt
join p = o AS L INNER JOIN e AS R
  ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 60 SECONDS
  SELECT L.k AS k
"""


@pytest.mark.parametrize(
    ("spark", "shared"),
    [("3.3", ()), ("3.4", ()), ("3.5", ()), ("4.0", ("e",)), ("4.2", ("e",)), ("4.3", ("e",))],
)
def test_a_stream_read_twice_shares_its_watermark_from_spark_4_0(
    spark: str, shared: tuple[str, ...]
) -> None:
    result = check_text(SELF_JOIN, spark=SparkVersion.parse(spark))
    assert result.plan is not None, result.diagnostics
    # `o` is read once: its node is its own
    assert result.plan.shared_watermarks == shared
    shown = plan_json(result.plan, [])
    assert shown.get("shared_watermarks", []) == list(shared)
    text = plan_text(result.plan)
    assert ("reads            several, whose watermark nodes count as one" in text) == bool(shared)


def test_a_plan_without_a_shared_watermark_keeps_its_json_and_identity() -> None:
    text = SELF_JOIN[: SELF_JOIN.index("join p")].replace(
        "e AS L INNER JOIN e", "o AS L INNER JOIN e"
    )
    result = check_text(text, spark=SparkVersion.parse("4.3"))
    assert result.plan is not None and result.plan.shared_watermarks == ()
    assert "shared_watermarks" not in plan_json(result.plan, [])
    assert "shared_watermarks" not in canonical_text(result.plan)


def test_a_pipeline_s_reads_each_have_their_own_watermark_node(tmp_path: Path) -> None:
    """In a pipeline's SQL each read writes its WATERMARK clause, resolved to a node with a
    nodeId of its own (ResolveEventTimeWatermark): nothing is shared, on any Spark."""
    path = tmp_path / "p.sql"
    wm = "STREAM(e) WATERMARK t DELAY OF INTERVAL 0 SECONDS"
    path.write_text(
        "CREATE STREAMING TABLE e (k BIGINT, t TIMESTAMP, v STRING);\n"
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {wm} x JOIN {wm} y ON x.k = y.k"
        " AND x.v = 'a' AND y.v = 'b' AND y.t BETWEEN x.t AND x.t + INTERVAL 60 SECONDS",
        encoding="utf-8",
    )
    result = check_pipeline(path, spark=SparkVersion.parse("4.3"))
    assert result.plan is not None, result.diagnostics
    assert result.plan.shared_watermarks == ()
    assert len(result.plan.joins) == 1


def test_diff_across_4_0_names_the_shared_watermark() -> None:
    plans = [check_text(SELF_JOIN, spark=SparkVersion.parse(v)).plan for v in ("3.5", "4.3")]
    assert plans[0] is not None and plans[1] is not None
    found = diff_versions("s.sjoin", plans[0], [], plans[1], [], "3.5", "4.3")
    reasons = [r for r in found.changes if r.topic == "global watermark"]
    assert [r.issue for r in reasons] == ["SPARK-50046"]
    assert "stream e is read at several places: on 4.3" in reasons[0].detail


def test_a_stream_read_once_by_each_of_two_queries_shares_nothing() -> None:
    """Two queries, two trackers: `o` is read by `j` and by `p`, each a query of its own."""
    text = SELF_JOIN.replace("e AS L INNER JOIN e", "o AS L INNER JOIN e")
    result = check_text(text, spark=SparkVersion.parse("4.3"))
    assert result.plan is not None and len(result.plan.query_roots) == 2
    assert result.plan.shared_watermarks == ()


def test_the_pipeline_target_says_its_reads_do_not_share_the_watermark() -> None:
    """The SDP project writes a WATERMARK clause per read (a node each): `sjoin compile
    --target pipeline` says so where the plan shares the stream's watermark."""
    from sjoin.compiler.backends.pipeline import pipeline_notes

    for spark, expected in (("3.5", []), ("4.3", ["e"])):
        plan = check_text(SELF_JOIN, spark=SparkVersion.parse(spark)).plan
        assert plan is not None
        notes = [n for n in pipeline_notes(plan) if "read at several places" in n]
        assert [n.split("`")[1] for n in notes] == expected
        assert all("WATERMARK clause on each read" in n for n in notes)
