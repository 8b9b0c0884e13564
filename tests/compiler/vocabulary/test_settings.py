"""`Plan.settings`: a frozen `Settings` built from the one table (compiler/vocabulary/settings.py),
every
value checked when it is built, read by attribute (no reader restates a default)."""

from __future__ import annotations

import dataclasses

import pytest

from sjoin.api import check_text
from sjoin.compiler.vocabulary.model import Settings, SparkVersion
from sjoin.compiler.vocabulary.settings import SETTINGS, settings_of, version_default

SPARK_4 = SparkVersion(4, 3)


def test_the_table_and_the_value_name_the_same_settings() -> None:
    assert [f.name for f in dataclasses.fields(Settings)] == list(SETTINGS)


def test_defaults_come_from_the_table() -> None:
    built = settings_of({}, SPARK_4)
    fixed = {name: s.default for name, s in SETTINGS.items() if s.default is not None}
    assert {k: v for k, v in built.items() if k in fixed} == fixed
    for name in fixed:
        assert getattr(built, name) == fixed[name] == built.value(name)
    # the one default that is the version's: spark.sql.ansi.enabled
    assert [n for n, s in SETTINGS.items() if s.default is None] == ["ansi_enabled"]


@pytest.mark.parametrize(("version", "ansi"), [((3, 3), False), ((3, 5), False), ((4, 0), True)])
def test_ansi_defaults_to_the_versions(version: tuple[int, int], ansi: bool) -> None:
    spark = SparkVersion(*version)
    assert settings_of({}, spark).ansi_enabled is ansi is version_default("ansi_enabled", spark)
    assert settings_of({"ansi_enabled": not ansi}, spark).ansi_enabled is (not ansi)


def test_chosen_values_win_and_the_value_is_frozen() -> None:
    built = settings_of({"shuffle_partitions": 3, "trigger": "10 seconds"}, SPARK_4)
    assert built.shuffle_partitions == 3 and built.trigger == "10 seconds"
    assert built.state_store == "hdfs"
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.shuffle_partitions = 4  # type: ignore[misc]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("multiple_watermark_policy", "median"),
        ("multiple_watermark_policy", "MIN"),
        ("shuffle_partitions", 0),
        ("shuffle_partitions", -2),
        ("shuffle_partitions", True),
        ("shuffle_partitions", "2"),
        ("state_store", "memory"),
        ("no_data_micro_batches", "true"),
        ("allow_multiple_stateful_operators", 1),
        ("correctness_check", None),
        ("ansi_enabled", "false"),
        ("allow_unemitted_outer_rows", "false"),
        ("session_timezone", 5),
        ("trigger", "soon"),
        ("trigger", "10 fortnights"),
        ("trigger", True),
    ],
)
def test_a_bad_value_is_refused_when_built(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"invalid settings: {name} = "):
        settings_of({name: value}, SPARK_4)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=name):
        dataclasses.replace(settings_of({}, SPARK_4), **{name: value})


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown settings: shuffle_partition"):
        settings_of({"shuffle_partition": 2}, SPARK_4)
    with pytest.raises(KeyError):
        settings_of({}, SPARK_4).value("shuffle_partition")


def test_the_plan_carries_every_setting_and_knows_which_the_spec_set() -> None:
    result = check_text(
        "spark 4.3\nset trigger = 'once'\nset shuffle_partitions = 7\n"
        "stream a (id INT, t TIMESTAMP) watermark t delay 1 minute\n"
    )
    assert result.plan is not None
    settings = result.plan.settings
    assert (settings.trigger, settings.shuffle_partitions) == ("once", 7)
    assert settings.multiple_watermark_policy == "min"  # the default, included
    assert sorted(result.plan.setting_spans) == ["shuffle_partitions", "trigger"]
