"""The checks run over a planned spec: Spark's analysis rules and sjoin's warnings
(``hazards``) judge the plan the planner returned, and each relation that can run as its
own query is judged as that query; the verdicts go into the shared diagnostics and onto
the plan (``Plan.checks``, what `sjoin plan` prints under the joins)."""

from __future__ import annotations

from dataclasses import replace

from ..diagnostics.diagnostics import Diagnostic, Diagnostics
from ..planning.plan import Plan
from ..planning.planner import OwnQuery, Planned
from ..planning.read_twice import once, written_names, written_words
from . import hazards


def judge(planned: Planned, diags: Diagnostics) -> Plan:
    """The plan with its checks, every diagnostic reported into ``diags``."""
    plan = planned.plan
    found, checks = hazards.check(plan)
    if plan.copies:  # a copy's verdicts repeat its relation's: said once, of it
        found = once(found, plan.copies)
        copies = plan.copies
        shown = [
            replace(
                c,
                name=written_words(written_names(c.name, copies), copies),
                detail=written_words(written_names(c.detail, copies), copies),
                relations=tuple(copies.get(r, r) for r in c.relations),
            )
            for c in checks
        ]
        checks = list(dict.fromkeys(shown))
    diags.items.extend(found)
    diags.items.extend(_own_query_errors(plan, planned.own_queries, found))
    return replace(plan, checks=tuple(checks))


def _own_query_errors(
    plan: Plan, queries: tuple[OwnQuery, ...], found: list[Diagnostic]
) -> list[Diagnostic]:
    """Spark's per-join errors of each relation run as its own query, said of that query.
    With no sink every relation can be started, so these are errors; with sinks the job
    runs only the sinks' queries, so each is a W010 warning (``--relation NAME`` makes it
    the error).  An error already reported for the plan's own queries is not repeated."""
    seen = {(d.code, d.message) for d in found}
    out: list[Diagnostic] = []
    for query in queries:
        for d in hazards.check_joins(plan, list(query.joins)):
            if d.severity != "error" or (d.code, d.message) in seen:
                continue
            seen.add((d.code, d.message))
            if not plan.sinks:
                message = (
                    f"{d.message}, when `{query.relation}` runs as its own query (without "
                    "a sink, any join or aggregate can)"
                )
                out.append(Diagnostic(d.code, message, d.span, d.label, d.help))
            else:
                message = (
                    f"`{query.relation}` cannot run as its own query (`--relation "
                    f"{query.relation}`, or started from build()): {d.message}"
                )
                out.append(Diagnostic("W010", message, d.span, d.label, d.help))
    return out
