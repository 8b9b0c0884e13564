"""Another Spark for `sjoin verify`: an interpreter with its own pyspark runs the generated
job in a child process, through the test driver.

``ensure_env("3.5")`` makes (once) and returns a venv with ``pyspark==3.5.*`` under the user's
cache directory (``$XDG_CACHE_HOME/sjoin/spark-3.5``, else ``~/.cache/sjoin/spark-3.5``),
with ``python -m venv`` and pip. ``RemoteSpark(python)`` starts ``jvm/spark_driver.py``
(copied alone into a temporary directory: it imports nothing of sjoin) under that interpreter
and talks to it in JSON lines (the protocol is in spark_driver.py); ``verify`` takes it in
place of a SparkSession.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .spark_driver import RunResult, SparkUnavailable, decode_result, decode_value

__all__ = [
    "EnvError",
    "RemoteSpark",
    "cache_dir",
    "ensure_env",
    "env_command",
    "pyspark_jars_dir",
    "pyspark_version",
]

_VERSION = re.compile(r"[0-9]{1,4}\.[0-9]{1,4}")  # MAJOR.MINOR, ASCII digits (not \d)


class EnvError(Exception):
    """The environment for a Spark version cannot be made here; ``command`` would make it."""

    def __init__(self, message: str, command: str) -> None:
        super().__init__(message)
        self.command = command


class RemoteSparkError(Exception):
    """The job failed in the child's Spark; the name of its exception class is kept."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def cache_dir() -> Path:
    """sjoin's cache directory: ``$XDG_CACHE_HOME/sjoin``, else ``~/.cache/sjoin``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sjoin"


def env_dir(version: str) -> Path:
    return cache_dir() / f"spark-{version}"


def _env_python(directory: Path) -> Path:
    return directory / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def env_command(version: str) -> str:
    """The one shell command that makes the environment for Spark ``version``."""
    directory = env_dir(version)
    python = _env_python(directory)
    return (
        f"{shlex.quote(sys.executable)} -m venv {shlex.quote(str(directory))} && "
        f"{shlex.quote(str(python))} -m pip install 'pyspark=={version}.*'"
    )


def pyspark_jars_dir(python: str | os.PathLike[str]) -> Path | None:
    """The ``jars`` folder of the pyspark that ``python`` imports, or None."""
    code = "import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))"
    try:
        done = subprocess.run(
            [str(python), "-c", code], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.splitlines()
    return Path(lines[-1]) if done.returncode == 0 and lines else None


def pyspark_version(python: str | os.PathLike[str]) -> str | None:
    """The pyspark version ``python`` imports, or None (no such interpreter, no pyspark)."""
    code = "import pyspark; print(pyspark.__version__)"
    try:
        done = subprocess.run(
            [str(python), "-c", code], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.split()
    return lines[-1] if done.returncode == 0 and lines else None


def ensure_env(version: str, say: Callable[[str], None] = lambda text: None) -> Path:
    """The interpreter of the cached environment for Spark ``version`` (``X.Y``), made first
    if needed (``say`` hears what is being done). Raises ``EnvError`` when it cannot be made
    (no network, no venv module) and ``ValueError`` for a version that is not ``X.Y``."""
    if _VERSION.fullmatch(version) is None:
        raise ValueError(f"a Spark version is MAJOR.MINOR, e.g. 3.5, not {version!r}")
    directory = env_dir(version)
    python = _env_python(directory)
    found = pyspark_version(python) if python.exists() else None
    if found is not None and found.startswith(f"{version}."):
        return python
    command = env_command(version)
    say(f"making the environment for Spark {version} in {directory} (once; a few minutes)")
    steps = [
        [sys.executable, "-m", "venv", str(directory)],
        [
            str(python),
            *("-m", "pip", "install", "--quiet", "--disable-pip-version-check"),
            f"pyspark=={version}.*",
        ],
    ]
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=3600, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            message = f"could not make the Spark {version} environment: {err}"
            raise EnvError(message, command) from err
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            last = said[-1] if said else f"exit status {done.returncode}"
            raise EnvError(f"could not make the Spark {version} environment: {last}", command)
    found = pyspark_version(python)
    if found is None or not found.startswith(f"{version}."):
        raise EnvError(
            f"the Spark {version} environment in {directory} has pyspark {found}", command
        )
    return python


class RemoteSpark:
    """The test driver in a child process under ``python``: one local Spark for its
    lifetime, one query per ``run_query``. ``version`` is that Spark's version; ``jars``
    and ``conf`` go to its session (connectors, Delta's SQL extension).
    Raises ``SparkUnavailable`` when the child's Spark cannot start (the reason kept)."""

    def __init__(
        self,
        python: str | os.PathLike[str],
        *,
        verbose: bool = False,
        jars: Sequence[str] = (),
        conf: Mapping[str, str] | None = None,
    ) -> None:
        self.python = str(python)
        self._dir = tempfile.mkdtemp(prefix="sjoin-remote-spark-")
        driver = Path(self._dir) / "sjoin_spark_driver.py"
        shutil.copyfile(Path(__file__).with_name("spark_driver.py"), driver)
        self._log: IO[str] | None = None
        if not verbose:
            self._log = open(Path(self._dir) / "stderr.log", "w+", encoding="utf-8")  # noqa: SIM115
        args = [*(["--verbose"] if verbose else []), *(["--jars", ",".join(jars)] if jars else [])]
        for key, value in (conf or {}).items():
            args += ["--conf", f"{key}={value}"]
        try:
            self._proc = subprocess.Popen(
                [self.python, str(driver), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                text=True,
                cwd=self._dir,
            )
        except OSError as err:
            self.close()
            raise SparkUnavailable(f"cannot run {self.python}: {err.strerror}") from err
        first = self._event()
        if first.get("event") != "ready":
            self.close()
            raise SparkUnavailable(first.get("message", "the Spark child process failed"))
        self.version: str = first["version"]

    def run_query(
        self,
        job: str,
        root: str,
        mode: str,
        streams: Sequence[str],
        feeds: Sequence[Mapping[str, Any] | None],
        confs: Mapping[str, str],
        on_batch: Callable[[int], None] | None = None,
        delta: Mapping[str, Any] | None = None,
        *,
        kafka: Mapping[str, Any] | None = None,
        produce: Callable[[int], None] | None = None,
        tables: Mapping[str, Any] | None = None,
    ) -> RunResult:
        """``spark_driver.run_job_query`` of the job file ``job``, in the child; with
        ``delta``, ``run_delta_job_query`` (the job's own Delta sources); with ``kafka``
        (``{"sinks": [...]}``), ``run_fed_job_query``: the job's own Kafka sources, each trace
        batch ``n`` put into its topics here by ``produce(n)`` while the child holds the
        queries' progress locks. An exception of ``produce`` ends the run and is raised
        here. ``tables``: the static tables given to the job (``spark_driver.StaticTables``)."""
        if (kafka is None) != (produce is None):
            raise ValueError("kafka and produce go together")
        request = {
            "job": job,
            "root": root,
            "mode": mode,
            "streams": list(streams),
            "feeds": list(feeds),
            "confs": dict(confs),
            **({"delta": dict(delta)} if delta else {}),
            **({"kafka": dict(kafka)} if kafka is not None else {}),
            **({"tables": {n: list(t) for n, t in tables.items()}} if tables else {}),
        }
        self._send(request)
        failed: BaseException | None = None
        while True:
            event = self._event()
            kind = event.get("event")
            if kind == "batch":
                if on_batch is not None:
                    on_batch(event["batch"])
            elif kind == "produce" and produce is not None:
                number = event["batch"]
                try:
                    produce(number)
                except Exception as err:  # the child ends the run, then it is raised here
                    failed = err
                    self._send({"failed": f"{type(err).__name__}: {err}"})
                else:
                    self._send({"produced": number})
            elif kind == "result" and failed is None:
                return decode_result(event)
            elif kind in ("result", "error") and failed is not None:
                raise failed
            elif kind == "error":
                raise RemoteSparkError(event["type"], event["message"])
            else:
                raise SparkUnavailable(event.get("message", "the Spark child process failed"))

    def _send(self, message: Mapping[str, Any]) -> None:
        """One JSON line to the child."""
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps(message) + "\n")
            self._proc.stdin.flush()
        except OSError as err:
            raise SparkUnavailable(f"the Spark child process is gone: {self._said()}") from err

    def _event(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            return {"event": "gone", "message": f"the Spark child process ended: {self._said()}"}
        event: dict[str, Any] = json.loads(line, object_hook=decode_value)
        return event

    def _said(self) -> str:
        """The last lines the child wrote on stderr (when they were kept)."""
        if self._log is None:
            return "(its stderr is above)"
        self._log.flush()
        self._log.seek(0)
        lines = [line for line in self._log.read().splitlines() if line.strip()]
        return " | ".join(lines[-5:]) or f"exit status {self._proc.returncode}"

    def close(self) -> None:
        """Stop the child (end of its stdin stops its Spark) and remove its files."""
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            assert proc.stdin is not None
            try:
                proc.stdin.close()
                proc.wait(timeout=120)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> RemoteSpark:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
