"""``--checkpoint DIR``: the run's state after each micro-batch, so that a killed run resumes
where it stopped and its output ends up exactly as a clean run's.

After computing batch k the runner *commits* one snapshot (``state.pkl``: every operator's
state, the watermarks, batch ids, the trace position, batch k's output and the size each
output file had before batch k) by writing a temporary file, fsync-ing it and
``os.replace``-ing it over the old one; only then does it append batch k's lines to the
output files.  A restart truncates each output file back to the recorded size and writes
batch k's lines again, so a kill at any point neither loses nor duplicates a line.  Output
that cannot be truncated (stdout) is re-sent only if the ``delivered`` marker says batch k
never got out.

Snapshots hold only plain data (tuples, lists, dicts, numbers, strings, ``Decimal``) and
are read back with an unpickler that refuses anything else.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

from sjoin.compiler.plan import AggregateNode, JoinNode, Plan, StreamNode
from sjoin.compiler.sql import spark_sql

from .errors import CheckpointError

FORMAT_VERSION = 1
STATE_FILE = "state.pkl"
DELIVERED_FILE = "delivered"
PAUSE_ENV = "SJOIN_RUNTIME_TEST_PAUSE"  # test hook: "SEQ:STAGE" (STAGE committed|emitted)


class _PlainUnpickler(pickle.Unpickler):
    """Only builtin containers and ``decimal.Decimal`` come out of a snapshot."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("decimal", "Decimal"):
            from decimal import Decimal

            return Decimal
        raise CheckpointError(f"checkpoint holds an unexpected object {module}.{name}")


def fingerprint(plan: Plan, relation: str | None) -> str:
    """What a checkpoint's state depends on: the relations, their conditions and columns, the
    Spark version, the settings and the relation chosen; a changed spec cannot reuse it."""
    parts = [str(plan.spark), repr(sorted(plan.settings.items())), repr(relation)]
    for node in plan.nodes:
        if isinstance(node, StreamNode):
            cols = ",".join(f"{c.name}:{c.type}" for c in node.columns)
            parts.append(f"stream {node.name} {cols} {node.watermark_column} {node.delay_ms}")
        elif isinstance(node, JoinNode):
            parts.append(
                f"join {node.name} {node.join_type} {node.left.relation} {node.right.relation} "
                f"{spark_sql(node.condition)} " + ",".join(o.name for o in node.output)
            )
        elif isinstance(node, AggregateNode):
            parts.append(
                f"aggregate {node.name} {node.input} {node.mode} "
                + ",".join(spark_sql(g) for g in node.group_by)
                + " "
                + ",".join(f"{o.name}={spark_sql(o.expr)}" for o in node.output)
            )
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class Checkpoint:
    """One checkpoint directory."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise CheckpointError(
                f"cannot create checkpoint directory {self.directory}: {err}"
            ) from None

    @property
    def state_path(self) -> Path:
        return self.directory / STATE_FILE

    def load(self) -> dict[str, Any] | None:
        """The last committed snapshot, or None for a fresh directory."""
        if not self.state_path.exists():
            return None
        try:
            data = _PlainUnpickler(io.BytesIO(self.state_path.read_bytes())).load()
        except (OSError, pickle.UnpicklingError, EOFError, ValueError) as err:
            raise CheckpointError(f"cannot read checkpoint {self.state_path}: {err}") from None
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            raise CheckpointError(
                f"{self.state_path} is not a checkpoint of this sjoin version; "
                "use a new checkpoint directory"
            )
        return data

    def commit(self, data: dict[str, Any]) -> None:
        """Atomically replace the snapshot: temp file, fsync, rename, fsync the directory."""
        payload = pickle.dumps({"version": FORMAT_VERSION, **data}, protocol=5)
        write_atomic(self.state_path, payload)

    def delivered(self) -> int:
        """The last step whose output reached a sink that cannot be rewound (-1: none)."""
        path = self.directory / DELIVERED_FILE
        try:
            return int(path.read_text().strip() or -1)
        except (OSError, ValueError):
            return -1

    def mark_delivered(self, step: int) -> None:
        write_atomic(self.directory / DELIVERED_FILE, str(step).encode())


def write_atomic(path: Path, payload: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as handle:
        handle.write(payload)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def pause_for_test(stage: str, step: int) -> None:
    """Test hook: with ``SJOIN_RUNTIME_TEST_PAUSE=STEP:STAGE`` the process announces itself on
    stderr and waits there to be killed (kill-and-restart tests)."""
    wanted = os.environ.get(PAUSE_ENV)
    if wanted != f"{step}:{stage}":
        return
    print(f"sjoin-runtime: paused after step {step} {stage}", file=sys.stderr, flush=True)
    while True:
        time.sleep(60)
