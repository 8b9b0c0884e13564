"""A streaming DataFrame handed over in process (``sjoin.check_dataframe(df)``, the pytest
helpers ``sjoin_check`` and ``sjoin_plan``; docs/pyspark.md, "In your own tests") as the
``CapturedJob`` that ``lower.py`` reads for a job file.

- A Spark Connect DataFrame: its relation's proto, built by the client in Python
  (``df._plan.plan(client)``: no server is asked);
- a classic DataFrame: its analyzed Catalyst plan, translated by ``catalyst.py``.

The DataFrame is one query with no sink (it is not started): its output mode is the
planner's default (append).  There is no job file: every relation is placed at the line
that called ``check_dataframe`` (the caller's file is the source), the DataFrame is named
after the caller's variable that holds it (else ``df``, or ``name``), and every other
relation after the caller's variable holding a DataFrame of that plan, else after its kind
(``stream``, ``stream_2``).

No pyspark import: the DataFrame is read through its own attributes.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any

from ...diagnostics.diagnostics import Diagnostics
from .. import ast
from . import CapturedJob
from .lower import Lowering, Refused, _children, _is_kafka_step, _kind, _plan_id
from .sites import Site

_SJOIN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))) + os.sep
_SKIPPED_MODULES = ("pyspark", "py4j", "_pytest", "pluggy", "pytest")
NO_FILE = "<dataframe>"  # the source's path when the caller has no file


@dataclass
class DataFrameInput:
    """What ``read_dataframe`` made of a DataFrame: the job to lower (None: it could not be
    read, ``failure`` says why), the caller's file and text (the diagnostics' source), the
    call's site and the relation names."""

    job: CapturedJob | None
    path: str
    text: str
    site: Site | None
    names: dict[int, str]
    root: str
    failure: str | None = None


def _skipped_dirs() -> tuple[str, ...]:
    dirs = [_SJOIN, os.path.dirname(os.__file__) + os.sep]
    for name in _SKIPPED_MODULES:
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.append(os.path.dirname(str(module.__file__)) + os.sep)
    return tuple(dirs)


def caller_frame() -> FrameType | None:
    """The innermost frame outside sjoin, pyspark, pytest and the standard library: the
    user's call of ``check_dataframe`` (or of a pytest helper)."""
    skipped = _skipped_dirs()
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        # a notebook's cell or `python -c` ("<...>") is the user's code too: no file to show
        if name.startswith("<") or not os.path.abspath(name).startswith(skipped):
            return frame
        frame = frame.f_back
    return None


def _site(frame: FrameType | None) -> Site | None:
    if frame is None:
        return None
    index = frame.f_lasti // 2  # one position per 2-byte code unit (3.11+)
    position = next((p for i, p in enumerate(frame.f_code.co_positions()) if i == index), None)
    line, end_line, col, end_col = position or (frame.f_lineno, None, None, None)
    return Site(
        os.path.abspath(frame.f_code.co_filename),
        line or frame.f_lineno,
        col,
        end_line,
        end_col,
        frame.f_code.co_name,
    )


def is_classic(df: Any) -> bool:
    return hasattr(df, "_jdf")


def read_dataframe(df: Any, name: str | None, frame: FrameType | None) -> DataFrameInput:
    """``df`` (a Connect or classic DataFrame) called from ``frame``, as a job with one
    query and no sink.  Never raises for what the DataFrame is."""
    site = _site(frame)
    local = dict(frame.f_locals) if frame is not None else {}
    root = name or next((k for k, v in local.items() if v is df), None) or "df"
    path = site.file if site is not None else NO_FILE
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        # no file to show (a notebook's cell, `python -c`): the source is the DataFrame's
        # name, and every diagnostic underlines it
        path, text = NO_FILE, root + "\n"
        site = Site(os.path.abspath(NO_FILE), 1, 0, 1, len(root.encode("utf-8")), "")
    try:
        if is_classic(df):
            relation, names = _classic(df, local)
        elif hasattr(df, "_plan") and hasattr(df, "_session"):
            relation, names = _connect(df, local)
        else:
            failure = f"a `{type(df).__name__}` object is not a PySpark DataFrame"
            return DataFrameInput(None, path, text, site, {}, root, failure)
    except Exception as err:  # the DataFrame's plan could not be read
        failure = f"the DataFrame's plan could not be read: {type(err).__name__}: {err}"
        return DataFrameInput(None, path, text, site, {}, root, failure)
    top = _plan_id(relation)
    if top is not None:
        names[top] = root
    command = {"input": relation}
    sites = [site] if site is not None else []
    plan_sites = {pid: list(sites) for pid in _all_ids(relation)}
    job = CapturedJob(path, [(command, sites)], plan_sites, {}, [], None)
    return DataFrameInput(job, path, text, site, names, root)


def _connect(df: Any, local: dict[str, Any]) -> tuple[dict[str, Any], dict[int, str]]:
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

    proto = df._plan.plan(df._session.client)
    relation: dict[str, Any] = MessageToDict(proto, preserving_proto_field_name=True)
    names: dict[int, str] = {}
    for key, value in local.items():
        plan = getattr(value, "_plan", None)
        pid = getattr(plan, "_plan_id", None)
        if isinstance(pid, int) and hasattr(value, "_session") and not key.startswith("_"):
            names.setdefault(pid, key)
    return relation, names


def _classic(df: Any, local: dict[str, Any]) -> tuple[dict[str, Any], dict[int, str]]:
    from .catalyst import Translator

    plans = [
        (key, value._jdf.queryExecution().analyzed())
        for key, value in local.items()
        if is_classic(value) and value is not df and not key.startswith("_")
    ]

    def named(node: Any) -> str | None:
        return next((key for key, plan in plans if node.equals(plan)), None)

    translator = Translator(df.sparkSession._jvm, named)
    relation = translator.relation(df._jdf.queryExecution().analyzed())
    return relation, translator.names


def _all_ids(relation: dict[str, Any]) -> list[int]:
    found, todo = [], [relation]
    while todo:
        rel = todo.pop()
        pid = _plan_id(rel)
        if pid is not None:
            found.append(pid)
        todo += _children(rel)
    return found


class DataFrameLowering(Lowering):
    """``Lowering`` of a DataFrame: names from the caller's variables, no sink."""

    def __init__(self, given: DataFrameInput, diags: Diagnostics) -> None:
        assert given.job is not None
        self.names = dict(given.names)
        for command, _ in given.job.queries:
            self._inherit(command["input"], None)
        super().__init__(given.job, given.text, diags)

    def _inherit(self, rel: dict[str, Any], name: str | None) -> None:
        """A watermark or Kafka's value parsing is part of the stream it reads (the
        lowering merges them): an unnamed relation below one takes its name, as every
        relation of a job's ``name = spark.readStream...`` statement takes ``name``."""
        pid = _plan_id(rel)
        own = self.names.get(pid) if pid is not None else None
        if own is None and name is not None and pid is not None:
            self.names[pid] = own = name
        kind = _kind(rel)
        merged = kind == "with_watermark" or (kind == "project" and _is_kafka_step(rel[kind]))
        for child in _children(rel):
            self._inherit(child, own if merged else None)

    def assigned_name(self, rel: dict[str, Any]) -> str | None:
        pid = _plan_id(rel)
        return self.names.get(pid) if pid is not None else None

    def fresh(self, rel: dict[str, Any], kind: str) -> str:
        """An unnamed relation is named after its kind (``stream``, ``stream_2``): every
        relation has the caller's line, and a snapshot must not change with it."""
        pid = _plan_id(rel)
        base = (self.owner.get(pid) if pid is not None else None) or kind
        name, n = base, 2
        while name in self.taken:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name

    def sink(self, command: dict[str, Any], sites: list[Site]) -> None:
        try:
            self.reserve(command["input"])
            self.lower(command["input"])
        except Refused:
            return


def lower_dataframe(given: DataFrameInput, diags: Diagnostics) -> ast.SpecFile:
    return DataFrameLowering(given, diags).spec()
