"""`sjoin diff` without Spark: the recorded catalogue agrees with sjoin's verdicts and the docs
show it; Spark's operator and source order; version differences read from the plans; the
command line (exit codes, usage errors, JSON, --trace); snapshots of the examples' output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.api import check_text
from sjoin.cli.main import main
from sjoin.compiler.describe.diff import diff_plans

from .catalogue import (
    CASES,
    DOC,
    END,
    RESULTS,
    START,
    join_spec,
    markdown_table,
    sunk_join_spec,
)
from .restart import plan_of

ROOT = Path(__file__).resolve().parents[4]
EXAMPLES = sorted((ROOT / "examples").glob("*.sjoin"))
ROWS = json.loads(RESULTS.read_text(encoding="utf-8"))
EXAMPLE = {p.stem: p for p in EXAMPLES}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


# ------------------------------------------------------------------ the catalogue


def test_catalogue_covers_the_issue() -> None:
    assert len(CASES) >= 25
    assert [r["change"] for r in ROWS] == [c.name for c in CASES]  # recorded, in order
    covered = {c.covers for c in CASES}
    for item in (
        "added column", "removed column", "changed key", "changed join type", "changed range",
        "changed watermark delay", "changed SELECT", "join added before an aggregate",
        "changed shuffle partitions", "renamed relations",
    ):  # fmt: skip
        assert item in covered, item
    assert {r["resumed"] for r in ROWS} == {True, False}


@pytest.mark.parametrize("row", ROWS, ids=[r["change"] for r in ROWS])
def test_recorded_spark_outcome_is_sjoins_verdict(row: dict[str, object]) -> None:
    case = next(c for c in CASES if c.name == row["change"])
    query = case.query(diff_plans(plan_of(case.old), plan_of(case.new)))
    assert row["resumed"] == (query.verdict != "fails")
    assert row["error"] == query.error


def test_docs_show_the_recorded_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert f"{START}\n{markdown_table(ROWS)}\n{END}" in text


# ------------------------------------------------------------------ rules


def test_a_join_another_query_reads_is_compared_as_that_query_runs_it() -> None:
    """``i`` has a sink of its own and ``j`` reads it: Spark plans ``i`` again in the query
    of ``j``, with what ``j`` pushes into it and pruned to what ``j`` reads (Plan.apart), so
    that is the ``i`` the checkpoint of ``j`` holds; the query of ``i`` keeps its own."""
    old = sunk_join_spec()
    narrower = sunk_join_spec(select="J.k AS k, J.t AS t, J.v AS v")
    mine, readers = diff_plans(plan_of(old), plan_of(narrower)).queries
    assert (mine.new_root, mine.verdict, readers.new_root) == ("i", "resumes", "j")
    (_, lower) = readers.operators
    assert (lower.new, lower.verdict) == ("i", "fails")
    assert any(
        "the right side (`R`) stored (k BIGINT, t TIMESTAMP, v STRING) and would store"
        " (k BIGINT, t TIMESTAMP)" in r.detail
        for r in lower.reasons
    ), lower.reasons

    filtered = old.replace("SELECT J.k AS k", "AND J.v <> 'b' SELECT J.k AS k")
    mine, readers = diff_plans(plan_of(old), plan_of(filtered)).queries
    assert mine.verdict == "resumes" and not mine.reasons
    (_, lower) = readers.operators
    assert lower.verdict == "differs"
    assert [r.detail for r in lower.reasons] == [
        "`L`'s filter pushed below the join (failing rows never reach it) changes from (none)"
        " to L.v <> 'b': rows stored before the restart passed the old one"
    ]


def test_operator_ids_are_spark_pre_order() -> None:
    plan = check_text(EXAMPLE["checkout_funnel"].read_text()).plan
    assert plan is not None
    ops = plan.stateful_operators("revenue")
    assert [o.name for o in ops] == ["revenue", "converted", "clicked"]
    assert plan.sources("revenue") == ["impressions", "clicks", "purchases"]


def test_state_columns_follow_column_pruning() -> None:
    plan = plan_of(join_spec(select="SELECT L.k AS lk"))
    join = plan.joins[0]
    assert [c.name for c in join.left.state_columns] == ["k", "t"]  # v is pruned
    assert [c.name for c in join.right.state_columns] == ["k", "t"]
    assert tuple(map(str, join.key_types)) == ("BIGINT",)


def test_target_version_picks_the_error() -> None:
    old = plan_of(join_spec())
    new = plan_of(join_spec(keys="L.v = R.v").replace("spark 4.3", "spark 3.5"))
    assert diff_plans(old, new).queries[0].error == "StateSchemaNotCompatible"
    new4 = plan_of(join_spec(keys="L.v = R.v"))
    assert diff_plans(old, new4).queries[0].error == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"


OUTER = """spark 4.3
stream a (k BIGINT, t TIMESTAMP, v STRING)
watermark t delay 1 minute
stream b (k BIGINT, t TIMESTAMP)
watermark t delay 1 minute
join j = a AS x LEFT OUTER JOIN b AS y
    ON x.k = y.k AND y.t BETWEEN x.t AND x.t + INTERVAL 1 MINUTE AND x.v <> 'z'
"""


def _filter_lines(old: str, new: str) -> list[str]:
    a, b = plan_of(old), plan_of(new)
    (query,) = diff_plans(a, b).queries
    return [r.detail for op in query.operators for r in op.reasons if r.topic == "filter"]


def test_a_filter_moving_between_the_join_and_below_it_is_one_named_reason() -> None:
    """LEFT OUTER -> INNER moves the left filter from the join (failing rows null-padded at
    once) to below it (dropped): one reason that says so, not a filter removed and one
    added (issue 23)."""
    inner = OUTER.replace("LEFT OUTER JOIN", "INNER JOIN")
    (out,) = _filter_lines(OUTER, inner)
    assert "x.v <> 'z' moves from the join to below it" in out and "dropped" in out
    (back,) = _filter_lines(inner, OUTER)
    assert "moves from below the join into it" in back and "null-padded" in back
    other = inner.replace("'z'", "'w'")
    pushed, in_join = _filter_lines(OUTER, other)
    assert "filter pushed below the join" in pushed and "(none) to x.v <> 'w'" in pushed
    assert "filter kept in the join" in in_join and "x.v <> 'z' to (none)" in in_join


# ------------------------------------------------------------------ the command line


def test_usage_errors_exit_two(tmp_path: Path) -> None:
    spec = str(EXAMPLE["ad_attribution"])
    assert run("diff", spec)[0] == 2
    assert run("diff", spec, spec, "--spark", "4.0", "--to", "4.3")[0] == 2
    code, _, err = run("diff", spec, "--spark", "4.0", "--to", "9.9")
    assert code == 2 and "sjoin models Spark" in err
    assert run("diff", spec, "--spark", "four", "--to", "4.3")[0] == 2
    assert run("diff", str(tmp_path / "missing.sjoin"), spec)[0] == 2


def test_spec_with_errors_exits_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sjoin"
    bad.write_text("stream s (a BIGINT, t STRING) watermark t delay 1 hour\n")
    code, out, err = run("diff", str(bad), str(EXAMPLE["ad_attribution"]))
    assert code == 1 and "error[E010]" in err and "Traceback" not in out + err
    code, out, _ = run("diff", str(bad), str(bad), "--format", "json")
    assert code == 1 and json.loads(out)["diagnostics"][0]["code"] == "E010"


def test_unchanged_spec_resumes_exit_zero() -> None:
    spec = str(EXAMPLE["checkout_funnel"])
    code, out, _ = run("diff", spec, spec)
    assert code == 0 and "query revenue (checkpoint 'chk/revenue'): resumes" in out
    code, out, _ = run("diff", spec, "--spark", "4.3", "--to", "4.3")
    assert code == 0 and "no behaviour of this spec differs" in out


def test_trace_shows_the_first_differing_batches(tmp_path: Path) -> None:
    spec = EXAMPLE["ad_attribution"]
    new = tmp_path / "wider.sjoin"
    new.write_text(spec.read_text().replace("INTERVAL 1 HOUR", "INTERVAL 2 HOURS"))
    trace = str(spec.with_suffix(".trace.jsonl"))
    code, out, _ = run("diff", str(spec), str(new), "--trace", trace, "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["verdict"] == "differs"
    first = data["trace"]["queries"]["attributed"]["differences"][0]
    assert first["batch"] == 4 and first["only_new_count"] == 1 and not first["only_old_count"]


def test_upgrade_trace_shows_metric_differences() -> None:
    spec = EXAMPLE["ad_attribution"]
    trace = str(spec.with_suffix(".trace.jsonl"))
    code, out, _ = run("diff", str(spec), "--spark", "4.2", "--to", "4.3", "--trace", trace)
    assert code == 1
    assert "numRowsRemoved: on 4.3" in out
    assert "attributed.numRowsRemoved: 4 -> 6" in out  # batch 5, as verify found on 4.3


# ------------------------------------------------------------------ snapshots


@pytest.mark.parametrize("name", sorted(EXAMPLE))
def test_example_upgrade_snapshots(name: str, monkeypatch, text_snapshot, json_snapshot) -> None:  # type: ignore[no-untyped-def]
    spec = str(EXAMPLE[name].relative_to(ROOT))
    monkeypatch.chdir(ROOT)  # the spec's path as the snapshot shows it
    _, out, _ = run("diff", spec, "--spark", "3.3", "--to", "4.3")
    assert out == text_snapshot
    _, out, _ = run("diff", spec, "--spark", "3.5", "--to", "4.3", "--format", "json")
    assert json.loads(out) == json_snapshot


@pytest.mark.parametrize("name", sorted(EXAMPLE))
def test_example_change_snapshots(name: str, text_snapshot) -> None:  # type: ignore[no-untyped-def]
    """Each example against itself with its first watermark delay doubled."""
    path = EXAMPLE[name]
    text = path.read_text()
    changed = re.sub(r"delay (\d+)", lambda m: f"delay {int(m.group(1)) * 2}", text, count=1)
    assert changed != text
    old = check_text(text, f"examples/{path.name}")
    new = check_text(changed, f"examples/{path.name}")
    assert old.plan is not None and new.plan is not None
    assert diff_plans(old.plan, new.plan).text() == text_snapshot


# ------------------------------------------------------------------ upgrades


def upgrade(text: str, a: str, b: str) -> dict[str, list[str]]:
    """The topics of `diff SPEC --spark a --to b`, spec-wide ("") and per relation."""
    from sjoin.reports.diffing import diff_upgrade

    report = diff_upgrade(check_text(text, "spec.sjoin"), a, b, None).diff
    out = {"": [r.topic for r in report.changes]}
    out.update({k: [r.topic for r in v] for k, v in report.relation_changes.items()})
    return out


def test_upgrade_reads_the_semi_join_order_only_for_semi_joins() -> None:
    semi = join_spec(how="LEFT SEMI", select="SELECT L.k AS lk")
    assert "LeftSemi order" in upgrade(semi, "4.1", "4.2")["j"]
    assert "LeftSemi order" not in upgrade(join_spec(), "4.1", "4.2").get("j", [])


def test_upgrade_names_the_between_rewrite_of_4_0() -> None:
    spec = join_spec(on="L.t + INTERVAL 1 SECOND BETWEEN R.t AND R.t + INTERVAL 10 SECONDS")
    from sjoin.reports.diffing import diff_upgrade

    report = diff_upgrade(check_text(spec, "spec.sjoin"), "3.5", "4.0", None).diff
    eviction = [r for r in report.relation_changes["j"] if r.topic == "state eviction"]
    assert eviction and "BETWEEN" in eviction[0].detail


def test_upgrade_lists_analysis_verdicts_with_their_issue() -> None:
    text = EXAMPLE["checkout_funnel"].read_text()
    from sjoin.reports.diffing import diff_upgrade

    report = diff_upgrade(check_text(text, "f.sjoin"), "3.4", "3.5", None).diff
    (analysis,) = [r for r in report.changes if r.topic == "analysis"]
    assert analysis.detail.startswith("Spark 3.4 rejects the spec (E022") and analysis.issue
    assert "ANSI mode" in upgrade(text, "3.5", "4.0")[""]


def test_trace_that_does_not_fit_a_spec_is_named(tmp_path: Path) -> None:
    spec = EXAMPLE["ad_attribution"]
    renamed = tmp_path / "taps.sjoin"
    renamed.write_text(spec.read_text().replace("clicks", "taps"))
    trace = str(spec.with_suffix(".trace.jsonl"))
    code, out, _ = run("diff", str(spec), str(renamed), "--trace", trace)
    assert code == 1
    assert "query attributed: not compared: 19 bad row(s)" in out
    assert "unknown stream `clicks`" in out and "--bad-rows" not in out


DECIMALS = """spark 4.3
stream s (k STRING, t TIMESTAMP, d DECIMAL({p}, 2)) watermark t delay 10 seconds
aggregate a = s AS S GROUP BY S.k, window(S.t, INTERVAL 10 SECONDS)
  SELECT S.k AS k, {call}(S.d) AS x
  OUTPUT MODE append
"""


@pytest.mark.parametrize(
    ("call", "old", "new", "verdict"),
    [
        ("sum", 7, 8, "resumes"),  # both summed as an unscaled BIGINT (p + 10 <= 18)
        ("sum", 8, 9, "fails"),  # BIGINT -> DECIMAL(19, 2) and its empty flag
        ("avg", 10, 11, "resumes"),  # both averaged as a BIGINT: DOUBLE sum, count
        ("avg", 11, 12, "fails"),  # DOUBLE -> DECIMAL(22, 2)
    ],
)
def test_decimal_buffers_follow_sparks_decimal_aggregates(
    call: str, old: int, new: int, verdict: str
) -> None:
    """Spark's DecimalAggregates rewrites a sum or average of a narrow DECIMAL over its
    unscaled value, so a precision change inside those bounds keeps the state's value
    schema (the schemas checked on Spark: tests/integration/spark/test_capacity_on_spark.py)."""
    plans = [check_text(DECIMALS.format(p=p, call=call)).plan for p in (old, new)]
    assert plans[0] is not None and plans[1] is not None
    (op,) = diff_plans(plans[0], plans[1]).queries[0].operators
    assert op.verdict == verdict, op


def test_trace_rows_are_shown_as_run_writes_them(tmp_path: Path) -> None:
    """Issue 35, item 14: a differing row is shown as `sjoin run` writes it (a DECIMAL as its
    exact digits, not a string; the columns in the relation's order), in text and in JSON, and
    every count is said in the singular or the plural as it is."""
    spec = EXAMPLE["unpaid_orders"]  # amount DECIMAL(10, 2)
    new = tmp_path / "longer.sjoin"
    new.write_text(spec.read_text().replace("INTERVAL 15 MINUTES", "INTERVAL 25 MINUTES"))
    trace = str(spec.with_suffix(".trace.jsonl"))
    code, ran, _ = run("run", str(spec), "--trace", trace)
    assert code == 0
    written = {json.loads(line)["row"]["order_id"]: line for line in ran.splitlines()}
    code, out, _ = run("diff", str(spec), str(new), "--trace", trace)
    assert code == 1
    shown = [line.strip() for line in out.splitlines() if line.strip().startswith("{")]
    old_rows = [line for line in shown if json.loads(line)["order_id"] in written]
    assert old_rows and all(f'"row": {line}}}' in written[json.loads(line)["order_id"]]
                            for line in old_rows)  # fmt: skip
    assert '"amount": 127.40' in out and '"127.40"' not in out
    code, out, _ = run("diff", str(spec), str(new), "--trace", trace, "--format", "json")
    assert code == 1 and '"amount": 127.40' in out and '"127.40"' not in out
    rows = json.loads(out)["trace"]["queries"]["unpaid"]["differences"][0]["only_old"]
    assert all(isinstance(r["amount"], float) for r in rows)

    spec = EXAMPLE["ad_attribution"]
    wider = tmp_path / "wider.sjoin"
    wider.write_text(spec.read_text().replace("INTERVAL 1 HOUR", "INTERVAL 2 HOURS"))
    trace = str(spec.with_suffix(".trace.jsonl"))
    code, out, _ = run("diff", str(spec), str(wider), "--trace", trace)
    assert code == 1 and "only in NEW (1 row):" in out and "(1 rows)" not in out
    code, out, _ = run("diff", str(spec), str(spec), "--trace", trace)
    assert code == 0 and re.search(
        r"same output in every batch \(OLD: \d+ batches, NEW: \d+\)", out
    )


def test_counts_are_said_in_the_singular_or_the_plural() -> None:
    from sjoin.reports.diffing import BatchDifference, TraceDiff

    one = TraceDiff(("OLD", "NEW"), {"q": [BatchDifference(2, [{"a": 1}], [], (1, 0))]})
    one.batches["q"] = (1, 1)
    text = one.text()
    assert "differs (the first such batch)" in text and "only in OLD (1 row):" in text
    same = TraceDiff(("OLD", "NEW"), {"q": []}, batches={"q": (1, 1)})
    assert "(OLD: 1 batch, NEW: 1)" in same.text()
