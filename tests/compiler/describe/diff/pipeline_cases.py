"""Restarts of pipelines around the join (issue 37): a dedup's key list, WITHIN WATERMARK and
its delay changed, a dedup added or removed, a union's input added or replaced, a view's WHERE
changed.  Each is run on real Spark by ``test_pipeline_restarts_spark.py`` (OLD to a
checkpoint, then NEW on it, ``restart.py``), which checks that `sjoin diff` says what Spark
did; ``SEEN`` is what Spark 4.3.0 did (the docs cite it)."""

from __future__ import annotations

from .catalogue import KTV, KTVW, RANGE, Case

HEAD = "spark 4.3\nset shuffle_partitions = 2\n"
L = f"stream l {KTV} watermark t delay 10 seconds\n"
R = f"stream r {KTV} watermark t delay 10 seconds\n"
S = f"stream s {KTV} watermark t delay 10 seconds\n"
SINK = "sink {} to parquet (path = 'o') checkpoint 'c'\n"
JOIN = (
    "join j = {} AS L INNER JOIN r AS R ON L.k = R.k AND "
    + RANGE
    + " SELECT L.k AS lk, L.t AS lt, R.v AS rv\n"
)


def dedup(on: str, within: bool = False, delay: str = "10 seconds") -> str:
    """A dedup of ``l`` (with the watermark ``delay``), the query's root."""
    stream = L.replace("delay 10 seconds", f"delay {delay}")
    w = " WITHIN WATERMARK" if within else ""
    return HEAD + stream + f"dedup d = l ON ({on}){w}\n" + SINK.format("d")


def union(*inputs: str) -> str:
    """A union of streams deduplicated on (k, t) (a stateful root over the union)."""
    streams = {"l": L, "r": R, "s": S}
    text = HEAD + "".join(streams[i] for i in inputs)
    return (
        text + f"union u = {' UNION ALL '.join(inputs)}\ndedup d = u ON (k, t)\n" + SINK.format("d")
    )


def view(where: str) -> str:
    """A view of ``l`` with a WHERE, deduplicated on (k, t)."""
    return (
        HEAD
        + L
        + f"view w = SELECT x.k, x.t, x.v FROM l AS x WHERE {where}\n"
        + "dedup d = w ON (k, t)\n"
        + SINK.format("d")
    )


def joined(deduped: bool) -> str:
    """A join of ``l`` (deduplicated on (k, t) first, or not) and ``r``."""
    text = HEAD + L + R
    if deduped:
        text += "dedup l1 = l ON (k, t)\n"
    return text + JOIN.format("l1" if deduped else "l") + SINK.format("j")


CASES: tuple[Case, ...] = (
    Case("nothing changed (a dedup)", "dedup", dedup("k, t"), dedup("k, t")),
    Case("dedup column of another type", "dedup", dedup("k, t"), dedup("v, t")),
    Case("dedup column added", "dedup", dedup("k, t"), dedup("k, v, t")),
    Case("dedup column changed, same type", "dedup", dedup("v").replace(KTV, KTVW),
         dedup("w").replace(KTV, KTVW)),
    Case("dropDuplicates -> WITHIN WATERMARK", "dedup", dedup("k"), dedup("k", within=True)),
    Case("WITHIN WATERMARK -> dropDuplicates", "dedup", dedup("k", within=True), dedup("k")),
    Case("WITHIN WATERMARK delay changed", "dedup", dedup("k", within=True),
         dedup("k", within=True, delay="20 seconds")),
    Case("dedup added below the join", "dedup", joined(False), joined(True)),
    Case("dedup removed below the join", "dedup", joined(True), joined(False)),
    Case("union input added", "union", union("l", "r"), union("l", "r", "s")),
    Case("union input removed", "union", union("l", "r", "s"), union("l", "r")),
    Case("union input replaced", "union", union("l", "r"), union("l", "s")),
    Case("view WHERE changed", "view", view("x.v <> 'a'"), view("x.v <> 'b'")),
)  # fmt: skip

# What Spark 4.3.0 did with each case (resumed, the start of its error):
# tests/compiler/describe/diff/test_pipeline_restarts_spark.py checks it again on that version.
SEEN_ON = "4.3.0"
OPERATOR = "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
SEEN: dict[str, tuple[bool, str]] = {
    "nothing changed (a dedup)": (True, ""),
    "dedup column of another type": (False, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"),
    "dedup column added": (False, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"),
    "dedup column changed, same type": (True, ""),
    "dropDuplicates -> WITHIN WATERMARK": (False, OPERATOR),
    "WITHIN WATERMARK -> dropDuplicates": (False, OPERATOR),
    "WITHIN WATERMARK delay changed": (True, ""),
    "dedup added below the join": (False, OPERATOR),
    "dedup removed below the join": (False, OPERATOR),
    "union input added": (False, "assertion failed: There are [2] sources in the checkpoint"),
    "union input removed": (False, "assertion failed: There are [3] sources in the checkpoint"),
    "union input replaced": (True, ""),
    "view WHERE changed": (True, ""),
}
