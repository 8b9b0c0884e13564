"""The pipeline target and the SQL front end agree (issue 37, item 6): what `compile --target
pipeline` writes, `sjoin check DIR` reads back to the same plan, and `fmt --to sjoin` of the
project to a spec that plans the same.

- a static table is one form in both: ``CREATE MATERIALIZED VIEW name (col TYPE, ...) AS
  SELECT CAST(col AS TYPE) AS col, ... FROM fmt.`path` WITH ('option' = 'value')``, the
  dataset SDP runs (tests/compiler/backends/test_pipeline_on_spark.py runs order_revenue's), for
  each format a table reads, with options, and with hostile paths, options and column names;
- a dedup is a Python flow of the project (SDP's SQL has no dropDuplicates), declared in
  sjoin-schemas.sql (``-- sjoin: dedup ON (...)`` before the query of its one read), and the
  declaration is checked against the flow's dropDuplicates call; a Python flow sjoin does
  not read gets a diagnostic at its own line.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.api import CheckResult, check_pipeline, check_text, read_spec
from sjoin.cli.main import main
from sjoin.compiler.backends.pipeline import compile_pipeline, pipeline_sql
from sjoin.compiler.planning.plan import DedupNode, TableNode
from sjoin.compiler.vocabulary.model import SparkVersion

from ...conftest import ROOT
from .test_equivalence import alike, project_round_trip, with_json_sources

ORDERS = """stream orders (order_id BIGINT, customer_id BIGINT, amount DOUBLE, order_time TIMESTAMP)
  watermark order_time delay 10 seconds from json (path = 'in/orders')
"""


def _spec(text: str) -> CheckResult:
    result = check_text("spark 4.3\n" + text, "x.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return result


def _table_spec(name: str, columns: str, source: str, key: str) -> str:
    return (
        f"table {name} ({columns}) from {source}\n"
        + ORDERS
        + f"join enriched = orders AS o LEFT OUTER JOIN {name} AS c ON o.customer_id = c.{key}\n"
    )


TABLES = {
    "parquet": "parquet (path = 'dim/customers')",
    "json": "json (path = '/abs/dim/customers.json', multiLine = 'true')",
    "csv": "csv (path = 'dim/customers.csv', header = 'true', sep = ';', inferSchema = 'false')",
    "delta": "delta (path = 'dim/customers')",
    "orc": "orc (path = 'dim/customers')",
    # a path and options with quotes, back-quotes, `;`, `--`, `/*`, a backslash and non-ASCII
    "hostile": "csv (path = 'dim/it''s `x`; -- y /* z \\ ü', quote = '''', "
    "escape = '\\', comment = '--', `odd key;` = 'a `b` ''c''')",
}


@pytest.mark.parametrize("source", list(TABLES.values()), ids=list(TABLES))
def test_a_static_table_reads_back_from_the_project(source: str, tmp_path: Path) -> None:
    spec = _spec(
        _table_spec("customers", "customer_id BIGINT, segment STRING", source, "customer_id")
    )
    back = project_round_trip(spec, tmp_path / "p")
    assert back.plan is not None and spec.plan is not None
    (table,) = back.plan.tables
    wanted = spec.plan.tables[0].source
    assert (table.source.format, table.source.options) == (wanted.format, wanted.options)
    # and `fmt --to sql` writes the same form, which reads back alike
    sql = tmp_path / "one.sql"
    sql.write_text(pipeline_sql(spec.plan, "x.sjoin"), encoding="utf-8")
    assert alike(check_pipeline(sql)) == alike(spec)


def test_hostile_column_names_of_a_static_table_read_back(tmp_path: Path) -> None:
    columns = "`c id` BIGINT, `seg'ment` STRING, `a``b;c` DECIMAL(10, 2), `select` TIMESTAMP"
    spec = _spec(_table_spec("customers", columns, TABLES["csv"], "`c id`"))
    project_round_trip(spec, tmp_path / "p")
    files = compile_pipeline(spec.plan, "p", "file:///s", "x.sjoin", formatted=False)  # type: ignore[arg-type]
    table = files["transformations/relation_000.sql"]
    assert "  CAST(`a``b;c` AS DECIMAL(10, 2)) AS `a``b;c`,\n" in table
    assert "FROM csv.`dim/customers.csv` WITH ('header' = 'true', 'sep' = ';', " in table


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "project"
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


ORDERS_DECLARED = "CREATE STREAMING TABLE orders (order_id BIGINT, customer_id BIGINT);\n"
YML = "name: p\nstorage: file:///s\nlibraries:\n  - glob:\n      include: transformations/**\n"


def test_the_table_form_a_user_writes_reads_as_the_writer_writes_it(tmp_path: Path) -> None:
    """``SELECT *`` (the file's own types), and the options as Spark reads a property list:
    a string, a number, a boolean, a dotted key."""
    root = _project(
        tmp_path,
        {
            "spark-pipeline.yml": YML,
            "transformations/t.sql": (
                "CREATE MATERIALIZED VIEW customers (customer_id BIGINT, segment STRING) AS\n"
                "SELECT * FROM csv.`dim/c.csv` WITH ('header' = true, samplingRatio = 0.5, "
                "a.b = 'x');\n"
                "CREATE STREAMING TABLE enriched AS SELECT o.order_id, c.segment\n"
                "FROM STREAM(orders) AS o LEFT OUTER JOIN customers AS c\n"
                "ON o.customer_id = c.customer_id;\n"
            ),
            "sjoin-schemas.sql": ORDERS_DECLARED,
        },
    )
    back = check_pipeline(root)
    assert back.ok and back.plan is not None, [d.message for d in back.diagnostics]
    (table,) = back.plan.tables
    assert isinstance(table, TableNode)
    assert table.source.options == (
        ("path", "dim/c.csv"),
        ("header", "true"),
        ("samplingRatio", "0.5"),
        ("a.b", "x"),
    )


def test_a_cast_to_another_type_is_no_static_table(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "spark-pipeline.yml": YML,
            "transformations/t.sql": (
                "CREATE MATERIALIZED VIEW customers (customer_id BIGINT) AS\n"
                "SELECT CAST(customer_id AS INT) AS customer_id FROM csv.`dim/c.csv`;\n"
                "CREATE STREAMING TABLE enriched AS SELECT o.order_id\n"
                "FROM STREAM(orders) AS o LEFT OUTER JOIN customers AS c\n"
                "ON o.customer_id = c.customer_id;\n"
            ),
            "sjoin-schemas.sql": ORDERS_DECLARED,
        },
    )
    back = check_pipeline(root)
    found = {(d.code, d.message) for d in back.diagnostics}
    assert ("W011", "sjoin does not check the materialized view `customers`: it is recomputed "
            "in batch, with no streaming state") in found  # fmt: skip
    assert any(c == "E033" and "a materialized view" in m for c, m in found)


@pytest.mark.parametrize(
    ("options", "wanted"),
    [
        ("WITH ('header' = NULL)", "an option of a read of files whose value is no text"),
        ("WITH ('path' = 'other')", "option `path` is given twice"),
    ],
)
def test_a_static_tables_options_spark_reads_otherwise_are_refused_at_their_place(
    options: str, wanted: str, tmp_path: Path
) -> None:
    root = _project(
        tmp_path,
        {
            "spark-pipeline.yml": YML,
            "transformations/t.sql": (
                "CREATE MATERIALIZED VIEW customers (customer_id BIGINT) AS\n"
                f"SELECT * FROM csv.`dim/c.csv` {options};\n"
                "CREATE STREAMING TABLE enriched AS SELECT o.order_id\n"
                "FROM STREAM(orders) AS o LEFT OUTER JOIN customers AS c\n"
                "ON o.customer_id = c.customer_id;\n"
            ),
            "sjoin-schemas.sql": ORDERS_DECLARED,
        },
    )
    result = check_pipeline(root)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert [d.message for d in errors][:1] == [wanted], [d.message for d in errors]
    assert result.source is not None
    file, span = result.source.locate(errors[0].span)
    assert file.line_col(span.start)[0] == 2 and file.text[span.start :].startswith(
        "WITH" if "NULL" in options else "'path'"
    )


# ---------------------------------------------------------------------- dedups

DEDUPS = {
    "before_a_join": ORDERS
    + """stream payments (order_id BIGINT, status STRING, pay_time TIMESTAMP)
  watermark pay_time delay 20 seconds from json (path = 'in/payments')
dedup orders_once = orders ON (order_id, order_time)
dedup payments_once = payments AS p ON (order_id) WITHIN WATERMARK
join paid = orders_once AS o INNER JOIN payments_once AS p ON o.order_id = p.order_id
  AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 MINUTE
""",
    "a_query_root": ORDERS + "dedup seen = orders ON (order_id) WITHIN WATERMARK\n",
    "without_a_watermark": """stream clicks (`click id` BIGINT, `user's` STRING)
  from json (path = 'in/clicks')
dedup clicks_once = clicks ON (`click id`, `user's`)
""",
    "over_a_dedup": ORDERS
    + """dedup once = orders ON (order_id, order_time)
dedup twice = once ON (customer_id, order_time)
""",
    "over_a_join_with_a_watermark": ORDERS
    + """stream payments (order_id BIGINT, pay_time TIMESTAMP)
  watermark pay_time delay 20 seconds from json (path = 'in/payments')
join paid = orders AS o INNER JOIN payments AS p ON o.order_id = p.order_id
  AND p.pay_time BETWEEN o.order_time AND o.order_time + INTERVAL 1 MINUTE
  SELECT o.order_id, p.pay_time
dedup paid_once = paid AS q watermark pay_time delay 30 seconds ON (order_id, pay_time)
set allow_multiple_stateful_operators = false
""",
}


@pytest.mark.parametrize("text", list(DEDUPS.values()), ids=list(DEDUPS))
def test_a_dedup_reads_back_from_the_project(text: str, tmp_path: Path) -> None:
    spec = check_text("spark 4.3\n" + text, "x.sjoin")
    if not spec.ok:  # a spec Spark refuses is no project: the case must be one Spark runs
        pytest.fail(str([d.message for d in spec.diagnostics]))
    back = project_round_trip(spec, tmp_path / "p")
    assert back.plan is not None
    assert [d.name for d in back.plan.nodes if isinstance(d, DedupNode)]


def _dedup_project(tmp_path: Path, python: str, schema: str) -> CheckResult:
    root = _project(
        tmp_path,
        {
            "spark-pipeline.yml": YML,
            "transformations/flows.py": python,
            "transformations/j.sql": (
                "CREATE STREAMING TABLE j AS SELECT o.order_id FROM STREAM(once) AS o\n"
                "JOIN STREAM(orders) WATERMARK t DELAY OF INTERVAL 10 SECONDS AS x\n"
                "ON o.order_id = x.order_id AND x.t BETWEEN o.t AND o.t + INTERVAL 1 MINUTE;\n"
            ),
            "sjoin-schemas.sql": "CREATE STREAMING TABLE orders (order_id BIGINT, t TIMESTAMP);\n"
            + schema,
        },
    )
    return check_pipeline(root)


FLOW = """from pyspark import pipelines as dp


@dp.temporary_view(name="once")
def once():
    df = spark.readStream.table("orders").withWatermark("t", "10 seconds")
    return df.{call}
"""
DECLARED = """-- sjoin: dedup ON (order_id, t)
CREATE TEMPORARY VIEW once AS
SELECT * FROM STREAM(orders) WATERMARK t DELAY OF INTERVAL 10 SECONDS;
"""


def _line_of(result: CheckResult, code: str) -> tuple[str, int, str]:
    """The one diagnostic of ``code``: its message, line and file name."""
    found = [d for d in result.diagnostics if d.code == code]
    assert len(found) == 1, [(d.code, d.message) for d in result.diagnostics]
    assert result.source is not None
    file, span = result.source.locate(found[0].span)
    return found[0].message, file.line_col(span.start)[0], Path(file.path).name


def test_a_declared_dedup_agrees_with_its_python_flow(tmp_path: Path) -> None:
    result = _dedup_project(
        tmp_path, FLOW.format(call='dropDuplicates(["order_id", "t"])'), DECLARED
    )
    assert result.ok, [d.message for d in result.diagnostics]
    (dedup,) = [n for n in result.plan.nodes if isinstance(n, DedupNode)]  # type: ignore[union-attr]
    assert dedup.keys == ("order_id", "t") and not dedup.within_watermark


@pytest.mark.parametrize(
    "call",
    [
        'dropDuplicates(["order_id"])',
        'dropDuplicatesWithinWatermark(["order_id", "t"])',
        "dropDuplicates(KEYS)",
    ],
)
def test_a_python_flow_that_runs_another_dedup_is_refused_at_its_call(
    call: str, tmp_path: Path
) -> None:
    result = _dedup_project(tmp_path, FLOW.format(call=call), DECLARED)
    message, line, file = _line_of(result, "E033")
    assert (file, line) == ("flows.py", 7)
    assert "sjoin-schemas.sql declares dropDuplicates(['order_id', 't'])" in message


def test_a_python_flow_without_a_dedup_is_refused_at_its_decorator(tmp_path: Path) -> None:
    result = _dedup_project(tmp_path, FLOW.format(call="select('*')"), DECLARED)
    message, line, file = _line_of(result, "E033")
    assert (file, line) == ("flows.py", 4) and "calls no dropDuplicates" in message


def test_a_python_table_declared_as_a_view_is_refused(tmp_path: Path) -> None:
    python = FLOW.format(call='dropDuplicates(["order_id", "t"])').replace(
        "temporary_view", "table"
    )
    result = _dedup_project(tmp_path, python, DECLARED)
    message, line, file = _line_of(result, "E033")
    assert (file, line) == ("flows.py", 4) and "declared as a temporary view" in message


def test_an_undeclared_python_dedup_is_named_at_its_line(tmp_path: Path) -> None:
    """A user's Python flow that deduplicates, which sjoin-schemas.sql does not declare: W011
    at its dropDuplicates call (sjoin runs no Python), and E033 where SQL reads it."""
    result = _dedup_project(tmp_path, FLOW.format(call='dropDuplicates(["order_id"])'), "")
    warning, line, file = _line_of(result, "W011")
    assert (file, line) == ("flows.py", 7)
    assert "does not check the dedup of the Python flow `once`" in warning
    error, line, file = _line_of(result, "E033")
    assert (file, line) == ("j.sql", 1)
    assert "`once` is a dedup of a Python flow that sjoin-schemas.sql" in error


@pytest.mark.parametrize(
    ("schema", "wanted"),
    [
        ("-- sjoin: dedup ON (order_id)\nCREATE STREAMING TABLE once (order_id BIGINT);\n",
         "stands before no declaration of a dedup"),
        ("-- sjoin: dedup ON (order_id)\nCREATE TEMPORARY VIEW once AS SELECT o.order_id "
         "FROM STREAM(orders) AS o;\n", "a dedup is declared by a query of its one input"),
        ("-- sjoin: dedup ON (order_id)\n", "stands before no declaration of a dedup"),
        ("-- sjoin: dedup once = orders ON (order_id)\n", "expected"),
    ],
)  # fmt: skip
def test_a_malformed_dedup_declaration_is_refused_at_its_place(
    schema: str, wanted: str, tmp_path: Path
) -> None:
    result = _dedup_project(tmp_path, FLOW.format(call='dropDuplicates(["order_id"])'), schema)
    assert not result.ok
    assert any(wanted in d.message for d in result.diagnostics), [
        d.message for d in result.diagnostics
    ]


def test_a_dedup_line_in_a_file_sdp_runs_is_refused(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "spark-pipeline.yml": YML,
            "transformations/v.sql": "-- sjoin: dedup ON (order_id)\n"
            "CREATE STREAMING TABLE once AS SELECT * FROM STREAM(orders);\n",
            "sjoin-schemas.sql": "CREATE STREAMING TABLE orders (order_id BIGINT);\n",
        },
    )
    result = check_pipeline(root)
    message, line, file = _line_of(result, "E033")
    assert (file, line) == ("v.sql", 1)
    assert "a `-- sjoin: dedup` line in a file that SDP runs" in message


def test_the_cli_reads_order_revenues_project_back(tmp_path: Path) -> None:
    """`sjoin check DIR` and `sjoin fmt DIR --to sjoin` of the flagship example's project: its
    dedups, its Delta table, its join, stream-static join and aggregate."""
    example = ROOT / "examples" / "order_revenue.sjoin"
    spec = check_text(with_json_sources(read_spec(example)), "x.sjoin", spark=SparkVersion(4, 3))
    root = tmp_path / "p"
    project_round_trip(spec, root)
    checked = CliRunner().invoke(main, ["check", str(root)])
    assert checked.exit_code == 0 and f"{root}: ok" in checked.output, checked.output
    written = CliRunner().invoke(main, ["fmt", str(root), "--to", "sjoin"])
    assert written.exit_code == 0, written.output
    assert "dedup payments_once = payments AS payments ON (payment_id) WITHIN WATERMARK" in (
        written.output
    )
    assert alike(check_text(written.output, "again.sjoin")) == alike(spec)
