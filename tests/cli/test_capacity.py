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
        # a count per column (issue 35): every malformed value, an unknown column with a
        # did-you-mean, a column or a plain count given twice, numbers out of bounds
        (["--rates", RATES, "--keys", ""], "--keys takes N or COLUMN=N"),
        (["--rates", RATES, "--keys", "ad_idd=5"], "names `ad_idd`, which is no column of the"),
        (["--rates", RATES, "--keys", "ad_idd=5"], "did you mean `ad_id`?"),
        (["--rates", RATES, "--keys", "nope=5"], "(columns: ad_id, "),
        (["--rates", RATES, "--keys", "ad_id=5,ad_id=6"], "--keys gives column `ad_id` twice"),
        (["--rates", RATES, "--keys", "5,6"], "--keys gives a plain count twice"),
        (["--rates", RATES, "--keys", "ad_id=0"], "--keys ad_id= takes a count above 0"),
        (["--rates", RATES, "--keys", "ad_id=" + "9" * 16], "--keys ad_id= takes a count"),
        (["--rates", RATES, "--keys", "ad_id=" + "9" * 5000], "--keys ad_id= takes a count"),
        (["--rates", RATES, "--keys", "ad_id=\u00b2"], "--keys takes N or COLUMN=N"),
        (["--rates", RATES, "--keys", "\u00b2"], "--keys takes N or COLUMN=N"),
        (["--rates", RATES, "--keys", "ad_id=5,"], "--keys takes N or COLUMN=N"),
        (["--rates", RATES, "--keys", "ad_id==5"], "--keys takes N or COLUMN=N"),
        (["--rates", RATES, "--keys", "a d=5"], "--keys takes N or COLUMN=N"),
        (["--rates", RATES, "--keys", "=5"], "--keys takes N or COLUMN=N"),
        (["--rates", RATES, "--keys", "ad_id=-5"], "--keys takes N or COLUMN=N"),
        (["--rates", RATES, "--trigger", "soon"], "--trigger takes a duration"),
    ],
)
def test_bad_options_are_usage_errors(args: list[str], message: str) -> None:
    args = [a.encode().decode("unicode_escape") if "\\u" in a else a for a in args]
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
    assert len(starts) == 3
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


# ---------------------------------------------------------------- --keys per column (issue 35)

FUNNEL_ALL = ["--rates", FUNNEL_RATES, "--trigger", "10s", "--format", "json"]


def _capacity(*keys: str) -> dict[str, object]:
    code, out, err = invoke("plan", FUNNEL, *FUNNEL_ALL, *keys)
    assert code == 0, err
    capacity: dict[str, object] = json.loads(out)["capacity"]
    return capacity


def test_keys_per_column_as_the_plain_count() -> None:
    """Naming every join and grouping key column with the plain count predicts exactly what
    the plain count does (a plain N alone keeps its meaning), and a plain count beside named
    columns covers the others."""
    plain = _capacity("--keys", "5000")
    named = _capacity("--keys", "ad_id=5000,click_id=5000,campaign=5000")
    mixed = _capacity("--keys", "click_id=5000,5000")
    for other in (named, mixed):
        assert other["operators"] == plain["operators"]
    assumed = named["assumptions"]
    assert isinstance(assumed, dict)
    assert assumed["keys"] is None
    assert assumed["key_columns"] == {"ad_id": 5000, "click_id": 5000, "campaign": 5000}


def test_keys_per_column_say_a_unique_id_and_few_groups() -> None:
    """A unique click id and 20 campaigns at once: the second join's output falls with its
    key count (its matches are rarer), the first join's is that of its own key's count,
    and the aggregate's window holds the 20 campaigns (a plain 5,000 gave 1,067)."""
    plain = _capacity("--keys", "5000")
    named = _capacity("--keys", "ad_id=5000,click_id=200000,campaign=20")
    ops = {op["name"]: op for op in named["operators"]}  # type: ignore[attr-defined]
    was = {op["name"]: op for op in plain["operators"]}  # type: ignore[attr-defined]
    assert ops["clicked"] == was["clicked"]
    factor = was["converted"]["output_rows_per_second"] / ops["converted"]["output_rows_per_second"]
    assert factor == pytest.approx(200000 / 5000, rel=1e-6)
    assert ops["revenue"]["aggregate"]["groups_per_window"] <= 20
    assert was["revenue"]["aggregate"]["groups_per_window"] > 1000


def test_keys_per_column_notes() -> None:
    """A named column that is no join or grouping key changes nothing and is said; a key
    column left without a count (no plain count) is taken as every row its own key, and
    said."""
    code, out, err = invoke(
        "plan", FUNNEL, "--rates", FUNNEL_RATES, "--keys", "ad_id=5000,amount=10"
    )
    assert code == 0, err
    assert "--keys names `amount`, which is no join key and no grouping key" in out
    assert "a key column not named in --keys taken as every row its own key" in out
    assert "keys ad_id 5,000, amount 10;" in out
    code, out, err = invoke(
        "plan", FUNNEL, "--rates", FUNNEL_RATES, "--keys", "ad_id=5000,click_id=7,campaign=3"
    )
    assert code == 0, err
    assert "not named in --keys" not in out and "no join key and no grouping key" not in out


def test_a_single_latency_is_printed_once() -> None:
    """Batches back to back: a null row's latency and a window's results are one value,
    printed once (not `16 minutes 1 ms to 16 minutes 1 ms`); with a trigger, a range."""
    unpaid = str(next(p for p in EXAMPLES if p.stem == "unpaid_orders"))
    code, out, err = invoke("plan", unpaid, "--rates", "orders=10/s,payments=5/s")
    assert code == 0, err
    assert "left rows with no match come out 16 minutes 1 ms after their event time" in out
    code, out, err = invoke("plan", FUNNEL, "--rates", FUNNEL_RATES, "--keys", "5000")
    assert code == 0, err
    assert "a window's groups come out 50 minutes 2 ms after its end, when" in out
    code, out, err = invoke(
        "plan", unpaid, "--rates", "orders=10/s,payments=5/s", "--trigger", "1s"
    )
    assert code == 0, err
    assert "come out 16 minutes 1 second 1 ms to 16 minutes 2 seconds 1 ms after" in out


AGGREGATES = """spark 4.3
{trigger}stream clicks (ad_id BIGINT, brand STRING, t TIMESTAMP) watermark t delay 10 seconds
stream raw (ad_id BIGINT, t TIMESTAMP)
aggregate per_window = clicks AS c
  GROUP BY c.brand, window(c.t, INTERVAL 1 MINUTE)
  SELECT c.brand, window(c.t, INTERVAL 1 MINUTE) AS w, count(*) AS n
  OUTPUT MODE append
aggregate per_time = clicks AS c
  GROUP BY c.t
  SELECT c.t, count(*) AS n
  OUTPUT MODE update
aggregate per_brand = clicks AS c
  GROUP BY c.brand
  SELECT c.brand, count(*) AS n
  OUTPUT MODE update
aggregate per_ad = raw AS r
  GROUP BY r.ad_id
  SELECT r.ad_id, count(*) AS n
  OUTPUT MODE complete
"""


@pytest.mark.parametrize("trigger", ["", "set trigger = '10 seconds'\n"], ids=["none", "10s"])
def test_plain_plan_says_how_far_behind_an_aggregate_watermark_runs(
    tmp_path: Path, trigger: str
) -> None:
    """Without --rates, `sjoin plan` says per aggregate when a window's groups come out (or
    leave state) and how far its watermark runs behind its input, the very lag --rates
    predicts with (its JSON `eviction_lag_ms`); or why no group is ever evicted."""
    spec = tmp_path / "a.sjoin"
    spec.write_text(AGGREGATES.format(trigger=trigger))
    code, out, err = invoke("plan", str(spec))
    assert code == 0, err
    results = {
        block.split()[1]: line
        for block in out.split("\n\n")
        if block.startswith("aggregate ")
        for line in block.splitlines()
        if line.startswith("  results          ")
    }
    assert sorted(results) == ["per_ad", "per_brand", "per_time", "per_window"], out
    code, rated, err = invoke(
        "plan", str(spec), "--format", "json", "--rates", "clicks=1/s,raw=1/s"
    )
    assert code == 0, err
    lags = {
        op["name"]: op["aggregate"]["eviction_lag_ms"]
        for op in json.loads(rated)["capacity"]["operators"]
    }
    from sjoin.compiler.vocabulary.types import format_ms

    for name in ("per_window", "per_time"):
        lag = format_ms(round(lags[name]))
        assert f"the watermark runs {lag} behind the newest row of its input" in results[name]
    assert lags["per_window"] == (20_000 if trigger else 10_000)
    window = results["per_window"]
    if trigger:
        assert "a window's groups come out 20 seconds to 30 seconds after its end" in window
        assert "the trigger 10 seconds once (the spec's trigger)" in window
    else:
        assert "a window's groups come out 10 seconds after its end" in window
        assert "batches back to back" in window
    assert "an event time's groups leave state" in results["per_time"]
    assert results["per_brand"].endswith(
        "no grouping key carries a watermark: no group is ever evicted"
    )
    assert results["per_ad"].endswith(
        "complete mode keeps every group for ever (Spark evicts none)"
    )
    assert lags["per_brand"] is None and lags["per_ad"] is None


def test_plain_plan_of_an_aggregate_after_joins() -> None:
    """After two joins the lag holds the join state below it: the example's 50 minutes 2 ms
    is its streams' 10 minutes and the 40 minutes 2 ms the joins' state holds back."""
    code, out, err = invoke("plan", FUNNEL)
    assert code == 0, err
    assert (
        "  results          a window's groups come out 50 minutes 2 ms after its end: the "
        "watermark runs 50 minutes 2 ms behind the newest row of its input (its streams' delay "
        "10 minutes, 40 minutes 2 ms held back by the join state below it, batches back to back)"
    ) in out
