"""The vectorised twins of the Spark rules in ``runtime/engine/spark_rules.py``, for the columnar
engine: each ``<rule>_vec`` computes on polars columns what ``<rule>`` computes on values, and
``tests/runtime/engine/test_spark_rules.py`` holds the two equal over generated inputs.  The rule,
its Spark source and its reasons are documented once, on the scalar rule; this module only says
how the twin computes it.
"""

from __future__ import annotations

import polars as pl

from ..engine.spark_rules import BIGINT_MAX, BIGINT_MIN, Skipped


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


def bigint_overflows_vec(total: pl.Expr) -> pl.Expr:
    """``bigint_overflows`` of exact sums (an Int128 column)."""
    return (total < BIGINT_MIN) | (total > BIGINT_MAX)


def bigint_wrapped_vec(total: pl.Expr) -> pl.Expr:
    """``bigint_wrapped`` of exact sums (an Int128 column), as Int64."""
    return total.cast(pl.Int64, wrap_numerical=True)


def decimal_sum_vec(
    unscaled: pl.Expr, overflowed: pl.Expr, precision: int
) -> tuple[pl.Expr, pl.Expr]:
    """``decimal_adder`` folded over a group's DECIMAL values at the sum's scale, given as
    their unscaled Int128 integers (``overflowed``: the group's flag so far): the flag, set
    when any prefix of the cumulative sum leaves DECIMAL(``precision``) (|prefix| >=
    10 ** precision), and the unscaled total (NULL once overflowed, or without values).  A
    prefix that wraps Int128 is out of range too: the first prefix out of range follows one
    in range (< 10 ** 38) by one value (< 10 ** 38), so it is below 2 * 10 ** 38 and, if it
    wraps, lands at or below -(2 ** 128 - 2 * 10 ** 38) < -(10 ** 38); later prefixes no
    longer matter (the flag stays)."""
    limit = pl.lit(10**precision, dtype=pl.Int128)
    prefixes = unscaled.cum_sum()
    gone = overflowed.any() | ((prefixes >= limit) | (prefixes <= -limit)).any()
    total = (
        pl.when(gone).then(pl.lit(None, dtype=pl.Int128)).otherwise(prefixes.drop_nulls().last())
    )
    return gone, total


def double_sum_vec(v: pl.Expr) -> pl.Expr:
    """The DOUBLE ``sum`` that folding ``double_add`` over a group's values gives: a
    cumulative sum (sequential additions, not polars' pairwise ``sum``) from the first value,
    plus 0.0, which turns the one sum that adding from 0.0 gives otherwise, -0.0 when every
    value is -0.0, into Spark's 0.0 and leaves every other sum as it is.  NULL for a group
    without values is the caller's (no value: the state stays NULL)."""
    return v.drop_nulls().cum_sum().last() + pl.lit(0.0)


def float_min_vec(v: pl.Expr) -> pl.Expr:
    """``min_step`` folded over a group's DOUBLE/FLOAT values: the first of the smallest
    numbers, NaN when there are only NaNs, NULL when there are no values."""
    number = v.filter(v.is_not_nan())
    first = v.filter(v == number.min()).first()
    return (
        pl.when(v.is_not_nan().any())
        .then(first)
        .when(v.is_nan().any())
        .then(pl.lit(float("nan")))
        .otherwise(pl.lit(None, dtype=pl.Float64))
    )


def float_max_vec(v: pl.Expr) -> pl.Expr:
    """``max_step`` folded over a group's DOUBLE/FLOAT values: NaN when there is one, else
    the first of the largest numbers (NULL when there are no values)."""
    number = v.filter(v.is_not_nan())
    first = v.filter(v == number.max()).first()
    return pl.when(v.is_nan().any()).then(pl.lit(float("nan"))).otherwise(first)


def in_eviction_order_vec(evicted: pl.DataFrame, time: str, ident: str) -> pl.DataFrame:
    """``eviction_order``: the frame's rows sorted by (time, id), its ``time`` and ``ident``
    columns.  Rows already in id order (a join's state) need only a stable sort by time."""
    if evicted.height < 2:
        return evicted
    if evicted.get_column(ident).is_sorted():
        return evicted.sort(time, maintain_order=True)
    return evicted.sort([time, ident])
