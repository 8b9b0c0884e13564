"""spark.sql(...) over a job's temporary views (docs/pyspark.md): the query parsed with the
pipeline SQL grammar at its place in the job's string literal, each name the temporary view
the job made before the query, lowered into the statements the DataFrame API's calls make."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sjoin.api import check_file, check_pyspark, input_error

pytest.importorskip("pyspark.sql.connect.client.core")

PLACES = {"line", "col", "end_line", "end_col", "file", "path", "span"}


def placeless(data: Any) -> Any:
    """Plan JSON without source places (line, column, file), as test_jobs.py compares."""
    if isinstance(data, dict):
        return {k: placeless(v) for k, v in data.items() if k not in PLACES}
    if isinstance(data, list):
        return [placeless(v) for v in data]
    return data


PRELUDE = """from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
orders = (
    spark.readStream.format("json")
    .schema("order_id STRING, order_time TIMESTAMP, amount DOUBLE")
    .load("/data/orders")
    .withWatermark("order_time", "10 minutes")
)
payments = (
    spark.readStream.format("json")
    .schema("order_id STRING, pay_time TIMESTAMP")
    .load("/data/payments")
    .withWatermark("pay_time", "10 minutes")
)
"""
START = """
out.writeStream.format("parquet").option("checkpointLocation", "/chk").start("/out")
"""
ORDERS = """
stream orders (order_id STRING, order_time TIMESTAMP, amount DOUBLE)
watermark order_time delay 10 minutes
from json (path = '/data/orders')
"""
STREAMS = (
    ORDERS
    + """
stream payments (order_id STRING, pay_time TIMESTAMP)
watermark pay_time delay 10 minutes
from json (path = '/data/payments')
"""
)
SINK = "\nsink out to parquet (path = '/out') checkpoint '/chk'\n"


def job(tmp_path: Path, body: str, name: str = "job.py") -> Path:
    path = tmp_path / name
    path.write_text(PRELUDE + body + START, encoding="utf-8")
    return path


def twin(tmp_path: Path, body: str, streams: str = STREAMS) -> Path:
    path = tmp_path / "twin.sjoin"
    path.write_text(streams + body + SINK, encoding="utf-8")
    return path


def places(path: Path) -> list[tuple[str, int, int, str]]:
    result = check_pyspark(path)
    return [
        (d.code, *result.source.line_col(d.span.start), d.message)
        for d in result.diagnostics
        if d.severity == "error"
    ]


def line_col(path: Path, needle: str) -> tuple[int, int]:
    """The 1-based line and column of ``needle``'s first occurrence in ``path`` past the
    prelude (in the job's own lines)."""
    text = path.read_text(encoding="utf-8")
    at = text.index(needle, len(PRELUDE))
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def assert_plans_as(job_path: Path, twin_path: Path) -> None:
    got, want = check_pyspark(job_path), check_file(twin_path)
    assert got.ok and want.ok, (got.diagnostics, want.diagnostics)
    assert placeless(got.plan_json()) == placeless(want.plan_json())


def test_a_filter_and_an_aggregate_over_one_view(tmp_path: Path) -> None:
    body = """
orders.createOrReplaceTempView("orders")
out = spark.sql(
    "SELECT window(order_time, '5 minutes') AS w, count(*) AS n FROM orders "
    "WHERE amount > 10 GROUP BY window(order_time, '5 minutes')"
)
"""
    spec = """
aggregate out = orders WHERE amount > 10 GROUP BY window(order_time, INTERVAL 5 MINUTES)
    SELECT window(order_time, INTERVAL 5 MINUTES) AS w, count(*) AS n
"""
    assert_plans_as(job(tmp_path, body), twin(tmp_path, spec, ORDERS))


def test_a_view_replaced_before_the_query_is_read_as_its_last_definition(
    tmp_path: Path,
) -> None:
    """Spark's temporary views: createOrReplaceTempView replaces the name's plan, and a query
    analyzed after it reads the new one; a replacement after the query changes nothing."""
    body = """
orders.createOrReplaceTempView("o")
payments.createOrReplaceTempView("p")
orders.filter("amount > 10").createOrReplaceTempView("o")
out = spark.sql(
    "SELECT o.order_id, p.pay_time FROM o JOIN p "
    "ON o.order_id = p.order_id AND p.pay_time BETWEEN o.order_time "
    "AND o.order_time + INTERVAL 1 HOUR"
)
orders.filter("amount > 99").createOrReplaceTempView("o")
"""
    spec = """
view o = SELECT * FROM orders WHERE amount > 10

join out = o INNER JOIN payments AS p
    ON o.order_id = p.order_id
    AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 HOUR
    SELECT o.order_id, p.pay_time
"""
    assert_plans_as(job(tmp_path, body), twin(tmp_path, spec))


def test_an_unknown_view_is_e003_at_its_name_in_the_string(tmp_path: Path) -> None:
    body = """
orders.createOrReplaceTempView("orders")
out = spark.sql("SELECT o.order_id FROM orders o JOIN paymnts p ON o.order_id = p.order_id")
"""
    path = job(tmp_path, body)
    [(code, line, col, message)] = places(path)
    assert (code, (line, col)) == ("E003", line_col(path, "paymnts p"))
    assert "`paymnts`" in message


def test_a_view_made_after_the_query_is_unknown_to_it(tmp_path: Path) -> None:
    body = """
out = spark.sql("SELECT * FROM orders")
orders.createOrReplaceTempView("orders")
"""
    path = job(tmp_path, body)
    assert [(c, (line, col)) for c, line, col, _ in places(path)] == [
        ("E003", line_col(path, 'orders")\norders'))
    ]


@pytest.mark.parametrize(
    ("query", "at", "what"),
    [
        ("SELECT DISTINCT order_id FROM orders", "DISTINCT", "SELECT DISTINCT"),
        ("SELECT * FROM orders UNION ALL SELECT * FROM orders", 'SELECT * FROM orders"', "UNION"),
        ("SELECT * FROM STREAM(orders)", "STREAM(", "STREAM"),
        ("SELECT * FROM (SELECT * FROM orders) AS x", "(SELECT", "subquery"),
        ("SELECT * FROM orders ORDER BY order_id", "ORDER BY", "ORDER BY"),
    ],
)
def test_a_form_sjoin_does_not_lower_is_e041_at_its_place(
    tmp_path: Path, query: str, at: str, what: str
) -> None:
    path = job(
        tmp_path, f'\norders.createOrReplaceTempView("orders")\nout = spark.sql("{query}")\n'
    )
    found = places(path)
    assert [(c, (line, col)) for c, line, col, _ in found] == [("E041", where(path, at))]
    assert what in found[0][3]


def where(path: Path, needle: str) -> tuple[int, int]:
    """The place of ``needle`` in the query (its last occurrence when it ends the query)."""
    text = path.read_text(encoding="utf-8")
    start = text.index("spark.sql")
    at = text.rindex(needle) if needle.endswith('"') else text.index(needle, start)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def test_a_syntax_error_is_e001_inside_the_string(tmp_path: Path) -> None:
    body = '\norders.createOrReplaceTempView("orders")\n'
    path = job(tmp_path, body + 'out = spark.sql("SELECT order_id FROM orders WHERE")\n')
    [(code, line, col, _)] = places(path)
    assert code == "E001"
    at_where = line_col(path, 'WHERE")')
    assert (line, col) == (at_where[0], at_where[1] + len("WHERE"))


def test_a_query_that_is_no_literal_is_reported_at_the_call(tmp_path: Path) -> None:
    body = """
orders.createOrReplaceTempView("orders")
query = "SELECT * FROM " + "nowhere"
out = spark.sql(query)
"""
    path = job(tmp_path, body)
    assert [(c, (line, col)) for c, line, col, _ in places(path)] == [
        ("E003", line_col(path, "sql(query)"))
    ]


def test_parameters_are_e041_at_the_call(tmp_path: Path) -> None:
    body = """
orders.createOrReplaceTempView("orders")
out = spark.sql("SELECT * FROM orders WHERE amount > :least", args={"least": 10})
"""
    path = job(tmp_path, body)
    [(code, line, col, message)] = places(path)
    assert (code, (line, col)) == ("E041", line_col(path, 'sql("SELECT'))
    assert "parameters" in message


def test_dataframes_as_arguments_are_e041_at_the_call(tmp_path: Path) -> None:
    path = job(tmp_path, '\nout = spark.sql("SELECT * FROM {df}", df=orders)\n')
    [(code, line, col, message)] = places(path)
    assert (code, (line, col)) == ("E041", line_col(path, 'sql("SELECT'))
    assert "{df}" in message


def test_a_global_temporary_view_is_read_as_global_temp_name(tmp_path: Path) -> None:
    body = """
orders.createOrReplaceGlobalTempView("o")
out = spark.sql("SELECT order_id, amount FROM global_temp.o WHERE amount > 10")
"""
    spec = "\nview out = SELECT order_id, amount FROM orders AS o WHERE amount > 10\n"
    assert_plans_as(job(tmp_path, body), twin(tmp_path, spec, ORDERS))


def test_create_temp_view_of_a_name_taken_is_sparks_error_at_its_line(tmp_path: Path) -> None:
    body = """
orders.createTempView("orders")
payments.createTempView("orders")
out = spark.sql("SELECT * FROM orders")
"""
    path = job(tmp_path, body)
    result = check_pyspark(path)
    assert input_error(result)
    [d] = result.diagnostics
    assert d.code == "E042" and "TEMP_TABLE_OR_VIEW_ALREADY_EXISTS" in d.message
    assert result.source.line_col(d.span.start)[0] == line_col(path, "payments.createTempView")[0]


def test_a_join_spark_refuses_is_reported_at_its_join_words_in_the_string(
    tmp_path: Path,
) -> None:
    """No watermark on the nullable side of a LEFT OUTER join: Spark refuses the query when
    it starts, as it refuses the DataFrame API's join; E021 at `LEFT OUTER` in the string."""
    body = """
raw = spark.readStream.schema("order_id STRING, pay_time TIMESTAMP").json("/data/raw")
orders.createOrReplaceTempView("o")
raw.createOrReplaceTempView("q")
out = spark.sql(\"\"\"
    SELECT o.order_id, q.pay_time FROM o
    LEFT OUTER JOIN q ON o.order_id = q.order_id
\"\"\")
"""
    path = job(tmp_path, body)
    found = places(path)
    assert [(c, (line, col)) for c, line, col, _ in found] == [
        ("E021", line_col(path, "LEFT OUTER"))
    ]


def test_a_join_with_group_by_is_a_join_and_an_aggregate_over_it(tmp_path: Path) -> None:
    """As the pipeline SQL front end lowers it: the join keeps the columns the aggregate
    reads, and a DataFrame call after spark.sql reads its result."""
    body = """
orders.createOrReplaceTempView("orders")
payments.createOrReplaceTempView("payments")
per_window = spark.sql(\"\"\"
    SELECT window(o.order_time, '5 minutes') AS w, count(*) AS n, sum(o.amount) AS total
    FROM orders o JOIN payments p
      ON o.order_id = p.order_id
     AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 HOUR
    WHERE o.amount > 0
    GROUP BY window(o.order_time, '5 minutes')
\"\"\")
out = per_window.filter("n > 2")
"""
    spec = """
join per_window_join = orders AS o INNER JOIN payments AS p
    ON o.order_id = p.order_id
    AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 HOUR
    WHERE o.amount > 0
    SELECT o.order_time AS order_time, o.amount AS amount

aggregate per_window = per_window_join
    GROUP BY window(order_time, INTERVAL 5 MINUTES)
    SELECT window(order_time, INTERVAL 5 MINUTES) AS w, count(*) AS n, sum(amount) AS total

view out = SELECT * FROM per_window WHERE n > 2
"""
    assert_plans_as(job(tmp_path, body), twin(tmp_path, spec))
