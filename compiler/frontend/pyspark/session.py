"""An offline Spark Connect session: the PySpark Connect client builds a job's plans in
Python, so a job can be read with no server and no JVM (docs/pyspark.md).

Runs only in the child process of ``capture.py``: the patches are process-global.  The
client makes an RPC for a few calls a job makes while it builds its DataFrames (a conf set
by ``builder.config``, the query start, ``awaitTermination``); each is answered here, in
memory, or refused with ``NeedsServer`` (what needs Spark to answer: ``df.columns``,
``df.schema``, a batch action).  A refusal keeps the user's stack, so that it is reported at
the job's own line.

The pyspark internals patched here are private; each is named in ``PATCHED`` and tested in
tests/compiler/frontend/pyspark/test_hooks.py, so that a pyspark upgrade that moves one
fails there, loudly, not in a user's check.
"""

from __future__ import annotations

import os
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import session as classic
from pyspark.sql.connect import session as connect
from pyspark.sql.connect.client import core
from pyspark.sql.connect.proto import base_pb2, commands_pb2, relations_pb2

from .sites import Site, user_frames

# The private pyspark attributes this module replaces (owner, attribute).
PATCHED: tuple[tuple[Any, str], ...] = (
    (core.SparkConnectClient, "config"),
    (core.SparkConnectClient, "_analyze"),
    (core.SparkConnectClient, "execute_command"),
    (core.SparkConnectClient, "execute_command_as_iterator"),
    (core.SparkConnectClient, "_execute_and_fetch"),
    (core.SparkConnectClient, "_execute_and_fetch_as_iterator"),
    (core.SparkConnectClient, "_execute"),
    (core.SparkConnectClient, "release_session"),
    (core.SparkConnectClient, "close"),
    (core.SparkConnectClient, "_cleanup_ml_cache"),
    (classic.SparkSession.Builder, "getOrCreate"),
    (classic.SparkSession.Builder, "create"),
    (classic.SparkSession.Builder, "_validate_startup_urls"),
    (connect.SparkSession.Builder, "getOrCreate"),
)
# (``connect.SparkSession.sparkContext`` is added: a Connect session has none)

OFFLINE_URL = "sc://offline.invalid:1"
# builder options that would pick a master or a server: the offline session is both
_DROPPED_OPTIONS = ("spark.master", "spark.remote", "spark.api.mode")


class NeedsServer(RuntimeError):
    """A call of the job that only a Spark server could answer (``what``: the RPC), raised
    where the job made it; ``sites`` is the job's stack there, innermost first."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} needs a Spark Connect server")
        self.what = what
        self.sites: list[Site] = user_frames()


@dataclass
class CapturedQuery:
    """A ``writeStream ... start()`` / ``toTable()`` the job made: the command the client
    would have sent (its plan and sink), and where the job started it."""

    command: commands_pb2.WriteStreamOperationStart
    sites: list[Site]


@dataclass
class CapturedView:
    """A ``createOrReplaceTempView`` / ``createTempView`` / ``create[OrReplace]GlobalTempView``
    the job made (the Connect ``CreateDataFrameViewCommand``: its name, relation, replace and
    is_global), where it made it, and ``next_plan_id``: the plan_id the next relation built
    takes, so that a ``spark.sql`` relation (a larger plan_id) reads this definition, and one
    built before it (a smaller one) does not."""

    command: commands_pb2.CreateDataFrameViewCommand
    sites: list[Site]
    next_plan_id: int


@dataclass
class OfflineState:
    """What the job did to the offline session, for ``capture.py`` to hand back."""

    conf: dict[str, str] = field(default_factory=dict)
    queries: list[CapturedQuery] = field(default_factory=list)
    refused: list[NeedsServer] = field(default_factory=list)
    views: list[CapturedView] = field(default_factory=list)


STATE = OfflineState()


def _config(self: Any, op: base_pb2.ConfigRequest.Operation) -> Any:
    """Every conf operation on the in-memory conf: ``builder.config``, ``spark.conf``."""
    conf = STATE.conf
    kind = op.WhichOneof("op_type")
    pairs: list[tuple[str, str | None]] = []
    if kind == "set":
        for p in op.set.pairs:
            conf[p.key] = p.value
    elif kind == "get":
        pairs = [(k, conf.get(k)) for k in op.get.keys]
    elif kind == "get_with_default":
        pairs = [
            (p.key, conf.get(p.key, p.value if p.HasField("value") else None))
            for p in op.get_with_default.pairs
        ]
    elif kind == "get_option":
        pairs = [(k, conf.get(k)) for k in op.get_option.keys]
    elif kind == "get_all":
        prefix = op.get_all.prefix if op.get_all.HasField("prefix") else ""
        pairs = [(k, v) for k, v in conf.items() if k.startswith(prefix)]
    elif kind == "unset":
        for k in op.unset.keys:
            conf.pop(k, None)
    elif kind == "is_modifiable":
        pairs = [(k, "true") for k in op.is_modifiable.keys]
    return core.ConfigResult(pairs=pairs, warnings=[])


def _refuse(what: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = what
        if what == "AnalyzePlan":
            name = f"AnalyzePlan.{args[0] if args else kwargs.get('method')}"
        err = NeedsServer(name)
        STATE.refused.append(err)
        raise err

    return method


def _execute_command(self: Any, command: commands_pb2.Command, observations: Any = None) -> Any:
    """The query start is recorded and answered with a fresh query id, so that the job goes
    on (a second query, ``awaitTermination``); waits and status are no-ops; a SQL query is
    answered with its relation, as a server does; a temporary view is recorded
    (``_create_view``); anything else needs a server."""
    kind = command.WhichOneof("command_type")
    if kind == "write_stream_operation_start":
        start = commands_pb2.WriteStreamOperationStart()
        start.CopyFrom(command.write_stream_operation_start)
        STATE.queries.append(CapturedQuery(start, user_frames()))
        res = commands_pb2.WriteStreamOperationStartResult()
        res.query_id.id = str(uuid.uuid4())
        res.query_id.run_id = str(uuid.uuid4())
        res.name = start.query_name
        return None, {"write_stream_operation_start_result": res}, None
    if kind == "create_dataframe_view":
        _create_view(command.create_dataframe_view)
        return None, {}, None
    if kind == "streaming_query_command":
        qres = commands_pb2.StreamingQueryCommandResult()
        qres.query_id.CopyFrom(command.streaming_query_command.query_id)
        which = command.streaming_query_command.WhichOneof("command")
        if which == "await_termination":
            qres.await_termination.terminated = True
        elif which == "status":
            qres.status.is_active = False
        return None, {"streaming_query_command_result": qres}, None
    if kind == "streaming_query_manager_command":
        mres = commands_pb2.StreamingQueryManagerCommandResult()
        which_manager = command.streaming_query_manager_command.WhichOneof("command")
        if which_manager == "await_any_termination":
            mres.await_any_termination.terminated = True
        elif which_manager == "active":
            mres.active.SetInParent()
        return None, {"streaming_query_manager_command_result": mres}, None
    if kind == "sql_command":
        sc = command.sql_command
        rel = relations_pb2.Relation()
        if sc.HasField("input"):
            rel.CopyFrom(sc.input)
        else:
            rel.sql.query = sc.sql
        return None, {"sql_command_result": rel}, None
    err = NeedsServer(f"Command.{kind}")
    STATE.refused.append(err)
    raise err


def _create_view(made: commands_pb2.CreateDataFrameViewCommand) -> None:
    """A temporary view, answered in memory: recorded in order.  Without replace, a name a
    view of the same scope already has is Spark's error, raised at the job's call."""
    from .sites import PLAN_SITES

    view = commands_pb2.CreateDataFrameViewCommand()
    view.CopyFrom(made)
    if not view.replace and any(
        v.command.name.lower() == view.name.lower() and v.command.is_global == view.is_global
        for v in STATE.views
    ):
        # Spark's error (an AnalysisException, error-conditions.json of Spark 4.3), raised
        # where the job made the view
        named = f"`global_temp`.`{view.name}`" if view.is_global else f"`{view.name}`"
        raise AnalysisException(
            message=f"[TEMP_TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create the temporary view "
            f"{named} because it already exists. Choose a different name, drop or replace the "
            "existing view. SQLSTATE: 42P07"
        )
    next_plan_id = max(PLAN_SITES, default=-1) + 1
    STATE.views.append(CapturedView(view, user_frames(), next_plan_id))


def _no_op(self: Any, *args: Any, **kwargs: Any) -> None:
    return None


class OfflineSparkContext:
    """Stands in for ``spark.sparkContext`` (a Connect session has none): the calls jobs
    make at start-up are accepted, anything else needs a server."""

    def setLogLevel(self, level: str) -> None:
        pass

    def setCheckpointDir(self, directory: str) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        err = NeedsServer(f"sparkContext.{name}")
        STATE.refused.append(err)
        raise err


def _offline_get_or_create(builder: Any) -> Any:
    """Any builder (classic or Connect, with a master, a remote or neither) -> the one
    offline Connect session, with the builder's own options (its confs)."""
    options = {k: v for k, v in builder._options.items() if k not in _DROPPED_OPTIONS}
    return connect.SparkSession.builder.remote(OFFLINE_URL).config(map=options).getOrCreate()


def install() -> OfflineState:
    """Patch the client and the builders for the rest of the process (the child of
    ``capture.py``), and make ``pyspark.sql.functions`` build Connect columns
    (``SPARK_CONNECT_MODE_ENABLED``; ``SPARK_REMOTE`` is unset, since a job's own
    ``.master(...)`` would clash with it)."""
    client = core.SparkConnectClient
    patches: list[tuple[Any, str, Any]] = [
        (client, "config", _config),
        (client, "_analyze", _refuse("AnalyzePlan")),
        (client, "execute_command", _execute_command),
        (client, "execute_command_as_iterator", _refuse("ExecutePlan")),
        (client, "_execute_and_fetch", _refuse("ExecutePlan")),
        (client, "_execute_and_fetch_as_iterator", _refuse("ExecutePlan")),
        (client, "_execute", _refuse("ExecutePlan")),
        # the atexit hook (_on_exit -> _cleanup_ml_cache -> execute_command) would otherwise
        # retry a server that is not there when the interpreter exits
        (client, "release_session", _no_op),
        (client, "close", _no_op),
        (client, "_cleanup_ml_cache", _no_op),
        (connect.SparkSession, "sparkContext", property(lambda self: OfflineSparkContext())),
        (classic.SparkSession.Builder, "_validate_startup_urls", _no_op),
        (classic.SparkSession.Builder, "getOrCreate", _offline_get_or_create),
        (classic.SparkSession.Builder, "create", _offline_get_or_create),
    ]
    if hasattr(client, "_on_exit"):
        patches.append((client, "_on_exit", _no_op))
    original = connect.SparkSession.Builder.getOrCreate

    def connect_get_or_create(self: Any) -> Any:
        """A job's own ``.remote("sc://prod:15002")`` lands offline too."""
        if self._options.get("spark.remote") != OFFLINE_URL:
            return _offline_get_or_create(self)
        return original(self)

    patches.append((connect.SparkSession.Builder, "getOrCreate", connect_get_or_create))
    for owner, name, value in patches:
        setattr(owner, name, value)
    os.environ.pop("SPARK_REMOTE", None)
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    return STATE


def offline_session() -> Any:
    """The offline session a ``build(spark)`` entry point is called with."""
    return connect.SparkSession.builder.remote(OFFLINE_URL).getOrCreate()


def stack_sites(tb: traceback.StackSummary) -> list[Site]:
    """The job's frames of a traceback, innermost first (an exception in the job)."""
    from .sites import is_user

    return [
        Site(os.path.abspath(f.filename), f.lineno or 0, f.colno, f.end_lineno, f.end_colno, f.name)
        for f in reversed(tb)
        if is_user(f.filename)
    ]
