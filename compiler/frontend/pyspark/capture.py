"""The child process that runs a user's PySpark job offline and hands back what it built.

``python -m sjoin.compiler.frontend.pyspark.capture JOB [ENTRY]`` installs the offline
session (``session.py``) and the site hooks (``sites.py``), then runs JOB with ``runpy``:
its ``build(spark)`` (or the ENTRY function) when it defines one, else the module as a
script (``run_name="__main__"``).  It prints one JSON object on the stdout it was given: each
captured query (the ``WriteStreamOperationStart`` command as proto JSON, and where it was
started), each temporary view it made (in order), the sites of every relation, the confs
the job set, the calls that needed a server and the exception the job raised, if any.

A child because the patches are process-global and a job has side effects: ``sys.exit``,
atexit hooks, modules it imports, prints (sent to stderr here, so that stdout is ours).  It
ends with ``os._exit`` once the JSON is written, so no atexit hook of the job's runs.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
from typing import Any, TextIO

from ...vocabulary.source import entry_defined


def _cannot_read() -> str | None:
    """Why this Python cannot read a job, or None: pyspark 4 with its Spark Connect client
    (pandas, pyarrow, grpcio: `pyspark[connect]`, the `spark` extra) must import."""
    try:
        import pyspark

        from . import session, sites  # noqa: F401 - the Connect client and its dependencies
    except ImportError as err:  # (pyspark's own PySparkImportError too)
        return f"{type(err).__name__}: {err}"
    version = str(getattr(pyspark, "__version__", ""))
    major = version.partition(".")[0]
    if not major.isdigit() or int(major) < 4:
        return f"pyspark {version or '(no version)'} is installed, and jobs are read with 4.x"
    return None


def capture(path: str, entry: str | None) -> dict[str, Any]:
    """Run the job at ``path`` offline; what it built, as JSON data (``{"missing": why}``
    when pyspark with its Connect client cannot be imported here: the job is not run)."""
    missing = _cannot_read()
    if missing is not None:
        return {"missing": missing}
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]

    from . import session, sites

    state = session.install()
    sites.install()
    path = os.path.abspath(path)
    named = entry if entry is not None else "build"
    called = entry_defined(path, named, one_argument=entry is None)
    error: dict[str, Any] | None = None
    if entry is not None and not called:
        error = {
            "kind": "entry",
            "message": f"{os.path.basename(path)} defines no function `{entry}` at its top level",
            "sites": [],
        }
    else:
        sys.argv = [path]
        sys.path.insert(0, os.path.dirname(path))
        try:
            if called:
                module = runpy.run_path(path, run_name="__sjoin_job__")
                module[named](session.offline_session())
            else:
                runpy.run_path(path, run_name="__main__")
        except SystemExit as stop:
            if stop.code not in (None, 0):
                error = _error(stop, f"the job exited with status {stop.code}")
        except session.NeedsServer:
            pass  # recorded in state.refused, with its sites
        except BaseException as err:
            error = _error(err, f"{type(err).__name__}: {err}")
    return {
        "entry": named if called else None,
        "queries": [
            {
                "command": MessageToDict(q.command, preserving_proto_field_name=True),
                "sites": [s.to_json() for s in q.sites],
            }
            for q in state.queries
        ],
        "plan_sites": {
            str(pid): [s.to_json() for s in found] for pid, found in sites.PLAN_SITES.items()
        },
        "views": [
            {
                "name": v.command.name,
                "replace": v.command.replace,
                "is_global": v.command.is_global,
                "input": MessageToDict(v.command.input, preserving_proto_field_name=True),
                "next_plan_id": v.next_plan_id,
                "sites": [s.to_json() for s in v.sites],
            }
            for v in state.views
        ],
        "conf": dict(state.conf),
        "refused": [
            {"what": r.what, "sites": [s.to_json() for s in r.sites]} for r in state.refused
        ],
        "error": error,
    }


def _error(err: BaseException, message: str) -> dict[str, Any]:
    from .session import stack_sites

    stack = traceback.extract_tb(err.__traceback__)
    return {
        "kind": "exception",
        "message": message,
        "sites": [s.to_json() for s in stack_sites(stack)],
    }


def main(argv: list[str]) -> None:
    out: TextIO = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the job's prints go to stderr; stdout carries the JSON alone
    sys.stdout = sys.stderr
    try:
        result = capture(argv[0], argv[1] if len(argv) > 1 else None)
    except BaseException as err:
        result = {"fatal": f"{type(err).__name__}: {err}"}
    out.write(json.dumps(result))
    out.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
