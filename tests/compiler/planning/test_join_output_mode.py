"""A join's `OUTPUT MODE` (docs/language.md, `join`): the mode of the query the join ends, as
Spark's UnsupportedOperationChecker judges it (reference §7.1; the PySpark catalogue's jobs
are started on Spark 4.3 in tests/integration/spark/test_pyspark_jobs_on_spark.py)."""

from __future__ import annotations

import pytest

from sjoin.api import check_text, spec_text, target_diagnostics
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.vocabulary.model import SparkVersion

SPEC = """
stream l (k BIGINT, lt TIMESTAMP) watermark lt delay 10 minutes from json (path = '/l')
stream r (rk BIGINT, rt TIMESTAMP) watermark rt delay 10 minutes from json (path = '/r')
join j = l {how} JOIN r ON k = rk AND rt BETWEEN lt AND lt + INTERVAL 1 HOUR{mode}
sink j to console
"""


def spec(how: str, mode: str | None) -> str:
    return SPEC.format(how=how, mode="" if mode is None else f"\n    OUTPUT MODE {mode}")


def errors(how: str, mode: str, spark: str) -> list[tuple[str, str]]:
    result = check_text(spec(how, mode), spark=SparkVersion.parse(spark))
    return [(d.code, d.message) for d in result.diagnostics if d.severity == "error"]


@pytest.mark.parametrize(
    ("how", "mode", "spark", "code", "text"),
    [
        ("INNER", "update", "4.3", None, ""),
        ("INNER", "update", "4.2", None, ""),
        ("LEFT SEMI", "update", "4.3", None, ""),
        ("INNER", "update", "4.1", "E023", "Spark 4.1: Join between two streaming"),
        ("INNER", "update", "3.5", "E023", "only in Append output mode"),
        ("LEFT OUTER", "update", "4.3", "E023", "LeftOuter join between two streaming"),
        ("FULL OUTER", "update", "4.3", "E023", "FullOuter join between two streaming"),
        # LEFT ANTI runs as a left outer join: Spark judges that one
        ("LEFT ANTI", "update", "4.3", "E023", "LeftOuter join between two streaming"),
        ("INNER", "complete", "4.3", "E023", "not supported for no streaming aggregations"),
        ("INNER", "complete", "3.5", "E023", "Complete output mode not supported when there"),
        ("LEFT OUTER", "complete", "4.3", "E023", "not supported for no streaming aggregations"),
    ],
)
def test_a_join_s_output_mode_gets_spark_s_verdict(
    how: str, mode: str, spark: str, code: str | None, text: str
) -> None:
    found = errors(how, mode, spark)
    if code is None:
        assert found == []
    else:
        [(got, message)] = found  # one error: Spark's first word on the query
        assert got == code and text in message, message


@pytest.mark.parametrize(
    ("how", "mode", "code", "text"),
    [
        ("INNER", "update", None, ""),
        # the view's WHERE drops the null-padded rows (EliminateOuterJoin runs it as INNER),
        # but the checker judges the join as written (seen on Spark 4.3 with the catalogue's
        # update_filter_after_join as a left outer join)
        ("LEFT OUTER", "update", "E023", "LeftOuter join between two streaming"),
        ("INNER", "complete", "E023", "not supported for no streaming aggregations"),
    ],
)
def test_a_query_that_ends_in_a_view_of_a_join_runs_in_the_join_s_mode(
    how: str, mode: str, code: str | None, text: str
) -> None:
    """Views keep no state: the query's mode is the join's under them (a PySpark job's
    ``join(...).where(...).select(...)`` written in Update mode)."""
    viewed = spec(how, mode).replace(
        "sink j to console", "view v = SELECT k, rt FROM j WHERE rt IS NOT NULL\nsink v to console"
    )
    result = check_text(viewed, spark=SparkVersion.parse("4.3"))
    found = [(d.code, d.message) for d in result.diagnostics if d.severity == "error"]
    if code is None:
        assert found == [], found
        assert result.plan is not None
        assert [s.mode for s in result.plan.sinks] == [mode]
        return
    [(got, message)] = found
    assert got == code and text in message, message


def test_an_inner_join_in_update_mode_plans_as_in_append() -> None:
    """Update emits the rows of Append (a join never retracts one): the plan is Append's,
    but for the join's and the sink's `mode`."""
    append = check_text(spec("INNER", None)).plan_json()
    update = check_text(spec("INNER", "update")).plan_json()
    [join] = update["joins"]
    assert join.pop("mode") == "update" and "mode" not in append["joins"][0]
    assert [s["mode"] for s in update["sinks"]] == ["update"]
    for plan in (append, update):
        plan.pop("sinks")
        plan.pop("checks")
        plan.pop("diagnostics")
    assert update == append


def test_the_mode_is_written_back_and_into_the_generated_job() -> None:
    result = check_text(spec("INNER", "update"))
    assert result.ok and result.plan is not None
    assert "    OUTPUT MODE update" in spec_text(result, "-- header")
    assert '.outputMode("update")' in compile_pyspark(result.plan)


def test_an_unknown_mode_is_e016() -> None:
    result = check_text(spec("INNER", "sometimes"))
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["E016"]


def test_a_pipeline_flow_appends() -> None:
    result = check_text(spec("INNER", "update"))
    assert [d.code for d in target_diagnostics(result, "pipeline")] == ["E032"]
