"""One bound model from both syntaxes: a spec and its pipeline SQL plan alike.

- every example, compiled to a pipeline project (`compile --target pipeline`, with JSON
  sources so that every stream is a table the pipeline reads), read back from the project's
  directory, plans as the spec does;
- every example -> `fmt --to sql` -> `fmt --to sjoin` plans as the example at each step;
- every hand-written pipeline (tests/compiler/frontend/pipelines) -> `fmt --to sjoin` -> `fmt --to
  sql` plans as the pipeline at each step, and its plan JSON is snapshotted.  (The step back
  to SQL is taken when the pipeline back end writes every relation of the plan: it writes no
  view, union, static table or join's WHERE yet, `pipeline_refusals`' E032.)

"Plans alike" is the plan JSON (docs/plan-json.md) with the diagnostics' places left out:
the same names, keys, state rules, filters, watermarks, checks, settings and sinks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from sjoin.api import CheckResult, check_pipeline, check_text, read_spec
from sjoin.compiler.backends.pipeline import compile_pipeline, pipeline_sql
from sjoin.compiler.checks.job_warnings import pipeline_refusals
from sjoin.compiler.diagnostics.diagnostics import Diagnostics
from sjoin.compiler.frontend import ast
from sjoin.compiler.frontend.parse import parse
from sjoin.compiler.frontend.unparse import spec_text
from sjoin.compiler.planning.plan import (
    JoinNode,
    Plan,
    StaticJoinNode,
    TableNode,
    UnionNode,
    ViewNode,
)
from sjoin.compiler.vocabulary.model import SparkVersion
from sjoin.compiler.vocabulary.source import Source, Span

from ...conftest import EXAMPLES, PIPELINE_EXAMPLES

HERE = Path(__file__).parent
PIPELINES = sorted((HERE / "pipelines").glob("*.sql"))
PLACES = ("line", "col", "end_line", "end_col", "file")


def alike(result: CheckResult) -> dict[str, Any]:
    """The plan JSON without the diagnostics' places."""
    assert result.plan is not None, [d.message for d in result.diagnostics]
    data = result.plan_json()
    data["diagnostics"] = [
        {k: v for k, v in d.items() if k not in PLACES} for d in data["diagnostics"]
    ]
    return data


def with_json_sources(text: str) -> str:
    """The spec with each stream read `from json` (a pipeline reads its own inputs)."""
    spec = parse(Source("x", text), Diagnostics())
    statements = []
    for stmt in spec.statements:
        if isinstance(stmt, ast.StreamDecl):
            name = stmt.name.text
            option = ast.OptionDecl(
                ast.Ident("path", Span(0, 0)), ast.Value(f"in/{name}", "string", Span(0, 0)),
                Span(0, 0),
            )  # fmt: skip
            source = ast.FormatDecl(ast.Ident("json", Span(0, 0)), (option,), Span(0, 0))
            stmt = dataclasses.replace(stmt, source=source)
        statements.append(stmt)
    return spec_text(dataclasses.replace(spec, statements=tuple(statements)))


def project_round_trip(spec: CheckResult, root: Path) -> CheckResult:
    """``spec`` compiled to a pipeline project in ``root`` (`compile --target pipeline`),
    read back from the directory (`sjoin check DIR`): it plans as the spec, and so does its
    `fmt --to sjoin`.  The project read back."""
    assert spec.ok and spec.plan is not None, [d.message for d in spec.diagnostics]
    assert pipeline_refusals(spec.plan) == []
    files = compile_pipeline(spec.plan, "p", (root / "storage").as_uri(), "x.sjoin")
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    back = check_pipeline(root)
    assert back.ok and back.spec is not None, [d.message for d in back.diagnostics]
    assert alike(back) == alike(spec)
    again = check_text(spec_text(back.spec), "again.sjoin")
    assert alike(again) == alike(spec)
    return back


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_compiled_project_reads_back_to_the_same_plan(example: Path, tmp_path: Path) -> None:
    """Every example (its dedups, static tables, views, unions, joins and aggregates): spec
    -> pipeline project -> `check DIR` -> the same plan, and `fmt --to sjoin` of the project
    -> a spec that plans the same."""
    spec = check_text(with_json_sources(read_spec(example)), example.name, spark=SparkVersion(4, 3))
    project_round_trip(spec, tmp_path / "project")


# the examples `fmt --to sql` writes: one SQL file has no dedup (SDP's SQL has no
# dropDuplicates; a project runs it as a Python flow, read back above), and `--to sql`
# refuses a spec with one (tests/compiler/backends/test_pipeline_codegen.py)
SQL_EXAMPLES = [p for p in PIPELINE_EXAMPLES if not re.search(r"^dedup ", read_spec(p), re.M)]


@pytest.mark.parametrize("example", SQL_EXAMPLES, ids=lambda p: p.stem)
def test_example_to_sql_to_sjoin(example: Path, tmp_path: Path) -> None:
    spec = check_text(read_spec(example), example.name)
    assert spec.ok and spec.plan is not None
    sql = tmp_path / f"{example.stem}.sql"
    sql.write_text(pipeline_sql(spec.plan, example.name), encoding="utf-8")
    as_sql = check_pipeline(sql)
    assert as_sql.ok and as_sql.spec is not None, [d.message for d in as_sql.diagnostics]
    assert alike(as_sql) == alike(spec)
    again = check_text(spec_text(as_sql.spec), "again.sjoin")
    assert alike(again) == alike(spec)


@pytest.mark.parametrize("pipeline", PIPELINES, ids=lambda p: p.stem)
def test_pipeline_to_sjoin_to_sql(pipeline: Path, tmp_path: Path) -> None:
    original = check_pipeline(pipeline)
    assert original.ok and original.spec is not None, [d.message for d in original.diagnostics]
    as_sjoin = check_text(spec_text(original.spec), "x.sjoin")
    assert as_sjoin.ok and as_sjoin.plan is not None
    assert alike(as_sjoin) == alike(original)
    if not _backend_writes(as_sjoin.plan):
        return
    sql = tmp_path / "again.sql"
    sql.write_text(pipeline_sql(as_sjoin.plan, "x.sjoin"), encoding="utf-8")
    assert alike(check_pipeline(sql)) == alike(original)


def _backend_writes(plan: Plan) -> bool:
    """Whether `fmt --to sql` (the pipeline back end) writes every relation of ``plan``."""
    return not any(
        isinstance(node, ViewNode | UnionNode | TableNode | StaticJoinNode)
        or (isinstance(node, JoinNode) and node.where is not None)
        for node in plan.nodes
    )


@pytest.mark.parametrize("pipeline", PIPELINES, ids=lambda p: p.stem)
def test_pipeline_plan_snapshot(pipeline: Path, json_snapshot) -> None:  # type: ignore[no-untyped-def]
    with contextlib.chdir(HERE):
        result = check_pipeline(Path("pipelines") / pipeline.name)
    assert result.plan is not None
    assert result.plan_json() == json_snapshot


TWINS = sorted((HERE / "twins").glob("*.sjoin"))


@pytest.mark.parametrize("twin", TWINS, ids=lambda p: p.stem)
def test_a_pipeline_and_its_hand_written_sjoin_twin_plan_alike(twin: Path) -> None:
    """A pipeline's SQL (views, UNION ALL, SELECT DISTINCT, a join's WHERE, a static table)
    and the .sjoin spec written by hand for the same pipeline: the identical plan JSON."""
    sql = check_pipeline(HERE / "pipelines" / f"{twin.stem}.sql")
    spec = check_text(twin.read_text(encoding="utf-8"), twin.name)
    assert sql.ok and spec.ok, [d.message for d in (*sql.diagnostics, *spec.diagnostics)]
    assert alike(sql) == alike(spec)


def test_the_sql_and_its_sjoin_twin_diff_as_the_same(tmp_path: Path) -> None:
    """`sjoin diff` of a .sjoin spec and its pipeline SQL: the same pipeline."""
    from click.testing import CliRunner

    from sjoin.cli.main import main

    example = next(p for p in EXAMPLES if p.stem == "iot_window_join")
    sql = tmp_path / "twin.sql"
    done = CliRunner().invoke(main, ["fmt", str(example), "--to", "sql", "-o", str(sql)])
    assert done.exit_code == 0, done.output
    done = CliRunner().invoke(main, ["diff", str(example), str(sql), "--color", "never"])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("OLD and NEW are the same pipeline")
