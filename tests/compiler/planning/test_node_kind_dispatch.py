"""The Plan's readers dispatch on the node's kind (``functools.singledispatch``, as the PySpark
back end's ``emit``): each reader that must know every kind has a case for each kind of
``PlanNode`` (each that must know every stateful operator, for each of ``OPERATOR_KINDS``),
and a kind it has no case for fails loudly, naming the kind, instead of taking another
kind's path."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, get_args

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends import pipeline
from sjoin.compiler.checks import job_warnings
from sjoin.compiler.describe import capacity, diff, explain
from sjoin.compiler.planning.plan import OPERATOR_KINDS, Plan, PlanNode

# the readers that answer for every kind of relation, and those for every stateful operator
EVERY_KIND: dict[str, Any] = {
    "explain._node_text": explain._node_text,
    "explain._text_place": explain._text_place,
    "capacity._step": capacity._step,
    "pipeline._relation_sql": pipeline._relation_sql,
    "job_warnings.name_span": job_warnings.name_span,
}
EVERY_OPERATOR: dict[str, Any] = {
    "diff._kind": diff._kind,
    "diff._diff_same_kind": diff._diff_same_kind,
}


@pytest.mark.parametrize("reader", sorted(EVERY_KIND))
def test_every_node_kind_has_its_case(reader: str) -> None:
    dispatch = EVERY_KIND[reader]
    fallback = dispatch.dispatch(object)
    missing = [k.__name__ for k in get_args(PlanNode) if dispatch.dispatch(k) is fallback]
    assert missing == [], f"{reader} has no case for {missing}"


@pytest.mark.parametrize("reader", sorted(EVERY_OPERATOR))
def test_every_operator_kind_has_its_case(reader: str) -> None:
    dispatch = EVERY_OPERATOR[reader]
    fallback = dispatch.dispatch(object)
    missing = [k.__name__ for k in OPERATOR_KINDS if dispatch.dispatch(k) is fallback]
    assert missing == [], f"{reader} has no case for {missing}"


@dataclass(frozen=True)
class ProbeNode:
    """A node kind no reader knows: what a new kind is until its cases are written."""

    name: str = "probe"
    inputs: tuple[tuple[str, str], ...] = ()
    layout: tuple[tuple[str, str], ...] = ()
    input_watermarks: tuple[()] = ()


SPEC = """
spark 4.3
stream a (k BIGINT, t TIMESTAMP) watermark t delay 1 minute
stream b (k BIGINT, u TIMESTAMP) watermark u delay 1 minute
join ab = a AS x INNER JOIN b AS y ON x.k = y.k AND y.u BETWEEN x.t AND x.t + INTERVAL 1 MINUTE
  SELECT x.k, x.t
"""


def _with_probe() -> Plan:
    plan = check_text(SPEC).plan
    assert plan is not None
    return replace(plan, nodes=(*plan.nodes, ProbeNode()))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "read",
    [
        explain.plan_text,
        lambda plan: capacity.predict(plan, {"a": 10.0, "b": 10.0}),
        lambda plan: pipeline.compile_pipeline(plan, "p", "/tmp/storage", formatted=False),
        job_warnings.pipeline_refusals,
    ],
    ids=["plan_text", "predict", "compile_pipeline", "pipeline_refusals"],
)
def test_an_unknown_node_kind_fails_naming_it(read: Callable[[Plan], object]) -> None:
    with pytest.raises(TypeError, match="ProbeNode"):
        read(_with_probe())
