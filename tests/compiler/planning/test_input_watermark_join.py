"""A watermark defined on a join's output where a second join reads it (`j AS a watermark lt
delay 30 seconds INNER JOIN c ...`, a pipeline's `STREAM(v) WATERMARK lt DELAY OF ...` on a
join's view read by a join): Spark's withWatermark on that output, as for an aggregate
(tests/compiler/planning/test_input_watermark.py), through bind (the side's one event-time column),
the plan (the side's node, E034 per version and setting), its text and JSON, both back ends,
`fmt`, `sjoin diff` and both engines.

The Spark facts, seen on Spark 4.3.0: with `allowMultiple=true` the job runs batch 0 and fails
at the first batch whose watermark is above 0 with `Redefining watermark is disallowed. ...`
(tests/integration/spark/test_input_watermark_on_spark.py); with `false` it runs, batch by batch as
the runtime runs it (parity scenario `input_watermark_join_then_join`), and with no watermark
below the new node Spark runs it under the default too (parity scenario
`input_watermark_join_side_without_watermark_below`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sjoin.api import CheckResult, check_pipeline, check_text
from sjoin.compiler.backends.pipeline import pipeline_sql
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.frontend.unparse import spec_text
from sjoin.compiler.planning.plan import JoinNode
from sjoin.runtime import run

HEAD = """spark {spark}
{setting}
stream l (k BIGINT, t TIMESTAMP, v STRING) {mark}
stream r (k BIGINT, t TIMESTAMP, v STRING) {mark}
stream c (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds

join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt, R.t AS rt

join j2 = j AS a watermark lt delay 30 seconds INNER JOIN c AS C
    ON a.k = C.k AND a.lt BETWEEN C.t - INTERVAL 5 SECONDS AND C.t + INTERVAL 5 SECONDS
    SELECT a.k AS k, a.lt AS lt, a.rt AS rt, C.t AS ct
"""
WATERMARK = "watermark t delay 10 seconds"


def spec(spark: str = "4.3", allow: bool | None = False, watermarks: bool = True) -> CheckResult:
    setting = "" if allow is None else f"set allow_multiple_stateful_operators = {allow}".lower()
    text = HEAD.format(spark=spark, setting=setting, mark=WATERMARK if watermarks else "")
    return check_text(text, "rewatermark_join.sjoin")


def codes(result: CheckResult) -> list[str]:
    return [d.code for d in result.diagnostics if d.severity == "error"]


def upper(result: CheckResult, name: str = "j2") -> JoinNode:
    assert result.plan is not None
    found = result.plan.node(name)
    assert isinstance(found, JoinNode)
    return found


def test_the_side_carries_the_node_and_one_event_time_column() -> None:
    result = spec()
    assert codes(result) == [], [d.message for d in result.diagnostics]
    node = upper(result)
    mark = node.left.input_watermark
    assert mark is not None and (mark.column, mark.delay_ms) == ("lt", 30_000)
    assert node.right.input_watermark is None
    # `rt` lost its mark to the new node: `lt` is the side's one event-time column, and the
    # range on it evicts the side's state
    assert node.left.event_time_column == "lt"
    assert (node.left.state.eviction, node.left.state.column) == ("value", "lt")
    assert (node.right.state.eviction, node.right.state.column) == ("value", "t")
    for found in (node, upper(result, "j")):
        use = found.watermarks
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
    ],
)
def test_spark_refuses_it_above_another_watermark(
    spark: str, allow: bool | None, refused: bool
) -> None:
    result = spec(spark, allow)
    found = [d for d in result.diagnostics if d.code == "E034"]
    assert bool(found) == refused, [d.message for d in result.diagnostics]
    if refused:
        (d,) = found
        assert d.message.startswith("`j2` defines a watermark on `j`")
        assert "Redefining watermark is disallowed" in d.message
        assert result.source.snippet(d.span) == "watermark lt delay 30 seconds"
    elif spark != "3.4":  # (3.4 refuses the chain itself: E022, its global watermark check)
        assert codes(result) == [], [d.message for d in result.diagnostics]


def test_no_watermark_below_runs_with_the_default() -> None:
    result = spec(allow=None, watermarks=False)
    assert "E034" not in codes(result), [d.message for d in result.diagnostics]
    assert upper(result).left.input_watermark is not None


def test_a_watermark_on_a_stream_read_by_a_join_is_refused() -> None:
    setting = "set allow_multiple_stateful_operators = false"
    text = HEAD.format(spark="4.3", setting=setting, mark=WATERMARK).replace(
        "join j = l AS L INNER", "join j = l AS L watermark t delay 1 second INNER"
    )
    result = check_text(text, "stream_read.sjoin")
    (d,) = [d for d in result.diagnostics if d.code == "E034"]
    assert d.message == "a watermark on a read of the stream `l`"


def test_the_plan_says_it() -> None:
    result = spec()
    assert result.plan is not None
    text = plan_text(result.plan)
    assert "  left watermark   lt delay 30 seconds on j's output: a watermark node" in text
    assert "[ok] watermark on j in j2" in text
    data = plan_json(result.plan, [])
    first, second = data["joins"]
    assert second["sides"]["left"]["input_watermark"] == {"column": "lt", "delay_ms": 30_000}
    # only where defined: every other side reads as before
    assert "input_watermark" not in second["sides"]["right"]
    assert all("input_watermark" not in side for side in first["sides"].values())


def test_the_pyspark_job_calls_with_watermark_on_the_side() -> None:
    result = spec()
    assert result.plan is not None
    job = compile_pyspark(result.plan, "rewatermark_join.sjoin")
    assert 'left = rels["j"].withWatermark("lt", "30 seconds").alias("a")' in job
    assert "#   watermark lt delay 30 seconds on j" in job


def test_the_pipeline_writes_the_clause_and_reads_it_back(tmp_path: Path) -> None:
    result = spec()
    assert result.plan is not None
    sql = pipeline_sql(result.plan, "rewatermark_join.sjoin")
    assert "FROM STREAM(j) WATERMARK lt DELAY OF INTERVAL 30 SECONDS AS a" in sql
    path = tmp_path / "rewatermark_join.sql"
    path.write_text(sql, encoding="utf-8")
    again = check_pipeline(path)
    assert codes(again) == [], [d.message for d in again.diagnostics]
    read, written = upper(again).left.input_watermark, upper(result).left.input_watermark
    assert read is not None and written is not None
    assert (read.column, read.delay_ms) == (written.column, written.delay_ms)


def test_fmt_keeps_it() -> None:
    result = spec()
    assert result.spec is not None
    text = spec_text(result.spec)
    assert "join j2 = j AS a watermark lt delay 30 seconds INNER JOIN c AS C" in text
    again = check_text(text, "again.sjoin")
    assert codes(again) == []
    read, written = upper(again).left.input_watermark, upper(result).left.input_watermark
    assert read is not None and written is not None
    assert (read.column, read.delay_ms) == (written.column, written.delay_ms)


def _t(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"2026-01-01T00:{minutes:02d}:{rest:02d}Z"


TRACE = [
    {"batch": b, "stream": s, "row": {"k": k, "t": _t(t), "v": "x"}}
    for b, rows in enumerate(
        [
            [
                ("l", 1, 100),
                ("l", 2, 101),
                ("r", 1, 98),
                ("r", 2, 100),
                ("c", 1, 99),
                ("c", 2, 103),
            ],
            [("l", 4, 130), ("r", 4, 131), ("c", 4, 132)],
            [("l", 5, 200), ("l", 6, 198), ("r", 5, 200), ("c", 5, 201)],
            [("l", 8, 230), ("r", 8, 231), ("c", 8, 232), ("c", 9, 150)],
            [("r", 6, 201), ("c", 6, 202)],
        ]
    )
    for s, k, t in rows
]
# the watermark of each batch (seconds): the join output's node (max lt - 30 s) holds the
# global one back (71 s after batch 0, where the streams' nodes are at 90 s or more)
WATERMARKS = [0, 71, 71, 100, 100, 170, 170, 200, 200]


def _rows_by_batch(ran: Any, relation: str) -> dict[int, list[dict[str, Any]]]:
    """Each batch's output rows of ``relation``."""
    out: dict[int, list[dict[str, Any]]] = {}
    for b in ran.batches:
        out.setdefault(b.batch, []).extend(r for rel, r in b.rows if rel == relation)
    return out


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_both_engines_run_it(engine: str) -> None:
    result = spec()
    assert result.plan is not None
    ran = run(result.plan, TRACE, engine=engine)  # type: ignore[arg-type]
    seen = [b.watermark for b in ran.batches]
    assert seen == ["1970-01-01T00:00:00Z" if w == 0 else _t(w) for w in WATERMARKS]
    pairs = _rows_by_batch(ran, "j2")
    assert {b: [r["k"] for r in rows] for b, rows in pairs.items() if rows} == {
        0: [1, 2],
        2: [4],
        4: [5],
        6: [8],
    }
    # j emits k 6 (lt 198 s) in batch 8; at 200 s it is late for j2, which drops it, as it
    # drops the `c` row at 150 s in batch 6
    assert [r["k"] for r in _rows_by_batch(ran, "j")[8]] == [6]
    dropped = {
        (b.progress["batch"], op["relation"]): op["numRowsDroppedByWatermark"]
        for b in ran.batches
        for op in b.progress["operators"]
        if op["numRowsDroppedByWatermark"]
    }
    assert dropped == {(6, "j2"): 1, (8, "j2"): 1}


def test_diff_says_the_watermark_changes() -> None:
    from sjoin.compiler.describe.diff import diff_plans

    new = spec()
    old = check_text(
        HEAD.format(spark="4.3", setting="set allow_multiple_stateful_operators = false",
                    mark=WATERMARK).replace(" watermark lt delay 30 seconds", ""),
        "old.sjoin",
    )  # fmt: skip
    assert old.plan is not None and new.plan is not None
    (query,) = diff_plans(old.plan, new.plan).queries
    join_diff = next(o for o in query.operators if o.new == "j2")
    assert join_diff.verdict == "differs"
    assert "watermark" in [r.topic for r in join_diff.reasons]
    reason = next(r for r in join_diff.reasons if r.topic == "watermark")
    assert "from none to watermark lt delay 30 seconds" in reason.detail


# How far behind its input an operator's watermark runs counts the watermark defined on an
# output (`sjoin plan`'s results line, `plan --rates`, the diagram): the global watermark is
# the minimum of every node, so the 30 seconds of `lt`'s node, not the streams' 10, set it,
# for the operators above the node and, with one global watermark, below it too.
AGGREGATE = """spark 4.3
set allow_multiple_stateful_operators = false
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt, R.t AS rt
aggregate per_window = j AS a watermark lt delay 30 seconds
    GROUP BY window(a.lt, INTERVAL 10 SECONDS)
    SELECT window(a.lt, INTERVAL 10 SECONDS) AS w, count(*) AS n
"""


def test_the_plan_says_how_far_behind_the_aggregate_runs() -> None:
    result = check_text(AGGREGATE, "lag.sjoin")
    assert result.plan is not None
    text = plan_text(result.plan)
    assert (
        "  results          a window's groups come out 30 seconds after its end: the watermark "
        "runs 30 seconds behind the newest row of its input (the delay 30 seconds of the "
        "watermark on j's output, batches back to back)"
    ) in text
    # without the watermark on j's output, the streams' delay
    plain = check_text(AGGREGATE.replace(" watermark lt delay 30 seconds", ""), "plain.sjoin")
    assert plain.plan is not None
    assert "a window's groups come out 10 seconds after its end" in plan_text(plain.plan)


def test_plan_rates_counts_it_above_and_below_the_node() -> None:
    from sjoin.compiler.describe.capacity import capacity_text, predict

    result = check_text(AGGREGATE, "lag.sjoin")
    assert result.plan is not None
    lines = capacity_text(predict(result.plan, {"l": 10.0, "r": 10.0}, keys=100))
    text = "\n".join(lines)
    assert "kept until the watermark, 30 seconds behind the newest row, passes it" in text
    assert "a window's groups come out 30 seconds after its end" in text
    # the join below keeps its rows until the global watermark, held back by the node
    assert "10 rows/s kept 35 seconds 1 ms" in text
    joined = spec()
    assert joined.plan is not None
    rates = {"l": 10.0, "r": 10.0, "c": 10.0}
    text = "\n".join(capacity_text(predict(joined.plan, rates, keys=100)))
    assert text.count("kept 35 seconds 1 ms") == 3  # j's left side, both of j2's


def test_the_diagram_shows_the_node_and_when_windows_come_out() -> None:
    from sjoin.compiler.describe.diagram import mermaid

    result = check_text(AGGREGATE, "lag.sjoin")
    assert result.plan is not None
    diagram = mermaid(result.plan)
    assert "aggregate, append\na window's groups come out 30 seconds after its end" in diagram
    assert '-- "watermark lt - 30 seconds\ngroup by' in diagram
    joined = spec()
    assert joined.plan is not None
    assert '-- "a: a.k\nwatermark lt - 30 seconds\nevict a.lt' in mermaid(joined.plan)
