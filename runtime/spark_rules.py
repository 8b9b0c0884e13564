"""The Spark rules that both engines run, each written once (issue 25).

The reference engine (``join.py``, ``aggregate.py``, ``watermark.py``) calls these functions
row by row; the columnar engine calls each rule's vectorised twin, of the same name with
``_vec``, on polars columns, in ``columnar/spark_rules_vec.py``: polars is not imported
here, since the reference engine runs without it.  ``tests/runtime/test_spark_rules.py``
holds every scalar rule and its twin equal over generated inputs.

Times are µs (Spark's TIMESTAMP), watermarks ms (Spark's watermark values).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from sjoin.compiler.plan import StateRule

Row = tuple[Any, ...]

# ------------------------------------------------------------------ watermarks and time


def state_threshold_us(rule: StateRule, evict_ms: int | None) -> int | None:
    """The value at or below which a join side's stored rows are evicted this batch, in µs:
    the side's state watermark (Spark's ``StreamingSymmetricHashJoinHelper``:
    ``getStateWatermarkPredicates``, the key or value watermark, which the planner put in
    ``StateRule``) of the operator's eviction watermark ``evict_ms`` (ms); None when nothing
    is evicted (no watermark yet, or a side that is never evicted)."""
    if evict_ms is None:
        return None
    value = rule.state_watermark(evict_ms)
    return None if value is None else value * 1000


def watermark_passed(t_us: int | None, watermark_us: int) -> bool:
    """Whether a watermark (µs) has passed a time: ``t <= watermark``, never for a NULL time.
    It is the one predicate Spark builds from a watermark (``WatermarkSupport``,
    statefulOperators.scala: ``watermarkExpression``, a ``LessThanOrEqual`` against the
    watermark literal, which a NULL never satisfies), used for the late-row test of a join's
    input rows and of an aggregate's group keys (``watermarkPredicateForDataForLateEvents``:
    the row is dropped and counted in ``numRowsDroppedByWatermark``) and for the state rows
    that a state watermark evicts (``watermarkPredicateForKeysForEviction`` /
    ``ForData``).  Twin: ``watermark_passed_vec``."""
    return t_us is not None and t_us <= watermark_us


def drop_late(
    rows: Sequence[Row], time_of: Callable[[Row], int | None], watermark_us: int
) -> tuple[list[Row], int]:
    """A join input's rows that are not late (``watermark_passed`` by the late-events
    watermark, of the row's event time ``time_of(row)``), and how many were dropped.  The
    test is written out in the loop, not called per row: the call costs 30 ns a row, 60% of
    this loop (measured on 200,000 rows), and the test of ``drop_late`` holds it equal to
    ``watermark_passed``.  Twin: ``watermark_passed_vec``."""
    kept = []
    for row in rows:
        t = time_of(row)
        if t is None or t > watermark_us:
            kept.append(row)
    return kept, len(rows) - len(kept)


def observed_max_ms(times_us: Sequence[int | None]) -> int | None:
    """What a watermark node (Spark's ``EventTimeWatermarkExec``) takes from the event times
    of the rows that reach it in one batch: their maximum, a NULL read as 0 (the time is read
    with ``getLong`` from the ``UnsafeRow``, whose slot for a NULL holds 0), floored to ms
    (``microsToMillis``; flooring each time and taking the maximum is the same); None for a
    batch without rows.  Twin: ``observed_max_ms_vec``."""
    if not times_us:
        return None
    if None in times_us:
        return max(0 if t is None else t for t in times_us) // 1000
    return max(cast("Sequence[int]", times_us)) // 1000
