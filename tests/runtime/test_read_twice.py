"""A relation read twice in one query runs as two operators (the planner's copies,
``compiler/planning/read_twice.py``), also where the reader of the copy is a query of its own:
that query runs the relation it wrote (``Plan.for_query``), and each query outputs the
relations it runs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.runtime import run

# `j2` has a sink and reads `j0`; `j4` reads `j0` and `j2`: in the query of `j4`, `j0` is read
# twice (the copy `j0_2` under `j2`); in the query of `j2`, once (`j0` itself)
SPEC = """spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 0 seconds
stream c (k BIGINT, t TIMESTAMP) watermark t delay 0 seconds
join j0 = c AS x INNER JOIN a AS y
  ON x.k = y.k AND x.t BETWEEN y.t AND y.t + INTERVAL 5 SECONDS SELECT x.k AS k, x.t AS t
join j2 = a AS x INNER JOIN j0 AS y
  ON x.k = y.k AND x.t BETWEEN y.t AND y.t + INTERVAL 5 SECONDS AND x.k <> 5
  SELECT x.k AS k, x.t AS t
join j4 = j0 AS x INNER JOIN j2 AS y
  ON x.k = y.k AND x.t BETWEEN y.t AND y.t + INTERVAL 5 SECONDS SELECT x.k AS k, x.t AS t
sink j2 to parquet (path = 'o/j2') checkpoint 'c/j2'
"""
TRACE = [
    {"batch": b, "stream": s, "row": {"k": k, "t": f"2026-01-01T00:0{b}:0{k}Z"}}
    for b in range(2)
    for s in "ac"
    for k in range(3)
]


@pytest.mark.parametrize("engine", ["reference", "columnar"])
def test_each_query_runs_and_outputs_its_own_relations(engine: Any) -> None:
    plan = check_text(SPEC).plan
    assert plan is not None
    assert plan.copies == {"j0_2": "j0"} and plan.query_roots == ("j2", "j4")
    assert [n.name for n in plan.for_query("j2").stateful_operators("j2")] == ["j2", "j0"]
    # `j0` runs in both queries: in that of `j2` without `j4`'s filters (parity
    # a_join_read_twice_below_a_query_of_its_own, Spark 4.3 and 3.5)
    assert [q.root for q in plan.apart if "j0" in {n.name for n in q.nodes}] == ["j2"]
    assert [n.name for n in plan.for_query("j4").stateful_operators("j4")] == [
        "j4",
        "j0",
        "j2",
        "j0_2",
    ]
    result = run(plan, [json.dumps(r) for r in TRACE], engine=engine)
    by_query: dict[str, set[str]] = {}
    for batch in result.batches:
        by_query.setdefault(batch.query, set()).update(batch.counts)
        names = [o["relation"] for o in batch.progress["operators"]]
        assert len(names) == len(set(names)), names  # two operators, not one reported twice
    assert by_query == {"j2": {"j2", "j0"}, "j4": {"j4", "j0_2"}}
