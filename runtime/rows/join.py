"""The stream-stream join on rows (the reference engine): ``join_core.JoinCore``, which runs
Spark's ``StreamingSymmetricHashJoinExec`` passes in its order (reference §1), over
``RowJoinStorage``.

State per side mirrors Spark's ``keyToNumValues`` / ``keyWithIndexToValue`` stores: join key
-> the stored values of that key, each ``[row, matched]``.  Every side that can be evicted
keeps an event-time index (``index.py``) so that eviction costs in proportion to the rows it
removes, never a scan of the whole state.  What each side's rows go through before the
operator (filters split at the watermark node, windows) is ``SideInput``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from typing import Any

from sqlglot import exp

from ...compiler.planning.plan import JoinNode, Side, StateRule
from ..engine.batches import Batch, Rows
from ..engine.eval import (
    Getter,
    Layout,
    column_slot,
    compile_expr,
    kind_of,
    window_arguments,
    window_spans,
)
from ..engine.index import EvictionIndex
from ..engine.join_core import JoinCore, JoinFacts, JoinMetrics, JoinObserver, side_layout
from ..engine.late import Dropped
from ..engine.spark_rules import Skipped, drop_late, watermark_passed
from ..engine.watermark import WatermarkNode

__all__ = ["JoinMetrics", "JoinOperator", "SideInput", "SideState", "side_layout"]

Row = tuple[Any, ...]
NAN = float("nan")  # one NaN object: Spark's NormalizeFloatingNumbers makes NaN keys equal


class SideState:
    """One side's stored rows: key -> {id: row}, the ids of the rows that have matched, and
    the eviction index.

    A stored row is the input row itself (no wrapper per row).  Matched flags live in a set
    and only on a side whose flags the join reads (outer, semi and anti joins): an inner
    join's state is the rows alone.
    """

    __slots__ = ("by_key", "index", "matched", "next_id", "size", "time_of", "track_matched")

    def __init__(
        self, time_of: Callable[[Any, Row], int | None] | None, track_matched: bool = True
    ) -> None:
        self.by_key: dict[Any, dict[int, Row]] = {}
        self.matched: set[int] = set()
        self.track_matched = track_matched
        self.index = EvictionIndex()
        self.next_id = 0
        self.size = 0
        self.time_of = time_of  # (key, row) -> µs compared with the state watermark

    def append(self, key: Any, row: Row, matched: bool) -> None:
        ident = self.next_id
        self.next_id = ident + 1
        bucket = self.by_key.get(key)
        if bucket is None:
            bucket = self.by_key[key] = {ident: row}
        else:
            bucket[ident] = row
        self.size += 1
        if matched and self.track_matched:
            self.matched.add(ident)
        if self.time_of is not None:
            t = self.time_of(key, row)
            if t is not None:  # a NULL time never satisfies `time <= watermark`
                self.index.add(t, ident, key, bucket)

    def mark(self, idents: Iterable[int]) -> None:
        """Record that these stored rows have matched."""
        if self.track_matched:
            self.matched.update(idents)

    def remove(self, key: Any, ident: int) -> None:
        bucket = self.by_key[key]
        del bucket[ident]
        if not bucket:
            del self.by_key[key]
        self.matched.discard(ident)
        self.size -= 1

    def evict(self, threshold_us: int, ordered: bool = True) -> list[tuple[Row, bool]]:
        """Remove every stored row whose time is ``<= threshold_us``; return them, each
        with its matched flag, in (time, id) order when ``ordered``: by the time the state
        predicate reads, then in the order they were stored."""
        by_key, matched = self.by_key, self.matched
        evicted = []
        # the index holds each row's bucket: no lookup of the key per evicted row
        popped = self.index.pop_upto(threshold_us, ordered=ordered)
        for ident, key, bucket in zip(*popped, strict=True):
            row = bucket.pop(ident, None)
            if row is None:
                continue  # already removed (LeftSemi's eager removal)
            if not bucket:
                del by_key[key]
            if ident in matched:
                matched.remove(ident)
                evicted.append((row, True))
            else:
                evicted.append((row, False))
        self.size -= len(evicted)
        return evicted

    def evict_count(self, threshold_us: int) -> int:
        """``evict`` for a side whose evicted rows are only counted (nothing is emitted)."""
        by_key, matched = self.by_key, self.matched
        count = 0
        popped = self.index.pop_upto(threshold_us, ordered=False)
        for ident, key, bucket in zip(*popped, strict=True):
            if bucket.pop(ident, None) is None:
                continue
            if not bucket:
                del by_key[key]
            if matched:  # (an inner join's sides keep no flags: skip hashing the id)
                matched.discard(ident)
            count += 1
        self.size -= count
        return count

    def snapshot(self) -> dict[str, Any]:
        return {
            "next_id": self.next_id,
            "values": [
                (key, ident, row, ident in self.matched)
                for key, bucket in self.by_key.items()
                for ident, row in bucket.items()
            ],
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.by_key = {}
        self.matched = set()
        self.index = EvictionIndex()
        self.size = 0
        # in id order: rows re-enter their buckets, and the index, in insertion order
        for key, ident, row, matched in sorted(data["values"], key=itemgetter(1)):
            bucket = self.by_key.setdefault(key, {})
            bucket[ident] = row
            self.size += 1
            if matched and self.track_matched:
                self.matched.add(ident)
            if self.time_of is not None:
                t = self.time_of(key, row)
                if t is not None:
                    self.index.add(t, ident, key, bucket)
        self.next_id = data["next_id"]


class SideInput:
    """What happens to one side's input rows before they reach the operator: filters pushed
    below the join (split at the watermark node), window projection, and (in the operator)
    the late-row filter."""

    def __init__(self, side: Side, ansi: bool) -> None:
        self.side = side
        columns = [(c.name, c.type.name) for c in side.columns]
        layout = Layout.of((side.name, columns))
        index = {name: i for i, (name, _) in enumerate(columns)}
        window_of = {w.name: w.time_column for w in side.windows}
        # which filters run below the input's watermark node and which above: the plan's
        self.below = [
            *(_true_of(compile_expr(p, layout, ansi=ansi)) for p in side.filters_below_watermark),
            *(_not_null_at(index[n]) for n in side.not_null_below_watermark),
        ]
        self.above = [
            *(_true_of(compile_expr(p, layout, ansi=ansi)) for p in side.filters_above_watermark),
            *(_not_null_at(index[n]) for n in side.not_null_above_watermark),
        ]
        self.windows = [(index[w.time_column], *window_arguments(w.expr)) for w in side.windows]
        # a window is null exactly when its time is
        self.window_not_null = [n for n in side.not_null if n in window_of]

    def filter_below(
        self, rows: Sequence[Row], told: list[tuple[Row, int]] | None = None
    ) -> Sequence[Row]:
        """Rows that reach the side's watermark node (filters not touching its time);
        ``told`` (`sjoin why`) gets each dropped row with the index of the test that
        dropped it (``below``: the plan's conjuncts, then its isnotnull columns)."""
        return _filtered(self.below, rows, told)

    def filter_above(self, rows: Sequence[Row]) -> list[Row]:
        """The rest of the pre-join work: filters on the time column, then the windows (a
        sliding window makes one row per window; a NULL time makes none)."""
        rows = self.keep_above(rows)
        if not self.windows:
            return list(rows)
        return [r for made in self.windowed_each(rows) for r in made]

    def keep_above(
        self, rows: Sequence[Row], told: list[tuple[Row, int]] | None = None
    ) -> Sequence[Row]:
        """The rows the filters above the watermark node keep (``told``: as
        ``filter_below``'s)."""
        return _filtered(self.above, rows, told)

    def windowed_each(self, rows: Sequence[Row]) -> list[list[Row]]:
        """The rows each row makes with the side's windows (itself without windows)."""
        if not self.windows:
            return [[r] for r in rows]
        out: list[list[Row]] = []
        for row in rows:
            combos: list[Row] = [row]
            for time_index, duration, slide, start in self.windows:
                ts = row[time_index]
                if ts is None:
                    combos = []
                    break
                spans = window_spans(ts, duration, slide, start)
                combos = [(*c, span) for c in combos for span in spans]
            out.append(combos)
        return out


def _filtered(
    tests: Sequence[Callable[[Row], bool]],
    rows: Sequence[Row],
    told: list[tuple[Row, int]] | None,
) -> Sequence[Row]:
    """The rows every test keeps, the tests run in order; ``told`` (when given) gets each
    dropped row and the index of the test that dropped it."""
    for i, test in enumerate(tests):
        kept = [r for r in rows if test(r)]
        if told is not None and len(kept) != len(rows):
            passed = {id(r) for r in kept}
            told.extend((r, i) for r in rows if id(r) not in passed)
        rows = kept
    return rows


def _true_of(f: Getter) -> Callable[[Row], bool]:
    return lambda row: f(row, None) is True


def _not_null_at(i: int) -> Callable[[Row], bool]:
    return lambda row: row[i] is not None


class RowJoinStorage:
    """The join's state table on rows (``join_core.JoinStorage``): each side's ``SideState``.

    A batch is a ``RowBatch`` (the rows, their positions among the side's rows that were not
    late, and their state keys); pairs and output parts are lists of ``(position, stored id,
    left row, right row)`` (id -1 and a null row for a side that is absent), projected only
    when the pass's part is complete (``project``)."""

    def __init__(self, facts: JoinFacts) -> None:
        node, ansi = facts.node, facts.ansi
        left_cols, right_cols = facts.layouts
        one_left, one_right = facts.one
        self.null: tuple[Row, Row] = ((None,) * len(left_cols), (None,) * len(right_cols))
        # a null-safe key's pairs compare its operands: a NULL key is a key like any other
        keys = node.matched_keys
        self.keys = (
            _key_function([a for a, _ in keys], [b for _, b in keys], one_left, one_right, ansi),
            _key_function([b for _, b in keys], [a for a, _ in keys], one_right, one_left, ansi),
        )
        self.pre = facts.pre
        self.post = facts.post
        self.in_range = facts.in_range
        project = _projection([o.expr for o in node.output], facts.both, ansi)
        # an output row whose window time is NULL (e.g. null-padded) is dropped (the plan's
        # window_times: Spark's TimeWindowing filter)
        self.guarded = bool(facts.window_times) or facts.where_filter is not None
        self.project_pair = (
            _guarded(project, facts.window_times, facts.where_filter) if self.guarded else project
        )
        self.event_time = (_event_time(node.left, left_cols), _event_time(node.right, right_cols))
        n_keys = len(node.keys)
        self.sides = (
            SideState(_eviction_time(node.left.state, left_cols, n_keys), facts.track_matched[0]),
            SideState(_eviction_time(node.right.state, right_cols, n_keys), facts.track_matched[1]),
        )

    # ---------------------------------------------------------------- input

    def height(self, rows: Sequence[Row]) -> int:
        return len(rows)

    def has_event_time(self, side: int) -> bool:
        return self.event_time[side] is not None

    def split_late(self, side: int, rows: Sequence[Row], late_us: int) -> tuple[Sequence[Row], int]:
        time_of = self.event_time[side]
        assert time_of is not None
        return drop_late(rows, time_of, late_us)

    def late_rows(self, side: int, rows: Sequence[Row], late_us: int) -> Dropped:
        time_of = self.event_time[side]
        assert time_of is not None
        late = [r for r in rows if watermark_passed(time_of(r), late_us)]
        return Dropped(side, late, [time_of(r) for r in late])

    def batch(self, side: int, rows: Sequence[Row]) -> tuple[RowBatch, RowBatch | None]:
        """The rows the pre-join filter passes, with their keys, and those it fails (None
        without a pre-join filter)."""
        key_of, pre = self.keys[side], self.pre[side]
        if pre is None:
            return RowBatch(range(len(rows)), rows, [key_of(r) for r in rows]), None
        passed: list[int] = []
        failed: list[int] = []
        for i, row in enumerate(rows):
            (passed if pre(row, None) is True else failed).append(i)
        ok = [rows[i] for i in passed]
        return (
            RowBatch(passed, ok, [key_of(r) for r in ok]),
            RowBatch(failed, [rows[i] for i in failed], []),
        )

    # ---------------------------------------------------------------- probes

    def probe(self, side: int, batch: RowBatch, first: bool = False) -> list[Pair]:
        """Each row of ``batch`` with each stored row of the other side it matches (key, then
        the post-join condition, every candidate evaluated as Spark does for these joins;
        ``first``: only the first, as LeftSemi stops there)."""
        others = self.sides[1 - side].by_key
        probe_is_left = side == 0
        pairs: list[Pair] = []
        in_range, post = self.in_range, self.post
        if in_range is not None:
            xa, xb, lower, upper = in_range
            # left.x + lower <= right.y <= left.x + upper, read from whichever side probes
            if probe_is_left:
                probe_at, stored_at, lo_off, hi_off = xa, xb, lower, upper
            else:
                probe_at, stored_at, lo_off, hi_off = xb, xa, -upper, -lower
        for p, key, row in zip(batch.pos, batch.keys, batch.rows, strict=True):
            bucket = others.get(key)
            if not bucket:
                continue
            if in_range is not None:
                v = row[probe_at]
                if v is None:
                    continue
                lo, hi = v + lo_off, v + hi_off
                found = [
                    (i, s)
                    for i, s in bucket.items()
                    if (w := s[stored_at]) is not None and lo <= w <= hi
                ]
            elif first and post is not None:
                found = []
                for i, s in bucket.items():
                    if (post(row, s) if probe_is_left else post(s, row)) is True:
                        found = [(i, s)]
                        break
            elif post is None:
                found = list(bucket.items())
            elif probe_is_left:
                found = [(i, s) for i, s in bucket.items() if post(row, s) is True]
            else:
                found = [(i, s) for i, s in bucket.items() if post(s, row) is True]
            if first:
                found = found[:1]
            if probe_is_left:
                pairs += [(p, i, row, s) for i, s in found]
            else:
                pairs += [(p, i, s, row) for i, s in found]
        return pairs

    def claim(self, pairs: list[Pair], unmatched_only: bool) -> list[Pair]:
        flags = self.sides[0].matched if unmatched_only else ()
        seen: set[int] = set()
        claimed = []
        for pair in pairs:
            i = pair[1]
            if i not in seen and i not in flags:
                seen.add(i)
                claimed.append(pair)
        return claimed

    def matched(self, batch: RowBatch, pairs: list[Pair]) -> set[int]:
        return {pair[0] for pair in pairs}

    def unmatched(self, batch: RowBatch, matched: set[int]) -> RowBatch:
        if not matched:
            return batch
        keep = [j for j, p in enumerate(batch.pos) if p not in matched]
        return batch.take(keep)

    def mark(self, side: int, pairs: list[Pair]) -> None:
        state = self.sides[side]
        if state.track_matched and pairs:
            state.matched.update([pair[1] for pair in pairs])

    def remove(self, side: int, batch: RowBatch, pairs: list[Pair]) -> int:
        key_at = dict(zip(batch.pos, batch.keys, strict=True))
        state = self.sides[side]
        for pair in pairs:
            state.remove(key_at[pair[0]], pair[1])
        return len(pairs)

    # ---------------------------------------------------------------- storing

    def kept(
        self, side: int, batch: RowBatch, matched: set[int] | None, skipped: Skipped, threshold: int
    ) -> tuple[RowBatch, set[int] | None]:
        """The rows that are stored: not those this batch's eviction removes at once (of the
        matched ones only, or of all: ``skipped``)."""
        time_of = self.sides[side].time_of
        if time_of is None:
            return batch, matched
        only_matched = skipped == "matched"
        flags = matched or ()
        keep = []
        for j, (p, key, row) in enumerate(zip(batch.pos, batch.keys, batch.rows, strict=True)):
            if p in flags or not only_matched:
                t = time_of(key, row)
                if t is not None and t <= threshold:  # (watermark_passed, written out)
                    continue  # not stored: this batch evicts it anyway
            keep.append(j)
        if len(keep) == len(batch.rows):
            return batch, matched
        return batch.take(keep), matched

    def append(self, side: int, batch: RowBatch, matched: set[int] | None) -> int:
        store = self.sides[side]
        if matched:
            for p, key, row in zip(batch.pos, batch.keys, batch.rows, strict=True):
                store.append(key, row, p in matched)
        else:
            for key, row in zip(batch.keys, batch.rows, strict=True):
                store.append(key, row, False)
        return len(batch.rows)

    def size(self, side: int) -> int:
        return self.sides[side].size

    def snapshot(self, side: int) -> dict[str, Any]:
        return self.sides[side].snapshot()

    def restore(self, side: int, data: dict[str, Any]) -> None:
        """A side's rows with each key computed again from the row (the snapshot's keys are
        checked to be those, ``snapshot.check_snapshot``): a NaN key must be the one NaN
        object the probes use, and a NaN read back from the snapshot is another object,
        which a dict would never find."""
        key_of = self.keys[side]
        values = [(key_of(row), ident, row, matched) for _, ident, row, matched in data["values"]]
        self.sides[side].restore({"next_id": data["next_id"], "values": values})

    # ---------------------------------------------------------------- eviction

    def evict(self, side: int, threshold: int, ordered: bool) -> list[tuple[Row, bool]]:
        return self.sides[side].evict(threshold, ordered)

    def evict_count(self, side: int, threshold: int) -> int:
        return self.sides[side].evict_count(threshold)

    def evicted_count(self, evicted: list[tuple[Row, bool]]) -> int:
        return len(evicted)

    def emit_unmatched(self, side: int, evicted: list[tuple[Row, bool]]) -> list[Pair]:
        null = self.null[1 - side]
        if side == 0:
            return [(0, -1, row, null) for row, matched in evicted if not matched]
        return [(0, -1, null, row) for row, matched in evicted if not matched]

    # ---------------------------------------------------------------- output

    def emit(self, pairs: list[Pair], left: bool, right: bool) -> list[Pair]:
        if left and right:
            return pairs
        null_left, null_right = self.null
        if left:
            return [(p, -1, a, null_right) for p, _, a, _ in pairs]
        return [(p, -1, null_left, b) for p, _, _, b in pairs]

    def emit_alone(self, side: int, batch: RowBatch) -> list[Pair]:
        null = self.null[1 - side]
        if side == 0:
            return [(p, -1, row, null) for p, row in zip(batch.pos, batch.rows, strict=True)]
        return [(p, -1, null, row) for p, row in zip(batch.pos, batch.rows, strict=True)]

    def ordered(self, parts: list[list[Pair]]) -> list[Pair]:
        """A pass's output in probe order (a probe row's own rows keep their order)."""
        found = [p for p in parts if p]
        if not found:
            return []
        if len(found) == 1:
            return found[0]
        return sorted([pair for part in found for pair in part], key=itemgetter(0))

    def project(self, part: list[Pair]) -> list[Row]:
        project = self.project_pair
        return [project(a, b) for _, _, a, b in part]

    def result(self, parts: list[list[Row]]) -> list[Row]:
        out = [row for part in parts for row in part]
        if self.guarded:
            return [row for row in out if row is not None]
        return out


class RowBatch:
    """A side's rows in a pass: their positions among the rows that were not late, the rows
    and their state keys."""

    __slots__ = ("keys", "pos", "rows")

    def __init__(self, pos: Sequence[int], rows: Sequence[Row], keys: list[Any]) -> None:
        self.pos = pos
        self.rows = rows
        self.keys = keys

    def take(self, keep: list[int]) -> RowBatch:
        """The rows at these indices."""
        pos, rows, keys = self.pos, self.rows, self.keys
        return RowBatch([pos[j] for j in keep], [rows[j] for j in keep], [keys[j] for j in keep])


Pair = tuple[int, int, Row, Row]  # (probe position, stored id or -1, left row, right row)


class JoinOperator(
    JoinCore[Sequence[Row], RowBatch, list[Pair], set[int], list[Pair], list[tuple[Row, bool]]]
):
    """One ``join`` of the plan, run batch after batch on rows: ``join_core.JoinCore`` over
    ``RowJoinStorage``."""

    def __init__(self, node: JoinNode, ansi: bool, observer: JoinObserver | None = None) -> None:
        facts = JoinFacts(node, ansi)
        storage = RowJoinStorage(facts)
        super().__init__(facts, storage, observer)
        self.row_storage = storage
        self.left, self.right = storage.sides
        self.left_key, self.right_key = storage.keys
        # what each side's rows go through before the operator (``step``)
        self.side_inputs = (SideInput(node.left, ansi), SideInput(node.right, ansi))
        self.output_columns = [o.name for o in node.output]
        self.output_types = [o.type.name for o in node.output]

    def step(
        self,
        inputs: Sequence[Batch],
        watermarks: Sequence[WatermarkNode | None],
        late_ms: int | None,
        evict_ms: int | None,
    ) -> tuple[Rows, JoinMetrics]:
        """``Operator.step``: each side's rows filtered below its watermark node, observed
        by it, filtered above it, then ``process``."""
        prepared = []
        observer = self.observer
        for side, (value, side_input, node) in enumerate(
            zip(inputs, self.side_inputs, watermarks, strict=True)
        ):
            rows = value.to_rows()
            told: tuple[list[tuple[Row, int]], list[tuple[Row, int]]] | None = (
                None if observer is None else ([], [])
            )
            below = side_input.filter_below(rows, None if told is None else told[0])
            if node is not None:
                node.observe(below)
            if told is None:
                prepared.append(side_input.filter_above(below))
            else:
                kept = side_input.keep_above(below, told[1])
                made = side_input.windowed_each(kept)
                if isinstance(observer, RowInputObserver):
                    observer.inputs(side, rows, below, kept, made, told)
                prepared.append([r for rs in made for r in rs])
        out, metrics = self.process(prepared[0], prepared[1], late_ms, evict_ms)
        return Rows(out), metrics


class RowInputObserver(JoinObserver):
    """An observer of the row engine's inputs too: each side's rows as they arrived, those
    its filters below and above the watermark node kept, and the rows (with windows) each
    kept row made (none: a NULL time)."""

    def inputs(
        self,
        side: int,
        rows: Sequence[Row],
        below: Sequence[Row],
        kept: Sequence[Row],
        made: list[list[Row]],
        rejected: tuple[list[tuple[Row, int]], list[tuple[Row, int]]],
    ) -> None:
        """``rejected``: the rows the filters below and above the watermark node dropped,
        each with the index of the test that dropped it (``SideInput.below``, ``above``)."""


# ------------------------------------------------------------------------------ helpers


def _normalize(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return NAN
    return value


def _key_function(
    mine: list[exp.Expression],
    theirs: list[exp.Expression],
    layout: Layout,
    other_layout: Layout,
    ansi: bool,
) -> Callable[[Row], Any]:
    """The state key of a row: one value for one key, else a tuple.  Operands of mixed
    types are brought to the type Spark compares them in (double; timestamp for dates)."""
    getters = []
    floats = False
    for node, partner in zip(mine, theirs, strict=True):
        g = compile_expr(node, layout, ansi=ansi)
        kinds = {kind_of(node, layout), kind_of(partner, other_layout)}
        if kinds & {"double", "float"}:
            floats = True
            g = _as_float(g)
        elif kinds == {"date", "timestamp"} and kind_of(node, layout) == "date":
            g = _date_as_timestamp(g)
        getters.append(g)
    if len(getters) == 1:
        (g,) = getters
        slot = column_slot(g)
        if slot is not None and not floats:
            return itemgetter(slot[1])
        if floats:
            return lambda row: _normalize(g(row, None))
        return lambda row: g(row, None)
    if floats:
        return lambda row: tuple(_normalize(g(row, None)) for g in getters)
    slots = [column_slot(g) for g in getters]
    if all(s is not None for s in slots):
        return itemgetter(*(s[1] for s in slots if s is not None))
    return lambda row: tuple(g(row, None) for g in getters)


def _as_float(g: Getter) -> Getter:
    def to_float(a: Any, b: Any) -> Any:
        x = g(a, b)
        return None if x is None else float(x)

    return to_float


def _date_as_timestamp(g: Getter) -> Getter:
    def to_ts(a: Any, b: Any) -> Any:
        x = g(a, b)
        return None if x is None else x * 86_400_000_000

    return to_ts


def _projection(
    exprs: Sequence[exp.Expression], layout: Layout, ansi: bool
) -> Callable[[Row, Row], Row]:
    """The output row of a (left, right) pair; plain column outputs take a fast path."""
    getters = [compile_expr(e, layout, ansi=ansi) for e in exprs]
    slots = [column_slot(g) for g in getters]
    if slots and all(s is not None for s in slots):
        left_width = sum(1 for arg, _ in layout.slots.values() if arg == 0)
        picks = [s[1] + (left_width if s[0] == 1 else 0) for s in slots if s is not None]
        if len(picks) == 1:
            pick = picks[0]
            return lambda a, b: ((a + b)[pick],)
        getter = itemgetter(*picks)
        return lambda a, b: getter(a + b)

    def project(a: Row, b: Row) -> Row:
        return tuple(g(a, b) for g in getters)

    return project


def _guarded(
    project: Callable[[Row, Row], Row], times: list[Getter], where: Getter | None = None
) -> Callable[[Row, Row], Any]:
    """``project``, or None for a pair that an output window time is NULL for, or that
    fails the WHERE's Filter above the join."""

    def guarded(a: Row, b: Row) -> Row | None:
        if any(time(a, b) is None for time in times):
            return None
        if where is not None and where(a, b) is not True:
            return None
        return project(a, b)

    return guarded


def _event_time(side: Side, layout: list[tuple[str, str]]) -> Callable[[Row], Any] | None:
    """The side's late-row time in µs (a window's end), or None without an event time."""
    if side.event_time_column is None:
        return None
    names = [n for n, _ in layout]
    i = names.index(side.event_time_column)
    if side.event_time_is_window or layout[i][1] == "window":
        return lambda row: None if row[i] is None else row[i][1]
    return itemgetter(i)


def _eviction_time(
    rule: StateRule, layout: list[tuple[str, str]], n_keys: int
) -> Callable[[Any, Row], int | None] | None:
    """The value a side's state predicate compares with the state watermark, per stored row:
    the watermark key (a window's end) or the side's event-time column."""
    if rule.eviction == "key":
        assert rule.key_index is not None
        index = rule.key_index
        window = rule.window

        def key_time(key: Any, row: Row) -> int | None:
            value = key[index] if n_keys > 1 else key
            if value is None:
                return None
            return int(value[1] if window or isinstance(value, tuple) else value)

        return key_time
    if rule.eviction == "value":
        names = [n for n, _ in layout]
        i = names.index(rule.column) if rule.column in names else -1
        if i < 0:
            return None
        if layout[i][1] == "window":
            return lambda key, row: None if row[i] is None else row[i][1]
        return lambda key, row: row[i]
    return None
