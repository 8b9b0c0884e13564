"""A real Apache Kafka broker for tests and demos: one KRaft node (broker and controller in
one JVM) on loopback ports only, its jars from Maven Central (``sjoin.jvm.jars``), its data in a
folder of its own that ``stop`` removes.

``KafkaBroker()`` is a context manager; the test fixture starts one per test run, and
``scripts/kafka.sh start|stop|status`` does the same for people (a pid file and the
bootstrap address in ``.cache/kafka/``). Nothing binds a non-loopback address: both listeners
and the advertised listener are ``127.0.0.1``, and JMX stays off.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType

from .jars import KAFKA_BROKER, Jars, JarsUnavailable, cached, fetch_command

__all__ = ["BrokerError", "KafkaBroker", "broker_jars"]

_LOG4J = """Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        Pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: WARN
      AppenderRef:
        - ref: STDOUT
"""


class BrokerError(Exception):
    """The broker could not start; the message holds the end of its log."""


def broker_jars() -> Jars:
    """The broker's jars from the cache; ``JarsUnavailable`` (with the command that fetches
    them) when they are not there, or when Java is missing."""
    command = fetch_command("kafka-broker", KAFKA_BROKER)
    if shutil.which("java") is None:
        raise JarsUnavailable("Java 17 or newer is not on PATH; the Kafka broker needs it", command)
    jars = cached("kafka-broker", KAFKA_BROKER)
    if jars is None:
        raise JarsUnavailable("the Kafka broker's jars are not in sjoin's cache", command)
    return jars


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _properties(directory: Path, port: int, controller: int, partitions: int) -> str:
    return "\n".join(
        [
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.bootstrap.servers=127.0.0.1:{controller}",
            f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"log.dirs={directory / 'data'}",
            f"num.partitions={partitions}",
            "auto.create.topics.enable=false",
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=2",
            "share.coordinator.state.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            "log.flush.interval.messages=1",
            "",
        ]
    )


class KafkaBroker:
    """One Kafka node on ``127.0.0.1:port``; ``bootstrap`` is its address for clients."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        *,
        port: int | None = None,
        partitions: int = 2,
        heap: str = "512m",
    ) -> None:
        self._own_dir = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="sjoin-kafka-"))
        self.port = port or _free_port()
        self.controller_port = _free_port()
        self.partitions = partitions
        self.heap = heap
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.directory / "broker.log"

    def _java(self, jars: Jars, *args: str) -> list[str]:
        return [
            "java",
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.directory / 'log4j2.yaml'}",
            "-cp",
            jars.classpath(),
            *args,
        ]

    def start(self, timeout: float = 60.0) -> KafkaBroker:
        """Format the storage, start the JVM and wait until the broker answers. Raises
        ``JarsUnavailable`` (no Java, no jars) or ``BrokerError`` (with its log)."""
        jars = broker_jars()
        self.directory.mkdir(parents=True, exist_ok=True)
        config = self.directory / "server.properties"
        config.write_text(
            _properties(self.directory, self.port, self.controller_port, self.partitions),
            encoding="utf-8",
        )
        (self.directory / "log4j2.yaml").write_text(_LOG4J, encoding="utf-8")
        cluster = uuid.uuid4().hex[:22]
        formatted = subprocess.run(
            self._java(
                jars,
                "kafka.tools.StorageTool",
                *("format", "--standalone", "--ignore-formatted"),
                *("-t", cluster, "-c", str(config)),
            ),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if formatted.returncode != 0:
            raise BrokerError(f"formatting the broker's storage failed: {formatted.stderr}")
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child's stdout for its lifetime
        try:
            self.proc = subprocess.Popen(
                self._java(jars, "kafka.Kafka", str(config)),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            log.close()
        (self.directory / "broker.pid").write_text(f"{self.proc.pid}\n", encoding="utf-8")
        (self.directory / "bootstrap").write_text(self.bootstrap + "\n", encoding="utf-8")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BrokerError(f"the Kafka broker exited at start:\n{self._tail()}")
            if self._ready():
                return self
            time.sleep(0.2)
        self.stop()
        waited = f"{timeout:.0f} s"
        raise BrokerError(f"the Kafka broker did not answer within {waited}:\n{self._tail()}")

    def _ready(self) -> bool:
        """The broker answers a metadata request (the port alone opens before it serves)."""
        try:
            from confluent_kafka.admin import AdminClient
        except ImportError:  # pragma: no cover - a dev dependency
            with socket.socket() as sock:
                return sock.connect_ex(("127.0.0.1", self.port)) == 0
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", self.port)) != 0:
                return False
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        try:
            meta = admin.list_topics(timeout=2)
        except Exception:
            return False
        return bool(meta.brokers)

    def _tail(self, lines: int = 20) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the JVM (SIGTERM, then SIGKILL) and remove the folder if this made it."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._own_dir:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> KafkaBroker:
        return self.start() if self.proc is None else self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _stop_pid(directory: Path) -> bool:
    """Stop the broker whose pid file is in ``directory``; False if none runs."""
    try:
        pid = int((directory / "broker.pid").read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    for _ in range(150):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)
    return True


def main(argv: list[str] | None = None) -> int:
    """``python -m sjoin.jvm.kafka_broker start|stop|status DIR [PORT]``: the broker for people,
    in the background, its state in DIR (``scripts/kafka.sh`` passes ``.cache/kafka``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (2, 3) or args[0] not in ("start", "stop", "status"):
        usage = "usage: python -m sjoin.jvm.kafka_broker start|stop|status DIR [PORT]"
        print(usage, file=sys.stderr)
        return 2
    directory = Path(args[1])
    if args[0] == "stop":
        stopped = _stop_pid(directory)
        shutil.rmtree(directory, ignore_errors=True)
        print("kafka: stopped" if stopped else "kafka: not running")
        return 0
    if args[0] == "status":
        try:
            print(f"kafka: running on {(directory / 'bootstrap').read_text().strip()}")
            os.kill(int((directory / "broker.pid").read_text().strip()), 0)
        except (OSError, ValueError):
            print("kafka: not running")
            return 1
        return 0
    _stop_pid(directory)
    shutil.rmtree(directory, ignore_errors=True)
    if len(args) == 3 and not (
        args[2].isascii() and args[2].isdigit() and len(args[2]) <= 5 and 0 < int(args[2]) < 65536
    ):
        print(f"kafka: PORT must be a number from 1 to 65535, not {args[2]!r}", file=sys.stderr)
        return 2
    broker = KafkaBroker(directory, port=int(args[2]) if len(args) == 3 else None)
    started = time.monotonic()
    try:
        broker.start()
    except JarsUnavailable as err:
        print(f"kafka: {err}; fetch them with:\n  {err.command}", file=sys.stderr)
        return 1
    except BrokerError as err:
        print(f"kafka: {err}", file=sys.stderr)
        return 1
    broker.proc = None  # leave it running: `stop` ends it through the pid file
    print(f"kafka: running on {broker.bootstrap} ({time.monotonic() - started:.1f} s to start)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
