"""One row of the catalogue's recorded table: what Spark did with a case."""

from __future__ import annotations

from typing import Any


def outcome_row(case: Any, outcome: Any, spark_version: str) -> dict[str, Any]:
    return {
        "change": case.name,
        "covers": case.covers,
        "spark": spark_version,
        "resumed": outcome.resumed,
        "error": outcome.error,
        "message": outcome.message,
        "shuffle_partitions": outcome.shuffle_partitions,
        "null_padded_rows": null_padded(outcome.rows),
    }


def null_padded(rows: list[dict[str, Any]]) -> int:
    """NEW's rows after the restart whose right side is null (the join's `rt` column)."""
    return sum(1 for r in rows if "rt" in r and r["rt"] is None)
