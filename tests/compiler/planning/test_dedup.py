"""`dedup NAME = REL ON (cols) [WITHIN WATERMARK]`: Spark's dropDuplicates and
dropDuplicatesWithinWatermark through every stage sjoin has for it: the grammar and binder,
the plan's decisions (state key and value, eviction, late drops, watermark use), the
diagnostics (W001, E021, E022, E025, E027, E004, E032), `sjoin plan` text, JSON and Mermaid,
`sjoin diff`, the PySpark job, both engines and their checkpoints.

The Spark facts these tests rely on were seen on Spark 4.3.0 (the parity scenarios `dedup_*`
of tests/integration/parity/scenarios.py, compared batch by batch with `sjoin verify`): the first
row of a key in a batch passes; a key is removed when its event-time key column (or, within the
watermark, its first row's time plus the delay) is at or below the eviction watermark; late
rows are dropped on the input's event-time column whether or not it is a key; a no-data
batch runs whenever the watermark moves; Spark's text for WITHIN WATERMARK without a
watermark (AnalysisException on 4.3.0)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.checks.job_warnings import pipeline_refusals
from sjoin.compiler.describe.diagram import mermaid
from sjoin.compiler.describe.diff import diff_plans
from sjoin.compiler.describe.explain import plan_json, plan_text
from sjoin.compiler.planning.canonical import canonical_text
from sjoin.compiler.planning.plan import DedupNode, Plan
from sjoin.runtime import run, run_to_files
from sjoin.runtime.columnar.dedup import ColumnarDedup
from sjoin.runtime.query import ColumnarEngine
from sjoin.runtime.rows.dedup import DedupOperator

STREAM = "stream s (id BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds\n"


def _check(text: str, spark: str = "4.3") -> Any:
    return check_text(f"spark {spark}\n{text}", "dedup.sjoin")


def _plan(text: str, spark: str = "4.3") -> Plan:
    result = _check(text, spark)
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, errors
    return result.plan  # type: ignore[no-any-return]


def _dedup(plan: Plan, name: str = "d") -> DedupNode:
    node = plan.node(name)
    assert isinstance(node, DedupNode)
    return node


def _codes(text: str, spark: str = "4.3") -> list[str]:
    return [d.code for d in _check(text, spark).diagnostics]


# ------------------------------------------------------------------ the plan's decisions


def test_key_eviction_when_the_event_time_is_a_dedup_column() -> None:
    node = _dedup(_plan(STREAM + "dedup d = s ON (id, t)\n"))
    assert node.keys == ("id", "t")
    assert [(c.name, c.type.name) for c in node.state.key] == [("id", "bigint"), ("t", "timestamp")]
    assert node.state.value == ()
    assert (node.state.eviction, node.state.column, node.state.offset_ms) == ("key", "t", 0)
    assert node.late_column == "t"
    assert [c.name for c in node.columns] == ["id", "t", "v"]
    assert node.columns[1].event_time  # the mark passes through


def test_within_watermark_stores_the_expiry() -> None:
    node = _dedup(_plan(STREAM + "dedup d = s AS x ON (id) WITHIN WATERMARK\n"))
    assert node.within_watermark
    assert [(c.name, c.type.name) for c in node.state.value] == [("expiresAtMicros", "bigint")]
    assert (node.state.eviction, node.state.column, node.state.offset_ms) == ("expiry", "t", 5000)


def test_never_evicted_without_the_event_time_among_the_keys_is_w001() -> None:
    result = _check(STREAM + "dedup d = s ON (id)\n")
    node = _dedup(result.plan)
    assert node.state.eviction == "never"
    assert "`t` is not among (id)" in str(node.state.reason)
    (w,) = [d for d in result.diagnostics if d.code == "W001"]
    assert "dedup `d` is never evicted" in w.message
    assert node.late_column == "t"  # late rows are still dropped on it


def test_without_any_watermark() -> None:
    result = _check("stream s (id BIGINT, t TIMESTAMP)\ndedup d = s ON (id, t)\n")
    node = _dedup(result.plan)
    assert node.late_column is None and node.state.eviction == "never"
    assert "carries no watermark" in str(node.state.reason)
    assert [d.code for d in result.diagnostics] == ["W001"]


def test_within_watermark_without_a_watermark_is_spark_s_refusal() -> None:
    result = _check("stream s (id BIGINT, t TIMESTAMP)\ndedup d = s ON (id) WITHIN WATERMARK\n")
    (e,) = [d for d in result.diagnostics if d.code == "E021"]
    assert (
        "dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets "
        "without watermark" in e.message
    )
    assert not result.ok


@pytest.mark.parametrize("spark", ["3.3", "3.4"])
def test_within_watermark_before_3_5_is_e027(spark: str) -> None:
    result = _check(STREAM + "dedup d = s ON (id) WITHIN WATERMARK\n", spark)
    (e,) = [d for d in result.diagnostics if d.code == "E027"]
    assert "SPARK-42931" in e.message and f"Spark {spark}" in e.message


def test_unknown_column_and_repeated_columns() -> None:
    result = _check(STREAM + "dedup d = s ON (id, nope)\n")
    (e,) = result.diagnostics
    assert e.code == "E004" and "`s` has no column `nope`" in e.message
    assert _dedup(_plan(STREAM + "dedup d = s ON (id, t, id)\n")).keys == ("id", "t")


def test_unknown_relation_and_a_dedup_read_again() -> None:
    assert _codes("dedup d = nowhere ON (id)\n") == ["E003"]
    plan = _plan(STREAM + "dedup d = s ON (id, t)\ndedup e = d ON (v, t)\n")
    e = _dedup(plan, "e")
    assert e.input == "d" and e.state.eviction == "key"
    assert plan.inputs_of("e") == (("input", "d"),)
    assert [n.name for n in plan.walk("e")] == ["s", "d", "e"]
    assert [n.name for n in plan.stateful_operators("e")] == ["e", "d"]


JOIN = """stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
join j = l AS L LEFT OUTER JOIN r AS R
    ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
    SELECT L.k AS k, L.t AS lt, R.v AS rv
dedup d = j ON (k, lt)
"""


@pytest.mark.parametrize(
    ("spark", "codes"),
    [("3.3", ["E022"]), ("3.4", ["E022"]), ("3.5", []), ("4.3", [])],
)
def test_a_dedup_after_a_join_follows_spark_s_chain_rules(spark: str, codes: list[str]) -> None:
    """Spark's checkStreamingQueryGlobalWatermarkLimit judges a Deduplicate as any stateful
    operator (3.3: after an outer join; 3.4: after a time-interval join; 3.5+: allowed)."""
    assert _codes(JOIN, spark) == codes


def test_a_dedup_after_a_join_uses_the_propagated_watermark_and_keeps_its_delay() -> None:
    plan = _plan(JOIN.replace("ON (k, lt)", "ON (k) WITHIN WATERMARK"))
    node = _dedup(plan)
    assert node.watermarks.late_rows.source == "propagated"
    assert node.watermarks.output == "input"
    assert (node.state.column, node.state.offset_ms) == ("lt", 10000)  # l's delay


def test_two_event_time_columns_on_its_input_is_e025() -> None:
    text = JOIN.replace("R.v AS rv", "R.t AS rt").replace("LEFT OUTER", "INNER")
    assert "E025" in _codes(text)


def test_a_dedup_before_a_join() -> None:
    text = STREAM.replace("stream s", "stream o") + (
        "stream p (id BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds\n"
        "dedup o1 = o ON (id, t)\n"
        "dedup p1 = p ON (id) WITHIN WATERMARK\n"
        "join j = o1 AS a INNER JOIN p1 AS b ON a.id = b.id "
        "AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE\n"
    )
    plan = _plan(text)
    checks = {c.name: c.verdict for c in plan.checks}
    assert checks == {"global watermark: o1 -> j": "ok", "global watermark: p1 -> j": "ok"}
    assert [n.name for n in plan.stateful_operators("j")] == ["j", "o1", "p1"]


# ------------------------------------------------------------------ what `sjoin plan` shows


def test_plan_text_and_json() -> None:
    plan = _plan(STREAM + "dedup d = s AS x ON (id) WITHIN WATERMARK\n")
    text = plan_text(plan)
    assert "dedup d = s AS x ON (id) WITHIN WATERMARK" in text
    assert "state value      expiresAtMicros BIGINT" in text
    assert "expiresAtMicros = t + 5 seconds" in text
    (d,) = plan_json(plan, [])["dedups"]
    assert d["spark_method"] == "dropDuplicatesWithinWatermark"
    assert d["state"]["eviction"] == "expiry" and d["state"]["offset_ms"] == 5000
    assert d["watermarks"]["output"] == "input"  # Spark 3.5+: its input watermark, as it is
    assert d["late_column"] == "t"


def test_a_plan_without_a_dedup_has_no_dedups_key() -> None:
    plan = _plan(JOIN.replace("dedup d = j ON (k, lt)\n", ""))
    assert "dedups" not in plan_json(plan, [])


def test_mermaid_and_canonical_identity() -> None:
    one = _plan(STREAM + "dedup d = s ON (id, t)\n")
    other = _plan(STREAM + "dedup d = s ON (id)\n")
    chart = mermaid(one)
    assert 'n1[["d\ndedup\nevict t #lt;= watermark"]]' in chart
    assert 'n0 -- "on id, t" --> n1' in chart
    assert canonical_text(one) != canonical_text(other)


def test_diff_of_a_changed_dedup_key() -> None:
    old = _plan(STREAM + "dedup d = s ON (id, t)\nsink d to parquet (path = 'o') checkpoint 'c'\n")
    same_types = _plan(
        STREAM + "dedup d = s ON (id, t)\nsink d to parquet (path = 'o') checkpoint 'c'\n"
    )
    new_key = _plan(
        STREAM + "dedup d = s ON (v, t)\nsink d to parquet (path = 'o') checkpoint 'c'\n"
    )
    within = _plan(
        STREAM + "dedup d = s ON (id) WITHIN WATERMARK\n"
        "sink d to parquet (path = 'o') checkpoint 'c'\n"
    )
    (q,) = diff_plans(old, same_types).queries
    assert q.verdict == "resumes"
    (q,) = diff_plans(old, new_key).queries
    assert q.verdict == "fails" and q.error == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    plain = "dedup d = s ON (id)\nsink d to parquet (path = 'o') checkpoint 'c'\n"
    (q,) = diff_plans(_plan(STREAM + plain), within).queries
    # 4.x: the state metadata names the operator dedupe, now dedupeWithinWatermark (seen on
    # Spark 4.3.0: tests/compiler/describe/diff/test_pipeline_restarts_spark.py)
    assert q.verdict == "fails"
    assert q.error == "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
    # 3.5 has no state metadata: the value schema check fails first
    within_35 = STREAM + "dedup d = s ON (id) WITHIN WATERMARK\n"
    within_35 += "sink d to parquet (path = 'o') checkpoint 'c'\n"
    (q,) = diff_plans(_plan(STREAM + plain, "3.5"), _plan(within_35, "3.5")).queries
    assert q.verdict == "fails" and q.error == "StateSchemaNotCompatible"


# ------------------------------------------------------------------ back ends


def test_the_pyspark_job_calls_spark_s_method_with_escaped_names() -> None:
    plan = _plan(
        "stream s (`it's` BIGINT, t TIMESTAMP) watermark t delay 5 seconds\n"
        "dedup d = s ON (`it's`) WITHIN WATERMARK\n"
        "dedup e = s ON (`it's`, t)\n"
    )
    job = compile_pyspark(plan)
    assert """rels["d"] = rels["s"].dropDuplicatesWithinWatermark(["it's"])""" in job
    assert """rels["e"] = rels["s"].dropDuplicates(["it's", "t"])""" in job
    compile(job, "job.py", "exec")


def test_the_pipeline_target_writes_a_dedup_as_a_python_flow() -> None:
    from sjoin.compiler.backends.pipeline import compile_pipeline, pipeline_notes

    plan = _plan(STREAM + "dedup d = s ON (id, t)\n")
    assert not [d for d in pipeline_refusals(plan) if "dedup" in d.message]
    module = compile_pipeline(plan, "p", "file:///p", "p.sjoin")["transformations/pipeline.py"]
    assert '.dropDuplicates(["id", "t"])' in module and '@dp.table(name="d")' in module
    (note,) = pipeline_notes(plan)
    assert "`d` is dropDuplicates" in note and "Python flow" in note


# ------------------------------------------------------------------ both engines

TRACE = [
    # two rows of key (1, 10 s) in one batch: the first ("a") passes
    {"batch": 0, "stream": "s", "row": {"id": 1, "t": "2024-01-01T00:00:10Z", "v": "a"}},
    {"batch": 0, "stream": "s", "row": {"id": 1, "t": "2024-01-01T00:00:10Z", "v": "b"}},
    {"batch": 0, "stream": "s", "row": {"id": 2, "t": "2024-01-01T00:00:12Z", "v": "c"}},
    {"batch": 1, "stream": "s", "row": {"id": 1, "t": "2024-01-01T00:00:10Z", "v": "e"}},
    {"batch": 1, "stream": "s", "row": {"id": 3, "t": "2024-01-01T00:00:30Z", "v": "f"}},
    {"batch": 2, "stream": "s", "row": {"id": 2, "t": "2024-01-01T00:00:12Z", "v": "g"}},
    {"batch": 2, "stream": "s", "row": {"id": 4, "t": "2024-01-01T00:00:40Z", "v": "h"}},
]


def _batches(plan: Plan, engine: str) -> list[Any]:
    result = run(plan, TRACE, engine=engine)  # type: ignore[arg-type]
    return [(b.batch, b.watermark, b.rows, b.progress) for b in result.batches]


@pytest.mark.parametrize("within", [False, True])
def test_both_engines_run_it_columnar_and_agree(within: bool) -> None:
    spec = "dedup d = s ON (id) WITHIN WATERMARK\n" if within else "dedup d = s ON (id, t)\n"
    plan = _plan(STREAM + spec)
    engine = ColumnarEngine(plan, None)
    assert engine.fallbacks == {}
    assert isinstance(engine.queries[0].operators["d"], ColumnarDedup)
    reference = _batches(plan, "reference")
    assert _batches(plan, "columnar") == reference
    rows = [[r["v"] for _, r in b[2]] for b in reference]
    assert rows[0] == ["a", "c"]  # the first of a key in input order
    metrics = [b[3]["operators"][0] for b in reference]
    # batch 1 (no data): the watermark moved to 7 s; batch 2: (1, 10 s) is a duplicate
    assert [m["numRowsUpdated"] for m in metrics] == [2, 0, 1, 0, 1, 0]
    # batch 3 (no data, watermark 25 s): the keys of 10 s and 12 s (expiring at 15 s and
    # 17 s within the watermark) leave; batch 4: (2, 12 s) is late; batch 5 (no data,
    # watermark 35 s): the key of 30 s leaves (30 s <= 35 s, or 30 s + 5 s <= 35 s)
    assert [m["numRowsRemoved"] for m in metrics] == [0, 0, 0, 2, 0, 1]
    assert [m["numRowsDroppedByWatermark"] for m in metrics] == [0, 0, 0, 0, 1, 0]


def test_a_floating_key_runs_on_the_reference_operator_with_its_reason() -> None:
    plan = _plan("stream s (x DOUBLE, t TIMESTAMP) watermark t delay 5 seconds\n"
                 "dedup d = s ON (x, t)\n")  # fmt: skip
    engine = ColumnarEngine(plan, None)
    assert engine.fallbacks == {"d": "dedup column `x` is DOUBLE: floating keys are not columnar"}
    assert isinstance(engine.queries[0].operators["d"], DedupOperator)


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_a_killed_run_resumes_from_its_checkpoint(engine: str, tmp_path: Path) -> None:
    """Each batch's state is checkpointed (the snapshot's shape checked on restore); a run
    stopped after its first batches continues as one that never stopped."""
    import io

    plan = _plan(STREAM + "dedup d = s ON (id) WITHIN WATERMARK\n")
    whole = tmp_path / "whole.out"
    run_to_files(plan, TRACE, output=whole, engine=engine, stderr=io.StringIO())  # type: ignore[arg-type]
    part = tmp_path / "part.out"
    checkpoint = tmp_path / "chk"
    run_to_files(
        plan,
        TRACE[:5],
        output=part,
        checkpoint=checkpoint,
        engine=engine,  # type: ignore[arg-type]
        stderr=io.StringIO(),
    )
    run_to_files(
        plan,
        TRACE,
        output=part,
        checkpoint=checkpoint,
        engine=engine,  # type: ignore[arg-type]
        stderr=io.StringIO(),
    )
    assert part.read_bytes() == whole.read_bytes()


def test_fmt_writes_it_back_and_the_pipeline_sql_refuses_it() -> None:
    from sjoin.compiler.backends.pipeline import pipeline_sql
    from sjoin.compiler.frontend.unparse import spec_text
    from sjoin.compiler.vocabulary.sjointext import Unwritable

    text = STREAM + "dedup d = s AS x ON (id) WITHIN WATERMARK\ndedup e = d ON (id, t)\n"
    result = _check(text)
    again = spec_text(result.spec)
    assert "dedup d = s AS x ON (id) WITHIN WATERMARK" in again
    assert "dedup e = d ON (id, t)" in again
    assert canonical_text(check_text(again, "again.sjoin").plan) == canonical_text(result.plan)
    with pytest.raises(Unwritable, match="dedup `d` has no pipeline SQL"):
        pipeline_sql(result.plan, "dedup.sjoin")


def test_a_syntax_error_in_a_dedup_is_located() -> None:
    result = _check(STREAM + "dedup d = s ON id\n")
    (e,) = result.diagnostics
    assert e.code == "E001" and "expected `(`" in e.message


def test_plan_rates_predicts_a_dedup() -> None:
    """tests/cli/test_capacity_dedup.py holds the model; here: it is one of the operators."""
    from sjoin.compiler.describe.capacity import predict

    plan = _plan(STREAM + "dedup d = s ON (id, t)\n")
    (op,) = predict(plan, {"s": 10.0}).operators
    assert op.kind == "dedup" and op.bounded and op.rows is not None
