"""`Plan.settings`: a frozen `Settings` built from the one table (compiler/settings.py), every
value checked when it is built, read by attribute (no reader restates a default)."""

from __future__ import annotations

import dataclasses

import pytest

from sjoin.api import check_text
from sjoin.compiler.model import Settings
from sjoin.compiler.settings import SETTINGS, settings_of


def test_the_table_and_the_value_name_the_same_settings() -> None:
    assert [f.name for f in dataclasses.fields(Settings)] == list(SETTINGS)


def test_defaults_come_from_the_table() -> None:
    built = settings_of({})
    assert dict(built.items()) == {name: s.default for name, s in SETTINGS.items()}
    for name, s in SETTINGS.items():
        assert getattr(built, name) == s.default == built.value(name)


def test_chosen_values_win_and_the_value_is_frozen() -> None:
    built = settings_of({"shuffle_partitions": 3, "trigger": "10 seconds"})
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
        ("allow_unemitted_outer_rows", "false"),
        ("session_timezone", 5),
        ("trigger", "soon"),
        ("trigger", "10 fortnights"),
        ("trigger", True),
    ],
)
def test_a_bad_value_is_refused_when_built(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"invalid settings: {name} = "):
        settings_of({name: value})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=name):
        dataclasses.replace(settings_of({}), **{name: value})


def test_an_unknown_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown settings: shuffle_partition"):
        settings_of({"shuffle_partition": 2})
    with pytest.raises(KeyError):
        settings_of({}).value("shuffle_partition")


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
