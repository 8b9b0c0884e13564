"""The checkpoint-compatibility catalogue: spec changes OLD -> NEW, each run on real local
Spark (OLD to a checkpoint, then NEW on it) by ``test_catalogue_spark.py``, which checks that
``sjoin diff``'s verdict says what Spark did. ``catalogue_results.json`` is the table of the
last recorded run (docs/changing-a-running-query.md cites it); regenerate it with
``python -m tests.compiler.describe.diff.catalogue`` from the work tree (needs pyspark and Java 17).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("catalogue_results.json")

KTV = "(k BIGINT, t TIMESTAMP, v STRING)"
RANGE = "L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS"
SELECT = "SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.t AS rt, R.v AS rv"


def join_spec(
    *,
    left: str = KTV,
    right: str = KTV,
    how: str = "INNER",
    keys: str = "L.k = R.k",
    on: str = RANGE,
    select: str = SELECT,
    delay_left: str = "10 seconds",
    settings: str = "set shuffle_partitions = 2\n",
    names: tuple[str, str, str, str, str] = ("l", "r", "j", "L", "R"),
) -> str:
    """One stream-stream join of two small streams; ``names``: the streams, the join and
    the two aliases (renamed consistently in the condition and SELECT)."""
    ls, rs, jn, la, ra = names
    cond = f"{keys} AND {on}".replace("L.", f"{la}.").replace("R.", f"{ra}.")
    sel = select.replace("L.", f"{la}.").replace("R.", f"{ra}.")
    return (
        f"spark 4.3\n{settings}"
        f"stream {ls} {left} watermark t delay {delay_left}\n"
        f"stream {rs} {right} watermark t delay 10 seconds\n"
        f"join {jn} = {ls} AS {la} {how} JOIN {rs} AS {ra} ON {cond} {sel}\n"
    )


AGG_JOIN = (
    "join j = l AS L INNER JOIN r AS R ON L.k = R.k AND "
    + RANGE
    + " SELECT L.k AS k, L.t AS t, R.v AS v\n"
)


def agg_spec(
    *,
    window: str = "10 SECONDS",
    group: str = "x.k",
    aggs: str = "count(*) AS n",
    mode: str = "append",
    extra_join: bool = False,
    self_join: bool = False,
) -> str:
    """A join followed by a windowed count (the aggregate is the query's root); with
    ``extra_join`` a second join with a third stream sits between them, with ``self_join``
    one with the first stream again (no new source)."""
    text = (
        "spark 4.3\nset shuffle_partitions = 2\n"
        f"stream l {KTV} watermark t delay 10 seconds\n"
        f"stream r {KTV} watermark t delay 10 seconds\n"
    )
    source = "j"
    if extra_join:
        text += f"stream s {KTV} watermark t delay 10 seconds\n"
    text += AGG_JOIN
    if extra_join or self_join:
        other = "l" if self_join else "s"
        text += (
            f"join js = j AS J INNER JOIN {other} AS S ON J.k = S.k AND "
            "S.t BETWEEN J.t - INTERVAL 5 SECONDS AND J.t + INTERVAL 5 SECONDS "
            "SELECT J.k AS k, J.t AS t, J.v AS v\n"
        )
        source = "js"
    return text + (
        f"aggregate a = {source} AS x GROUP BY {group}, window(x.t, INTERVAL {window}) "
        f"SELECT {group}, window(x.t, INTERVAL {window}) AS w, {aggs} OUTPUT MODE {mode}\n"
    )


@dataclass(frozen=True)
class Case:
    name: str  # the change, in words (the table's first column)
    covers: str  # the list item it covers
    old: str
    new: str
    # whether NEW, after the restart, emits a null-padded row for an unmatched left row that
    # OLD stored (None: not checked)
    null_rows: bool | None = None
    root: str | None = None  # the query restarted (of a spec with several), else the first

    def query(self, diff: Any) -> Any:
        """sjoin diff's verdict on the query this case restarts."""
        return next(q for q in diff.queries if q.new_root == (self.root or q.new_root))


def sunk_join_spec(*, select: str = "J.k AS k, J.t AS t, J.v AS v, J.rv AS rv") -> str:
    """A join ``i`` with a sink of its own that a join ``j`` (its own query) reads: Spark
    plans ``i`` again in the query of ``j``, pruned to what ``j`` reads (``select``)."""
    return (
        "spark 4.3\nset shuffle_partitions = 2\n"
        f"stream l {KTV} watermark t delay 10 seconds\n"
        f"stream r {KTV} watermark t delay 10 seconds\n"
        f"stream s {KTV} watermark t delay 10 seconds\n"
        f"join i = l AS L INNER JOIN r AS R ON L.k = R.k AND {RANGE}\n"
        "  SELECT L.k AS k, L.t AS t, L.v AS v, R.v AS rv\n"
        "join j = i AS J INNER JOIN s AS S ON J.k = S.k AND "
        f"S.t BETWEEN J.t - INTERVAL 5 SECONDS AND J.t + INTERVAL 5 SECONDS SELECT {select}\n"
        "sink i to parquet (path = 'out/i') checkpoint 'chk/i'\n"
    )


SELECT_W = "SELECT L.k AS lk, L.t AS lt, L.v AS lv, L.w AS lw, R.t AS rt, R.v AS rv"
KTVW = "(k BIGINT, t TIMESTAMP, v STRING, w STRING)"
LEFT_OUTER = join_spec(how="LEFT OUTER")

CASES: tuple[Case, ...] = (
    Case("nothing changed", "baseline", join_spec(), join_spec()),
    Case("streams renamed", "renamed relations", join_spec(),
         join_spec(names=("views", "buys", "j", "L", "R"))),
    Case("join and aliases renamed", "renamed relations", join_spec(),
         join_spec(names=("l", "r", "matched", "A", "B"))),
    Case("column added to a stream, not used", "added column", join_spec(),
         join_spec(left=KTVW)),
    Case("column added to a stream and to SELECT", "added column", join_spec(),
         join_spec(left=KTVW, select=SELECT_W)),
    Case("column removed from SELECT", "removed column", join_spec(),
         join_spec(select="SELECT L.k AS lk, L.t AS lt, L.v AS lv, R.t AS rt")),
    Case("column type changed (STRING -> BIGINT)", "added column", join_spec(),
         join_spec(left="(k BIGINT, t TIMESTAMP, v BIGINT)")),
    Case("stream columns reordered", "changed column", join_spec(),
         join_spec(left="(v STRING, k BIGINT, t TIMESTAMP)")),
    Case("SELECT items reordered", "changed SELECT", join_spec(),
         join_spec(select="SELECT R.v AS rv, R.t AS rt, L.v AS lv, L.t AS lt, L.k AS lk")),
    Case("SELECT expression changed, same columns", "changed SELECT", join_spec(),
         join_spec(select="SELECT L.k AS lk, L.t AS lt, upper(L.v) AS lv, R.t AS rt, R.v AS rv")),
    Case("key expression changed, same type", "changed key", join_spec(),
         join_spec(keys="L.k + 1 = R.k")),
    Case("key changed to a column of another type", "changed key", join_spec(),
         join_spec(keys="L.v = R.v")),
    Case("key column added", "changed key", join_spec(),
         join_spec(keys="L.k = R.k AND L.v = R.v")),
    Case("INNER -> LEFT OUTER", "changed join type", join_spec(), LEFT_OUTER, null_rows=True),
    Case("LEFT OUTER -> INNER", "changed join type", LEFT_OUTER, join_spec(), null_rows=False),
    Case("INNER -> FULL OUTER", "changed join type", join_spec(), join_spec(how="FULL OUTER"),
         null_rows=True),
    Case("INNER -> LEFT SEMI", "changed join type", join_spec(),
         join_spec(how="LEFT SEMI", select="SELECT L.k AS lk, L.t AS lt, L.v AS lv")),
    Case("range widened (inner)", "changed range", join_spec(),
         join_spec(on="L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 20 SECONDS")),
    Case("range narrowed (left outer)", "changed range", LEFT_OUTER,
         join_spec(how="LEFT OUTER",
                   on="L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 5 SECONDS")),
    Case("watermark delay changed", "changed watermark delay", join_spec(),
         join_spec(delay_left="20 seconds")),
    Case("watermark delay changed (left outer)", "changed watermark delay", LEFT_OUTER,
         join_spec(how="LEFT OUTER", delay_left="1 second")),
    Case("filter added to ON", "changed filter", join_spec(),
         join_spec(keys="L.k = R.k AND L.v <> 'skip'")),
    Case("shuffle_partitions 2 -> 3", "changed shuffle partitions", join_spec(),
         join_spec(settings="set shuffle_partitions = 3\n")),
    Case("state_store hdfs -> rocksdb", "changed setting", join_spec(),
         join_spec(settings="set shuffle_partitions = 2\nset state_store = rocksdb\n")),
    Case("multiple_watermark_policy min -> max", "changed setting", join_spec(),
         join_spec(settings="set shuffle_partitions = 2\nset multiple_watermark_policy = max\n")),
    Case("aggregate window changed", "changed SELECT", agg_spec(), agg_spec(window="20 SECONDS")),
    Case("aggregate function added", "changed SELECT", agg_spec(),
         agg_spec(aggs="count(*) AS n, max(x.t) AS last")),
    Case("aggregate function replaced, same buffer (count(*) -> count(x.k))", "changed SELECT",
         agg_spec(), agg_spec(aggs="count(x.k) AS n")),
    Case("aggregate grouping key added", "changed key", agg_spec(), agg_spec(group="x.k, x.v")),
    Case("aggregate output mode append -> update", "changed SELECT", agg_spec(),
         agg_spec(mode="update")),
    Case("join added before the aggregate", "join added before an aggregate", agg_spec(),
         agg_spec(extra_join=True)),
    Case("aggregate removed (the join is the query's root)", "stateful operator removed",
         agg_spec(), agg_spec().split("aggregate a")[0]),
    Case("aggregate added after the join", "stateful operator added",
         agg_spec().split("aggregate a")[0], agg_spec()),
    Case("join of a stream it reads added before the aggregate",
         "join added before an aggregate", agg_spec(), agg_spec(self_join=True)),
    Case("join before the aggregate removed", "join added before an aggregate",
         agg_spec(self_join=True), agg_spec()),
    Case("a join with a sink of its own: its reader stops reading one of its columns",
         "removed column", sunk_join_spec(), sunk_join_spec(select="J.k AS k, J.t AS t, J.v AS v"),
         root="j"),
)  # fmt: skip


def ts(seconds: float) -> str:
    """ISO timestamp ``seconds`` after 2026-01-01T00:00:00Z."""
    whole = int(seconds)
    return f"2026-01-01T00:{whole // 60:02d}:{whole % 60:02d}Z"


def _row(k: int, seconds: float, v: str) -> dict[str, Any]:
    return {"k": k, "t": ts(seconds), "v": v}


# OLD runs two micro-batches (state is written, a watermark set), NEW one more on the
# checkpoint; most rows match under every case's condition so that state is read back. The
# left row k=5 never matches: OLD stores it, and NEW's batch moves the watermark past it, so
# NEW evicts it (null-padded when NEW is an outer join).
OLD_BATCHES = [
    {"l": [_row(1, 0, "a"), _row(2, 1, "b")], "r": [_row(1, 2, "c")], "s": [_row(1, 1, "d")]},
    {"l": [_row(3, 30, "e"), _row(5, 28, "u")], "r": [_row(2, 3, "f"), _row(3, 31, "g")], "s": []},
]
NEW_BATCHES = [
    {
        "l": [_row(4, 40, "h"), _row(6, 90, "w")],
        "r": [_row(3, 35, "i"), _row(4, 41, "j"), _row(6, 91, "x")],
        "s": [_row(4, 40, "k")],
    },
]


def renamed(batch: dict[str, list[dict[str, Any]]], case: Case) -> dict[str, Any]:
    """A batch under the stream names of ``case.new`` (streams renamed in place)."""
    if "stream views" in case.new:
        return {"views": batch["l"], "buys": batch["r"]}
    return batch


def record() -> list[dict[str, Any]]:
    """Run every case on local Spark and return the table (also written to RESULTS)."""
    from sjoin.jvm.spark_driver import get_spark

    from .restart import restart
    from .verdicts import outcome_row

    spark = get_spark(quiet=True)
    rows = []
    templates: dict[str, tuple[str, int]] = {}
    for case in CASES:
        started = time.perf_counter()
        new_batches = [renamed(b, case) for b in NEW_BATCHES]
        outcome = restart(spark, case.old, case.new, OLD_BATCHES, new_batches, templates, case.root)
        rows.append(outcome_row(case, outcome, spark.version))
        print(f"{case.name}: {rows[-1]} ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    for directory, _ in templates.values():
        shutil.rmtree(directory, ignore_errors=True)
    RESULTS.write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return rows


def write_doc_table() -> None:
    """Put the recorded table into the docs, between START and END."""
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    rows = json.loads(RESULTS.read_text(encoding="utf-8"))
    table = markdown_table(rows)
    DOC.write_text(f"{head}{START}\n{table}\n{END}{tail}", encoding="utf-8")


DOC = Path(__file__).resolve().parents[4] / "docs" / "changing-a-running-query.md"
START, END = "<!-- catalogue:start -->", "<!-- catalogue:end -->"


def verdict_of(case: Case) -> tuple[str, str | None, list[str]]:
    """sjoin diff's verdict on a case: the query's verdict, Spark's error, the reasons."""
    from sjoin.compiler.describe.diff import VERDICT_TEXT, diff_plans

    from .restart import plan_of

    query = case.query(diff_plans(plan_of(case.old), plan_of(case.new)))
    topics = [r.topic for r in query.reasons]
    topics += [r.topic for op in query.operators for r in op.reasons]
    return VERDICT_TEXT[query.verdict], query.error, list(dict.fromkeys(topics))


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The docs' table: each case, what Spark did, what sjoin diff says."""
    by_name = {c.name: c for c in CASES}
    spark = rows[0]["spark"] if rows else "?"
    lines = [
        f"| # | change | Spark {spark} did | `sjoin diff` says |",
        "|---|---|---|---|",
    ]
    for number, row in enumerate(rows, 1):
        verdict, error, topics = verdict_of(by_name[row["change"]])
        did = "resumed" if row["resumed"] else f"failed: `{_short(row['error'])}`"
        if row["resumed"] and row["shuffle_partitions"] is not None:
            did += f" ({row['shuffle_partitions']} partitions"
            if by_name[row["change"]].null_rows is not None:
                did += f"; null-padded rows from the old state: {row['null_padded_rows']}"
            did += ")"
        says = verdict + (f": `{_short(error)}`" if error else "")
        if topics and verdict != "fails at restart":
            says += f" ({', '.join(topics)})"
        lines.append(f"| {number} | {row['change']} | {did} | {says} |")
    return "\n".join(lines)


def _short(error: str | None) -> str:
    text = error or ""
    return (
        text if len(text) <= 60 else text.split(" requested")[0].replace("assertion failed: ", "")
    )


if __name__ == "__main__":
    if "--doc" not in sys.argv:
        record()
    write_doc_table()
