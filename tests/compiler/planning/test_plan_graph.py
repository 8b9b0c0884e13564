"""The Plan owns its graph: every node names its inputs (``inputs``: input name, relation) and
its row layout (``layout``), and the Plan answers every walk over them (``inputs_of``,
``columns_of``, ``readers``, ``closure``, ``upstream``, ``walk``, ``stateful_walk``,
``sources``, ``stateful_operators``), iteratively (``compiler/planning/graph.py``), over diamonds,
self-joins, several query roots, and a hand-made cycle (the binder rejects them) without
looping."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from sjoin.api import check_text
from sjoin.compiler.planning import graph
from sjoin.compiler.planning.plan import OPERATOR_KINDS, JoinNode, Plan, PlanNode, StreamNode

EXAMPLES = sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.sjoin"))

# a and b meet in ab, a and c in ac, and top joins both (a diamond over a); twice joins ab
# with itself and counts aggregates it; self joins the stream a with itself
SPEC = """
spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
stream b (k BIGINT, u TIMESTAMP) watermark u delay 1 minute
stream c (k BIGINT, v TIMESTAMP) watermark v delay 1 minute
join ab = a AS x INNER JOIN b AS y ON x.k = y.k SELECT x.k, x.t
join ac = a AS x INNER JOIN c AS y ON x.k = y.k SELECT x.k AS k2, y.v
join top = ab AS l INNER JOIN ac AS r ON l.k = r.k2 SELECT l.k, r.v
join twice = ab AS l INNER JOIN ab AS r ON l.k = r.k SELECT l.k, r.t
aggregate counts = twice AS w GROUP BY w.k SELECT w.k, count(*) AS n OUTPUT MODE update
join self = a AS x INNER JOIN a AS y ON x.k = y.k SELECT x.k, y.t
"""


def _plan(text: str = SPEC) -> Plan:
    plan = check_text(text).plan
    assert plan is not None
    return plan


def _shared() -> Plan:
    """SPEC's plan with ``twice`` reading the one node ``ab`` on both sides: the planner
    gives its second read a copy (``ab_2``: compiler/planning/read_twice.py, tested in
    test_read_twice.py), so the walks over a relation read twice are tested on a plan built
    by hand, as the walks meet one (a plan of an older sjoin, a cycle)."""
    plan = _plan()
    assert plan.copies == {"ab_2": "ab"}
    twice = plan.node("twice")
    assert isinstance(twice, JoinNode) and twice.right.relation == "ab_2"
    shared = replace(twice, right=replace(twice.right, relation="ab"))
    nodes = tuple(shared if n is twice else n for n in plan.nodes if n.name != "ab_2")
    return replace(plan, nodes=nodes, copies={})


def _names(nodes: Sequence[PlanNode]) -> list[str]:
    return [n.name for n in nodes]


def test_every_node_names_its_inputs_and_columns() -> None:
    plan = _shared()
    assert plan.inputs_of("a") == ()
    assert plan.inputs_of("top") == (("left", "ab"), ("right", "ac"))
    assert plan.inputs_of("twice") == (("left", "ab"), ("right", "ab"))
    assert plan.inputs_of("counts") == (("input", "twice"),)
    assert plan.columns_of("b") == [("k", "bigint"), ("u", "timestamp")]
    assert plan.columns_of("ac") == [("k2", "bigint"), ("v", "timestamp")]
    assert plan.columns_of("counts") == [("k", "bigint"), ("n", "bigint")]
    for name in ("nothing", ""):
        with pytest.raises(KeyError, match="no relation"):
            plan.inputs_of(name)
        with pytest.raises(KeyError, match="no relation"):
            plan.columns_of(name)


def test_readers_are_each_operator_once_in_plan_order() -> None:
    plan = _shared()
    assert plan.readers("a") == ("ab", "ac", "self")  # self reads a twice: named once
    assert plan.readers("ab") == ("top", "twice")
    assert plan.readers("twice") == ("counts",)
    assert plan.readers("counts") == ()
    assert plan.readers("nothing") == ()


def test_a_diamond_is_walked_once_per_relation() -> None:
    plan = _plan()
    assert _names(plan.closure("top")) == ["a", "b", "c", "ab", "ac", "top"]  # plan order
    assert _names(plan.upstream("top")) == ["ab", "a", "b", "ac", "c"]  # pre-order, not top
    assert _names(plan.walk("top")) == ["a", "b", "ab", "c", "ac", "top"]  # inputs first
    assert _names(plan.stateful_walk("top")) == ["ab", "ac", "top"]


def test_a_diamond_is_spark_s_tree_for_sources_and_operator_ids() -> None:
    """Spark expands the plan into a tree: a stream read under two joins is two sources."""
    plan = _plan()
    assert plan.sources("top") == ["a", "b", "a", "c"]
    assert _names(plan.stateful_operators("top")) == ["top", "ab", "ac"]


def test_a_self_join() -> None:
    plan = _shared()
    # of a join's output: the relation once in the closure, twice in Spark's tree
    assert _names(plan.closure("twice")) == ["a", "b", "ab", "twice"]
    assert _names(plan.upstream("twice")) == ["ab", "a", "b"]
    assert _names(plan.walk("counts")) == ["a", "b", "ab", "twice", "counts"]
    assert _names(plan.stateful_operators("counts")) == ["counts", "twice", "ab", "ab"]
    assert plan.sources("counts") == ["a", "b", "a", "b"]
    # of a stream
    assert _names(plan.closure("self")) == ["a", "self"]
    assert _names(plan.upstream("self")) == ["a"]
    assert plan.sources("self") == ["a", "a"]
    assert _names(plan.stateful_operators("self")) == ["self"]


def test_several_roots_share_what_is_below_them() -> None:
    plan = _plan()
    assert plan.query_roots == ("top", "counts", "self")
    below = {root: {n.name for n in plan.closure(root)} for root in plan.query_roots}
    assert below["top"] & below["counts"] == {"a", "b", "ab"}
    assert below["counts"] & below["self"] == {"a"}
    # every relation is under some root
    assert set().union(*below.values()) == {n.name for n in plan.nodes}
    # a stream as a root, and a name of no relation
    assert _names(plan.closure("a")) == ["a"]
    assert plan.upstream("a") == [] and plan.sources("a") == ["a"]
    assert plan.stateful_operators("a") == [] and _names(plan.walk("a")) == ["a"]
    assert plan.closure("nothing") == [] and plan.upstream("nothing") == []
    assert plan.walk("nothing") == [] and plan.sources("nothing") == []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_planned_graph_is_cycle_free_in_topological_order(path: Path) -> None:
    """Each node after its inputs in ``plan.nodes``, so no walk meets a cycle; and the walks
    agree with Spark's recursive expansion (pre-order, left before right)."""
    for plan in (_plan(path.read_text(encoding="utf-8")), _plan()):
        position = {n.name: i for i, n in enumerate(plan.nodes)}
        for node in plan.nodes:
            assert all(position[r] < position[node.name] for _, r in node.inputs)
        for root in plan.query_roots:
            tree = _spark_tree(plan, root)
            # a static table is a leaf but no streaming source; a view, a union and a
            # stream-static join have inputs but no state
            sources = [n.name for n in tree if not n.inputs and isinstance(n, StreamNode)]
            assert plan.sources(root) == sources
            stateful = [n.name for n in tree if isinstance(n, OPERATOR_KINDS)]
            assert _names(plan.stateful_operators(root)) == stateful
            walked = _names(plan.walk(root))
            assert len(walked) == len(set(walked)) == len(plan.closure(root))
            assert set(walked) == {n.name for n in tree}
            at = {name: i for i, name in enumerate(walked)}  # each after its inputs
            assert all(at[r] < at[n] for n in walked for _, r in plan.inputs_of(n))


def _spark_tree(plan: Plan, name: str) -> list[PlanNode]:
    node = plan.node(name)
    assert node is not None
    return [node, *(n for _, r in node.inputs for n in _spark_tree(plan, r))]


def test_a_hand_made_cycle_ends_every_walk() -> None:
    """The binder rejects a cycle; a plan built by hand with one (ab reads top, which reads
    ab) still ends every walk, the relation met again below itself left out there."""
    plan = _shared()
    ab = plan.node("ab")
    assert isinstance(ab, JoinNode)
    looped = replace(ab, left=replace(ab.left, relation="top"))
    cyclic = replace(plan, nodes=tuple(looped if n is ab else n for n in plan.nodes))
    assert cyclic.inputs_of("ab") == (("left", "top"), ("right", "b"))
    assert _names(cyclic.upstream("top")) == ["ab", "b", "ac", "a", "c"]
    assert _names(cyclic.walk("top")) == ["b", "ab", "a", "c", "ac", "top"]
    assert _names(cyclic.closure("top")) == ["a", "b", "c", "ab", "ac", "top"]
    assert cyclic.sources("top") == ["b", "a", "c"]
    assert _names(cyclic.stateful_operators("top")) == ["top", "ab", "ac"]
    assert _names(cyclic.stateful_operators("twice")) == [
        "twice",
        "ab",
        "top",
        "ac",
        "ab",
        "top",
        "ac",
    ]


def test_the_walks_are_iterative() -> None:
    """A chain deeper than the recursion limit costs its size, and nothing recurses."""
    depth = sys.getrecursionlimit() * 3
    chain = {f"r{i}": (f"r{i + 1}", f"s{i}") for i in range(depth)}

    def inputs(name: str) -> tuple[str, ...] | None:
        return chain.get(name, () if name.startswith("s") or name == f"r{depth}" else None)

    down = graph.preorder("r0", inputs)
    assert down[:3] == ["r0", "r1", "r2"] and len(down) == 2 * depth + 1
    assert graph.preorder("r0", inputs, each_read=True) == down
    up = graph.postorder("r0", inputs)
    assert up[:3] == [f"r{depth}", f"s{depth - 1}", f"r{depth - 1}"] and up[-1] == "r0"
    assert sorted(up) == sorted(down)
