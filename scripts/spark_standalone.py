"""Start and stop a Spark standalone cluster, one master and one worker, on 127.0.0.1, from
the pip-installed pyspark package (no Spark download, no sbin/ scripts needed).

    .venv/bin/python scripts/spark_standalone.py start DIR   # prints the master URL
    .venv/bin/python scripts/spark_standalone.py stop DIR

``start`` picks free ports, starts both daemons in their own process groups, waits until the
worker is registered with the master (polling the master's web UI at ``/json/``) and writes
into DIR: ``master-url`` (``spark://127.0.0.1:PORT``), ``web-ui-url``, ``pids``, the daemons'
logs (``master.log``, ``worker.log``) and the worker's work dir (``work/``, one folder per
application with the executors' stdout and stderr). ``stop`` ends both process groups
(executors included). Run it with the Python that has pyspark installed; Java 17+ must be on
PATH or in JAVA_HOME.

tests/integration/spark/test_standalone_cluster.py imports it (``start``/``stop``), and
docs/standalone-cluster.md runs it from the shell.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
DAEMON_MEMORY = "512m"  # heap of the master and the worker JVMs themselves
WORKER_CORES = 1
WORKER_MEMORY = "1g"  # what the worker offers to executors


class ClusterError(Exception):
    """The cluster did not come up; the message ends with the daemons' logs."""


@dataclass(frozen=True)
class Cluster:
    master_url: str  # spark://127.0.0.1:PORT, for spark-submit --master
    web_ui_url: str  # http://127.0.0.1:PORT; /json/ is the master's state
    dir: Path

    def state(self) -> dict[str, Any]:
        """The master's state as its web UI reports it (workers, apps, ...)."""
        return _master_state(self.web_ui_url)


def spark_home() -> Path:
    """The pyspark package folder: it has bin/spark-class, bin/spark-submit and jars/."""
    env = os.environ.get("SPARK_HOME")
    if env:
        return Path(env)
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def spark_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for spark-class and spark-submit: this Spark, loopback only, this Python."""
    env = dict(os.environ if base is None else base)
    env["SPARK_HOME"] = str(spark_home())
    env["SPARK_LOCAL_IP"] = HOST
    env.setdefault("SPARK_DAEMON_MEMORY", DAEMON_MEMORY)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", env["PYSPARK_PYTHON"])
    return env


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports free on 127.0.0.1 right now (held together while chosen)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind((HOST, 0))
        return [sock.getsockname()[1] for sock in socks]


def start(directory: str | os.PathLike[str], timeout: float = 90.0) -> Cluster:
    """Start a master and one worker; return when the worker is registered and alive.

    On any failure both daemons are stopped and ``ClusterError`` carries their logs.
    """
    root = Path(directory).resolve()
    (root / "work").mkdir(parents=True, exist_ok=True)
    if (root / "pids").exists():
        raise ClusterError(f"{root}/pids exists: a cluster may be running; stop it first")
    master_port, master_ui, worker_ui = free_ports(3)
    master_url = f"spark://{HOST}:{master_port}"
    web_ui_url = f"http://{HOST}:{master_ui}"
    cluster = Cluster(master_url, web_ui_url, root)
    deadline = time.monotonic() + timeout
    try:
        _spawn(
            root,
            "master",
            "org.apache.spark.deploy.master.Master",
            ["--host", HOST, "--port", str(master_port), "--webui-port", str(master_ui)],
        )
        _wait(
            root,
            deadline,
            "the master to answer on " + web_ui_url + "/json/",
            lambda: _try_state(web_ui_url) is not None,
        )
        _spawn(
            root,
            "worker",
            "org.apache.spark.deploy.worker.Worker",
            [
                master_url,
                "--host",
                HOST,
                "--cores",
                str(WORKER_CORES),
                "--memory",
                WORKER_MEMORY,
                "--webui-port",
                str(worker_ui),
                "--work-dir",
                str(root / "work"),
            ],
        )
        _wait(
            root,
            deadline,
            "the worker to register with the master",
            lambda: _alive_workers(_try_state(web_ui_url)) >= 1,
        )
    except BaseException:
        stop(root)
        raise
    (root / "master-url").write_text(master_url + "\n")
    (root / "web-ui-url").write_text(web_ui_url + "\n")
    return cluster


def stop(directory: str | os.PathLike[str], timeout: float = 20.0) -> None:
    """Stop every daemon started in ``directory`` (their whole process groups). Idempotent."""
    root = Path(directory).resolve()
    pids_file = root / "pids"
    if not pids_file.exists():
        return
    pids = [int(line.split()[1]) for line in pids_file.read_text().splitlines() if line]
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        for pid in pids:
            with suppress(ProcessLookupError):  # each daemon leads its own group
                os.killpg(pid, sig)
        end = time.monotonic() + wait
        while any(_group_alive(pid) for pid in pids) and time.monotonic() < end:
            time.sleep(0.2)
        if not any(_group_alive(pid) for pid in pids):
            break
    pids_file.unlink()
    for name in ("master-url", "web-ui-url"):
        (root / name).unlink(missing_ok=True)


def logs(directory: str | os.PathLike[str], tail: int = 60) -> str:
    """The last lines of each daemon's log, for error messages."""
    root = Path(directory)
    parts = []
    for name in ("master", "worker"):
        log = root / f"{name}.log"
        if log.exists():
            lines = log.read_text(errors="replace").splitlines()[-tail:]
            parts.append(f"--- {log} (last {len(lines)} lines)\n" + "\n".join(lines))
    return "\n".join(parts) or f"(no daemon logs in {root})"


# ---------------------------------------------------------------------------- internals


def _spawn(root: Path, name: str, main_class: str, args: list[str]) -> None:
    spark_class = spark_home() / "bin" / "spark-class"
    with (root / f"{name}.log").open("ab") as log:
        proc = subprocess.Popen(
            [str(spark_class), main_class, *args],
            cwd=root,
            env=spark_env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends it with its children
        )
    with (root / "pids").open("a") as pids:
        pids.write(f"{name} {proc.pid}\n")


def _wait(root: Path, deadline: float, what: str, ready: Any) -> None:
    while time.monotonic() < deadline:
        if ready():
            return
        for line in (root / "pids").read_text().splitlines():
            name, pid = line.split()
            if not _group_alive(int(pid)):
                raise ClusterError(f"the {name} exited while waiting for {what}\n{logs(root)}")
        time.sleep(0.25)
    raise ClusterError(f"timed out waiting for {what}\n{logs(root)}")


def _master_state(web_ui_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(web_ui_url + "/json/", timeout=5) as response:
        state: dict[str, Any] = json.load(response)
    return state


def _try_state(web_ui_url: str) -> dict[str, Any] | None:
    try:
        return _master_state(web_ui_url)
    except (OSError, urllib.error.URLError, ValueError):
        return None


def _alive_workers(state: dict[str, Any] | None) -> int:
    if state is None:
        return 0
    workers = state.get("workers", [])
    return sum(1 for w in workers if w.get("state") == "ALIVE")


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs (zombies do not count)."""
    with suppress(ChildProcessError):
        os.waitpid(pgid, os.WNOHANG)  # reap our own child if it has exited
    proc = Path("/proc")
    if proc.is_dir():
        for stat in proc.glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":  # fields: state, ppid, pgrp
                return True
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def seconds(text: str) -> float:
    """``--timeout``: ASCII digits with an optional fraction, at most 6 before the point, above
    0 (``float`` would take ``nan``, ``inf``, ``1e3``, ``1_0`` and other scripts' digits)."""
    whole, dot, frac = text.partition(".")
    digits = whole.isascii() and whole.isdigit()
    digits = digits and (not dot or (frac.isascii() and frac.isdigit()))
    if not digits or len(whole) > 6 or len(frac) > 6 or float(text) == 0:
        raise argparse.ArgumentTypeError(
            f"seconds as 1 to 6 digits 0-9 with an optional fraction, above 0, not {text[:20]!r}"
        )
    return float(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["start", "stop"])
    parser.add_argument("dir", help="folder for pids, logs, the master URL and the work dir")
    parser.add_argument("--timeout", type=seconds, default=90.0, help="seconds to wait (start)")
    args = parser.parse_args(argv)
    if args.command == "stop":
        stop(args.dir)
        return 0
    try:
        cluster = start(args.dir, timeout=args.timeout)
    except ClusterError as err:
        print(f"spark_standalone: {err}", file=sys.stderr)
        return 1
    print(cluster.master_url)
    print(f"web UI: {cluster.web_ui_url}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
