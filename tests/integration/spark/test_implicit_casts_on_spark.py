"""A BIGINT key joined with a STRING key on real Spark 4.3.0, where a string does not cast
(issue 35): with ANSI on (a Spark 4 target) Spark's query and sjoin's runtime both fail with
CAST_INVALID_INPUT; with ANSI off (a Spark 3 target, run here with
spark.sql.ansi.enabled=false) the value is NULL, matches nothing, and '1.5' matches the
BIGINT 1 (the fraction dropped): the runtime and the generated job agree batch by batch."""

from __future__ import annotations

import re
import tempfile
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.vocabulary.settings import semantic_conf
from sjoin.jvm.spark_driver import run_job_query
from sjoin.jvm.verify import load_job, verify
from sjoin.runtime import run
from sjoin.runtime.errors import QueryError

from ..parity.scenarios import records, ts

pytestmark = pytest.mark.spark

SPEC = """spark {version}
stream l (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream r (ref STRING, t TIMESTAMP) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.ref AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, R.ref AS ref
"""
BATCHES: list[dict[str, list[dict[str, Any]]]] = [
    {
        "l": [{"k": 1, "t": ts(100)}, {"k": 2, "t": ts(100)}, {"k": 3, "t": ts(100)}],
        "r": [
            {"ref": "01", "t": ts(101)},
            {"ref": "abc", "t": ts(101)},
            {"ref": "1.5", "t": ts(102)},
            {"ref": " 2 ", "t": ts(102)},
        ],
    },
    {"l": [{"k": 9, "t": ts(200)}], "r": [{"ref": "9", "t": ts(200)}]},
]


def _plan(version: str) -> Any:
    result = check_text(SPEC.format(version=version), "casts.sjoin")
    assert result.ok and result.plan is not None
    assert [d.code for d in result.diagnostics] == ["W013"]
    return result.plan


def test_ansi_a_string_that_does_not_cast_fails_on_both(spark: Any) -> None:
    plan = _plan("4.3")
    with pytest.raises(QueryError, match="CAST_INVALID_INPUT"):
        run(plan, records(BATCHES), engine="reference")
    with pytest.raises(QueryError, match="CAST_INVALID_INPUT"):
        run(plan, records(BATCHES), engine="columnar")
    with tempfile.TemporaryDirectory() as tmp, pytest.raises(Exception) as failed:
        job = load_job(plan, tmp)
        run_job_query(
            spark, job, "j", "append", ["l", "r"], list(BATCHES), semantic_conf(plan.settings)
        )
    assert "CAST_INVALID_INPUT" in str(failed.value)


def test_no_ansi_a_string_that_does_not_cast_matches_nothing(spark: Any) -> None:
    plan = _plan("3.5")

    def make_runner(plan: Any, folder: str) -> Any:
        job = load_job(plan, folder)

        def runner(root: str, mode: str, streams: Any, feeds: Any, confs: Any, tick: Any) -> Any:
            confs = {**confs, "spark.sql.ansi.enabled": "false"}
            return run_job_query(spark, job, root, mode, streams, feeds, confs, tick)

        return runner

    report = verify(plan, records(BATCHES), spark=spark, make_runner=make_runner)
    assert report.queries and report.agree, report.text()
    matched = sorted((r["k"], r["ref"]) for r in run(plan, records(BATCHES)).rows("j"))
    assert matched == [(1, "01"), (1, "1.5"), (2, " 2 "), (9, "9")]


def test_the_cast_key_is_an_equi_join_key_of_sparks_plan(spark: Any) -> None:
    """The STRING key is cast in the join's keys (leftKeys [k], rightKeys [cast(ref as
    bigint)]), as `sjoin plan` shows it: state is keyed by the cast value."""
    plan = _plan("4.3")
    ((left, right),) = plan.joins[0].keys
    assert (left.sql(dialect="spark"), right.sql(dialect="spark")) == (
        "L.k",
        "CAST(R.ref AS BIGINT)",
    )
    clean = [{"l": BATCHES[0]["l"], "r": [r for r in BATCHES[0]["r"] if r["ref"] != "abc"]}]
    clean[0]["r"] = [r for r in clean[0]["r"] if r["ref"] != "1.5"]
    with tempfile.TemporaryDirectory() as tmp:
        job = load_job(plan, tmp)
        result = run_job_query(
            spark, job, "j", "append", ["l", "r"], clean, semantic_conf(plan.settings)
        )
    assert re.search(
        r"StreamingSymmetricHashJoin \[k#\d+L\], \[cast\(ref#\d+ as bigint\)\], Inner", result.plan
    ), result.plan
    assert sorted(r["ref"] for b in result.batches for r in b.rows) == [" 2 ", "01"]
