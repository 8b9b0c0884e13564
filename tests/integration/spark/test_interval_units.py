"""Every interval sjoin writes into generated code is one Spark's parser reads, and means the
length sjoin planned with (issue 35, item 1), checked on Spark 4.3 with its own parser.

sjoin reads more unit spellings than Spark (`ms`, `sec`, `secs`, `min`, `mins`, in any case)
and a fraction of any unit (`INTERVAL 1.5 HOURS`), where Spark's interval grammar takes only
its unit words and a fraction only of seconds (`INVALID_INTERVAL_FORMAT.INVALID_FRACTION`).
For each spelling sjoin reads, whole and with a fraction:

- the .sjoin front end: the spec's join condition, as the PySpark job writes it
  (``condition_literal``) and as the pipeline SQL writes it (``sjoin fmt --to sql`` and
  ``compile --target pipeline``): every statement parses with Spark's parser, and every
  interval literal evaluates on Spark to the microseconds the binder computed; the window
  duration the job and the pipeline write runs in Spark's window();
- the SQL front end: a pipeline that writes the unit as Spark reads it is accepted by sjoin
  and by Spark's parser, and the job compiled from it parses and has the same length; one
  that writes sjoin's abbreviation (or a fraction of minutes) is refused by both.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_pipeline, check_text
from sjoin.compiler.backends.pipeline import compile_pipeline, pipeline_sql
from sjoin.compiler.backends.pyspark import compile_pyspark, condition_literal
from sjoin.compiler.frontend.sqlparse import iter_statement_spans
from sjoin.compiler.vocabulary.types import MS_PER_UNIT, SPARK_UNIT_WORDS

pytestmark = pytest.mark.spark

SPELLINGS = sorted(MS_PER_UNIT)  # every unit word sjoin reads
AMOUNTS = ("30", "1.5")
_INTERVAL = re.compile(r"INTERVAL '([^']*)' ([A-Za-z]+)", re.IGNORECASE)
_WINDOW = re.compile(r"window\([^,]+, '([^']*)'\)")


def _micros(amount: str, unit: str) -> int:
    return int(Decimal(amount) * MS_PER_UNIT[unit.lower()] * 1000)


def _spec(amount: str, unit: str) -> str:
    return f"""
stream a (k BIGINT, t TIMESTAMP) watermark t delay {amount} {unit}
stream b (k BIGINT, t TIMESTAMP) watermark t delay 5 seconds
join j = a AS x INNER JOIN b AS y
    ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL {amount} {unit}
    SELECT x.k, x.t, window(x.t, '30 {unit}') AS w
"""


def _eval_interval(parser: Any, amount: str, unit: str) -> int:
    """The microseconds Spark's parser makes of ``INTERVAL 'amount' unit`` (raises on one it
    refuses)."""
    return int(str(parser.parseExpression(f"INTERVAL '{amount}' {unit}").eval(None)))


def _window_micros(spark: Any, duration: str) -> int:
    row = spark.sql(
        "SELECT unix_micros(w.end) - unix_micros(w.start) AS d FROM "
        f"(SELECT window(TIMESTAMP'2026-01-01 00:00:00', '{duration}') AS w)"
    ).collect()[0]
    return int(row["d"])


def _statements(text: str) -> list[str]:
    out = []
    for start, end in iter_statement_spans(text):
        statement = text[start:end]
        code = [line for line in statement.splitlines() if line.strip()]
        if code and not all(line.strip().startswith("--") for line in code):
            out.append(statement)
    return out


@pytest.mark.parametrize("amount", AMOUNTS)
def test_every_unit_sjoin_reads_reaches_spark_as_spark_reads_it(spark: Any, amount: str) -> None:
    parser = spark._jsparkSession.sessionState().sqlParser()
    for spelling in SPELLINGS:
        for unit in (spelling, spelling.upper()):
            result = check_text(_spec(amount, unit), "s.sjoin")
            assert result.ok, (unit, [d.message for d in result.diagnostics])
            plan = result.plan
            assert plan is not None
            want = _micros(amount, unit)
            join = plan.joins[0]
            # the PySpark job: its condition parses, and its interval has sjoin's length
            condition = eval(condition_literal(join.condition))  # a Python string literal
            parser.parseExpression(condition)
            found = _INTERVAL.findall(condition)
            assert len(found) == 1, condition
            assert _eval_interval(parser, *found[0]) == want, (unit, condition)
            job = compile_pyspark(plan, formatted=False)
            (duration,) = _WINDOW.findall(job)
            assert _window_micros(spark, duration) == _micros("30", unit), (unit, duration)
            # the pipeline SQL: fmt --to sql and compile --target pipeline
            texts = [pipeline_sql(plan, "s.sjoin")]
            files = compile_pipeline(plan, "p", "file:///tmp/p", formatted=False)
            texts += [text for path, text in files.items() if path.endswith(".sql")]
            for text in texts:
                for statement in _statements(text):
                    parser.parsePlan(statement)  # raises ParseException if Spark cannot read it
                for found_amount, found_unit in _INTERVAL.findall(text):
                    _eval_interval(parser, found_amount, found_unit)
                delays = [
                    _eval_interval(parser, m[1], m[2])
                    for m in re.finditer(r"DELAY OF INTERVAL (\S+) ([A-Z]+)", text)
                ]
                if delays:  # a watermark delay keeps whole milliseconds
                    assert want // 1000 * 1000 in delays, (unit, delays)
                for duration in _WINDOW.findall(text):
                    assert _window_micros(spark, duration) == _micros("30", unit)


_PIPELINE = """CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);
CREATE STREAMING TABLE j AS
SELECT x.k, x.t
FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 5 SECONDS AS x
INNER JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 5 SECONDS AS y
ON x.k = y.k AND y.t BETWEEN x.t AND x.t + {interval};
"""


def _sql_verdicts(spark: Any, tmp_path: Path, interval: str) -> tuple[bool, bool, Any]:
    """(sjoin accepts it, Spark's parser reads it, sjoin's result) for the pipeline whose join
    condition ends with ``interval``."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    text = _PIPELINE.format(interval=interval)
    path = tmp_path / "p.sql"
    path.write_text(text)
    result = check_pipeline(path)
    try:
        for statement in _statements(text):
            parser.parsePlan(statement)
        spark_reads = True
    except Exception as err:  # pyspark's class for Spark's error
        # ParseException, or IllegalArgumentException (INVALID_INTERVAL_FORMAT) for a fraction
        assert type(err).__name__ in ("ParseException", "IllegalArgumentException"), err
        spark_reads = False
    return result.ok, spark_reads, result


def test_the_sql_front_end_reads_the_units_spark_reads(spark: Any, tmp_path: Path) -> None:
    parser = spark._jsparkSession.sessionState().sqlParser()
    cases = []
    for word in sorted(SPARK_UNIT_WORDS - {"month", "months", "year", "years"}):
        for amount in ("30", "1.5"):
            cases += [f"INTERVAL {amount} {word.upper()}", f"INTERVAL '{amount} {word}'"]
    for spelling in sorted(set(MS_PER_UNIT) - SPARK_UNIT_WORDS):  # sjoin's own abbreviations
        cases += [f"INTERVAL 30 {spelling.upper()}", f"INTERVAL '30 {spelling}'"]
    agreed = 0
    for interval in cases:
        sjoin_ok, spark_ok, result = _sql_verdicts(spark, tmp_path, interval)
        if "microsecond" in interval.lower() and spark_ok:
            # sjoin counts time in whole milliseconds: 30 microseconds is its own refusal
            assert not sjoin_ok
            continue
        assert sjoin_ok == spark_ok, (interval, [d.message for d in result.diagnostics])
        agreed += 1
        if not sjoin_ok:
            codes = {d.code for d in result.diagnostics}
            assert codes & {"E001", "E014"}, (interval, codes)
            assert any(d.help for d in result.diagnostics if d.code in ("E001", "E014"))
            continue
        plan = result.plan
        condition = eval(condition_literal(plan.joins[0].condition))
        parser.parseExpression(condition)
        (found,) = _INTERVAL.findall(condition)
        user = parser.parseExpression(interval).eval(None)
        assert _eval_interval(parser, *found) == int(str(user)), (interval, condition)
    assert agreed >= 40
