"""Scenario helpers for runtime tests: run one scenario on the runtime and (optionally) on
real Spark through ``sjoin.jvm.spark_driver``, and compare them batch by batch."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sjoin.api import check_text
from sjoin.compiler.planning.plan import Plan
from sjoin.compiler.vocabulary.settings import SETTINGS
from sjoin.runtime import EngineName, RunResult, run
from sjoin.runtime.engine.values import format_timestamp, parse_timestamp

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
Batch = Mapping[str, Sequence[Mapping[str, Any]]]


def ts(seconds: float) -> str:
    """An ISO timestamp ``seconds`` after the epoch (as trace rows write times)."""
    return format_timestamp(round(seconds * 1_000_000))


def plan_of(spec: str) -> Plan:
    result = check_text(spec, "scenario.sjoin")
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity == "error"]
    assert result.ok and result.plan is not None, errors
    return result.plan


def trace_records(batches: Sequence[Batch]) -> list[dict[str, Any]]:
    return [
        {"batch": i, "stream": stream, "row": dict(row)}
        for i, batch in enumerate(batches)
        for stream, rows in batch.items()
        for row in rows
    ]


@dataclass(frozen=True)
class Observed:
    """One executed batch as both engines are compared: rows as a sorted multiset of
    canonical JSON, the watermark in ms and per operator (total, updated, removed, dropped)."""

    batch: int
    rows: tuple[str, ...]
    watermark_ms: int | None
    metrics: tuple[tuple[int, int, int, int], ...]


def canonical(row: Mapping[str, Any]) -> str:
    def norm(v: Any) -> Any:
        if isinstance(v, datetime):
            return format_timestamp((v - EPOCH) // timedelta(microseconds=1))
        if isinstance(v, Mapping):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, float) and v.is_integer():
            return v
        return v

    return json.dumps({k: norm(v) for k, v in row.items()}, sort_keys=True, default=str)


def _watermark_ms(text: str | None) -> int | None:
    if text is None:
        return None
    us = parse_timestamp(text)
    assert us is not None, text
    return us // 1000


def observe_runtime(result: RunResult, relation: str | None = None) -> list[Observed]:
    out = []
    for b in result.batches:
        rows = tuple(sorted(canonical(r) for rel, r in b.rows if relation in (None, rel)))
        metrics = tuple(
            (
                op["numRowsTotal"],
                op["numRowsUpdated"],
                op["numRowsRemoved"],
                op["numRowsDroppedByWatermark"],
            )
            for op in b.progress["operators"]
        )
        out.append(Observed(b.batch, rows, _watermark_ms(b.watermark), metrics))
    return out


@dataclass
class Scenario:
    """A spec, its micro-batches, and (for live checks) the same job written in PySpark."""

    name: str
    spec: str
    batches: list[Batch]
    relation: str | None = None
    spark_job: Callable[[dict[str, Any]], Any] | None = None
    output_mode: str = "append"
    expected: list[Observed] | None = field(default=None, repr=False)

    @property
    def plan(self) -> Plan:
        return plan_of(self.spec)

    def run_runtime(self, engine: EngineName = "reference") -> list[Observed]:
        result = run(self.plan, trace_records(self.batches), relation=self.relation, engine=engine)
        return observe_runtime(result, self.relation)

    def run_spark(self, spark: Any) -> list[Observed]:
        from sjoin.jvm.spark_driver import run_batches

        plan = self.plan
        schemas = {
            s.name: ", ".join(f"`{c.name}` {c.type}" for c in s.columns) for s in plan.streams
        }
        assert self.spark_job is not None
        confs = spark_confs(plan)
        for key, value in confs.items():
            spark.conf.set(key, value)
        try:
            result = run_batches(spark, schemas, self.spark_job, self.batches, self.output_mode)
        finally:
            for key in confs:
                spark.conf.unset(key)
        return [
            Observed(
                b.batch_id,
                tuple(sorted(canonical(r) for r in b.rows)),
                _watermark_ms(b.watermark),
                tuple(
                    (
                        op["numRowsTotal"],
                        op["numRowsUpdated"],
                        op["numRowsRemoved"],
                        op["numRowsDroppedByWatermark"],
                    )
                    for op in b.state_operators
                ),
            )
            for b in result.batches
        ]


def spark_confs(plan: Plan) -> dict[str, str]:
    """The Spark confs a scenario's settings stand for (those that change results)."""
    confs = {}
    for name in ("multiple_watermark_policy", "no_data_micro_batches"):
        setting = SETTINGS[name]
        value = plan.settings.value(name)
        if value != setting.default and setting.spark_conf:
            confs[setting.spark_conf] = str(value).lower()
    return confs


def explain_difference(got: list[Observed], want: list[Observed]) -> str:
    lines = []
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else None
        w = want[i] if i < len(want) else None
        mark = "  " if g == w else "!!"
        lines.append(f"{mark} runtime {g}\n{mark} spark   {w}")
    return "\n".join(lines)


def assert_same(got: list[Observed], want: list[Observed]) -> None:
    assert got == want, "\n" + explain_difference(got, want)
