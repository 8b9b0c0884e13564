"""An aggregate's WHERE three ways (`aggregate_where.sjoin`): pushed into the LEFT OUTER join
that only it reads (Spark runs it as INNER, the one-side conjuncts below the join), split at a
stream's watermark node, and pushed below a union's inputs' watermark nodes.  Its plan (text
and JSON), its generated PySpark job and its pipeline SQL, snapshotted; the job is valid Python
and writes the WHERE where it is written, `.where` before `.groupBy`.  Its semantics are the
parity scenarios' `aggregate_where_*` (tests/integration/parity/scenarios.py), checked on Spark
4.3.0;
Spark's optimized plans are tests/integration/spark/test_aggregate_where_on_spark.py's."""

from __future__ import annotations

from pathlib import Path

from sjoin.api import check_file
from sjoin.compiler.backends.pipeline import pipeline_sql
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.describe.explain import plan_text

from ...conftest import PythonSnapshot

SPEC = Path(__file__).resolve().parent / "aggregate_where.sjoin"


def _result():  # type: ignore[no-untyped-def]
    result = check_file(SPEC)
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    assert not result.diagnostics
    return result


def test_plan_text_snapshot(text_snapshot) -> None:  # type: ignore[no-untyped-def]
    text = plan_text(_result().plan)
    assert "EliminateOuterJoin: `p.paid > 0`" in text
    assert "where pushed     into settled" in text
    assert text == text_snapshot


def test_plan_json_snapshot(json_snapshot) -> None:  # type: ignore[no-untyped-def]
    data = _result().plan_json()
    wheres = {a["name"]: a.get("where") for a in data["aggregates"]}
    assert wheres["paid_per_minute"]["pushed_into"] == "settled"
    assert wheres["paid_per_minute"]["filters_below_watermark"] == []
    assert wheres["big_orders"]["filters_below_watermark"] == ["o.amount > 100"]
    assert wheres["big_orders"]["pushed_into"] is None
    assert wheres["moves"]["filters_below_watermark"] == ["m.paid <> 0"]
    (join,) = data["joins"]
    assert join["executed_as"] == "inner"
    assert join["where"]["condition"] is None  # none written on the join
    assert join["where"]["eliminate_outer_join"]["to"] == "inner"
    (union,) = data["unions"]
    assert [n["filters_below"] for n in union["watermark_nodes"]] == [["m.paid <> 0"]] * 2
    assert data == json_snapshot


def test_job_snapshot(snapshot) -> None:  # type: ignore[no-untyped-def]
    code = compile_pyspark(_result().plan, "tests/compiler/backends/aggregate_where.sjoin")
    compile(code, SPEC.name, "exec")
    assert ".where(F.expr(\"s.paid > 0 AND s.status = 'ok'\"))\n        .groupBy(" in code
    assert code.count(".where(") == 3  # each aggregate's, none on the join (none written)
    assert code == snapshot(extension_class=PythonSnapshot)


def test_pipeline_sql_snapshot(text_snapshot) -> None:  # type: ignore[no-untyped-def]
    sql = pipeline_sql(_result().plan, "tests/compiler/backends/aggregate_where.sjoin")
    assert "FROM STREAM(settled) AS s\nWHERE s.paid > 0\n  AND s.status = 'ok'\nGROUP BY" in sql
    assert sql == text_snapshot
