"""Parser limits (issues 13 and 24): flat lists and chains are not nesting; large specs cost
their size; past the size limits a spec is refused.

A flat list of AND (or OR) conjuncts and a chain of joins are accepted at any length the
size limits allow, with the structure that makes every stage linear in their length: the
AND tree is balanced, the pipeline check gives one verdict per operator input, the walks
and copies of each conjunct are few and cheap.  True nesting (parentheses, calls, CASE,
NOT, unary minus, arithmetic chains) is limited to MAX_NESTING levels and reported (E001)
at the place where it passes the limit; at the limit, every stage (check, plan JSON,
compile, run) works with room to spare on the stack.  Past each size limit of
compiler/frontend/limits.py (characters, tokens, name and string length, relations, columns) a spec
is refused with one E031 where it passes the limit, before the work the limit bounds.
Timings at large sizes live in benchmarks/parser_limits.py, not here.
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
from click.testing import CliRunner
from sqlglot import exp

from sjoin import api as api_module
from sjoin.api import CheckResult, check_file, check_text, read_spec
from sjoin.cli.main import main
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.binding.bind import SUGGESTION_BUDGET
from sjoin.compiler.binding.bound import Aggregate, Join
from sjoin.compiler.diagnostics.codes import CODES
from sjoin.compiler.diagnostics.diagnostics import Diagnostics
from sjoin.compiler.frontend import limits
from sjoin.compiler.frontend import parse as parse_module
from sjoin.compiler.frontend.parse import MAX_NESTING, check_characters
from sjoin.compiler.planning.split import conjoin
from sjoin.compiler.vocabulary import expr
from sjoin.compiler.vocabulary.expr import conjuncts
from sjoin.compiler.vocabulary.source import MAX_SNIPPET
from sjoin.compiler.vocabulary.sql import spark_sql
from sjoin.grammar import parser
from sjoin.reports.diagnostics import MAX_LINE_SHOWN, render_plain
from sjoin.runtime import run

from ...conftest import EXAMPLES, ROOT


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
    """2,000 levels (past Python's recursion limit): one E001 where the nesting passes
    the limit, at its line and column; the statement is dropped and nothing else breaks.
    The innermost term of the deepest accepted nesting d may itself take up to two levels
    (as `b.x > 1` in parentheses), so the level past the limit is at or after the (d + 1)-th
    opener and at or before the (d + 3)-th."""
    make, opener = NESTINGS[name]
    d = deepest_accepted(make)
    text = make(2000)
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
    text = make(2000)
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
    """3,000 unknown columns in a stream of 3,000: each is reported, the hints stop once
    their comparisons pass the budget (which would otherwise be 9 million)."""
    columns = ", ".join(f"c{i} BIGINT" for i in range(3000))
    unknown = " AND ".join(f"a.c{i}x = 1" for i in range(3000))  # each close to c{i}
    text = (
        f"stream a (k BIGINT, {columns}, t TIMESTAMP) watermark t delay 1 minute\n"
        "stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        f"join j = a JOIN b ON a.k = b.k AND {unknown}\n"
    )
    found = [d for d in check_text(text).diagnostics if d.code == "E004"]
    assert len(found) == 3000
    hinted = math.ceil(SUGGESTION_BUDGET / 3002)  # each hint compares the 3,002 columns
    assert [d.help for d in found[:hinted]] == [f"did you mean `c{i}`?" for i in range(hinted)]
    assert all(d.help is None for d in found[hinted:])


# ---------------------------------------------------------------------- size limits (E031)
#
# Issue 24: past each limit of compiler/frontend/limits.py `sjoin check` (and plan, compile) refuses
# the spec with one E031 where it passes the limit, exit status 1; just under it the spec is
# checked as usual.  Each limit is checked before the work it bounds (the text before it is
# parsed, the relations before they are bound, the columns before they are built).


def token_count(text: str) -> int:
    return sum(1 for _ in limits.tokens(text))


def of_length(n: int) -> str:
    """A clean spec of exactly ``n`` characters (a stream, then a comment)."""
    head = "stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n-- "
    return head + "x" * (n - len(head) - 1) + "\n"


def of_tokens(n: int) -> str:
    """A clean spec of exactly ``n`` tokens: a join whose ON holds an IN list."""
    odd = " AND NOT a.x IN (0)"  # 9 tokens, to reach an odd count
    base = token_count(bench.in_list(1))
    extra = odd if (n - base) % 2 else ""
    items = 1 + (n - base - token_count(extra)) // 2  # each item: a number and a comma
    text = bench.in_list(items).replace("\n    SELECT", extra + "\n    SELECT")
    assert token_count(text) == n
    return text


def of_relations(n: int) -> str:
    return "".join(f"stream s{i} (k BIGINT)\n" for i in range(n))


def derived(columns: int, tail: str) -> str:
    """A stream ``s`` of ``columns`` columns (k, c1, c2, ...) and its self-join ``j0``
    without SELECT (twice as many), then ``tail``: columns past what the tokens allow one
    stream to declare."""
    names = ", ".join(["k BIGINT", *(f"c{i} BIGINT" for i in range(1, columns))])
    return f"stream s ({names})\njoin j0 = s AS l JOIN s AS r ON l.k = r.k\n" + tail


J1 = "join j1 = s AS l2 JOIN s AS r2 ON l2.k = r2.k SELECT l2.*"


def with_name(n: int) -> str:
    """A spec whose longest name (a column, declared and used) has ``n`` characters."""
    return bench.identifier(n)


def with_quoted_name(n: int) -> str:
    name = "`" + "q" * (n - 1) + "``" + "`"  # `qq...q``` is the name qq...q` of n characters
    return HEAD + f"join j = a JOIN b {bench.ON}\n    SELECT a.k, a.t, b.x AS {name}\n"


def with_string(n: int) -> str:
    """A string literal of ``n`` characters (quotes doubled every 100 count as one)."""
    return bench.literal(n)


# limit -> (spec at the limit, spec one past it, offset of the refusal in the latter)
SIZES: dict[str, tuple[Callable[[], str], Callable[[], str], Callable[[str], int]]] = {
    "characters": (
        lambda: of_length(limits.MAX_SPEC_CHARS),
        lambda: of_length(limits.MAX_SPEC_CHARS + 1),
        lambda text: limits.MAX_SPEC_CHARS,
    ),
    "tokens": (
        lambda: of_tokens(limits.MAX_TOKENS),
        lambda: of_tokens(limits.MAX_TOKENS + 1),
        lambda text: list(limits.tokens(text))[limits.MAX_TOKENS].start("token"),
    ),
    "name": (
        lambda: with_name(limits.MAX_NAME_CHARS),
        lambda: with_name(limits.MAX_NAME_CHARS + 1),
        lambda text: text.index("c" * limits.MAX_NAME_CHARS),
    ),
    "quoted name": (
        lambda: with_quoted_name(limits.MAX_NAME_CHARS),
        lambda: with_quoted_name(limits.MAX_NAME_CHARS + 1),
        lambda text: text.index("`"),
    ),
    "string": (
        lambda: with_string(limits.MAX_STRING_CHARS),
        lambda: with_string(limits.MAX_STRING_CHARS + 1),
        lambda text: text.index("'"),
    ),
    "relations": (
        lambda: of_relations(limits.MAX_RELATIONS),
        lambda: of_relations(limits.MAX_RELATIONS + 1),
        lambda text: text.index(f"s{limits.MAX_RELATIONS} "),
    ),
    "columns": (  # 5,000 + 10,000 + 5,000 columns; then one more
        lambda: derived(limits.MAX_COLUMNS // 4, J1 + "\n"),
        lambda: derived(limits.MAX_COLUMNS // 4, J1 + ", r2.c1\n"),
        lambda text: text.index("r2.c1"),
    ),
}


@pytest.mark.parametrize("limit", sorted(SIZES))
def test_a_spec_at_a_limit_is_checked(limit: str) -> None:
    make, _, _ = SIZES[limit]
    result = check_text(make())
    assert [d.code for d in result.diagnostics if d.code == "E031"] == []
    assert result.ok, errors(result)
    assert result.plan is not None


def cli(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(main, list(args))
    return done.exit_code, done.stdout, done.stderr


@pytest.mark.parametrize("limit", sorted(SIZES))
def test_a_spec_past_a_limit_is_refused_where_it_passes_it(limit: str, tmp_path: Path) -> None:
    _, make, where = SIZES[limit]
    text = make()
    spec = tmp_path / "big.sjoin"
    spec.write_text(text, encoding="utf-8", newline="")
    start = where(text)
    line = text.count("\n", 0, start) + 1
    col = start - text.rfind("\n", 0, start)
    code, _, err = cli("check", str(spec))
    assert code == 1
    assert err.startswith(f"{spec}:{line}:{col}: error[E031]: "), err[:300]
    assert err.count("error[") == 1  # refused: nothing else is checked
    assert "Traceback" not in err and "E999" not in err
    assert max(len(row) for row in err.splitlines()) < 400  # a long line is shown cut
    code, out, _ = cli("check", "--format", "json", str(spec))
    (found,) = json.loads(out)["diagnostics"]
    assert (code, found["code"], found["line"], found["col"]) == (1, "E031", line, col)


@pytest.mark.parametrize("command", ["plan", "compile"])
def test_plan_and_compile_refuse_too(command: str, tmp_path: Path) -> None:
    spec = tmp_path / "big.sjoin"
    spec.write_text(of_relations(limits.MAX_RELATIONS + 1))
    job = tmp_path / "job.py"
    args = [command, str(spec)] + (["-o", str(job)] if command == "compile" else [])
    code, out, err = cli(*args)
    assert code == 1 and "error[E031]" in err and out == "" and not job.exists()
    if command == "plan":
        code, out, _ = cli("plan", "--format", "json", str(spec))
        assert code == 1 and [d["code"] for d in json.loads(out)["diagnostics"]] == ["E031"]


def test_a_huge_file_is_read_only_up_to_the_limit(tmp_path: Path) -> None:
    spec = tmp_path / "huge.sjoin"
    spec.write_text(of_length(5 * limits.MAX_SPEC_CHARS))
    assert len(read_spec(spec)) == limits.MAX_SPEC_CHARS + 1
    result = check_file(spec)
    assert [d.code for d in result.diagnostics] == ["E031"]
    assert len(result.source.text) == limits.MAX_SPEC_CHARS + 1


REFUSED_BEFORE_PARSING = ["characters", "tokens", "name", "quoted name", "string"]


@pytest.mark.parametrize("limit", REFUSED_BEFORE_PARSING)
def test_text_limits_are_checked_before_parsing(
    limit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_parse(*args: Any) -> Any:
        raise AssertionError("parsed")

    monkeypatch.setattr(api_module, "parse", no_parse)
    _, make, _ = SIZES[limit]
    assert [d.code for d in check_text(make()).diagnostics] == ["E031"]


def test_relations_are_counted_before_binding(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_bind(*args: Any) -> Any:
        raise AssertionError("bound")

    monkeypatch.setattr(api_module, "bind", no_bind)
    assert [d.code for d in check_text(of_relations(limits.MAX_RELATIONS + 1)).diagnostics] == [
        "E031"
    ]


def self_joins(levels: int, select: str = "") -> str:
    lines = ["stream s (k BIGINT, t TIMESTAMP) watermark t delay 1 minute"]
    previous = "s"
    for i in range(levels):
        lines.append(f"join j{i} = {previous} AS l JOIN {previous} AS r ON l.k = r.k{select}")
        previous = f"j{i}"
    return "\n".join(lines) + "\n"


def wide(select: str) -> str:
    """bench.wide_chain (join j(i) of j(i-1) and a new stream of 2 columns) with ``select``
    after each ON: its columns grow by 2 per join."""
    return bench.wide_chain(200).replace(" MINUTE\n", f" MINUTE{select}\n")


def wide_refusal(text: str, item: str | None) -> int:
    """Where the columns of ``wide`` pass the limit: at the join's name (no SELECT), or at
    its ``l.*`` or ``r.*`` (``item`` None: ``*``, or the first of ``l.*`` / ``r.*`` that
    passes it)."""
    used, below = 2, 2  # the stream s; the columns of the relation below j(i)
    for i in range(200):
        used += 2  # the stream x(i)
        line = text.index(f"join j{i} ")
        if used + below + 2 > limits.MAX_COLUMNS:
            if item is None:
                return text.index(f"j{i} = ")
            if item == "*" or used + below > limits.MAX_COLUMNS:
                return text.index(item, line)
            return text.index("r.*", line)
        used += below + 2
        below += 2
    raise AssertionError("the chain stays under the limit")


# Each way a relation gets columns, past the limit, and where the refusal points.  A
# self-join of self-joins doubles its columns (2, 4, ..., 2^40 for 40 levels, never built):
# the relations up to j11 hold 16,382 columns, j12's 16,384 pass the limit.
COLUMN_PATHS: dict[str, tuple[str, Callable[[str], int]]] = {
    "self-joins without SELECT": (self_joins(40), lambda text: text.index("j12 = ")),
    "joins without SELECT": (wide(""), lambda text: wide_refusal(text, None)),
    "SELECT *": (wide(" SELECT *"), lambda text: wide_refusal(text, "*")),
    "SELECT l.*, r.*": (wide(" SELECT l.*, r.*"), lambda text: wide_refusal(text, "l.*")),
    "stream": (  # 5,000 + 10,000, then a stream of 5,001
        derived(
            limits.MAX_COLUMNS // 4,
            "stream u (" + ", ".join(f"d{i} BIGINT" for i in range(5001)) + ")\n",
        ),
        lambda text: text.index("d5000 "),
    ),
    "aggregate": (  # 4,999 + 9,998 + 4,999, then an aggregate of 5 columns
        derived(
            limits.MAX_COLUMNS // 4 - 1,
            J1 + "\naggregate g = s GROUP BY c1 SELECT c1, c2, c3, c4, count(*) AS n\n",
        ),
        lambda text: text.index("count(*)"),
    ),
}


@pytest.mark.parametrize("path", sorted(COLUMN_PATHS))
def test_columns_are_counted_before_they_are_built(path: str) -> None:
    text, where = COLUMN_PATHS[path]
    result = check_text(text)
    (found,) = result.diagnostics
    assert found.code == "E031" and f"more than {limits.MAX_COLUMNS:,} columns" in found.message
    assert found.span.start == where(text)
    assert result.plan is None and result.bound is None


def test_the_limits_are_documented() -> None:
    """docs/language.md states each limit, the E031 explanation names them."""
    numbers = [
        limits.MAX_SPEC_CHARS,
        limits.MAX_TOKENS,
        limits.MAX_NAME_CHARS,
        limits.MAX_STRING_CHARS,
        limits.MAX_RELATIONS,
        limits.MAX_COLUMNS,
    ]
    language = (ROOT / "docs" / "language.md").read_text()
    explain = CODES["E031"].explain
    for number in numbers:
        assert f"{number:,}" in language, number
        assert f"{number:,}" in explain, number
    assert f"{limits.MAX_NESTING} levels" in explain


# ---------------------------------------------------------------------- the token scan


def test_the_token_scan_counts_what_the_parser_reads() -> None:
    """On every example the limits' scan finds lark's tokens, one for one."""
    for example in EXAMPLES:
        text = example.read_text()
        assert token_count(text) == len(list(parser().lex(text))), example.name


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("-- only a comment\n/* and a block */", 0),
        ("a <= b <> c == d != e >= f", 11),
        ("'it''s' `a``b` 1.5 x", 4),
        ("'unclosed\nx", 2),  # a string ends at its line, as far as the parser reads it
        ("/* unclosed", 0),
    ],
)
def test_token_scan_cases(text: str, count: int) -> None:
    assert token_count(text) == count


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
        limits.refuse_text(text, diags)
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


# ---------------------------------------------------------------------- long lines in messages


def test_a_long_line_is_shown_cut_around_each_diagnostic() -> None:
    """A generated spec may hold a whole join on one line: each diagnostic shows at most
    MAX_LINE_SHOWN characters of it around its column, the carets still under its span
    (it printed the whole line per diagnostic: 5,000 errors on a 100 KB line, 500 MB)."""
    items = ", ".join(str(i) for i in range(20_000))
    text = HEAD + f"join j = a JOIN b ON a.k = b.k AND a.x IN ({items}) AND a.nope = 1\n"
    result = check_text(text, "long.sjoin")
    (found,) = [d for d in result.diagnostics if d.code == "E004"]
    rendered = render_plain(found, result.source).splitlines()
    start = text.index("a.nope")
    col = start - text.rfind("\n", 0, start)
    assert rendered[0].startswith(f"long.sjoin:3:{col}: error[E004]")
    source_row, caret_row = rendered[2], rendered[3]
    assert len(source_row) <= MAX_LINE_SHOWN + 20 and "..." in source_row
    at = caret_row.index("^")
    assert source_row[at : at + len("a.nope")] == "a.nope"
    assert caret_row[at:].startswith("^" * len("a.nope") + " ")


def test_the_start_and_the_end_of_a_long_line_are_shown_without_dots_on_their_side() -> None:
    text = HEAD + "join j = a JOIN b ON a.k = b.k AND " + "a.x > 1 AND " * 100 + "a.nope = 1\n"
    result = check_text(text)
    (found,) = [d for d in result.diagnostics if d.code == "E004"]
    source_row = render_plain(found, result.source).splitlines()[2]
    assert source_row.startswith("3 | ...") and source_row.endswith("a.nope = 1")


def test_a_message_quotes_a_long_expression_by_its_ends() -> None:
    """Source.snippet: at most MAX_SNIPPET characters of an expression, its start and end."""
    text = in_on("concat(a.s, '" + "x" * 5000 + "')")
    (found,) = [d for d in check_text(text).diagnostics if d.code == "E012"]
    assert len(found.message) < MAX_SNIPPET + 100
    assert found.message.startswith("`concat(a.s, 'xxx") and " ... " in found.message
    assert "xxx')` is STRING, not BOOLEAN" in found.message
