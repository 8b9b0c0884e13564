"""PySpark jobs as input (docs/pyspark.md): a Python module that builds streaming
DataFrames, read without a JVM and lowered into the .sjoin AST the binder reads.

``read_job`` runs the job in a child process (``capture.py``: the offline Spark Connect
session of ``session.py`` and the site hooks of ``sites.py``) and reads back what it built;
``lower.py`` (with ``exprs.py``) makes the AST of it.  Only the child imports pyspark: the
parent reads the plans as the proto JSON the child prints, so `sjoin check` of a .sjoin spec
never loads this package and a job's check pays pyspark's import once, in the child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .sites import Site

# How long a job may take to build its DataFrames offline (pyspark's import is most of it).
TIMEOUT_SECONDS = 120.0


@dataclass
class Refusal:
    """A call of the job that needs a Spark server (``df.columns``, a batch action)."""

    what: str
    sites: list[Site]


@dataclass
class JobFailure:
    """The job raised (or exited with a status, or timed out, or names no such entry)."""

    kind: str  # "exception", "entry", "timeout", "child", "pyspark" (it cannot be imported)
    message: str
    sites: list[Site] = field(default_factory=list)


@dataclass
class TempView:
    """A temporary view the job made (``createOrReplaceTempView(name)`` and its kin): its
    relation (proto JSON), whether it replaced one, whether it is global (read as
    ``global_temp.name``), where it was made, and the plan_id the next relation took then
    (a ``spark.sql`` relation of a larger plan_id was built after it, and reads it)."""

    name: str
    relation: dict[str, Any]
    replace: bool
    is_global: bool
    sites: list[Site]
    next_plan_id: int


@dataclass
class CapturedJob:
    """What a job built: each started query's command (proto JSON of
    ``WriteStreamOperationStart``) with the sites of its start, the sites of each
    relation by plan_id, the confs it set, its refusals and its failure, if any, and the
    temporary views it made, in order."""

    path: str
    queries: list[tuple[dict[str, Any], list[Site]]]
    plan_sites: dict[int, list[Site]]
    conf: dict[str, str]
    refused: list[Refusal]
    failure: JobFailure | None
    views: list[TempView] = field(default_factory=list)


def read_job(path: str | Path, entry: str | None = None) -> CapturedJob:
    """Run the job at ``path`` in a child process (same interpreter) and read what it
    built.  Never raises for what the job does."""
    path = os.path.abspath(path)
    command = [sys.executable, "-m", f"{__name__}.capture", path]
    if entry is not None:
        command.append(entry)
    env = dict(os.environ)
    env.pop("SPARK_REMOTE", None)
    env.setdefault("PYTHONHASHSEED", "0")
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        failure = JobFailure(
            "timeout", f"the job did not finish building its queries in {TIMEOUT_SECONDS:.0f} s"
        )
        return CapturedJob(path, [], {}, {}, [], failure)
    try:
        data = json.loads(done.stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        failure = JobFailure(
            "child",
            "the job could not be run offline"
            + (f": {tail[0]}" if tail else f" (status {done.returncode})"),
        )
        return CapturedJob(path, [], {}, {}, [], failure)
    if "missing" in data:
        failure = JobFailure(
            "pyspark",
            "reading a PySpark job needs pyspark 4 with its Spark Connect client, which this "
            f"Python cannot import ({data['missing']}): install `sjoin[spark]`",
        )
        return CapturedJob(path, [], {}, {}, [], failure)
    if "fatal" in data:
        return CapturedJob(path, [], {}, {}, [], JobFailure("child", str(data["fatal"])))
    failed: JobFailure | None = None
    if data.get("error"):
        err = data["error"]
        failed = JobFailure(
            str(err["kind"]), str(err["message"]), [Site.from_json(s) for s in err["sites"]]
        )
    return CapturedJob(
        path,
        [(q["command"], [Site.from_json(s) for s in q["sites"]]) for q in data["queries"]],
        {int(k): [Site.from_json(s) for s in v] for k, v in data["plan_sites"].items()},
        {str(k): str(v) for k, v in data["conf"].items()},
        [Refusal(r["what"], [Site.from_json(s) for s in r["sites"]]) for r in data["refused"]],
        failed,
        [
            TempView(
                str(v["name"]),
                v["input"],
                bool(v.get("replace")),
                bool(v.get("is_global")),
                [Site.from_json(s) for s in v["sites"]],
                int(v["next_plan_id"]),
            )
            for v in data.get("views", [])
        ],
    )
