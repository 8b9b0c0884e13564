"""One expression grammar for both front ends (issue 36, finding 8).

`grammar/expr.lark` holds the expression ladder; `grammar/__init__.py` appends it to the
.sjoin grammar and to the pipeline SQL grammar, and one transformer (`parse.ToAst`) builds
the IR of both.  Here every expression form is parsed through both front ends and must give
the same IR (node for node, with the spelling `sjoin fmt` writes back); `fmt` prints each
form back and reads it again to the same IR; the forms sjoin does not model are refused by
both at the same place; and the nesting limit is one limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from lark import Lark
from sqlglot import exp

from sjoin import grammar
from sjoin.api import check_text
from sjoin.compiler.diagnostics.diagnostics import Diagnostics
from sjoin.compiler.frontend import ast, sqlast
from sjoin.compiler.frontend.limits import MAX_NESTING
from sjoin.compiler.frontend.parse import parse
from sjoin.compiler.frontend.sqlparse import parse_sql
from sjoin.compiler.frontend.unparse import expression
from sjoin.compiler.vocabulary import annotate
from sjoin.compiler.vocabulary.source import Source
from sjoin.runtime import run

# Every expression form, written as both front ends read it (integers and plain strings:
# the two spell other literals differently, docs/pipelines.md).
FORMS = [
    "a.x = b.y",
    "a.x == b.y",
    "a.x <> b.y",
    "a.x != b.y",
    "a.x < b.y",
    "a.x <= b.y",
    "a.x > b.y",
    "a.x >= b.y",
    "a.x <=> b.y",
    "a.x IS DISTINCT FROM b.y",
    "a.x IS NOT DISTINCT FROM b.y",
    "a.x BETWEEN 1 AND b.y",
    "a.x NOT BETWEEN 1 AND b.y",
    "a.x IS NULL",
    "a.x IS NOT NULL",
    "a.x IN (1, 2, b.y)",
    "a.x NOT IN (1, 2)",
    "a.s LIKE 'a%'",
    "a.s NOT LIKE 'a%'",
    "NOT a.x = 1",
    "NOT NOT a.x = 1",
    "a.x = 1 AND b.y = 2 AND a.s = 'q'",
    "a.x = 1 OR b.y = 2 AND a.s = 'q'",
    "(a.x = 1 OR b.y = 2) AND a.s = 'q'",
    "a.x + b.y * 2 - a.x / 3 % 4",
    "(a.x + b.y) * 2",
    "-a.x + +b.y",
    "- -a.x",
    "a.s || b.s",
    "a.s || '-' || b.s",
    "a.x + b.y || a.s",
    "a.s || a.x * 2",
    "a.s || b.s = 'ab'",
    "a.x::STRING",
    "a.x::DECIMAL(10, 2)",
    "-a.x::INT",
    "-128::TINYINT",
    "- 1.5::INT::BIGINT",
    "-(128)::TINYINT",
    "a.x - -128::INT",
    "a.x * b.y::BIGINT",
    "a.x::BIGINT::STRING",
    "(a.x + 1)::INT",
    "CAST(a.x AS DECIMAL(10, 2))",
    "TRY_CAST(a.s AS INT)",
    "try_cast(a.s AS DECIMAL(3, 1))",
    "try_cast(a.s AS INT) <=> b.y",
    "CASE WHEN a.x = 1 THEN 'one' WHEN a.x IS NULL THEN NULL ELSE 'many' END",
    "CASE a.x WHEN 1 THEN TRUE ELSE FALSE END",
    "coalesce(a.x, b.y, 0)",
    "count(*)",
    "lower(a.s) = upper(b.s)",
    "window(a.t, INTERVAL 10 SECONDS).start",
    "a.w.start",
    "TIMESTAMP '2026-01-01 00:00:00'",
    "a.t < b.t + INTERVAL 5 SECONDS",
    "TRUE",
    "FALSE",
    "NULL",
    "`a`.`x y` = 1",
]
# What sjoin does not model: read by both, refused by both at the same place
REFUSED = {
    "a.s RLIKE 'a.*'": "RLIKE",
    "a.s NOT REGEXP 'a'": "RLIKE",
    "a.s ILIKE 'a'": "RLIKE",
    "(a.x > 1) IS TRUE": "IS [NOT] TRUE",
    "a.b IS NOT UNKNOWN": "IS [NOT] TRUE",
    "count(DISTINCT a.x) > 1": "(DISTINCT ...)",
    "lower(s => a.s) = 'q'": "named argument",
}

SJOIN_HEAD = "stream a (x INT, t TIMESTAMP)\nstream b (y INT, t TIMESTAMP)\njoin j = a JOIN b ON "
SQL_HEAD = "CREATE STREAMING TABLE j AS SELECT 1 AS one FROM STREAM(a) AS a JOIN STREAM(b) AS b ON "


def sjoin_on(text: str) -> tuple[exp.Expression | None, Diagnostics]:
    diags = Diagnostics()
    spec = parse(Source("t.sjoin", SJOIN_HEAD + text), diags)
    joins = [s for s in spec.statements if isinstance(s, ast.JoinDecl)]
    return (joins[0].on if joins else None), diags


def sql_on(text: str) -> tuple[exp.Expression | None, Diagnostics]:
    diags = Diagnostics()
    body = SQL_HEAD + text
    file = parse_sql(body, 0, len(body), "t.sql", diags)
    found = [s for s in file.statements if isinstance(s, sqlast.CreateDataset)]
    if not found or found[0].query is None:
        return None, diags
    return found[0].query.joins[0].on, diags


def _type_ref(node: exp.Expression) -> Any:
    ref = annotate.type_ref(node)
    return (ref.name, ref.params) if isinstance(ref, ast.TypeRef) else None


def shape(node: exp.Expression) -> list[tuple[Any, ...]]:
    """The IR node for node, with what the parser notes beside sqlglot's args (the
    spelling, the written type); spans aside."""
    return [
        (type(n).__name__, annotate.spelling(n), _type_ref(n), annotate.is_typed_literal(n))
        for n in node.walk()
    ]


def same_ir(a: exp.Expression, b: exp.Expression) -> bool:
    return a == b and shape(a) == shape(b)


@pytest.mark.parametrize("text", FORMS)
def test_both_front_ends_read_every_form_to_the_same_ir(text: str) -> None:
    mine, sjoin_diags = sjoin_on(text)
    theirs, sql_diags = sql_on(text)
    assert sjoin_diags.items == [] and sql_diags.items == [], (sjoin_diags.items, sql_diags.items)
    assert mine is not None and theirs is not None
    assert same_ir(mine, theirs), (repr(mine), repr(theirs))


@pytest.mark.parametrize("text", FORMS)
def test_fmt_writes_each_form_back_and_reads_it_to_the_same_ir(text: str) -> None:
    mine, _ = sjoin_on(text)
    assert mine is not None
    written = expression(mine)
    again, diags = sjoin_on(written)
    assert diags.items == [] and again is not None, written
    assert same_ir(mine, again), (text, written)
    # the new forms keep the operator the user wrote
    for spelt in ("<=>", "IS DISTINCT FROM", "IS NOT DISTINCT FROM", "||", "::"):
        assert (spelt in text) == (spelt in written), (text, written)
    assert ("try_cast" in text.lower()) == ("TRY_CAST" in written), (text, written)


def test_the_ir_of_the_new_forms() -> None:
    """`<=>` and IS NOT DISTINCT FROM are Spark's EqualNullSafe, IS DISTINCT FROM its
    negation, `||` the call concat(a, b), `::` a CAST, try_cast a TryCast (Spark's TRY
    mode of Cast); `-x::INT` is -(CAST(x AS INT)), as in Spark's grammar (`::` is a
    primary expression's suffix, the sign a value expression's)."""

    def ir(text: str) -> exp.Expression:
        found, diags = sjoin_on(text)
        assert found is not None and diags.items == []
        return found

    assert isinstance(ir("a.x <=> b.y"), exp.NullSafeEQ)
    assert isinstance(ir("a.x IS NOT DISTINCT FROM b.y"), exp.NullSafeEQ)
    assert isinstance(ir("a.x IS DISTINCT FROM b.y"), exp.NullSafeNEQ)
    cat = ir("a.s || b.s || a.s")
    assert isinstance(cat, exp.Anonymous) and cat.name == "concat"
    assert isinstance(cat.expressions[0], exp.Anonymous)  # left-associative, as + is
    assert type(ir("a.x::INT")) is exp.Cast
    neg = ir("-a.x::INT")
    assert isinstance(neg, exp.Neg) and type(neg.this) is exp.Cast
    signed = ir("-128::TINYINT")  # Spark's number literal holds its sign: CAST(-128 AS ...)
    assert type(signed) is exp.Cast and isinstance(signed.this, exp.Neg)
    assert isinstance(ir("-(128)::TINYINT"), exp.Neg)
    tried = ir("try_cast(a.s AS INT)")
    assert isinstance(tried, exp.TryCast) and tried.args.get("safe") is True
    mixed = ir("a.x + b.y || a.s")  # || at the level of + and -: (a.x + b.y) || a.s
    assert isinstance(mixed, exp.Anonymous) and isinstance(mixed.expressions[0], exp.Add)
    bound = ir("a.x * b.y::BIGINT")  # :: before *
    assert isinstance(bound, exp.Mul) and type(bound.expression) is exp.Cast


@pytest.mark.parametrize("text", sorted(REFUSED))
def test_forms_sjoin_does_not_model_are_refused_alike(text: str) -> None:
    """Both grammars read them (Spark SQL has them); the one transformer refuses them at
    their place: E001 in a .sjoin spec (not part of its language), E033 in a pipeline's
    SQL (valid Spark SQL that sjoin does not model)."""
    _, sjoin_diags = sjoin_on(text)
    _, sql_diags = sql_on(text)
    sjoin_found = [(d.code, d.span.start - len(SJOIN_HEAD)) for d in sjoin_diags.items]
    sql_found = [(d.code, d.span.start - len(SQL_HEAD)) for d in sql_diags.items]
    assert [c for c, _ in sjoin_found] == ["E001"], sjoin_diags.items
    assert [c for c, _ in sql_found] == ["E033"], sql_diags.items
    assert sjoin_found[0][1] == sql_found[0][1]
    assert REFUSED[text] in sjoin_diags.items[0].message
    assert REFUSED[text] in sql_diags.items[0].message


def _rules(lark: Lark, names: set[str]) -> set[tuple[str, tuple[str, ...], str | None]]:
    return {
        (r.origin.name, tuple(s.name for s in r.expansion), r.alias)
        for r in lark.rules
        if str(r.origin.name) in names
    }


def _defined(text: str) -> set[str]:
    return set(re.findall(r"^[?!]?([a-z_][a-z0-9_]*)\s*:", text, re.MULTILINE))


def test_the_expression_rules_are_written_once() -> None:
    """No front end defines a rule of the shared grammar, and both built parsers hold the
    same productions for every one of them."""
    shared = _defined(grammar.source_text(grammar.SHARED))
    assert {"expr", "predicate", "sum", "colon_cast", "cast_expr", "func_call"} <= shared
    for name in grammar.FRONT_ENDS:
        assert not shared & _defined(grammar.source_text(name)), name
    assert _rules(grammar.parser(), shared) == _rules(grammar.sql_parser(), shared)


# ------------------------------------------------------------------ nesting: one limit

NESTINGS: dict[str, Callable[[int], str]] = {
    "parentheses": lambda d: "(" * d + "a.x > 1" + ")" * d,
    "||": lambda d: "a.s" + " || a.s" * d + " = 'q'",
    "::": lambda d: "a.x" + "::BIGINT" * d + " > 1",
    "try_cast": lambda d: "try_cast(" * d + "a.x" + " AS BIGINT)" * d + " > 1",
    "<=> in parentheses": lambda d: "(" * d + "a.x" + " <=> a.x)" * d,
    "IS DISTINCT FROM in parentheses": lambda d: "(" * d + "a.x" + " IS DISTINCT FROM a.x)" * d,
    "calls": lambda d: "abs(" * d + "a.x" + ")" * d + " > 1",
    # a field of a call was a level in the SQL front end only (98 levels against 99)
    "field access": lambda d: (
        "abs(" * d + "window(a.t, INTERVAL 1 SECOND).start" + ")" * d + " > 1"
    ),
    "unary minus": lambda d: "- " * d + "a.x > 1",
}


def _too_deep(diags: Diagnostics) -> bool:
    return any("too deeply" in d.message for d in diags.items)


def _deepest(read: Callable[[str], tuple[Any, Diagnostics]], make: Callable[[int], str]) -> int:
    d = MAX_NESTING + 3
    while _too_deep(read(make(d))[1]):
        d -= 1
    return d


@pytest.mark.parametrize("name", sorted(NESTINGS))
def test_one_nesting_limit_for_both_front_ends(name: str) -> None:
    make = NESTINGS[name]
    deepest = _deepest(sjoin_on, make)
    assert MAX_NESTING // 2 - 2 <= deepest <= MAX_NESTING  # `(x <=> ...)`: two levels each
    assert _deepest(sql_on, make) == deepest
    for read in (sjoin_on, sql_on):
        found, diags = read(make(2000))  # past Python's recursion limit: refused, no crash
        assert found is None and [d.code for d in diags.items] == ["E001"]


# ------------------------------------------------------------------ through the compiler

SPEC = """spark {version}
stream a (k BIGINT, x BIGINT, s STRING, t TIMESTAMP) watermark t delay 10 seconds
stream b (k BIGINT, y BIGINT, u STRING, t TIMESTAMP) watermark t delay 10 seconds
join j = a JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 5 SECONDS
  SELECT a.k AS k, a.x <=> b.y AS nse, a.x IS DISTINCT FROM b.y AS dist,
         a.s || b.u AS cat, a.s || a.x AS cat_num, a.x::STRING AS xs,
         try_cast(b.u AS INT) AS ti, try_cast(a.x AS TINYINT) AS tt
"""


def _rows(version: str, engine: str) -> list[dict[str, Any]]:
    result = check_text(SPEC.format(version=version), "forms.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    t0 = "2026-01-01T00:00:00Z"
    left = [
        {"k": 1, "x": None, "s": None, "t": t0},
        {"k": 2, "x": 5, "s": "a", "t": t0},
        {"k": 3, "x": 300, "s": "p", "t": t0},
    ]
    right = [
        {"k": 1, "y": None, "u": None, "t": t0},
        {"k": 2, "y": 5, "u": "abc", "t": t0},
        {"k": 3, "y": None, "u": " 2 ", "t": t0},
    ]
    trace = [{"batch": 0, "stream": "a", "row": r} for r in left]
    trace += [{"batch": 0, "stream": "b", "row": r} for r in right]
    return sorted(run(result.plan, trace, engine=engine).rows("j"), key=lambda r: r["k"])  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
@pytest.mark.parametrize("version", ["4.3", "3.5"])
def test_both_engines_evaluate_the_new_forms(engine: str, version: str) -> None:
    """NULL <=> NULL is true, never NULL; `||` is NULL when a side is, and casts a number
    to its text; try_cast is NULL where ANSI's CAST fails (whatever the mode): a bad
    string, ' 2 ' is 2, 300 overflows a TINYINT (checked on Spark 4.3.0:
    tests/integration/spark/test_shared_expressions_on_spark.py)."""
    rows = _rows(version, engine)
    assert [(r["nse"], r["dist"]) for r in rows] == [(True, False), (True, False), (False, True)]
    assert [(r["cat"], r["cat_num"], r["xs"]) for r in rows] == [
        (None, None, None),
        ("aabc", "a5", "5"),
        ("p 2 ", "p300", "300"),
    ]
    assert [(r["ti"], r["tt"]) for r in rows] == [(None, None), (None, 5), (2, None)]


def test_a_null_safe_key_is_planned_as_sparks_two_keys_in_both_front_ends(tmp_path: Any) -> None:
    """Spark's ExtractEquiJoinKeys makes `<=>` (IS NOT DISTINCT FROM) between the sides two
    join keys, (coalesce(l, default), coalesce(r, default)) and (isnull(l), isnull(r)); both
    front ends plan them so (tests/integration/spark/test_null_safe_keys_on_spark.py: Spark's
    keys), and IS DISTINCT FROM between the sides is a post-join condition, no key."""
    from sjoin.api import check_pipeline

    on = "a.k <=> b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 5 SECONDS"
    spec = SPEC.format(version="4.3").replace(
        "a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 5 SECONDS", on
    )
    result = check_text(spec, "k.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    keys = [["coalesce(a.k, 0)", "coalesce(b.k, 0)"], ["isnull(a.k)", "isnull(b.k)"]]
    (joined,) = result.plan_json()["joins"]
    assert joined["keys"] == keys
    assert tuple(map(str, result.plan.joins[0].key_types)) == ("BIGINT", "BOOLEAN")
    sql = tmp_path / "p.sql"
    sql.write_text(
        "CREATE STREAMING TABLE a (k BIGINT, t TIMESTAMP);\n"
        "CREATE STREAMING TABLE b (k BIGINT, t TIMESTAMP);\n"
        "CREATE STREAMING TABLE j AS SELECT x.k FROM STREAM(a) WATERMARK t DELAY OF "
        "INTERVAL 10 SECONDS AS x JOIN STREAM(b) WATERMARK t DELAY OF INTERVAL 10 SECONDS "
        "AS y ON y.k IS NOT DISTINCT FROM x.k AND y.t BETWEEN x.t AND x.t + INTERVAL 5 "
        "SECONDS;\n",
        encoding="utf-8",
    )
    piped = check_pipeline(sql)
    assert piped.ok and piped.plan is not None, piped.diagnostics
    # written right side first: the left side's key still comes first in each pair
    (joined,) = piped.plan_json()["joins"]
    assert joined["keys"] == [
        ["coalesce(x.k, 0)", "coalesce(y.k, 0)"],
        ["isnull(x.k)", "isnull(y.k)"],
    ]
    # a null-safe equality that is no key (one side only) is a filter like any other
    ok = check_text(spec.replace("a.k <=> b.k", "a.k = b.k AND a.x <=> 1"), "f.sjoin")
    assert ok.ok, ok.diagnostics
    # IS DISTINCT FROM between the sides is a post-join condition; alone it is no key (E020)
    distinct = check_text(spec.replace("a.k <=> b.k", "a.k = b.k AND a.x IS DISTINCT FROM b.y"))
    assert distinct.ok and distinct.plan is not None, distinct.diagnostics
    (joined,) = distinct.plan_json()["joins"]
    assert joined["keys"] == [["a.k", "b.k"]]
    assert "NOT (a.x <=> b.y)" in joined["post_join_filter"]
    keyless = check_text(spec.replace("a.k <=> b.k", "a.k IS DISTINCT FROM b.k"))
    assert [d.code for d in keyless.diagnostics if d.severity == "error"] == ["E020"]
