"""The SQL front end's reader (compiler/frontend/sqlparse.py): statements split as SDP splits them,
Spark's literals, every statement form, the `-- sjoin:` lines, and each syntax error at its
place.  What these tests take from Spark (the split, the string escapes, the grammar's
accepting a statement) is checked on Spark 4.3 in
tests/integration/spark/test_sql_front_on_spark.py."""

from __future__ import annotations

import pytest
from sqlglot import exp

from sjoin.compiler.diagnostics.diagnostics import Diagnostics
from sjoin.compiler.frontend import ast, sqlast
from sjoin.compiler.frontend.sqlparse import iter_statement_spans, parse_sql, single_unit, unescape
from sjoin.compiler.vocabulary.source import Source

# ------------------------------------------------------------------ splitting

SPLITS = {
    "SELECT 1; SELECT 2": ["SELECT 1", " SELECT 2"],
    "SELECT 'a;b'; SELECT 2": ["SELECT 'a;b'", " SELECT 2"],
    "SELECT 'it''s;x'; SELECT 2": ["SELECT 'it''s;x'", " SELECT 2"],
    "SELECT 'a\\';b'; SELECT 2": ["SELECT 'a\\';b'", " SELECT 2"],
    'SELECT "a;b"; SELECT 2': ['SELECT "a;b"', " SELECT 2"],
    "SELECT `a;b`; SELECT 2": ["SELECT `a;b`", " SELECT 2"],
    "SELECT 1 -- c;d\n; SELECT 2": ["SELECT 1 -- c;d\n", " SELECT 2"],
    "SELECT 1 /* c;d */; SELECT 2": ["SELECT 1 /* c;d */", " SELECT 2"],
    "SELECT 1 /* a /* b */ ;c */; SELECT 2": ["SELECT 1 /* a /* b */ ;c */", " SELECT 2"],
    "SELECT 1;;; SELECT 2;  ": ["SELECT 1", " SELECT 2"],
    "SELECT 'a\nb;c'; SELECT 2": ["SELECT 'a\nb;c'", " SELECT 2"],
}


def split(text: str) -> list[str]:
    """The statements SDP would see (empty ones dropped, as it drops them)."""
    return [text[a:b] for a, b in iter_statement_spans(text) if text[a:b].strip()]


@pytest.mark.parametrize("text", sorted(SPLITS), ids=repr)
def test_statements_split_as_spark_splits_them(text: str) -> None:
    assert split(text) == SPLITS[text]


# ------------------------------------------------------------------ literals

STRINGS = {
    r"'a\tb'": "a\tb",
    r"'a\\b'": "a\\b",
    r"'a\nb'": "a\nb",
    r"'a\u0041b'": "aAb",
    r"'\101'": "A",
    "'a''b'": "a'b",
    '"a""b"': 'a"b',
    r"r'a\nb'": "a\\nb",
    r"'\%'": "\\%",
    r"'\_'": "\\_",
    r"'\z'": "z",
    '"a\'b"': "a'b",
    r"'\''": "'",
    r"'a\Z'": "a\x1a",
    r"'\0'": "\x00",
    r"'\U0001F600'": "\U0001f600",
    r"R'x\'": "x\\",
}


@pytest.mark.parametrize("token", sorted(STRINGS), ids=repr)
def test_string_literal_values_are_sparks(token: str) -> None:
    assert unescape(token) == STRINGS[token]


def one_query(sql: str) -> tuple[sqlast.Query, Diagnostics]:
    text = f"CREATE STREAMING TABLE t AS SELECT {sql} AS c FROM STREAM(a)"
    diags = Diagnostics()
    file = parse_sql(text, 0, len(text), "t.sql", diags)
    assert not diags.items, [d.message for d in diags.items]
    (stmt,) = file.statements
    assert isinstance(stmt, sqlast.CreateDataset) and stmt.query is not None
    return stmt.query, diags


def item(sql: str) -> exp.Expression:
    query, _ = one_query(sql)
    return query.select[0].expr


def test_adjacent_strings_join() -> None:
    node = item("'a' 'b'\n'c'")
    assert isinstance(node, exp.Literal) and node.this == "abc"


NUMBERS = {
    "10": ("number", "10", None),
    "1.25": ("number", "1.25", None),
    "10L": ("cast", "10", ("BIGINT", ())),
    "10S": ("cast", "10", ("SMALLINT", ())),
    "10Y": ("cast", "10", ("TINYINT", ())),
    "1.5D": ("cast", "1.5", ("DOUBLE", ())),
    "1.5F": ("cast", "1.5", ("FLOAT", ())),
    "1.50BD": ("cast", "1.50", ("DECIMAL", (3, 2))),
    ".5": ("cast", "0.5", ("DECIMAL", (1, 1))),
    "1.": ("cast", "1", ("DECIMAL", (1, 0))),
    "1e3": ("cast", "1e3", ("DOUBLE", ())),
}


@pytest.mark.parametrize("text", sorted(NUMBERS), ids=str)
def test_number_literals_keep_sparks_types(text: str) -> None:
    kind, value, typed = NUMBERS[text]
    node = item(text)
    if kind == "number":
        assert isinstance(node, exp.Literal) and node.this == value
        return
    assert isinstance(node, exp.Cast) and node.this.this == value
    ref = node.meta["type_ref"]
    assert (ref.name, ref.params) == typed


INTERVALS = {
    "INTERVAL 10 SECONDS": ("10", "SECONDS"),
    "INTERVAL '10' SECOND": ("10", "SECOND"),
    "INTERVAL 1 HOUR 30 MINUTES": ("90", "MINUTES"),
    "INTERVAL '1 hour 30 minutes'": ("90", "MINUTES"),
    "INTERVAL '10 seconds'": ("10", "SECONDS"),
    "INTERVAL 1 DAY 1 MILLISECOND": ("86400001", "MILLISECONDS"),
    "INTERVAL 2 WEEKS": ("2", "WEEKS"),
}


@pytest.mark.parametrize("text", sorted(INTERVALS), ids=str)
def test_intervals_are_one_duration(text: str) -> None:
    node = item(text)
    assert isinstance(node, exp.Interval)
    assert (node.this.this, node.unit.name) == INTERVALS[text]


def test_single_unit_says_why_an_interval_is_no_duration() -> None:
    assert single_unit([("1", "month"), ("1", "day")]) == "`month` has no fixed length"
    assert single_unit([("1", "microsecond"), ("1", "second")]) == (
        "sjoin counts time in whole milliseconds"
    )
    assert single_unit([("1", "hours"), ("2", "minutes")]) == ("62", "MINUTES")


# ------------------------------------------------------------------ statements


def parse(text: str) -> tuple[sqlast.SqlFile, Diagnostics]:
    diags = Diagnostics()
    return parse_sql(text, 0, len(text), "t.sql", diags), diags


def test_every_statement_form() -> None:
    file, diags = parse(
        """
        CREATE STREAMING TABLE IF NOT EXISTS a (k BIGINT COMMENT 'key', t TIMESTAMP)
            USING delta PARTITIONED BY (k) TBLPROPERTIES ('x' = 'y') COMMENT 'a stream';
        CREATE STREAMING TABLE j AS SELECT * FROM STREAM a;
        CREATE MATERIALIZED VIEW m AS SELECT k FROM a;
        CREATE TEMPORARY VIEW v AS SELECT x.k FROM STREAM(a) WATERMARK t DELAY OF INTERVAL 1
            SECOND AS x JOIN STREAM(a) y ON x.k = y.k;
        CREATE OR REPLACE GLOBAL TEMPORARY VIEW g AS SELECT * FROM STREAM(a);
        CREATE VIEW p AS SELECT * FROM a;
        CREATE FLOW f COMMENT 'flow' AS INSERT INTO TABLE j BY NAME SELECT * FROM STREAM(a);
        CREATE FLOW f2 AS INSERT INTO j SELECT * FROM STREAM(a);
        SET spark.sql.shuffle.partitions = 4;
        SET `spark.sql.session.timeZone`=UTC;
        USE my_db;
        SET CATALOG main;
        """
    )
    assert not diags.items, [d.message for d in diags.items]
    kinds = [
        (s.kind, s.name.text)
        if isinstance(s, sqlast.CreateDataset)
        else ("flow", s.name.text, s.target.text, s.by_name)
        if isinstance(s, sqlast.CreateFlow)
        else ("set", s.key, s.value)
        for s in file.statements
    ]
    assert kinds == [
        ("streaming_table", "a"),
        ("streaming_table", "j"),
        ("materialized_view", "m"),
        ("temporary_view", "v"),
        ("temporary_view", "g"),
        ("view", "p"),
        ("flow", "f", "j", True),
        ("flow", "f2", "j", False),
        ("set", "spark.sql.shuffle.partitions", "4"),
        ("set", "spark.sql.session.timeZone", "UTC"),
    ]
    view = file.statements[3]
    assert isinstance(view, sqlast.CreateDataset) and view.query is not None
    read = view.query.source
    assert isinstance(read, sqlast.TableRead) and read.stream and read.watermark is not None
    assert read.watermark.delay == ast.Duration(
        "1", read.watermark.delay.unit, read.watermark.delay.span
    )
    assert read.watermark.delay.unit.text == "SECOND"


@pytest.mark.parametrize(
    "keywords, how",
    [
        ("JOIN", "inner"),
        ("INNER JOIN", "inner"),
        ("LEFT JOIN", "left_outer"),
        ("LEFT OUTER JOIN", "left_outer"),
        ("RIGHT JOIN", "right_outer"),
        ("RIGHT OUTER JOIN", "right_outer"),
        ("FULL JOIN", "full_outer"),
        ("FULL OUTER JOIN", "full_outer"),
        ("LEFT SEMI JOIN", "left_semi"),
        ("SEMI JOIN", "left_semi"),
        ("LEFT ANTI JOIN", "left_anti"),
        ("ANTI JOIN", "left_anti"),
    ],
)
def test_every_join_type(keywords: str, how: str) -> None:
    text = (
        f"CREATE STREAMING TABLE j AS SELECT * FROM STREAM(a) x {keywords} STREAM(b) y ON x.k = y.k"
    )
    file, diags = parse(text)
    assert not diags.items
    (stmt,) = file.statements
    assert isinstance(stmt, sqlast.CreateDataset) and stmt.query is not None
    (step,) = stmt.query.joins
    assert step.how == how
    assert text[step.how_span.start : step.how_span.end] == keywords[: -len(" JOIN")] or (
        keywords == "JOIN"
    )


def test_annotations_are_sjoin_statements_at_their_place() -> None:
    text = (
        "-- sjoin: spark 4.1\n"
        "-- sjoin: set allow_unemitted_outer_rows = true\n"
        "-- sjoin: sink j to json (path = 'out/j')\n"
        "-- sjoin: from kafka (topic = 'a', bootstrap_servers = 'localhost:9092')\n"
        "CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);\n"
    )
    file, diags = parse(text)
    assert not diags.items
    statements = [a.statement for a in file.annotations]
    assert [type(s).__name__ for s in statements] == ["SparkDecl", "SetDecl", "SinkDecl"]
    spark = statements[0]
    assert isinstance(spark, ast.SparkDecl) and text[spark.span.start : spark.span.end] == (
        "spark 4.1"
    )
    source = file.sources[0].statement
    assert isinstance(source, ast.FormatDecl) and source.format.text == "kafka"
    assert text[source.format.span.start : source.format.span.end] == "kafka"


SYNTAX_ERRORS = {
    "CREATE STREAMING TABLE j AS SELECT x.k FROM STREAM(a) x JION STREAM(b) y ON x.k = y.k": (
        "E001",
        "JION",
    ),
    "CREATE STREAMING TABLE j AS SELECT 'abc FROM STREAM(a)": ("E001", "'"),
    "CREATE STREAMING TABLE j AS SELECT 1 /* never closed": ("E001", "/*"),
    "CREATE STREAMING TABLE j AS SELECT `abc FROM STREAM(a)": ("E001", "`"),
    "CREATE STREAMING TABLE j AS SELECT * FROM STREAM(a) ORDER": ("E001", ""),
    "CREATE STREAMING TABLE j AS SELECT * FROM STREAM(a) x LIMIT 10": ("E001", "LIMIT"),
    "-- sjoin: sprak 4.1\nCREATE STREAMING TABLE a (k INT);": ("E001", "sprak"),
    "-- sjoin: from jsn (path = \nCREATE STREAMING TABLE a (k INT);": ("E001", ""),
}


@pytest.mark.parametrize("text", sorted(SYNTAX_ERRORS), ids=repr)
def test_syntax_errors_point_at_their_place(text: str) -> None:
    code, at = SYNTAX_ERRORS[text]
    _, diags = parse(text)
    assert diags.items and diags.items[0].code == code, [d.message for d in diags.items]
    span = diags.items[0].span
    assert text[span.start : span.start + len(at)] == at


def test_a_broken_statement_keeps_the_rest() -> None:
    file, diags = parse(
        "CREATE STREAMING TABLE a (k INT);\nCREATE STREAMING TABLE j AS SELEC 1;\n"
        "CREATE STREAMING TABLE b (k INT);"
    )
    assert [d.code for d in diags.items] == ["E001"]
    assert [s.name.text for s in file.statements if isinstance(s, sqlast.CreateDataset)] == [
        "a",
        "b",
    ]
    assert file.broken == ("j",)


def test_characters_no_sql_file_may_hold() -> None:
    text = "CREATE STREAMING TABLE a (k STRING);\x00\nCREATE TEMPORARY VIEW v\u202e AS SELECT 1"
    _, diags = parse(text)
    found = [(d.code, d.span.start) for d in diags.items if d.code == "E008"]
    assert found == [("E008", text.index("\x00")), ("E008", text.index("\u202e"))]


def test_spans_are_places_in_the_whole_text() -> None:
    """A file in the middle of a project's text: every span is a place in the whole."""
    head = "-- another file\n" * 3
    body = "CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);"
    text = head + body + "\n"
    diags = Diagnostics()
    file = parse_sql(text, len(head), len(head) + len(body), "x.sql", diags)
    (stmt,) = file.statements
    assert isinstance(stmt, sqlast.CreateDataset)
    assert text[stmt.name.span.start : stmt.name.span.end] == "a"
    assert Source("x", text).line_col(stmt.name.span.start) == (4, 24)
