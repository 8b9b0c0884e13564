"""`sjoin run --report` seen in a real browser: headless Chromium renders the page from
file:// with the network off, the plots are SVG in the rendered DOM with their axis labels,
and a screenshot of the page is a picture, not a blank."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ..conftest import EXAMPLES
from .conftest import Chromium, Dom, distinct_colors, png_size, sjoin_command

pytestmark = pytest.mark.browser

CASES = {
    "ad_attribution": ["attributed: left (i)", "attributed: right (c)"],
    "checkout_funnel": [  # a chain: two joins and an aggregate in one query
        "clicked: left (i)",
        "clicked: right (c)",
        "converted: left (k)",
        "converted: right (p)",
        "revenue (aggregate)",
    ],
}


def sjoin_run_report(spec: Path, workdir: Path) -> tuple[Path, list[dict[str, object]]]:
    report, progress = workdir / f"{spec.stem}.html", workdir / f"{spec.stem}.progress.jsonl"
    subprocess.run(
        [
            *sjoin_command(),
            "run",
            str(spec),
            "--trace",
            str(spec.with_suffix(".trace.jsonl")),
            "--output",
            str(workdir / f"{spec.stem}.out.jsonl"),
            "--progress",
            str(progress),
            "--report",
            str(report),
        ],
        check=True,
        capture_output=True,
    )
    return report, [json.loads(line) for line in progress.read_text().splitlines()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_report_renders_in_chromium(name: str, chromium: Chromium, tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLES if p.stem == name)
    report, progress = sjoin_run_report(spec, tmp_path)
    dom = Dom(chromium.dom(report))
    assert "sjoin run report" in " ".join(dom.text), "the page did not render"
    assert len(dom.svgs) == 3, "watermark, state rows and output rows, one <svg> each"
    watermark, state, rows = (dom.svg_text(i) for i in range(3))
    assert "watermark (UTC)" in watermark and "batch" in watermark
    assert "state rows" in state and "output rows" in rows
    for label in CASES[name]:
        assert label in state
    data = sum(1 for p in progress if any(o["numRowsUpdated"] for o in p["operators"]))
    assert data > 0
    assert f"{len(progress)} (" in " ".join(dom.text), "the header gives the batch count"
    body = dom.rows[1:]
    assert [r[0] for r in body] == [str(p["batch"]) for p in progress]


def test_report_screenshot_is_a_picture(chromium: Chromium, tmp_path: Path) -> None:
    spec = next(p for p in EXAMPLES if p.stem == "checkout_funnel")
    report, _ = sjoin_run_report(spec, tmp_path)
    png = tmp_path / "report.png"
    data = chromium.screenshot(report, png, size=(1200, 2400))
    assert png_size(data) == (1200, 2400)
    assert len(data) > 50_000, "a page of three plots and a table is not that small a PNG"
    assert distinct_colors(png) > 100, "the screenshot is (nearly) blank"


def test_hostile_names_render_as_written(chromium: Chromium, tmp_path: Path) -> None:
    """Names matplotlib would read as math text, or leave out of a legend, in every place
    of a spec: Chromium shows each legend entry exactly as written."""
    from .test_report import HOSTILE_NAMES, hostile_spec

    for key in ("frac", "power", "mixed", "underscore"):
        spec, trace, n = hostile_spec(HOSTILE_NAMES[key])
        path = tmp_path / f"{key}.sjoin"
        path.write_text(spec)
        path.with_suffix(".trace.jsonl").write_text("".join(json.dumps(r) + "\n" for r in trace))
        report, _ = sjoin_run_report(path, tmp_path)
        dom = Dom(chromium.dom(report))
        assert len(dom.svgs) == 3, key
        state = dom.svg_text(1).splitlines()
        for label in (f"{n['join']}: left ({n['a']})", f"{n['agg']} (aggregate)"):
            assert label in state, (key, label, state)
        assert n["join"] in dom.svg_text(2).splitlines(), key
