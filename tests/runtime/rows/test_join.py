"""The join operator: state layout, eviction index, each join type, key handling."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from sjoin.runtime import run
from sjoin.runtime.engine.batches import Rows
from sjoin.runtime.query import Query
from sjoin.runtime.rows.join import JoinOperator, SideState

from ..harness import plan_of, trace_records
from ..scenarios import RANGE, range_spec, row


class CountingDict(dict[Any, Any]):
    """A dict that counts lookups and walks, to prove what eviction touches."""

    lookups = 0
    walks = 0

    def get(self, key: Any, default: Any = None) -> Any:
        CountingDict.lookups += 1
        return super().get(key, default)

    def items(self) -> Any:
        CountingDict.walks += 1
        return super().items()

    def values(self) -> Any:
        CountingDict.walks += 1
        return super().values()

    def __iter__(self) -> Any:
        CountingDict.walks += 1
        return super().__iter__()


def test_side_state_layout_and_eviction_order() -> None:
    state = SideState(lambda key, row: row[1])
    for i, t in enumerate([30, 10, 20, 10, None]):
        state.append(i % 2, ("v", t), False)
    assert state.size == 5
    assert sorted(state.by_key) == [0, 1]
    assert [row for row, _ in state.evict(10)] == [("v", 10), ("v", 10)]
    assert state.size == 3
    assert [row for row, _ in state.evict(25)] == [("v", 20)]
    assert state.evict(10**9) == [(("v", 30), False)]
    assert state.size == 1  # a NULL time is never evicted
    assert list(state.by_key) == [0]


def test_eviction_touches_only_the_evicted_rows() -> None:
    """Evicting k rows costs k index pops and lookups, however big the state is."""
    state = SideState(lambda key, row: row[0])
    state.by_key = CountingDict()
    rng = random.Random(7)
    n = 200_000
    for i in range(n):
        state.append(rng.randrange(10_000), (i,), False)
    CountingDict.lookups = CountingDict.walks = 0
    evicted = state.evict(n // 100 - 1)  # 1% of the rows are that old
    assert len(evicted) == n // 100
    # the index holds each row's bucket: no key lookups, and no walk over the state
    assert CountingDict.lookups == 0 and CountingDict.walks == 0
    assert len(state.index) == n - n // 100 == state.size


def test_removed_entries_leave_stale_index_items_that_are_skipped() -> None:
    state = SideState(lambda key, row: row[0])
    state.append("k", (1,), False)
    state.append("k", (2,), False)
    state.remove("k", 0)  # LeftSemi's eager removal
    assert [row for row, _ in state.evict(5)] == [(2,)]
    assert state.size == 0 and not state.by_key


def test_snapshot_round_trip_rebuilds_the_index() -> None:
    state = SideState(lambda key, row: row[0])
    for t in (5, 1, 3):
        state.append(("a", t % 2), (t,), t == 3)
    copy = SideState(lambda key, row: row[0])
    copy.restore(state.snapshot())
    assert copy.size == 3 and copy.next_id == 3
    assert [r for r, _ in copy.evict(3)] == [(1,), (3,)]
    copy.append(("a", 1), (0,), False)
    assert copy.next_id == 4


def operator(how: str, condition: str = RANGE, version: str = "4.3") -> JoinOperator:
    plan = plan_of(range_spec(how, condition, header=f"spark {version}\n"))
    (join,) = plan.joins
    return JoinOperator(join, True)


def values(rows: list[tuple[Any, ...]]) -> list[tuple[Any, Any]]:
    return sorted(((r[2], r[5]) for r in rows), key=repr)


def test_rows_of_one_side_never_join_each_other() -> None:
    op = operator("INNER", "L.k = R.k")
    out, m = op.process([(1, 1, "a"), (1, 1, "b")], [], None, None)
    assert out == [] and m.num_rows_total == 2
    out, m = op.process([(1, 1, "c")], [(1, 1, "x")], None, None)
    # c sees only earlier right rows (none); x sees a, b and this batch's c
    assert values(out) == [("a", "x"), ("b", "x"), ("c", "x")]
    assert (m.num_rows_total, m.num_rows_updated) == (4, 2)


def test_full_outer_null_keys_join() -> None:
    op = operator("FULL OUTER")
    out, _ = op.process([(None, 1, "a")], [(None, 1, "b")], None, None)
    assert values(out) == [("a", "b")]


def test_composite_and_mixed_type_keys() -> None:
    spec = """spark 4.3
stream l (k BIGINT, x DOUBLE, t TIMESTAMP) watermark t delay 1 second
stream r (k INT, x BIGINT, t TIMESTAMP) watermark t delay 1 second
join j = l AS L INNER JOIN r AS R ON L.k = R.k AND L.x = R.x
  SELECT L.k AS k, L.x AS lx, R.x AS rx
"""
    plan = plan_of(spec)
    op = JoinOperator(plan.joins[0], True)
    nan = float("nan")
    op.process([(1, 2.0, 0), (1, 2.5, 0), (2, nan, 0)], [], None, None)
    out, _ = op.process([], [(1, 2, 0), (1, 3, 0)], None, None)
    assert out == [(1, 2.0, 2)]  # 2.0 = 2 once the BIGINT is a DOUBLE
    op.process([(3, nan, 0)], [], None, None)
    out, _ = op.process([(3, 0.0, 5)], [], None, None)
    assert out == []


def test_left_outer_evicts_and_emits_unmatched_once() -> None:
    op = operator("LEFT OUTER")
    op.process([(1, 100_000_000, "a"), (2, 100_000_000, "x")], [(1, 100_000_000, "b")], 0, 0)
    out, m = op.process([], [], 90_000, 120_000)
    assert values(out) == [("x", None)]
    assert (m.num_rows_total, m.num_rows_removed) == (0, 3)
    out, _ = op.process([], [], 120_000, 10**9)
    assert out == []


def test_anti_keeps_only_unmatched_left_rows() -> None:
    plan = plan_of(
        "spark 4.3\n"
        + range_spec("INNER").split("\n", 1)[1].split("join")[0]
        + f"join j = l AS L LEFT ANTI JOIN r AS R ON {RANGE}\n"
    )
    op = JoinOperator(plan.joins[0], True)
    out, _ = op.process(
        [(1, 100_000_000, "a"), (2, 100_000_000, "x")], [(1, 100_000_000, "b")], 0, 0
    )
    assert out == []
    out, _ = op.process([], [(2, 200_000_000, "late match")], 0, 120_000)
    assert out == [(2, 100_000_000, "x")]


def test_operator_without_watermark_keeps_everything() -> None:
    spec = range_spec(
        "INNER",
        "L.k = R.k",
        streams="stream l (k BIGINT, t TIMESTAMP, v STRING)\n"
        "stream r (k BIGINT, t TIMESTAMP, v STRING)\n",
    )
    query = Query(plan_of(spec), "j", ["j"])
    assert not query.tracker.enabled
    result = query.run_batch({"l": Rows([(1, 0, "a")]), "r": Rows([(1, -5, "b")])})
    assert result.watermark_ms is None and len(result.outputs["j"]) == 1
    assert not query.needs_no_data_batch()


BATCH = st.lists(
    st.tuples(
        st.sampled_from(["l", "r"]),
        st.integers(1, 3),
        st.integers(80, 130),
        st.sampled_from(["a", "b", "c"]),
    ),
    max_size=8,
)


@given(
    how=st.sampled_from(["INNER", "LEFT OUTER", "RIGHT OUTER", "FULL OUTER", "LEFT SEMI"]),
    batches=st.lists(BATCH, min_size=1, max_size=4),
    seed=st.integers(0, 1000),
)
def test_row_order_inside_a_batch_does_not_change_the_result(
    how: str, batches: list[list[Any]], seed: int
) -> None:
    spec = range_spec(how)
    if how == "LEFT SEMI":
        spec = spec.replace(", R.k AS rk, R.t AS rt, R.v AS rv", "")
    plan = plan_of(spec)

    def result(shuffle: bool) -> list[Any]:
        rng = random.Random(seed)
        scenario = []
        for batch in batches:
            rows = list(batch)
            if shuffle:
                rng.shuffle(rows)
            step: dict[str, list[Any]] = {}
            for side, k, t, v in rows:
                step.setdefault(side, []).append(row(k, t, v))
            scenario.append(step or {"l": []})
        out = run(plan, trace_records(scenario))
        return [
            (b.batch, sorted(map(repr, b.rows)), b.progress["operators"], b.watermark)
            for b in out.batches
        ]

    assert result(False) == result(True)
