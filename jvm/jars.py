"""JVM artifacts from Maven Central that the Spark parts need: Spark's connectors (Kafka,
Delta) for the generated jobs, and the Kafka broker the tests and ``scripts/kafka.sh`` start.

PyPI's pyspark ships no connector, so a job that reads ``from kafka`` needs
``org.apache.spark:spark-sql-kafka-0-10_<scala>:<spark>`` on its classpath. ``packages``
names the coordinates a job needs on a cluster of the Spark version it targets (the job's
header and ``sjoin compile`` print them). ``ensure_jars`` fetches a set of coordinates once,
with ``mvn dependency:copy-dependencies``, into sjoin's cache
(``~/.cache/sjoin/jvm/<name>/``), so that local runs (the test driver, ``sjoin verify``) put
plain jar files on ``spark.jars`` and never resolve anything while a query starts.

Not every release is served by the registry this project reaches: when the connector of the
running Spark's own version is not, ``connector_jars`` takes the newest served one of the
same major version and says so (``Jars.note``); see docs/kafka.md.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from ..compiler.backends.connectors import (
    DELTA_RELEASES,
    SPARK_RELEASES,
    delta_connector,
    kafka_connector,
    scala_of,
    spark_line,
)
from ..runtime.io.files import make_folders, replace_folder, write_owned
from .spark_env import cache_dir

_WHAT = "the jars cache"

__all__ = [
    "KAFKA_BROKER",
    "Jars",
    "JarsUnavailable",
    "connector_jars",
    "connectors_command",
    "ensure_jars",
    "fetch_command",
]

# Apache Kafka's broker (KRaft mode), with log4j 2 behind slf4j 2 for its log.
KAFKA_VERSION = "4.3.1"
KAFKA_BROKER = (
    f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
    "org.apache.logging.log4j:log4j-slf4j2-impl:2.24.3",
    "org.apache.logging.log4j:log4j-core:2.24.3",
    "org.slf4j:slf4j-api:2.0.17",
)

_COORDINATE = re.compile(r"^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$")
_DONE = "COORDINATES"


class JarsUnavailable(Exception):
    """The jars cannot be had here; ``command`` is the one command that fetches them."""

    def __init__(self, message: str, command: str) -> None:
        super().__init__(message)
        self.command = command


@dataclass(frozen=True)
class Jars:
    """Jar files in the cache, for ``spark.jars`` or a ``java -cp``; ``note`` says where they
    are not what was asked for (an older connector than the running Spark)."""

    paths: tuple[Path, ...]
    coordinates: tuple[str, ...]
    note: str | None = None

    def classpath(self) -> str:
        return os.pathsep.join(str(p) for p in self.paths)

    def spark_jars(self) -> str:
        """The value of ``spark.jars`` (and of ``spark-submit --jars``)."""
        return ",".join(str(p) for p in self.paths)


def jar_dir(name: str) -> Path:
    return cache_dir() / "jvm" / name


def fetch_command(name: str, coordinates: Sequence[str]) -> str:
    """The one shell command that fetches ``coordinates`` into the cache as ``name``."""
    args = " ".join(shlex.quote(c) for c in coordinates)
    python = shlex.quote(sys.executable)
    return f"{python} -m sjoin.jvm.jars fetch {shlex.quote(name)} {args}"


def connectors_command(spark: str, formats: Sequence[str]) -> str:
    """The one shell command that fetches the connectors of ``formats`` for running Spark
    ``spark`` locally (``connector_jars``: with its fallback to an older release)."""
    args = " ".join(shlex.quote(f) for f in formats)
    python = shlex.quote(sys.executable)
    return f"{python} -m sjoin.jvm.jars fetch-connectors {shlex.quote(spark)} {args}"


def _pom(coordinates: Sequence[str]) -> str:
    deps = []
    for coordinate in coordinates:
        group, artifact, version = (escape(part) for part in coordinate.split(":"))
        deps.append(
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version></dependency>"
        )
    return (
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>sjoin</groupId><artifactId>jars</artifactId><version>1</version>"
        f"<packaging>pom</packaging><dependencies>{''.join(deps)}</dependencies></project>\n"
    )


def cached(name: str, coordinates: Sequence[str]) -> Jars | None:
    """The jars of ``name`` if the cache holds exactly ``coordinates``, else None."""
    directory = jar_dir(name)
    try:
        done = (directory / _DONE).read_text(encoding="utf-8").split()
    except OSError:
        return None
    if done != list(coordinates):
        return None
    paths = tuple(sorted(directory.glob("*.jar")))
    return Jars(paths, tuple(coordinates)) if paths else None


def ensure_jars(
    name: str, coordinates: Sequence[str], say: Callable[[str], None] = lambda text: None
) -> Jars:
    """The jars of ``coordinates`` and everything they need at run time, fetched once into
    ``jar_dir(name)`` with Maven (``say`` hears when). Raises ``JarsUnavailable`` with the
    command that fetches them when Maven is missing or the registry refuses."""
    for coordinate in coordinates:
        if not _COORDINATE.match(coordinate):
            raise ValueError(f"not a Maven coordinate group:artifact:version: {coordinate!r}")
    found = cached(name, coordinates)
    if found is not None:
        return found
    command = fetch_command(name, coordinates)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise JarsUnavailable(
            "Maven (mvn) is not on PATH, so the jars cannot be fetched "
            "(install it, e.g. 'apt-get install maven')",
            command,
        )
    directory = jar_dir(name)
    make_folders(directory.parent)
    say(f"fetching {', '.join(coordinates)} with Maven into {directory} (once)")
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=directory.parent) as work:
        pom = Path(work) / "pom.xml"
        write_owned(pom, _pom(coordinates).encode(), _WHAT)
        out = Path(work) / "jars"
        try:
            done = subprocess.run(
                [
                    mvn,
                    *("-q", "-B", "-f", str(pom)),
                    "dependency:copy-dependencies",
                    f"-DoutputDirectory={out}",
                    "-DincludeScope=runtime",
                ],
                capture_output=True,
                text=True,
                timeout=1800,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            raise JarsUnavailable(f"could not run Maven: {err}", command) from err
        if done.returncode != 0:
            said = [
                line
                for line in (done.stdout + done.stderr).splitlines()
                if "ERROR" in line and line.strip() != "[ERROR]"
            ]
            reason = re.sub(r"\x1b\[[0-9;]*m", "", said[0] if said else "").strip()
            raise JarsUnavailable(
                f"Maven could not fetch {', '.join(coordinates)}: "
                f"{reason or f'exit status {done.returncode}'}",
                command,
            )
        write_owned(out / _DONE, (" ".join(coordinates) + "\n").encode(), _WHAT)
        replace_folder(out, directory, _WHAT)
    found = cached(name, coordinates)
    if found is None:
        raise JarsUnavailable(f"Maven fetched no jar for {', '.join(coordinates)}", command)
    return found


def _candidates(spark: str) -> list[str]:
    """Spark releases whose connector may serve Spark ``spark`` (``X.Y.Z``): its own, then
    the release of its own line that sjoin knows (pyspark 3.5.9 runs with 3.5.7's connector
    where 3.5.9's is not served, not with 3.4's), then the newest known release of each older
    line of the same major version."""
    major, minor = (int(part) for part in spark.split(".")[:2])
    out = [spark]
    for line in range(minor, -1, -1):
        release = SPARK_RELEASES.get(f"{major}.{line}")
        if release is not None and release not in out:
            out.append(release)
    return out


def connector_jars(
    spark: str,
    formats: Iterable[str],
    spark_jars_dir: Path | None = None,
    say: Callable[[str], None] = lambda text: None,
) -> Jars:
    """The connector jars for running Spark ``spark`` (``X.Y.Z``, as ``pyspark.__version__``)
    with sources and sinks of ``formats`` locally, fetched on first use. Jars that Spark's own
    ``jars/`` folder (``spark_jars_dir``) already has (Scala, Hadoop, compression) are left
    out. Raises ``JarsUnavailable`` (with the fetch command) when none can be had."""
    wanted = set(formats)
    paths: list[Path] = []
    coordinates: list[str] = []
    notes: list[str] = []
    if "kafka" in wanted:
        failure: JarsUnavailable | None = None
        # a release the registry did not serve is not asked for again for a week
        refused = jar_dir(f"spark-kafka-{spark}.refused")
        candidates = _candidates(spark)
        if refused.exists() and time.time() - refused.stat().st_mtime < 7 * 86400:
            candidates = candidates[1:]
        for release in candidates:
            coordinate = kafka_connector(release)
            try:
                jars = ensure_jars(f"spark-kafka-{release}", [coordinate], say)
            except JarsUnavailable as err:
                failure = failure or err
                if release == spark and shutil.which("mvn") is not None:
                    write_owned(refused, f"{err}\n".encode(), _WHAT)
                continue
            paths.extend(jars.paths)
            coordinates.append(coordinate)
            if release != spark:
                notes.append(
                    f"Spark's Kafka connector {spark} is not served by the registry; "
                    f"using {release}'s"
                )
            break
        else:
            assert failure is not None
            # the command that fetches what is needed here, this fallback included
            raise JarsUnavailable(str(failure), connectors_command(spark, ["kafka"]))
    if "delta" in wanted:
        delta = delta_connector(spark)
        if delta is None:
            lines = ", ".join(sorted(DELTA_RELEASES))
            raise JarsUnavailable(
                f"no Delta Lake release is built on Spark {spark_line(spark)} (Delta is built on "
                f"Spark {lines}); run Delta jobs on one of those",
                "sjoin verify SPEC --spark 4.1 ...",
            )
        name = f"delta-{delta.rsplit(':', 1)[1]}-{scala_of(spark)}"
        jars = ensure_jars(name, [delta], say)
        paths.extend(jars.paths)
        coordinates.append(delta)
    if spark_jars_dir is not None:
        own = {_artifact(p.name) for p in spark_jars_dir.glob("*.jar")}
        paths = [p for p in paths if _artifact(p.name) not in own]
    unique = tuple(dict.fromkeys(paths))
    return Jars(unique, tuple(coordinates), "; ".join(notes) or None)


def _artifact(jar: str) -> str:
    """``kafka-clients`` of ``kafka-clients-3.9.2.jar``: a jar's name less its version."""
    return re.sub(r"-\d[^-]*(-[A-Za-z][\w.]*)?\.jar$", "", jar)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sjoin.jvm.jars fetch NAME COORDINATE...``, ``fetch-broker``, or
    ``fetch-connectors SPARK_VERSION FORMAT...``: what the set-up and skip messages run."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if len(args) >= 3 and args[0] == "fetch":
            jars = ensure_jars(args[1], args[2:], print)
        elif args == ["fetch-broker"]:
            jars = ensure_jars("kafka-broker", KAFKA_BROKER, print)
        elif len(args) >= 3 and args[0] == "fetch-connectors":
            jars = connector_jars(args[1], args[2:], None, print)
        else:
            print(
                "usage: python -m sjoin.jvm.jars fetch NAME GROUP:ARTIFACT:VERSION... | "
                "fetch-broker | fetch-connectors SPARK_VERSION kafka|delta...",
                file=sys.stderr,
            )
            return 2
    except (JarsUnavailable, ValueError) as err:
        print(f"sjoin: {err}", file=sys.stderr)
        return 1
    if jars.note:
        print(f"note: {jars.note}")
    print(f"{len(jars.paths)} jars: {', '.join(jars.coordinates)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
