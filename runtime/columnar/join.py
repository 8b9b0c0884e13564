"""The stream-stream join, a batch at a time on polars: the same Plan, the same passes and the
same meaning as the row-at-a-time reference (``runtime/rows/join.py``), which stays the readable
definition.  Each pass is one vectorised equi-join of the batch against the other side's state.

State per side is one frame: the side's columns ``c0..``, ``_id`` (insertion order, as the
reference's ids), ``_t`` (the value the state predicate compares with the state watermark)
and ``_m`` (matched flag).  The frame is kept in ``_id`` order, so a join that keeps the
probe's order and then the state's gives the pairs in the reference's order: probe row, then
state row; evicted rows come out in (``_t``, ``_id``) order, as the reference's index pops
them.  Nothing else decides an order, so the snapshot (rows, ids, flags) restores it all.

Every decision is the plan's: the append rule, LeftSemi's order and the removal counting come
from ``JoinNode.quirks``, the state rules and thresholds from ``Side.state``, the range from
``JoinNode.time_range``.  Expressions other than plain columns and the plan's time range are
evaluated with the reference evaluator (``eval.compile_expr``) over the rows of the columns
they read, so their values are the reference's.  A window (a side's projected ``window()``
or a window output) is a struct column (``windows.py``): keys compare it whole, state
predicates and late filters read its end, and it crosses to the evaluator, snapshots and
output rows as the reference's tuple.  ``support.join_unsupported`` names what this operator
does not run; the query runs such a join on the reference operator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl
from sqlglot import exp

from ...compiler.planning.plan import JoinNode, Side, StateRule
from ..engine.batches import Batch, Frame
from ..engine.eval import Getter, Layout, column_slot, compile_expr, window_arguments
from ..engine.join_core import JoinCore, JoinFacts, JoinMetrics
from ..engine.late import Dropped
from ..engine.spark_rules import Skipped
from ..engine.watermark import WatermarkNode
from .frames import as_frame
from .spark_rules_vec import (
    in_eviction_order_vec,
    observed_max_ms_vec,
    stored_vec,
    watermark_passed_vec,
)
from .windows import join_dtype, project_windows, rows_of, window_end, window_series

Row = tuple[Any, ...]


class _Side:
    """One side's stored rows as a frame, and what the operator needs to know of the side.

    The frame is in ``_id`` order, which the probes rely on: ``append`` adds larger ids at
    the end, ``mark``, ``remove`` and ``evict`` keep the order, ``restore`` sorts by id."""

    def __init__(
        self,
        side: Side,
        columns: list[tuple[str, str]],
        keys: list[int],
        time_index: int | None,
        track_matched: bool,
    ) -> None:
        self.side = side
        self.kinds = [k for _, k in columns]
        self.width = len(columns)
        self.keys = keys  # column index of each join key
        self.time_index = time_index  # column whose value _t is (None: never evicted)
        self.track_matched = track_matched
        # the input's columns by their SQL types (a DECIMAL's dtype has its scale), then the
        # windows the side projects (``join.side_layout``)
        types: list[Any] = [c.type for c in side.columns] + self.kinds[len(side.columns) :]
        self.schema = {f"c{i}": join_dtype(k) for i, k in enumerate(types)}
        self.windows = [i for i, k in enumerate(self.kinds) if k == "window"]
        self.state = self._empty()
        self.next_id = 0
        self.min_time: int | None = None  # smallest _t stored: a no-op eviction costs O(1)

    def _empty(self) -> pl.DataFrame:
        return pl.DataFrame(
            schema={
                **self.schema,
                "_id": pl.Int64,
                "_t": pl.Int64,
                "_m": pl.Boolean,
            }
        )

    @property
    def size(self) -> int:
        return self.state.height

    def time_expr(self) -> pl.Expr:
        """The value the state predicate compares (a window's end)."""
        if self.time_index is None:
            return pl.lit(None, dtype=pl.Int64)
        return time_of(f"c{self.time_index}", self.kinds[self.time_index])

    def append(self, rows: pl.DataFrame, matched: pl.Series | None) -> int:
        """Store ``rows`` (columns c0.., in order) with new ids; returns how many."""
        n = rows.height
        if n == 0:
            return 0
        flags = (
            matched
            if matched is not None and self.track_matched
            else pl.Series("_m", [False] * n, dtype=pl.Boolean)
        )
        new = rows.select(
            *[pl.col(c) for c in self.schema],
            pl.int_range(self.next_id, self.next_id + n, dtype=pl.Int64).alias("_id"),
            self.time_expr().alias("_t"),
            pl.lit(flags.alias("_m")).alias("_m"),
        )
        self.next_id += n
        low = new.get_column("_t").min()
        if low is not None and (self.min_time is None or low < self.min_time):  # type: ignore[operator]
            self.min_time = int(low)  # type: ignore[arg-type]
        # one chunk: a probe gathers the stored rows it matches at random, which on a state of
        # several chunks took about 4x the copy (measured: 290k stored rows with a string
        # column, 68k gathered, 18.7 ms on 4 chunks, 2.4 ms on one; the copy 4.7 ms)
        self.state = pl.concat([self.state, new], how="vertical", rechunk=True)
        return n

    def mark(self, ids: pl.Series) -> None:
        if self.track_matched and ids.len():
            self.state = self.state.with_columns(
                (pl.col("_m") | pl.col("_id").is_in(ids.implode())).alias("_m")
            )

    def remove(self, ids: pl.Series) -> None:
        if ids.len():
            self.state = self.state.filter(~pl.col("_id").is_in(ids.implode()))
            self._recompute_min()

    def _recompute_min(self) -> None:
        low = self.state.get_column("_t").min()
        self.min_time = None if low is None else int(low)  # type: ignore[arg-type]

    def evict(self, threshold: int) -> pl.DataFrame | None:
        """Remove the rows whose ``_t <= threshold``; return them (with ``_m``), in the
        state's order (by id); None when nothing is evicted."""
        if self.min_time is None or self.min_time > threshold:
            return None
        state = self.state
        gone = watermark_passed_vec(pl.col("_t"), threshold)
        evicted = state.filter(gone)
        self.state = state.filter(~gone)
        self._recompute_min()
        return evicted

    # ---------------------------------------------------------------- checkpoint

    def snapshot(self) -> dict[str, Any]:
        """The reference's snapshot form (``SideState.snapshot``), so either engine resumes
        the other's checkpoint."""
        columns = [f"c{i}" for i in range(self.width)]
        rows = rows_of(self.state, columns, self.windows)
        ids = self.state.get_column("_id").to_list()
        flags = self.state.get_column("_m").to_list()
        keys = self.keys
        values = []
        for row, ident, matched in zip(rows, ids, flags, strict=True):
            key = row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys)
            values.append((key, ident, row, bool(matched)))
        return {"next_id": self.next_id, "values": values}

    def restore(self, data: dict[str, Any]) -> None:
        values = sorted(data["values"], key=lambda v: v[1])
        self.state = self._empty()
        self.min_time = None
        if values:
            rows = [v[2] for v in values]
            columns = list(zip(*rows, strict=True))
            frame = pl.DataFrame(
                [
                    window_series(name, columns[i])
                    if i in self.windows
                    else pl.Series(name, columns[i], dtype=dtype, strict=True)
                    for i, (name, dtype) in enumerate(self.schema.items())
                ]
            )
            self.state = frame.select(
                *[pl.col(c) for c in self.schema],
                pl.Series("_id", [v[1] for v in values], dtype=pl.Int64),
                self.time_expr().alias("_t"),
                pl.Series("_m", [bool(v[3]) and self.track_matched for v in values]),
            )
            self._recompute_min()
        self.next_id = data["next_id"]


def _renamed(frame: pl.DataFrame, width: int, prefix: str) -> pl.DataFrame:
    return frame.rename({f"c{i}": f"{prefix}{i}" for i in range(width)})


class SideFilters:
    """A side's filters below and above its watermark node, then its windows, on frames (the
    reference's ``SideInput``).  Each filter runs on the rows the previous ones kept, in the
    reference's order; the windows are projected last (``windows.project_windows``)."""

    def __init__(self, side: Side, ansi: bool) -> None:
        columns = [(c.name, c.type.name) for c in side.columns]
        layout = Layout.of((side.name, columns))
        index = {name: i for i, (name, _) in enumerate(columns)}
        self.width = len(columns)
        self.windows = [(index[w.time_column], *window_arguments(w.expr)) for w in side.windows]
        self.below: list[Getter | int] = [
            *(compile_expr(p, layout, ansi=ansi) for p in side.filters_below_watermark),
            *(index[n] for n in side.not_null_below_watermark),
        ]
        self.above: list[Getter | int] = [
            *(compile_expr(p, layout, ansi=ansi) for p in side.filters_above_watermark),
            *(index[n] for n in side.not_null_above_watermark),
        ]

    @staticmethod
    def apply(frame: pl.DataFrame, tests: Sequence[Getter | int]) -> pl.DataFrame:
        for test in tests:
            if frame.height == 0:
                return frame
            if isinstance(test, int):
                frame = frame.filter(pl.col(f"c{test}").is_not_null())
            else:
                keep = [test(row, None) is True for row in frame.rows()]
                frame = frame.filter(pl.Series(keep, dtype=pl.Boolean))
        return frame

    def project(self, frame: pl.DataFrame) -> pl.DataFrame:
        """The side's rows with its windows (none: ``frame`` itself)."""
        if not self.windows:
            return frame
        return project_windows(frame, self.windows, self.width)


def observe(node: WatermarkNode, frame: pl.DataFrame) -> None:
    """``WatermarkNode.observe`` of a frame (``spark_rules_vec.observed_max_ms_vec``)."""
    node.observe_max(observed_max_ms_vec(frame.get_column(f"c{node.time_index}")))


class ColumnarJoinStorage:
    """The join's state table on frames (``join_core.JoinStorage``): each side's ``_Side``.

    A batch is a frame of the side's columns as ``L0..`` / ``R0..`` with ``_p``, its rows'
    positions; pairs add the other side's columns and the stored rows' ``_id`` and ``_m``; an
    output part is a frame of output columns ``c0..`` and ``_p``, projected when emitted."""

    def __init__(self, facts: JoinFacts) -> None:
        node, ansi = facts.node, facts.ansi
        left_cols, right_cols = facts.layouts
        self.left_cols, self.right_cols = left_cols, right_cols
        one_left, one_right = facts.one

        def slot(e: exp.Expression, layout: Layout) -> int:
            found = column_slot(compile_expr(e, layout, ansi=ansi))
            assert found is not None
            return found[1]

        # a null-safe key's pairs compare its operands (the join matches NULL with NULL)
        left_keys = [slot(a, one_left) for a, _ in node.matched_keys]
        right_keys = [slot(b, one_right) for _, b in node.matched_keys]
        self.left = _Side(
            node.left,
            left_cols,
            left_keys,
            _eviction_column(node.left.state, left_cols, left_keys),
            facts.track_matched[0],
        )
        self.right = _Side(
            node.right,
            right_cols,
            right_keys,
            _eviction_column(node.right.state, right_cols, right_keys),
            facts.track_matched[1],
        )
        self.sides = (self.left, self.right)
        self.pre = facts.pre
        self.post = facts.post
        self.in_range = facts.in_range
        self.outputs: list[tuple[tuple[int, int] | None, Getter, Any]] = []
        for o in node.output:
            getter = compile_expr(o.expr, facts.both, ansi=ansi)
            self.outputs.append((column_slot(getter), getter, join_dtype(o.type)))
        # outputs that are windows (``Frame.windows``)
        self.output_windows = [j for j, o in enumerate(node.output) if o.type.name == "window"]
        # an output row whose window time is NULL is dropped before it is projected (the
        # reference's ``_guarded``): the column of each time, or its getter
        self.window_times = [column_slot(g) or g for g in facts.window_times]
        self.where_filter = facts.where_filter  # the WHERE's Filter above the join
        self.event_time = (_event_time(node.left, left_cols), _event_time(node.right, right_cols))

    # ---------------------------------------------------------------- expressions

    def _rows(self, frame: pl.DataFrame, prefix: str, width: int) -> list[Row]:
        """The rows of one side's columns (``L``/``R``) as the reference's evaluator reads
        them (windows as tuples)."""
        side = self.left if prefix == "L" else self.right
        return rows_of(frame, [f"{prefix}{i}" for i in range(width)], side.windows)

    def _project(self, pairs: pl.DataFrame, left: bool, right: bool) -> pl.DataFrame:
        """Output columns c0.. of pairs with columns L0.. / R0.. (a side that is absent is
        null-padded), keeping ``_p``."""
        lw, rw = len(self.left_cols), len(self.right_cols)
        fill = []
        if not left:
            fill += [
                pl.lit(None, dtype=self.left.schema[f"c{i}"]).alias(f"L{i}") for i in range(lw)
            ]
        if not right:
            fill += [
                pl.lit(None, dtype=self.right.schema[f"c{i}"]).alias(f"R{i}") for i in range(rw)
            ]
        if fill:
            pairs = pairs.with_columns(fill)
        if (self.window_times or self.where_filter is not None) and pairs.height:
            pairs = self._window_times_set(pairs)
        computed: dict[int, pl.Series] = {}
        if any(s is None for s, _, _ in self.outputs):
            lrows = self._rows(pairs, "L", lw)
            rrows = self._rows(pairs, "R", rw)
            columns: list[list[Any]] = [[] for _ in self.outputs]
            wanted = [(j, g) for j, (s, g, _) in enumerate(self.outputs) if s is None]
            for a, b in zip(lrows, rrows, strict=True):
                for j, g in wanted:
                    columns[j].append(g(a, b))
            for j, _ in wanted:
                computed[j] = (
                    window_series(f"c{j}", columns[j])
                    if j in self.output_windows
                    else pl.Series(f"c{j}", columns[j], dtype=self.outputs[j][2], strict=True)
                )
        exprs: list[Any] = [pl.col("_p")]
        for j, (s, _, dtype) in enumerate(self.outputs):
            if s is not None:
                exprs.append(
                    pl.col(f"{'L' if s[0] == 0 else 'R'}{s[1]}").cast(dtype).alias(f"c{j}")
                )
            else:
                exprs.append(pl.lit(computed[j]).alias(f"c{j}"))
        return pairs.select(exprs)

    def _window_times_set(self, pairs: pl.DataFrame) -> pl.DataFrame:
        """The pairs whose every output window time is not NULL (Spark's TimeWindowing
        filter ``isnotnull(time)``, the reference's ``_guarded``) and that pass the WHERE's
        Filter above the join."""
        keep: pl.Expr | None = None
        getters: list[Getter] = []
        for time in self.window_times:
            if isinstance(time, tuple):
                test = pl.col(f"{'L' if time[0] == 0 else 'R'}{time[1]}").is_not_null()
                keep = test if keep is None else keep & test
            else:
                getters.append(time)
        if keep is not None:
            pairs = pairs.filter(keep)
        where = self.where_filter
        if (getters or where is not None) and pairs.height:
            lrows = self._rows(pairs, "L", len(self.left_cols))
            rrows = self._rows(pairs, "R", len(self.right_cols))
            flags = [
                all(g(a, b) is not None for g in getters) and (where is None or where(a, b) is True)
                for a, b in zip(lrows, rrows, strict=True)
            ]
            pairs = pairs.filter(pl.Series(flags, dtype=pl.Boolean))
        return pairs

    def _pre(
        self, frame: pl.DataFrame, test: Getter | None, prefix: str, width: int
    ) -> pl.Series | None:
        """The pre-join filter's verdict per row (True only where it is TRUE)."""
        if test is None:
            return None
        return pl.Series(
            [test(r, None) is True for r in self._rows(frame, prefix, width)], dtype=pl.Boolean
        )

    def _pairs(self, probe: pl.DataFrame, state: _Side, probe_is_left: bool) -> pl.DataFrame:
        """The probe rows (``L``/``R`` columns and ``_p``) joined with the stored rows that
        satisfy the condition, in (probe row, stored row id) order; stored columns carry
        ``_id`` and ``_m``.

        The hash join and the range filter run on the keys, the range columns and row
        positions only (a lazy query); the join keeps the probe's order then the state's,
        which is that order: a probe is in ``_p`` order (``batch`` numbers its rows, and
        every later step filters) and a state in ``_id`` order (``_Side``'s invariant).  No
        sort is needed (a sort of the pairs took 3.6-3.9 s of 20 uniform batches of
        benchmarks/day_replay.py against 3.2-3.4 s).  Then every column is gathered once,
        for the pairs that are kept (measured about 2x faster than joining whole rows)."""
        mine, theirs = ("L", "R") if probe_is_left else ("R", "L")
        probe_side = self.left if probe_is_left else self.right
        # each pair once: a null-safe key's two pairs compare the same columns
        key_pairs = dict.fromkeys(zip(probe_side.keys, state.keys, strict=True))
        probe_keys = [f"{mine}{k}" for k, _ in key_pairs]
        stored_keys = [f"{theirs}{k}" for _, k in key_pairs]
        probe_cols, stored_cols = list(probe_keys), list(stored_keys)
        inside = None
        if self.in_range is not None:
            xa, xb, lower, upper = self.in_range
            x, y = f"L{xa}", f"R{xb}"
            for name in (x, y):
                (probe_cols if name.startswith(mine) else stored_cols).append(name)
            cx, cy = pl.col(x), pl.col(y)
            inside = cx.is_not_null() & cy.is_not_null() & (cy >= cx + lower) & (cy <= cx + upper)
        slim_probe = probe.lazy().select([*dict.fromkeys(probe_cols), "_p"]).with_row_index("_q")
        slim_stored = (
            _renamed(state.state.select([*state.schema, "_id"]), state.width, theirs)
            .lazy()
            .select([*dict.fromkeys(stored_cols), "_id"])
            .with_row_index("_r")
        )
        joined = slim_probe.join(
            slim_stored,
            left_on=probe_keys,
            right_on=stored_keys,
            how="inner",
            nulls_equal=True,
            coalesce=False,
            suffix="_stored",
            maintain_order="left_right",
        )
        if inside is not None:
            joined = joined.filter(inside)
        index: pl.DataFrame = joined.select("_q", "_r", "_p", "_id").collect()
        stored = _renamed(state.state.select([*state.schema, "_m"]), state.width, theirs)
        pairs = pl.concat(
            [
                probe.drop("_p").gather(index.get_column("_q")),
                stored.gather(index.get_column("_r")),
                index.select("_p", "_id"),
            ],
            how="horizontal",
        )
        if self.in_range is not None or self.post is None or pairs.height == 0:
            return pairs
        post = self.post
        lrows = self._rows(pairs, "L", len(self.left_cols))
        rrows = self._rows(pairs, "R", len(self.right_cols))
        keep = pl.Series(
            [post(a, b) is True for a, b in zip(lrows, rrows, strict=True)], dtype=pl.Boolean
        )
        return pairs.filter(keep)

    def _prefix(self, side: int) -> tuple[str, int]:
        return ("L", len(self.left_cols)) if side == 0 else ("R", len(self.right_cols))

    # ---------------------------------------------------------------- input

    def height(self, rows: pl.DataFrame) -> int:
        return rows.height

    def has_event_time(self, side: int) -> bool:
        return self.event_time[side] is not None

    def split_late(self, side: int, rows: pl.DataFrame, late_us: int) -> tuple[pl.DataFrame, int]:
        """Side ``side``'s rows that are not late (by a window's end: ``_event_time``), and
        how many are."""
        time = self.event_time[side]
        assert time is not None
        late = watermark_passed_vec(time, late_us)
        dropped = rows.select(late.sum()).item()
        if dropped:
            return rows.filter(~late), int(dropped)
        return rows, 0

    def late_rows(self, side: int, rows: pl.DataFrame, late_us: int) -> Dropped:
        time = self.event_time[side]
        assert time is not None
        gone = rows.filter(watermark_passed_vec(time, late_us))
        times = gone.select(time).to_series().to_list()
        state = self.sides[side]
        return Dropped(side, rows_of(gone, list(state.schema), state.windows), times)

    def batch(self, side: int, rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame | None]:
        """The rows (as ``L0..``/``R0..`` with ``_p``) the pre-join filter passes, and those
        it fails (None without a pre-join filter)."""
        prefix, width = self._prefix(side)
        frame = _renamed(rows, width, prefix).with_columns(
            pl.int_range(pl.len(), dtype=pl.Int64).alias("_p")
        )
        ok = self._pre(frame, self.pre[side], prefix, width)
        if ok is None:
            return frame, None
        return frame.filter(ok), frame.filter(~ok)

    # ---------------------------------------------------------------- probes

    def probe(self, side: int, batch: pl.DataFrame, first: bool = False) -> pl.DataFrame:
        pairs = self._pairs(batch, self.sides[1 - side], side == 0)
        if first:
            return pairs.unique(subset=["_p"], keep="first", maintain_order=True)
        return pairs

    def claim(self, pairs: pl.DataFrame, unmatched_only: bool) -> pl.DataFrame:
        if unmatched_only:
            pairs = pairs.filter(~pl.col("_m"))
        return pairs.filter(pl.col("_p") == pl.col("_p").min().over("_id"))

    def matched(self, batch: pl.DataFrame, pairs: pl.DataFrame) -> pl.Series:
        return batch.get_column("_p").is_in(pairs.get_column("_p").unique().implode())

    def unmatched(self, batch: pl.DataFrame, matched: pl.Series) -> pl.DataFrame:
        return batch.filter(~matched)

    def mark(self, side: int, pairs: pl.DataFrame) -> None:
        if self.sides[side].track_matched:  # (the ids' unique alone cost 10% of an inner join)
            self.sides[side].mark(pairs.get_column("_id").unique())

    def remove(self, side: int, batch: pl.DataFrame, pairs: pl.DataFrame) -> int:
        removed = pairs.get_column("_id")
        self.sides[side].remove(removed)
        return removed.len()

    # ---------------------------------------------------------------- storing

    def kept(
        self,
        side: int,
        batch: pl.DataFrame,
        matched: pl.Series | None,
        skipped: Skipped,
        threshold: int,
    ) -> tuple[pl.DataFrame, pl.Series | None]:
        """The rows that are stored, and their matched flags: ``spark_rules_vec.stored_vec``
        of the side's ``evicted_rows_skipped``."""
        state = self.sides[side]
        if state.time_index is None:
            return batch, matched
        if matched is None:
            matched = pl.Series("_m", [False] * batch.height, dtype=pl.Boolean)
        prefix, width = self._prefix(side)
        passed = watermark_passed_vec(state.time_expr(), threshold)
        keep = (
            _renamed_back(batch, width, prefix)
            .with_columns(matched.alias("_hit"))
            .with_columns(stored_vec(skipped, passed, pl.col("_hit")).alias("_keep"))
            .get_column("_keep")
        )
        return batch.filter(keep), matched.filter(keep)

    def append(self, side: int, batch: pl.DataFrame, matched: pl.Series | None) -> int:
        prefix, width = self._prefix(side)
        return self.sides[side].append(
            _renamed_back(batch, width, prefix), None if matched is None else matched.alias("_m")
        )

    def size(self, side: int) -> int:
        return self.sides[side].size

    def snapshot(self, side: int) -> dict[str, Any]:
        return self.sides[side].snapshot()

    def restore(self, side: int, data: dict[str, Any]) -> None:
        self.sides[side].restore(data)

    # ---------------------------------------------------------------- eviction

    def evict(self, side: int, threshold: int, ordered: bool) -> pl.DataFrame | None:
        """The evicted rows in the state's order, ``ordered`` or not: their (time, id) order
        is read only by ``emit_unmatched``, which sorts the unmatched ones alone (a columnar
        run has no observer, which would read every evicted row in that order)."""
        return self.sides[side].evict(threshold)

    def evict_count(self, side: int, threshold: int) -> int:
        return self.evicted_count(self.sides[side].evict(threshold))

    def evicted_count(self, evicted: pl.DataFrame | None) -> int:
        return 0 if evicted is None else evicted.height

    def emit_unmatched(self, side: int, evicted: pl.DataFrame | None) -> pl.DataFrame:
        if evicted is None or evicted.height == 0:
            return pl.DataFrame()
        prefix, width = self._prefix(side)
        unmatched = in_eviction_order_vec(evicted.filter(~pl.col("_m")), "_t", "_id")
        rows = _renamed(unmatched, width, prefix).with_columns(
            pl.lit(0, dtype=pl.Int64).alias("_p")
        )
        return self._project(rows, side == 0, side == 1)

    # ---------------------------------------------------------------- output

    def emit(self, pairs: pl.DataFrame, left: bool, right: bool) -> pl.DataFrame:
        return self._project(pairs, left, right)

    def emit_alone(self, side: int, batch: pl.DataFrame) -> pl.DataFrame:
        return self._project(batch, side == 0, side == 1)

    def ordered(self, parts: list[pl.DataFrame]) -> pl.DataFrame:
        return _ordered(parts)

    def project(self, part: pl.DataFrame) -> pl.DataFrame:
        return part  # (projected when emitted)

    def result(self, parts: list[pl.DataFrame]) -> pl.DataFrame:
        frames = [f.drop("_p") for f in parts if f.height]
        if not frames:
            return pl.DataFrame(schema={f"c{j}": d for j, (_, _, d) in enumerate(self.outputs)})
        return pl.concat(frames, how="vertical")


class ColumnarJoin(
    JoinCore[
        pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.Series, pl.DataFrame, "pl.DataFrame | None"
    ]
):
    """One ``join`` of the plan, run batch after batch on frames (columns ``c0..``):
    ``join_core.JoinCore`` over ``ColumnarJoinStorage``."""

    def __init__(self, node: JoinNode, ansi: bool) -> None:
        facts = JoinFacts(node, ansi)
        storage = ColumnarJoinStorage(facts)
        super().__init__(facts, storage, None)
        self.left, self.right = storage.sides
        self.output_windows = storage.output_windows
        # each side's filters below and above its watermark node (``step``)
        self.side_filters = (SideFilters(node.left, ansi), SideFilters(node.right, ansi))
        self.kinds = tuple([c.type for c in s.columns] for s in (node.left, node.right))

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Batch, JoinMetrics]:
        """``Operator.step`` on frames: each side's batch as a frame, filtered below its
        watermark node, observed by it, filtered above it and given its windows, then
        ``process``."""
        frames = []
        for value, filters, kinds, node in zip(
            inputs, self.side_filters, self.kinds, watermarks, strict=True
        ):
            below = filters.apply(as_frame(value, kinds), filters.below)
            if node is not None:
                observe(node, below)
            frames.append(filters.project(filters.apply(below, filters.above)))
        out, metrics = self.process(frames[0], frames[1], late_ms, evict_ms)
        return Frame(out, tuple(self.output_windows)), metrics


# ------------------------------------------------------------------------------ helpers


def _renamed_back(frame: pl.DataFrame, width: int, prefix: str) -> pl.DataFrame:
    return frame.select([pl.col(f"{prefix}{i}").alias(f"c{i}") for i in range(width)])


def _ordered(parts: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """The pass's output rows in probe order (a probe row's own rows keep their order)."""
    parts = [p for p in parts if p.height]
    if not parts:
        return pl.DataFrame()
    if len(parts) == 1:
        return parts[0]
    return pl.concat(parts, how="vertical").sort("_p", maintain_order=True)


def time_of(name: str, kind: str) -> pl.Expr:
    """A column's time in µs as the state predicate and the late filter compare it: a
    window's end, else the value."""
    if kind == "window":
        return window_end(pl.col(name))
    return pl.col(name).cast(pl.Int64)


def _event_time(side: Side, layout: list[tuple[str, str]]) -> pl.Expr | None:
    """The side's late-row time (a window's end; the reference's ``_event_time``), on the
    side's columns ``c0..``, or None without an event time."""
    if side.event_time_column is None:
        return None
    i = [n for n, _ in layout].index(side.event_time_column)
    return time_of(f"c{i}", layout[i][1])


def _eviction_column(rule: StateRule, layout: list[tuple[str, str]], keys: list[int]) -> int | None:
    """The column whose value a side's state predicate compares with the state watermark
    (the reference's ``_eviction_time``): the watermark key's, or the rule's column."""
    if rule.eviction == "key":
        assert rule.key_index is not None
        return keys[rule.key_index]
    if rule.eviction == "value":
        names = [n for n, _ in layout]
        return names.index(rule.column) if rule.column in names else None
    return None
