"""``sjoin.verify`` without Spark (imports, normalisation, the diff) and ``sjoin verify``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.cli import main
from sjoin.verify import _first_batch_difference, normal_row, normal_value

from .scenarios import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]


def test_import_needs_no_pyspark() -> None:
    code = "import sys, sjoin.verify; print('pyspark' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_normal_values() -> None:
    assert normal_value(datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC)) == "2026-01-01T00:00:01Z"
    assert normal_value(datetime(2026, 1, 1, 0, 0, 1, 500, tzinfo=UTC)) == (
        "2026-01-01T00:00:01.000500Z"
    )
    assert normal_value(Decimal("10.50")) == "10.50"
    assert normal_value(date(2026, 2, 3)) == "2026-02-03"
    assert normal_value(float("nan")) == "NaN"
    assert normal_value(0.1 + 0.2) == 0.3
    spark_window = {
        "start": datetime(2026, 1, 1, tzinfo=UTC),
        "end": datetime(2026, 1, 1, 0, 0, 10, tzinfo=UTC),
    }
    runtime_window = {"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T00:00:10Z"}
    assert normal_row({"w": spark_window}) == normal_row({"w": runtime_window})


def _spark(batch_id: int, rows: list[dict[str, Any]], wm: str, total: int) -> Any:
    ops = [
        {
            "operatorName": "symmetricHashJoin",
            "numRowsTotal": total,
            "numRowsUpdated": 0,
            "numRowsRemoved": 0,
            "numRowsDroppedByWatermark": 0,
        }
    ]
    return SimpleNamespace(batch_id=batch_id, rows=rows, watermark=wm, state_operators=ops)


def _runtime(batch: int, rows: list[dict[str, Any]], wm: str, total: int) -> Any:
    op = {
        "relation": "j",
        "numRowsTotal": total,
        "numRowsUpdated": 0,
        "numRowsRemoved": 0,
        "numRowsDroppedByWatermark": 0,
    }
    return SimpleNamespace(
        batch=batch, rows=[("j", r) for r in rows], watermark=wm, progress={"operators": [op]}
    )


def test_first_difference_names_rows_and_metrics() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    spark = [
        _spark(0, [{"a": 1, "t": t}], "1970-01-01T00:00:00.000Z", 2),
        _spark(1, [{"a": 2, "t": t}, {"a": 3, "t": t}], "2026-01-01T00:00:00.000Z", 3),
    ]
    runtime = [
        _runtime(0, [{"a": 1, "t": "2026-01-01T00:00:00Z"}], "1970-01-01T00:00:00Z", 2),
        _runtime(1, [{"a": 2, "t": "2026-01-01T00:00:00Z"}], "2026-01-01T00:00:01Z", 4),
    ]
    diff = _first_batch_difference("j", ["j"], spark, runtime)
    assert diff is not None and diff.batch == 1
    assert diff.only_spark == [{"a": 3, "t": "2026-01-01T00:00:00Z"}]
    assert diff.only_runtime == []
    found = {m.what: (m.spark, m.runtime) for m in diff.metrics}
    assert found == {
        "watermark": ("2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01Z"),
        "j.numRowsTotal": (3, 4),
    }
    assert _first_batch_difference("j", ["j"], spark[:1], runtime[:1]) is None
    extra = _first_batch_difference("j", ["j"], spark[:1], runtime)
    assert extra is not None and extra.batch == 1 and "only in the runtime" in extra.detail


def test_cli_without_java_says_spark_is_needed(tmp_path: Path) -> None:
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    done = subprocess.run(
        [
            *(sys.executable, "-m", "sjoin.cli", "verify", str(EXAMPLES / "unpaid_orders.sjoin")),
            *("--trace", str(EXAMPLES / "unpaid_orders.trace.jsonl")),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "Spark is needed for verify: Java 17+ is needed" in done.stderr


def test_cli_usage_errors() -> None:
    runner = CliRunner()
    spec = str(EXAMPLES / "unpaid_orders.sjoin")
    trace = str(EXAMPLES / "unpaid_orders.trace.jsonl")
    done = runner.invoke(main, ["verify", spec, "--trace", trace, "--relation", "orders"])
    assert done.exit_code == 2 and "a stream" in done.output
    assert runner.invoke(main, ["verify", spec]).exit_code == 2  # --trace is required


def test_cli_bad_trace_and_bad_spec(tmp_path: Path) -> None:
    runner = CliRunner()
    trace = tmp_path / "bad.jsonl"
    trace.write_text('{"batch": 0, "stream": "orders", "row": {"order_id": "x"}}\n')
    done = runner.invoke(
        main, ["verify", str(EXAMPLES / "unpaid_orders.sjoin"), "--trace", str(trace)]
    )
    assert done.exit_code == 1 and "bad row" in done.output
    spec = tmp_path / "bad.sjoin"
    spec.write_text("join j = a x JOIN b y ON x.k = y.k\n")
    done = runner.invoke(main, ["verify", str(spec), "--trace", str(trace)])
    assert done.exit_code == 1


@pytest.mark.spark
def test_cli_agreement_text_and_json(spark: Any) -> None:
    runner = CliRunner()
    spec = str(EXAMPLES / "unpaid_orders.sjoin")
    trace = str(EXAMPLES / "unpaid_orders.trace.jsonl")
    done = runner.invoke(main, ["verify", spec, "--trace", trace, "--format", "json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["agree"] is True and report["queries"][0]["relation"] == "unpaid"
    done = runner.invoke(main, ["verify", spec, "--trace", trace])
    assert done.exit_code == 0 and "Spark and the runtime agree" in done.output


@pytest.mark.spark
def test_cli_reports_a_difference(spark: Any) -> None:
    """ad_attribution targets Spark 4.0: its numRowsRemoved differs from local 4.3's."""
    runner = CliRunner()
    spec = str(EXAMPLES / "ad_attribution.sjoin")
    trace = str(EXAMPLES / "ad_attribution.trace.jsonl")
    done = runner.invoke(main, ["verify", spec, "--trace", trace])
    assert done.exit_code == 1
    assert "first difference in batch 5" in done.output
    assert "attributed.numRowsRemoved: Spark 6, runtime 4" in done.output
    assert "targets Spark 4.0 but Spark 4.3.0 ran the job" in done.output
