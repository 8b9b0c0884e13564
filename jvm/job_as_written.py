"""`sjoin verify job.py`: the user's own PySpark job on local Spark, as written, its sources
fed from the trace.

A spec is verified by running the job sjoin generates from its plan.  A job read from the
user's code is the thing to check, so verify runs *that* code: its module (or its
``--entry`` function) runs in this process on a fresh session of the classic local Spark,
with three seams patched for the run and restored after:

* ``SparkSession.builder.getOrCreate()`` (and ``getActiveSession``, ``active``) give the
  job that session;
* each streaming read (``readStream ... load/json/csv/parquet/orc/text/table``) gives the
  stream of the plan it is (matched by format and path, or Kafka topic): a memory stream
  fed one trace batch per micro-batch, as the generated job's are.  A Kafka read gets the
  Kafka source's columns (``key``, ``value``, ``topic``, ``partition``, ``offset``,
  ``timestamp``, ``timestampType``), the value the row as JSON, so that the job's own
  ``from_json`` parses it; each static read (``spark.read``) gives the table's rows;
* ``writeStream ... start()`` / ``toTable()`` records the DataFrame and starts nothing.

Then the query's DataFrame, built by the job's own calls, runs with a sink that captures
each batch, and the trace is fed as for any verify.  The job's own sinks, triggers and
checkpoints are not used: the comparison is of what the job computes."""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..compiler.planning.plan import Plan, StreamNode, TableNode
from .spark_driver import (
    Batch,
    RunResult,
    StaticTables,
    StreamDriver,
    session_confs,
    static_frames,
)

_READS = ("load", "json", "csv", "parquet", "orc", "text", "table")


class JobNotFed(Exception):
    """The job read or started something verify cannot feed or follow (a message for the
    user: what, and why)."""


def ddl(node: StreamNode | TableNode) -> str:
    """The node's columns as Spark DDL (what the memory stream's rows are parsed into)."""
    return ", ".join(f"`{c.name.replace('`', '``')}` {c.type}" for c in node.columns)


def _identity(fmt: str | None, path: str | None, options: Mapping[str, str]) -> tuple[str, str]:
    """What names a source: (format, its path, Kafka's topic or a table's name)."""
    lowered = {k.lower(): v for k, v in options.items()}
    kind = (fmt or "").lower()
    if kind == "kafka":
        return kind, lowered.get("subscribe") or lowered.get("topic") or ""
    return kind, str(path if path is not None else lowered.get("path", ""))


@dataclass
class _Reads:
    """The plan's streams and tables, each given to the first read that names it."""

    streams: dict[str, StreamNode]
    tables: dict[str, TableNode]
    given: set[str] = field(default_factory=set)

    def stream_for(self, fmt: str | None, path: str | None, options: Mapping[str, str]) -> str:
        return self._find(self.streams, fmt, path, options, "streaming read")

    def table_for(self, fmt: str | None, path: str | None, options: Mapping[str, str]) -> str:
        return self._find(self.tables, fmt, path, options, "read")

    def _find(
        self,
        nodes: Mapping[str, StreamNode | TableNode],
        fmt: str | None,
        path: str | None,
        options: Mapping[str, str],
        what: str,
    ) -> str:
        wanted = _identity(fmt, path, options)
        same = [
            name
            for name, node in nodes.items()
            if node.source is not None
            and _identity(node.source.format, None, dict(node.source.options)) == wanted
        ]
        for name in same:
            if name not in self.given:
                self.given.add(name)
                return name
        if same:  # read again: the same stream (Spark reads the source twice too)
            return same[0]
        kind, where = wanted
        raise JobNotFed(
            f"the job's {what} of {kind or 'a source'} {where!r} is none of the plan's "
            f"({', '.join(sorted(nodes)) or 'none'})"
        )


class _Stopped:
    """What ``start()`` gives the job: a query that has ended (nothing was started)."""

    id = runId = None
    name = None
    isActive = False
    lastProgress = None
    recentProgress: tuple[Any, ...] = ()

    def awaitTermination(self, timeout: Any = None) -> bool:
        return True

    def processAllAvailable(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def exception(self) -> None:
        return None


class JobAsWritten:
    """``verify``'s runner for a job read from user code (``make_runner``): each call runs
    the job afresh and one of its queries (``root``) over the feeds."""

    def __init__(
        self,
        spark: Any,
        plan: Plan,
        path: str | os.PathLike[str],
        entry: str | None = None,
        tables: StaticTables | None = None,
    ) -> None:
        self.spark = spark
        self.plan = plan
        self.path = os.path.abspath(path)
        self.entry = entry
        self.tables = tables or {}

    @classmethod
    def maker(
        cls, spark: Any, path: str | os.PathLike[str], entry: str | None
    ) -> Callable[..., JobAsWritten]:
        """``make_runner`` for ``verify``: (plan, folder[, tables]) -> a runner."""

        def make(plan: Plan, folder: str, tables: StaticTables | None = None) -> JobAsWritten:
            return cls(spark, plan, path, entry, tables)

        return make

    def __call__(
        self,
        root: str,
        output_mode: str,
        streams: Sequence[str],
        feeds: Sequence[Batch | None],
        confs: Mapping[str, str],
        on_batch: Callable[[int], None] | None = None,
    ) -> RunResult:
        if self.spark is None:  # verify's own session, made before the job runs
            from .spark_driver import get_spark

            self.spark = get_spark(quiet=True)
        session = self.spark.newSession()
        schemas = {s.name: ddl(s) for s in self.plan.streams}
        with session_confs(session, confs), StreamDriver(session, schemas) as driver:
            started = self._run_job(session, driver)
            sinks = [s.relation for s in self.plan.sinks]
            if len(started) != len(sinks):
                raise JobNotFed(
                    f"the job started {len(started)} queries and its plan has {len(sinks)}"
                )
            frame = dict(zip(sinks, started, strict=True)).get(root)
            if frame is None:
                raise JobNotFed(f"the job starts no query of `{root}`")
            driver.start(frame, output_mode)
            for number, feed in enumerate(feeds, 1):
                if feed:
                    driver.feed(feed)
                if on_batch is not None:
                    on_batch(number)
            return driver.result()

    def _run_job(self, session: Any, driver: StreamDriver) -> list[Any]:
        """Run the job with the seams patched; the DataFrame of each query it started."""
        reads = _Reads(
            {s.name: s for s in self.plan.streams}, {t.name: t for t in self.plan.tables}
        )
        inputs = _Inputs(session, driver, self.plan)
        tables = static_frames(session, self.tables)
        started: list[Any] = []
        with _patched(session, reads, inputs, tables, started):
            saved_argv, saved_path = list(sys.argv), list(sys.path)
            sys.argv = [self.path]
            sys.path.insert(0, os.path.dirname(self.path))
            try:
                if self.entry is not None or _defines(self.path, "build"):
                    module = runpy.run_path(self.path, run_name="__sjoin_job__")
                    module[self.entry or "build"](session)
                else:
                    runpy.run_path(self.path, run_name="__main__")
            except SystemExit as stop:
                if stop.code not in (None, 0):
                    raise JobNotFed(f"the job exited with status {stop.code}") from None
            except JobNotFed:
                raise
            except Exception as err:  # the job's own failure, not Spark's verdict on a query
                raise JobNotFed(f"the job raised {type(err).__name__}: {err}") from err
            finally:
                sys.argv, sys.path[:] = saved_argv, saved_path
        return started


def _defines(path: str, name: str) -> bool:
    """Whether the module defines ``name`` at its top level (the capture's rule: a job with
    a ``build(spark)`` is called through it, not run as a script)."""
    from ..compiler.vocabulary.source import entry_defined

    return entry_defined(path, name, one_argument=True)


class _Inputs:
    """The DataFrame each stream's read gives: the driver's parsed memory stream, or for a
    Kafka read, the Kafka source's columns over the same rows."""

    def __init__(self, session: Any, driver: StreamDriver, plan: Plan) -> None:
        self.session = session
        self.driver = driver
        self.nodes = {s.name: s for s in plan.streams}

    def frame(self, name: str) -> Any:
        node = self.nodes[name]
        if node.source is None or node.source.format != "kafka":
            return self.driver.inputs[name]
        from pyspark.sql import DataFrame
        from pyspark.sql import functions as F

        raw = DataFrame(self.driver.memory_stream(name).toDF(), self.session)
        record = node.source.record_columns()  # a column read from the record, not the value
        row = F.from_json(F.col("value"), ddl(node), {"mode": "FAILFAST"})
        stamp = next((c for c, kind in record.items() if kind == "timestamp"), None)
        key = next((c for c, kind in record.items() if kind == "key"), None)
        topic = node.source.option("topic") or ""
        return raw.select(
            (row[key].cast("binary") if key else F.lit(None).cast("binary")).alias("key"),
            F.col("value").cast("binary").alias("value"),
            F.lit(topic).alias("topic"),
            F.lit(0).alias("partition"),
            F.lit(0).cast("long").alias("offset"),
            (row[stamp] if stamp else F.lit(0).cast("timestamp")).alias("timestamp"),
            F.lit(0).alias("timestampType"),
        )


@contextlib.contextmanager
def _patched(
    session: Any,
    reads: _Reads,
    inputs: _Inputs,
    tables: Mapping[str, Any],
    started: list[Any],
) -> Iterator[None]:
    """The three seams of the module's docstring, restored on the way out."""
    from pyspark.sql import DataFrameReader, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

    saved: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, owner.__dict__.get(name)))
        setattr(owner, name, value)

    def remembered(owner: Any) -> None:
        """``format``, ``option``, ``options`` also kept on the Python object."""
        original_format, original_option, original_options = (
            owner.format,
            owner.option,
            owner.options,
        )

        def fmt(self: Any, source: str) -> Any:
            self._sjoin_format = source
            return original_format(self, source)

        def option(self: Any, key: str, value: Any) -> Any:
            self.__dict__.setdefault("_sjoin_options", {})[str(key)] = str(value)
            return original_option(self, key, value)

        def options(self: Any, **given: Any) -> Any:
            self.__dict__.setdefault("_sjoin_options", {}).update(
                {str(k): str(v) for k, v in given.items()}
            )
            return original_options(self, **given)

        patch(owner, "format", fmt)
        patch(owner, "option", option)
        patch(owner, "options", options)

    def stream_read(method: str) -> Any:
        def read(self: Any, path: Any = None, *args: Any, **kwargs: Any) -> Any:
            fmt = getattr(self, "_sjoin_format", None) if method in ("load", "table") else method
            opts = dict(getattr(self, "_sjoin_options", {}))
            where = path if isinstance(path, str) or path is None else str(path)
            return inputs.frame(reads.stream_for(fmt, where, opts))

        return read

    def batch_read(method: str) -> Any:
        def read(self: Any, path: Any = None, *args: Any, **kwargs: Any) -> Any:
            fmt = getattr(self, "_sjoin_format", None) if method in ("load", "table") else method
            opts = dict(getattr(self, "_sjoin_options", {}))
            where = path if isinstance(path, str) or path is None else str(path)
            name = reads.table_for(fmt, where, opts)
            return tables[name]

        return read

    def start(self: Any, *args: Any, **kwargs: Any) -> _Stopped:
        started.append(self._df)
        return _Stopped()

    class _Builder:
        """``SparkSession.builder``: every call but ``config`` and ``getOrCreate`` is kept
        as nothing (the app's name, the master); a SQL conf is set on the session."""

        def __getattr__(self, name: str) -> Any:
            return lambda *args, **kwargs: self

        def config(self, key: Any = None, value: Any = None, **kwargs: Any) -> _Builder:
            given = dict(kwargs.get("map") or {})
            if isinstance(key, str):
                given[key] = value
            for name, setting in given.items():
                # a static conf (spark.jars, spark.driver.memory) cannot change in a running
                # session, and leaves what the query computes as it is
                with contextlib.suppress(Exception):
                    session.conf.set(str(name), str(setting))
            return self

        def getOrCreate(self) -> Any:
            return session

        def create(self) -> Any:
            return session

    try:
        remembered(DataStreamReader)
        remembered(DataFrameReader)
        for method in _READS:
            patch(DataStreamReader, method, stream_read(method))
        for method in _READS:
            patch(DataFrameReader, method, batch_read(method))
        patch(DataStreamWriter, "start", start)
        patch(DataStreamWriter, "toTable", start)
        patch(SparkSession, "builder", _Builder())
        patch(SparkSession, "getActiveSession", classmethod(lambda cls: session))
        patch(SparkSession, "active", classmethod(lambda cls: session))
        yield
    finally:
        for owner, name, value in reversed(saved):
            if value is None:
                with contextlib.suppress(AttributeError):
                    delattr(owner, name)
            else:
                setattr(owner, name, value)
