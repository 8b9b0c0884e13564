"""`sjoin init NAME`: scaffold a spec, a trace and a pytest file for a new join, the way
`dbt init` and `spark-pipelines init` start a project, so that a new user's first green
snapshot test is one command and one `pytest` away.  The spec also reads JSON files and
writes a JSON sink (``NAME_input/``, ``NAME_output/``, relative to where the job runs), and
the scaffold writes the trace's rows there, so that the compiled job runs with
`spark-submit` as it is."""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

from ..runtime.errors import UnsafeFileError
from ..runtime.io.files import Folder, cannot_write

SPEC = """\
-- {name}.sjoin: which orders were shipped within a day, and which were not?
-- Edit the streams and the join; `sjoin plan {name}.sjoin` shows what Spark will do.
spark 4.3

-- the compiled job reads every file there is, then stops
set trigger = 'available_now'
-- a local demo on a laptop: 2 state partitions instead of Spark's 200 (each one a task per
-- batch). On a cluster, delete this line to keep the cluster's own value; the checkpoint
-- pins the number at the query's first start, so change it only with a new checkpoint.
set shuffle_partitions = 2

stream orders (
    order_id    BIGINT,
    order_time  TIMESTAMP,
    amount      DOUBLE
)
watermark order_time delay 10 minutes
from json (path = '{name}_input/orders')

stream shipments (
    order_id    BIGINT,
    ship_time   TIMESTAMP,
    carrier     STRING
)
watermark ship_time delay 10 minutes
from json (path = '{name}_input/shipments')

join {name} = orders AS o LEFT OUTER JOIN shipments AS s
    ON  o.order_id = s.order_id
    AND s.ship_time >= o.order_time
    AND s.ship_time <= o.order_time + INTERVAL 1 DAY
    SELECT o.order_id, o.order_time, o.amount, s.ship_time, s.carrier

sink {name} to json (path = '{name}_output') checkpoint '{name}_checkpoint'
"""

TRACE_ROWS = [
    (0, "orders", {"order_id": 1, "order_time": "2026-01-01T09:00:00Z", "amount": 25.0}),
    (0, "orders", {"order_id": 2, "order_time": "2026-01-01T09:30:00Z", "amount": 12.5}),
    (0, "shipments", {"order_id": 1, "ship_time": "2026-01-01T15:00:00Z", "carrier": "ups"}),
    (1, "orders", {"order_id": 3, "order_time": "2026-01-02T12:00:00Z", "amount": 40.0}),
    (1, "shipments", {"order_id": 9, "ship_time": "2026-01-02T12:00:00Z", "carrier": "dhl"}),
    # a week later: the watermark passes the other orders' bounds, so they come out even
    # after the join is widened to a few days (the README's tutorial widens it to 2 days)
    (2, "orders", {"order_id": 4, "order_time": "2026-01-09T08:00:00Z", "amount": 8.0}),
    (2, "shipments", {"order_id": 4, "ship_time": "2026-01-09T09:00:00Z", "carrier": "ups"}),
]

TEST = """\
\"\"\"Tests for {name}.sjoin (run `pytest --snapshot-update` once, then `pytest`).\"\"\"

from pathlib import Path

HERE = Path(__file__).parent


def test_{ident}_plan_and_job(sjoin_snapshot):
    sjoin_snapshot(HERE / "{name}.sjoin")


def test_{ident}_rows(sjoin_run):
    run = sjoin_run(HERE / "{name}.sjoin", HERE / "{name}.trace.jsonl", relation="{name}")
    rows = run.rows("{name}")
    shipped = [r["order_id"] for r in rows if r["carrier"] is not None]
    unshipped = [r["order_id"] for r in rows if r["carrier"] is None]
    assert shipped == [1, 4]
    # null-padded once the watermark passes their bound (order time + the join's interval);
    # the trace's last batch, a week later, moves it past a bound of up to 6 days
    assert unshipped == [2, 3]
"""


class ScaffoldError(Exception):
    """A file would be overwritten, or the name cannot be a relation name."""


def scaffold(name: str, directory: Path) -> list[Path]:
    """Write ``NAME.sjoin``, ``NAME.trace.jsonl`` and ``test_NAME.py`` into ``directory``,
    and the trace's rows as the job's JSON input files (``NAME_input/STREAM/batch-N.json``);
    returns the first three."""
    # the spec's plain identifier (str.isidentifier also takes `café` and a full-width x,
    # which the spec grammar does not)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ScaffoldError(
            f"`{name}` is not a valid name: use the letters A-Z and a-z, the digits 0-9 and _, "
            "not starting with a digit"
        )
    spec = SPEC.format(name=name)
    from ..api import check_text

    checked = check_text(spec, f"{name}.sjoin")
    errors = [d for d in checked.diagnostics if d.severity == "error"]
    if errors:  # e.g. `orders`: the scaffold's input streams are `orders` and `shipments`
        raise ScaffoldError(
            f"`{name}` cannot name the scaffold's join: {errors[0].message} (its input streams "
            f"are `orders` and `shipments`); choose another name, e.g. `{name}_shipped`"
        )
    files = {
        directory / f"{name}.sjoin": spec,
        directory / f"{name}.trace.jsonl": "".join(
            json.dumps({"batch": b, "stream": s, "row": r}) + "\n" for b, s, r in TRACE_ROWS
        ),
        directory / f"test_{name}.py": TEST.format(name=name, ident=name.lower()),
    }
    inputs: dict[Path, str] = {}
    for batch, stream, row in TRACE_ROWS:
        path = directory / f"{name}_input" / stream / f"batch-{batch}.json"
        inputs[path] = inputs.get(path, "") + json.dumps(row) + "\n"
    existing = [str(p) for p in [*files, *inputs] if os.path.lexists(p)]
    if existing:
        raise ScaffoldError("refusing to overwrite " + ", ".join(existing))
    # ``directory`` is the user's (followed when a link); in it each file is made anew and
    # never through a link, and the input folders are sjoin's: a link there is refused.  The
    # folders are all opened first, so a refused one leaves no file written.
    try:
        with contextlib.ExitStack() as stack:
            top = stack.enter_context(Folder.open(directory, "the directory of `sjoin init`"))
            folders: dict[tuple[str, ...], Folder] = {(): top}
            writes = []
            for path, text in [*files.items(), *inputs.items()]:
                *parents, leaf = path.relative_to(directory).parts
                for depth in range(1, len(parents) + 1):
                    key = tuple(parents[:depth])
                    if key not in folders:
                        child = folders[key[:-1]].child(key[-1])
                        assert child is not None
                        folders[key] = stack.enter_context(child)
                writes.append((folders[tuple(parents)], leaf, text))
            for folder, leaf, text in writes:
                folder.create(leaf, text.encode("utf-8"))
    except FileExistsError as err:
        raise ScaffoldError(f"refusing to overwrite {err.filename}") from None
    except UnsafeFileError as err:
        raise ScaffoldError(str(err)) from None
    except OSError as err:  # a full disk, no permission: the path and the reason
        raise ScaffoldError(str(cannot_write(err.filename or directory, err))) from None
    return list(files)
