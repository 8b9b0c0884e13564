"""The seam between the plan and the engines (``runtime/operators.py``, issue 25): whether an
operator runs columnar is decided once per operator and run, and every engine builds its
operators from that one decision.

* each operator is placed once per run, whichever engine is asked for (``auto`` included,
  whose choice reads the same placements), and a columnar aggregate's plan is worked out
  once, with the decision;
* ``make_operator`` for every engine and placement: the reference engine runs the reference
  operators, the columnar engine the columnar ones exactly where the placement allows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sjoin.runtime import operators, run
from sjoin.runtime.columnar import aggregate as columnar_aggregate
from sjoin.runtime.columnar import support
from sjoin.runtime.columnar.aggregate import ColumnarAggregate
from sjoin.runtime.columnar.join import ColumnarJoin
from sjoin.runtime.operators import make_operator, place
from sjoin.runtime.query import ColumnarEngine, Engine
from sjoin.runtime.rows.aggregate import AggregateOperator
from sjoin.runtime.rows.join import JoinOperator

from .harness import plan_of

STREAMS = """\
spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 10 seconds
stream ld (k BIGINT, t TIMESTAMP, d DECIMAL(10, 2)) watermark t delay 10 seconds
"""
# a columnar join, a columnar aggregate, and one of each that falls back
SPEC = (
    STREAMS
    + """join j = l AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, L.t AS lt, R.t AS rt, L.v AS lv, R.v AS rv
join jd = ld AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t - INTERVAL 5 SECONDS AND R.t + INTERVAL 10 SECONDS
  SELECT L.k AS k, abs(L.d) AS d
aggregate a = r AS S GROUP BY window(S.t, INTERVAL 10 SECONDS), S.k
  SELECT S.k AS k, count(*) AS n OUTPUT MODE append
aggregate s = r AS S GROUP BY window(S.t, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS)
  SELECT count(*) AS n OUTPUT MODE append
"""
)
PLAN = plan_of(SPEC)
COLUMNAR = {"j": ColumnarJoin, "jd": JoinOperator, "a": ColumnarAggregate, "s": AggregateOperator}
REFERENCE = {"j": JoinOperator, "jd": JoinOperator, "a": AggregateOperator, "s": AggregateOperator}


def _trace(path: Path) -> Path:
    lines = []
    for batch in range(3):
        t = f"2026-01-01T00:00:{batch * 20:02d}Z"
        lines.append({"batch": batch, "stream": "l", "row": {"k": 1, "t": t, "v": "a"}})
        lines.append({"batch": batch, "stream": "ld", "row": {"k": 1, "t": t, "d": "1.50"}})
        lines.append({"batch": batch, "stream": "r", "row": {"k": 1, "t": t, "v": "b"}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("checkpoint", [False, True], ids=["plain", "checkpoint"])
@pytest.mark.parametrize("engine", ["auto", "columnar", "reference"])
def test_each_operator_is_placed_once_per_run(
    engine: Any, checkpoint: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once per run: with a checkpoint too (its snapshot is checked against a reference
    engine's shapes, built from the run's placements), and again when the run resumes."""
    placed: list[str] = []
    planned: list[str] = []
    placement, aggregate_plan = operators.placement, support.aggregate_plan

    def counted_placement(plan: Any, node: Any) -> Any:
        placed.append(node.name)
        return placement(plan, node)

    def counted_plan(node: Any, columns: Any, ansi: bool) -> Any:
        planned.append(node.name)
        return aggregate_plan(node, columns, ansi)

    monkeypatch.setattr(operators, "placement", counted_placement)
    monkeypatch.setattr(support, "aggregate_plan", counted_plan)
    monkeypatch.setattr(columnar_aggregate, "aggregate_plan", counted_plan)
    trace = str(_trace(tmp_path / "t.jsonl"))
    where = str(tmp_path / "checkpoint") if checkpoint else None
    for _ in range(2 if checkpoint else 1):  # a checkpoint's second run resumes
        placed.clear()
        planned.clear()
        result = run(PLAN, trace, engine=engine, checkpoint=where)
        assert result.batches or checkpoint
        assert sorted(placed) == ["a", "j", "jd", "s"]
        assert sorted(planned) == ["a", "s"]  # with the decision, never again by the operator


@pytest.mark.parametrize(("engine", "expected"), [("columnar", COLUMNAR), ("reference", REFERENCE)])
def test_make_operator_follows_the_placement(engine: Any, expected: dict[str, type]) -> None:
    placements = place(PLAN)
    assert {name: where.columnar for name, where in placements.items()} == {
        "j": True,
        "jd": False,
        "a": True,
        "s": False,
    }
    assert "does not derive the scale" in (placements["jd"].unsupported or "")
    assert "sliding" in (placements["s"].unsupported or "")
    for name, kind in expected.items():
        node = PLAN.node(name)
        assert node is not None
        op = make_operator(PLAN, node, engine, placements[name])
        assert type(op) is kind, (name, type(op).__name__)


@pytest.mark.parametrize(
    ("engine_class", "expected", "fallbacks"),
    [
        (ColumnarEngine, COLUMNAR, {"jd", "s"}),
        (Engine, REFERENCE, set()),
    ],
)
def test_the_engines_build_their_operators_from_the_placements(
    engine_class: type[Engine], expected: dict[str, type], fallbacks: set[str]
) -> None:
    engine = engine_class(PLAN)
    built = {name: type(op) for q in engine.queries for name, op in q.operators.items()}
    assert built == expected
    assert set(engine.fallbacks) == fallbacks
