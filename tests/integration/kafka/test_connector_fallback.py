"""Which Kafka connector a local Spark gets (`sjoin.jvm.jars.connector_jars`), when the registry
does not serve the connector of that Spark's own release: the release of its own line that
sjoin knows first (pyspark 3.5.9 runs with 3.5.7's, as served here; not with 3.4's), then
the newest of each older line of the same major version. A stand-in `mvn` serves a chosen
set of releases, so nothing is fetched."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from sjoin.compiler.backends.connectors import SPARK_RELEASES, kafka_connector
from sjoin.jvm.jars import JarsUnavailable, connector_jars, connectors_command, jar_dir

# `mvn -q -B -f POM dependency:copy-dependencies -DoutputDirectory=OUT ...`: one jar for the
# version the POM names when it is in $SERVED, else Maven's error; each call logged.
MVN = r"""#!{python}
import os, re, sys
args = sys.argv[1:]
pom = open(args[args.index("-f") + 1]).read()
version = re.search(r"<version>([^<]+)</version></dependency>", pom).group(1)
with open(os.environ["MVN_LOG"], "a") as log:
    log.write(version + "\n")
if version not in os.environ["SERVED"].split():
    print(f"[ERROR] Failed to execute goal: {{version}} was not found in central")
    sys.exit(1)
out = [a.split("=", 1)[1] for a in args if a.startswith("-DoutputDirectory=")][0]
os.makedirs(out)
open(os.path.join(out, f"spark-sql-kafka-0-10-{{version}}.jar"), "w").close()
"""


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: Any) -> Any:
    """Serve ``releases`` from a stand-in mvn; returns the releases asked for, in order."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mvn = bin_dir / "mvn"
    mvn.write_text(MVN.format(python=sys.executable))
    mvn.chmod(0o755)
    log = tmp_path / "mvn.log"
    log.write_text("")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("MVN_LOG", str(log))

    def serve(*releases: str) -> Any:
        monkeypatch.setenv("SERVED", " ".join(releases))
        return lambda: log.read_text().split()

    return serve


@pytest.mark.parametrize(
    ("spark", "served", "asked", "used"),
    [
        ("3.5.9", ["3.5.7", "3.4.4"], ["3.5.9", "3.5.7"], "3.5.7"),  # its line first
        ("3.5.9", ["3.4.4"], ["3.5.9", "3.5.7", "3.4.4"], "3.4.4"),
        ("3.5.7", ["3.5.7"], ["3.5.7"], "3.5.7"),  # its own: no note
        ("3.5.2", ["3.5.7"], ["3.5.2", "3.5.7"], "3.5.7"),
        ("4.3.0", ["4.2.0"], ["4.3.0", "4.2.0"], "4.2.0"),  # 4.3's own is 4.3.0: asked once
        ("4.3.1", ["4.3.0", "4.2.0"], ["4.3.1", "4.3.0"], "4.3.0"),
        ("4.2.1", ["4.2.0"], ["4.2.1", "4.2.0"], "4.2.0"),
    ],
)
def test_the_connector_of_the_nearest_served_release(
    registry: Any, spark: str, served: list[str], asked: list[str], used: str
) -> None:
    log = registry(*served)
    jars = connector_jars(spark, ["kafka"])
    assert log() == asked
    assert jars.coordinates == (kafka_connector(used),)
    assert [p.name for p in jars.paths] == [f"spark-sql-kafka-0-10-{used}.jar"]
    scala = "2.12" if spark.startswith("3.") else "2.13"
    assert jars.coordinates[0].startswith(f"org.apache.spark:spark-sql-kafka-0-10_{scala}:")
    if used == spark:
        assert jars.note is None
    else:
        assert jars.note == (
            f"Spark's Kafka connector {spark} is not served by the registry; using {used}'s"
        )


def test_a_release_not_served_is_not_asked_for_again_for_a_week(registry: Any) -> None:
    log = registry("3.5.7")
    connector_jars("3.5.9", ["kafka"])
    assert (jar_dir("spark-kafka-3.5.9.refused")).exists()
    connector_jars("3.5.9", ["kafka"])  # 3.5.7's from the cache, 3.5.9 not asked again
    assert log() == ["3.5.9", "3.5.7"]


def test_none_served_raises_with_the_command_that_fetches_with_the_fallback(
    registry: Any,
) -> None:
    log = registry()
    with pytest.raises(JarsUnavailable, match=r"3\.5\.9 was not found in central") as caught:
        connector_jars("3.5.9", ["kafka"])
    assert log() == ["3.5.9", *(SPARK_RELEASES[f"3.{m}"] for m in (5, 4, 3))]
    assert (
        caught.value.command == f"{sys.executable} -m sjoin.jvm.jars fetch-connectors 3.5.9 kafka"
    )
    assert caught.value.command == connectors_command("3.5.9", ["kafka"])
