"""A LEFT SEMI join over a union (compiler/planning/semi_union.py): the planner plans it as
Spark's PushDownLeftSemiAntiJoin runs it, one join per union input (each with its input's
columns, event time and state) and a union of them under the join's name, and leaves it as
written where Spark's rule does not apply (LEFT ANTI, a union on the right, a watermark
defined over the union, a static table).  The Spark facts: tests/integration/spark/
test_semi_over_union_on_spark.py; batch by batch on Spark: the parity scenarios
``union_below_a_left_semi_join*`` and ``union_of_three_below_a_left_semi_join``."""

from __future__ import annotations

from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.describe.diagram import mermaid
from sjoin.compiler.describe.explain import plan_text
from sjoin.compiler.planning.plan import JoinNode, Plan, UnionNode, ViewNode
from sjoin.compiler.planning.semi_union import INDEX_KEYED_WATERMARK
from sjoin.runtime.errors import UsageError
from sjoin.runtime.query import query_roots

KTV = "(k BIGINT, t TIMESTAMP, v STRING)"
MARK = " watermark t delay 0 seconds"
ON = (
    "ON L.k = R.k AND L.t >= R.t AND L.t <= R.t + INTERVAL 5 SECONDS\n  SELECT L.k AS k, L.t AS t\n"
)


def _streams(*names: str, plain: tuple[str, ...] = ()) -> str:
    return "spark 4.3\n" + "".join(f"stream {n} {KTV}{'' if n in plain else MARK}\n" for n in names)


def _plan(text: str) -> Plan:
    result = check_text(text, "semi.sjoin")
    assert result.ok and result.plan is not None, [d.message for d in result.diagnostics]
    return result.plan


SEMI = (
    _streams("l", "l2", "r")
    + "union lu = l UNION ALL l2\njoin j = lu AS L LEFT SEMI JOIN r AS R\n  "
    + ON
)


def test_a_left_semi_join_over_a_union_is_one_join_per_input_and_their_union() -> None:
    plan = _plan(SEMI)
    union = plan.node("j")
    assert isinstance(union, UnionNode)
    assert union.relations == ("j_l", "j_l2")
    assert union.pushed_join is not None
    assert (union.pushed_join.how, union.pushed_join.union) == ("left_semi", "lu")
    assert union.pushed_join.rule == "PushDownLeftSemiAntiJoin"
    assert plan.node("lu") is None  # only the join read it: no relation of Spark's plan
    joins = plan.stateful_operators("j")  # Spark's operator ids: the union's order
    assert [j.name for j in joins] == ["j_l", "j_l2"]
    for join, stream in zip(joins, ("l", "l2"), strict=True):
        assert isinstance(join, JoinNode)
        assert (join.left.relation, join.left.alias, join.right.relation) == (stream, "L", "r")
        assert join.left.event_time_column == "t" and join.left.state.eviction == "value"
        assert [o.name for o in join.output] == ["k", "t"]
        assert any("PushDownLeftSemiAntiJoin" in note for note in join.notes)
    assert plan.query_roots == ("j",)
    # each join reads r: two reads, as the generated job (which writes both joins) reads it
    assert plan.sources("j") == ["l", "r", "l2", "r"]
    assert [c.name for c in union.columns] == ["k", "t"]
    assert union.event_time_column == "t"


def test_each_join_has_its_own_inputs_event_time() -> None:
    """Spark's rewritten condition reads each input's attributes, with their watermark
    metadata, not the union's (the first input's marks)."""
    plan = _plan(
        _streams("l", "l2", "r", plain=("l",))
        + "union lu = l UNION ALL l2\njoin j = lu AS L LEFT SEMI JOIN r AS R\n  "
        + ON
    )
    first, second = plan.stateful_operators("j")
    assert isinstance(first, JoinNode) and isinstance(second, JoinNode)
    assert first.left.event_time_column is None and first.left.state.eviction == "never"
    assert second.left.event_time_column == "t" and second.left.state.eviction == "value"
    assert [o.event_time for o in first.output] == [False, False]
    assert [o.event_time for o in second.output] == [False, True]


def test_three_inputs_and_a_union_of_a_union_are_three_joins_in_order() -> None:
    three = _plan(
        _streams("l", "l2", "l3", "r")
        + "union lu = l UNION ALL l2 UNION ALL l3\njoin j = lu AS L LEFT SEMI JOIN r AS R\n  "
        + ON
    )
    assert [j.name for j in three.stateful_operators("j")] == ["j_l", "j_l2", "j_l3"]
    nested = _plan(
        _streams("l", "l2", "l3", "r")
        + "union lx = l UNION ALL l2\nunion lu = lx UNION ALL l3\n"
        + "join j = lu AS L LEFT SEMI JOIN r AS R\n  "
        + ON
    )
    operators = nested.stateful_operators("j")
    assert [j.left.relation for j in operators if isinstance(j, JoinNode)] == ["l", "l2", "l3"]
    assert nested.node("lx") is None and nested.node("lu") is None


def test_a_view_over_the_union_is_copied_per_input() -> None:
    plan = _plan(
        SEMI.replace(
            "join j = lu AS L",
            "view lv = SELECT X.k, X.t, X.v FROM lu AS X WHERE X.k <> 4\njoin j = lv AS L",
        )
    )
    joins = plan.stateful_operators("j")
    views = [plan.node(j.left.relation) for j in joins if isinstance(j, JoinNode)]
    assert [v.name for v in views if isinstance(v, ViewNode)] == ["lv_l", "lv_l2"]
    assert [v.input for v in views if isinstance(v, ViewNode)] == ["l", "l2"]
    assert plan.node("lv") is None and plan.node("lu") is None


def test_a_union_read_elsewhere_stays_and_a_taken_name_is_not_reused() -> None:
    plan = _plan(SEMI + "sink lu to console\n")
    assert isinstance(plan.node("lu"), UnionNode)
    assert plan.query_roots == ("lu", "j")
    taken = _plan(
        SEMI.replace("union lu", "join j_l = l AS A INNER JOIN r AS B ON A.k = B.k\nunion lu")
    )
    union = taken.node("j")
    assert isinstance(union, UnionNode) and union.relations == ("j_l_", "j_l2")
    assert isinstance(taken.node("j_l"), JoinNode) and taken.node("j_l").left.relation == "l"


def test_where_spark_does_not_push_the_join_stays_over_the_union() -> None:
    cases = {
        # sjoin's LEFT ANTI is a LEFT OUTER join and a filter (Spark has no stream-stream
        # LeftAnti): the rule pushes only a LeftSemi or LeftAnti Join
        "anti": SEMI.replace("LEFT SEMI", "LEFT ANTI"),
        # the rule matches a Union on the left only
        "right": _streams("l", "r", "r2")
        + "union ru = r UNION ALL r2\njoin j = l AS L LEFT SEMI JOIN ru AS R\n  "
        + ON,
        # an EventTimeWatermark above the union, which the rule does not push through
        "watermark": _streams("l", "l2", "r", plain=("l", "l2"))
        + "union lu = l UNION ALL l2\n"
        + "join j = lu AS L watermark t delay 5 seconds LEFT SEMI JOIN r AS R\n  "
        + ON,
    }
    for case, text in cases.items():
        plan = _plan(text)
        join = plan.node("j")
        assert isinstance(join, JoinNode), case
        assert [n.name for n in plan.stateful_operators("j")] == ["j"], case
        assert all(u.pushed_join is None for u in plan.unions), case


def test_the_plan_text_json_and_job_show_the_joins(text_snapshot: Any) -> None:
    result = check_text(SEMI, "semi.sjoin")
    plan = result.plan
    assert plan is not None
    (union,) = result.plan_json()["unions"]
    assert union["inputs"] == ["j_l", "j_l2"]
    assert union["pushed_join"] == {
        "join_type": "left_semi",
        "union": "lu",
        "rule": "PushDownLeftSemiAntiJoin",
    }
    job = compile_pyspark(plan)
    assert 'rels["j_l"] = joined.select(' in job and 'rels["j_l2"] = joined.select(' in job
    assert 'rels["j"] = rels["j_l"].union(rels["j_l2"])' in job
    assert "PushDownLeftSemiAntiJoin" in job
    assert plan_text(plan) + "\n---\n" + mermaid(plan) == text_snapshot


def test_a_union_without_a_pushed_join_keeps_its_json() -> None:
    text = _streams("l", "l2") + "union lu = l UNION ALL l2\nsink lu to console\n"
    (union,) = check_text(text, "u.sjoin").plan_json()["unions"]
    assert "pushed_join" not in union


def test_before_spark_4_each_join_notes_the_index_keyed_watermark() -> None:
    """Spark before 4.0 keys its watermark nodes by their index in each batch's executed plan
    (SPARK-50046): the planner still pushes the join (as Spark 3.5 does) and notes on each
    derived join that Spark's global watermark may differ; from 4.0 no such note."""
    for version, noted in (("3.5", True), ("3.4", True), ("4.0", False), ("4.3", False)):
        plan = _plan(SEMI.replace("spark 4.3", f"spark {version}", 1))
        union = plan.node("j")
        assert isinstance(union, UnionNode) and union.relations == ("j_l", "j_l2")
        for name in union.relations:
            join = plan.node(name)
            assert isinstance(join, JoinNode)
            assert (INDEX_KEYED_WATERMARK in join.notes) is noted, (version, join.notes)
            assert any("PushDownLeftSemiAntiJoin" in note for note in join.notes)


def test_relation_runs_the_union_below_a_pushed_join_and_names_the_join_as_written() -> None:
    """`--relation lu`: the query rooted at the union has no join, so the union stays (it
    used to be left out, as only the pushed joins read it); the choices an unknown name is
    given are the joins as written (`j`, not the derived `j_l`, `j_l2`)."""
    result = check_text(SEMI, "semi.sjoin", "lu")
    assert result.ok and result.plan is not None
    assert isinstance(result.plan.node("lu"), UnionNode)
    assert query_roots(result.plan, "lu") == ["lu"]
    plan = _plan(SEMI)
    assert plan.written_operators == ("j",)
    with pytest.raises(UsageError, match=r"choose a join or aggregate: j$"):
        query_roots(plan, "nope")
