"""The other side of the catalogue: specs on the accepting side of each of Spark's rules must
check without errors (a false positive is as wrong as a missed error).

Each rule-boundary spec states the diagnostics it must give (warnings only), and the
version-dependent cases of the catalogue must pass once the target version changes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sjoin.api import check_text

ROOT = Path(__file__).resolve().parents[3]
CASES = Path(__file__).parent / "cases"
EXAMPLES = sorted((ROOT / "examples").glob("*.sjoin"))

ADS = """
stream impressions (ad_id BIGINT, impression_time TIMESTAMP, campaign STRING)
watermark impression_time delay 2 hours
stream clicks (ad_id BIGINT, click_time TIMESTAMP, user_id STRING)
watermark click_time delay 3 hours
"""
JOIN = "join j = impressions AS i {how} JOIN clicks AS c ON i.ad_id = c.ad_id AND {cond}\n"
THEN_AGGREGATE = (
    " SELECT i.campaign, i.impression_time\n"
    "aggregate g = j GROUP BY j.campaign, window(j.impression_time, INTERVAL 1 HOUR)\n"
    "    SELECT j.campaign, count(*) AS n\n"
)
RANGE = "c.click_time BETWEEN i.impression_time AND i.impression_time + INTERVAL 1 HOUR"


def spec(version: str, how: str, cond: str, tail: str = "") -> str:
    return f"spark {version}\n{ADS}\n" + JOIN.format(how=how, cond=cond).rstrip("\n") + tail


# name -> (spec, the codes it must report: warnings only, in any order)
ACCEPTED: dict[str, tuple[str, list[str]]] = {
    # E021: Spark's rule per join type
    "left outer with the event time in the keys": (
        spec("4.0", "LEFT OUTER", "i.impression_time = c.click_time"),
        [],
    ),
    "left outer bounded below only: right state unbounded": (
        spec("4.0", "LEFT OUTER", "i.impression_time >= c.click_time - INTERVAL 1 HOUR"),
        ["W001"],
    ),
    "right outer bounded below only: left state unbounded": (
        spec("4.0", "RIGHT OUTER", "c.click_time >= i.impression_time"),
        ["W001"],
    ),
    "left semi with window keys": (
        spec(
            "4.0",
            "LEFT SEMI",
            "window(i.impression_time, INTERVAL 1 HOUR) = window(c.click_time, INTERVAL 1 HOUR)",
        ),
        [],
    ),
    "left anti with a full range": (spec("4.3", "LEFT ANTI", RANGE), []),
    "full outer with a full range": (spec("4.3", "FULL OUTER", RANGE), ["W005"]),
    # E022: the global-watermark check per version
    "3.3: inner interval join then aggregate": (
        spec("3.3", "INNER", RANGE, THEN_AGGREGATE),
        [],
    ),
    "3.4: left outer join on the event time then aggregate": (
        spec("3.4", "LEFT OUTER", "i.impression_time = c.click_time", THEN_AGGREGATE),
        [],
    ),
    "3.5: left outer interval join then aggregate": (
        spec("3.5", "LEFT OUTER", RANGE, THEN_AGGREGATE),
        [],
    ),
    # E023: Update after an inner join from Spark 4.2
    "4.2: inner join then aggregate in update mode": (
        spec(
            "4.2",
            "INNER",
            RANGE,
            " SELECT i.campaign\n"
            "aggregate g = j GROUP BY j.campaign SELECT j.campaign, count(*) AS n "
            "OUTPUT MODE update\n",
        ),
        [],
    ),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted(name: str) -> None:
    text, codes = ACCEPTED[name]
    result = check_text(text, "accepted.sjoin")
    found = sorted(d.code for d in result.diagnostics)
    assert found == sorted(codes), [(d.code, d.message) for d in result.diagnostics]


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_have_no_errors(path: Path) -> None:
    result = check_text(path.read_text(encoding="utf-8"), path.name)
    assert result.ok, [(d.code, d.message) for d in result.diagnostics]


# Catalogue cases whose error depends on the target version: with another target, the same
# spec is accepted (E027's spec is not: from 3.4 an Update-mode aggregation may not be followed
# by another, so it gets E022 instead; only E027 must go).
VERSION_CASES = [
    ("E022_spark33_outer_join_then_aggregate", "spark 3.3", ["spark 3.5", "spark 4.0"]),
    ("E022_spark33_outer_join_then_join", "spark 3.3", ["spark 3.5", "spark 4.3"]),
    ("E022_spark34_interval_join_then_aggregate", "spark 3.4", ["spark 3.3", "spark 3.5"]),
    ("E025_two_event_time_columns", "spark 3.5", ["spark 3.3"]),
    ("E027_multiple_aggregations_spark33", "spark 3.3", ["spark 3.4", "spark 4.3"]),
    ("E023_join_output_mode_update_spark41", "spark 4.1", ["spark 4.2", "spark 4.3"]),
    ("W007_correctness_check_disabled", "spark 3.3", ["spark 3.5"]),
]


@pytest.mark.parametrize(
    ("case", "old", "new"),
    [(case, old, new) for case, old, news in VERSION_CASES for new in news],
    ids=lambda v: str(v).replace(" ", ""),
)
def test_version_dependent_case_passes_on_other_version(case: str, old: str, new: str) -> None:
    text = (CASES / f"{case}.sjoin").read_text(encoding="utf-8")
    assert old in text
    result = check_text(text.replace(old, new, 1), f"{case}.sjoin")
    assert case[:4] not in {d.code for d in result.diagnostics}
    errors = {d.code for d in result.diagnostics if d.severity == "error"}
    allowed = {"E022"} if case.startswith("E027") else set()
    assert errors <= allowed, [(d.code, d.message) for d in result.diagnostics]
