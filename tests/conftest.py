"""Shared test fixtures: example specs, hypothesis profiles, snapshot extensions, and the
one Spark session of a test run."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _pytest.python import DirectParamFixtureDef
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.sjoin"))
# the examples whose pipeline project the pipeline tests do not read back or run, and why
# (every example compiles to one: tests/compiler/backends/test_pipeline_codegen.py; every example's
# project reads back to its plan: tests/compiler/frontend/test_equivalence.py); none now
NOT_PIPELINES: dict[str, str] = {}
PIPELINE_EXAMPLES = [p for p in EXAMPLES if p.stem not in NOT_PIPELINES]

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

# --------------------------------------------------------------------------- two processes
# scripts/test.sh runs the suite in two worker processes (pytest-xdist: `-n 2 --dist
# loadgroup`). The tests on the run's own JVMs (those using a fixture that starts one: the
# Spark session, the Kafka broker, the Spark Connect server) are one group that one worker
# runs in order, so the run still starts one of each; the parity suite on another pyspark
# (--parity-python: its JVM in a child process) is a second group. The other worker runs
# that and the rest meanwhile: the Spark tests that start their own JVM (spark-submit, a
# cluster, Spark Connect, a child's Spark) too.  Run alone (no -n), pytest runs as before.
#
# The groups are sjoin's scheduler's, not xdist_group marks: pytest 9.2 keeps a test's id
# where pytest-xdist 3.8 no longer changes it, so loadgroup saw every test alone. Each worker
# writes the group of each test it collected into a folder of the run (the controller makes
# it and hands it down in the environment); the scheduler reads it when it schedules.
# (parity_spark, tests/integration/parity/test_parity.py: the local session, or a --parity-python
# child's)
JVM_FIXTURES = frozenset(
    {"spark", "verify_spark", "kafka_spark", "kafka_broker", "parity_spark", "connect_server"}
)
GROUPS_ENV = "SJOIN_TEST_GROUPS"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--parity-python",
        action="append",
        default=[],
        metavar="PATH",
        help="also run the parity suite (tests/integration/parity/test_parity.py) on the pyspark "
        "of the interpreter PATH, in one child process (as `sjoin verify --python PATH` runs a "
        "job); scripts/test.sh passes Spark 3.5's",
    )


def jvm_group(item: pytest.Item) -> str | None:
    """The group of a test that runs on a JVM: "jvm" (the run's Spark session or broker),
    "parity-python" (a child process's Spark), or None."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("parity_spark"):
        return "parity-python"
    if any(_uses_fixture(item, name) for name in JVM_FIXTURES):
        return "jvm"
    return None


def _uses_fixture(item: pytest.Item, name: str) -> bool:
    """Whether ``item`` gets the fixture ``name``: not when a parameter of its own has the
    name (tests/compiler/binding's tables have a column `spark`, the type Spark recorded: a string,
    no session), which pytest also lists among the test's fixture names."""
    if name not in getattr(item, "fixturenames", ()):
        return False
    info = getattr(item, "_fixtureinfo", None)  # pytest's: no public way to tell them apart
    defs = info.name2fixturedefs.get(name, ()) if info is not None else ()
    return not (defs and isinstance(defs[-1], DirectParamFixtureDef))


def pytest_configure(config: pytest.Config) -> None:
    distributed = config.getoption("numprocesses", None) and config.getoption("dist", "no") != "no"
    if distributed and not hasattr(config, "workerinput"):  # the controller, before workers
        folder = tempfile.mkdtemp(prefix="sjoin-test-groups-")
        os.environ[GROUPS_ENV] = folder
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    if not hasattr(config, "workerinput"):  # workers inherit it
        _spark_defaults(config)


def _spark_defaults(config: pytest.Config) -> None:
    """The Spark a test starts in a process of its own (spark-submit of a job, the Spark
    Connect server, SDP's CLI, a cluster) writes its files as sjoin's own sessions do
    (``local_file_confs``: fewer forked processes per file written): a spark-defaults.conf
    of the run's, in SPARK_CONF_DIR, unless that is set already. Spark's own confs still win
    (``--conf``)."""
    if os.environ.get("SPARK_CONF_DIR"):
        return
    from sjoin.jvm.spark_driver import SparkUnavailable, check_java, local_file_confs

    try:
        confs = local_file_confs(check_java())
    except (ImportError, SparkUnavailable):  # the Spark tests skip (or fail) with the reason
        return
    folder = tempfile.mkdtemp(prefix="sjoin-spark-conf-")
    lines = [f"{key} {value}" for key, value in confs.items()]
    Path(folder, "spark-defaults.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.environ["SPARK_CONF_DIR"] = folder
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    folder = os.environ.get(GROUPS_ENV)
    workerinput = getattr(config, "workerinput", None)
    if folder and workerinput is not None:  # a worker: every test's group, for the scheduler
        groups = {item.nodeid: jvm_group(item) for item in items}
        path = Path(folder) / f"{workerinput['workerid']}.json"
        path.with_suffix(".tmp").write_text(json.dumps(groups), encoding="utf-8")
        path.with_suffix(".tmp").replace(path)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: xdist's scope scheduling, a scope being a test's group (the
    biggest first: the JVM group starts at once on one worker) or, outside them, the test."""
    if config.getoption("dist", "no") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        groups: dict[str, str | None] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                found = sorted(Path(os.environ[GROUPS_ENV]).glob("*.json"))
                assert found, "no worker said which group its tests are in"
                self.groups = json.loads(found[0].read_text(encoding="utf-8"))
            return f"group {self.groups[nodeid]}" if self.groups.get(nodeid) else nodeid

    return GroupScheduling(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Only the "jvm" group may start the run's Spark session (in another worker it would be
    a second one): a test that uses the session takes the `spark` fixture, or it fails here
    saying so."""
    driver = sys.modules.get("sjoin.jvm.spark_driver")
    before = getattr(driver, "_session", None)
    result = yield
    driver = sys.modules.get("sjoin.jvm.spark_driver")
    started = before is None and getattr(driver, "_session", None) is not None
    if started and jvm_group(item) != "jvm":
        pytest.fail(f"{item.nodeid} started the Spark session: use the spark fixture", False)
    return result


# the inputs the fuzz tests checked (tests/integration/fuzz/conftest.py puts them in each test's
# report)
FUZZ_TOTALS: Counter[str] = Counter()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        for key, value in report.user_properties:
            if key == "fuzz inputs":
                FUZZ_TOTALS.update(value)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FUZZ_TOTALS:
        return
    total = sum(FUZZ_TOTALS.values())
    terminalreporter.write_sep("-", f"fuzz: {total} inputs checked")
    for name, count in sorted(FUZZ_TOTALS.items()):
        terminalreporter.write_line(f"  {name}: {count}")


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
    """Spark's Kafka connector for the one session (tests/integration/kafka use it), from sjoin's
    cache (scripts/setup.sh fills it; fetched here on first use otherwise)."""
    try:
        import pyspark

        from sjoin.jvm.jars import JarsUnavailable, connector_jars
    except ImportError:
        return ()
    try:
        jars = connector_jars(
            pyspark.__version__, ["kafka"], Path(pyspark.__file__).parent / "jars"
        )
    except JarsUnavailable:  # tests/integration/kafka skip (or fail in CI) with the fetch command
        return ()
    return tuple(str(p) for p in jars.paths)


# The run's one JVM compiles with C1 alone and collects with the serial collector: its work is
# many short queries (planning, code generation, small state stores) on 2 cores beside a
# second worker, where C2's compiler threads cost more than its code gains (seen on 14
# parity scenarios: the JVM's CPU time 121 s -> 77 s, wall time alike). What a query does is
# the same: these choose how the JVM runs its code, not what it computes.
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@pytest.fixture(scope="session")
def spark():  # type: ignore[no-untyped-def]
    """The one local Spark session of the test run (tests marked `spark` use it).

    Without Java or pyspark the tests are skipped with the reason, except in CI, where a
    missing JVM must fail loudly rather than pass by skipping.
    """
    from sjoin.jvm.spark_driver import SparkUnavailable, get_spark

    try:
        return get_spark(
            jars=_connector_jars(), conf={"spark.driver.extraJavaOptions": JVM_OPTIONS}
        )
    except SparkUnavailable as err:
        if os.environ.get("CI"):
            pytest.fail(str(err))
        pytest.skip(str(err))


@pytest.fixture(scope="session")
def spark_version() -> str:
    """The version of the local Spark (the installed pyspark's), for a test that runs Spark in
    a process of its own (spark-submit, `sjoin verify` in a child): this one starts no JVM.
    Without Java or pyspark it skips, or fails in CI, as `spark` does."""
    from sjoin.jvm.spark_driver import SparkUnavailable, check_java

    try:
        import pyspark

        check_java()
    except (ImportError, SparkUnavailable) as err:
        if os.environ.get("CI"):
            pytest.fail(str(err))
        pytest.skip(str(err))
    return str(pyspark.__version__)


@pytest.fixture(scope="session")
def verify_spark(request):  # type: ignore[no-untyped-def]
    """What the parity tests verify on: the local session (`spark`), or, with
    SJOIN_VERIFY_PYTHON=PATH, the pyspark of that interpreter in one child process for the
    run (`sjoin verify --python PATH`; scripts/test.sh runs the parity suite so on 3.5)."""
    python = os.environ.get("SJOIN_VERIFY_PYTHON")
    if not python:
        return request.getfixturevalue("spark")
    from sjoin.jvm.spark_driver import SparkUnavailable

    try:
        remote = request.getfixturevalue("remote_spark")(python)
    except SparkUnavailable as err:
        pytest.fail(f"SJOIN_VERIFY_PYTHON={python}: {err}")
    request.addfinalizer(remote.close)
    return remote


@pytest.fixture(scope="session")
def remote_spark() -> Callable[[str], Any]:
    """Makes the test driver in a child process under another interpreter (``RemoteSpark``)
    with its JVM run as the run's own one is (``JVM_OPTIONS``: the work is alike)."""
    from sjoin.jvm.spark_env import RemoteSpark

    return lambda python: RemoteSpark(python, conf={"spark.driver.extraJavaOptions": JVM_OPTIONS})


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
