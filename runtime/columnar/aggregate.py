"""The ``aggregate`` statement, a batch at a time on polars: ``FrameGroups``, the polars
storage of the state that ``aggregate_core.StreamingAggregate`` runs (``ColumnarAggregate``),
with the same groups, rows, order, metrics and errors as the row storage
(``runtime/rows/aggregate.py``); the accumulators' readable definition, which both use, is
``runtime/engine/aggregate_functions.py``.

State is one frame of groups: the keys ``k0..`` (a tumbling ``window()`` key is its start;
its end is start + duration; a key that is an input window column, which another operator
output, is that window, a struct ``{start, end}``: ``windows.WINDOW``), the accumulator
columns ``a0..`` (and ``b{j}``, the row count of an ``avg``), ``_seq`` (insertion order: the
reference's dict order) and ``_t`` (the watermark key's time, the value the eviction index
holds: a window's end, which Spark's eviction reads of a window key).  Evicted groups come out
in (``_t``, ``_seq``) order, as the reference's index pops them.

Per batch, the rows whose key is late are dropped (distinct keys counted), and the batch's
rows are grouped together with one *pseudo-row* per group already in state carrying its
accumulators, placed before the batch's rows: every accumulator is then a left-to-right fold
over (state, row 1, row 2, ...) exactly as the reference's ``Accumulator.update``:

* ``sum``/``avg`` of DOUBLE/FLOAT are a cumulative sum (sequential IEEE additions in row
  order, not polars' pairwise ``sum``); of integers a cumulative sum in Int128, whose
  prefixes show where BIGINT overflows (ANSI: ARITHMETIC_OVERFLOW for the first row that
  overflows, as the reference raises it; else two's-complement wrap, as the reference's);
  of DECIMAL(p, s) a cumulative sum of the unscaled Int128 values, kept with a flag
  ``f{j}`` set for good once a prefix leaves the sum's type (``spark_rules.decimal_adder``;
  a prefix that wraps Int128 is out of range too); a group's result (NULL or
  ARITHMETIC_OVERFLOW for an overflowed sum, avg's HALF_UP quotient) is the reference
  accumulator's, computed per output group;
* ``min``/``max`` keep the first of equal values (``-0.0`` vs ``0.0``), order NaN above every
  number (``spark_rules.min_step`` / ``max_step``);
* ``approx_count_distinct`` keeps the set of distinct values (a list column);
* of windows (an input window column): ``count`` counts the non-NULL ones, ``min``/``max``
  order them by (start, end), as the reference's tuples and Spark's structs compare.

Outputs that are a key or an aggregate call are columns (a window a struct column, named in
the output ``Frame.windows``); other output expressions are computed by the reference
evaluator over the output rows (the reference's ``_output``, windows as tuples).
``support.aggregate_unsupported`` names what this operator does not run (sliding windows,
computed keys or arguments, floating keys, DECIMAL values of no fixed scale, ...): the query
runs such an aggregate on the reference operator.
``snapshot``/``restore`` use the reference's form, so either engine resumes the other's
checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Context, Decimal
from typing import Any

import polars as pl
from sqlglot import exp

from ...compiler.planning.plan import AggregateNode
from ..engine.aggregate_core import Key, Late, StreamingAggregate
from ..engine.aggregate_functions import Accumulator, group_position, output_functions
from ..engine.batches import Batch, Frame, Rows
from ..engine.eval import Layout
from ..engine.late import Dropped
from ..engine.spark_rules import DECIMAL_OVERFLOW, bigint_overflow
from ..engine.watermark import WatermarkNode
from .frames import decimal_dtype, dtype_of
from .spark_rules_vec import (
    bigint_overflows_vec,
    bigint_wrapped_vec,
    decimal_sum_vec,
    double_sum_vec,
    float_max_vec,
    float_min_vec,
    in_eviction_order_vec,
    observed_max_ms_vec,
    watermark_passed_vec,
)
from .support import Accumulation, AggregateKey, AggregatePlan, aggregate_plan
from .windows import WINDOW, join_dtype, rows_of, window_end, window_series

Row = tuple[Any, ...]
_INTS = {"tinyint", "smallint", "int", "bigint"}
_FLOATS = {"double", "float"}
_EXACT = Context(prec=200)


def _dtype(kind: str, scale: int | None) -> Any:
    """The dtype of a key's or argument's values (a DECIMAL's at its scale, a window's the
    struct ``WINDOW``)."""
    if kind == "window":
        return WINDOW
    return decimal_dtype(scale or 0) if kind == "decimal" else dtype_of(kind)


def _tuple(value: Any) -> Any:
    """A window struct's value (a dict) as the reference's ``(start, end)``; None stays."""
    return None if value is None else (value["start"], value["end"])


def _below(hit: pl.DataFrame, a: str, batch: pl.DataFrame, x: str, limit: int) -> bool:
    """Whether no prefix of any group's running sum can reach ``limit`` in magnitude this
    batch: the largest sum in state (column ``a`` of the groups the batch updates) plus the
    batch's values' magnitudes (column ``x``; a DECIMAL's unscaled integers) stay below
    half of it, reckoned in doubles (their relative error, under 10 ** -9 here, is covered
    by the other half many times over).  Then every prefix fits and the sum is a plain
    ``sum``: no cumulative sum to find where one overflows."""

    def magnitude(frame: pl.DataFrame, column: str, largest: bool) -> float:
        if frame.height == 0:
            return 0.0
        c = pl.col(column)
        if isinstance(frame.schema[column], pl.Decimal):
            c = c.to_physical()
        c = c.cast(pl.Float64).abs()
        found = frame.select(c.max() if largest else c.sum()).item()
        return 0.0 if found is None else float(found)

    return magnitude(hit, a, True) + magnitude(batch, x, False) < limit / 2


def _plain_sum(v: pl.Expr) -> pl.Expr:
    """A group's sum of integers (a DECIMAL's unscaled ones) known not to overflow: NULL
    when it has no value, as a running sum that never started."""
    return pl.when(v.count() > 0).then(v.sum())


def _struct(value: Any) -> Any:
    """A reference window ``(start, end)`` as a ``WINDOW`` struct's value; None stays."""
    return None if value is None else {"start": value[0], "end": value[1]}


def _window_order(v: pl.Expr) -> pl.Expr:
    """A window column's order as one Int128 (start, then end; NULL for a NULL window)."""
    start = v.struct.field("start").cast(pl.Int128)
    end = v.struct.field("end").cast(pl.Int128)
    return pl.when(v.is_not_null()).then(start * (1 << 64) + (end + (1 << 63)))


def _unscaled(value: Decimal, scale: int) -> int:
    return int(value.scaleb(scale, _EXACT))


def _scaled(unscaled: int, scale: int) -> Decimal:
    return Decimal(unscaled).scaleb(-scale, _EXACT)


class FrameGroups:
    """The polars storage of an aggregate's state (``aggregate_core.AggregateStore``): one
    frame of groups (columns ``k..``, ``a..``, ``_seq``, ``_t``), batches read as frames
    (columns ``c0..``) or rows."""

    def __init__(
        self,
        node: AggregateNode,
        input_columns: Sequence[tuple[str, str]],
        ansi: bool,
        found: AggregatePlan | None = None,
    ) -> None:
        """``found``: the aggregate's plan, where the decision to run it columnar already
        worked it out (``operators.placement``)."""
        if found is None:
            planned = aggregate_plan(node, input_columns, ansi)
            assert not isinstance(planned, str), planned
            found = planned
        self.ansi = ansi
        self.keys: list[AggregateKey] = found.keys
        self.accs: list[Accumulation] = found.accumulators
        calls: list[exp.Expression] = found.calls
        self.watermark_key = node.watermark_key_index
        # each output that is a key or a call: its position in the group tuple
        direct = {
            o: at
            for o, out in enumerate(node.output)
            if (at := group_position(node, calls, out.expr)) is not None
        }
        layout = Layout.of(("input", list(input_columns)))
        self.outputs = output_functions(node, calls, layout, ansi)
        self.output_kinds = [o.type.name for o in node.output]
        self.output_dtypes = [join_dtype(o.type) for o in node.output]
        self.output_windows = tuple(o for o, k in enumerate(self.output_kinds) if k == "window")
        self.columnar_output = all(d is not None for d in self.output_dtypes)
        self.fast = self.columnar_output and len(direct) == len(node.output)
        self.direct = direct
        self.key_dtypes = {
            f"k{i}": pl.Int64 if k.window else _dtype(k.kind, k.scale)
            for i, k in enumerate(self.keys)
        }
        # each input column read: its dtype (a DECIMAL's scale is its key's or argument's)
        self.column_dtypes = {k.column: _dtype(k.kind, k.scale) for k in self.keys}
        self.column_dtypes.update(
            {a.column: _dtype(a.kind, a.scale) for a in self.accs if a.column is not None}
        )
        # a DECIMAL sum or avg: the reference accumulator, whose result each group's is
        self.decimal_results: dict[int, Accumulator] = {
            j: Accumulator(a.name, None, "decimal", (a.precision or 38, a.scale or 0), ansi)
            for j, a in enumerate(self.accs)
            if a.kind == "decimal" and a.name in ("sum", "avg")
        }
        self.key_names = list(self.key_dtypes)
        self.state_schema: dict[str, Any] = dict(self.key_dtypes)
        for j, acc in enumerate(self.accs):
            self.state_schema[f"a{j}"] = self._state_dtype(acc)
            if acc.name == "avg":
                self.state_schema[f"b{j}"] = pl.Int64
            if j in self.decimal_results:
                self.state_schema[f"f{j}"] = pl.Boolean
        self.state_schema.update({"_seq": pl.Int64, "_t": pl.Int64})
        self.state = pl.DataFrame(schema=self.state_schema)
        self.counter = 0  # the reference index's ids handed out (its ``counter``)
        self.next_seq = 0

    @staticmethod
    def _state_dtype(acc: Accumulation) -> Any:
        if acc.name == "count":
            return pl.Int64
        if acc.name == "approx_count_distinct":
            return pl.List(_dtype(acc.kind, acc.scale))
        if acc.name in ("sum", "avg"):
            if acc.kind == "decimal":
                return pl.Int128  # the unscaled sum (at the argument's scale)
            return pl.Float64 if acc.kind in _FLOATS else pl.Int64
        return _dtype(acc.kind, acc.scale)

    # ---------------------------------------------------------------- keys

    def _time_expr(self) -> pl.Expr:
        """The watermark key's time of each group (the reference's ``_key_time``)."""
        if self.watermark_key is None:
            return pl.lit(None, dtype=pl.Int64)
        key = self.keys[self.watermark_key]
        c = pl.col(f"k{self.watermark_key}")
        if key.window is not None:
            return (c + key.window[0]).cast(pl.Int64)
        if key.kind == "window":
            return window_end(c).cast(pl.Int64)
        return c.cast(pl.Int64)

    def _key_tuple(self, values: Sequence[Any]) -> tuple[Any, ...]:
        """A group's key columns (``k0..``) as the reference's key: a window as its
        ``(start, end)``."""
        return tuple(
            (v, v + key.window[0])
            if key.window is not None and v is not None
            else _tuple(v)
            if key.kind == "window"
            else v
            for key, v in zip(self.keys, values, strict=True)
        )

    def _batch(self, data: Batch) -> pl.DataFrame:
        """The batch's rows as keys ``k..``, arguments ``x..`` and row number ``_row``, rows
        without a window (NULL time) left out."""
        needed = sorted(
            {k.column for k in self.keys} | {a.column for a in self.accs if a.column is not None}
        )
        if isinstance(data, Frame):
            frame = data.frame.select([f"c{i}" for i in needed]) if len(data) else None
        else:
            rows = data.rows
            frame = None
            if rows:
                frame = pl.DataFrame(
                    [
                        window_series(f"c{i}", [r[i] for r in rows])
                        if self.column_dtypes[i] == WINDOW
                        else pl.Series(
                            f"c{i}",
                            [r[i] for r in rows],
                            dtype=self.column_dtypes[i],
                            strict=True,
                        )
                        for i in needed
                    ]
                )
        if frame is None:
            frame = pl.DataFrame(schema={f"c{i}": self.column_dtypes[i] for i in needed})
        columns: list[pl.Expr] = []
        keep: pl.Expr | None = None
        for i, key in enumerate(self.keys):
            c = pl.col(f"c{key.column}")
            if key.window is not None:
                duration, start = key.window
                columns.append((c - (c - start) % duration).alias(f"k{i}"))
                present = c.is_not_null()
                keep = present if keep is None else keep & present
            else:
                columns.append(c.alias(f"k{i}"))
        for j, acc in enumerate(self.accs):
            if acc.column is not None:
                columns.append(pl.col(f"c{acc.column}").alias(f"x{j}"))
        columns.append(pl.int_range(pl.len(), dtype=pl.Int64).alias("_row"))
        batch = frame.select(columns)
        if keep is not None:
            batch = batch.filter(frame.select(keep.alias("_k")).get_column("_k"))
        return batch

    # ---------------------------------------------------------------- the store

    def observed(self, value: Batch, node: WatermarkNode | None) -> Batch:
        """The input (a frame, or rows) observed by its watermark node."""
        if node is not None:
            if isinstance(value, Frame):
                column = value.frame.get_column(f"c{node.time_index}")
                node.observe_max(observed_max_ms_vec(column))
            else:
                node.observe(value.rows)
        return value

    def update(
        self,
        data: Batch,
        late_us: int | None,
        keep: bool,
        grouped: list[tuple[Row, Key]] | None,
    ) -> tuple[pl.DataFrame, Late]:
        """The batch's late rows dropped (their distinct keys counted), the rest merged."""
        batch = self._batch(data)
        late = Late(0, None)
        if late_us is not None and self.watermark_key is not None and batch.height:
            passed = batch.select(
                watermark_passed_vec(self._time_expr(), late_us).alias("_l")
            ).get_column("_l")
            if passed.any():
                dropped = batch.filter(passed)
                late = Late(
                    dropped.select(self.key_names).unique().height,
                    self._dropped(data, dropped) if keep else None,
                )
                batch = batch.filter(~passed)
        if grouped is not None and batch.height:
            rows = data.to_rows()
            keys = [self._key_tuple(values) for values in batch.select(self.key_names).rows()]
            picked = batch.get_column("_row").to_list()
            grouped.extend((rows[i], key) for i, key in zip(picked, keys, strict=True))
        return (self._merge(batch) if batch.height else self.state.clear()), late

    def groups(self) -> pl.DataFrame:
        return self.state.sort("_seq")

    def count(self, groups: pl.DataFrame) -> int:
        return groups.height

    def size(self) -> int:
        return self.state.height

    def emit(self, groups: pl.DataFrame) -> Batch:
        """A frame when every output has a columnar type, else the reference's rows."""
        return self._batch_of(self._output(groups))

    def nothing(self) -> Batch:
        return self._batch_of(self._empty_output())

    def _batch_of(self, out: Any) -> Batch:
        return Frame(out, self.output_windows) if self.columnar_output else Rows(out)

    def group_keys(self, groups: pl.DataFrame) -> list[Key]:
        return [self._key_tuple(values) for values in groups.select(self.key_names).rows()]

    def batch(self, out: Batch) -> Batch:
        return out

    def _dropped(self, data: Batch, late: pl.DataFrame) -> Dropped:
        """The input rows of ``late`` (``_batch``'s rows whose group is late) with each one's
        group key in the reference's form (a window as its (start, end)) and its time."""
        rows = data.to_rows()
        times = late.select(self._time_expr().alias("_t")).get_column("_t").to_list()
        keys = [self._key_tuple(values) for values in late.select(self.key_names).rows()]
        picked = [rows[i] for i in late.get_column("_row").to_list()]
        return Dropped(0, picked, times, keys)

    def _merge(self, batch: pl.DataFrame) -> pl.DataFrame:
        """Fold the batch's rows into state; return the updated groups (state columns) in
        the order the batch first updated them."""
        keys = self.key_names
        state = self.state
        hit = (
            state.join(batch.select(keys).unique(), on=keys, how="semi", nulls_equal=True)
            if state.height
            else state
        )
        pseudo: list[pl.Expr] = [pl.col(k) for k in keys]
        rows: list[pl.Expr] = [pl.col(k) for k in keys]
        aggs: list[pl.Expr] = []
        overflow: list[tuple[int, str]] = []
        for j, acc in enumerate(self.accs):
            x, a = f"x{j}", f"a{j}"
            dtype = self.state_schema[a]
            if acc.name == "count":
                pseudo.append(pl.col(a).alias(x))
                present = pl.lit(1) if acc.column is None else pl.col(x).is_not_null()
                rows.append(present.cast(pl.Int64).alias(x))
                aggs.append(pl.col(x).sum().alias(a))
                continue
            if acc.name == "approx_count_distinct":
                pseudo.append(pl.col(a).alias(x))
                rows.append(pl.concat_list(pl.col(x)).alias(x))
                aggs.append(
                    pl.col(x)
                    .list.explode(keep_nulls=False, empty_as_null=False)
                    .drop_nulls()
                    .unique()
                    .alias(a)
                )
                continue
            pseudo.append(pl.col(a).alias(x))
            if j in self.decimal_results:
                rows.append(pl.col(x).to_physical().cast(pl.Int128).alias(x))
                pseudo.append(pl.col(f"f{j}").alias(f"g{j}"))
                rows.append(pl.lit(False).alias(f"g{j}"))
            else:
                rows.append(pl.col(x).cast(dtype))
            if acc.name == "avg":
                pseudo.append(pl.col(f"b{j}").alias(f"n{j}"))
                rows.append(pl.col(x).is_not_null().cast(pl.Int64).alias(f"n{j}"))
                aggs.append(pl.col(f"n{j}").sum().alias(f"b{j}"))
            v = pl.col(x)
            if acc.name in ("sum", "avg"):
                if j in self.decimal_results:
                    total_type = self.decimal_results[j].decimal
                    assert total_type is not None
                    if _below(hit, a, batch, x, 10 ** total_type[0][0]):
                        gone = pl.col(f"g{j}").any()
                        total = pl.when(gone).then(None).otherwise(_plain_sum(v))
                    else:
                        gone, total = decimal_sum_vec(v, pl.col(f"g{j}"), total_type[0][0])
                    aggs.append(gone.alias(f"f{j}"))
                    aggs.append(total.alias(a))
                elif acc.kind in _FLOATS:
                    aggs.append(double_sum_vec(v).alias(a))
                elif _below(hit, a, batch, x, 2**63):
                    aggs.append(_plain_sum(v).alias(a))
                else:
                    cs = v.cast(pl.Int128).cum_sum()
                    total = cs.drop_nulls().last()
                    if not self.ansi:
                        total = bigint_wrapped_vec(total)
                    aggs.append(total.alias(a))
                    if self.ansi:
                        aggs.append(
                            pl.col("_row").filter(bigint_overflows_vec(cs)).min().alias(f"o{j}")
                        )
                        overflow.append((j, f"o{j}"))
            elif acc.kind in _FLOATS:
                aggs.append((float_min_vec(v) if acc.name == "min" else float_max_vec(v)).alias(a))
            elif acc.kind == "window":  # equal windows are the same value: any one of them
                highest = acc.name == "max"
                ordered = v.sort_by(_window_order(v), descending=highest, nulls_last=True)
                aggs.append(ordered.first().alias(a))
            elif acc.name == "min":
                aggs.append(v.min().alias(a))
            else:
                aggs.append(v.max().alias(a))
        row = pl.col("_row")
        united = pl.concat(
            [
                hit.select(
                    *pseudo,
                    pl.lit(-1, dtype=pl.Int64).alias("_row"),
                    pl.col("_seq").alias("_old"),
                ),
                batch.select(
                    *rows,
                    row,
                    pl.lit(None, dtype=pl.Int64).alias("_old"),
                ),
            ],
            how="vertical",
        )
        grouped = united.group_by(keys, maintain_order=True).agg(
            *aggs,
            row.filter(row >= 0).min().alias("_first"),
            pl.col("_old").max(),
        )
        grouped = grouped.sort("_first")
        if overflow:
            earliest: tuple[int, int] | None = None  # (row, accumulator): the reference's
            for j, name in overflow:  # order of updates
                at = grouped.get_column(name).min()
                if at is not None and (earliest is None or (int(at), j) < earliest):  # type: ignore[arg-type]
                    earliest = (int(at), j)  # type: ignore[arg-type]
            if earliest is not None:
                name = self.accs[earliest[1]].name
                raise bigint_overflow(name)
        fresh = pl.col("_old").is_null()
        t = self._time_expr()
        updated = grouped.select(
            *[pl.col(c).cast(d) for c, d in self.state_schema.items() if not c.startswith("_")],
            pl.when(fresh)
            .then(self.next_seq + fresh.cast(pl.Int64).cum_sum() - 1)
            .otherwise(pl.col("_old"))
            .alias("_seq"),
            t.alias("_t"),
            fresh.alias("_fresh"),
        )
        new = updated.filter(pl.col("_fresh"))
        self.next_seq += new.height
        indexed = new.get_column("_t").is_not_null().sum()
        self.counter += int(indexed)
        updated = updated.drop("_fresh")
        rest = (
            state.join(updated.select(keys), on=keys, how="anti", nulls_equal=True)
            if hit.height
            else state
        )
        self.state = pl.concat([rest, updated], how="vertical")
        return updated

    def evict(self, threshold_us: int) -> pl.DataFrame:
        """Remove the groups whose watermark key time is ``<= threshold_us``; return them in
        the order the reference's index pops them: by (time, id), the ids growing in the
        order the groups were made, as ``_seq`` does."""
        state = self.state
        gone = watermark_passed_vec(pl.col("_t"), threshold_us)
        evicted = state.filter(gone)
        self.state = state.filter(~gone) if evicted.height else state
        if evicted.height > 1:
            evicted = in_eviction_order_vec(evicted, "_t", "_seq")
        return evicted

    # ---------------------------------------------------------------- output

    def _empty_output(self) -> Any:
        if self.columnar_output:
            return pl.DataFrame(schema={f"c{o}": d for o, d in enumerate(self.output_dtypes)})
        return []

    def _results(self, groups: pl.DataFrame) -> pl.DataFrame:
        """The group tuples (keys, then each call's result) as columns ``g0..``."""
        columns: list[pl.Expr] = []
        for i, key in enumerate(self.keys):
            k = pl.col(f"k{i}")
            if key.window is not None:
                k = pl.when(k.is_not_null()).then(pl.struct(start=k, end=k + key.window[0]))
            columns.append(k.alias(f"g{i}"))
        n = len(self.keys)
        decimals = self._decimal_results(groups)
        for j, acc in enumerate(self.accs):
            a = pl.col(f"a{j}")
            if j in decimals:
                value = pl.lit(decimals[j])
            elif acc.name == "avg":
                b = pl.col(f"b{j}")
                value = pl.when(b == 0).then(None).otherwise(a.cast(pl.Float64) / b)
            elif acc.name == "approx_count_distinct":
                value = a.list.len().cast(pl.Int64)
            else:
                value = a
            columns.append(value.alias(f"g{n + j}"))
        return groups.select(columns)

    def _decimal_results(self, groups: pl.DataFrame) -> dict[int, pl.Series]:
        """Each DECIMAL sum's or avg's result per group: the reference accumulator's
        ``result`` of the group's state, group after group and call after call, so an
        ANSI overflow is raised for the group and call the reference raises it for.

        Where every call is a ``sum`` and no group's sum overflowed under ANSI (no error to
        raise), the results are columns: a sum's result type is its buffer's, which its
        value fits while the flag is not set (``decimal_sum_vec``), so the result is the
        unscaled sum at the argument's scale, NULL for no value or (without ANSI) an
        overflowed sum."""
        if not self.decimal_results:
            return {}
        if all(acc.name == "sum" for acc in self.decimal_results.values()) and not (
            self.ansi and any(groups.get_column(f"f{j}").any() for j in self.decimal_results)
        ):
            return self._decimal_sums(groups)
        states = []
        for j, acc in self.decimal_results.items():
            scale = self.accs[j].scale or 0
            sums = groups.get_column(f"a{j}").to_list()
            gone = groups.get_column(f"f{j}").to_list()
            counts = (
                groups.get_column(f"b{j}").to_list() if acc.name == "avg" else [None] * len(sums)
            )
            states.append(
                (
                    acc,
                    [
                        [
                            DECIMAL_OVERFLOW if g else None if u is None else _scaled(u, scale),
                            c,
                        ]
                        for u, g, c in zip(sums, gone, counts, strict=True)
                    ],
                )
            )
        values: list[list[Any]] = [[] for _ in states]
        for r in range(groups.height):
            for column, (acc, state) in zip(values, states, strict=True):
                column.append(acc.result(state[r] if acc.name == "avg" else state[r][:1]))
        out = {}
        for j, column in zip(self.decimal_results, values, strict=True):
            acc = self.decimal_results[j]
            assert acc.decimal is not None
            dtype = decimal_dtype(acc.decimal[1][1])
            out[j] = pl.Series(f"g{j}", column, dtype=dtype, strict=True)
        return out

    def _decimal_sums(self, groups: pl.DataFrame) -> dict[int, pl.Series]:
        """``_decimal_results`` of sums, as columns: each unscaled Int128 sum made the
        DECIMAL it holds (as a DECIMAL of scale 0, times 10 ** -scale: exact, the product's
        scale the sum of the two), NULL where it overflowed."""
        columns = []
        for j, acc in self.decimal_results.items():
            scale = self.accs[j].scale or 0
            assert acc.decimal is not None
            value = pl.col(f"a{j}").cast(pl.Decimal(38, 0))
            if scale:
                value = value * pl.lit(_scaled(1, scale), dtype=decimal_dtype(scale))
            columns.append(
                pl.when(pl.col(f"f{j}"))
                .then(None)
                .otherwise(value)
                .cast(decimal_dtype(acc.decimal[1][1]))
                .alias(f"g{j}")
            )
        frame = groups.select(columns)
        return {j: frame.get_column(f"g{j}") for j in self.decimal_results}

    def _output(self, groups: pl.DataFrame) -> Any:
        if groups.height == 0:
            return self._empty_output()
        results = self._results(groups)
        if self.fast:
            return results.select(
                [
                    pl.col(f"g{self.direct[o]}").cast(d).alias(f"c{o}")
                    for o, d in enumerate(self.output_dtypes)
                ]
            )
        n = len(self.keys)
        windows = [i for i, k in enumerate(self.keys) if k.is_window]
        windows += [
            n + j for j, a in enumerate(self.accs) if a.kind == "window" and a.name != "count"
        ]
        tuples = rows_of(results, list(results.columns), windows)
        outputs = self.outputs
        rows = [tuple(g(group, None) for g in outputs) for group in tuples]
        if not self.columnar_output:
            return rows
        return pl.DataFrame(
            [
                window_series(f"c{o}", [r[o] for r in rows])
                if o in self.output_windows
                else pl.Series(f"c{o}", [r[o] for r in rows], dtype=d, strict=True)
                for o, d in enumerate(self.output_dtypes)
            ]
        )

    # ---------------------------------------------------------------- checkpoint

    def snapshot(self) -> dict[str, Any]:
        """The reference's form (``AggregateOperator.snapshot``)."""
        state = self.state.sort("_seq")
        n = len(self.keys)
        names = self.key_names + [f"a{j}" for j in range(len(self.accs))]
        groups = []
        counts = {
            j: state.get_column(f"b{j}").to_list()
            for j, a in enumerate(self.accs)
            if a.name == "avg"
        }
        flags = {j: state.get_column(f"f{j}").to_list() for j in self.decimal_results}
        for r, row in enumerate(state.select(names).rows()):
            key = self._key_tuple(row[:n])
            states: list[list[Any]] = []
            for j, acc in enumerate(self.accs):
                value = row[n + j]
                if acc.kind == "window" and acc.name != "count":  # structs as tuples
                    value = (
                        [_tuple(v) for v in value]
                        if acc.name == "approx_count_distinct"
                        else _tuple(value)
                    )
                if j in self.decimal_results:  # unscaled, or overflowed (DECIMAL_OVERFLOW)
                    value = (
                        DECIMAL_OVERFLOW
                        if flags[j][r]
                        else None
                        if value is None
                        else _scaled(value, acc.scale or 0)
                    )
                if acc.name == "approx_count_distinct":
                    states.append([sorted(value, key=repr)])
                elif acc.name == "avg":
                    states.append([value, counts[j][r]])
                else:
                    states.append([value])
            groups.append((key, states))
        return {"groups": groups, "counter": self.counter}

    def restore(self, data: dict[str, Any]) -> None:
        groups = data["groups"]
        self.next_seq = len(groups)
        if not groups:
            self.state = pl.DataFrame(schema=self.state_schema)
            self.counter = data["counter"]
            return
        columns: dict[str, list[Any]] = {name: [] for name in self.state_schema}
        for key, states in groups:
            for i, k in enumerate(self.keys):
                v = key[i]
                columns[f"k{i}"].append(
                    v[0]
                    if k.window is not None and v is not None
                    else _struct(v)
                    if k.kind == "window"
                    else v
                )
            for j, acc in enumerate(self.accs):
                s = states[j]
                value = s[0]
                if acc.kind == "window" and acc.name != "count":  # tuples as structs
                    value = (
                        [_struct(v) for v in value]
                        if acc.name == "approx_count_distinct"
                        else _struct(value)
                    )
                if j in self.decimal_results:
                    gone = value is not None and value.is_nan()
                    columns[f"f{j}"].append(gone)
                    value = None if gone or value is None else _unscaled(value, acc.scale or 0)
                columns[f"a{j}"].append(
                    list(value) if acc.name == "approx_count_distinct" else value
                )
                if acc.name == "avg":
                    columns[f"b{j}"].append(s[1])
        columns["_seq"] = list(range(len(groups)))
        frame = pl.DataFrame(
            [
                pl.Series(name, values, dtype=self.state_schema[name], strict=True)
                for name, values in columns.items()
                if name != "_t"
            ]
        )
        self.state = frame.with_columns(self._time_expr().alias("_t")).select(
            list(self.state_schema)
        )
        indexed = int(self.state.get_column("_t").is_not_null().sum())
        self.counter = data["counter"] + indexed


class ColumnarAggregate(StreamingAggregate[Batch, pl.DataFrame, Batch]):
    """One ``aggregate`` of the plan on the polars storage (the columnar engine's)."""

    store: FrameGroups

    def __init__(
        self,
        node: AggregateNode,
        input_columns: Sequence[tuple[str, str]],
        ansi: bool,
        found: AggregatePlan | None = None,
    ) -> None:
        super().__init__(node, FrameGroups(node, input_columns, ansi, found))
