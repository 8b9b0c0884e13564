"""`sjoin diff` on a setting the checkpoint pins (shuffle partitions, state store provider,
watermark policy): a spec that does not set one leaves it to the cluster, whose value the
checkpoint then holds, so each of set -> set, unset -> set and set -> unset says what the
restarted query keeps."""

from __future__ import annotations

import pytest

from sjoin.api import check_text
from sjoin.compiler.describe.diff import diff_plans
from sjoin.compiler.planning.plan import Plan

BASE = """spark 4.3
{setting}
stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
join j = a JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE
    SELECT a.k, a.t
sink j to json (path = 'out') checkpoint 'cp'
"""


def plan(setting: str) -> Plan:
    result = check_text(BASE.format(setting=setting), "spec.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    return result.plan


def reasons(old: str, new: str) -> list[str]:
    report = diff_plans(plan(old), plan(new))
    return [r.detail for q in report.queries for r in q.reasons if r.topic == "setting ignored"]


CASES = {
    "shuffle_partitions": ("4", "6", "200", "spark.sql.shuffle.partitions"),
    "state_store": ("rocksdb", "hdfs", "hdfs", "spark.sql.streaming.stateStore.providerClass"),
    "multiple_watermark_policy": (
        "max",
        "min",
        "min",
        "spark.sql.streaming.multipleWatermarkPolicy",
    ),
}


@pytest.mark.parametrize("setting", CASES)
def test_set_to_set(setting: str) -> None:
    one, two, _, conf = CASES[setting]
    (text,) = reasons(f"set {setting} = {one}", f"set {setting} = {two}")
    assert f"`{setting}` is {two} in NEW, but the checkpoint pins {conf} = {one}" in text
    assert reasons(f"set {setting} = {one}", f"set {setting} = {one}") == []


@pytest.mark.parametrize("setting", CASES)
def test_unset_to_set_names_the_clusters_value(setting: str) -> None:
    one, _, default, conf = CASES[setting]
    (text,) = reasons("", f"set {setting} = {one}")
    assert "OLD left it to the cluster" in text and f"Spark's default: {default}" in text
    assert conf in text


@pytest.mark.parametrize("setting", CASES)
def test_set_to_unset_keeps_the_checkpoints_value(setting: str) -> None:
    one, _, _, conf = CASES[setting]
    (text,) = reasons(f"set {setting} = {one}", "")
    assert f"NEW leaves `{setting}` to the cluster" in text and f"{conf} = {one}" in text


def test_unset_on_both_sides_says_nothing() -> None:
    assert reasons("", "") == []
