"""The filters Spark infers through a join's equalities (``compiler/planning/infer.py``), read from
the
running Spark's optimized plan: each join input's subtree holds the planner's inferred
filters, and not the ones the planner says Spark does not infer (one substitution step; a
cast one way only).  The per-join-type sides and the state rows they save are checked by the
``*_inferred_*`` parity scenarios (tests/integration/parity/scenarios.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.vocabulary.sql import spark_sql
from sjoin.jvm.spark_driver import StreamDriver

pytestmark = pytest.mark.spark

DDL = "k BIGINT, t TIMESTAMP, n BIGINT, i INT"
SPEC = """spark 4.3
stream l (k BIGINT, t TIMESTAMP, n BIGINT, i INT) watermark t delay 10 seconds
stream r (k BIGINT, t TIMESTAMP, n BIGINT, i INT) watermark t delay 10 seconds
join j = l AS L INNER JOIN r AS R ON {on}
  SELECT L.k AS lk, R.n AS rn
"""


def without_calls(text: str, name: str) -> str:
    """``text`` with each ``name(...)`` call (balanced parentheses) replaced by ``J``: the
    driver's inputs are parsed JSON, and Spark pushes filters down onto that parse."""
    out, i = [], 0
    while (start := text.find(name + "(", i)) >= 0:
        out.append(text[i:start])
        depth, j = 0, start + len(name)
        while True:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        out.append("J")
        i = j
    out.append(text[i:])
    return "".join(out)


def norm(text: str) -> str:
    text = without_calls(text, "from_json")
    text = re.sub(r"#\d+L?|-T\d+ms", "", text)
    text = re.sub(r"\bJ\.|\b[LR]\.", "", text)
    return re.sub(r"[\s()]", "", text)


def subtrees(plan: str) -> tuple[str, str]:
    """The left and right inputs of the plan's one Join, as text."""
    lines = plan.splitlines()
    top = next(i for i, line in enumerate(lines) if "Join Inner" in line)
    match = re.match(r"[ :]*(?:\+- |:- )?", lines[top])
    indent = match.end() if match else 0  # where the join's children's branches start
    right = next(i for i in range(top + 1, len(lines)) if lines[i][indent:].startswith("+- "))
    return "\n".join(lines[top + 1 : right]), "\n".join(lines[right:])


CASES = [
    # one step: R.k > R.n gives L.k > R.n and R.k > L.n (both sides), never L.k > L.n
    ("L.k = R.k AND L.n = R.n AND L.t = R.t AND R.k > R.n", []),
    # a same-side equality below the join reaches the other side (two steps, two nodes)
    ("L.k = R.k AND L.t = R.t AND R.k = R.n AND R.n > 5", []),
    # INT = BIGINT is CAST(L.i AS BIGINT) = R.k: R.k > 5 reaches the left, L.i < 9 not the right
    ("L.i = R.k AND L.t = R.t AND R.k > 5 AND L.i < 9", ["k < 9"]),
]


@pytest.mark.parametrize(("on", "absent_right"), CASES)
def test_inferred_filters_are_sparks(spark: Any, on: str, absent_right: list[str]) -> None:
    from pyspark.sql import functions as F

    result = check_text(SPEC.format(on=on), "infer.sjoin")
    assert result.ok and result.plan is not None
    join = result.plan.joins[0]
    with StreamDriver(spark, {"l": DDL, "r": DDL}) as driver:
        left = driver.inputs["l"].withWatermark("t", "10 seconds").alias("L")
        right = driver.inputs["r"].withWatermark("t", "10 seconds").alias("R")
        joined = left.join(right, F.expr(on), "inner")
        driver.start(joined.select(F.col("L.k").alias("lk"), F.col("R.n").alias("rn")))
        driver.feed({"l": [], "r": []})
        execution = driver.query._jsq.streamingQuery().lastExecution()
        plan = str(execution.optimizedPlan().toString())
    texts = dict(zip(("left", "right"), map(norm, subtrees(plan)), strict=True))
    for side in (join.left, join.right):
        for predicate in side.inferred_filters:
            want = norm(spark_sql(predicate)).replace("CASTiASBIGINT", "i").lower()
            # Spark unwraps CAST(i AS BIGINT) > 5 to i > 5 (UnwrapCastInBinaryComparison)
            assert want in texts[side.name].lower(), (side.name, want, plan)
    if "R.k > R.n" in on:
        assert not join.left.inferred_filters
        assert "k>n" not in texts["left"].replace("isnotnull", "")
    for text in absent_right:
        assert norm(text) not in texts["right"], (text, plan)
