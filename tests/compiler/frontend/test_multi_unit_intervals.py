"""Multi-unit intervals (Spark's `INTERVAL 3 MINUTES 30 SECONDS`) in a .sjoin spec: in
expressions and in a watermark's delay, one exact duration, the same as the pipeline SQL
front end reads (`INTERVAL 3 MINUTES 30 SECONDS`, `INTERVAL '3 minutes 30 seconds'`); what is
no fixed length (months), no whole number of milliseconds in an expression, negative, or no
unit is refused at the part of the user's text that makes it so.  Spark 4.3.0 reads these
forms (checked with spark.sql: `INTERVAL '1 hour -30 minutes'` is 30 minutes, a month among
days fails in an expression; withWatermark keeps a delay's milliseconds, dropping the
microseconds below them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import check_pipeline, check_text

SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP) watermark t delay {delay}
stream r (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
join j = l AS L JOIN r AS R ON L.k = R.k AND R.t BETWEEN L.t AND L.t + {interval}
  SELECT L.k AS k
"""


def _plan(interval: str, delay: str = "10 seconds"):  # type: ignore[no-untyped-def]
    result = check_text(SPEC.format(interval=interval, delay=delay), "iv.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    return result


@pytest.mark.parametrize(
    ("written", "single"),
    [
        ("INTERVAL 3 MINUTES 30 SECONDS", "INTERVAL 210 SECONDS"),
        ("INTERVAL '3' MINUTES '30' SECONDS", "INTERVAL 210 SECONDS"),
        ("INTERVAL 1 DAY 2 HOURS", "INTERVAL 26 HOURS"),
        ("INTERVAL 1 WEEK 1 DAY", "INTERVAL 8 DAYS"),
        ("INTERVAL 1 HOUR '-30' MINUTES", "INTERVAL 30 MINUTES"),
        ("INTERVAL 1.5 SECONDS 500 MS", "INTERVAL 2 SECONDS"),
        ("INTERVAL 1 SECOND 1000 MICROSECONDS", "INTERVAL 1001 MILLISECONDS"),
    ],
)
def test_a_multi_unit_interval_is_its_sum(written: str, single: str) -> None:
    many, one = _plan(written).plan_json(), _plan(single).plan_json()
    assert many["joins"][0]["state"] == one["joins"][0]["state"]
    assert many["joins"][0]["post_join_filter"] == one["joins"][0]["post_join_filter"]


def test_a_watermark_delay_of_several_units() -> None:
    """withWatermark's delay keeps milliseconds (Spark's getDelayMs: microseconds / 1000)."""
    for delay, ms in (
        ("3 minutes 30 seconds", 210_000),
        ("interval 1 minute 500 ms", 60_500),
        ("1 second 1500 microseconds", 1_001),
    ):
        (stream, _) = _plan("INTERVAL 1 MINUTE", delay).plan.streams
        assert stream.delay_ms == ms, delay


@pytest.mark.parametrize(
    ("interval", "code", "at"),
    [
        ("INTERVAL 1 MONTH 2 DAYS", "E013", "1 MONTH"),
        ("INTERVAL 2 DAYS 1 YEAR", "E013", "1 YEAR"),
        ("INTERVAL 1 SECOND 500 MICROSECONDS", "E014", "1 SECOND 500 MICROSECONDS"),
        ("INTERVAL '1' HOUR '-2' HOURS", "E014", "'1' HOUR '-2' HOURS"),
        ("INTERVAL 1 HOUR 3 FORTNIGHTS", "E014", "3 FORTNIGHTS"),
    ],
)
def test_what_is_no_duration_is_refused_at_its_part(interval: str, code: str, at: str) -> None:
    text = SPEC.format(interval=interval, delay="10 seconds")
    result = check_text(text, "bad.sjoin")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == [code], errors
    assert text[errors[0].span.start : errors[0].span.end] == at


def test_a_delay_with_months_is_refused_at_the_month() -> None:
    text = SPEC.format(interval="INTERVAL 1 MINUTE", delay="2 days 1 month")
    errors = [d for d in check_text(text, "m.sjoin").diagnostics if d.severity == "error"]
    assert [d.code for d in errors] == ["E013"]
    assert text[errors[0].span.start : errors[0].span.end] == "month"


@pytest.mark.parametrize(
    "sql_interval",
    ["INTERVAL 3 MINUTES 30 SECONDS", "INTERVAL '3 minutes 30 seconds'"],
)
def test_both_front_ends_read_the_same_duration(tmp_path: Path, sql_interval: str) -> None:
    sql = tmp_path / "p.sql"
    sql.write_text(
        "CREATE STREAMING TABLE l (k BIGINT, t TIMESTAMP);\n"
        "CREATE STREAMING TABLE r (k BIGINT, t TIMESTAMP);\n"
        "CREATE STREAMING TABLE j AS SELECT L.k AS k FROM STREAM(l) WATERMARK t DELAY OF "
        f"{sql_interval} AS L JOIN STREAM(r) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS R "
        f"ON L.k = R.k AND R.t BETWEEN L.t AND L.t + {sql_interval};\n",
        encoding="utf-8",
    )
    piped = check_pipeline(sql)
    assert piped.ok and piped.plan is not None, piped.diagnostics
    spec = _plan("INTERVAL 3 MINUTES 30 SECONDS", "3 minutes 30 seconds")
    assert spec.plan is not None
    assert piped.plan.joins[0].left.state == spec.plan.joins[0].left.state
    assert piped.plan.streams[0].delay_ms == spec.plan.streams[0].delay_ms == 210_000
