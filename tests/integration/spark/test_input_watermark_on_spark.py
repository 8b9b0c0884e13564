"""The Spark fact behind E034: a watermark defined on a join's output (the generated job's
``.withWatermark`` before the aggregate, or before a second join) over streams that carry
watermarks.  With
``spark.sql.streaming.statefulOperator.allowMultiple=true`` (Spark's default) Spark's
``PropagateWatermarkSimulator`` refuses a watermark node whose input carries a watermark, the
first time it propagates the watermarks: batch 0 (watermark 0, propagation skipped) runs, the
next batch (here the no-data batch after it), whose watermark is above 0, fails.  With
``false`` the same job runs (the parity scenario ``input_watermark_join_then_window``
and ``input_watermark_join_then_join`` compare them batch by batch)."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.jvm.spark_driver import StreamDriver, session_confs

pytestmark = pytest.mark.spark

SPEC = """spark 4.3
set allow_multiple_stateful_operators = {allow}
stream l (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt, R.t AS rt
aggregate per_window = j AS a watermark lt delay 30 seconds
    GROUP BY window(a.lt, INTERVAL 10 SECONDS)
    SELECT window(a.lt, INTERVAL 10 SECONDS).start AS ws, count(*) AS n
"""
SCHEMAS = {"l": "k BIGINT, t TIMESTAMP", "r": "k BIGINT, t TIMESTAMP"}
BATCHES = [
    {"l": [{"k": 1, "t": "2026-01-01T00:01:40Z"}], "r": [{"k": 1, "t": "2026-01-01T00:01:38Z"}]},
]
MESSAGE = (
    "Redefining watermark is disallowed. You can set the config "
    "'spark.sql.streaming.statefulOperator.allowMultiple' to 'false' to restore the previous "
    "behavior. Note that multiple stateful operators will be disallowed."
)


def test_sjoin_says_what_spark_says() -> None:
    result = check_text(SPEC.format(allow="true"), "refused.sjoin")
    found = [d for d in result.diagnostics if d.code == "E034"]
    assert len(found) == 1 and MESSAGE in found[0].message


def fails_at_the_first_batch_with_a_watermark(
    spark: Any, spec: str, schemas: dict[str, str], batch: dict[str, Any], root: str
) -> None:
    """The job of ``spec`` (planned with allowMultiple=false, so sjoin accepts it) run with
    allowMultiple=true: batch 0 runs (watermark 0: Spark skips the propagation); the no-data
    batch after it, with the watermark it advanced, fails with ``MESSAGE``."""
    result = check_text(spec, "allowed.sjoin")
    assert result.ok and result.plan is not None
    job: dict[str, Any] = {}
    exec(compile(compile_pyspark(result.plan, "allowed.sjoin"), "job.py", "exec"), job)
    conf = {"spark.sql.streaming.statefulOperator.allowMultiple": "true"}
    with session_confs(spark, conf), StreamDriver(spark, schemas) as driver:
        driver.start(job["build"](spark, driver.inputs)[root])
        with pytest.raises(Exception, match="Redefining watermark is disallowed") as caught:
            driver.feed(batch)
        ran = driver.results()
    assert MESSAGE in str(caught.value)
    assert [(b.batch_id, b.watermark) for b in ran] == [(0, "1970-01-01T00:00:00.000Z")]


def test_the_job_fails_at_the_first_batch_with_a_watermark(spark: Any) -> None:
    """(Seen alike on Spark 3.5.9.)"""
    spec = SPEC.format(allow="false")
    fails_at_the_first_batch_with_a_watermark(spark, spec, SCHEMAS, BATCHES[0], "per_window")


JOIN_SPEC = """spark 4.3
set allow_multiple_stateful_operators = {allow}
stream l (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream c (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt, R.t AS rt
join j2 = j AS a watermark lt delay 30 seconds INNER JOIN c AS C
    ON a.k = C.k AND a.lt BETWEEN C.t - INTERVAL 5 SECONDS AND C.t + INTERVAL 5 SECONDS
    SELECT a.k AS k, a.lt AS lt, C.t AS ct
"""
JOIN_SCHEMAS = {**SCHEMAS, "c": "k BIGINT, t TIMESTAMP"}
JOIN_BATCHES = [{**BATCHES[0], "c": [{"k": 1, "t": "2026-01-01T00:01:39Z"}]}]


def test_a_join_reading_it_is_refused_alike() -> None:
    result = check_text(JOIN_SPEC.format(allow="true"), "refused_join.sjoin")
    found = [d for d in result.diagnostics if d.code == "E034"]
    assert len(found) == 1 and MESSAGE in found[0].message
    assert result.source.snippet(found[0].span) == "watermark lt delay 30 seconds"


def test_a_join_reading_it_fails_at_the_first_batch_with_a_watermark(spark: Any) -> None:
    """The same rule where a second join reads the watermarked output: Spark's simulator
    meets the join's EventTimeWatermark with the streams' watermark below it."""
    spec = JOIN_SPEC.format(allow="false")
    fails_at_the_first_batch_with_a_watermark(spark, spec, JOIN_SCHEMAS, JOIN_BATCHES[0], "j2")
