"""Shared test fixtures: example specs, hypothesis profiles, snapshot extensions, and the
one Spark session of a test run."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.sjoin"))

# hypothesis' storage (examples database, caches) stays out of the work tree
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "sjoin-hypothesis")

settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("many", max_examples=20_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class TextSnapshot(SingleFileSnapshotExtension):
    """One plain .txt file per snapshot, readable in a diff."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


class PythonSnapshot(SingleFileSnapshotExtension):
    """Each snapshot of generated code is a real .py file."""

    _write_mode = WriteMode.TEXT
    file_extension = "py"


@pytest.fixture
def json_snapshot(snapshot):  # type: ignore[no-untyped-def]
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture
def text_snapshot(snapshot):  # type: ignore[no-untyped-def]
    return snapshot.use_extension(TextSnapshot)


def _connector_jars() -> tuple[str, ...]:
    """Spark's Kafka connector for the one session (tests/kafka use it), from sjoin's cache
    (scripts/setup.sh fills it; fetched here on first use otherwise)."""
    try:
        import pyspark

        from sjoin.jvm.jars import JarsUnavailable, connector_jars
    except ImportError:
        return ()
    try:
        jars = connector_jars(
            pyspark.__version__, ["kafka"], Path(pyspark.__file__).parent / "jars"
        )
    except JarsUnavailable:  # tests/kafka skip (or fail in CI) with the fetch command
        return ()
    return tuple(str(p) for p in jars.paths)


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """The one local Spark session of the test run (tests marked `spark` use it).

    Without Java or pyspark the tests are skipped with the reason, except in CI, where a
    missing JVM must fail loudly rather than pass by skipping.
    """
    from sjoin.jvm.spark_driver import SparkUnavailable, get_spark

    try:
        return get_spark(jars=_connector_jars())
    except SparkUnavailable as err:
        if os.environ.get("CI"):
            pytest.fail(str(err))
        pytest.skip(str(err))


@pytest.fixture(scope="session")
def verify_spark(request):  # type: ignore[no-untyped-def]
    """What the parity tests verify on: the local session (`spark`), or, with
    SJOIN_VERIFY_PYTHON=PATH, the pyspark of that interpreter in one child process for the
    run (`sjoin verify --python PATH`; scripts/test.sh runs the parity suite so on 3.5)."""
    python = os.environ.get("SJOIN_VERIFY_PYTHON")
    if not python:
        return request.getfixturevalue("spark")
    from sjoin.jvm.spark_driver import SparkUnavailable
    from sjoin.jvm.spark_env import RemoteSpark

    try:
        remote = RemoteSpark(python)
    except SparkUnavailable as err:
        pytest.fail(f"SJOIN_VERIFY_PYTHON={python}: {err}")
    request.addfinalizer(remote.close)
    return remote


def load_script(name: str) -> ModuleType:
    """A script of scripts/ as a module (they are not part of the package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The one local Spark Connect server of the test run, sc://HOST:PORT, that runs every
    pipeline with SDP's CLI (scripts/pipeline_catalogue.py starts it: `local[2]`, session
    time zone UTC, no retry of a failed flow). Its clients must run in child processes: a
    Connect session made in the test process sets SPARK_CONNECT_MODE_ENABLED in its
    environment for good, and every classic session made afterwards would fail.

    Without Java, pyspark[connect] or pyyaml the tests are skipped with the reason, except
    in CI, where they must fail (the rule of the `spark` fixture)."""
    from sjoin.jvm.spark_driver import SparkUnavailable, check_java

    try:
        import grpc  # noqa: F401  (Spark Connect's client)
        import pyspark  # noqa: F401
        import yaml  # noqa: F401  (spark-pipelines reads its spec with it)

        check_java()
    except (ImportError, SparkUnavailable) as err:
        reason = f"pipelines run on Spark Connect: pyspark[connect], pyyaml, Java 17+: {err}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    catalogue = load_script("pipeline_catalogue")
    with catalogue.connect_server(tmp_path_factory.mktemp("connect")) as remote:
        yield remote
