"""The columnar join's order invariant: each side's state stays in ``_id`` order through
appends, marks and evictions (a LEFT OUTER range join) and a restore from a snapshot in any
order, and a probe's pairs come out in (probe row, stored id) order with no sort, as the
reference emits them (the engine parity tests compare the outputs; this names the invariant)."""

from __future__ import annotations

import random
from typing import Any

from sjoin.runtime.columnar.frames import as_frame
from sjoin.runtime.columnar.join import ColumnarJoin
from sjoin.runtime.engine.batches import Rows

from ..harness import plan_of

SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 5 seconds
join j = l AS L LEFT OUTER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 10 SECONDS AND R.t + INTERVAL 5 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt, L.v AS lv, R.v AS rv
"""
S = 1_000_000


def _join() -> Any:
    plan = plan_of(SPEC)
    node = plan.node("j")
    return ColumnarJoin(node, plan.ansi)


def _rows(rng: random.Random, batch: int, n: int, tag: str) -> list[tuple[Any, ...]]:
    return [
        (rng.randrange(4), (batch * 10 + rng.randrange(10)) * S, f"{tag}{batch}-{i}")
        for i in range(n)
    ]


def _in_id_order(join: Any) -> bool:
    return all(side.state.get_column("_id").is_sorted() for side in (join.left, join.right))


def test_the_state_stays_in_id_order_and_the_pairs_come_out_in_order() -> None:
    rng = random.Random(7)
    join = _join()
    for batch in range(12):
        left, right = _rows(rng, batch, 30, "l"), _rows(rng, batch, 30, "r")
        watermark = max(0, batch * 10 - 5) * 1000
        join.step([Rows(left), Rows(right)], [None, None], watermark, watermark)
        assert _in_id_order(join), batch
        storage = join.storage
        probe, _ = storage.batch(0, as_frame(Rows(left), join.kinds[0]))
        pairs = storage.probe(0, probe)
        assert pairs.select("_p", "_id").equals(pairs.select("_p", "_id").sort("_p", "_id")), batch
        if batch == 6:  # a restore from a snapshot whose values are in any order
            snapshot = join.snapshot()
            for side in snapshot.values():
                rng.shuffle(side["values"])
            join = _join()
            join.restore(snapshot)
            assert _in_id_order(join)
            assert join.snapshot() == _sorted(snapshot)


def _sorted(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {
        name: {**side, "values": sorted(side["values"], key=lambda v: v[1])}
        for name, side in snapshot.items()
    }
