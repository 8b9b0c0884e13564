"""E025 of a pipeline's SQL (a join input keeping its time column beside a window of it: two
event-time columns, Spark 3.5+ with several stateful operators allowed) is judged for the
Spark the pipeline is planned for: its own `-- sjoin: spark` line, or the version `verify
--spark` / `diff --spark A --to B` plan it for (``check_pipeline(spark=...)``), and its
`allowMultiple` conf.  The planner's check (hazards) decides it from the plan; the
diagnostic points at the subquery in the pipeline's SQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import CheckResult, check_pipeline
from sjoin.compiler.vocabulary.model import SparkVersion

STREAMS = """CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP, s STRING);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP, s STRING);
"""
WA = "STREAM(a) WATERMARK t DELAY OF INTERVAL 1 SECOND"
WB = "STREAM(b) WATERMARK t DELAY OF INTERVAL 1 SECOND"
# the time is read after the join: it reaches the join beside its window
JOIN = (
    f"CREATE STREAMING TABLE j AS SELECT x.k, x.t FROM (SELECT *, window(t, '1 minute') AS w "
    f"FROM {WA}) x JOIN {WB} y ON x.k = y.k"
)
SUBQUERY = "(SELECT *, window(t, '1 minute') AS w"
MESSAGE = (
    "input `x` carries 2 event-time columns (`t` and its window `w`); Spark fails at the "
    "first batch with MULTIPLE_EVENT_TIME_COLUMNS"
)


def check(
    tmp_path: Path, head: str = "", spark: str | None = None, join: str = JOIN
) -> CheckResult:
    path = tmp_path / "p.sql"
    path.write_text(head + STREAMS + join, encoding="utf-8")
    return check_pipeline(path, spark=SparkVersion.parse(spark) if spark else None)


def e025(result: CheckResult) -> list[str]:
    """Each E025's message, checked to point at the subquery."""
    text = result.source.text
    found = [d for d in result.diagnostics if d.code == "E025"]
    for d in found:
        assert text[d.span.start : d.span.start + len(SUBQUERY)] == SUBQUERY
    assert "E999" not in [d.code for d in result.diagnostics]
    return [d.message for d in found]


@pytest.mark.parametrize(
    ("head", "spark", "expected"),
    [
        ("", None, True),  # the newest Spark
        ("-- sjoin: spark 3.5\n", None, True),
        ("-- sjoin: spark 3.4\n", None, False),  # one event-time column per input: 3.5+
        # planned for another Spark than the pipeline's line: judged for that Spark
        ("-- sjoin: spark 3.4\n", "3.5", True),
        ("-- sjoin: spark 3.5\n", "3.4", False),
        ("", "3.4", False),
        # several stateful operators not allowed: Spark does not check it
        ("SET spark.sql.streaming.statefulOperator.allowMultiple = false;\n", None, False),
    ],
)
def test_e025_is_judged_for_the_spark_planned_for(
    tmp_path: Path, head: str, spark: str | None, expected: bool
) -> None:
    result = check(tmp_path, head, spark)
    assert e025(result) == ([MESSAGE] if expected else [])
    if not expected:  # the pipeline is planned: the join reads the stream
        assert result.plan is not None and [j.name for j in result.plan.joins] == ["j"]


def test_again_for_another_spark_judges_it_for_that_spark(tmp_path: Path) -> None:
    """``CheckResult.again`` (how `verify --spark` and `diff --to` plan for another Spark)."""
    result = check(tmp_path, "-- sjoin: spark 3.5\n")
    assert e025(result) == [MESSAGE]
    assert result.again is not None
    assert e025(result.again(None, SparkVersion.parse("3.4"))) == []


def test_a_time_nothing_reads_after_the_join_is_pruned(tmp_path: Path) -> None:
    unread = JOIN.replace("SELECT x.k, x.t FROM", "SELECT x.k, x.w FROM")
    assert unread != JOIN
    result = check(tmp_path, join=unread)
    assert e025(result) == []
    assert result.ok, [d.message for d in result.diagnostics]
