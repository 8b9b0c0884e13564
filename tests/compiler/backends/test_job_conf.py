"""A generated job sets only the Spark confs its spec sets (issue 23, item 4): a cluster keeps
its own shuffle partitions and state store provider.  The confs the results depend on that
the spec leaves alone are checked at start, with a warning where the cluster differs."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from sjoin.api import check_text
from sjoin.cli.scaffold import SPEC as SCAFFOLD
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.vocabulary.settings import SETTINGS, semantic_conf, setting_literal

from ...conftest import EXAMPLES

RESULT_CONFS = {s.spark_conf for s in SETTINGS.values() if s.changes_results and s.spark_conf}


def _job(text: str, name: str = "spec.sjoin") -> types.ModuleType:
    result = check_text(text, name)
    assert result.ok and result.plan is not None, result.diagnostics
    module = types.ModuleType("job")
    exec(compile(compile_pyspark(result.plan, name), name, "exec"), module.__dict__)
    return module


def _specs() -> list[tuple[str, str]]:
    return [(p.stem, p.read_text()) for p in EXAMPLES] + [
        ("scaffold", SCAFFOLD.format(name="demo"))
    ]


@pytest.mark.parametrize(("name", "text"), _specs(), ids=[n for n, _ in _specs()])
def test_a_job_sets_exactly_the_confs_of_its_set_statements(name: str, text: str) -> None:
    chosen = set(re.findall(r"(?m)^set (\w+)", text))
    job = _job(text)
    want = {SETTINGS[s].spark_conf for s in chosen if SETTINGS[s].spark_conf}
    assert set(job.SPARK_CONF) == want
    # every conf the results depend on is either set or assumed (and checked), never both
    assert set(job.ASSUMED_CONF) == RESULT_CONFS - want


def test_shuffle_partitions_and_the_state_store_are_left_to_the_cluster() -> None:
    job = _job(Path(EXAMPLES[0]).read_text().replace("set ", "-- set "))
    assert job.SPARK_CONF == {}
    assert "spark.sql.shuffle.partitions" not in job.ASSUMED_CONF
    assert "spark.sql.streaming.stateStore.providerClass" not in job.ASSUMED_CONF


def test_the_scaffold_sets_two_partitions_and_says_why() -> None:
    text = SCAFFOLD.format(name="demo")
    assert _job(text).SPARK_CONF["spark.sql.shuffle.partitions"] == "2"
    before = text[: text.index("set shuffle_partitions = 2")]
    assert "the checkpoint" in before.splitlines()[-1] + before.splitlines()[-2]


class _Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)


def _spark(values: dict[str, str]) -> types.SimpleNamespace:
    return types.SimpleNamespace(conf=_Conf(values))


SPEC = "stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"


def _defaults(text: str) -> dict[str, str]:
    result = check_text(text, "spec.sjoin")
    assert result.plan is not None
    return semantic_conf(result.plan.settings)


@pytest.mark.parametrize(
    ("conf", "found", "pin"),
    [
        (
            "spark.sql.streaming.multipleWatermarkPolicy",
            "max",
            "set multiple_watermark_policy = min",
        ),
        (
            "spark.sql.streaming.noDataMicroBatches.enabled",
            "false",
            "set no_data_micro_batches = true",
        ),
        (
            "spark.sql.streaming.statefulOperator.allowMultiple",
            "false",
            "set allow_multiple_stateful_operators = true",
        ),
        (
            "spark.sql.streaming.statefulOperator.checkCorrectness.enabled",
            "false",
            "set correctness_check = true",
        ),
        ("spark.sql.session.timeZone", "America/New_York", "set session_timezone = 'UTC'"),
    ],
)
def test_a_cluster_that_differs_gets_a_warning_naming_the_set_statement(
    conf: str, found: str, pin: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert set(_defaults(SPEC)) == RESULT_CONFS  # every result-changing conf is enumerated
    job = _job(SPEC)
    job.check_conf(_spark({**_defaults(SPEC), conf: found}))
    err = capsys.readouterr().err
    assert err.count("sjoin: warning:") == 1
    assert f"{conf} is {found!r}" in err and f"`{pin}`" in err


@pytest.mark.parametrize("zone", ["UTC", "Etc/UTC", "GMT", "Z", "utc"])
def test_a_cluster_at_the_planned_values_is_silent(
    zone: str, capsys: pytest.CaptureFixture[str]
) -> None:
    job = _job(SPEC)
    job.check_conf(_spark({**_defaults(SPEC), "spark.sql.session.timeZone": zone}))
    job.check_conf(_spark({}))  # confs a Spark version does not know
    assert capsys.readouterr().err == ""


def test_a_set_statement_is_not_checked_but_set(capsys: pytest.CaptureFixture[str]) -> None:
    text = "set session_timezone = 'Europe/Paris'\n" + SPEC
    job = _job(text)
    assert job.SPARK_CONF == {"spark.sql.session.timeZone": "Europe/Paris"}
    job.check_conf(_spark({"spark.sql.session.timeZone": "America/New_York"}))
    assert capsys.readouterr().err == ""


def test_a_quote_in_a_string_setting_is_pinned_as_the_spec_writes_it() -> None:
    # the pin is shown to the user as spec text: a quote is doubled, as the lexer reads it
    assert setting_literal("session_timezone", "it's") == "'it''s'"
    assert setting_literal("no_data_micro_batches", False) == "false"
    assert setting_literal("shuffle_partitions", 4) == "4"
