"""`sjoin verify --kafka`: the job's own Kafka sources read through a real broker, on this
process's Spark or, with `--spark X.Y` / `--python`, on another pyspark in a child process
(which gets the Kafka connector of its own Spark version, and holds the queries' progress
locks while this process produces each trace batch); and every way it is refused."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sjoin.api import check_file
from sjoin.cli.main import main
from sjoin.compiler.backends.connectors import kafka_connector
from sjoin.jvm.jars import KAFKA_BROKER, connectors_command, fetch_command, jar_dir
from sjoin.jvm.kafka_driver import not_from_kafka
from sjoin.jvm.spark_env import env_command

ROOT = Path(__file__).resolve().parents[3]
SPEC = str(ROOT / "examples" / "unpaid_orders.sjoin")
TRACE = str(ROOT / "examples" / "unpaid_orders.trace.jsonl")
# pyspark of this interpreter: the child of --python runs it (nothing here starts it)
HERE = ["--python", sys.executable]


def _verify(*extra: str, spec: str = SPEC, trace: str = TRACE) -> Any:
    return CliRunner().invoke(main, ["verify", spec, "--trace", trace, *extra])


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--kafka", "nohost"], "HOST:PORT or `local`"),
        (["--kafka", "a b:1"], "HOST:PORT or `local`"),
        (["--kafka", "h:123456"], "HOST:PORT or `local`"),
        (["--kafka", "local", "--spark", "3"], "MAJOR.MINOR"),
        (["--kafka", "local", "--spark", "3.5", *HERE], "not both"),
        (["--kafka", "local", "--relation", "orders"], "cannot run `orders`: a stream"),
        (["--kafka", "local", "--relation", "nope"], "not a relation of the spec"),
    ],
)
def test_bad_kafka_options_are_usage_errors(extra: list[str], said: str) -> None:
    result = _verify(*extra)
    assert result.exit_code == 2, result.output
    assert said in result.output


@pytest.mark.parametrize(
    ("example", "streams"),
    [
        ("checkout_funnel", "`impressions` (no `from`), `clicks` (no `from`)"),
        ("iot_window_join", "`temperature` (`from json`), `humidity` (`from json`)"),
        ("ride_matching", "`requests` (no `from`), `offers` (no `from`)"),
    ],
)
@pytest.mark.parametrize("where", [[], ["--spark", "3.4"], HERE], ids=["here", "spark", "python"])
def test_streams_not_read_from_kafka_are_refused_before_anything_starts(
    example: str, streams: str, where: list[str], tmp_path: Path, monkeypatch: Any
) -> None:
    """Refused at once (no environment made, no Spark, no broker), naming each stream."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    spec = str(ROOT / "examples" / f"{example}.sjoin")
    result = _verify(
        "--kafka", "local", *where, spec=spec, trace=spec[: -len(".sjoin")] + ".trace.jsonl"
    )
    assert result.exit_code == 2, result.output
    assert "these streams are not read `from kafka`: " in result.output
    assert streams in " ".join(result.output.split())
    assert not (tmp_path / "sjoin").exists()


def test_only_the_streams_of_the_queries_that_run_must_be_read_from_kafka(tmp_path: Path) -> None:
    spec = tmp_path / "mixed.sjoin"
    spec.write_text(
        "stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        "from kafka (topic = 'a', bootstrap_servers = 'h:1')\n"
        "stream b (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        "from kafka (topic = 'b', bootstrap_servers = 'h:1')\n"
        "stream c (k BIGINT, t TIMESTAMP) watermark t delay 1 minute\n"
        "from json (path = 'in/c')\n"
        "join ab = a JOIN b ON a.k = b.k AND b.t BETWEEN a.t AND a.t + INTERVAL 1 MINUTE\n"
        "join bc = b JOIN c ON b.k = c.k AND c.t BETWEEN b.t AND b.t + INTERVAL 1 MINUTE\n"
    )
    checked = check_file(spec)
    assert checked.plan is not None, checked.diagnostics
    assert not_from_kafka(checked.plan, ["ab"]) == []
    assert not_from_kafka(checked.plan, ["bc"]) == ["`c` (`from json`)"]
    assert not_from_kafka(checked.plan, ["ab", "bc"]) == ["`c` (`from json`)"]


@pytest.mark.parametrize("where", [[], HERE], ids=["here", "python"])
def test_without_confluent_kafka_it_says_what_to_install(
    where: list[str], monkeypatch: Any
) -> None:
    monkeypatch.setitem(sys.modules, "confluent_kafka", None)  # import fails
    result = _verify("--kafka", "local", *where)
    assert result.exit_code == 1, result.output
    assert "--kafka produces the trace with confluent-kafka, which is not installed" in (
        result.stderr
    )
    assert "-m pip install 'sjoin[kafka]'" in result.stderr


def _java_home() -> str:
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    return str(Path(os.path.realpath(java)).parents[1])


def _no_mvn(tmp_path: Path, monkeypatch: Any) -> None:
    """Java found by JAVA_HOME, no Maven on PATH, an empty cache."""
    home = _java_home()
    monkeypatch.setenv("JAVA_HOME", home)
    monkeypatch.setenv("PATH", str(Path(home) / "bin"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))


@pytest.mark.parametrize("where", [[], HERE], ids=["here", "python"])
def test_without_the_connector_it_prints_the_command_that_fetches_it(
    where: list[str], tmp_path: Path, monkeypatch: Any
) -> None:
    import pyspark

    _no_mvn(tmp_path, monkeypatch)
    result = _verify("--kafka", "local", *where)
    assert result.exit_code == 1, result.output
    assert "sjoin verify: Maven (mvn) is not on PATH, so the jars cannot be fetched" in (
        result.stderr
    )
    # the connectors of the pyspark that runs the job (the child's, with --python), the
    # fallback to an older release included
    command = connectors_command(pyspark.__version__, ["kafka"])
    assert f"fetch them with:\n  {command}\n" in result.stderr


@pytest.mark.parametrize("where", [[], HERE], ids=["here", "python"])
def test_without_the_broker_jars_local_prints_the_command_that_fetches_them(
    where: list[str], tmp_path: Path, monkeypatch: Any
) -> None:
    """The connector is in the cache (stand-in jars: nothing starts), the broker's is not."""
    import pyspark

    _no_mvn(tmp_path, monkeypatch)
    version = pyspark.__version__
    cached = jar_dir(f"spark-kafka-{version}")
    cached.mkdir(parents=True)
    (cached / "COORDINATES").write_text(kafka_connector(version) + "\n")
    (cached / "spark-sql-kafka-0-10.jar").write_bytes(b"")
    result = _verify("--kafka", "local", *where)
    assert result.exit_code == 1, result.output
    assert "sjoin verify: the Kafka broker's jars are not in sjoin's cache; fetch them with:" in (
        result.stderr
    )
    assert f"  {fetch_command('kafka-broker', KAFKA_BROKER)}\n" in result.stderr


@pytest.mark.parametrize("where", [[], HERE], ids=["here", "python"])
def test_without_java_it_says_so_before_fetching_anything(
    where: list[str], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = _verify("--kafka", "local", *where)
    assert result.exit_code == 1, result.output
    assert "Spark is needed for verify: Java 17+ is needed to run Spark" in result.stderr
    assert not (tmp_path / "sjoin").exists()


def test_spark_version_whose_environment_cannot_be_made_prints_its_command(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """--spark X.Y with --kafka: the environment first (exit 2 and the one command)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    result = _verify("--kafka", "local", "--spark", "3.4")
    assert result.exit_code == 2, result.output
    assert "sjoin verify: Spark 3.4 cannot run here: Java 17+ is needed" in result.stderr
    assert f"make its environment with:\n  {env_command('3.4')}\n" in result.stderr


def test_an_interpreter_without_pyspark_is_a_usage_error(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    result = _verify("--kafka", "local", "--python", str(fake))
    assert result.exit_code == 2, result.output
    assert "cannot import pyspark" in result.output


@pytest.mark.spark
def test_verify_through_the_broker_agrees(kafka_broker, kafka_spark) -> None:  # type: ignore[no-untyped-def]
    result = _verify("--kafka", kafka_broker.bootstrap)
    assert result.exit_code == 0, result.output
    assert "Spark and the runtime agree" in result.output


@pytest.fixture(scope="module")
def spark35() -> str:
    """The cached Spark 3.5 environment (`verify --spark 3.5` makes it on first use: pip, a
    few minutes; scripts/test.sh makes it for the parity suite anyway). Without it the test
    skips, except in CI, where it fails."""
    from sjoin.jvm.spark_driver import SparkUnavailable, check_java
    from sjoin.jvm.spark_env import EnvError, ensure_env

    try:
        check_java()
        return str(ensure_env("3.5"))
    except (EnvError, SparkUnavailable) as err:
        reason = f"Spark 3.5 cannot run here: {err}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.mark.spark
def test_verify_on_spark_35_through_the_broker_agrees_batch_by_batch(kafka_broker, spark35) -> None:  # type: ignore[no-untyped-def]
    """`sjoin verify --spark 3.5 --kafka ADDRESS`: the job runs on pyspark 3.5 in a child
    process with the Kafka connector of Spark 3.5 (Scala 2.12), reading the topics this
    process produces into, one micro-batch per trace batch."""
    result = _verify("--spark", "3.5", "--kafka", kafka_broker.bootstrap, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["agree"] is True, result.output
    assert report["spark_version"].startswith("3.5."), report
    assert report["compared_as"] == "3.5", report
    (query,) = report["queries"]
    assert query["relation"] == "unpaid"
    # batch by batch: as many micro-batches as the runtime's, every one equal
    assert query["spark_batches"] == query["runtime_batches"] >= 4, query
    assert query["rows"] > 0, query
