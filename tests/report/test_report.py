"""`sjoin/report.py` and `sjoin run --report`: the page says what the progress records say,
batch by batch, needs nothing outside itself, and every failure is one sentence with exit 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sjoin.api import check_file, check_text
from sjoin.cli import main
from sjoin.compiler.plan import Plan
from sjoin.report import BatchFigures, Report, render
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
        "from sjoin.cli import main\n"
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
