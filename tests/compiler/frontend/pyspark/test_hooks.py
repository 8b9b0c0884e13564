"""The private pyspark internals the offline session and the site hooks patch: one test per
hook, so that a pyspark upgrade that moves one fails here, not in a user's check."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark.sql.connect.client.core")

from pyspark.sql import session as classic
from pyspark.sql.connect import expressions, plan
from pyspark.sql.connect import session as connect
from pyspark.sql.connect.client import core

CLIENT_METHODS = [
    "config",
    "_analyze",
    "execute_command",
    "execute_command_as_iterator",
    "_execute_and_fetch",
    "_execute_and_fetch_as_iterator",
    "_execute",
    "release_session",
    "close",
    "_cleanup_ml_cache",
]


@pytest.mark.parametrize("name", CLIENT_METHODS)
def test_the_connect_client_has_each_patched_method(name: str) -> None:
    assert callable(getattr(core.SparkConnectClient, name))


def test_config_answers_with_a_config_result() -> None:
    assert core.ConfigResult(pairs=[("k", "v")], warnings=[]).pairs == [("k", "v")]


def test_the_classic_builder_has_get_or_create_create_and_the_url_check() -> None:
    builder = classic.SparkSession.Builder
    for name in ("getOrCreate", "create", "_validate_startup_urls"):
        assert name in builder.__dict__, name
    assert isinstance(builder()._options, dict)


def test_the_connect_builder_has_get_or_create_and_the_session_no_spark_context() -> None:
    assert "getOrCreate" in connect.SparkSession.Builder.__dict__
    assert "sparkContext" not in connect.SparkSession.__dict__  # session.py adds a stand-in


def test_a_relation_gets_its_plan_id_from_fresh_plan_id() -> None:
    assert isinstance(plan.LogicalPlan.__dict__["_fresh_plan_id"], staticmethod)


def test_an_expression_copies_its_origin_into_its_proto() -> None:
    import inspect

    assert "origin" in inspect.getsource(expressions.Expression.__init__)


def test_the_debugging_cache_is_a_module_attribute() -> None:
    import pyspark.errors.utils as errors_utils

    assert hasattr(errors_utils, "_enable_debugging_cache")


def test_the_patched_names_are_the_ones_session_py_lists() -> None:
    from sjoin.compiler.frontend.pyspark import session

    for owner, name in session.PATCHED:
        assert hasattr(owner, name), (owner, name)
