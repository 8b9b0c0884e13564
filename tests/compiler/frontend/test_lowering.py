"""What each form of a pipeline's SQL becomes (compiler/frontend/sqllower.py): the .sjoin text of
the
AST the binder reads, statement by statement; and every refusal, with its code, its place and
why."""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import CheckResult, check_pipeline
from sjoin.compiler.frontend.unparse import statement

STREAMS = """CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP, s STRING);
CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP, s STRING);
"""
WA = "STREAM(a) WATERMARK t DELAY OF INTERVAL 1 SECOND"
WB = "STREAM(b) WATERMARK t DELAY OF INTERVAL 1 SECOND"
RANGE = "x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE"


def check(tmp_path: Path, sql: str, head: str = STREAMS) -> CheckResult:
    path = tmp_path / "p.sql"
    path.write_text(head + sql, encoding="utf-8")
    return check_pipeline(path)


def relations(result: CheckResult) -> list[str]:
    """The .sjoin text of every statement but the streams."""
    assert result.spec is not None
    return [statement(s) for s in result.spec.statements if not statement(s).startswith("stream")]


FORMS = {
    "inner join, WHERE: the join's WHERE": (
        f"CREATE STREAMING TABLE j AS SELECT x.k, y.s FROM {WA} AS x JOIN {WB} AS y ON {RANGE} "
        "WHERE x.s = 'a' OR y.s = 'b'",
        [
            "join j = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
            "    WHERE x.s = 'a' OR y.s = 'b'\n    SELECT x.k,\n           y.s"
        ],
    ),
    "left semi join, WHERE: the join's WHERE": (
        f"CREATE STREAMING TABLE j AS SELECT x.* FROM {WA} AS x LEFT SEMI JOIN {WB} AS y "
        f"ON {RANGE} WHERE x.s IS NOT NULL",
        [
            "join j = a AS x LEFT SEMI JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
            "    WHERE x.s IS NOT NULL\n    SELECT x.*"
        ],
    ),
    "outer join, WHERE: the join's WHERE (the planner's EliminateOuterJoin)": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x FULL JOIN {WB} y ON {RANGE} "
        "WHERE y.s = 'x' AND x.k > 0",
        [
            "join j = a AS x FULL OUTER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
            "    WHERE y.s = 'x'\n    AND x.k > 0\n    SELECT x.k"
        ],
    ),
    "a filter and projection of one stream: a view": (
        f"CREATE STREAMING TABLE v AS SELECT x.k, upper(x.s) AS u FROM {WA} AS x WHERE x.k > 0",
        [
            "view v =\n    SELECT x.k,\n           upper(x.s) AS u\n    FROM a AS x\n"
            "    WHERE x.k > 0"
        ],
    ),
    "a temporary view that keeps no state, joined": (
        f"CREATE TEMPORARY VIEW clean AS SELECT * FROM {WB} WHERE k > 0;\n"
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN STREAM(clean) y ON x.k = y.k",
        [
            "view clean =\n    SELECT *\n    FROM b\n    WHERE k > 0",
            "join j = a AS x INNER JOIN clean AS y\n    ON  x.k = y.k\n    SELECT x.k",
        ],
    ),
    "a flow by position of a SELECT DISTINCT: the table's names": (
        "CREATE STREAMING TABLE out (key BIGINT, time TIMESTAMP);\n"
        f"CREATE FLOW f AS INSERT INTO out SELECT DISTINCT k, t FROM {WA}",
        ["aggregate out = a\n    GROUP BY k, t\n    SELECT k AS key,\n           t AS time"],
    ),
    "a flow of one relation: a view named after its table": (
        "CREATE STREAMING TABLE out;\n"
        f"CREATE FLOW f AS INSERT INTO out SELECT k, t FROM {WA} WHERE s = 'x'",
        ["view out =\n    SELECT k,\n           t\n    FROM a\n    WHERE s = 'x'"],
    ),
    "WHERE before an aggregate: the aggregate's WHERE": (
        f"CREATE STREAMING TABLE c AS SELECT count(*) AS n FROM {WA} WHERE s = 'x' "
        "GROUP BY window(t, '1 minute')",
        [
            "aggregate c = a\n    WHERE s = 'x'\n    GROUP BY window(t, INTERVAL 1 MINUTE)\n"
            "    SELECT count(*) AS n",
        ],
    ),
    "UNION ALL of streams: a union": (
        f"CREATE STREAMING TABLE u AS SELECT * FROM {WA} UNION ALL SELECT * FROM {WB}",
        ["union u = a UNION ALL b"],
    ),
    "UNION ALL of derived relations: views, joins and aggregates the union reads": (
        f"CREATE STREAMING TABLE u AS SELECT k, t FROM {WA} WHERE s = 'x' UNION ALL "
        f"(SELECT y.k, y.t FROM {WA} x JOIN {WB} y ON {RANGE} UNION ALL SELECT k, t FROM {WB})",
        [
            "view u_1 =\n    SELECT k,\n           t\n    FROM a\n    WHERE s = 'x'",
            "join u_2 = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
            "    SELECT y.k,\n           y.t",
            "view u_3 =\n    SELECT k,\n           t\n    FROM b",
            "union u = u_1 UNION ALL u_2 UNION ALL u_3",
        ],
    ),
    "SELECT DISTINCT: an aggregate grouping by every column": (
        f"CREATE STREAMING TABLE d AS SELECT DISTINCT x.k, x.t FROM {WA} x",
        ["aggregate d = a AS x\n    GROUP BY x.k, x.t\n    SELECT x.k,\n           x.t"],
    ),
    "SELECT DISTINCT * of a stream: its declared columns": (
        f"CREATE STREAMING TABLE d AS SELECT DISTINCT * FROM {WA}",
        ["aggregate d = a\n    GROUP BY k, t, s\n    SELECT k,\n           t,\n           s"],
    ),
    "SELECT DISTINCT over a join: an aggregate of the join": (
        f"CREATE STREAMING TABLE d AS SELECT DISTINCT x.k, y.t FROM {WA} x JOIN {WB} y ON {RANGE}",
        [
            "join d_join = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
            "    SELECT x.k AS k,\n           y.t AS t",
            "aggregate d = d_join\n    GROUP BY d_join.k, d_join.t\n"
            "    SELECT d_join.k,\n           d_join.t",
        ],
    ),
    "a static table: a materialized view of files, joined in batch": (
        "CREATE MATERIALIZED VIEW dim (k BIGINT, seg STRING) AS SELECT * FROM "
        "parquet.`dim/customers`;\n"
        f"CREATE STREAMING TABLE e AS SELECT x.k, d.seg FROM {WA} x LEFT JOIN dim d "
        "ON x.k = d.k",
        [
            "table dim (\n    k    BIGINT,\n    seg  STRING\n)\n"
            "from parquet (path = 'dim/customers')",
            "join e = a AS x LEFT OUTER JOIN dim AS d\n    ON  x.k = d.k\n"
            "    SELECT x.k,\n           d.seg",
        ],
    ),
    "left anti join: LEFT OUTER + a right key IS NULL": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} AS x LEFT JOIN {WB} AS y ON {RANGE} "
        "WHERE y.k IS NULL",
        [
            "join j = a AS x LEFT ANTI JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n    SELECT x.k"
        ],
    ),
    "left anti join: LEFT OUTER + the right side's marker IS NULL": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} AS x LEFT JOIN "
        f"(SELECT k, t, TRUE AS m FROM {WB}) AS y ON {RANGE} WHERE y.m IS NULL",
        [
            "join j = a AS x LEFT ANTI JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n    SELECT x.k"
        ],
    ),
    "aggregate of a stream": (
        f"CREATE STREAMING TABLE c AS SELECT window(t, '1 minute') AS w, count(*) AS n "
        f"FROM {WA} GROUP BY window(t, '1 minute')",
        [
            "aggregate c = a\n    GROUP BY window(t, INTERVAL 1 MINUTE)\n"
            "    SELECT window(t, INTERVAL 1 MINUTE) AS w,\n           count(*) AS n"
        ],
    ),
    "no aliases: the relations' names": (
        "CREATE STREAMING TABLE j AS SELECT a.k FROM STREAM(a) JOIN STREAM b ON a.k = b.k",
        ["join j = a INNER JOIN b\n    ON  a.k = b.k\n    SELECT a.k"],
    ),
    "a flow by position: the table's column names": (
        "CREATE STREAMING TABLE out (key BIGINT, text STRING);\n"
        "CREATE FLOW f AS INSERT INTO out SELECT x.k, y.s FROM STREAM(a) x JOIN STREAM(b) y "
        "ON x.k = y.k",
        [
            "join out = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    SELECT x.k AS key,\n           y.s AS text"
        ],
    ),
    "an aggregate over a join in one query": (
        f"CREATE STREAMING TABLE c AS SELECT x.k, count(*) AS n, max(y.k) AS yk FROM {WA} x "
        f"JOIN {WB} y ON {RANGE} GROUP BY x.k, window(x.t, '1 minute')",
        [
            "join c_join = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
            "    SELECT x.k AS x_k,\n           y.k AS y_k,\n           x.t AS t",
            "aggregate c = c_join\n    GROUP BY c_join.x_k, window(c_join.t, INTERVAL 1 MINUTE)"
            "\n    SELECT c_join.x_k AS k,\n           count(*) AS n,\n"
            "           max(c_join.y_k) AS yk",
        ],
    ),
    "a chain through a temporary view, defined after its reader": (
        "CREATE STREAMING TABLE c AS SELECT v.k, count(*) AS n FROM STREAM(v) "
        "GROUP BY v.k, window(v.t, '1 minute');\n"
        f"CREATE TEMPORARY VIEW v AS SELECT x.k, x.t FROM {WA} x JOIN {WB} y ON {RANGE}",
        [
            "join v = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
            "    SELECT x.k,\n           x.t",
            "aggregate c = v\n    GROUP BY v.k, window(v.t, INTERVAL 1 MINUTE)\n"
            "    SELECT v.k,\n           count(*) AS n",
        ],
    ),
    "a watermark on a join's view, read by an aggregate": (
        "SET spark.sql.streaming.statefulOperator.allowMultiple = false;\n"
        f"CREATE TEMPORARY VIEW v AS SELECT x.k, x.t FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE STREAMING TABLE c AS SELECT count(*) AS n FROM STREAM(v) WATERMARK t DELAY "
        "OF INTERVAL 30 SECONDS AS z GROUP BY window(z.t, '1 minute')",
        [
            "set allow_multiple_stateful_operators = false",
            "join v = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n"
            "    SELECT x.k,\n           x.t",
            "aggregate c = v AS z watermark t delay 30 seconds\n"
            "    GROUP BY window(z.t, INTERVAL 1 MINUTE)\n    SELECT count(*) AS n",
        ],
    ),
    "a window key projected in subqueries": (
        "CREATE STREAMING TABLE j AS SELECT x.k, x.w AS win FROM "
        f"(SELECT k, timestamp_micros(unix_micros(t)) AS t, window(t, '10 seconds') AS w "
        f"FROM {WA}) AS x JOIN (SELECT k, window(t, '10 seconds') AS w FROM {WB}) AS y "
        "ON x.k = y.k AND x.w = y.w",
        [
            "join j = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND window(x.t, INTERVAL 10 SECONDS) = window(y.t, INTERVAL 10 SECONDS)\n"
            "    SELECT x.k,\n           window(x.t, INTERVAL 10 SECONDS) AS win"
        ],
    ),
    "settings: SET and -- sjoin: lines": (
        "-- sjoin: spark 4.1\n-- sjoin: set allow_unemitted_outer_rows = true\n"
        "SET spark.sql.shuffle.partitions = 4;\n"
        "SET spark.sql.streaming.stateStore.providerClass = "
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider;\n"
        f"-- sjoin: sink j to json (path = 'out/j')\n"
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON {RANGE}",
        [
            "spark 4.1",
            "set allow_unemitted_outer_rows = true",
            "set shuffle_partitions = 4",
            "set state_store = rocksdb",
            "join j = a AS x INNER JOIN b AS y\n    ON  x.k = y.k\n"
            "    AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE\n    SELECT x.k",
            "sink j to json (path = 'out/j')",
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_form(tmp_path: Path, name: str) -> None:
    sql, expected = FORMS[name]
    result = check(tmp_path, sql)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert not errors, [d.message for d in errors]
    assert relations(result) == expected


def test_streams_take_their_watermark_and_source_from_the_sql(tmp_path: Path) -> None:
    result = check(
        tmp_path,
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON {RANGE}",
        head="-- sjoin: from json (path = 'in/a')\n" + STREAMS,
    )
    assert result.ok and result.spec is not None
    streams = [statement(s) for s in result.spec.statements if statement(s).startswith("stream")]
    assert streams == [
        "stream a (\n    k  BIGINT,\n    t  TIMESTAMP,\n    s  STRING\n)\n"
        "watermark t delay 1 second\nfrom json (path = 'in/a')",
        "stream b (\n    k  BIGINT,\n    t  TIMESTAMP,\n    s  STRING\n)\n"
        "watermark t delay 1 second",
    ]


# ------------------------------------------------------------------ refusals

# (SQL after the two streams, the code, the text the diagnostic starts at, a message part)
REFUSALS = {
    "batch read of a stream": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN b y ON x.k = y.k",
        "E033", "b y", "read without STREAM",
    ),
    "streaming table read by a join": (
        f"CREATE STREAMING TABLE j AS SELECT x.k, x.t FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE STREAMING TABLE c AS SELECT count(*) AS n FROM STREAM(j) GROUP BY j.k",
        "E033", "j) GROUP", "second streaming query",
    ),
    "two watermarks for one stream": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE STREAMING TABLE j2 AS SELECT x.k FROM STREAM(a) WATERMARK t DELAY OF "
        f"INTERVAL 2 SECONDS x JOIN {WB} y ON {RANGE}",
        "E033", "WATERMARK t DELAY OF INTERVAL 2", "another watermark",
    ),
    "watermark on an expression": (
        "CREATE STREAMING TABLE j AS SELECT x.k FROM STREAM(a) WATERMARK t + INTERVAL 1 "
        f"SECOND AS t2 DELAY OF INTERVAL 1 SECOND x JOIN {WB} y ON {RANGE}",
        "E033", "t + INTERVAL 1", "a watermark on an expression",
    ),
    "watermark on a join's view, allowMultiple (Spark's default)": (
        f"CREATE TEMPORARY VIEW v AS SELECT x.k, x.t FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE STREAMING TABLE c AS SELECT count(*) AS n FROM STREAM(v) WATERMARK t DELAY "
        "OF INTERVAL 1 SECOND GROUP BY v.k, window(v.t, '1 minute')",
        "E034", "WATERMARK t DELAY OF INTERVAL 1 SECOND GROUP", "Redefining watermark",
    ),
    "watermark on an expression of a join's view": (
        f"CREATE TEMPORARY VIEW v AS SELECT x.k, x.t FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE STREAMING TABLE c AS SELECT count(*) AS n FROM STREAM(v) WATERMARK t + "
        "INTERVAL 1 SECOND AS t2 DELAY OF INTERVAL 1 SECOND GROUP BY v.k",
        "E033", "t + INTERVAL 1 SECOND AS", "a watermark on an expression",
    ),
    "watermark on a join's view read by a join": (
        f"CREATE TEMPORARY VIEW v AS SELECT x.k, x.t FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE STREAMING TABLE j2 AS SELECT z.k FROM STREAM(v) WATERMARK t DELAY OF "
        f"INTERVAL 1 SECOND AS z JOIN {WB} y ON z.k = y.k",
        "E034", "WATERMARK t DELAY OF INTERVAL 1 SECOND AS z", "Redefining watermark",
    ),
    "LEFT ANTI JOIN of streams": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x LEFT ANTI JOIN {WB} y ON {RANGE}",
        "E033", "LEFT ANTI", "no LEFT ANTI join of two streams",
    ),
    "window() in ON": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON x.k = y.k AND "
        "window(x.t, '1 minute') = window(y.t, '1 minute')",
        "E033", "window(x.t", "window() in a join's ON",
    ),
    "star over a projecting subquery": (
        f"CREATE STREAMING TABLE j AS SELECT * FROM (SELECT k, window(t, '1 minute') AS w "
        f"FROM {WA}) x JOIN {WB} y ON x.k = y.k",
        "E033", "*", "`*` over a subquery's columns",
    ),
    "a time column beside its window (two event-time columns)": (
        f"CREATE STREAMING TABLE j AS SELECT x.k, x.t FROM (SELECT *, window(t, '1 minute') AS w "
        f"FROM {WA}) x JOIN {WB} y ON x.k = y.k",
        "E025", "(SELECT *", "2 event-time columns",
    ),
    "a column the subquery does not project": (
        f"CREATE STREAMING TABLE j AS SELECT x.s FROM (SELECT k, window(t, '1 minute') AS w "
        f"FROM {WA}) x JOIN {WB} y ON x.k = y.k",
        "E004", "x.s", "has no column `s`",
    ),
    "computed column in a subquery": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM (SELECT k, upper(s) AS u FROM {WA}) x "
        f"JOIN {WB} y ON x.k = y.k",
        "E033", "upper(s) AS u", "a computed column in a subquery",
    ),
    "time recomputed without its window": (
        "CREATE STREAMING TABLE j AS SELECT x.k FROM (SELECT k, timestamp_micros(unix_micros(t))"
        f" AS t FROM {WA}) x JOIN {WB} y ON x.k = y.k",
        "E033", "(SELECT k", "recomputed without its window",
    ),
    "subquery with WHERE": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM (SELECT k, t FROM {WA} WHERE k > 0) x "
        f"JOIN {WB} y ON x.k = y.k",
        "E033", "(SELECT k", "a subquery with WHERE",
    ),
    "two joins in one query": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON x.k = y.k "
        f"JOIN {WB} z ON y.k = z.k",
        "E033", "JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 1 SECOND z", "more than one join",
    ),
    "cross join": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x CROSS JOIN {WB} y",
        "E033", "CROSS", "CROSS JOIN",
    ),
    "join without ON": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y",
        "E033", "JOIN STREAM(b)", "a join without ON",
    ),
    "comma join": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x, {WB} y",
        "E033", "FROM", "separated by commas",
    ),
    "USING": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y USING (k)",
        "E033", "USING (k)", "USING",
    ),
    "HAVING": (
        f"CREATE STREAMING TABLE c AS SELECT k, count(*) AS n FROM {WA} GROUP BY k "
        "HAVING count(*) > 1",
        "E033", "HAVING", "HAVING",
    ),
    "ORDER BY": (
        f"CREATE STREAMING TABLE c AS SELECT k, count(*) AS n FROM {WA} GROUP BY k ORDER BY k",
        "E033", "ORDER BY", "ORDER BY",
    ),
    "a count of distinct values": (
        f"CREATE STREAMING TABLE c AS SELECT count(DISTINCT s) AS n FROM {WA} GROUP BY k",
        "E033", "count(DISTINCT", "DISTINCT",
    ),
    "RLIKE": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON x.k = y.k "
        "AND x.s RLIKE 'a.*'",
        "E033", "x.s RLIKE", "RLIKE",
    ),
    "IS TRUE": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON x.k = y.k "
        "AND (x.k > 1) IS TRUE",
        "E033", "(x.k > 1) IS TRUE", "IS [NOT] TRUE",
    ),
    "interval of a month and a day": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON x.k = y.k "
        "AND y.t < x.t + INTERVAL 1 MONTH 1 DAY",
        "E033", "INTERVAL 1 MONTH 1 DAY", "no fixed length",
    ),
    "interval from unit to unit": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON x.k = y.k "
        "AND y.t < x.t + INTERVAL '1:30' HOUR TO MINUTE",
        "E033", "INTERVAL '1:30'", "from one unit to another",
    ),
    "table-valued function": (
        "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM read_files('/in', format => 'json')",
        "E033", "STREAM read_files", "table-valued function",
    ),
    "file read as a batch table": (
        "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM(json.`/in`)",
        "E033", "json.`/in`", "reads files as a batch table",
    ),
    "qualified name": (
        "CREATE STREAMING TABLE raw AS SELECT * FROM STREAM(db.a)",
        "E033", "db.a", "a qualified name",
    ),
    "NOT NULL column": (
        "CREATE STREAMING TABLE c (k BIGINT NOT NULL)",
        "E033", "NOT NULL", "NOT NULL",
    ),
    "generated column": (
        "CREATE STREAMING TABLE c (k BIGINT, d BIGINT GENERATED ALWAYS AS (k + 1))",
        "E033", "GENERATED", "generated column",
    ),
    "a view's column list": (
        f"CREATE TEMPORARY VIEW v (a, b) AS SELECT x.k, x.t FROM {WA} x JOIN {WB} y ON {RANGE}",
        "E033", "(a, b)", "column list",
    ),
    "a bare query": (
        "SELECT * FROM STREAM(a)",
        "E033", "SELECT *", "defines no dataset",
    ),
    "RESET": ("RESET spark.sql.shuffle.partitions", "E033", "RESET", "RESET"),
    "SET without a value": ("SET spark.sql.shuffle.partitions", "E033", "SET", "sets no conf"),
    "a conf set twice": (
        "SET spark.sql.shuffle.partitions = 4;\nSET spark.sql.shuffle.partitions = 5",
        "E033", "5", "two values",
    ),
    "a conf sjoin does not model": (
        "SET spark.sql.adaptive.enabled = false",
        "W011", "spark.sql.adaptive.enabled", "does not model the conf",
    ),
    "a flow into a view": (
        f"CREATE TEMPORARY VIEW v AS SELECT x.k FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE FLOW f AS INSERT INTO v SELECT * FROM STREAM(a)",
        "E033", "v SELECT", "writes a temporary view",
    ),
    "a flow into a table with a query": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE FLOW f AS INSERT INTO j SELECT * FROM STREAM(a)",
        "E033", "j SELECT", "has a query of its own",
    ),
    "two flows, one of them a join": (
        "CREATE STREAMING TABLE j (k BIGINT);\n"
        f"CREATE FLOW f1 AS INSERT INTO j SELECT x.k FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE FLOW f2 AS INSERT INTO j SELECT k FROM STREAM(b)",
        "E033", "f2", "written by 2 flows",
    ),
    "a flow's columns are not the table's": (
        "CREATE STREAMING TABLE j (k BIGINT, n BIGINT);\n"
        f"CREATE FLOW f AS INSERT INTO j BY NAME SELECT x.k, y.t FROM {WA} x JOIN {WB} y "
        f"ON {RANGE}",
        "E033", "SELECT x.k, y.t", "not the columns of `j`",
    ),
    "a flow into a table no SQL defines": (
        "CREATE FLOW f AS INSERT INTO nowhere SELECT * FROM STREAM(a)",
        "E003", "nowhere", "which the pipeline's SQL does not define",
    ),
    "a dataset defined twice": (
        "CREATE STREAMING TABLE a (k BIGINT)",
        "E002", "a (k BIGINT)", "defined twice",
    ),
    "a read of a materialized view": (
        f"CREATE MATERIALIZED VIEW m AS SELECT k FROM a;\n"
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN STREAM(m) y ON x.k = y.k",
        "E033", "m) y", "a materialized view",
    ),
    "a stateless table without columns": (
        f"CREATE STREAMING TABLE clean AS SELECT * FROM {WA};\n"
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN STREAM(clean) y ON x.k = y.k",
        "E033", "clean) y", "columns of `clean` are not known",
    ),
    "a UNION ALL in a subquery": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM (SELECT k, t FROM {WA} UNION ALL "
        f"SELECT k, t FROM {WB}) x JOIN {WB} y ON x.k = y.k",
        "E033", "(SELECT k, t", "a subquery of a UNION ALL",
    ),
    "SELECT DISTINCT in a subquery": (
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM (SELECT DISTINCT k, t FROM {WA}) x "
        f"JOIN {WB} y ON x.k = y.k",
        "E033", "(SELECT DISTINCT", "a subquery that joins or aggregates",
    ),
    "SELECT DISTINCT with GROUP BY": (
        f"CREATE STREAMING TABLE c AS SELECT DISTINCT k, count(*) AS n FROM {WA} GROUP BY k",
        "E033", "DISTINCT", "SELECT DISTINCT with GROUP BY",
    ),
    "SELECT DISTINCT * of a derived relation": (
        f"CREATE TEMPORARY VIEW v AS SELECT x.k, x.t FROM {WA} x JOIN {WB} y ON {RANGE};\n"
        "CREATE STREAMING TABLE d AS SELECT DISTINCT * FROM STREAM(v)",
        "E033", "*", "SELECT DISTINCT * of a relation",
    ),
    "SELECT DISTINCT without a watermark: Spark's append-mode aggregate error": (
        "CREATE STREAMING TABLE d AS SELECT DISTINCT k, s FROM STREAM(a)",
        "E023", "d AS SELECT", "without watermark",
    ),
    "UNION without ALL": (
        f"CREATE STREAMING TABLE u AS SELECT * FROM {WA} UNION SELECT * FROM {WB}",
        "E033", "UNION", "UNION (without ALL)",
    ),
    "UNION ALL of other columns (the binder's E035, at the branch)": (
        f"CREATE STREAMING TABLE u AS SELECT * FROM {WA} UNION ALL SELECT k, t FROM {WB}",
        "E035", "SELECT k, t", "has 2 columns",
    ),
    "a union's streaming table read by another query": (
        f"CREATE STREAMING TABLE u AS SELECT * FROM {WA} UNION ALL SELECT * FROM {WB};\n"
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x JOIN STREAM(u) y ON x.k = y.k",
        "E033", "u) y", "second streaming query",
    ),
    "a static table on the left of a LEFT OUTER join (Spark's E038)": (
        "CREATE MATERIALIZED VIEW dim (k BIGINT) AS SELECT * FROM parquet.`d`;\n"
        f"CREATE STREAMING TABLE e AS SELECT d.k FROM dim d LEFT JOIN {WA} x ON x.k = d.k",
        "E038", "LEFT", "LEFT OUTER join of a stream with a static table on the left",
    ),
    "a static table read with STREAM": (
        "CREATE MATERIALIZED VIEW dim (k BIGINT) AS SELECT * FROM parquet.`d`;\n"
        f"CREATE STREAMING TABLE e AS SELECT x.k FROM {WA} x JOIN STREAM(dim) d ON x.k = d.k",
        "E033", "STREAM(dim)", "static table (a materialized view of files) read with STREAM",
    ),
    "a watermark on a static table's read": (
        "CREATE MATERIALIZED VIEW dim (k BIGINT, t TIMESTAMP) AS SELECT * FROM parquet.`d`;\n"
        f"CREATE STREAMING TABLE e AS SELECT x.k FROM {WA} x JOIN dim WATERMARK t DELAY OF "
        "INTERVAL 1 SECOND d ON x.k = d.k",
        "E038", "WATERMARK t", "a watermark on a read of a table",
    ),
    "files read in a join": (
        f"CREATE STREAMING TABLE e AS SELECT x.k FROM {WA} x JOIN parquet.`dim` d ON x.k = d.k",
        "E033", "parquet.`dim` d", "files read in batch",
    ),
    "a cycle": (
        "CREATE TEMPORARY VIEW v1 AS SELECT x.k, x.t FROM STREAM(v2) x JOIN STREAM(b) y "
        "ON x.k = y.k;\n"
        "CREATE TEMPORARY VIEW v2 AS SELECT x.k, x.t FROM STREAM(v1) x JOIN STREAM(b) y "
        "ON x.k = y.k",
        "E033", "CREATE TEMPORARY VIEW v1", "reads itself",
    ),
    "a temporary view no table or flow reads": (
        f"CREATE TEMPORARY VIEW v AS SELECT x.k FROM {WA} x LEFT JOIN STREAM(b) y ON x.k = y.k",
        "W011", "v AS SELECT", "runs nowhere",
    ),
    "-- sjoin: from before no streaming table": (
        "-- sjoin: from json (path = 'x')\nCREATE TEMPORARY VIEW v AS SELECT * FROM STREAM(a)",
        "E033", "-- sjoin: from", "stands before no CREATE STREAMING TABLE",
    ),
    "-- sjoin: with a stream statement": (
        "-- sjoin: stream s (k INT)\nCREATE STREAMING TABLE c (k BIGINT)",
        "E033", "stream s (k INT)", "holds a `spark`, `set` or `sink` statement",
    ),
}  # fmt: skip


def test_an_unread_view_is_not_judged(tmp_path: Path) -> None:
    """SDP runs a view only inlined into a flow: an unread view's E021 is no error of the
    pipeline's (Spark never starts it)."""
    result = check(
        tmp_path,
        f"CREATE TEMPORARY VIEW v AS SELECT x.k FROM {WA} x LEFT JOIN STREAM(b) y ON x.k = y.k",
    )
    codes = [d.code for d in result.diagnostics]
    assert "W011" in codes and not [d for d in result.diagnostics if d.severity == "error"]
    read = check(
        tmp_path,
        f"CREATE TEMPORARY VIEW v AS SELECT x.k FROM {WA} x LEFT JOIN STREAM(b) y ON x.k = y.k;"
        "\nCREATE STREAMING TABLE c AS SELECT v.k, count(*) AS n FROM STREAM(v) GROUP BY v.k",
    )
    assert "E021" in [d.code for d in read.diagnostics]


def test_help_is_told_in_the_pipelines_terms(tmp_path: Path) -> None:
    result = check(
        tmp_path,
        f"CREATE STREAMING TABLE j AS SELECT x.k FROM {WA} x LEFT JOIN STREAM(b) y ON x.k = y.k",
    )
    (e021,) = [d for d in result.diagnostics if d.code == "E021"]
    assert e021.help == (
        "read `b` with a WATERMARK clause: STREAM(b) WATERMARK col DELAY OF INTERVAL ..."
    )


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusal(tmp_path: Path, name: str) -> None:
    sql, code, at, part = REFUSALS[name]
    result = check(tmp_path, sql)
    text = result.source.text
    found = [d for d in result.diagnostics if d.code == code]
    assert found, [(d.code, d.message) for d in result.diagnostics]
    first = found[0]
    assert text[first.span.start : first.span.start + len(at)] == at, (
        text[first.span.start : first.span.end],
        first.message,
    )
    assert part in first.message
    assert "E999" not in [d.code for d in result.diagnostics]


def test_a_static_table_python_reads_is_declared_in_the_schema_file(tmp_path: Path) -> None:
    """A dimension table the pipeline reads in batch from Python (`@dp.materialized_view`
    returning spark.read...), or its catalog holds: declared in sjoin-schemas.sql as a
    materialized view of its files, it is the static table a join reads without STREAM."""
    (tmp_path / "sjoin-schemas.sql").write_text(
        "CREATE MATERIALIZED VIEW dim (k BIGINT, seg STRING) AS SELECT * FROM "
        "delta.`tables/dim`;\n",
        encoding="utf-8",
    )
    result = check(
        tmp_path,
        f"CREATE STREAMING TABLE e AS SELECT x.k, d.seg FROM {WA} x JOIN dim d ON x.k = d.k",
    )
    assert result.ok, [d.message for d in result.diagnostics]
    assert relations(result) == [
        "table dim (\n    k    BIGINT,\n    seg  STRING\n)\nfrom delta (path = 'tables/dim')",
        "join e = a AS x INNER JOIN dim AS d\n    ON  x.k = d.k\n    SELECT x.k,\n           d.seg",
    ]
    (tmp_path / "sjoin-schemas.sql").write_text(
        "CREATE MATERIALIZED VIEW dim AS SELECT * FROM delta.`tables/dim`;\n", encoding="utf-8"
    )
    refused = check(tmp_path, "")
    assert [d.code for d in refused.diagnostics] == ["E033"]
    assert "declares streams and static tables only" in refused.diagnostics[0].message
