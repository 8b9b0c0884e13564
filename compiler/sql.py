"""The one way a bound expression becomes Spark SQL text (plans, messages, generated code).

sqlglot's Spark generator, with function names in lower case as Spark users write them.
"""

from __future__ import annotations

from sqlglot import exp


def spark_sql(node: exp.Expression) -> str:
    return node.sql(dialect="spark", normalize_functions="lower")
