"""The one way a bound expression becomes Spark SQL text (plans, messages, generated code).

sqlglot's Spark generator, with function names in lower case as Spark users write them.
"""

from __future__ import annotations

from sqlglot import exp


def spark_sql(node: exp.Expression) -> str:
    return node.sql(dialect="spark", normalize_functions="lower")


def written_sql(node: exp.Expression) -> str:
    """Spark SQL of an expression as the user wrote it: a column the planner projected for
    the join (a window) shows as the window() call it stands for."""

    def restore(sub: exp.Expression) -> exp.Expression:
        written = sub.meta.get("written") if isinstance(sub, exp.Column) else None
        return written.copy() if isinstance(written, exp.Expression) else sub

    return spark_sql(node.transform(restore))
