"""What a generated job will need that the spec does not give it: the warnings of
`sjoin compile` (W008, W009), with spans on the spec.  `check` does not report them: a spec
without sources and sinks is fine for `sjoin run` and tests, only a job run by
`spark-submit` needs them.  Like ``hazards``, it reads only the Plan."""

from __future__ import annotations

from .diagnostics import Diagnostic
from .plan import Plan, StreamNode


def job_warnings(plan: Plan) -> list[Diagnostic]:
    """W008 for each stream without `from`, W009 for each query root without a sink."""
    out: list[Diagnostic] = []
    for stream in plan.streams:
        if stream.source is None:
            out.append(
                Diagnostic(
                    "W008",
                    f"stream `{stream.name}` has no `from` source: the job's main() cannot "
                    f'read it; build(spark, inputs) expects inputs["{stream.name}"] as a '
                    "streaming DataFrame",
                    stream.name_span,
                    "no `from` clause",
                    "add e.g. `from kafka (topic = '...', bootstrap_servers = '...')`, or "
                    "call build() with your own input",
                )
            )
    sunk = {s.relation for s in plan.sinks}
    for root in plan.query_roots:
        head = plan.node(root)
        if root in sunk or head is None or isinstance(head, StreamNode):
            continue
        out.append(
            Diagnostic(
                "W009",
                f"`{root}` has no sink: the job's main() starts no query for it (build() "
                "still returns it by name)",
                head.analysis.name_span,
                "no `sink` writes it",
                f"add e.g. `sink {root} to parquet (path = 'out/{root}') checkpoint 'chk/{root}'`",
            )
        )
    return out
