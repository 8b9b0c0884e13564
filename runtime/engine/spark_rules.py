"""The Spark rules that both engines run, each written once (issue 25).

The reference engine (``join.py``, ``aggregate.py``, ``watermark.py``) calls these functions
row by row; the columnar engine calls each rule's vectorised twin, of the same name with
``_vec``, on polars columns, in ``columnar/spark_rules_vec.py``: polars is not imported
here, since the reference engine runs without it.  ``tests/runtime/engine/test_spark_rules.py``
holds every scalar rule and its twin equal over generated inputs.

Times are µs (Spark's TIMESTAMP), watermarks ms (Spark's watermark values).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, Final, cast

from ...compiler.planning.plan import EvictedRowsSkipped, StateRule
from ..errors import QueryError

Row = tuple[Any, ...]
Skipped = EvictedRowsSkipped  # the planner's ``Side.evicted_rows_skipped``

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


# ------------------------------------------------------------------ the join's state


def stored(skipped: Skipped, passed: bool, matched: bool) -> bool:
    """Whether a new row is added to state, by the side's ``Side.evicted_rows_skipped`` (the
    planner's decision of the append rule, ``planner.evicted_rows_skipped``): unless
    the eviction passes it (``passed``) and the rule skips such a row.  The reference join's
    loops apply it written out (``skips and (matched or not only_matched)``, then the
    watermark test), to keep a call per row out of them; ``stored_vec`` is tested against
    this function."""
    return not (passed and (skipped == "all" or (skipped == "matched" and matched)))


def rows_removed(evicted: int, evicted_preserved: int, count_all_removals: bool) -> int:
    """A join's ``numRowsRemoved`` for the rows its cleanup evicted: ``evicted`` from sides
    whose rows are only dropped, ``evicted_preserved`` from preserved (outer) sides, whose
    unmatched rows come out null-padded.  Spark counts the latter only from 4.3.0
    (``JoinQuirks.count_all_removals``; no Spark issue identified, first seen in 4.3.0)."""
    return evicted + (evicted_preserved if count_all_removals else 0)


# ------------------------------------------------------------------ the order of evicted rows


def eviction_order(times_us: Sequence[int], idents: Sequence[int]) -> list[int]:
    """The order in which one batch's evicted entries come out (an outer join's null-padded
    rows, the groups an aggregate emits): by (event time, id), where the id is the entry's
    arrival number in its operator (a join's state row id, an aggregate group's sequence);
    the positions of ``times_us``/``idents`` in that order.

    Not a Spark rule: Spark defines no order within a micro-batch (it depends on the
    partitions and the state store's iteration), and ``verify`` compares batches as
    multisets.  sjoin fixes this one so that the order depends only on what a checkpoint
    holds: a resumed run writes the same bytes as an uninterrupted one, on either engine
    (docs/testing.md, "The order of a batch's rows").  The reference's event-time index
    (``index.py``) and the columnar engine (``in_eviction_order_vec``) both follow it."""
    return sorted(range(len(idents)), key=lambda i: (times_us[i], idents[i]))


# ------------------------------------------------------------------ aggregate arithmetic

BIGINT_MIN, BIGINT_MAX = -(2**63), 2**63 - 1


def bigint_overflows(total: int) -> bool:
    """Whether an exact integer sum leaves BIGINT (a ``sum``/``avg`` of integers is a BIGINT,
    Spark's ``Sum.resultType`` for an ``IntegralType``).  Twin: ``bigint_overflows_vec``."""
    return not BIGINT_MIN <= total <= BIGINT_MAX


def bigint_wrapped(total: int) -> int:
    """An exact integer sum as the JVM's ``long`` addition leaves it without ANSI mode:
    two's-complement wraparound (the overflow is silent).  Twin: ``bigint_wrapped_vec``."""
    return ((total + 2**63) % 2**64) - 2**63


def bigint_overflow(call: str) -> QueryError:
    """The error of an integer sum that overflows BIGINT in ANSI mode (Spark 4.x's default):
    ``Add`` in ``EvalMode.ANSI`` fails with ARITHMETIC_OVERFLOW at the first row whose partial
    sum leaves BIGINT."""
    return QueryError("ARITHMETIC_OVERFLOW", f"{call}() overflowed BIGINT")


def bigint_adder(ansi: bool, call: str) -> Callable[[int, int], int]:
    """The step of an integer ``sum``/``avg`` (of the aggregate ``call``): the exact sum,
    ``bigint_overflow`` in ANSI mode when it leaves BIGINT, else ``bigint_wrapped``.  (A
    function made once per accumulator: one call per row.)  The columnar engine sums in
    Int128 (no 64-bit step can overflow it), finds the first overflowing prefix with
    ``bigint_overflows_vec`` and wraps the total with ``bigint_wrapped_vec``: wrapping each
    step or the total is the same modulo 2**64."""

    def add(a: int, b: int) -> int:
        total = a + b
        if not BIGINT_MIN <= total <= BIGINT_MAX:  # (bigint_overflows, written out)
            if ansi:
                raise bigint_overflow(call)
            total = bigint_wrapped(total)
        return total

    return add


# a DECIMAL sum that left its type: Spark's buffer holds NULL with ``isEmpty`` false from then
# on (sticky); a NaN stays NaN through every addition, and pickles as a Decimal
DECIMAL_OVERFLOW: Final = Decimal("NaN")
_EXACT: Final = Context(prec=200)  # exact for any sum of DECIMAL(38) values


def decimal_fits(value: Decimal, precision: int, scale: int) -> bool:
    """Whether a value at scale ``scale`` fits DECIMAL(precision, scale): fewer than
    ``precision - scale`` digits before the point (Spark's ``Decimal.changePrecision``)."""
    return not value or value.adjusted() < precision - scale


def decimal_adder(precision: int, scale: int) -> Callable[[Any, Any], Decimal]:
    """The step of a DECIMAL ``sum``/``avg`` whose sum is kept as DECIMAL(precision, scale)
    (``types.sum_type``: Spark's ``Sum``/``Average`` buffer, DECIMAL(p + 10, s) bounded):
    each value cast to the buffer's scale (HALF_UP, as ``child.cast(sumType)``), the exact
    sum, and ``DECIMAL_OVERFLOW`` from the first prefix that does not fit: Spark's buffer
    becomes NULL when a partial sum is written to its row (``UnsafeRowWriter`` refuses a
    value that ``changePrecision`` cannot fit) and stays NULL, with no error yet, in ANSI
    mode too (checked on Spark 4.3: ``tests/runtime/engine/test_decimal_aggregates_on_spark.py``).
    ``current`` None: the group's first value.  Twin: ``decimal_sum_vec``."""
    quantum = Decimal(1).scaleb(-scale)

    def add(current: Any, value: Any) -> Decimal:
        v = Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP, context=_EXACT)
        total = v if current is None else _EXACT.add(current, v)
        if total.is_nan() or decimal_fits(total, precision, scale):
            return total if total else total.copy_abs()
        return DECIMAL_OVERFLOW

    return add


def decimal_result(
    value: Decimal | None, precision: int, scale: int, ansi: bool, call: str
) -> Decimal | None:
    """A DECIMAL ``sum``/``avg``'s result from its (exact) value, when the group's row is
    output (not when its rows are added): NULL for no value; without ANSI, NULL for an
    overflowed sum or a value that does not fit the result's DECIMAL(precision, scale); in
    ANSI mode, ARITHMETIC_OVERFLOW ("Overflow in sum of decimals") for an overflowed sum
    (Spark's ``CheckOverflowInSum``, for ``avg`` too) and NUMERIC_VALUE_OUT_OF_RANGE for an
    average that does not fit (``Decimal.toPrecision`` of ``Average``'s result): checked on
    Spark 4.3 (``tests/runtime/engine/test_decimal_aggregates_on_spark.py``).  The columnar engine
    calls it per output group, through the reference's ``Accumulator.result``."""
    if value is None:
        return None
    if value.is_nan():
        if ansi:
            raise QueryError(
                "ARITHMETIC_OVERFLOW",
                f"Overflow in sum of decimals: {call}() left DECIMAL({precision}, {scale})",
            )
        return None
    if not decimal_fits(value, precision, scale):
        if ansi:
            raise QueryError(
                "NUMERIC_VALUE_OUT_OF_RANGE",
                f"{value} cannot be represented as DECIMAL({precision}, {scale}) ({call}())",
            )
        return None
    return value


def decimal_average(total: Decimal, count: int, scale: int) -> Decimal:
    """``avg`` of a DECIMAL sum: ``total / count`` rounded HALF_UP to the result's scale
    (``Average``'s ``DecimalDivideWithOverflowCheck``); an overflowed sum stays overflowed.
    The columnar engine calls it per output group, as ``decimal_result``."""
    if total.is_nan():
        return total
    quotient = _EXACT.divide(total, Decimal(count))
    q = quotient.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_EXACT)
    return q if q else q.copy_abs()


def double_add(current: Any, value: Any) -> Any:
    """One step of a DOUBLE/FLOAT ``sum``/``avg``: IEEE additions in row order, from 0.0 when
    the group has no value yet (its state is NULL until then), as Spark's
    ``Sum.updateExpressions`` (Sum.scala) ``coalesce(coalesce(sum, zero) + child, sum)`` adds.
    So a group of -0.0 alone sums to 0.0 (0.0 + -0.0 is 0.0), checked on Spark 4.3 with a
    streaming aggregate (tests/runtime/engine/test_negative_zero_on_spark.py); every other sum is
    the same as adding from the first value.  Twin: ``double_sum_vec``."""
    return (0.0 if current is None else float(current)) + float(value)


def min_step(current: Any, value: Any) -> Any:
    """``min`` after one more (non-NULL) value: NaN is above every number (Spark's
    ``SQLOrderingUtil.compareDoubles``), and of equal values the first stays (``-0.0`` and
    ``0.0`` are equal: whichever came first is the result).  Twin: ``float_min_vec``."""
    if current is None:
        return value
    if isinstance(value, float) and value != value:
        return current  # NaN is never below anything
    if isinstance(current, float) and current != current:
        return value  # every number is below NaN
    return value if value < current else current


def max_step(current: Any, value: Any) -> Any:
    """``max`` after one more (non-NULL) value: NaN is above every number, and of equal values
    the first stays (``min_step``'s ordering).  Twin: ``float_max_vec``."""
    if current is None:
        return value
    if isinstance(current, float) and current != current:
        return current  # nothing is above NaN
    if isinstance(value, float) and value != value:
        return value
    return value if current < value else current
