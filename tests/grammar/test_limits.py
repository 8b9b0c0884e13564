"""Parser limits (issues 13 and 24): flat lists and chains are not nesting; large specs cost
their size.

A flat list of AND (or OR) conjuncts and a chain of joins are accepted at any length the
size limits allow, with the structure that makes every stage linear in their length: the
AND tree is balanced, the pipeline check gives one verdict per operator input, the walks
and copies of each conjunct are few and cheap.  True nesting (parentheses, calls, CASE,
NOT, unary minus, arithmetic chains) is limited to MAX_NESTING levels and reported (E001)
at the place where it passes the limit; at the limit, every stage (check, plan JSON,
compile, run) works with room to spare on the stack.  Timings at large sizes live in
benchmarks/parser_limits.py, not here.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from sqlglot import exp

from sjoin.api import CheckResult, check_text
from sjoin.compiler import expr
from sjoin.compiler import parse as parse_module
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.bind import SUGGESTION_BUDGET
from sjoin.compiler.bound import Aggregate, Join
from sjoin.compiler.diagnostics import Diagnostics
from sjoin.compiler.expr import conjuncts
from sjoin.compiler.parse import MAX_NESTING, check_characters
from sjoin.compiler.split import conjoin
from sjoin.compiler.sql import spark_sql
from sjoin.grammar import parser
from sjoin.runtime import run

from ..conftest import EXAMPLES, ROOT


def load_bench() -> ModuleType:
    path = ROOT / "benchmarks" / "parser_limits.py"
    spec = importlib.util.spec_from_file_location("parser_limits", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = load_bench()


def depth(node: exp.Expression) -> int:
    """Levels of a sqlglot tree (iteratively: the test must not depend on the stack)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        sub, level = stack.pop()
        deepest = max(deepest, level)
        stack += [(k, level + 1) for k in sub.iter_expressions()]
    return deepest


def errors(result: CheckResult) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in result.diagnostics if d.severity == "error"]


# ---------------------------------------------------------------------- flat lists


def test_a_flat_and_list_is_a_balanced_tree_in_source_order() -> None:
    n = 1000
    terms = [f"a.k <> {i}" for i in range(n)]
    text = (
        "stream a (k INT, t TIMESTAMP) watermark t delay 1 minute\n"
        "stream b (k INT, t TIMESTAMP) watermark t delay 1 minute\n"
        "join j = a JOIN b ON a.k = b.k AND " + " AND ".join(terms) + "\n"
    )
    result = check_text(text)
    assert errors(result) == []
    assert result.bound is not None
    (_, _, join) = result.bound.relations
    condition = join.condition  # type: ignore[union-attr]
    assert depth(condition) <= math.ceil(math.log2(n + 1)) + 3  # + the comparison's own levels
    parts = conjuncts(condition)
    assert [spark_sql(p) for p in parts] == ["a.k = b.k", *terms]
    assert spark_sql(condition) == " AND ".join(["a.k = b.k", *terms])  # Spark reads the same


def test_or_lists_too() -> None:
    terms = " OR ".join(f"a.k = {i}" for i in range(5000))
    text = (
        "stream a (k INT, t TIMESTAMP) watermark t delay 1 minute\n"
        "stream b (k INT, t TIMESTAMP) watermark t delay 1 minute\n"
        "join j = a JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE "
        f"AND ({terms})\n"
    )
    assert errors(check_text(text)) == []


def test_conjoin_is_balanced_and_keeps_or_in_parentheses() -> None:
    parts: list[exp.Expression] = [exp.column(f"c{i}").neq(i) for i in range(10_000)]
    parts[1] = exp.or_("x = 1", "y = 2")
    joined = conjoin(parts)
    assert joined is not None
    assert depth(joined) <= math.ceil(math.log2(10_000)) + 5  # + (x = 1 OR y = 2)
    assert spark_sql(joined).startswith("c0 <> 0 AND (x = 1 OR y = 2) AND c2 <> 2 AND ")
    assert len(conjuncts(joined)) == 10_000


def test_many_conjuncts_check_plan_and_compile() -> None:
    """The benchmark's spec at a test's size: no error, the plan and the job hold all."""
    n = 3000
    result = check_text(bench.conjuncts(n))
    assert errors(result) == []
    assert result.plan is not None
    (node,) = [j for j in result.plan_json()["joins"]]
    assert node["keys"] == [["a.k", "b.k"]]
    job = compile_pyspark(result.plan, "big.sjoin")
    compile(job, "job.py", "exec")
    assert job.count("<>") >= n


# ---------------------------------------------------------------------- chains of joins


def test_a_chain_of_joins_gets_one_verdict_per_join() -> None:
    n = 300
    result = check_text(bench.join_chain(n))
    assert errors(result) == []
    assert result.plan is not None
    data = result.plan_json()
    assert len(data["joins"]) == n
    watermark_checks = [c for c in data["checks"] if c["name"].startswith("global watermark")]
    assert len(watermark_checks) == n - 1  # j(i-1) -> j(i), not every pair below j(i)
    assert all(c["verdict"] == "ok" for c in watermark_checks)


def test_self_joins_of_self_joins_cost_their_size() -> None:
    """j(i) = j(i-1) x j(i-1): 2^40 paths down the pipeline, 41 relations."""
    lines = ["stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 minute"]
    previous = "s"
    for i in range(40):
        lines.append(
            f"join j{i} = {previous} AS l INNER JOIN {previous} AS r ON l.k = r.k "
            "AND r.t BETWEEN l.t AND l.t + INTERVAL 1 MINUTE SELECT l.k, l.t"
        )
        previous = f"j{i}"
    result = check_text("\n".join(lines) + "\n")
    assert errors(result) == []


def test_late_rows_are_reported_at_the_nearest_cause() -> None:
    """Spark 3.3, a chain of LEFT OUTER joins: each join after the first follows a join that
    emits late rows; one E022 each, naming the join just below."""
    lines = ["spark 3.3", "stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 minute"]
    previous = "s"
    for i in range(4):
        lines.append(f"stream x{i} (k BIGINT, t TIMESTAMP) watermark t delay 1 minute")
        lines.append(
            f"join j{i} = {previous} AS l LEFT OUTER JOIN x{i} AS r ON l.k = r.k "
            "AND r.t BETWEEN l.t AND l.t + INTERVAL 1 MINUTE SELECT l.k, l.t"
        )
        previous = f"j{i}"
    result = check_text("\n".join(lines) + "\n")
    found = [m for code, m in errors(result) if code == "E022"]
    assert [m.split(",")[0] for m in found] == [f"`j{i}` follows `j{i - 1}`" for i in range(1, 4)]


# ---------------------------------------------------------------------- true nesting

HEAD = (
    "stream a (k BIGINT, x BIGINT, s STRING, t TIMESTAMP) watermark t delay 1 minute\n"
    "stream b (k BIGINT, x BIGINT, s STRING, t TIMESTAMP) watermark t delay 1 minute\n"
)


def in_on(expr: str) -> str:
    return (
        HEAD + "join j = a JOIN b\n"
        f"    ON a.k = b.k AND {expr}\n"
        "    AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE\n"
        "    SELECT a.k, a.t\n"
    )


def in_select(expr: str) -> str:
    return (
        HEAD + "join j = a JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE\n"
        f"    SELECT a.k, a.t, {expr} AS v\n"
    )


# each construct nested d times, and the text that opens each level
NESTINGS: dict[str, tuple[Callable[[int], str], str]] = {
    "parentheses": (lambda d: in_on("(" * d + "b.x > 1" + ")" * d), "("),
    "unary minus": (lambda d: in_on("- " * d + "b.x > 1"), "-"),
    "NOT": (lambda d: in_on("NOT " * d + "(b.x > 1)"), "NOT"),
    "function calls": (lambda d: in_on("abs(" * d + "b.x" + ")" * d + " > 1"), "abs("),
    "CASE": (
        lambda d: in_on("CASE WHEN b.x > 1 THEN " * d + "TRUE" + " ELSE FALSE END" * d),
        "CASE",
    ),
    "CAST": (lambda d: in_on("CAST(" * d + "b.x" + " AS BIGINT)" * d + " > 1"), "CAST("),
    "OR in parentheses": (lambda d: in_on("(b.x > 1 OR " * d + "b.x > 2" + ")" * d), "("),
    "calls in SELECT": (lambda d: in_select("concat(" * d + "a.s" + ")" * d), "concat("),
    "parentheses in SELECT": (lambda d: in_select("(" * d + "a.x" + ")" * d), "("),
}
TRACE = [
    {"batch": 0, "stream": "a", "row": {"k": 1, "x": 5, "s": "q", "t": "2026-01-01T00:00:00Z"}},
    {"batch": 0, "stream": "b", "row": {"k": 1, "x": 5, "s": "q", "t": "2026-01-01T00:00:10Z"}},
]


def too_deep(result: CheckResult) -> list[int]:
    return [d.span.start for d in result.diagnostics if "too deeply" in d.message]


def deepest_accepted(make: Callable[[int], str]) -> int:
    d = MAX_NESTING
    while too_deep(check_text(make(d))):
        d -= 1
    return d


def on_a_deep_stack(frames: int, call: Callable[[], Any]) -> Any:
    """``call()`` with ``frames`` more Python frames below it, as a caller of sjoin might
    have (a test runner, a web framework)."""
    if frames == 0:
        return call()
    return on_a_deep_stack(frames - 1, call)


@pytest.mark.parametrize("name", sorted(NESTINGS))
def test_at_the_limit_every_stage_works_on_a_deep_stack(name: str) -> None:
    make, _ = NESTINGS[name]
    d = deepest_accepted(make)
    assert d >= 45  # (b.x > 1 OR (...)) costs two levels per nesting, the others one

    def every_stage() -> None:
        result = check_text(make(d))
        assert errors(result) == []
        assert result.plan is not None
        json.dumps(result.plan_json())
        compile(compile_pyspark(result.plan, "deep.sjoin"), "job.py", "exec")
        run(result.plan, TRACE)

    on_a_deep_stack(300, every_stage)


def openers(text: str, opener: str, after: str) -> list[int]:
    """Offsets of each ``opener`` after the first ``after`` of ``text``."""
    found, at = [], text.index(after)
    while (at := text.find(opener, at + 1)) != -1:
        found.append(at)
    return found


@pytest.mark.parametrize("name", sorted(NESTINGS))
def test_deeper_nesting_is_reported_where_it_passes_the_limit(name: str) -> None:
    """5,000 levels (far past Python's recursion limit): one E001 where the nesting passes
    the limit, at its line and column; the statement is dropped and nothing else breaks.
    The innermost term of the deepest accepted nesting d may itself take up to two levels
    (as `b.x > 1` in parentheses), so the level past the limit is at or after the (d + 1)-th
    opener and at or before the (d + 3)-th."""
    make, opener = NESTINGS[name]
    d = deepest_accepted(make)
    text = make(5000)
    result = check_text(text)
    assert [d.code for d in result.diagnostics if d.severity == "error"] == ["E001"]
    (start,) = too_deep(result)
    levels = openers(text, opener, "SELECT" if name.endswith("SELECT") else "JOIN b")
    assert levels[d] <= start <= levels[d + 2], (d, text[start : start + 20])
    line, col = result.source.line_col(start)
    assert line == text.count("\n", 0, start) + 1 and col == start - text.rfind("\n", 0, start)
    message = next(m.message for m in result.diagnostics if m.code == "E001")
    assert f"more than {MAX_NESTING} levels" in message


def test_nested_parentheses_are_reported_at_the_parenthesis() -> None:
    make, _ = NESTINGS["parentheses"]
    d = deepest_accepted(make)
    text = make(5000)
    levels = openers(text, "(", "JOIN b")
    # d parentheses around `b.x > 1` are accepted: the comparison is the last level
    assert too_deep(check_text(text)) == [levels[d + 1]]


def test_an_arithmetic_chain_is_nesting() -> None:
    """a + b + c is (a + b) + c: 10,000 terms nest 10,000 levels; reported at the chain."""
    text = in_on("b.x" + " + 1" * 10_000 + " > 1")
    result = check_text(text)
    assert errors(result)[0][0] == "E001"
    assert too_deep(result) == [text.index("b.x + 1")]


def test_a_recursion_error_past_the_limit_still_has_a_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the parser's limit a later stage runs out of stack: check_text says so at
    the most deeply nested expression, never E999 and never at 1:1."""
    monkeypatch.setattr(parse_module, "MAX_NESTING", 10**9)
    text = in_on("(" * 3000 + "b.x > 1" + ")" * 3000)
    result = check_text(text)
    assert [(d.code, d.span.start) for d in result.diagnostics if d.severity == "error"] == [
        ("E001", text.index("b.x > 1"))
    ]


def test_max_nesting_is_documented() -> None:
    doc = (ROOT / "docs" / "language.md").read_text()
    assert f"{MAX_NESTING} levels" in doc


def test_benchmark_shapes(tmp_path: Path) -> None:
    """The benchmark's generators write what it claims (a chain, n conjuncts), and each
    shape, small, is a spec that parses (the wide chain has E025 by design)."""
    assert bench.join_chain(3).count("\njoin ") == 3
    assert bench.conjuncts(7).count("\n    AND ") == 8  # the range and 7 conjuncts
    for name, shape in bench.SHAPES.items():
        found = {d.code for d in check_text(shape.make(5)).diagnostics if d.severity == "error"}
        assert found == ({"E025"} if name == "wide-joins" else set()), name
        assert list(shape.sizes) == sorted(shape.sizes), name


# ---------------------------------------------------------------------- linear stages
#
# Issue 24: the stages walk, copy and print each conjunct a constant number of times, with
# walks and copies cheaper than sqlglot's generic ones; these tests pin what makes them so
# (timings live in benchmarks/parser_limits.py).


def bound_expressions() -> list[exp.Expression]:
    """Every bound condition and output expression of the examples."""
    found: list[exp.Expression] = []
    for example in EXAMPLES:
        bound = check_text(example.read_text()).bound
        assert bound is not None
        for rel in bound.relations:
            if isinstance(rel, Join):
                found += [rel.condition, *(o.expr for o in rel.output)]
            elif isinstance(rel, Aggregate):
                found += [*rel.group_by, *(o.expr for o in rel.output)]
    return found


def test_the_walks_find_what_sqlglot_finds_in_its_order() -> None:
    for node in bound_expressions():
        assert expr.nodes(node) == list(node.walk())
        for kind in (exp.Column, exp.Anonymous, exp.Identifier):
            assert expr.find_all(node, kind) == list(node.find_all(kind))


def test_copy_tree_is_a_copy_with_its_own_annotations() -> None:
    for node in bound_expressions():
        copy = expr.copy_tree(node)
        assert copy == node and copy.sql() == node.sql()
        pairs = list(zip(expr.nodes(copy), expr.nodes(node), strict=True))
        for new, old in pairs:
            assert new is not old and (new._meta or {}) == (old._meta or {})
            assert new._meta is not old._meta or old._meta is None
        new, old = pairs[0]
        new.meta["probe"] = True
        assert "probe" not in (old._meta or {})


def test_conjoin_shares_the_parts_and_leaves_them_in_place() -> None:
    text = in_on("a.x > 1 AND (b.x > 2 OR b.x < 0) AND a.s = 'q'")
    bound = check_text(text).bound
    assert bound is not None
    condition = bound.relations[2].condition  # type: ignore[union-attr]
    parts = conjuncts(condition)
    parents = [(p.parent, p.arg_key) for p in parts]
    joined = conjoin(parts)
    assert joined is not None
    assert [(p.parent, p.arg_key) for p in parts] == parents  # still in the condition
    shared = expr.nodes(joined)
    assert all(any(x is p for x in shared) for p in parts)  # not copies
    assert spark_sql(joined) == spark_sql(condition)
    assert spark_sql(joined.copy()) == spark_sql(joined)


def test_a_join_without_windows_shares_the_bound_trees() -> None:
    """No copy of the condition nor of each output column, unless a window is projected."""
    result = check_text(bench.conjuncts(10))
    assert result.bound is not None and result.plan is not None
    join, node = result.bound.relations[2], result.plan.joins[0]
    assert isinstance(join, Join)
    assert node.condition is join.condition
    assert all(o.expr is b.expr for o, b in zip(node.output, join.output, strict=True))
    windowed = check_text(
        HEAD + "join j = a JOIN b ON a.k = b.k AND window(a.t, INTERVAL 1 MINUTE) = "
        "window(b.t, INTERVAL 1 MINUTE)\n"
    )
    assert windowed.bound is not None and windowed.plan is not None
    assert windowed.plan.joins[0].condition is not windowed.bound.relations[2].condition  # type: ignore[union-attr]


def test_hints_for_unknown_names_have_a_budget() -> None:
    """5,000 unknown columns in a stream of 5,000: each is reported, the hints stop once
    their comparisons pass the budget (which would otherwise be 25 million)."""
    columns = ", ".join(f"c{i} BIGINT" for i in range(5000))
    unknown = " AND ".join(f"a.c{i}x = 1" for i in range(5000))  # each close to c{i}
    text = (
        f"stream a (k BIGINT, {columns}, t TIMESTAMP) watermark t delay 1 minute\n"
        "stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        f"join j = a JOIN b ON a.k = b.k AND {unknown}\n"
    )
    found = [d for d in check_text(text).diagnostics if d.code == "E004"]
    assert len(found) == 5000
    hinted = math.ceil(SUGGESTION_BUDGET / 5002)  # each hint compares the 5,002 columns
    assert [d.help for d in found[:hinted]] == [f"did you mean `c{i}`?" for i in range(hinted)]
    assert all(d.help is None for d in found[hinted:])


# ---------------------------------------------------------------------- lexing in bounded memory


@pytest.mark.parametrize(
    "lexeme",
    [
        "'" + "x''" * 30_000 + "'",  # a string
        "`" + "q``" * 30_000 + "`",  # a quoted name
        "/* " + "x\n" * 300_000 + " */",  # a block comment
    ],
    ids=["string", "quoted name", "comment"],
)
def test_long_lexemes_lex_in_memory_of_their_size(lexeme: str) -> None:
    """The terminals repeat possessively: lexing a long string, name or comment keeps no
    backtracking state per character (it took 150 bytes per character, a 10 MB literal
    3.5 GiB)."""
    text = f"set x = {lexeme}\n" if not lexeme.startswith("/*") else f"{lexeme}\nset x = 1\n"
    diags = Diagnostics()
    tracemalloc.start()
    try:
        check_characters(text, diags)
        list(parser().lex(text))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * len(text) + (2 << 20), peak


def test_the_possessive_terminals_start_with_their_own_quote() -> None:
    """strict=True checks terminal collisions with interegular, which cannot read a
    possessive repeat: STRING and QUOTED_NAME are then unchecked, which is sound only
    because no other terminal can start with their quote."""
    terminals = {t.name: t.pattern.to_regexp() for t in parser().terminals}
    assert terminals["STRING"].startswith("'") and terminals["QUOTED_NAME"].startswith("`")
    for name, regexp in terminals.items():
        if name in ("STRING", "QUOTED_NAME"):
            continue
        pattern = re.compile(regexp)
        assert not pattern.match("'x'") and not pattern.match("`x`"), name
