"""`sjoin diff`: plan two specs (or one spec at two Spark versions), compare the plans with
``compiler/describe/diff.py``, and with a trace run both on the reference runtime and show the first
batches whose output rows (or, across versions, state metrics) differ.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..api import CheckResult
from ..compiler.describe.diff import SpecDiff, VersionDiff, diff_plans, diff_versions, pair_queries
from ..compiler.describe.explain import plan_json
from ..compiler.planning.plan import Plan
from ..compiler.vocabulary.model import SUPPORTED_SPARK, SparkVersion
from ..runtime.engine.values import dumps
from .diagnostics import count, shown_value

MAX_BATCHES = 3  # differing batches shown per query
MAX_ROWS = 3  # rows shown per side of a batch
METRICS = ("numRowsTotal", "numRowsUpdated", "numRowsRemoved", "numRowsDroppedByWatermark")


class DiffUsageError(Exception):
    """A bad --spark/--to value (exit 2)."""


@dataclass
class BatchDifference:
    batch: int
    only_old: list[dict[str, Any]]  # rows, up to MAX_ROWS
    only_new: list[dict[str, Any]]
    counts: tuple[int, int]  # how many rows are only in old / only in new
    metrics: list[str] = field(default_factory=list)  # "attributed.numRowsRemoved: 6 -> 4"

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "only_old": self.only_old,
            "only_new": self.only_new,
            "only_old_count": self.counts[0],
            "only_new_count": self.counts[1],
            "metrics": self.metrics,
        }


@dataclass
class TraceDiff:
    """Per query: the first batches whose output differs between the two runs."""

    labels: tuple[str, str]  # "OLD"/"NEW" or "Spark 4.0"/"Spark 4.3"
    queries: dict[str, list[BatchDifference]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # query -> why it did not run
    batches: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def same(self) -> bool:
        return not self.errors and not any(self.queries.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": list(self.labels),
            "same": self.same,
            "queries": {
                q: {
                    "batches": list(self.batches.get(q, (0, 0))),
                    "error": self.errors.get(q),
                    "differences": [d.to_dict() for d in diffs],
                }
                for q, diffs in sorted({**{k: [] for k in self.errors}, **self.queries}.items())
            },
        }

    def text(self) -> str:
        old, new = self.labels
        lines = ["trace:"]
        for query in sorted({*self.queries, *self.errors}):
            if query in self.errors:
                lines.append(f"  query {query}: not compared: {self.errors[query]}")
                continue
            diffs = self.queries[query]
            a, b = self.batches.get(query, (0, 0))
            if not diffs:
                lines.append(f"  query {query}: same output in every batch "
                             f"({old}: {count(a, 'batch')}, {new}: {b})")  # fmt: skip
                continue
            first = (
                "the first such batch"
                if len(diffs) == 1
                else f"the first {len(diffs)} such batches"
            )
            lines.append(f"  query {query}: differs ({first})")
            for d in diffs:
                lines.append(f"    batch {d.batch}:")
                for label, rows, n in ((old, d.only_old, d.counts[0]),
                                       (new, d.only_new, d.counts[1])):  # fmt: skip
                    if n:
                        lines.append(f"      only in {label} ({count(n, 'row')}):")
                        lines.extend(f"        {dumps(r)}" for r in rows)  # as `run` writes it
                        if n > len(rows):
                            lines.append(f"        ... {n - len(rows)} more")
                lines.extend(f"      {m}" for m in d.metrics)
        return "\n".join(lines)


def _key(row: dict[str, Any]) -> str:
    """A row's identity for the comparison: its values as `run` writes them (values.dumps, a
    DECIMAL's exact digits), its columns in name order (a reordered SELECT is the same row)."""
    return dumps(dict(sorted(row.items())))


def _keep(row: dict[str, Any], seen: dict[str, dict[str, Any]]) -> str:
    key = _key(row)
    seen.setdefault(key, row)
    return key


def compare_runs(
    plans: tuple[Plan, Plan],
    roots: list[tuple[str | None, str | None]],
    trace: Path,
    labels: tuple[str, str],
    metrics: bool,
) -> TraceDiff:
    """Run each pair of query roots on the runtime over ``trace`` and keep the first
    MAX_BATCHES batches whose rows (and, with ``metrics``, state metrics) differ."""
    from ..runtime import RunError, run

    out = TraceDiff(labels)
    for old_root, new_root in roots:
        if old_root is None or new_root is None:
            continue
        name = new_root if old_root == new_root else f"{old_root} -> {new_root}"
        try:
            runs = [
                run(plans[0], trace, relation=old_root),
                run(plans[1], trace, relation=new_root),
            ]
        except RunError as err:  # e.g. the trace's rows do not fit one of the specs
            lines = [line.strip() for line in str(err).splitlines() if line.strip()]
            shown = [ln for ln in lines[:2] if not ln.startswith("fix them")]
            out.errors[name] = " ".join(shown) + (" ..." if len(lines) > 2 else "")
            continue
        out.batches[name] = (len(runs[0].batches), len(runs[1].batches))
        by_batch = [{b.batch: b for b in r.batches} for r in runs]
        found: list[BatchDifference] = []
        for batch in sorted(set(by_batch[0]) | set(by_batch[1])):
            a, b = by_batch[0].get(batch), by_batch[1].get(batch)
            seen: dict[str, dict[str, Any]] = {}  # each row as it came out, by its key
            rows_a = Counter(_keep(r, seen) for rel, r in (a.rows if a else []) if rel == old_root)
            rows_b = Counter(_keep(r, seen) for rel, r in (b.rows if b else []) if rel == new_root)
            only_a, only_b = rows_a - rows_b, rows_b - rows_a
            changed = _metric_changes(a, b) if metrics else []
            if not only_a and not only_b and not changed:
                continue
            found.append(
                BatchDifference(
                    batch,
                    [seen[k] for k in sorted(only_a.elements())][:MAX_ROWS],
                    [seen[k] for k in sorted(only_b.elements())][:MAX_ROWS],
                    (only_a.total(), only_b.total()),
                    changed,
                )
            )
            if len(found) == MAX_BATCHES:
                break
        out.queries[name] = found
    return out


def _metric_changes(a: Any, b: Any) -> list[str]:
    if a is None or b is None:
        return [f"the batch runs in only one of the two ({'first' if a else 'second'})"]
    ops_a = {o["relation"]: o for o in a.progress.get("operators", [])}
    ops_b = {o["relation"]: o for o in b.progress.get("operators", [])}
    out = []
    for relation in sorted(set(ops_a) & set(ops_b)):
        for metric in METRICS:
            x, y = ops_a[relation].get(metric), ops_b[relation].get(metric)
            if x != y:
                out.append(f"{relation}.{metric}: {x} -> {y}")
    if a.watermark != b.watermark:
        out.append(f"watermark: {a.watermark} -> {b.watermark}")
    return out


# ------------------------------------------------------------------ the two commands


@dataclass
class _Report:
    """A plan diff and, with ``--trace``, the runs' first differing batches."""

    diff: Any  # SpecDiff or VersionDiff: both have to_dict() and text()
    trace: TraceDiff | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = self.diff.to_dict()
        out["trace"] = None if self.trace is None else self.trace.to_dict()
        return out

    def text(self) -> str:
        parts: list[str] = [self.diff.text()]
        if self.trace is not None:
            parts.append(self.trace.text())
        return "\n\n".join(parts)


@dataclass
class ChangeReport(_Report):
    diff: SpecDiff
    # OLD and NEW plan alike, every query, operator and setting (a .sjoin spec and its
    # pipeline SQL twin, say): the same pipeline in two syntaxes
    same_plan: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["same_plan"] = self.same_plan
        return out

    def text(self) -> str:
        if not self.same_plan:
            return super().text()
        same = "OLD and NEW are the same pipeline: every query, operator and setting plans alike"
        return same + "\n\n" + super().text()


def diff_change(old: CheckResult, new: CheckResult, trace: Path | None) -> ChangeReport:
    """`sjoin diff OLD NEW [--trace T]`; both specs must have planned without errors."""
    assert old.plan is not None and new.plan is not None
    report = ChangeReport(diff_plans(old.plan, new.plan))
    report.same_plan = plan_json(old.plan, []) == plan_json(new.plan, [])
    if trace is not None:
        roots = pair_queries(old.plan, new.plan)
        report.trace = compare_runs((old.plan, new.plan), roots, trace, ("OLD", "NEW"), False)
    return report


@dataclass
class UpgradeReport(_Report):
    diff: VersionDiff


def parse_version(text: str, option: str = "--spark") -> str:
    """``X.Y`` or ``X.Y.Z`` (ASCII digits, ``SparkVersion.parse``) of a version sjoin models,
    as ``X.Y[.Z]``; else DiffUsageError naming ``option``."""
    version = SparkVersion.parse(text)
    if version is None:
        raise DiffUsageError(
            f"{option} takes a Spark version MAJOR.MINOR[.PATCH] in the digits 0-9, e.g. 3.5, "
            f"not {shown_value(text)}"
        )
    if version.minor_version not in SUPPORTED_SPARK:
        supported = ", ".join(f"{a}.{b}" for a, b in SUPPORTED_SPARK)
        raise DiffUsageError(f"{option}: sjoin models Spark {supported}, not {version}")
    return str(version)


def at_version(spec: CheckResult, version: str) -> CheckResult:
    """The spec planned for Spark ``version`` (``X.Y[.Z]``, as ``parse_version`` gives it),
    which wins over its `spark` statement: its text is checked as written.  A version that
    is not one sjoin models raises DiffUsageError, as ``parse_version`` does."""
    parsed = SparkVersion.parse(parse_version(version, "the Spark version"))
    assert parsed is not None  # parse_version accepted it
    return spec.recheck(spec.relation, parsed)


def diff_upgrade(
    spec: CheckResult, from_spark: str, to_spark: str, trace: Path | None
) -> UpgradeReport:
    """`sjoin diff SPEC --spark A --to B [--trace T]`."""
    a, b = at_version(spec, from_spark), at_version(spec, to_spark)
    report = UpgradeReport(
        diff_versions(
            spec.source.path, a.plan if a.ok else None, a.diagnostics,
            b.plan if b.ok else None, b.diagnostics, from_spark, to_spark,
        )
    )  # fmt: skip
    if trace is not None and a.ok and b.ok and a.plan is not None and b.plan is not None:
        roots: list[tuple[str | None, str | None]] = [
            (r, r) for r in a.plan.query_roots if r in b.plan.query_roots
        ]
        report.trace = compare_runs(
            (a.plan, b.plan), roots, trace, (f"Spark {from_spark}", f"Spark {to_spark}"), True
        )
    return report
