"""The expression forms both front ends now share (`<=>`, IS [NOT] DISTINCT FROM, `||`,
`::`, try_cast), on real Spark 4.3.0: the generated job and both runtime engines agree batch
by batch (NULL cases, strings that do not cast, an overflow), under ANSI (a Spark 4 target)
and without it (a Spark 3.5 target run with spark.sql.ansi.enabled=false, where try_cast
still fails to NULL as ANSI's CAST fails while CAST truncates); Spark's grammar puts the
sign of a number literal under `::` but a unary minus over it; and Spark plans `<=>`
between the sides as two join keys, as sjoin plans it."""

from __future__ import annotations

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
stream l (k BIGINT, x BIGINT, s STRING, t TIMESTAMP) watermark t delay 10 seconds
stream r (k BIGINT, y BIGINT, u STRING, t TIMESTAMP) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, L.x <=> R.y AS nse, L.x IS DISTINCT FROM R.y AS dist,
         L.x IS NOT DISTINCT FROM R.y AS ndist, L.s || R.u AS cat, L.s || L.x AS cat_num,
         L.s || '-' || R.u AS cat3, L.x::STRING AS xs, -L.x::INT AS negx,
         - 128::TINYINT AS signed, try_cast(R.u AS INT) AS ti,
         try_cast(R.u AS DECIMAL(3, 1)) AS td, try_cast(R.u AS DOUBLE) AS tf,
         try_cast(R.u AS BOOLEAN) AS tb, try_cast(L.x AS TINYINT) AS tt,
         try_cast(R.u AS TIMESTAMP) AS tts
join n = l AS L INNER JOIN r AS R
  ON L.k = R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS
     AND (L.x <=> R.y OR L.s IS DISTINCT FROM R.u)
  SELECT L.k AS k, R.u AS u
"""
BATCHES: list[dict[str, list[dict[str, Any]]]] = [
    {
        "l": [
            {"k": 1, "x": None, "s": None, "t": ts(100)},
            {"k": 2, "x": 5, "s": "a", "t": ts(100)},
            {"k": 3, "x": 300, "s": "p", "t": ts(100)},
            {"k": 4, "x": -7, "s": "q", "t": ts(100)},
        ],
        "r": [
            {"k": 1, "y": None, "u": None, "t": ts(101)},
            {"k": 2, "y": 5, "u": "abc", "t": ts(101)},
            {"k": 3, "y": None, "u": " 2 ", "t": ts(102)},
            {"k": 4, "y": 8, "u": "1.5", "t": ts(102)},
            {"k": 4, "y": 8, "u": "q", "t": ts(102)},
            {"k": 2, "y": 6, "u": "99999999999", "t": ts(103)},
        ],
    },
    {
        "l": [{"k": 9, "x": 1, "s": "", "t": ts(200)}],
        "r": [{"k": 9, "y": None, "u": "true", "t": ts(200)}],
    },
]


def _plan(version: str) -> Any:
    result = check_text(SPEC.format(version=version), "forms.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    return result.plan


def _ansi_off(spark: Any) -> Any:
    def make_runner(plan: Any, folder: str) -> Any:
        job = load_job(plan, folder)

        def runner(root: str, mode: str, streams: Any, feeds: Any, confs: Any, tick: Any) -> Any:
            confs = {**confs, "spark.sql.ansi.enabled": "false"}
            return run_job_query(spark, job, root, mode, streams, feeds, confs, tick)

        return runner

    return make_runner


@pytest.mark.parametrize("version", ["4.3", "3.5"])
def test_the_shared_forms_agree_with_spark(spark: Any, version: str) -> None:
    plan = _plan(version)
    make_runner = _ansi_off(spark) if version == "3.5" else None
    report = verify(plan, records(BATCHES), spark=spark, make_runner=make_runner)
    assert report.queries and report.agree, report.text()
    for engine in ("reference", "columnar"):
        rows = {
            (r["k"], r["ti"], r["cat"]): r
            for r in run(plan, records(BATCHES), engine=engine).rows("j")
        }
        nulls = rows[(1, None, None)]
        assert (nulls["nse"], nulls["dist"], nulls["ndist"], nulls["cat3"]) == (
            True, False, True, None,
        )  # fmt: skip
        assert rows[(3, 2, "p 2 ")]["tt"] is None  # 300 overflows a TINYINT: NULL
        assert rows[(4, None, "q1.5")]["td"] is not None  # '1.5' is a DECIMAL, no INT
        assert rows[(2, None, "a99999999999")]["tf"] == 99999999999.0
        assert all(r["signed"] == -128 for r in rows.values())
        n = sorted((r["k"], r["u"]) for r in run(plan, records(BATCHES), engine=engine).rows("n"))
        # (4, 'q'): -7 <=> 8 is false and 'q' is not distinct from 'q'
        assert n == [(1, None), (2, "99999999999"), (2, "abc"), (3, " 2 "), (4, "1.5"), (9, "true")]


def test_a_minus_stands_over_the_double_colon_cast(spark: Any) -> None:
    """`-x::TINYINT` is -(CAST(x AS TINYINT)): 128 overflows on Spark and in sjoin's
    runtime alike; `- 128::TINYINT` is the literal -128 cast (no overflow)."""
    assert spark.sql("SELECT - 128::TINYINT AS v").collect()[0]["v"] == -128
    with pytest.raises(Exception, match="CAST_OVERFLOW"):
        spark.sql("SELECT -x::TINYINT AS v FROM VALUES (128) AS t(x)").collect()
    spec = (
        "stream l (k BIGINT, x INT, t TIMESTAMP) watermark t delay 10 seconds\n"
        "stream r (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds\n"
        "join j = l JOIN r ON l.k = r.k AND r.t BETWEEN l.t AND l.t + INTERVAL 5 SECONDS\n"
        "  SELECT -l.x::TINYINT AS v\n"
    )
    result = check_text(spec, "neg.sjoin")
    assert result.ok and result.plan is not None
    trace = records([{"l": [{"k": 1, "x": 128, "t": ts(1)}], "r": [{"k": 1, "t": ts(1)}]}])
    for engine in ("reference", "columnar"):
        with pytest.raises(QueryError, match="CAST_OVERFLOW"):
            run(result.plan, trace, engine=engine)


def test_spark_plans_a_null_safe_equality_between_the_sides_as_a_key(spark: Any) -> None:
    """ExtractEquiJoinKeys: `L.k <=> R.k` becomes the keys [coalesce(k, 0), isnull(k)] of
    the StreamingSymmetricHashJoin, and the plan's keys are those
    (test_null_safe_keys_on_spark.py: every type's default, the state's key schema)."""
    from pyspark.sql import functions as F

    def side() -> Any:
        rate = spark.readStream.format("rate").load()
        return rate.selectExpr("value AS k", "timestamp AS t").withWatermark("t", "10 seconds")

    joined = (
        side()
        .alias("L")
        .join(
            side().alias("R"),
            F.expr("L.k <=> R.k AND R.t BETWEEN L.t AND L.t + INTERVAL 5 SECONDS"),
        )
    )
    text = spark._jvm.PythonSQLUtils.explainString(joined._jdf.queryExecution(), "simple")
    (line,) = [x for x in text.splitlines() if "StreamingSymmetricHashJoin" in x]
    assert "[coalesce(k#" in line and ", 0), isnull(k#" in line, line
    spec = SPEC.format(version="4.3").replace("ON L.k = R.k AND R.t", "ON L.k <=> R.k AND R.t")
    found = check_text(spec, "key.sjoin")
    assert found.ok and found.plan is not None, found.diagnostics
    assert found.plan_json()["joins"][0]["keys"] == [
        ["coalesce(L.k, 0)", "coalesce(R.k, 0)"],
        ["isnull(L.k)", "isnull(R.k)"],
    ]


def test_the_job_writes_try_cast_and_null_safe_equality_as_spark_reads_them(spark: Any) -> None:
    """sqlglot's Spark generator writes a TryCast without its `safe` flag as CAST: the
    job must say TRY_CAST, or a bad string would fail the query under ANSI."""
    plan = _plan("4.3")
    with tempfile.TemporaryDirectory() as tmp:
        job = load_job(plan, tmp)
        result = run_job_query(
            spark, job, "j", "append", ["l", "r"], list(BATCHES), semantic_conf(plan.settings)
        )
    assert any(r["ti"] is None for b in result.batches for r in b.rows)
