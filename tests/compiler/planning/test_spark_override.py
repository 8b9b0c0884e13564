"""``check_text(..., spark=V)``: the spec planned for Spark V over its `spark` statement, as
`verify` (the Spark that runs) and `diff --spark A --to B` plan it.

The text is checked as written, so every diagnostic points at the user's own lines wherever
the statement stands (none, first line, last line, over several lines), and every diagnostic
that depends on the version (ANSI casts in the binder, the analysis rules, the output modes,
the watermark late rows are judged by) is the one of V: the same as the spec gets when its
statement says V.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sjoin.api import CheckResult, check_text
from sjoin.compiler.vocabulary.model import SUPPORTED_SPARK, SparkVersion
from sjoin.jvm.verify import like_local, verify_spec
from sjoin.reports.diagnostics import to_dict
from sjoin.reports.diffing import DiffUsageError, at_version, diff_upgrade

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

# checkout_funnel's chain with three version-dependent verdicts: a BIGINT pad length past
# INT (E012 with ANSI on, 4.x; a wrapped cast on 3.x), a chain of time-interval joins
# followed by an aggregate (E022 on 3.4, global watermark) and a join in Update mode (4.2+
# allows it for inner joins, earlier versions reject it).
BODY = """\
stream impressions (ad_id BIGINT, campaign STRING, impression_time TIMESTAMP)
watermark impression_time delay 10 minutes

stream clicks (ad_id BIGINT, click_id STRING, click_time TIMESTAMP)
watermark click_time delay 10 minutes

stream purchases (click_id STRING, amount DOUBLE, purchase_time TIMESTAMP)
watermark purchase_time delay 10 minutes

join clicked = impressions AS i INNER JOIN clicks AS c
    ON  i.ad_id = c.ad_id
    AND c.click_time >= i.impression_time
    AND c.click_time <= i.impression_time + INTERVAL 10 MINUTES
    SELECT i.campaign, lpad(c.click_id, 2147483648, 'x') AS click_id, c.click_time

join converted = clicked AS k INNER JOIN purchases AS p
    ON  k.click_id = p.click_id
    AND p.purchase_time >= k.click_time
    AND p.purchase_time <= k.click_time + INTERVAL 30 MINUTES
    SELECT k.campaign, p.amount, p.purchase_time

aggregate revenue = converted AS v
    GROUP BY v.campaign, window(v.purchase_time, INTERVAL 10 MINUTES)
    SELECT v.campaign, count(*) AS purchases
    OUTPUT MODE update
"""

# where the spec states its version: each form with the written version ``w`` (3 characters,
# as every supported X.Y, so the spec and its reference have the same offsets)
FORMS: dict[str, Callable[[str], str]] = {
    "none": lambda w: BODY,
    "first line": lambda w: f"spark {w}\n\n" + BODY,
    "last line": lambda w: BODY + f"\nspark {w}\n",
    "over three lines": lambda w: f"-- the target\nspark\n  -- a comment inside\n  {w}\n" + BODY,
    "no line break at the end": lambda w: BODY + f"spark {w}",
}
VERSIONS = [f"{a}.{b}" for a, b in SUPPORTED_SPARK]


def reference(form: str, version: str) -> str:
    """The spec whose own statement says ``version``, where ``form`` has it (at the end
    when ``form`` has none: the lines before it keep their numbers)."""
    return FORMS["last line" if form == "none" else form](version)


def located(result: CheckResult) -> list[dict[str, Any]]:
    return [to_dict(d, result.source) for d in result.diagnostics]


def line_of(text: str, needle: str) -> int:
    assert text.count(needle) == 1, needle
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("version", VERSIONS)
def test_the_override_plans_as_the_statement_would(form: str, version: str) -> None:
    """Every diagnostic (code, message, line and column) and the whole plan JSON of the spec
    planned for ``version`` equal those of the spec that states ``version`` itself."""
    written = "4.0" if version != "4.0" else "3.5"
    text = FORMS[form](written)
    over = check_text(text, "f.sjoin", spark=SparkVersion.parse(version))
    stated = check_text(reference(form, version), "f.sjoin")
    assert over.source.text == text  # checked as written, not spliced
    assert over.spark == SparkVersion.parse(version) and stated.spark is None
    assert over.plan is not None and stated.plan is not None
    assert str(over.plan.spark) == version
    assert located(over) == located(stated)
    assert over.plan_json() == stated.plan_json()


# version -> its errors for BODY: (code, the text of the line each points at)
ERRORS = {
    "3.3": [("E023", "OUTPUT MODE update")] * 2,
    "3.4": [("E022", "join converted"), ("E022", "aggregate revenue")]
    + [("E023", "OUTPUT MODE update")] * 2,
    "3.5": [("E023", "OUTPUT MODE update")] * 2,
    "4.0": [("E012", "lpad(")] + [("E023", "OUTPUT MODE update")] * 2,
    "4.1": [("E012", "lpad(")] + [("E023", "OUTPUT MODE update")] * 2,
    "4.2": [("E012", "lpad(")],
    "4.3": [("E012", "lpad(")],
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("version", VERSIONS)
def test_version_dependent_errors_point_at_the_users_lines(form: str, version: str) -> None:
    """Under an override, each version-dependent error (ANSI cast E012, chain E022, output
    mode E023) is at the line of the user's file that causes it, with or without a `spark`
    statement and wherever it stands."""
    text = FORMS[form]("3.3")
    found = check_text(text, "f.sjoin", spark=SparkVersion.parse(version))
    errors = [(d["code"], d["line"], d["file"]) for d in located(found) if d["severity"] == "error"]
    want = [(code, line_of(text, needle), "f.sjoin") for code, needle in ERRORS[version]]
    assert sorted(errors) == sorted(want)


def test_the_statement_is_read_before_the_statements_it_follows() -> None:
    """A `spark 3.5` on the last line binds the pad length as 3.5 does (a wrapped cast, no
    E012), as on the first line: the binder knows the version before its first statement."""
    first = check_text(FORMS["first line"]("3.5"), "f.sjoin")
    last = check_text(FORMS["last line"]("3.5"), "f.sjoin")
    assert "E012" not in {d.code for d in last.diagnostics}
    assert {d.code for d in last.diagnostics} == {d.code for d in first.diagnostics}
    assert last.plan is not None and str(last.plan.spark) == "3.5" and not last.plan.ansi


@pytest.mark.parametrize(
    ("text", "code", "line"),
    [
        ("-- a\nspark 9.9\n" + BODY, "E016", 2),
        ("spark 3.5\n" + BODY + "spark\n4.0\n", "E002", BODY.count("\n") + 2),
    ],
)
def test_the_spark_statement_is_still_checked_as_written(text: str, code: str, line: int) -> None:
    found = check_text(text, "f.sjoin", spark=SparkVersion(4, 3))
    assert found.plan is not None and str(found.plan.spark) == "4.3"
    (error,) = [d for d in located(found) if d["code"] == code]
    assert error["line"] == line


@pytest.mark.parametrize("form", sorted(FORMS))
def test_verify_reports_the_local_versions_errors_at_the_users_lines(form: str) -> None:
    """`verify` on a Spark 3.4 (never started: the spec is rejected before anything runs)
    lists E022 at the file's own line."""
    text = FORMS[form]("4.3").replace("lpad(c.click_id, 2147483648, 'x')", "c.click_id")
    text = text.replace("OUTPUT MODE update", "OUTPUT MODE append")
    spec = check_text(text, "f.sjoin")
    assert spec.ok, located(spec)
    report = verify_spec(spec, [], spark=SimpleNamespace(version="3.4.4"))
    assert report.compared_as == "3.4" and report.target == "4.3"
    lines = [line_of(text, "join converted"), line_of(text, "aggregate revenue")]
    assert len(report.rejected) == 2
    for rejected, line in zip(report.rejected, lines, strict=True):
        assert f"f.sjoin:{line}:" in rejected and "error[E022]" in rejected, rejected
    again, _ = like_local(spec, "3.4.4")
    assert again.source.text == text and again.spark == SparkVersion(3, 4)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_diff_plans_both_versions_from_the_users_text(form: str) -> None:
    text = FORMS[form]("4.3").replace("OUTPUT MODE update", "OUTPUT MODE append")
    spec = check_text(text, "f.sjoin")
    a, b = at_version(spec, "3.4"), at_version(spec, "4.0.1")
    assert a.source.text == b.source.text == text
    assert a.plan is not None and b.plan is not None
    assert (str(a.plan.spark), str(b.plan.spark)) == ("3.4", "4.0.1")
    assert [d["line"] for d in located(a) if d["code"] == "E022"] == [
        line_of(text, "join converted"),
        line_of(text, "aggregate revenue"),
    ]
    assert [d["line"] for d in located(b) if d["code"] == "E012"] == [line_of(text, "lpad(")]
    changes = diff_upgrade(spec, "3.4", "4.0", None).diff.changes
    assert [(r.topic, r.detail[:34]) for r in changes] == [
        ("analysis", "Spark 4.0 rejects the spec (E012: "),
        ("analysis", "Spark 3.4 rejects the spec (E022: "),
    ]


def test_a_version_sjoin_does_not_model_is_the_callers_error() -> None:
    with pytest.raises(ValueError, match=r"sjoin models Spark 3\.3, .*, not 9\.9"):
        check_text(BODY, "f.sjoin", spark=SparkVersion(9, 9))
    spec = check_text(BODY, "f.sjoin")
    for bad, message in (("9.9", "sjoin models Spark"), ("four", "MAJOR.MINOR")):
        with pytest.raises(DiffUsageError, match=message):
            at_version(spec, bad)
