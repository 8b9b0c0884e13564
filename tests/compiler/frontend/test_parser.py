"""Parser unit tests: the grammar builds strictly and every construct parses to the AST and
sqlglot nodes the binder expects, with exact spans."""

from __future__ import annotations

import gc
import time

import pytest
from sqlglot import exp

from sjoin.compiler.diagnostics.diagnostics import Diagnostics
from sjoin.compiler.frontend import ast
from sjoin.compiler.frontend.parse import parse
from sjoin.compiler.vocabulary.source import Source
from sjoin.grammar import parser

from ...conftest import EXAMPLES


def parse_ok(text: str) -> ast.SpecFile:
    diags = Diagnostics()
    spec = parse(Source("t.sjoin", text), diags)
    assert diags.items == [], [d.message for d in diags.items]
    return spec


def first_join(text: str) -> ast.JoinDecl:
    spec = parse_ok("stream a (k INT, t TIMESTAMP)\nstream b (k INT, t TIMESTAMP)\n" + text)
    return next(s for s in spec.statements if isinstance(s, ast.JoinDecl))


def test_grammar_is_strict_lalr() -> None:
    lark = parser()
    assert lark.options.parser == "lalr"
    assert lark.options.strict is True


@pytest.mark.parametrize("spec", EXAMPLES, ids=lambda p: p.stem)
def test_examples_parse(spec) -> None:  # type: ignore[no-untyped-def]
    parse_ok(spec.read_text())


def test_statements_and_spans() -> None:
    text = "spark 3.5.1\nset shuffle_partitions = 4\nstream s (x BIGINT)\n"
    spec = parse_ok(text)
    spark, setting, stream = spec.statements
    assert isinstance(spark, ast.SparkDecl) and spark.version == "3.5.1"
    assert isinstance(setting, ast.SetDecl) and setting.value.text == "4"
    assert isinstance(stream, ast.StreamDecl)
    assert text[stream.name.span.start : stream.name.span.end] == "s"
    assert text[stream.span.start : stream.span.end] == "stream s (x BIGINT)"


@pytest.mark.parametrize(
    ("written", "how"),
    [
        ("JOIN", "inner"),
        ("INNER JOIN", "inner"),
        ("LEFT JOIN", "left_outer"),
        ("left outer join", "left_outer"),
        ("RIGHT OUTER JOIN", "right_outer"),
        ("FULL JOIN", "full_outer"),
        ("LEFT SEMI JOIN", "left_semi"),
        ("LEFT ANTI JOIN", "left_anti"),
    ],
)
def test_join_types(written: str, how: str) -> None:
    j = first_join(f"join j = a AS x {written} b y ON x.k = y.k")
    assert j.how == how
    assert j.left.alias_text == "x" and j.right.alias_text == "y"


def test_precedence_and_between() -> None:
    j = first_join(
        "join j = a JOIN b ON a.k = b.k AND a.t BETWEEN b.t AND b.t + INTERVAL 1 "
        "HOUR OR a.k + 1 * 2 > 3"
    )
    top = j.on
    assert isinstance(top, exp.Or)
    assert isinstance(top.this, exp.And)
    between = top.this.expression
    assert isinstance(between, exp.Between)
    assert isinstance(between.args["high"], exp.Add)
    arith = top.expression.this
    assert isinstance(arith, exp.Add) and isinstance(arith.expression, exp.Mul)


def test_negations_in_is_like_case_cast() -> None:
    j = first_join(
        "join j = a JOIN b ON a.k = b.k AND a.k NOT IN (1, 2) AND a.t IS NOT NULL "
        "AND NOT a.k NOT BETWEEN 1 AND 2 AND CAST(a.k AS STRING) LIKE '1%' "
        "AND CASE WHEN a.k > 1 THEN TRUE ELSE FALSE END AND a.t > TIMESTAMP '2026-01-01'"
    )
    sql = j.on.sql(dialect="spark")
    assert "NOT a.k IN (1, 2)" in sql
    assert "NOT a.t IS NULL" in sql
    assert "CASE WHEN a.k > 1 THEN TRUE ELSE FALSE END" in sql


def test_string_quotes_comments_and_backquotes() -> None:
    spec = parse_ok(
        "/* block\n comment */ stream `event log` (`event time` TIMESTAMP, v STRING) -- tail\n"
        "join j = `event log` AS e JOIN `event log` AS f ON e.v = f.v AND e.v <> 'in''ternal'\n"
    )
    stream, join = spec.statements
    assert isinstance(stream, ast.StreamDecl) and stream.name.text == "event log"
    assert stream.columns[0].name.text == "event time"
    assert isinstance(join, ast.JoinDecl)
    neq = join.on.expression
    assert neq.expression.this == "in'ternal"  # one string, not a CONCAT


def test_keywords_only_reserved_where_they_matter() -> None:
    spec = parse_ok(
        "stream s (mode STRING, delay INT, output INT, key INT, window INT, "
        "t TIMESTAMP) watermark t delay 5 seconds"
    )
    assert [c.name.text for c in spec.statements[0].columns][:3] == ["mode", "delay", "output"]


def test_interval_forms() -> None:
    j = first_join(
        "join j = a JOIN b ON a.k = b.k AND a.t < b.t + INTERVAL '90' SECONDS "
        "AND a.t > b.t - interval 1.5 minutes"
    )
    intervals = list(j.on.find_all(exp.Interval))
    assert {i.this.name for i in intervals} == {"90", "1.5"}


def test_count_star_and_qualified_star() -> None:
    spec = parse_ok(
        "stream a (k INT, t TIMESTAMP)\nstream b (k INT, t TIMESTAMP)\n"
        "join j = a JOIN b ON a.k = b.k SELECT a.*, b.t AS bt\n"
        "aggregate g = j GROUP BY j.k SELECT j.k, count(*) AS n OUTPUT MODE update\n"
    )
    join, agg = spec.statements[2], spec.statements[3]
    assert isinstance(join, ast.JoinDecl) and join.select is not None
    assert isinstance(join.select[0].expr, exp.Column)
    assert isinstance(agg, ast.AggregateDecl) and agg.mode is not None
    assert agg.mode.text == "update"


def test_parse_is_linear_on_large_input() -> None:
    one = "stream s{i} (k BIGINT, t TIMESTAMP) watermark t delay 1 second\n"
    small = "".join(one.format(i=i) for i in range(200))
    large = "".join(one.format(i=i) for i in range(2000))

    def best_of_3(text: str) -> float:
        """The parser's own time: the best of three, without a pass of the cyclic collector
        over whatever earlier tests left in the process."""
        times = []
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                t0 = time.perf_counter()
                parse_ok(text)
                times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
        return min(times)

    t_small = best_of_3(small)
    t_large = best_of_3(large)
    # 10x the input must not cost anywhere near 100x the time (a loose, non-timing bound)
    assert t_large < 40 * max(t_small, 1e-3)


def test_several_syntax_errors_in_one_run() -> None:
    diags = Diagnostics()
    text = (
        "stream a (k INT t TIMESTAMP)\n"
        "stream b (k INT, t TIMESTAMP)\n"
        "join j = a JOIN b a.k = b.k\n"
        "stream c (k INT)\n"
    )
    spec = parse(Source("t.sjoin", text), diags)
    assert [d.code for d in diags.items] == ["E001", "E001"]
    names = [s.name.text for s in spec.statements if isinstance(s, ast.StreamDecl)]
    assert names == ["b", "c"]  # the good statements survive


# a three in Arabic-Indic, fullwidth and Devanagari digits
@pytest.mark.parametrize("digit", ["\u0663", "\uff13", "\u0969"])
def test_numbers_are_ascii_digits(digit: str) -> None:
    """Python's \\d takes any Unicode digit; Spark SQL's lexer only 0-9, so `b.k + ٣` would be
    accepted here and rejected by Spark."""
    text = f"stream a (k INT)\nstream b (k INT)\njoin j = a JOIN b ON a.k = b.k + {digit}\n"
    diags = Diagnostics()
    parse(Source("t.sjoin", text), diags)
    assert [(d.code, d.span.start) for d in diags.items] == [("E001", text.index(digit))]
    assert diags.items[0].help == "write numbers with the digits 0-9"
