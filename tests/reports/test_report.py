"""`reports/run_page.py` and `sjoin run --report`: the page says what the progress records say,
batch by batch, needs nothing outside itself, and every failure is one sentence with exit 2."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.api import check_file, check_text
from sjoin.cli.main import main
from sjoin.compiler.planning.plan import Plan
from sjoin.reports.run_page import BatchFigures, Report, render, trace_rates
from sjoin.runtime import RunResult, run

from ..conftest import EXAMPLES
from .conftest import Dom

AD = next(p for p in EXAMPLES if p.stem == "ad_attribution")
FUNNEL = next(p for p in EXAMPLES if p.stem == "checkout_funnel")

TWO_QUERIES = """spark 4.3
stream a (k BIGINT, t TIMESTAMP)
stream b (k BIGINT, t TIMESTAMP)
join `<j1>` = a AS x INNER JOIN b AS y ON x.k = y.k
join j2 = a AS x INNER JOIN b AS y ON x.k = y.k AND x.t = y.t
"""
TWO_TRACE = [
    {"batch": 0, "stream": "a", "row": {"k": 1, "t": "2026-01-01T00:00:00Z"}},
    {"batch": 0, "stream": "b", "row": {"k": 1, "t": "2026-01-01T00:00:00Z"}},
    {"batch": 1, "stream": "a", "row": {"k": 2, "t": "2026-01-01T00:00:00Z"}},
    {"batch": 2, "stream": "b", "row": {"k": 2, "t": "2026-01-01T00:00:00Z"}},
]


def plan_of(spec: Path) -> Plan:
    plan = check_file(spec).plan
    assert plan is not None
    return plan


def example(spec: Path) -> tuple[Plan, RunResult, str]:
    plan = plan_of(spec)
    result = run(plan, spec.with_suffix(".trace.jsonl"))
    page = render(plan, result.batches, spec=spec.name, trace="t.jsonl")
    return plan, result, page


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def table_rows(dom: Dom) -> list[dict[str, str]]:
    head, *body = dom.rows
    return [dict(zip(head, row, strict=True)) for row in body]


def test_page_has_header_three_plots_and_the_figures_of_every_batch() -> None:
    _, result, page = example(AD)
    dom = Dom(page)
    text = "\n".join(dom.text)
    assert "sjoin run report: ad_attribution.sjoin" in text
    assert "Spark targeted" in text and "4.0" in text
    data = sum(b.data for b in result.batches)
    assert f"{len(result.batches)} ({data} with data, {len(result.batches) - data} no-data)" in text
    assert len(dom.svgs) == 3  # watermark, state rows, output rows
    for label in ("batch", "watermark (UTC)", "state rows", "output rows", "no-data batch"):
        assert label in dom.svg_text(), label
    rows = table_rows(dom)
    assert len(rows) == len(result.batches)
    for row, batch in zip(rows, result.batches, strict=True):
        (operator,) = batch.progress["operators"]
        assert row["batch"] == str(batch.batch)
        assert row["kind"] == ("data" if batch.data else "no-data")
        assert row["watermark"] == batch.progress["watermark"]
        assert row["state attributed"] == str(operator["numRowsTotal"])
        assert row["rows attributed"] == str(len(batch.rows))
    assert f"<dd>{len(result.rows())}</dd>" in page


def test_chain_plots_every_operator_and_relation() -> None:
    _, result, page = example(FUNNEL)
    dom = Dom(page)
    assert len(dom.svgs) == 3  # one query (revenue) reads the whole chain
    legend = dom.svg_text()
    for label in (
        "clicked: left (i)",
        "clicked: right (c)",
        "converted: left (k)",
        "converted: right (p)",
        "revenue (aggregate)",
    ):
        assert label in legend
    counts = {r: len(result.rows(r)) for r in ("clicked", "converted", "revenue")}
    assert f"clicked {counts['clicked']}, converted {counts['converted']}" in page
    rows = table_rows(dom)
    for row, batch in zip(rows, result.batches, strict=True):
        for op in batch.progress["operators"]:
            assert row[f"state {op['relation']}"] == str(op["numRowsTotal"])


def test_page_is_self_contained() -> None:
    _, _, page = example(FUNNEL)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert not re.search(r"\bsrc=", page)
    assert set(re.findall(r'href="(.)', page)) <= {"#"}  # only references inside an SVG
    assert not re.search(r"url\((?!#)", page)
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "ids must be unique across the inline SVGs"


def test_page_is_deterministic() -> None:
    assert example(AD)[2] == example(AD)[2]


def test_watermark_ticks_over_days_name_the_month() -> None:
    """Ticks of a watermark that spans days read `Jan 09`, not `09` (which reads as an hour;
    issue 23)."""
    trace = [
        {"batch": b, "stream": s, "row": {"k": b, "t": f"2026-01-{1 + 2 * b:02d}T00:00:00Z"}}
        for b in range(6)
        for s in ("a", "b")
    ]
    spec = TWO_QUERIES.replace(
        "stream a (k BIGINT, t TIMESTAMP)",
        "stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 second",
    ).replace(
        "stream b (k BIGINT, t TIMESTAMP)",
        "stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 second",
    )
    plan = check_text(spec).plan
    assert plan is not None
    result = run(plan, trace, relation="j2")
    dom = Dom(render(plan, result.batches, spec="s.sjoin", trace="t.jsonl"))
    (ticks,) = [t.splitlines() for t in map(dom.svg_text, range(3)) if "watermark (UTC)" in t]
    days = [t for t in ticks if re.fullmatch(r"Jan \d\d", t)]
    assert len(days) >= 2, ticks
    assert not [t for t in ticks if re.fullmatch(r"0\d", t)], ticks  # `03` for Jan 3


def test_first_batch_before_any_watermark_is_not_drawn() -> None:
    _, result, page = example(AD)
    assert result.batches[0].watermark == "1970-01-01T00:00:00Z"
    assert "Batch 0 ran before any watermark was known" in page


def test_one_section_per_query_names_escaped_and_no_watermark() -> None:
    plan = check_text(TWO_QUERIES).plan
    assert plan is not None
    page = render(plan, run(plan, TWO_TRACE).batches, spec="two.sjoin", trace="t.jsonl")
    dom = Dom(page)
    assert "<j1>" not in page and "&lt;j1&gt;" in page
    assert len(dom.svgs) == 4  # per query: state and output rows; no watermark to plot
    assert page.count("No watermark: this query reads no stream with a watermark") == 2
    assert "<j1>: left (x)" in dom.svg_text()
    assert [h for h in dom.text if h.startswith("Per-batch figures")] == [
        "Per-batch figures of"
    ] * 2


def test_a_run_without_batches_says_so() -> None:
    page = render(plan_of(AD), [], spec="ad.sjoin", trace="empty.jsonl")
    assert "The run executed no batch" in page and "<svg" not in page


def test_report_keeps_figures_not_rows() -> None:
    plan, result, _ = example(AD)
    report = Report(plan, spec="s", trace="t")
    for out in result.batches:
        report.add(out, 0)
    kept = report.batches[2]
    assert isinstance(kept, BatchFigures)
    assert kept.rows == {"attributed": len(result.batches[2].rows)}


# ---------------------------------------------------------------------------- the command


def test_run_report_with_output_and_progress(tmp_path: Path) -> None:
    trace = str(AD.with_suffix(".trace.jsonl"))
    plain = tmp_path / "plain.jsonl"
    code, _, err = invoke("run", str(AD), "--trace", trace, "--output", str(plain))
    assert code == 0, err
    output, progress, report = tmp_path / "o.jsonl", tmp_path / "p.jsonl", tmp_path / "r.html"
    code, out, err = invoke(
        "run", str(AD), "--trace", trace, "--output", str(output), "--progress", str(progress),
        "--report", str(report),
    )  # fmt: skip
    assert code == 0, err
    assert out == "" and f"report: {report}" in err
    assert output.read_text() == plain.read_text()  # --report changes nothing else
    records = [json.loads(line) for line in progress.read_text().splitlines()]
    dom = Dom(report.read_text())
    assert len(table_rows(dom)) == len(records)
    assert [r["watermark"] for r in table_rows(dom)] == [r["watermark"] for r in records]


def test_missing_matplotlib_is_one_sentence_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    report = tmp_path / "r.html"
    code, out, err = invoke(
        "run", str(AD), "--trace", str(AD.with_suffix(".trace.jsonl")), "--report", str(report)
    )
    assert code == 2
    assert err.strip().count("\n") == 0, err
    assert "pip install 'sjoin[report]'" in err and "Traceback" not in err
    assert out == "" and not report.exists()  # nothing ran


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (".", "is a directory"),
        ("missing/r.html", "cannot write the report to"),
        ("file.txt/r.html", "cannot write the report to"),
    ],
)
def test_bad_report_path_is_a_usage_error(tmp_path: Path, target: str, message: str) -> None:
    (tmp_path / "file.txt").write_text("")
    code, out, err = invoke(
        "run", str(AD), "--trace", str(AD.with_suffix(".trace.jsonl")),
        "--report", str(tmp_path / target),
    )  # fmt: skip
    assert code == 2, err
    assert message in err and "Traceback" not in err
    assert out == ""  # checked before the run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_run_without_report_does_not_import_matplotlib(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from sjoin.cli.main import main\n"
        f"r = CliRunner().invoke(main, ['run', {str(AD)!r}, '--trace', "
        f"{str(AD.with_suffix('.trace.jsonl'))!r}, '--output', {str(tmp_path / 'o')!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "bad = [m for m in sys.modules if m.split('.')[0] == 'matplotlib']\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_long_run_draws_lines_without_markers() -> None:
    plan = plan_of(AD)
    trace = [
        {
            "batch": b,
            "stream": stream,
            "row": {"ad_id": b, column: f"2026-01-01T{b // 60:02}:{b % 60:02}:00Z", **extra},
        }
        for b in range(150)
        for stream, column, extra in (
            ("impressions", "impression_time", {"campaign": "a"}),
            ("clicks", "click_time", {"user_id": "u"}),
        )
    ]
    result = run(plan, trace)
    assert len(result.batches) > 120
    dom = Dom(render(plan, result.batches, spec="long.sjoin", trace="t.jsonl"))
    assert len(dom.svgs) == 3 and len(dom.rows) == len(result.batches) + 1
    assert "Hollow markers" not in " ".join(dom.text)
    assert "watermark (UTC)" in dom.svg_text(0) and "2025-12-31" in dom.svg_text(
        0
    )  # 3 hours' delay


def test_a_flat_watermark_gets_an_hour_not_years() -> None:
    plan = plan_of(AD)
    at = "2026-01-01T10:00:00Z"
    rows = [
        {"stream": "impressions", "row": {"ad_id": 1, "impression_time": at, "campaign": "a"}},
        {"stream": "clicks", "row": {"ad_id": 1, "click_time": at, "user_id": "u"}},
    ]
    trace = [{"batch": b, **r} for b in (0, 1) for r in rows]
    result = run(plan, trace)
    assert {b.watermark for b in result.batches[1:]} == {"2026-01-01T07:00:00Z"}
    ticks = Dom(render(plan, result.batches, spec="s", trace="t")).svg_text(0).splitlines()
    assert "07:00" in ticks
    assert not [t for t in ticks if re.fullmatch(r"\d{4}|[A-Z][a-z]{2}", t)], ticks


# ---------------------------------------------------------------------------- hostile names

# Names matplotlib would read as math text (an even number of `$`), fail to parse as math
# (`$\frac{$`), unescape (`\$`), or leave out of a legend (a leading `_`), and markup.
HOSTILE_NAMES = {
    "frac": "$\\frac{$",
    "power": "$x^2$",
    "two-dollars": "$$",
    "one-dollar": "$",
    "escaped-dollar": "\\$",
    "mixed": "a\\$b$c$",
    "backslash": "\\",
    "underscore": "_j",
    "nolegend": "_nolegend_",
    "markup": "<b>&amp;</b>",
    "tex": "\\textbf{x}",
    "percent": "%s %d {}",
    "backtick": "a`b",
}


def q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def hostile_spec(name: str) -> tuple[str, list[dict[str, object]], dict[str, str]]:
    """A spec whose every name (streams, columns, watermark columns, join, aggregate,
    aliases, SELECT names) holds ``name``, a trace for it, and the names by role."""
    n = {
        "s1": name + "1",
        "s2": name + "2",
        "k": name + "k",
        "t1": name + "t",
        "t2": name + "u",
        "join": name,
        "agg": name + "g",
        "a": name + "a",
        "b": name + "b",
        "c": name + "c",
        "w": name + "w",
        "n": name + "n",
    }
    x = {role: q(name) for role, name in n.items()}  # as the spec writes them
    spec = (
        "spark 4.3\n"
        f"stream {x['s1']} ({x['k']} BIGINT, {x['t1']} TIMESTAMP)\n"
        f"    watermark {x['t1']} delay 1 second\n"
        f"stream {x['s2']} ({x['k']} BIGINT, {x['t2']} TIMESTAMP)\n"
        f"    watermark {x['t2']} delay 1 second\n"
        f"join {x['join']} = {x['s1']} AS {x['a']} INNER JOIN {x['s2']} AS {x['b']}\n"
        f"    ON {x['a']}.{x['k']} = {x['b']}.{x['k']}\n"
        f"    AND {x['a']}.{x['t1']} = {x['b']}.{x['t2']}\n"
        f"    SELECT {x['a']}.{x['k']} AS {x['k']}, {x['a']}.{x['t1']} AS {x['t1']}\n"
        f"aggregate {x['agg']} = {x['join']} AS {x['c']}\n"
        f"    GROUP BY window({x['c']}.{x['t1']}, INTERVAL 1 MINUTE)\n"
        f"    SELECT window({x['c']}.{x['t1']}, INTERVAL 1 MINUTE) AS {x['w']},"
        f" count(*) AS {x['n']}\n"
    )
    trace: list[dict[str, object]] = []
    for batch, minute in enumerate((0, 5, 10)):
        at = f"2026-01-01T00:{minute:02}:00Z"
        trace.append({"batch": batch, "stream": n["s1"], "row": {n["k"]: 1, n["t1"]: at}})
        trace.append({"batch": batch, "stream": n["s2"], "row": {n["k"]: 1, n["t2"]: at}})
    return spec, trace, n


@pytest.fixture
def math_texts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every string matplotlib draws as math text while the test runs (there must be none)."""
    from matplotlib.text import Text

    found: list[str] = []
    preprocess = Text._preprocess_math

    def spy(self: Text, s: str) -> tuple[str, bool | str]:
        out = preprocess(self, s)
        if out[1]:
            found.append(s)
        return out

    monkeypatch.setattr(Text, "_preprocess_math", spy)
    return found


@pytest.mark.parametrize("markers", [True, False], ids=["bars", "lines"])
@pytest.mark.parametrize("key", sorted(HOSTILE_NAMES))
def test_hostile_names_are_drawn_as_written(
    key: str, markers: bool, math_texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every name the report shows (join, aggregate, aliases, in the legends and the table)
    comes out exactly as written: never math text, never left out of a legend."""
    import sjoin.reports.run_page

    if not markers:  # the rows plot of a long run: lines, not bars
        monkeypatch.setattr(sjoin.reports.run_page, "MARKERS_UP_TO", 0)
    spec, trace, n = hostile_spec(HOSTILE_NAMES[key])
    result = check_text(spec)
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    ran = run(result.plan, trace)
    assert ran.rows(n["agg"]), "the aggregate emits, so every plot has data"
    page = render(result.plan, ran.batches, spec="h.sjoin", trace="h.jsonl")
    assert not math_texts
    dom = Dom(page)
    assert len(dom.svgs) == 3
    _, state, rows = (dom.svg_text(i).splitlines() for i in range(3))
    j, g = n["join"], n["agg"]
    for label in (f"{j}: left ({n['a']})", f"{j}: right ({n['b']})", f"{g} (aggregate)"):
        assert label in state, (label, state)
    assert j in rows and g in rows, rows
    head = dom.rows[0]
    for cell in (f"state {j}", f"{j} left", f"{j} right", f"state {g}", f"rows {j}", f"rows {g}"):
        assert cell in head, (cell, head)
    assert dom.text.count("Query") == 1 and dom.text[dom.text.index("Query") + 1] == g


def test_plain_text_round_trips_through_matplotlib() -> None:
    """``plain`` is exact: matplotlib shows what the user wrote for any mix of `$` and `\\`,
    and never as math; unprintable characters become visible escapes on one line."""
    from matplotlib.text import Text

    from sjoin.reports.run_page import plain

    samples = ["$", "$$", "\\$", "\\\\$", "$\\$", "a$b\\$c$$\\", "\\", "x$y\\\\$$z", ""]
    samples += ["".join(p) for p in itertools.product("$\\a", repeat=4)]
    for text in samples:
        shown, math = Text(text=plain(text))._preprocess_math(plain(text))
        assert (shown, math) == (text, False), text
    assert plain("a\nb\x00c\u2028") == "a\\nb\\x00c\\u2028"


def test_reproduction_report_of_a_relation_named_like_math(tmp_path: Path) -> None:
    """The issue's reproduction: `sjoin run --report` of a relation named `$\\frac{$` ended
    in E999 (matplotlib's math parser); now the page is written and shows the name."""
    spec, trace, n = hostile_spec("$\\frac{$")
    (tmp_path / "h.sjoin").write_text(spec)
    (tmp_path / "h.jsonl").write_text("".join(json.dumps(r) + "\n" for r in trace))
    report = tmp_path / "r.html"
    code, _, err = invoke(
        "run", str(tmp_path / "h.sjoin"), "--trace", str(tmp_path / "h.jsonl"),
        "--output", str(tmp_path / "out.jsonl"), "--report", str(report),
    )  # fmt: skip
    assert code == 0, err
    assert "E999" not in err
    assert f"{n['join']}: left ({n['a']})" in Dom(report.read_text()).svg_text(1).splitlines()


def test_predicted_state_rows_beside_the_measured(tmp_path: Path) -> None:
    """A trace at known rates (benchmarks/capacity.py's generator): the page draws the
    prediction of `sjoin plan --rates` at the trace's rates, which it measures in the trace,
    as a dotted line per join side, and says what it predicts in the caption; the measured
    state rows after warm-up are within 10% of it."""
    from ..compiler.describe.test_capacity import load_bench

    bench = load_bench()
    (case,) = [c for c in bench.CASES if c.name == "left-outer"]
    result = check_text(case.spec)
    assert result.plan is not None
    records = bench.generate(result.plan, case.rates, case.keys, 5, case.batches)
    spec, trace, page = tmp_path / "j.sjoin", tmp_path / "t.jsonl", tmp_path / "r.html"
    spec.write_text(case.spec)
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, _, err = invoke(
        "run",
        str(spec),
        "--trace",
        str(trace),
        "--output",
        str(tmp_path / "o"),
        "--report",
        str(page),
    )
    assert code == 0, err
    text = page.read_text()
    assert "j: left predicted" in text and "j: right predicted" in text
    caption = re.search(r"Dotted: (.*?)</figcaption>", text)
    assert caption is not None
    # the keys: the join key's distinct values in the trace (most of the 2,000 drawn)
    assert re.search(
        r"\(<code>j</code> left 3,500 rows, <code>j</code> right 1,500 rows\) at the trace's rates "
        r"\(<code>a</code> 100/s, <code>b</code> 100/s, 1,9[0-9][0-9] keys, a batch every 5 s "
        r"of event time: the trace&#x27;s batches\)",
        caption.group(1),
    )
    measured = [b for b in run(result.plan, trace).batches if b.data][-1].state_sides["j"]
    assert measured[0] == pytest.approx(3500, rel=0.1) and measured[1] == pytest.approx(
        1500, rel=0.1
    )


def test_predicted_groups_beside_the_measured(tmp_path: Path) -> None:
    """A join feeding an aggregate: the page draws the aggregate's predicted groups at the
    trace's rates and keys (the distinct values of the join key in the trace) beside its
    measured groups, which after warm-up are within 10% of it."""
    from ..compiler.describe.test_capacity import load_bench

    bench = load_bench()
    (case,) = [c for c in bench.CASES if c.name == "inner -> append"]
    result = check_text(case.spec)
    assert result.plan is not None
    records = bench.generate(result.plan, case.rates, case.keys, 5, case.batches)
    spec, trace, page = tmp_path / "j.sjoin", tmp_path / "t.jsonl", tmp_path / "r.html"
    spec.write_text(case.spec)
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    measured = trace_rates(result.plan, trace)
    assert measured is not None and measured[2] is not None
    assert measured[2] == pytest.approx(case.keys, rel=0.02)  # nearly every key drawn
    code, _, err = invoke(
        "run", str(spec), "--trace", str(trace), "--output", str(tmp_path / "o"),
        "--report", str(page),
    )  # fmt: skip
    assert code == 0, err
    text = page.read_text()
    assert "g: groups predicted" in text and "j: left predicted" in text
    caption = re.search(r"Dotted: (.*?)</figcaption>", text)
    assert caption is not None
    found = re.search(r"<code>g</code> groups ([0-9,]+)", caption.group(1))
    assert found is not None
    predicted = float(found.group(1).replace(",", ""))
    batches = [b for b in run(result.plan, trace, relation="g").batches if b.data][-10:]
    groups = [bench.metrics(b.progress["operators"], "g")["numRowsTotal"] for b in batches]
    assert sum(groups) / len(groups) == pytest.approx(predicted, rel=0.1)


def test_no_prediction_without_event_time() -> None:
    """A trace whose batches do not advance event time gives no rates: no dotted line."""
    plan = check_text(TWO_QUERIES).plan
    assert plan is not None
    page = render(plan, run(plan, TWO_TRACE).batches, spec="s", trace="t")
    assert "predicted" not in page and "Dotted" not in page


def _caption(page: Path) -> str:
    found = re.search(r"State rows each stateful operator keeps.*?</figcaption>", page.read_text())
    assert found is not None
    return found.group(0)


def test_no_prediction_from_a_trace_too_short_to_have_a_rate(tmp_path: Path) -> None:
    """Issue 35, item 16: the `sjoin init` demo trace (3 batches, 3 orders over 8 days) made
    rates of 4.36e-06/s and dotted lines from them. A trace with fewer than 5 batches that
    advance event time, or a stream with fewer than 16 rows with an event time, predicts
    nothing, and the caption says why."""
    from sjoin.cli.scaffold import scaffold
    from sjoin.reports.run_page import MIN_ROWS, MIN_STEPS

    spec, trace, _ = scaffold("shipped", tmp_path)
    assert isinstance(trace_rates(check_file(spec).plan, trace), str)  # type: ignore[arg-type]
    page = tmp_path / "demo.html"
    code, _, err = invoke("run", str(spec), "--trace", str(trace), "--report", str(page))
    assert code == 0, err
    caption = _caption(page)
    assert "predicted" not in page.read_text().replace("No predicted (dotted) line", "")
    assert (
        "No predicted (dotted) line: the trace has 3 batches whose newest event time advances; "
        f"a rate and the event time between batches take at least {MIN_STEPS + 1}."
    ) in caption
    example = {p.stem: p for p in EXAMPLES}["checkout_funnel"]  # 9 purchases
    page = tmp_path / "funnel.html"
    code, _, err = invoke(
        "run", str(example), "--trace", str(example.with_suffix(".trace.jsonl")),
        "--report", str(page),
    )  # fmt: skip
    assert code == 0, err
    assert (
        "No predicted (dotted) line: too few rows with an event time to measure a rate "
        f"(`purchases` 9 rows; a rate from n rows is off by about 1/\u221an: at least {MIN_ROWS} "
        "each)."
    ) in _caption(page)
    assert "predicted</text>" not in page.read_text()  # no legend entry


def test_no_predicted_line_for_a_state_not_steady_within_the_trace(tmp_path: Path) -> None:
    """Rates measured well, but the trace ends before the join's state is steady: its
    dotted line would stand where the measured one cannot reach; the caption says so."""
    from ..compiler.describe.test_capacity import load_bench

    bench = load_bench()
    (case,) = [c for c in bench.CASES if c.name == "left-outer"]
    result = check_text(case.spec)
    assert result.plan is not None
    records = bench.generate(result.plan, case.rates, case.keys, 5, 6)  # 30 s of event time
    spec, trace, page = tmp_path / "j.sjoin", tmp_path / "t.jsonl", tmp_path / "r.html"
    spec.write_text(case.spec)
    trace.write_text("".join(json.dumps(r) + "\n" for r in records))
    measured = trace_rates(result.plan, trace)
    assert not isinstance(measured, str) and measured.span_ms < 30_000
    code, _, err = invoke(
        "run", str(spec), "--trace", str(trace), "--output", str(tmp_path / "o"),
        "--report", str(page),
    )  # fmt: skip
    assert code == 0, err
    caption = _caption(page)
    assert re.search(
        r"No predicted line for <code>j</code>: its state is steady after [^<]+ of event time, "
        r"more than the trace spans \(2[0-9] seconds?[^)]*\)\.",
        caption,
    ), caption
    assert "j: left predicted" not in page.read_text()


def test_a_report_of_a_window_aggregate_over_a_stream(tmp_path: Path) -> None:
    """The keys of a stream aggregate by a window are its stream's columns only: the
    window's planner-made name `__window_0` made the shipped iot example's report E999."""
    example = {p.stem: p for p in EXAMPLES}["iot_window_join"]
    page = tmp_path / "iot.html"
    code, _, err = invoke(
        "run", str(example), "--trace", str(example.with_suffix(".trace.jsonl")),
        "--report", str(page),
    )  # fmt: skip
    assert code == 0 and "E999" not in err, err
    assert "Dotted: the steady state" in page.read_text()
