"""The vectorised twins of the Spark rules in ``runtime/spark_rules.py``, for the columnar
engine: each ``<rule>_vec`` computes on polars columns what ``<rule>`` computes on values, and
``tests/runtime/test_spark_rules.py`` holds the two equal over generated inputs.  The rule, its
Spark source and its reasons are documented once, on the scalar rule; this module only says
how the twin computes it.
"""

from __future__ import annotations

import polars as pl

from ..spark_rules import Skipped


def observed_max_ms_vec(times_us: pl.Series) -> int | None:
    """``observed_max_ms`` of a column of event times (µs): NULLs filled with 0, the maximum
    floored to ms; None for an empty column."""
    if times_us.len() == 0:
        return None
    top = times_us.fill_null(0).max()
    assert isinstance(top, int)
    return top // 1000


def watermark_passed_vec(t_us: pl.Expr, watermark_us: int) -> pl.Expr:
    """``watermark_passed`` of a column of times (µs): False, never NULL, for a NULL time."""
    return t_us.is_not_null() & (t_us <= watermark_us)


def stored_vec(skipped: Skipped, passed: pl.Expr, matched: pl.Expr) -> pl.Expr:
    """``stored`` of columns: which new rows are added to state (``passed``: the eviction
    passes the row; ``matched``: it has matched)."""
    if skipped == "none":
        return pl.lit(True)
    if skipped == "all":
        return ~passed
    return ~(passed & matched)
