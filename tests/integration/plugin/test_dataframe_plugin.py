"""The pytest helpers for DataFrames as a user's project sees them: `sjoin_check(df)` and a
syrupy snapshot of `sjoin_plan(df)` (docs/pyspark.md, "In your own tests")."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark.sql.connect.client.core")

USER_TEST = """
import pytest
from pyspark.sql.connect.functions import expr
from pyspark.sql.connect.session import SparkSession


@pytest.fixture(scope="module")
def spark():
    session = SparkSession.builder.remote("sc://offline.invalid:1").create()
    session.client._closed = True
    return session


def streams(spark):
    impressions = spark.readStream.schema("ad BIGINT, shown TIMESTAMP").json("/in/impressions")
    clicks = spark.readStream.schema("clicked_ad BIGINT, clicked TIMESTAMP").json("/in/clicks")
    return impressions, clicks


def attributed(spark):
    impressions, clicks = streams(spark)
    return impressions.withWatermark("shown", "{delay}").join(
        clicks.withWatermark("clicked", "1 hour"),
        expr("ad = clicked_ad AND clicked BETWEEN shown AND shown + INTERVAL 1 HOUR"),
        "left_outer",
    )


def test_the_join_evicts_its_state(spark, sjoin_check):
    sjoin_check(attributed(spark), warnings_ok=False)


def test_the_plan_is_the_snapshot(spark, sjoin_plan, snapshot):
    assert sjoin_plan(attributed(spark), name="attributed") == snapshot


def test_an_outer_join_without_a_watermark_fails(spark, sjoin_check):
    impressions, clicks = streams(spark)
    unbounded = impressions.join(
        clicks.withWatermark("clicked", "1 hour"), expr("ad = clicked_ad"), "left_outer"
    )
    sjoin_check(unbounded)
"""


def test_sjoin_check_and_a_snapshot_of_sjoin_plan(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_join=USER_TEST.replace("{delay}", "2 hours"))
    first = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update")
    first.assert_outcomes(passed=2, failed=1)
    first.stdout.fnmatch_lines(
        [
            "*the DataFrame `unbounded` has errors:*",
            "*test_join.py:*: error[[]E021[]]: join `unbounded` (LEFT OUTER)*",
            "*sjoin_check(unbounded)*",
        ]
    )
    # (syrupy leaves a `.lock` beside the file when the run is parallel: not a snapshot)
    snapshots = [
        p.name
        for p in pytester.path.rglob("__snapshots__/*")
        if p.is_file() and p.suffix != ".lock"
    ]
    assert snapshots == ["test_join.ambr"]
    again = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    again.assert_outcomes(passed=2, failed=1)
    # the watermark's delay changes the plan: the snapshot catches it
    pytester.makepyfile(test_join=USER_TEST.replace("{delay}", "3 hours"))
    changed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    changed.assert_outcomes(passed=1, failed=2)


def test_a_snapshot_does_not_change_when_the_test_file_moves_lines(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_join=USER_TEST.replace("{delay}", "2 hours"))
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--snapshot-update")
    pytester.makepyfile(test_join="\n\n\n" + USER_TEST.replace("{delay}", "2 hours"))
    moved = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-k", "snapshot")
    moved.assert_outcomes(passed=1)
