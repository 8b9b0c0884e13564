"""Test driver for Python: feed deterministic micro-batches to a real local Spark.

Each scenario batch becomes exactly one Spark micro-batch; the no-data batches that Spark
decides to run afterwards follow on their own and are recorded like any other batch. Inputs
are JVM ``MemoryStream``s reached through py4j, carrying rows as JSON strings parsed with
``from_json``; rows for several inputs are added while holding the query's progress lock so
they land in one batch (reference §8). pyspark is imported lazily so this module imports
without it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import TracebackType

    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.query import StreamingQuery
    from pyspark.sql.types import DataType

RowDict = dict[str, Any]
Batch = Mapping[str, Sequence[Mapping[str, Any]]]

# The class moved in Spark 4.1; try the new name first.
_MEMORY_STREAM_CLASSES = (
    "org.apache.spark.sql.execution.streaming.runtime.MemoryStream",
    "org.apache.spark.sql.execution.streaming.MemoryStream",
)
_STATE_FIELDS = (
    "operatorName",
    "numRowsTotal",
    "numRowsUpdated",
    "numRowsRemoved",
    "numRowsDroppedByWatermark",
    "memoryUsedBytes",  # the state store's estimate of its memory (`sjoin plan --rates`)
)
_MIN_JAVA = 17

# Without Hadoop's native library (pip's pyspark has none) the local file system forks a
# process for every file Spark writes: `chmod` when a file is made (once more for its .crc
# file), and, in the FileContext-based checkpoint manager, `readlink` (tried in every PATH
# directory) on each rename. A stateful micro-batch writes a file per state store, so these
# forks were a third of a parity scenario's time (8 scenarios: 73 s -> 49 s with the two
# settings below). The checkpoints sjoin's sessions write are temporary (deleted after each
# run), so they go through Spark's FileSystem-based manager (the one Spark itself uses where
# FileContext is missing); what a query computes, its state and its metrics are the same.
# (Hadoop's RawLocalFileSystem as `fs.file.impl` would save the checksum files' `chmod` too,
# 46 s, but RocksDB's state store casts the local file system to LocalFileSystem and fails.)
_CHECKPOINT_MANAGER = "spark.sql.streaming.checkpointFileManagerClass"
_STREAMING = "org.apache.spark.sql.execution.streaming"
_FILE_SYSTEM_MANAGER = {  # the package moved in Spark 4.1
    True: f"{_STREAMING}.checkpointing.FileSystemBasedCheckpointFileManager",
    False: f"{_STREAMING}.FileSystemBasedCheckpointFileManager",
}
# Java forks those processes through a helper (jspawnhelper) that execs them: with vfork
# they are exec'd at once. Java 21 deprecates the option, so only Java 17 to 20 get it.
_VFORK = "-Djdk.lang.Process.launchMechanism=VFORK"
_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
_LAST_JAVA_WITH_VFORK = 20

_session: SparkSession | None = None


class SparkUnavailable(Exception):
    """Local Spark cannot run here (no pyspark, no Java 17+, or the JVM failed to start)."""


class ProduceFailed(Exception):
    """The parent could not produce a trace batch into the job's sources (child process)."""


@dataclass(frozen=True)
class BatchResult:
    """What one executed micro-batch produced, as Spark reported it.

    ``rows`` are the foreachBatch output in Spark's order (unspecified across partitions),
    timestamps as UTC-aware datetimes; ``watermark`` is progress ``eventTime.watermark``;
    ``state_operators`` keep Spark's progress field names (``_STATE_FIELDS``).
    """

    batch_id: int
    rows: list[RowDict]
    watermark: str | None
    num_input_rows: int
    state_operators: list[dict[str, Any]]


@dataclass(frozen=True)
class RunResult:
    """All executed batches of one run plus the executed plan of its last batch."""

    batches: list[BatchResult]
    plan: str


def get_spark(
    app_name: str = "sjoin-tests",
    *,
    quiet: bool = False,
    jars: Sequence[str] = (),
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """Return the one shared small local Spark session, starting it on first use.

    ``app_name`` and ``quiet`` only matter for the first call. ``quiet``: the JVM gets no
    stderr (its start-up banner and log4j's console lines go nowhere; failures still come
    back as Python exceptions) and py4j logs errors only. Spark's log level is ERROR either
    way. ``jars`` (jar files: Spark's connectors, from ``sjoin.jvm.jars``) go on ``spark.jars``
    of the first call, and ``conf`` (static confs such as Delta's SQL extension) too. Raises
    ``SparkUnavailable`` when Spark cannot run here, so test suites can skip rather than fail.
    """
    global _session
    if _session is not None and _session.sparkContext._jsc is not None:
        return _session
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise SparkUnavailable("pyspark is needed to run Spark: it is not installed") from exc
    java = check_java()
    if quiet:
        import logging

        logging.getLogger("py4j").setLevel(logging.ERROR)
    try:
        with _jvm_stderr_to_devnull(quiet):
            builder = SparkSession.builder
            for key, value in _with_callers(local_file_confs(java), conf or {}).items():
                builder = builder.config(key, value)
            builder = (
                builder.master("local[2]")
                .appName(app_name)
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
            )
            if jars:
                builder = builder.config("spark.jars", ",".join(jars))
            spark = builder.getOrCreate()
    except Exception as exc:  # the JVM or gateway failing to start is an environment problem
        raise SparkUnavailable(f"Spark could not start: {exc}") from exc
    spark.sparkContext.setLogLevel("ERROR")
    _session = spark
    return spark


@contextlib.contextmanager
def _jvm_stderr_to_devnull(quiet: bool) -> Iterator[None]:
    """While the JVM is launched, file descriptor 2 is /dev/null, so the JVM inherits it."""
    if not quiet:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def local_file_confs(java: int) -> dict[str, str]:
    """The settings of sjoin's sessions for the files they write and the processes those
    fork (see ``_CHECKPOINT_MANAGER``), for the installed pyspark on Java ``java``; a caller's
    own ``conf`` goes over them (``_with_callers``)."""
    import pyspark

    new_package = tuple(int(p) for p in re.findall(r"\d+", pyspark.__version__)[:2]) >= (4, 1)
    confs = {_CHECKPOINT_MANAGER: _FILE_SYSTEM_MANAGER[new_package]}
    if java <= _LAST_JAVA_WITH_VFORK:
        confs[_JAVA_OPTIONS] = _VFORK
    return confs


def _with_callers(ours: Mapping[str, str], theirs: Mapping[str, str]) -> dict[str, str]:
    """``theirs`` over ``ours``; JVM options are joined (ours first, so theirs win)."""
    confs = dict(ours)
    for key, value in theirs.items():
        confs[key] = f"{ours[key]} {value}" if key == _JAVA_OPTIONS and key in ours else value
    return confs


def check_java() -> int:
    """Fail with one clear sentence instead of a py4j gateway error when Java is unusable;
    else Java's major version."""
    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if not java or not os.path.isfile(java):
        where = f"$JAVA_HOME/bin/java ({java})" if java_home else "`java` on PATH"
        raise SparkUnavailable(f"Java {_MIN_JAVA}+ is needed to run Spark: no {where}")
    done = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    banner = done.stderr + done.stdout  # may start with "Picked up JAVA_TOOL_OPTIONS: ..."
    match = re.search(r'^.*version "(?:1\.)?(\d+).*$', banner, re.M)  # "1.8.0_392" is Java 8
    if match is None or int(match.group(1)) < _MIN_JAVA:
        said = match.group(0) if match else banner.strip()[:200]
        raise SparkUnavailable(f"Java {_MIN_JAVA}+ is needed to run Spark: {java} is {said!r}")
    return int(match.group(1))


class StreamDriver:
    """One streaming query over named controllable inputs, fed one micro-batch at a time.

    Usage: ``driver = StreamDriver(spark, {"left": "k BIGINT, t TIMESTAMP, v STRING", ...})``;
    build a result from ``driver.inputs`` (watermarks and joins are the caller's);
    ``driver.start(result)``; ``driver.feed({"left": [...], "right": [...]})`` per scenario
    batch; ``driver.results()``; ``driver.stop()`` (or use it as a context manager).
    """

    def __init__(self, spark: SparkSession, schemas: Mapping[str, str]) -> None:
        self._spark = spark
        self._streams = {name: _memory_stream(spark) for name in schemas}
        self.inputs: dict[str, DataFrame] = {
            name: _parsed_input(spark, self._streams[name], ddl) for name, ddl in schemas.items()
        }
        self._query: StreamingQuery | None = None
        self._checkpoint: str | None = None
        self._rows: dict[int, list[RowDict]] = {}
        self._progress: dict[int, dict[str, Any]] = {}

    def memory_stream(self, name: str) -> Any:
        """The JVM MemoryStream of input ``name`` (its rows as JSON strings, unparsed)."""
        return self._streams[name]

    @property
    def query(self) -> StreamingQuery:
        """The running query (for explain/plan inspection)."""
        if self._query is None:
            raise RuntimeError("the driver has not been started")
        return self._query

    def start(self, result: DataFrame, output_mode: str = "append") -> None:
        """Start ``result`` with foreachBatch capturing each batch's rows by batch id."""
        if self._query is not None:
            raise RuntimeError("the driver is already started")
        names = result.columns
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"output rows are dicts, so alias the duplicate columns {duplicates}")
        self._checkpoint = tempfile.mkdtemp(prefix="sjoin-checkpoint-")

        def capture(batch_df: DataFrame, batch_id: int) -> None:
            schema = batch_df.schema
            self._rows[batch_id] = [_to_python(row, schema) for row in batch_df.collect()]

        self._query = (
            result.writeStream.outputMode(output_mode)
            .option("checkpointLocation", self._checkpoint)
            .foreachBatch(capture)
            .start()
        )

    def feed(self, batch: Batch) -> None:
        """Add one scenario batch atomically, then wait until Spark has nothing left to run.

        Every input named in ``batch`` gets one addData (an empty list still forces a batch);
        the progress lock keeps them in one micro-batch (lock and unlock run on one JVM thread
        thanks to PySpark's default pinned-thread mode), and ``processAllAvailable`` returns
        only after the no-data batches that follow have run too. A query that died (e.g. a
        row that does not parse) raises ``StreamingQueryException`` here.
        """
        unknown = sorted(set(batch) - set(self._streams))
        if unknown or not batch:
            raise ValueError(
                f"a batch must name some of {sorted(self._streams)}, got {sorted(batch)}"
            )
        query = self.query
        to_seq = _jvm(self._spark).PythonUtils.toSeq
        payloads = {
            name: to_seq([json.dumps(row, default=_json_value) for row in rows])
            for name, rows in batch.items()
        }
        lock = query._jsq.streamingQuery().awaitProgressLock()
        lock.lock()
        try:
            for name, payload in payloads.items():
                self._streams[name].addData(payload)
        finally:
            lock.unlock()
        query.processAllAvailable()
        self._collect_progress()

    def results(self) -> list[BatchResult]:
        """Per executed batch id, in order: output rows, watermark and state metrics."""
        self._collect_progress()
        results = []
        for batch_id in sorted(set(self._rows) | set(self._progress)):
            progress = self._progress.get(batch_id, {})
            results.append(
                BatchResult(
                    batch_id=batch_id,
                    rows=self._rows.get(batch_id, []),
                    watermark=progress.get("eventTime", {}).get("watermark"),
                    num_input_rows=progress.get("numInputRows", 0),
                    state_operators=[
                        {name: op.get(name) for name in _STATE_FIELDS}
                        for op in progress.get("stateOperators", [])
                    ],
                )
            )
        return results

    def result(self) -> RunResult:
        """The run's batches, and the executed plan (``""`` when no batch ran)."""
        batches = self.results()
        return RunResult(batches, self.executed_plan() if batches else "")

    def executed_plan(self) -> str:
        """Executed physical plan of the query's last batch."""
        return executed_plan(self.query)

    def stop(self) -> None:
        """Stop the query and delete its checkpoint directory."""
        if self._query is not None:
            self._collect_progress()
            self._query.stop()
        if self._checkpoint is not None:
            shutil.rmtree(self._checkpoint, ignore_errors=True)
            self._checkpoint = None

    def __enter__(self) -> StreamDriver:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _collect_progress(self) -> None:
        """Keep progress of executed batches; idle triggers report no ``addBatch`` duration."""
        for entry in self.query.recentProgress:
            # 4.x: StreamingQueryProgress objects; 3.5: already parsed dicts
            progress = entry if isinstance(entry, dict) else json.loads(entry.json)
            if "addBatch" in progress.get("durationMs", {}):
                self._progress[progress["batchId"]] = progress


def run_batches(
    spark: SparkSession,
    schemas: Mapping[str, str],
    build: Callable[[dict[str, DataFrame]], DataFrame],
    batches: Sequence[Batch],
    output_mode: str = "append",
) -> RunResult:
    """Run a whole scenario: create inputs, build the query, feed every batch, stop."""
    with StreamDriver(spark, schemas) as driver:
        driver.start(build(driver.inputs), output_mode)
        for batch in batches:
            driver.feed(batch)
        return RunResult(batches=driver.results(), plan=driver.executed_plan())


@contextlib.contextmanager
def session_confs(spark: SparkSession, confs: Mapping[str, str]) -> Iterator[None]:
    """``confs`` set on ``spark``'s session for a run, each restored (or unset) after."""
    saved: dict[str, str | None] = {k: spark.conf.get(k, None) for k in confs}
    for key, value in confs.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, before in saved.items():
            if before is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, before)


def run_job_query(
    spark: SparkSession,
    job: Any,
    root: str,
    output_mode: str,
    streams: Sequence[str],
    feeds: Sequence[Batch | None],
    confs: Mapping[str, str],
    on_batch: Callable[[int], None] | None = None,
    *,
    tables: StaticTables | None = None,
) -> RunResult:
    """Run one query of a generated job (``job.SCHEMAS``, ``job.build``) rooted at ``root``
    over inputs for ``streams``: set ``confs`` for the run (restored after), feed each of
    ``feeds`` as one micro-batch (``None`` or an empty dict: nothing for this query's
    streams), calling ``on_batch(n)`` after the n-th. ``plan`` is ``""`` when no batch ran.
    ``tables`` are the job's static tables, given to ``build`` as batch DataFrames in place
    of its ``spark.read`` (``static_frames``). Spark's failures propagate.  ``build`` makes
    every relation of the job, so every stream of the job gets an input, though only
    ``streams`` (the query's) are fed."""
    unknown = sorted(set(streams) - set(job.SCHEMAS))
    if unknown:
        raise ValueError(f"the job has no stream {', '.join(unknown)}")
    schemas = dict(job.SCHEMAS)
    with session_confs(spark, confs), StreamDriver(spark, schemas) as driver:
        built = job.build(spark, {**driver.inputs, **static_frames(spark, tables or {})})
        driver.start(built[root], output_mode)
        for number, feed in enumerate(feeds, 1):
            if feed:
                driver.feed(feed)
            if on_batch is not None:
                on_batch(number)
        return driver.result()


# ---------------------------------------------------------------------------------------------
# A generated job's own Delta sources: each trace batch's version of the spec's Delta tables is
# published (copied from tables written beforehand) while every query's progress lock is held,
# so that Spark's Delta source reads it as one round, and the job's real sinks run beside.


def publish_version(staged: str, live: str, version: int) -> bool:
    """Make version ``version`` of the Delta table ``staged`` appear in the table ``live``:
    the data files its commit adds first, then the commit file itself, renamed into place in
    one step, so a reader sees the whole commit or nothing of it. False when ``staged`` has
    no such version."""
    from urllib.parse import unquote, urlparse

    name = f"{version:020d}.json"
    commit = os.path.join(staged, "_delta_log", name)
    if not os.path.isfile(commit):
        return False
    with open(commit, encoding="utf-8") as handle:
        actions = [json.loads(line) for line in handle if line.strip()]
    for action in actions:
        add = action.get("add")
        if not add:
            continue
        path = add["path"]
        if urlparse(path).scheme:
            raise ValueError(f"{commit}: the file {path} is not inside the table")
        relative = unquote(path)
        target = os.path.join(live, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(staged, relative), target)
    log = os.path.join(live, "_delta_log")
    os.makedirs(log, exist_ok=True)
    shutil.copyfile(commit, os.path.join(log, f".{name}.tmp"))
    os.replace(os.path.join(log, f".{name}.tmp"), os.path.join(log, name))
    return True


class JobStreamDriver(StreamDriver):
    """``StreamDriver`` over a job's own sources (``read_inputs``): nothing goes through
    memory streams; ``extra_queries`` (the job's sinks) run beside the captured query and
    are locked, settled and stopped with it."""

    def __init__(self, spark: SparkSession, inputs: Mapping[str, DataFrame]) -> None:
        self._spark = spark
        self._streams = {}
        self.inputs = dict(inputs)
        self._query = None
        self._checkpoint = None
        self._rows = {}
        self._progress = {}
        self.extra_queries: list[Any] = []

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the progress lock of every query (Spark computes a micro-batch's end
        offsets under it), so what changes meanwhile lands in one micro-batch of each."""
        queries = [self.query, *self.extra_queries]
        locks = [q._jsq.streamingQuery().awaitProgressLock() for q in queries]
        for lock in locks:
            lock.lock()
        try:
            yield
        finally:
            for lock in reversed(locks):
                lock.unlock()

    def start_with_sinks(
        self, job: Any, rels: Mapping[str, Any], root: str, mode: str, sinks: Iterable[str]
    ) -> None:
        """Start the captured query of ``root`` and the job's sinks of ``sinks`` beside it
        (``start_sinks``), then let them run all they can."""
        self.start(rels[root], mode)
        self.extra_queries = start_sinks(job, rels, sinks)
        self.settle()

    def settle(self) -> None:
        """Wait until every query has run all it can (no-data batches included)."""
        for query in [self.query, *self.extra_queries]:
            query.processAllAvailable()
        self._collect_progress()

    def stop(self) -> None:
        for query in self.extra_queries:
            query.stop()
        super().stop()


def start_sinks(job: Any, rels: Mapping[str, Any], relations: Iterable[str]) -> list[Any]:
    """Start the job's sink queries of ``relations`` only (its ``start_sinks`` starts them
    all: the others are stopped at once)."""
    wanted = set(relations)
    if not wanted:
        return []
    started = job.start_sinks(rels)
    for query in started:
        if query.name not in wanted:
            query.stop()
    return [q for q in started if q.name in wanted]


@contextlib.contextmanager
def own_sources(
    spark: SparkSession,
    job: Any,
    confs: Mapping[str, str],
    tables: StaticTables | None = None,
) -> Iterator[tuple[JobStreamDriver, Mapping[str, Any]]]:
    """A generated job over its own sources (``read_inputs``) with ``confs`` set for the run
    (restored after): the driver over them (stopped after) and the job's relations.
    ``tables`` (``static_frames``) are given to ``build`` in place of its own table reads,
    as ``run_job_query`` gives them."""
    with session_confs(spark, confs):
        inputs = job.read_inputs(spark)
        rels = job.build(spark, {**inputs, **static_frames(spark, tables or {})})
        driver = JobStreamDriver(spark, inputs)
        with driver:
            yield driver, rels


def run_fed_job_query(
    spark: SparkSession,
    job: Any,
    root: str,
    output_mode: str,
    feeds: Sequence[Batch | None],
    confs: Mapping[str, str],
    sinks: Iterable[str],
    produce: Callable[[int], None],
    on_batch: Callable[[int], None] | None = None,
    *,
    tables: StaticTables | None = None,
) -> RunResult:
    """Run one query of a generated job whose sources are its own (``read_inputs``: Kafka
    topics) fed from outside: ``produce(n)`` puts trace batch ``n`` (from 1) where the sources
    read it and returns once all of it is there (every record acknowledged). The first batch
    with rows for this query (``feeds``: ``None`` or empty for none) is produced before the
    queries start (read from the earliest offsets); each later one while the progress lock of
    every query is held (Spark fixes a micro-batch's end offsets under it), so a trace batch
    is one micro-batch; then the queries settle. The job's sinks of ``sinks`` run beside the
    captured query. ``confs`` are set for the run (restored after); ``tables`` are the job's
    static tables (``own_sources``). Spark's failures and ``produce``'s propagate."""
    with own_sources(spark, job, confs, tables) as (driver, rels):
        running = False
        for number, feed in enumerate(feeds, 1):
            if feed and running:
                with driver.locked():
                    produce(number)
                driver.settle()
            elif feed:
                produce(number)
                driver.start_with_sinks(job, rels, root, output_mode, sinks)
                running = True
            if on_batch is not None:
                on_batch(number)
        return driver.result() if running else RunResult([], "")


def run_delta_job_query(
    spark: SparkSession,
    job: Any,
    root: str,
    output_mode: str,
    feeds: Sequence[Batch | None],
    confs: Mapping[str, str],
    delta: Mapping[str, Any],
    on_batch: Callable[[int], None] | None = None,
    *,
    tables: StaticTables | None = None,
) -> RunResult:
    """Run one query of a generated job whose sources are the spec's Delta tables (its
    ``read_inputs``): ``delta["tables"]`` maps each stream to ``[staged, live]`` (every
    stream the job reads), ``delta["versions"]`` gives the table version of each trace batch
    (as many as ``feeds``), ``delta["sinks"]`` names the relations whose sinks the job starts
    beside the captured query; ``delta["starts"]`` each stream's table version when the job
    starts (default 0). The versions up to it are published before the queries start; each
    later version while their progress locks are held, then the queries settle.
    ``confs`` are set for the run (restored after); ``tables`` are the job's static tables
    (``own_sources``). Spark's failures propagate."""
    sources: Mapping[str, Sequence[str]] = delta["tables"]
    versions: Sequence[int] = delta["versions"]
    starts: Mapping[str, int] = delta.get("starts") or {s: 0 for s in sources}
    if len(versions) != len(feeds):
        raise ValueError(f"{len(versions)} versions for {len(feeds)} trace batches")
    for stream, (staged, live) in sources.items():
        for version in range(starts[stream] + 1):
            publish_version(staged, live, version)
    published = set(range(min(starts.values(), default=0) + 1))
    with own_sources(spark, job, confs, tables) as (driver, rels):
        driver.start_with_sinks(job, rels, root, output_mode, delta.get("sinks", ()))
        for number, version in enumerate(versions, 1):
            if version not in published:
                with driver.locked():
                    for stream, (staged, live) in sources.items():
                        if version > starts[stream]:
                            publish_version(staged, live, version)
                published.add(version)
                driver.settle()
            if on_batch is not None:
                on_batch(number)
        return driver.result()


def executed_plan(query: StreamingQuery) -> str:
    """Executed physical plan text of the last batch (watermark values included)."""
    execution = query._jsq.streamingQuery().lastExecution()
    if execution is None:
        raise RuntimeError("the query has not executed a batch yet")
    return str(execution.executedPlan().toString())


def _jvm(spark: SparkSession) -> Any:
    """The py4j view of the JVM; Spark Connect sessions have none and cannot host a MemoryStream."""
    jvm = spark._jvm
    if jvm is None:
        raise SparkUnavailable("the Spark driver needs a classic (py4j) session, not Spark Connect")
    return jvm


def _memory_stream(spark: SparkSession) -> Any:
    """A JVM MemoryStream[String] bound to ``spark``."""
    from py4j.java_gateway import JavaClass
    from py4j.protocol import Py4JError

    jvm = _jvm(spark)
    encoder = jvm.org.apache.spark.sql.Encoders.STRING()
    for class_name in _MEMORY_STREAM_CLASSES:
        cls = jvm
        for part in class_name.split("."):
            cls = getattr(cls, part)
        if isinstance(cls, JavaClass):
            try:
                return cls.apply(encoder, spark._jsparkSession)
            except Py4JError:  # before 4.0: apply(encoder, sqlContext)
                return cls.apply(encoder, spark._jsparkSession.sqlContext())
    raise SparkUnavailable(f"this Spark has none of {_MEMORY_STREAM_CLASSES}")


# a static table as the parent gives it: its column DDL and its rows (JSON-ready dicts)
StaticTables = Mapping[str, tuple[str, Sequence[RowDict]]]


def static_frames(spark: SparkSession, tables: StaticTables) -> dict[str, DataFrame]:
    """Each static table as a batch DataFrame of its DDL columns, its rows read from JSON as
    a stream's feed is (``_parsed_input``)."""
    from pyspark.sql import functions as F

    frames: dict[str, DataFrame] = {}
    for name, (ddl, rows) in tables.items():
        text = [(json.dumps(row, default=_json_value),) for row in rows]
        raw = spark.createDataFrame(text, "value STRING")
        parsed = F.from_json(F.col("value"), ddl, {"mode": "FAILFAST"}).alias("row")
        frames[name] = raw.select(parsed).select("row.*")
    return frames


def _parsed_input(spark: SparkSession, stream: Any, ddl: str) -> DataFrame:
    """The stream's JSON strings parsed into ``ddl`` columns; malformed rows fail the batch."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    raw = DataFrame(stream.toDF(), spark)
    parsed = F.from_json(F.col("value"), ddl, {"mode": "FAILFAST"}).alias("row")
    return raw.select(parsed).select("row.*")


def _json_value(value: object) -> str:
    """JSON form of datetimes (naive ones are UTC, the session time zone) and dates."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat() if value.tzinfo else value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"cannot send {type(value).__name__} {value!r} to Spark as JSON")


def _to_python(value: Any, data_type: DataType) -> Any:
    """Plain Python value of a collected field; TIMESTAMPs become UTC-aware datetimes.

    PySpark returns TIMESTAMP values as naive datetimes in the Python process's local time
    zone, so they are converted back instead of trusting the machine's TZ.
    """
    from pyspark.sql.types import ArrayType, MapType, StructType, TimestampType

    if value is None:
        return None
    if isinstance(data_type, StructType):
        return {f.name: _to_python(value[i], f.dataType) for i, f in enumerate(data_type.fields)}
    if isinstance(data_type, ArrayType):
        return [_to_python(v, data_type.elementType) for v in value]
    if isinstance(data_type, MapType):
        return {
            _to_python(k, data_type.keyType): _to_python(v, data_type.valueType)
            for k, v in value.items()
        }
    if isinstance(data_type, TimestampType):
        return value.astimezone(UTC)
    return value


# ---------------------------------------------------------------------------------------------
# Plan parsing: StreamingSymmetricHashJoin nodes as printed by executedPlan.toString, e.g. 4.3.0:
#   StreamingSymmetricHashJoin [k#3L], [k#9L], Inner, condition = [ leftOnly = null,
#   rightOnly = null, both = (...), full = (...) ], state info [ ... ] stateStoreCkptIds = None,
#   90000, 90000, state cleanup [ left value predicate: (t#4-T10000ms <= 84999000),
#   right value predicate: (t#10-T10000ms <= 79999000) ], 2, Append
# (one line; 3.3 prints one watermark, 3.4+ late-events then eviction; missing side: "left = null")

_JOIN_NODE = "StreamingSymmetricHashJoin "
_CONDITION = "condition = ["
_CLEANUP = "state cleanup ["
_CONDITION_PARTS = ("leftOnly", "rightOnly", "both", "full")
_SIDE = re.compile(r"^(left|right) (?:= null|(key|value) predicate: (.*))$", re.S)
_PREDICATE_BOUND = re.compile(r"<=\s*(-?\d+)\)*$")
_INT = re.compile(r"^-?\d+$")


def parse_join_plan(plan: str) -> list[dict[str, Any]]:
    """Each StreamingSymmetricHashJoin node of ``plan`` (top-down) as a dict.

    Keys: ``join_type``; ``condition`` ({leftOnly, rightOnly, both, full} -> text or None);
    ``late_events_watermark_ms`` and ``eviction_watermark_ms`` (None if not printed; 3.3
    prints one value, used for both); ``state_cleanup`` ({left, right} -> None or
    {"kind": "key"|"value", "value_ms": int}); ``state_format_version``.
    """
    nodes = []
    for line in plan.splitlines():
        start = line.find(_JOIN_NODE)
        if start >= 0:
            nodes.append(_parse_join_node(line[start + len(_JOIN_NODE) :]))
    return nodes


def _parse_join_node(node: str) -> dict[str, Any]:
    """Parse the text after ``StreamingSymmetricHashJoin `` on one plan line."""
    cond_start = node.index(_CONDITION)
    cond_open = cond_start + len(_CONDITION) - 1
    cond_close = _closing_bracket(node, cond_open)
    clean_start = node.index(_CLEANUP, cond_close)
    clean_open = clean_start + len(_CLEANUP) - 1
    clean_close = _closing_bracket(node, clean_open)

    keys_and_type = [t for t in split_top_level(node[:cond_start]) if t]
    # Between the two blocks: state info, then the watermark(s) as trailing integers.
    watermarks: list[int] = []
    for token in reversed([t for t in split_top_level(node[cond_close + 1 : clean_start]) if t]):
        if not _INT.match(token):
            break
        watermarks.insert(0, int(token))
    late = watermarks[-2] if len(watermarks) >= 2 else (watermarks[-1] if watermarks else None)
    evict = watermarks[-1] if watermarks else None
    trailing = [t for t in split_top_level(node[clean_close + 1 :]) if t]
    left, right = split_top_level(node[clean_open + 1 : clean_close])
    return {
        "join_type": keys_and_type[-1],
        "condition": _parse_condition(node[cond_open + 1 : cond_close]),
        "late_events_watermark_ms": late,
        "eviction_watermark_ms": evict,
        "state_cleanup": {"left": _parse_side(left), "right": _parse_side(right)},
        "state_format_version": int(trailing[0]) if trailing and _INT.match(trailing[0]) else None,
    }


def _parse_condition(text: str) -> dict[str, str | None]:
    """Split ``leftOnly = a, rightOnly = b, both = c, full = d`` (labels found in order)."""
    parts: dict[str, str | None] = {}
    rest = text.strip()
    for label, following in zip(_CONDITION_PARTS, (*_CONDITION_PARTS[1:], ""), strict=True):
        prefix = f"{label} = "
        if not rest.startswith(prefix):
            raise ValueError(f"unexpected join condition text: {text!r}")
        end = rest.find(f", {following} = ") if following else len(rest)
        expr = rest[len(prefix) : end].strip()
        parts[label] = None if expr == "null" else expr
        rest = rest[end + 2 :] if following else ""
    return parts


def _parse_side(text: str) -> dict[str, Any] | None:
    """``left value predicate: (t#6-T10000ms <= 84999000)`` -> value 84999; ``left = null``."""
    match = _SIDE.match(text.strip())
    if match is None:
        raise ValueError(f"unexpected state cleanup text: {text!r}")
    if match.group(2) is None:
        return None
    bound = _PREDICATE_BOUND.search(match.group(3).strip())
    if bound is None:
        raise ValueError(f"no '<= number' bound in state cleanup predicate: {text!r}")
    micros = int(bound.group(1))
    if micros % 1000:
        raise ValueError(f"state cleanup bound is not whole milliseconds: {text!r}")
    return {"kind": match.group(2), "value_ms": micros // 1000}


def _closing_bracket(text: str, open_index: int) -> int:
    """Index of the bracket closing the one at ``open_index``, counting ()[] nesting."""
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] in "([":
            depth += 1
        elif text[i] in ")]":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced brackets in plan text: {text!r}")


def split_top_level(text: str) -> list[str]:
    """Split on commas outside ()[] and strip each part."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


# ---------------------------------------------------------------------------------------------
# The driver as a child process: `python spark_driver.py` (this file alone, copied anywhere; it
# imports nothing of sjoin) runs generated jobs for a parent that may use another pyspark.
# Protocol, one JSON object per line: the child says {"event": "ready", "version": V} (or
# {"event": "unavailable", "message": M}) once Spark runs; each request on stdin
# {"job": PATH, "root": R, "mode": M, "streams": [...], "feeds": [...], "confs": {...}} (and
# "tables": {NAME: [DDL, [rows]]}, the static tables given to build(); with
# "delta": {...}, the job's own Delta sources: run_delta_job_query; with "kafka": {"sinks":
# [...]}, the job's own Kafka sources fed by the parent: run_fed_job_query) gets
# {"event": "batch", "batch": N} after each feed, then {"event": "result", "batches": [...],
# "plan": TEXT} or {"event": "error", "type": T, "message": M}. End of stdin stops Spark.
# A "kafka" request has the parent produce each trace batch while the child holds the locks:
# the child says {"event": "produce", "batch": N} (holding every query's progress lock, but
# for the first batch, produced before the queries start) and waits for one line on stdin,
# {"produced": N} once every record of batch N is acknowledged, or {"failed": MESSAGE}; only
# then does it release the locks, so each trace batch is one micro-batch as in one process.
# Values that JSON lacks travel as {"$timestamp": ISO}, {"$date": ISO}, {"$decimal": TEXT}.


def encode_value(value: Any) -> Any:
    """A collected value as JSON-ready data that ``decode_value`` turns back."""
    from decimal import Decimal

    if isinstance(value, datetime):
        return {"$timestamp": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, dict):
        return {str(k): encode_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    return value


def decode_value(data: dict[str, Any]) -> Any:
    """``json.loads`` object hook: the inverse of ``encode_value``."""
    from decimal import Decimal

    if len(data) == 1:
        ((key, text),) = data.items()
        if key == "$timestamp":
            return datetime.fromisoformat(text)
        if key == "$date":
            return date.fromisoformat(text)
        if key == "$decimal":
            return Decimal(text)
    return data


def encode_result(result: RunResult) -> dict[str, Any]:
    return {
        "batches": [
            {
                "batch_id": b.batch_id,
                "rows": encode_value(b.rows),
                "watermark": b.watermark,
                "num_input_rows": b.num_input_rows,
                "state_operators": b.state_operators,
            }
            for b in result.batches
        ],
        "plan": result.plan,
    }


def decode_result(data: Mapping[str, Any]) -> RunResult:
    return RunResult([BatchResult(**b) for b in data["batches"]], data["plan"])


def ask_parent_to_produce(
    number: int, say: Callable[[dict[str, Any]], None], replies: IO[str]
) -> None:
    """The child's side of producing trace batch ``number`` (a "kafka" request): ask the
    parent, then wait for its one-line reply on ``replies``. Returns once the parent says
    every record is acknowledged; raises ``ProduceFailed`` with the parent's reason, and
    ``SparkUnavailable`` when the parent is gone (end of its input)."""
    say({"event": "produce", "batch": number})
    line = replies.readline()
    if not line:
        raise SparkUnavailable(f"the parent process ended while batch {number} was produced")
    try:
        reply = json.loads(line)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        raise ProduceFailed(
            f"the parent's reply for batch {number} is not a JSON object: {line[:200]!r}"
        )
    if reply.get("produced") != number:
        raise ProduceFailed(str(reply.get("failed") or f"batch {number} was not produced"))


def serve(
    quiet: bool = True, jars: Sequence[str] = (), conf: Mapping[str, str] | None = None
) -> None:
    """The child's loop (see above): requests on stdin, events on stdout; ``jars`` and
    ``conf`` go to the session (``--jars A,B`` and ``--conf KEY=VALUE`` on the command
    line)."""
    import importlib.util

    out = sys.stdout

    def say(event: dict[str, Any]) -> None:
        out.write(json.dumps(event) + "\n")
        out.flush()

    try:
        spark = get_spark("sjoin-verify", quiet=quiet, jars=jars, conf=conf)
    except SparkUnavailable as err:
        say({"event": "unavailable", "message": str(err)})
        return
    say({"event": "ready", "version": str(spark.version)})

    number = 0
    while line := sys.stdin.readline():
        number += 1
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            spec = importlib.util.spec_from_file_location(f"sjoin_job_{number}", request["job"])
            assert spec is not None and spec.loader is not None
            job = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(job)

            result = _run_request(spark, job, request, say)
        except Exception as err:
            if isinstance(err, SparkUnavailable):
                say({"event": "unavailable", "message": str(err)})
                return
            say({"event": "error", "type": type(err).__name__, "message": str(err)})
            continue
        say({"event": "result", **encode_result(result)})
    spark.stop()


def _run_request(
    spark: SparkSession,
    job: Any,
    request: Mapping[str, Any],
    say: Callable[[dict[str, Any]], None],
) -> RunResult:
    """One request of the parent run by the runner it names: the job's own Kafka sources
    (``kafka``: each trace batch produced by the parent), its own Delta tables (``delta``),
    else memory streams; each batch said as it ends."""
    root, mode, feeds, confs = request["root"], request["mode"], request["feeds"], request["confs"]
    tables = request.get("tables")

    def tick(n: int) -> None:
        say({"event": "batch", "batch": n})

    if request.get("kafka") is not None:
        sinks = request["kafka"].get("sinks", ())

        def produced_by_parent(n: int) -> None:
            ask_parent_to_produce(n, say, sys.stdin)

        return run_fed_job_query(
            spark, job, root, mode, feeds, confs, sinks, produced_by_parent, tick, tables=tables
        )
    if request.get("delta"):
        delta = request["delta"]
        return run_delta_job_query(spark, job, root, mode, feeds, confs, delta, tick, tables=tables)
    return run_job_query(
        spark, job, root, mode, request["streams"], feeds, confs, tick, tables=tables
    )


def _arguments(argv: Sequence[str]) -> tuple[bool, list[str], dict[str, str]]:
    """``--verbose``, ``--jars A,B`` and ``--conf KEY=VALUE`` (repeated) of the child."""
    verbose = False
    jars: list[str] = []
    conf: dict[str, str] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--verbose":
            verbose = True
        elif arg == "--jars" and args:
            jars.extend(j for j in args.pop(0).split(",") if j)
        elif arg == "--conf" and args and "=" in args[0]:
            key, value = args.pop(0).split("=", 1)
            conf[key] = value
        else:
            raise SystemExit(f"spark_driver: unknown argument {arg!r}")
    return verbose, jars, conf


if __name__ == "__main__":
    _verbose, _jars, _conf = _arguments(sys.argv[1:])
    serve(quiet=not _verbose, jars=_jars, conf=_conf)
