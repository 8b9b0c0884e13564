"""A pipeline that deduplicates its Kafka inputs before an interval join
(`dedup_payments.sjoin`): its plan (text and JSON) and its generated PySpark job, snapshotted;
the job is valid Python and calls Spark's own methods.  Its semantics are the parity
scenarios' `dedup_*` (tests/integration/parity/scenarios.py), checked on Spark 4.3.0."""

from __future__ import annotations

from pathlib import Path

from sjoin.api import check_file
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.describe.explain import plan_text

from ...conftest import PythonSnapshot

SPEC = Path(__file__).resolve().parent / "dedup_payments.sjoin"


def _result():  # type: ignore[no-untyped-def]
    result = check_file(SPEC)
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    assert not result.diagnostics  # every state is evicted, the chain is allowed
    return result


def test_plan_text_snapshot(text_snapshot) -> None:  # type: ignore[no-untyped-def]
    assert plan_text(_result().plan) == text_snapshot


def test_plan_json_snapshot(json_snapshot) -> None:  # type: ignore[no-untyped-def]
    data = _result().plan_json()
    assert [d["name"] for d in data["dedups"]] == ["orders_once", "payments_once"]
    assert data == json_snapshot


def test_job_snapshot(snapshot) -> None:  # type: ignore[no-untyped-def]
    code = compile_pyspark(_result().plan, "tests/compiler/backends/dedup_payments.sjoin")
    compile(code, SPEC.name, "exec")
    assert '.dropDuplicates(["order_id", "order_time"])' in code
    assert '.dropDuplicatesWithinWatermark(["payment_id"])' in code
    assert code == snapshot(extension_class=PythonSnapshot)
