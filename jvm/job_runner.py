"""What runs one query of a plan's generated job on Spark with the job's own sources
(``verify``'s ``make_runner``; a ``SparkRunner`` once ``for_plan`` has its plan): the
protocol ``KafkaRunner`` and ``DeltaRunner`` share.  Each call gets a folder of its own,
``run-N`` under the runner's directory, where the job for that call's plan is written and
run in the child process of a ``RemoteSpark``, or loaded and run on this process's session.
A subclass says how its sources are fed: the plan of one call (``_prepare``), and while
the query runs (``_feeding``) the options of the child's driver call and the driver call
that runs it here.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from ..compiler.planning.plan import Plan

if TYPE_CHECKING:
    from .spark_driver import StaticTables

Record = TypeVar("Record")


class JobRunner(ABC, Generic[Record]):
    """``spark`` is a session (with the connector the sources need) or a ``RemoteSpark``;
    ``directory`` (when given) holds every call's folder, to read the sinks back after the
    run; ``with_sinks``: the job's real sinks of the query's root run beside the captured
    output.  ``runs`` keeps a ``Record`` per call (its root, folder, ...)."""

    def __init__(
        self,
        spark: Any,
        directory: str | os.PathLike[str] | None = None,
        *,
        with_sinks: bool = True,
    ) -> None:
        self.spark = spark
        self._fixed = Path(directory) if directory is not None else None
        self.directory = self._fixed or Path(".")
        self.with_sinks = with_sinks
        self.plan: Plan | None = None
        self.tables: StaticTables = {}
        self.runs: list[Record] = []

    def for_plan(self, plan: Plan, directory: str, tables: StaticTables | None = None) -> Self:
        """This runner for ``plan``'s job, its files in ``directory`` (``verify``'s
        ``make_runner``; a folder given at creation wins, to read the sinks afterwards);
        ``tables``: the job's static tables, given to its ``build`` in place of its own
        reads of them (``verify.static_tables``)."""
        self.plan = plan
        self.directory = self._fixed or Path(directory)
        self.tables = dict(tables or {})
        return self

    def __call__(
        self,
        root: str,
        mode: str,
        streams: list[str],
        feeds: list[Any],
        confs: dict[str, str],
        on_batch: Callable[[int], None] | None = None,
    ) -> Any:
        """Run the query rooted at ``root`` (output ``mode``) over ``feeds`` (the rows of
        each trace batch by stream, or None) with ``confs`` set; ``on_batch(n)`` after the
        n-th trace batch. A ``spark_driver.RunResult``."""
        from .spark_env import RemoteSpark
        from .verify import load_job, write_job

        if self.plan is None:
            raise RuntimeError(f"{type(self).__name__}.for_plan() first")
        folder = self.directory / f"run-{len(self.runs)}"
        plan = self._prepare(root, streams, feeds, folder)
        with self._feeding(plan, root, streams, feeds, folder) as (remote, here):
            if isinstance(self.spark, RemoteSpark):
                job_file = str(write_job(plan, str(folder)))
                args = (job_file, root, mode, streams, feeds, confs, on_batch)
                return self.spark.run_query(*args, **remote, tables=self.tables)
            job = load_job(plan, str(folder))
            return here(
                self.spark, job, root, mode, feeds, confs, on_batch=on_batch, tables=self.tables
            )

    @abstractmethod
    def _prepare(self, root: str, streams: list[str], feeds: list[Any], folder: Path) -> Plan:
        """Check what the call feeds, record the call in ``runs`` and return the plan
        whose job it runs (its sources and sinks where this call reads and writes them)."""

    @abstractmethod
    def _feeding(
        self, plan: Plan, root: str, streams: list[str], feeds: list[Any], folder: Path
    ) -> AbstractContextManager[tuple[Mapping[str, Any], Callable[..., Any]]]:
        """While the query runs: the sources made ready to be fed (``folder`` made), and
        how: the keyword arguments of ``RemoteSpark.run_query`` that feed them, and the
        ``spark_driver`` runner that runs the query on this process's session (called as
        ``here(spark, job, root, mode, feeds, confs, on_batch=..., tables=...)``)."""
