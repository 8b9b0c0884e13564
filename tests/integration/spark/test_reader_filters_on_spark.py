"""A reader's null-rejecting filter over an outer join, read from real Spark's optimized
plans: the generated job's ``build`` (compile_pyspark) runs on the local Spark, and the join
type the planner says Spark runs (compiler/planning/readers.py, EliminateOuterJoin after
TimeWindowing's isnotnull or a join's inferred one) is the one in the optimized plan, for
each case of tests/compiler/planning/test_reader_filters.py."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sjoin.api import check_text
from sjoin.compiler.backends.pyspark import compile_pyspark
from sjoin.compiler.vocabulary.model import JOIN_KINDS
from sjoin.jvm.spark_driver import StreamDriver

from ...compiler.planning.test_reader_filters import CASES, HEAD

pytestmark = pytest.mark.spark

DDL = {name: "k BIGINT, t TIMESTAMP, v STRING" for name in ("l", "r", "m")}
ROW = {"k": 1, "t": "2024-01-01T00:00:00", "v": "a"}


def _stream_joins(spark: Any, text: str, root: str) -> list[str]:
    """The type of each stream-stream join (Spark's name: Inner, RightOuter, ...) in the
    optimized plan of the query rooted at ``root``, bottom-most first."""
    result = check_text(text, "readers.sjoin")
    assert result.ok and result.plan is not None, result.diagnostics
    namespace: dict[str, Any] = {}
    exec(compile(compile_pyspark(result.plan), "job.py", "exec"), namespace)
    confs = dict(result.plan.spark_conf)  # the job's confs (allowMultiple=false here)
    before = {key: spark.conf.get(key, None) for key in confs}
    try:
        for key, value in confs.items():
            spark.conf.set(key, value)
        with StreamDriver(spark, DDL) as driver:
            table = spark.createDataFrame([(1, "x")], "k BIGINT, name STRING")
            rels = namespace["build"](spark, {**driver.inputs, "d": table})
            driver.start(rels[root])
            driver.feed({"l": [ROW], "r": [ROW], "m": [ROW]})
            execution = driver.query._jsq.streamingQuery().lastExecution()
            plan = str(execution.optimizedPlan().toString())
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
    found = []
    for line in reversed(plan.splitlines()):
        match = re.search(r"Join (\w+), ", line)
        # a stream-stream join's condition reads a time range; the stream-static one a key
        if match and "INTERVAL" in line:
            found.append(match.group(1))
    return found


# Where one JoinNode cannot be what Spark runs in every query: the join is also a query of
# its own, or another reader keeps its null-padded rows. Spark converts the join only in the
# aggregate's query; sjoin keeps the written type for all of them (the report's "left").
PER_QUERY = {
    "the join is a query of its own (a sink)": {"j": "RightOuter", "a": "Inner"},
    "another reader keeps the null-padded rows": {"v": "RightOuter", "a": "Inner"},
}


@pytest.mark.parametrize("name", list(CASES))
def test_spark_runs_the_join_the_planner_says(spark: Any, name: str) -> None:
    text, runs = CASES[name]
    spec = HEAD + text
    if name in PER_QUERY:
        for root, spark_runs in PER_QUERY[name].items():
            assert _stream_joins(spark, spec, root)[0] == spark_runs, (name, root)
        return
    root = "a" if re.search(r"^aggregate a ", spec, re.M) else "e"
    joins = _stream_joins(spark, spec, root)
    below = joins[:-1] if root == "e" and " JOIN m AS M" in spec else joins  # e itself
    assert below and set(below) == {JOIN_KINDS[runs].spark_name}, (name, joins)
