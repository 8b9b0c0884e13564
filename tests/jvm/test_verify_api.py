"""``sjoin.jvm.verify`` without Spark (imports, normalisation, the diff) and ``sjoin verify``."""

from __future__ import annotations

import dataclasses
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

from sjoin.api import check_file, check_text
from sjoin.cli.main import main
from sjoin.jvm.verify import (
    Difference,
    MetricDifference,
    VerifyReport,
    _first_batch_difference,
    like_local,
    normal_row,
    normal_value,
    verify,
    verify_spec,
)

from ..integration.parity.scenarios import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]


def test_import_needs_no_pyspark() -> None:
    code = "import sys, sjoin.jvm.verify; print('pyspark' in sys.modules)"
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
            *(
                sys.executable,
                "-m",
                "sjoin.cli.main",
                "verify",
                str(EXAMPLES / "unpaid_orders.sjoin"),
            ),
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
def test_cli_agreement_text_and_json(spark: Any, tmp_path: Path) -> None:
    runner = CliRunner()
    spec = str(EXAMPLES / "unpaid_orders.sjoin")
    # the example's first three batches: what is checked is the CLI's two formats (the
    # whole example verifies in tests/integration/parity/test_verify_examples.py)
    lines = (EXAMPLES / "unpaid_orders.trace.jsonl").read_text(encoding="utf-8").splitlines()
    first = [line for line in lines if line.strip() and json.loads(line)["batch"] < 3]
    assert 0 < len(first) < len(lines)
    trace = str(tmp_path / "first.trace.jsonl")
    Path(trace).write_text("\n".join(first) + "\n", encoding="utf-8")
    done = runner.invoke(main, ["verify", spec, "--trace", trace, "--format", "json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["agree"] is True and report["queries"][0]["relation"] == "unpaid"
    done = runner.invoke(main, ["verify", spec, "--trace", trace])
    assert done.exit_code == 0 and "Spark and the runtime agree" in done.output


@pytest.mark.spark
def test_a_version_difference_in_words(spark: Any) -> None:
    """ad_attribution as written (Spark 4.0) against local 4.3: 4.3 counts numRowsRemoved of
    an outer join differently, which `verify` (the plan as given) reports in words."""
    result = check_file(EXAMPLES / "ad_attribution.sjoin")
    assert result.plan is not None and str(result.plan.spark) == "4.0"
    report = verify(result.plan, EXAMPLES / "ad_attribution.trace.jsonl", spark=spark)
    assert not report.agree
    text = report.text()
    assert "note: the runtime follows Spark 4.0 but Spark 4.3.0 ran the job" in text
    assert (
        "query `attributed`: the first difference is in batch 5, in the state of `attributed`"
    ) in text
    assert (
        "  the join `attributed` removed 6 rows from its state in Spark, "
        "4 in the runtime (numRowsRemoved)"
    ) in text
    assert "(batch)" not in text


# ---------------------------------------------------------------- like with like


def test_like_local_keeps_a_spec_of_the_local_version() -> None:
    spec = check_file(EXAMPLES / "unpaid_orders.sjoin")  # spark 4.3
    same, note = like_local(spec, "4.3.0")
    assert same is spec and note == ""


def test_like_local_replans_for_the_local_version() -> None:
    spec = check_file(EXAMPLES / "ad_attribution.sjoin")  # spark 4.0
    again, note = like_local(spec, "4.3.0")
    assert again.ok and again.plan is not None and str(again.plan.spark) == "4.3"
    assert note == (
        "the spec targets Spark 4.0; comparing the runtime as Spark 4.3, the version that runs "
        "here "
        "(pass --spark 4.0 to run Spark 4.0 itself)"
    )
    assert [n.quirks for n in again.plan.joins] != [n.quirks for n in spec.plan.joins]  # type: ignore[union-attr]
    # planned with the version as a parameter: the text is the user's, so are the lines
    assert again.source.text == spec.source.text and str(again.spark) == "4.3"


def test_like_local_plans_a_spec_that_names_no_version() -> None:
    text = "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 second"
    spec = check_text(text)
    assert spec.ok
    again, note = like_local(spec, "3.5.6")
    assert again.source.text == text
    assert again.ok and again.plan is not None and str(again.plan.spark) == "3.5"
    assert "targets Spark 4.3; comparing the runtime as Spark 3.5" in note


def test_like_local_keeps_the_target_for_a_version_sjoin_does_not_model() -> None:
    spec = check_file(EXAMPLES / "unpaid_orders.sjoin")
    same, note = like_local(spec, "4.9.1")
    assert same is spec
    assert note.startswith("Spark 4.9.1 runs here, which sjoin does not model")
    assert "the runtime follows the spec's target, Spark 4.3" in note


def test_a_spec_the_local_version_rejects_is_reported_without_running() -> None:
    """checkout_funnel chains time-interval joins: Spark 3.4 rejects it (global watermark)."""
    spec = check_file(EXAMPLES / "checkout_funnel.sjoin")
    local = SimpleNamespace(version="3.4.4")  # never used as a session: nothing runs
    report = verify_spec(spec, EXAMPLES / "checkout_funnel.trace.jsonl", spark=local)
    assert not report.agree and not report.queries
    assert report.compared_as == "3.4" and report.target == "4.3"
    text = report.text()
    assert text.startswith(
        "the spec targets Spark 4.3, but Spark 3.4, the version that runs here, rejects it:\n"
    )
    assert "error[E022]" in text
    assert report.summary() == "nothing compared: the spec does not plan for Spark 3.4"
    assert report.to_dict()["rejected"] == report.rejected


# ---------------------------------------------------------------- the difference in words


def test_difference_in_words_rows_watermark_and_metrics() -> None:
    diff = Difference(
        "batch",
        3,
        only_spark=[{"k": 1, "v": "a"}],
        only_runtime=[{"k": 2, "v": "b"}, {"k": 3, "v": None}],
        metrics=[
            MetricDifference("watermark", "2026-01-01T00:00:10.000Z", "2026-01-01T00:00:00Z"),
            MetricDifference("j.numRowsTotal", 4, 3, "join"),
            MetricDifference("j.numRowsUpdated", 2, 1, "join"),
            MetricDifference("counts.numRowsRemoved", 1, 0, "aggregate"),
            MetricDifference("j.numRowsDroppedByWatermark", 1, 0, "join"),
        ],
    )
    assert diff.text("counts") == [
        "query `counts`: the first difference is in batch 3, in the output rows, the watermark "
        "and the state of `counts`, `j`",
        "  the watermark is 2026-01-01T00:00:10.000Z in Spark but 2026-01-01T00:00:00Z in the "
        "runtime",
        "  the join `j` holds 4 rows in its state after the batch in Spark, 3 in the runtime "
        "(numRowsTotal)",
        "  the join `j` wrote 2 rows to its state in Spark, 1 in the runtime (numRowsUpdated)",
        "  the aggregate `counts` removed 1 row from its state in Spark, 0 in the runtime "
        "(numRowsRemoved)",
        "  the join `j` dropped 1 late input row (behind the watermark) in Spark, 0 in the "
        "runtime (numRowsDroppedByWatermark)",
        "  1 row came out only in Spark:",
        '    {"k": 1, "v": "a"}',
        "  2 rows came out only in the runtime:",
        '    {"k": 2, "v": "b"}',
        '    {"k": 3, "v": null}',
    ]
    assert diff.to_dict()["summary"] == diff.summary()
    assert diff.to_dict()["metrics"][0]["text"].startswith("the watermark is")


def test_difference_in_words_only_rows() -> None:
    diff = Difference("batch", 0, only_spark=[{"k": 1}])
    assert diff.text("j") == [
        "query `j`: the first difference is in batch 0, in the output rows",
        "  1 row came out only in Spark:",
        '    {"k": 1}',
    ]


def test_difference_in_words_a_batch_only_one_engine_ran() -> None:
    spark = [_spark(0, [], "1970-01-01T00:00:00.000Z", 0), _spark(1, [{"a": 1}], "x", 0)]
    runtime = [_runtime(0, [], "1970-01-01T00:00:00Z", 0)]
    diff = _first_batch_difference("j", ["j"], spark, runtime)
    assert diff is not None
    assert diff.text("j") == [
        "query `j`: the first difference is in batch 1: it ran only in Spark (the runtime ran "
        "1 batch), with 1 output row",
        "  1 row came out only in Spark:",
        '    {"a": 1}',
    ]


def test_difference_in_words_operators_cleanup_and_errors() -> None:
    ops = MetricDifference("operators", ["symmetricHashJoin"], ["j", "counts"])
    assert ops.sentence() == (
        "Spark ran 1 stateful operator (symmetricHashJoin), the plan has 2 (j, counts)"
    )
    assert Difference("batch", 2, metrics=[ops]).summary() == (
        "the first difference is in batch 2, in the stateful operators"
    )
    cleanup = Difference(
        "state_cleanup",
        None,
        metrics=[
            MetricDifference(
                "j.left state cleanup",
                {"kind": "value", "value_ms": 90000},
                {"kind": "value", "value_ms": 89999},
            )
        ],
        detail="the executed plan's eviction watermark is 100000 ms",
    )
    assert cleanup.text("j") == [
        "query `j`: the executed plan's state cleanup differs from the plan",
        "  the executed plan's eviction watermark is 100000 ms",
        "  the executed plan evicts `j.left` state when its value <= 90000 ms, the plan says "
        "when its value <= 89999 ms",
    ]
    never = MetricDifference("j.right state cleanup", None, {"kind": "key", "value_ms": None})
    assert never.sentence() == (
        "the executed plan evicts `j.right` state when never (no state cleanup), the plan says "
        "when its key passes the watermark"
    )
    error = Difference("spark_error", None, detail="Spark failed where the runtime ran: X: y")
    assert error.text("j") == [
        "query `j`: Spark failed where the runtime ran",
        "  Spark failed where the runtime ran: X: y",
    ]


def test_report_text_says_which_query_differs() -> None:
    from sjoin.jvm.verify import QueryReport

    report = VerifyReport(
        queries=[
            QueryReport("a", "append", 3, 3, 2),
            QueryReport("b", "update", 3, 3, 1, difference=Difference("batch", 1, [{"k": 1}])),
        ],
        target="4.0",
        spark_version="4.3.0",
        compared_as="4.3",
        note="the spec targets Spark 4.0; comparing the runtime as Spark 4.3, the version "
        "that runs here",
    )
    lines = report.text().splitlines()
    assert lines[0].startswith("note: the spec targets Spark 4.0;")
    assert lines[1] == (
        "query `a` (append): 3 Spark batches, 3 runtime batches, 2 output rows: "
        "Spark and the runtime agree"
    )
    assert lines[2].endswith(": they DIFFER")
    assert lines[3] == "query `b`: the first difference is in batch 1, in the output rows"
    assert report.summary() == "Spark and the runtime differ on 1 of 2 queries"


CONF_SPEC = """\
spark 3.5
set multiple_watermark_policy = max
stream a(k BIGINT, t TIMESTAMP) watermark t delay 1 second
stream b(k BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = a AS x INNER JOIN b AS y ON x.k = y.k
  SELECT x.k, y.t
"""


def test_verify_sets_the_confs_the_plan_decided() -> None:
    """What Spark runs under is the plan's ``result_conf``, the planner's decision (every
    result-changing conf at the plan's value, set by the spec or not), never the settings
    worked out again: a plan whose field differs runs under the field."""
    plan = check_text(CONF_SPEC).plan
    assert plan is not None
    assert plan.result_conf["spark.sql.streaming.multipleWatermarkPolicy"] == "max"  # `set`
    assert plan.result_conf["spark.sql.streaming.statefulOperator.allowMultiple"] == "true"
    assert "spark.sql.shuffle.partitions" not in plan.result_conf  # layout, not results
    decided = dataclasses.replace(plan, result_conf={"spark.sql.session.timeZone": "UTC"})
    seen: list[dict[str, str]] = []

    def make_runner(plan: Any, folder: str) -> Any:
        def runner(root: str, mode: str, streams: Any, feeds: Any, confs: Any, tick: Any) -> Any:
            seen.append(dict(confs))
            raise RuntimeError("no Spark in this test")  # reported as Spark's failure

        return runner

    trace = ['{"stream": "a", "batch": 0, "row": {"k": 1, "t": "2026-01-01T00:00:00Z"}}']
    report = verify(decided, trace, spark=SimpleNamespace(version="3.5.9"), make_runner=make_runner)
    assert seen == [{"spark.sql.session.timeZone": "UTC"}]
    assert report.queries[0].difference is not None
    assert report.queries[0].difference.kind == "spark_error"
