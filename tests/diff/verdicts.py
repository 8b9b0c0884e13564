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
    }
