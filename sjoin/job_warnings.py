"""What a generated job will need that the spec does not give it: the warnings of
`sjoin compile` (W008, W009), with spans on the spec.  `check` does not report them: a spec
without sources and sinks is fine for `sjoin run` and tests, only a job run by
`spark-submit` needs them."""

from __future__ import annotations

from sjoin.api import CheckResult
from sjoin.compiler.bound import Stream
from sjoin.compiler.diagnostics import Diagnostic


def job_warnings(result: CheckResult) -> list[Diagnostic]:
    """W008 for each stream without `from`, W009 for each query root without a sink."""
    if result.bound is None or result.plan is None:
        return []
    out: list[Diagnostic] = []
    for rel in result.bound.relations:
        if isinstance(rel, Stream) and rel.source is None:
            out.append(
                Diagnostic(
                    "W008",
                    f"stream `{rel.name}` has no `from` source: the job's main() cannot read "
                    f'it; build(spark, inputs) expects inputs["{rel.name}"] as a streaming '
                    "DataFrame",
                    rel.name_span,
                    "no `from` clause",
                    "add e.g. `from kafka (topic = '...', bootstrap_servers = '...')`, or "
                    "call build() with your own input",
                )
            )
    sunk = {s.relation for s in result.plan.sinks}
    for root in result.plan.query_roots:
        head = result.bound.relation(root)
        if root in sunk or head is None or isinstance(head, Stream):
            continue
        out.append(
            Diagnostic(
                "W009",
                f"`{root}` has no sink: the job's main() starts no query for it (build() "
                "still returns it by name)",
                head.name_span,
                "no `sink` writes it",
                f"add e.g. `sink {root} to parquet (path = 'out/{root}') checkpoint 'chk/{root}'`",
            )
        )
    return out
