"""A watermark defined on a join's output where an aggregate reads it (`j AS a watermark lt
delay 30 seconds`, a pipeline's `STREAM(j) WATERMARK lt DELAY OF ...`): Spark's withWatermark
on the join's output, through every stage: bind (the column's mark), the plan (its node, which
watermark each operator uses, E034 per version and setting), its text and JSON, both back
ends, `fmt` both ways, and both engines.

The Spark facts, seen on Spark 4.3.0 and 3.5.9
(tests/integration/spark/test_input_watermark_on_spark.py,
and the parity scenarios `input_watermark_*`): with `allowMultiple=true` the query runs
batch 0 and fails at the first batch whose watermark is above 0 with `Redefining watermark is
disallowed. ...`; with `false` it runs, with the watermarks and rows of ``SPARK_43`` below."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import CheckResult, check_pipeline, check_text
from sjoin.compiler.backends.pipeline import pipeline_sql
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.planning.plan import AggregateNode, JoinNode
from sjoin.runtime import run

HEAD = """spark {spark}
{setting}
stream l (k BIGINT, t TIMESTAMP, v STRING) {wl}
stream r (k BIGINT, t TIMESTAMP, v STRING) {wr}

join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt, R.t AS rt

aggregate per_window = j AS a watermark lt delay 30 seconds
    GROUP BY window(a.lt, INTERVAL 10 SECONDS)
    SELECT window(a.lt, INTERVAL 10 SECONDS) AS w, count(*) AS n
"""
WATERMARK = "watermark t delay 10 seconds"


def spec(spark: str = "4.3", allow: bool | None = False, watermarks: bool = True) -> CheckResult:
    setting = "" if allow is None else f"set allow_multiple_stateful_operators = {allow}".lower()
    mark = WATERMARK if watermarks else ""
    text = HEAD.format(spark=spark, setting=setting, wl=mark, wr=mark)
    return check_text(text, "rewatermark.sjoin")


def codes(result: CheckResult) -> list[str]:
    return [d.code for d in result.diagnostics if d.severity == "error"]


def aggregate(result: CheckResult) -> AggregateNode:
    assert result.plan is not None
    found = result.plan.node("per_window")
    assert isinstance(found, AggregateNode)
    return found


def test_the_node_and_the_one_event_time_column() -> None:
    result = spec()
    assert codes(result) == []
    agg = aggregate(result)
    assert agg.input_watermark is not None
    assert (agg.input_watermark.column, agg.input_watermark.delay_ms) == ("lt", 30_000)
    assert agg.watermark_key == "window(a.lt, INTERVAL '10' SECONDS)"
    # one watermark, this batch's global one, for every operator
    assert result.plan is not None
    join = result.plan.node("j")
    assert isinstance(join, JoinNode)
    for node in (agg, join):
        use = node.watermarks
        assert (use.late_rows.source, use.late_rows.batch) == ("global", "this")
        assert (use.eviction.source, use.eviction.batch) == ("global", "this")


@pytest.mark.parametrize(
    ("spark", "allow", "refused"),
    [
        ("4.3", None, True),  # allowMultiple defaults to true
        ("4.3", True, True),
        ("3.5", True, True),
        ("4.3", False, False),
        ("3.5", False, False),
        ("3.4", True, False),  # no PropagateWatermarkSimulator before 3.5
        ("3.3", True, False),
    ],
)
def test_spark_refuses_it_with_several_watermarks(
    spark: str, allow: bool | None, refused: bool
) -> None:
    result = spec(spark, allow)
    found = [d for d in result.diagnostics if d.code == "E034"]
    assert bool(found) == refused, [d.message for d in result.diagnostics]
    if refused:
        (d,) = found
        assert "Redefining watermark is disallowed" in d.message
        assert "spark.sql.streaming.statefulOperator.allowMultiple" in d.message
        assert result.source.snippet(d.span) == "watermark lt delay 30 seconds"
        assert d.help is not None and "allow_multiple_stateful_operators = false" in d.help


def test_no_watermark_below_runs_with_the_default() -> None:
    """Without a watermark below, the new node is the only one: Spark's simulator has no
    input watermark to refuse (seen on Spark 4.3.0: parity scenario
    input_watermark_without_watermark_below)."""
    result = spec(allow=None, watermarks=False)
    assert "E034" not in codes(result), [d.message for d in result.diagnostics]
    assert "E023" not in codes(result)


def test_the_plan_says_it() -> None:
    result = spec()
    assert result.plan is not None
    text = plan_text(result.plan)
    assert "input watermark  lt delay 30 seconds on j's output" in text
    assert "[ok] watermark on j in per_window" in text
    data = plan_json(result.plan, [])
    (agg,) = data["aggregates"]
    assert agg["input_watermark"] == {"column": "lt", "delay_ms": 30_000}


def test_the_pyspark_job_calls_with_watermark() -> None:
    result = spec()
    assert result.plan is not None
    job = compile_pyspark(result.plan, "rewatermark.sjoin")
    assert '.withWatermark("lt", "30 seconds")' in job
    assert '"spark.sql.streaming.statefulOperator.allowMultiple": "false"' in job


def test_the_pipeline_writes_the_clause_and_reads_it_back(tmp_path: Path) -> None:
    result = spec("4.3")
    assert result.plan is not None
    sql = pipeline_sql(result.plan, "rewatermark.sjoin")
    assert "FROM STREAM(j) WATERMARK lt DELAY OF INTERVAL 30 SECONDS AS a" in sql
    path = tmp_path / "rewatermark.sql"
    path.write_text(sql, encoding="utf-8")
    again = check_pipeline(path)
    assert codes(again) == [], [d.message for d in again.diagnostics]
    read, written = aggregate(again).input_watermark, aggregate(result).input_watermark
    assert read is not None and written is not None
    assert (read.column, read.delay_ms) == (written.column, written.delay_ms)


# Spark 4.3.0, allowMultiple=false, the batches of ``TRACE`` (each fed alone, as the parity
# driver feeds them): the watermark of each batch (seconds after 2026-01-01T00:00:00Z) and
# (per_window, j) numRowsTotal.  The new node holds the global watermark back: after batch 0
# the streams' nodes are at 91 s and 90 s, the join output's at 101 - 30 = 71 s.
SPARK_43 = [
    (0, (1, 4)),
    (71, (1, 4)),
    (71, (2, 6)),
    (100, (2, 6)),
    (100, (3, 8)),
    (170, (1, 2)),
    (170, (2, 4)),
    (230, (1, 2)),
]


def _t(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"2026-01-01T00:{minutes:02d}:{rest:02d}Z"


TRACE = [
    {"batch": b, "stream": s, "row": {"k": k, "t": _t(t), "v": "x"}}
    for b, rows in enumerate(
        [
            [("l", 1, 100), ("l", 2, 101), ("r", 1, 98), ("r", 2, 100)],
            [("l", 4, 130), ("r", 4, 131)],
            [("l", 5, 200), ("r", 5, 200)],
            [("l", 6, 260), ("r", 6, 262)],
        ]
    )
    for s, k, t in rows
]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_both_engines_run_it_as_spark(engine: str) -> None:
    result = spec()
    assert result.plan is not None
    ran = run(result.plan, TRACE, engine=engine)  # type: ignore[arg-type]
    seen = [
        (b.watermark, tuple(op["numRowsTotal"] for op in b.progress["operators"]))
        for b in ran.batches
    ]
    expected = [("1970-01-01T00:00:00Z" if w == 0 else _t(w), totals) for w, totals in SPARK_43]
    assert seen == expected
    emitted = {
        b.batch: [r["n"] for rel, r in b.rows if rel == "per_window"]
        for b in ran.batches
        if any(rel == "per_window" for rel, _ in b.rows)
    }
    assert emitted == {5: [2, 1], 7: [1]}


def test_diff_says_the_watermark_changes() -> None:
    from sjoin.compiler.describe.diff import diff_plans

    new = spec()
    old = check_text(
        HEAD.format(spark="4.3", setting="", wl=WATERMARK, wr=WATERMARK).replace(
            " watermark lt delay 30 seconds", ""
        ),
        "old.sjoin",
    )
    assert old.plan is not None and new.plan is not None
    found = diff_plans(old.plan, new.plan)
    (query,) = found.queries
    aggregate_diff = next(o for o in query.operators if o.kind == "aggregate")
    assert aggregate_diff.verdict == "differs"
    assert [r.topic for r in aggregate_diff.reasons] == ["watermark"]
    assert "from none to watermark lt delay 30 seconds" in aggregate_diff.reasons[0].detail
