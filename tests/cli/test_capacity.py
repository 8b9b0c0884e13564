"""`sjoin plan SPEC --rates ...`: the capacity section in the text and JSON plan, and every bad
option value a usage error (exit 2) that names the option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.cli.main import main

from ..conftest import EXAMPLES, ROOT

AD = str(next(p for p in EXAMPLES if p.stem == "ad_attribution"))
RATES = "impressions=5000/s,clicks=200/s"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_text_plan_has_the_capacity_section() -> None:
    code, out, err = invoke("plan", AD, "--rates", RATES, "--keys", "100000", "--trigger", "10s")
    assert code == 0, err
    plain = invoke("plan", AD)[1]
    assert out.startswith(plain.rstrip("\n"))  # the plan as before, then the section
    section = out[len(plain.rstrip("\n")) :]
    assert "capacity at steady state" in section
    assert (
        "clicks 200/s, impressions 5,000/s; 100,000 keys; trigger 10 seconds (--trigger)" in section
    )
    assert "left state     72.1 million rows" in section
    assert "per partition" in section and "null rows      left rows with no match" in section
    assert "output         36,004 rows/s" in section


def test_json_plan_adds_capacity_and_changes_nothing_else() -> None:
    code, out, err = invoke("plan", AD, "--format", "json", "--rates", RATES)
    assert code == 0, err
    with_rates = json.loads(out)
    without = json.loads(invoke("plan", AD, "--format", "json")[1])
    assert "capacity" not in without
    capacity = with_rates.pop("capacity")
    assert with_rates == without
    assert capacity["assumptions"]["rates_per_second"] == {"clicks": 200.0, "impressions": 5000.0}
    assert capacity["assumptions"]["keys"] is None
    (op,) = capacity["operators"]
    assert op["name"] == "attributed" and op["bounded"] is True
    assert op["output_rows_per_second"] is None  # no --keys: not predicted
    assert op["sides"]["left"]["state_rows"] > op["sides"]["right"]["state_rows"] > 0


UNBOUNDED = """\
spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 10 seconds
stream b (k BIGINT, t TIMESTAMP)
join j = a INNER JOIN b ON a.k = b.k
"""


def test_an_unbounded_join_says_it_grows(tmp_path: Path) -> None:
    spec = tmp_path / "u.sjoin"
    spec.write_text(UNBOUNDED)
    code, out, err = invoke("plan", str(spec), "--rates", "a=10/s,b=1/s")
    assert code == 0, err
    assert "GROWS WITHOUT LIMIT: +36,000 rows/hour" in out
    assert "grows without limit: +39,600 rows/hour" in out and "/hour, until the job dies" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--keys", "10"], "--keys goes with --rates"),
        (["--trigger", "10s"], "--trigger goes with --rates"),
        (["--string-bytes", "10"], "--string-bytes goes with --rates"),
        (["--rates", "impressions=1/s"], "--rates gives no rate for stream `clicks`"),
        (["--rates", RATES + ",views=1/s"], "--rates names `views`, which is not a stream"),
        (
            ["--rates", "impressions=1/s,impressions=2/s"],
            "--rates gives stream `impressions` twice",
        ),
        (["--rates", "impressions=1/week,clicks=1/s"], "--rates takes STREAM=ROWS/UNIT"),
        (["--rates", RATES, "--format", "mermaid"], "not mermaid"),
        (["--rates", RATES, "--keys", "0"], "--keys takes a count above 0"),
        (["--rates", RATES, "--trigger", "soon"], "--trigger takes a duration"),
    ],
)
def test_bad_options_are_usage_errors(args: list[str], message: str) -> None:
    code, _, err = invoke("plan", AD, *args)
    assert code == 2, err
    assert message in err, err
    assert "E999" not in err and "Traceback" not in err


def test_the_docs_examples_are_the_output() -> None:
    """docs/capacity.md shows the section `sjoin plan --rates` prints, as it prints it: a
    join's, and a chain of joins feeding an aggregate."""
    doc = (ROOT / "docs" / "capacity.md").read_text()
    command = "$ sjoin plan examples/"
    starts = [i for i in range(len(doc)) if doc.startswith(command, i)]
    assert len(starts) == 2
    for start in starts:
        line = doc[start + 2 : doc.index("\n", start)].split()
        shown = doc[doc.index("...\n", start) + 4 : doc.index("```", start)]
        code, out, _ = invoke(*line[1:2], str(ROOT / line[2]), *line[3:])
        assert code == 0
        assert out[out.index("capacity at steady state") :] == shown


FUNNEL = str(next(p for p in EXAMPLES if p.stem == "checkout_funnel"))
FUNNEL_RATES = "impressions=100/s,clicks=10/s,purchases=2/s"


def test_an_aggregate_in_text_and_json() -> None:
    code, out, err = invoke("plan", FUNNEL, "--rates", FUNNEL_RATES, "--keys", "5000")
    assert code == 0, err
    section = out[out.index("capacity at steady state") :]
    assert "  aggregate revenue (append)\n    groups         " in section
    assert "groups a window, kept until the watermark" in section
    assert "    results        a window's groups come out" in section
    assert "grouped by columns other than its join's keys" in section
    code, out, err = invoke(
        "plan", FUNNEL, "--format", "json", "--rates", FUNNEL_RATES, "--keys", "5000"
    )
    assert code == 0, err
    ops = json.loads(out)["capacity"]["operators"]
    assert [op["kind"] for op in ops] == ["join", "join", "aggregate"]
    agg = ops[2]["aggregate"]
    assert agg["mode"] == "append" and agg["grouping"] == "window"
    assert agg["window_ms"] == agg["slide_ms"] == 600_000
    assert agg["key_bytes"] == 8 + (8 + 16) + (8 + 24) and agg["value_bytes"] == 8 + 8 + 8
    assert agg["emitted_after_window_end_ms"][0] == agg["eviction_lag_ms"]
    assert ops[2]["state_rows"] > 0 and ops[2]["sides"] == {}
    assert "aggregate" not in ops[0]
