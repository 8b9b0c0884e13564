"""Which statement a diagnostic belongs to, when statements share a span: a follow-on
diagnostic is dropped only when every statement that may own it follows from a broken one
(compiler/frontend/cascades.py)."""

from __future__ import annotations

from dataclasses import replace

from sjoin.compiler.diagnostics.diagnostics import Diagnostic, Diagnostics
from sjoin.compiler.frontend import ast
from sjoin.compiler.frontend.cascades import without_cascades
from sjoin.compiler.frontend.parse import parse
from sjoin.compiler.vocabulary.source import Source, Span

SPEC = """stream l (k BIGINT, t TIMESTAMP) watermark t delay 0 seconds
stream r (k BIGINT, t TIMESTAMP)
join j = l AS L LEFT OUTER JOIN r AS R ON L.k = R.k SELECT L.k AS k, L.t AS t
aggregate a = j AS x GROUP BY x.k SELECT x.k, count(*) AS n
"""
ONE = Span(0, 10)
# Spark's two refusals of this spec, as a front end whose every statement has one span
# gives them (each is DERIVED, and E021 also marks its relation as one that never runs)
FOUND = [
    Diagnostic("E021", "the outer join's null-padded rows never come out", ONE),
    Diagnostic("E023", "the aggregate has no watermark", ONE),
]


def _spec(shared: bool) -> object:
    spec = parse(Source("one.sjoin", SPEC), Diagnostics())
    if not shared:
        return spec
    return replace(spec, statements=tuple(replace(s, span=ONE) for s in spec.statements))


def test_errors_of_statements_that_share_one_span_all_stay() -> None:
    """Before: E021 at the shared span marked every statement as one that never runs, so
    both errors counted as its cascade and the check said nothing at all."""
    kept = without_cascades(FOUND, _spec(shared=True), ())  # type: ignore[arg-type]
    assert [d.code for d in kept] == ["E021", "E023"]


def test_a_follow_on_error_inside_statements_that_all_follow_is_dropped() -> None:
    """Every statement of the shared span reads the broken stream `r`, directly or not: the
    diagnostics there are its cascade."""
    spec = parse(Source("one.sjoin", SPEC), Diagnostics())
    readers = tuple(s for s in spec.statements if not isinstance(s, ast.StreamDecl))
    at = Span(readers[0].span.start, readers[0].span.start + 3)
    shared = replace(
        spec,
        statements=tuple(
            replace(s, span=Span(at.start, readers[-1].span.end)) if s in readers else s
            for s in spec.statements
        ),
    )
    found = [Diagnostic("E023", "the aggregate has no watermark", at)]
    assert without_cascades(found, shared, {"r"}) == []
    assert without_cascades(found, shared, ()) == found


def test_a_diagnostic_outside_every_statement_stays() -> None:
    """No statement owns it, so none can have it follow from a broken one."""
    found = [Diagnostic("E023", "the aggregate has no watermark", Span(len(SPEC), len(SPEC)))]
    assert without_cascades(found, _spec(shared=False), {"l"}) == found  # type: ignore[arg-type]
