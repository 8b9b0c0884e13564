"""The Spark facts behind reading a join's windowed side (lower.py, ``_windowed_side``) on
real Spark 4.3.  A side that adds its window with ``withColumn`` and keeps its time as it
is carries two event-time columns when the time reaches the join: the query fails at its
first batch with MULTIPLE_EVENT_TIME_COLUMNS (sjoin: E025 at the join).  When nothing after
the join reads the time, Spark prunes it below the join and the query runs, as the
runtime does.  With the time recomputed beside the window (the catalogue's `window_join`,
as `sjoin compile` writes it) the job runs (test_catalogue_verify.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_any
from sjoin.jvm.job_as_written import JobAsWritten
from sjoin.jvm.verify import verify_spec

from .test_catalogue_verify import JOBS, sample_trace

pytestmark = pytest.mark.spark

RECOMPUTE = """.withColumn(
        "reading_time", F.timestamp_micros(F.unix_micros("reading_time"))
    )"""


READ_TIME = """    F.col("t.celsius"),"""


def run_as_written(spark: Any, tmp_path: Path, text: str) -> tuple[list[str], Any]:
    """sjoin's errors for the job ``text`` and its run on Spark, its streams fed as those
    of `window_join`."""
    job = tmp_path / "window_join.py"
    job.write_text(text, encoding="utf-8")
    errors = [d.code for d in check_any(job).diagnostics if d.severity == "error"]
    twin = check_any(JOBS / "window_join.py")
    assert twin.ok and twin.plan is not None
    report = verify_spec(
        twin,
        sample_trace(twin.plan),
        spark=spark,
        make_runner=JobAsWritten.maker(spark, job, None),
    )
    return errors, report


def test_a_time_kept_beside_its_window_and_read_fails_the_first_batch(
    spark: Any, tmp_path: Path
) -> None:
    text = (JOBS / "window_join.py").read_text(encoding="utf-8")
    assert RECOMPUTE in text and READ_TIME in text
    kept = text.replace(RECOMPUTE, "").replace(
        READ_TIME, '    F.col("t.reading_time"),\n' + READ_TIME
    )
    errors, report = run_as_written(spark, tmp_path, kept)
    assert errors == ["E025"]  # the left side's: the select reads t.reading_time alone
    assert not report.agree
    assert "MULTIPLE_EVENT_TIME_COLUMNS" in report.text(), report.text()


def test_a_time_kept_beside_its_window_and_unread_is_pruned(spark: Any, tmp_path: Path) -> None:
    text = (JOBS / "window_join.py").read_text(encoding="utf-8")
    errors, report = run_as_written(spark, tmp_path, text.replace(RECOMPUTE, ""))
    assert errors == []
    assert report.agree, report.text()
    assert sum(q["rows"] for q in report.to_dict()["queries"]) > 0


def test_a_bare_window_name_on_both_sides_is_ambiguous(spark: Any) -> None:
    """What E006 for a bare window column name stands on (lower.py, ``_with_windows``;
    tests/compiler/frontend/pyspark/test_window_sides.py): Spark refuses it with
    AMBIGUOUS_REFERENCE, in a select after the join and in the join's condition, and reads
    `t.w` / `h.w` as each side's own."""
    from pyspark.errors import AnalysisException
    from pyspark.sql import functions as F

    def stream() -> Any:
        return (
            spark.readStream.format("rate")
            .load()
            .withColumnRenamed("value", "k")
            .withWatermark("timestamp", "5 seconds")
        )

    windowed = stream().withColumn("w", F.window("timestamp", "10 seconds")).alias("t")
    plain = stream().withColumn("w", F.lit("x")).alias("h")
    keys = F.col("t.k") == F.col("h.k")
    for build in (
        lambda: windowed.join(plain, keys).select("w"),
        lambda: windowed.join(plain, keys & F.col("w").isNotNull()),
    ):
        with pytest.raises(AnalysisException, match="AMBIGUOUS_REFERENCE"):
            _ = build().schema  # analysed
    fine = windowed.join(plain, keys).select(F.col("t.w").alias("a"), F.col("h.w").alias("b"))
    assert [f.dataType.simpleString() for f in fine.schema.fields] == [
        "struct<start:timestamp,end:timestamp>",
        "string",
    ]
