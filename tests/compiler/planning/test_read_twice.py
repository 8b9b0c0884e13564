"""A relation read twice in one query is two subtrees in Spark's plan, each its own operator
with its reader's filters pushed in: the planner gives each later read a copy of the
relation (``compiler/planning/read_twice.py``).  Spark's side: parity
``a_join_read_twice_in_one_query`` (4.3 and 3.5)."""

from __future__ import annotations

from sjoin.api import check_text
from sjoin.compiler.describe.explain import plan_text
from sjoin.compiler.planning.plan import JoinNode, Plan
from sjoin.compiler.planning.read_twice import MAX_COPIES
from sjoin.compiler.vocabulary.sql import spark_sql

HEADER = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream m (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
stream r (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds
join i = l AS A INNER JOIN m AS B
  ON A.k = B.k AND A.t BETWEEN B.t AND B.t + INTERVAL 5 SECONDS
  SELECT A.k AS k, A.t AS t, A.v AS v
"""
READERS = """join j = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> '{j}'
  SELECT L.k AS k, L.t AS t, L.v AS v
join n = i AS L INNER JOIN r AS R
  ON L.k = R.k AND L.t BETWEEN R.t AND R.t + INTERVAL 5 SECONDS AND L.v <> '{n}'
  SELECT L.k AS k, L.t AS t, L.v AS v
union u = j UNION ALL n
"""


def _plan(text: str) -> Plan:
    result = check_text(text)
    assert result.plan is not None, result.diagnostics
    return result.plan


def _join(plan: Plan, name: str) -> JoinNode:
    node = plan.node(name)
    assert isinstance(node, JoinNode), name
    return node


def _left_filter(plan: Plan, name: str) -> str | None:
    pushed = _join(plan, name).left.pushed_filter
    return None if pushed is None else spark_sql(pushed)


def test_two_readers_with_their_own_filters_read_two_nodes() -> None:
    plan = _plan(HEADER + READERS.format(j="b", n="c"))
    assert plan.copies == {"i_2": "i"}
    assert _join(plan, "j").left.relation == "i"
    assert _join(plan, "n").left.relation == "i_2"
    # each reader's filter in its own copy (Spark 4.3.0: 5 rows in each `i`, not 6)
    assert _left_filter(plan, "i") == "A.v <> 'b'"
    assert _left_filter(plan, "i_2") == "A.v <> 'c'"
    # two operators, in Spark's operator-id order (pre-order, left before right)
    assert [n.name for n in plan.stateful_operators("u")] == ["j", "i", "n", "i_2"]
    assert plan.sources("u") == ["l", "m", "r", "l", "m", "r"]
    # the user wrote `i` once: it is one operator to run on its own, and `sjoin plan` says
    # what the copy is
    assert plan.written_operators == ("i", "j", "n")
    assert "`i` as Spark runs it for a later read in one query" in plan_text(plan)


def test_identical_readers_still_read_two_operators() -> None:
    plan = _plan(HEADER + READERS.format(j="b", n="b"))
    assert [n.name for n in plan.stateful_operators("u")] == ["j", "i", "n", "i_2"]
    first, second = _join(plan, "i"), _join(plan, "i_2")
    assert second.left.relation == first.left.relation == "l"
    assert _left_filter(plan, "i") == _left_filter(plan, "i_2") == "A.v <> 'b'"


def test_a_self_join_of_a_join_reads_a_copy() -> None:
    plan = _plan(
        HEADER
        + """join twice = i AS x INNER JOIN i AS y ON x.k = y.k AND x.t = y.t SELECT x.k, y.v
"""
    )
    assert plan.copies == {"i_2": "i"}
    assert [n.name for n in plan.stateful_operators("twice")] == ["twice", "i", "i_2"]


def test_a_stream_self_join_is_unchanged() -> None:
    plan = _plan(
        HEADER
        + """join self = l AS x INNER JOIN l AS y
  ON x.k = y.k AND x.t BETWEEN y.t AND y.t + INTERVAL 5 SECONDS SELECT x.k, y.v
"""
    )
    assert plan.copies == {}
    assert _join(plan, "self").left.relation == _join(plan, "self").right.relation == "l"
    assert plan.sources("self") == ["l", "l"]


def test_a_relation_read_twice_through_views_copies_the_views() -> None:
    plan = _plan(
        HEADER
        + """view w = SELECT I.k AS k, I.t AS t, I.v AS v FROM i AS I WHERE I.k > 0
"""
        + READERS.replace("= i AS L", "= w AS L").format(j="b", n="c")
    )
    assert plan.copies == {"w_2": "w", "i_2": "i"}
    assert [n.name for n in plan.stateful_operators("u")] == ["j", "i", "n", "i_2"]
    assert _join(plan, "n").left.relation == "w_2"


def test_a_relation_with_a_sink_read_twice_by_another_query() -> None:
    """`i` is a query of its own (its sink) and read twice in `u`: the shared plan pushes no
    filter into `i` (two queries read it), the copy takes `n`'s, and `u` planned alone (as
    Spark plans each query) pushes `j`'s into its `i`."""
    plan = _plan(
        HEADER
        + READERS.format(j="b", n="c")
        + "sink i to parquet (path = 'out/i') checkpoint 'chk/i'\n"
    )
    assert plan.query_roots == ("i", "u")
    assert plan.copies == {"i_2": "i"}
    assert _left_filter(plan, "i") is None
    assert _left_filter(plan, "i_2") == "A.v <> 'c'"
    as_u = plan.for_query("u")
    assert _left_filter(as_u, "i") == "A.v <> 'b'"
    assert _left_filter(as_u, "i_2") == "A.v <> 'c'"
    assert [n.name for n in as_u.stateful_operators("u")] == ["j", "i", "n", "i_2"]
    as_i = plan.for_query("i")
    assert _left_filter(as_i, "i") is None
    assert [n.name for n in as_i.stateful_operators("i")] == ["i"]


def test_a_copy_s_diagnostics_are_said_once_of_the_written_relation() -> None:
    # no watermark on m: Spark cannot evict `i`'s right state (W001), once for `i`
    text = (HEADER + READERS.format(j="b", n="c")).replace(
        "stream m (k BIGINT, t TIMESTAMP, v STRING) watermark t delay 0 seconds",
        "stream m (k BIGINT, t TIMESTAMP, v STRING)",
    )
    result = check_text(text)
    messages = [d.message for d in result.diagnostics]
    assert not any("i_2" in m for m in messages), messages
    assert len(messages) == len(set(messages)), messages


def test_reads_that_multiply_stop_at_the_copy_limit() -> None:
    """Each level joins the one below with itself: 2^8 reads of the lowest join in Spark's
    tree.  The planner copies at most ``MAX_COPIES`` relations and shares the rest."""
    levels = ["join j0 = l AS x INNER JOIN m AS y ON x.k = y.k AND x.t = y.t SELECT x.k, x.t"]
    levels += [
        f"join j{i} = j{i - 1} AS x INNER JOIN j{i - 1} AS y ON x.k = y.k AND x.t = y.t"
        " SELECT x.k, x.t"
        for i in range(1, 9)
    ]
    plan = _plan(HEADER + "\n".join(levels) + "\n")
    assert 0 < len(plan.copies) <= MAX_COPIES
    assert len(plan.nodes) == 4 + 9 + len(plan.copies)
