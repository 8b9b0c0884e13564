"""Run a generated job's Delta sources and sinks for real: a trace written as Delta tables
(delta-rs), replayed into the tables the job reads a version at a time, as ``sjoin run``
replays the same tables (``runtime/columnar/delta.py``).

``write_trace_tables`` writes each stream of a trace as a Delta table: trace batch ``i`` is
version ``i`` of every table (an empty commit where the batch has no row of the stream), so
``sjoin run --trace DIR --delta-at-start 0`` replays exactly the trace's batches for any
query that reads a stream of each batch. ``DeltaRunner`` runs ``verify``'s queries with the
job's own ``read_inputs`` reading copies of those tables into which the versions up to the
job's start are published before it starts, and each later version ``i`` (data files, then
the commit file) under the queries' progress locks, so each round is read as
Spark's Delta source reads a table whose versions arrive while the query runs; the query's
own sink, retargeted to a Delta table (``delta_plan``), runs beside it.

Delta needs a Spark that a Delta release is built on (``compiler/backends/connectors.py``): Spark
4.2
with Delta 4.4.0 is the newest, not the default Spark 4.3, so ``remote_delta_spark`` starts
the driver under the cached Spark 4.2 environment (``spark_env.ensure_env``) with Delta's
jars (``jvm.connector_jars``) and session confs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from ..compiler.backends.pyspark import DELTA_SESSION_CONF
from ..compiler.planning.plan import Plan, SinkNode, StreamNode
from ..compiler.vocabulary.model import Format
from ..compiler.vocabulary.source import Span
from ..runtime import delta_options
from ..runtime.columnar.parquet_out import output_frame
from ..runtime.engine.batches import Rows
from ..runtime.io.files import folder_name
from ..runtime.io.trace import read_trace, schemas_of, table_schemas
from .job_runner import JobRunner

__all__ = [
    "DELTA_SPARK",
    "DeltaRunner",
    "delta_plan",
    "read_table",
    "remote_delta_spark",
    "write_trace_tables",
]

# The newest Spark line a Delta release is built on (Delta 4.4.0): the tests run Delta there.
DELTA_SPARK = "4.2"
# Delta rebuilds a table's state with this many partitions (50 by default): enough locally.
LOCAL_DELTA_CONF = {"spark.databricks.delta.snapshotPartitions": "2"}


def _deltalake() -> Any:
    try:
        import deltalake
    except ImportError:
        raise RuntimeError(
            "writing Delta tables needs delta-rs: pip install 'sjoin[delta]'"
        ) from None
    return deltalake


def write_trace_tables(
    plan: Plan, trace: str | os.PathLike[str] | Iterable[Any], directory: str | os.PathLike[str]
) -> dict[str, Path]:
    """Each stream of ``plan`` as a Delta table ``directory/<stream>/`` (named as
    ``--output-format`` names folders) holding ``trace`` (a JSON-lines trace): trace batch
    ``i`` is version ``i`` of every table, an empty commit where the batch has no row of the
    stream; columns typed as the Parquet output types them."""
    deltalake = _deltalake()
    parsed = read_trace(trace, {**schemas_of(plan), **table_schemas(plan)})  # tables: not written
    tables = {}
    for stream in plan.streams:
        columns = [(c.name, c.type) for c in stream.columns]
        path = Path(directory) / folder_name(stream.name)
        if path.exists():
            raise FileExistsError(f"{path} exists: the trace tables are written anew")
        path.mkdir(parents=True)
        for batch in parsed.batches:
            frame = output_frame(batch.rows.get(stream.name, Rows([])), columns)
            deltalake.write_deltalake(str(path), frame.to_arrow(), mode="append")
        tables[stream.name] = path
    return tables


def read_table(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every row of the Delta table at ``path`` now, as dicts."""
    import polars as pl

    return pl.read_delta(str(path)).to_dicts()


def delta_plan(plan: Plan, directory: str | os.PathLike[str]) -> Plan:
    """``plan`` with every stream read ``from delta`` at ``directory/in/<stream>`` (keeping
    the options of a stream that already reads Delta, but its path or table), and every sink
    written as a Delta table at ``directory/out/<relation>`` (one in update mode, which
    Delta's sink refuses, as ``noop``), checkpointed under ``directory/chk/<relation>``."""
    root = Path(directory)
    nodes = []
    for node in plan.nodes:
        if isinstance(node, StreamNode):
            kept = tuple(
                (k, v)
                for k, v in (node.source.options if node.source is not None else ())
                if node.source is not None
                and node.source.format == "delta"
                and k not in ("path", "table")
            )
            span = node.source.span if node.source is not None else Span(0, 0)
            path = str(root / "in" / folder_name(node.name))
            source = Format("delta", (("path", path), *kept), span)
            node = dataclasses.replace(node, source=source)
        nodes.append(node)
    sinks = []
    for sink in plan.sinks:
        folder = folder_name(sink.relation)
        if sink.mode == "update":
            target = Format("noop", (), sink.target.span)
        else:
            target = Format("delta", (("path", str(root / "out" / folder)),), sink.target.span)
        sinks.append(SinkNode(sink.relation, target, str(root / "chk" / folder), sink.mode))
    return dataclasses.replace(plan, nodes=tuple(nodes), sinks=tuple(sinks))


def remote_delta_spark(
    say: Callable[[str], None] = lambda text: None, *, verbose: bool = False
) -> Any:
    """The test driver in a child process under the cached Spark ``DELTA_SPARK``
    environment (made on first use: a few minutes), with Delta's jars and session confs.
    Raises ``spark_env.EnvError``, ``jvm.JarsUnavailable`` or ``SparkUnavailable``."""
    from .jars import connector_jars
    from .spark_env import RemoteSpark, ensure_env, pyspark_jars_dir, pyspark_version

    python = ensure_env(DELTA_SPARK, say)
    version = pyspark_version(python) or f"{DELTA_SPARK}.0"
    jars = connector_jars(version, ["delta"], pyspark_jars_dir(python), say)
    conf = {**DELTA_SESSION_CONF, **LOCAL_DELTA_CONF}
    return RemoteSpark(python, verbose=verbose, jars=[str(p) for p in jars.paths], conf=conf)


class DeltaRunner(JobRunner[tuple[str, Path]]):
    """Runs each query of a plan's generated job on ``spark`` (a session with Delta, or a
    ``RemoteSpark`` made by ``remote_delta_spark``) with its sources reading the Delta tables
    under ``staged`` (``write_trace_tables``), a version per trace batch (``verify``'s
    ``make_runner``). ``at_start``: each table's version when the job starts, as
    ``sjoin run --delta-at-start`` takes it (default: its latest): the versions up to it
    are published before the job starts, each later one while the queries wait. ``runs``
    keeps each call's root and folder, where ``out/<relation>`` is the Delta table its sink
    wrote."""

    def __init__(
        self,
        spark: Any,
        staged: str | os.PathLike[str],
        directory: str | os.PathLike[str] | None = None,
        *,
        with_sinks: bool = True,
        at_start: Mapping[str, int | None] | None = None,
    ) -> None:
        super().__init__(spark, directory, with_sinks=with_sinks)
        self.at_start: Mapping[str, int | None] = at_start or {}
        self.staged = Path(staged)

    def versions(self) -> list[int]:
        """The table version of each trace batch of the staged tables."""
        return [batch.value for batch in self._trace().batches]

    def _trace(self) -> Any:
        from ..runtime.columnar.delta import read_delta_trace

        assert self.plan is not None
        return read_delta_trace(
            self.staged,
            schemas_of(self.plan),
            delta_options(self.plan),
            at_start=self.at_start,
        )

    def starts(self) -> dict[str, int]:
        """Each stream's table version when the job starts (``at_start``, as the replay
        takes it: a version past a table's latest is its latest)."""
        from ..runtime.columnar.delta import latest_version

        assert self.plan is not None
        out = {}
        for stream in self.plan.streams:
            latest = latest_version(self.staged / folder_name(stream.name))
            asked = self.at_start.get(stream.name, self.at_start.get("*"))
            out[stream.name] = latest if asked is None else min(asked, latest)
        return out

    def _prepare(self, root: str, streams: list[str], feeds: list[Any], folder: Path) -> Plan:
        assert self.plan is not None
        folder.mkdir(parents=True, exist_ok=True)
        plan = delta_plan(self.plan, folder)
        self.runs.append((root, folder))
        return plan

    @contextlib.contextmanager
    def _feeding(
        self, plan: Plan, root: str, streams: list[str], feeds: list[Any], folder: Path
    ) -> Iterator[tuple[Mapping[str, Any], Callable[..., Any]]]:
        from .spark_driver import run_delta_job_query

        delta = {
            "tables": {
                s.name: [
                    str(self.staged / folder_name(s.name)),
                    str(folder / "in" / folder_name(s.name)),
                ]
                for s in plan.streams
            },
            "versions": self.versions(),
            "starts": self.starts(),
            "sinks": [root]
            if self.with_sinks and any(s.relation == root for s in plan.sinks)
            else [],
        }
        yield {"delta": delta}, partial(run_delta_job_query, delta=delta)
