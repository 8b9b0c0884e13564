"""The deduplication on frames (the columnar engine's): ``FrameDedupStore``, the polars
storage of a dedup's state (one frame of keys in insertion order, each with its eviction
time), and ``ColumnarDedup``, the core ``dedup_core.StreamingDedup`` over it.  A batch is
late-filtered with one expression, its first row of each key found with one ``unique``
(input order kept), and the keys already in state taken away with one anti join (NULL keys
equal, as Spark's state keys compare); the snapshot is the row storage's, so a checkpoint
restores on either engine.  What runs here is ``support.dedup_unsupported``'s to say."""

from __future__ import annotations

from typing import Any

import polars as pl

from ...compiler.planning.plan import DedupNode
from ..engine.batches import Batch, Frame
from ..engine.dedup_core import DedupFacts, StreamingDedup
from ..engine.late import Dropped
from ..engine.watermark import WatermarkNode
from .frames import as_frame, dtype_of
from .spark_rules_vec import observed_max_ms_vec, watermark_passed_vec

_WHEN = "__when"


class FrameDedupStore:
    """A dedup's state as a frame: the key columns ``k0..`` and ``__when`` (its eviction
    time in µs, NULL: never), in the order the keys were stored."""

    def __init__(self, node: DedupNode) -> None:
        self.facts = DedupFacts.of(node)
        self.kinds = [c.type for c in node.columns]
        self.names = [f"k{j}" for j in range(len(self.facts.keys))]
        pairs = zip(self.names, self.facts.keys, strict=True)
        schema = {n: dtype_of(self.kinds[i]) for n, i in pairs}
        self.empty = pl.DataFrame(schema={**schema, _WHEN: pl.Int64})
        self.state = self.empty

    def observed(self, value: Batch, node: WatermarkNode | None) -> pl.DataFrame:
        frame = as_frame(value, self.kinds)
        if node is not None:
            node.observe_max(observed_max_ms_vec(frame.get_column(f"c{node.time_index}")))
        return frame

    def drop_late(
        self, data: pl.DataFrame, late_us: int, keep: bool
    ) -> tuple[pl.DataFrame, int, Dropped | None]:
        at = self.facts.late_index
        assert at is not None
        late = watermark_passed_vec(pl.col(f"c{at}"), late_us)
        kept = data.filter(~late)
        count = data.height - kept.height
        if not (keep and count):
            return kept, count, None
        gone = data.filter(late)
        return kept, count, Dropped(0, gone.rows(), gone.get_column(f"c{at}").to_list())

    def _when(self) -> pl.Expr:
        f = self.facts
        if f.eviction == "never" or f.time_index is None:
            return pl.lit(None, dtype=pl.Int64)
        t = pl.col(f"c{f.time_index}").cast(pl.Int64)
        if f.eviction == "expiry":  # Spark reads a NULL time with getLong: 0
            return t.fill_null(0) + f.delay_us
        return t

    def admit(self, data: pl.DataFrame) -> tuple[pl.DataFrame, int]:
        keyed = data.with_columns(
            *(pl.col(f"c{i}").alias(n) for n, i in zip(self.names, self.facts.keys, strict=True)),
            self._when().alias(_WHEN),
        )
        first = keyed.unique(subset=self.names, keep="first", maintain_order=True)
        new = first.join(
            self.state.select(self.names),
            on=self.names,
            how="anti",
            nulls_equal=True,
            maintain_order="left",
        )
        self.state = pl.concat([self.state, new.select(*self.names, _WHEN)], how="vertical")
        out = new.select(data.columns)
        return out, data.height - out.height

    def evict(self, watermark_us: int) -> int:
        passed = watermark_passed_vec(pl.col(_WHEN), watermark_us)
        before = self.state.height
        self.state = self.state.filter(~passed)
        return before - self.state.height

    def count(self, data: pl.DataFrame) -> int:
        return data.height

    def size(self) -> int:
        return self.state.height

    def batch(self, data: pl.DataFrame) -> Batch:
        return Frame(data)

    def snapshot(self) -> dict[str, Any]:
        """The row storage's form: ``(key values, eviction time)`` per key, in order."""
        return {"keys": [(row[:-1], row[-1]) for row in self.state.rows()]}

    def restore(self, data: dict[str, Any]) -> None:
        rows = [(*values, when) for values, when in data["keys"]]
        if not rows:
            self.state = self.empty
            return
        columns = list(zip(*rows, strict=True))
        self.state = pl.DataFrame(
            [
                pl.Series(name, columns[j], dtype=dtype, strict=True)
                for j, (name, dtype) in enumerate(self.empty.schema.items())
            ]
        )


class ColumnarDedup(StreamingDedup[pl.DataFrame]):
    """One ``dedup`` of the plan on the polars storage (the columnar engine's)."""

    store: FrameDedupStore

    def __init__(self, node: DedupNode) -> None:
        super().__init__(node, FrameDedupStore(node))
