"""What the SQL front end takes from Spark, checked on Spark 4.3 (one local session):

- a pipeline SQL file is split into statements where SDP splits it
  (``SqlGraphRegistrationContext.splitSqlTextBySemicolon``);
- a string literal's value is the one Spark's parser makes of it;
- every statement of the hand-written pipelines (tests/compiler/frontend/pipelines) parses with
  Spark's own parser (the pipeline statements and the WATERMARK clause included);
- Spark refuses a stream-stream LEFT ANTI JOIN and a window() in a join's ON, which the front
  end refuses (E033), and runs LEFT OUTER JOIN ... WHERE y.k IS NULL, which it reads as a left
  anti join;
- `verify` of a pipeline's SQL file: the runtime and the generated job agree on Spark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_pipeline
from sjoin.compiler.frontend.sqlparse import iter_statement_spans

from ...compiler.frontend.test_sqlparse import SPLITS, STRINGS, split

pytestmark = pytest.mark.spark

PIPELINES = sorted(
    (Path(__file__).resolve().parents[2] / "compiler" / "frontend" / "pipelines").glob("*.sql")
)


def test_statements_strings_and_grammar_are_sparks(spark: Any) -> None:
    jvm = spark._jvm
    context = jvm.java.lang.Class.forName(
        "org.apache.spark.sql.pipelines.graph.SqlGraphRegistrationContext$"
    )
    module = context.getField("MODULE$").get(None)
    types = spark._sc._gateway.new_array(jvm.java.lang.Class, 1)
    types[0] = jvm.java.lang.Class.forName("java.lang.String")
    method = context.getDeclaredMethod("splitSqlTextBySemicolon", types)
    method.setAccessible(True)
    for text in SPLITS:
        args = spark._sc._gateway.new_array(jvm.java.lang.Object, 1)
        args[0] = text
        found = method.invoke(module, args)
        assert [found.apply(i) for i in range(found.size())] == split(text), text
    parser = spark._jsparkSession.sessionState().sqlParser()
    for token, value in STRINGS.items():
        assert parser.parseExpression(token).eval(None).toString() == value, token
    for path in PIPELINES:
        text = path.read_text()
        for start, end in iter_statement_spans(text):
            statement = text[start:end]
            if statement.strip() and not all(
                line.strip().startswith("--") or not line.strip() for line in statement.splitlines()
            ):
                parser.parsePlan(statement)  # raises ParseException if Spark cannot read it


def _started(spark: Any, sql: str) -> str:
    """``ok``, or the first line of the error Spark gives when the query starts."""
    try:
        query = spark.sql(sql).writeStream.format("noop").start()
        query.stop()
    except Exception as err:
        return str(err).splitlines()[0]
    return "ok"


def test_the_joins_spark_refuses_and_runs(spark: Any) -> None:
    for name in ("sjoin_sql_a", "sjoin_sql_b"):
        stream = spark.readStream.format("rate").option("rowsPerSecond", 1).load()
        stream.selectExpr("value AS k", "timestamp AS t").createOrReplaceTempView(name)
    wm = "WATERMARK t DELAY OF INTERVAL 10 SECONDS"
    base = f"SELECT x.k FROM STREAM(sjoin_sql_a) {wm} AS x {{how}} STREAM(sjoin_sql_b) {wm} AS y"
    bounded = "ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 5 SECONDS"
    anti = _started(spark, base.format(how="LEFT ANTI JOIN") + " " + bounded)
    assert "LeftAnti joins with a streaming DataFrame/Dataset on the right" in anti
    window = base.format(how="JOIN") + (
        " ON x.k = y.k AND window(x.t, '10 seconds') = window(y.t, '10 seconds')"
    )
    assert _started(spark, window) != "ok"
    outer = base.format(how="LEFT JOIN") + f" {bounded} WHERE y.k IS NULL"
    assert _started(spark, outer) == "ok"


def test_verify_a_pipelines_sql_file(spark: Any, tmp_path: Path) -> None:
    from sjoin.jvm.verify import verify_spec

    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        '{"batch": 0, "stream": "a", "row": {"k": 1, "t": "2026-01-01T00:00:00Z"}}\n'
        '{"batch": 0, "stream": "b", "row": {"k": 1, "t": "2026-01-01T00:00:03Z"}}\n'
        '{"batch": 1, "stream": "a", "row": {"k": 2, "t": "2026-01-01T00:01:00Z"}}\n'
        '{"batch": 1, "stream": "b", "row": {"k": 2, "t": "2026-01-01T00:01:01Z"}}\n'
        '{"batch": 2, "stream": "b", "row": {"k": 1, "t": "2026-01-01T00:00:04Z"}}\n'
    )
    spec = check_pipeline(PIPELINES[[p.stem for p in PIPELINES].index("issue_example")])
    assert spec.ok
    report = verify_spec(spec, trace, spark=spark)
    assert report.agree, report.text()
