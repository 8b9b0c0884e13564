"""A check's diagnostics as LSP diagnostics: the same code, span, severity, message, label
and help as `sjoin check` prints (``reports/diagnostics.py``), the span as LSP positions
(UTF-16), a link to the code's documentation, and the fix a diagnostic knows (a
did-you-mean spelling: ``Diagnostic.fix``) in ``data``, for ``editor/actions.py``.

The LSP message is the report's text without the source excerpt: the message, then the
label and the help on lines of their own (an editor draws the squiggle itself).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..compiler.diagnostics.diagnostics import Diagnostic, shown
from ..compiler.vocabulary.source import Source, Span
from .positions import LineIndex

SOURCE = "sjoin"


def lsp_range(lines: LineIndex, span: Span) -> lsp.Range:
    start, end = lines.position(span.start), lines.position(span.end)
    return lsp.Range(lsp.Position(*start), lsp.Position(*end))


def message(d: Diagnostic) -> str:
    """The message, the label (what the carets say) and the help, as `sjoin check` has them."""
    text = d.message
    if d.label:
        text += f"\n{d.label}"
    if d.help:
        text += f"\nhelp: {d.help}"
    return text


def convert(
    d: Diagnostic, source: Source, path: str, uri: str, lines: LineIndex, docs: str | None
) -> lsp.Diagnostic | None:
    """One diagnostic of ``source`` as an LSP diagnostic of the document at ``path`` (its
    ``uri``, whose text ``lines`` holds), or None for a diagnostic in another file (one of a
    pipeline project's other files).  The other places it is about (``Diagnostic.related``)
    become its related information, in this document or in another file of the project."""
    d = shown(d, source)
    file, span = source.locate(d.span)
    if file.path != path:
        return None
    data: dict[str, Any] | None = None
    if d.fix is not None:
        fix_file, fix_span = source.locate(d.fix.span)
        if fix_file.path == file.path:
            data = {
                "fix": {
                    "range": _plain(lsp_range(lines, fix_span)),
                    "newText": d.fix.text,
                    "oldText": lines.text[fix_span.start : fix_span.end],
                }
            }
    related = []
    for r in d.related:
        other, other_span = source.locate(r.span)
        if other.path == path:
            where = lsp.Location(uri, lsp_range(lines, other_span))
        else:
            other_uri = Path(other.path).resolve().as_uri()
            where = lsp.Location(
                other_uri, lsp_range(LineIndex(other.text, lines.encoding), other_span)
            )
        related.append(lsp.DiagnosticRelatedInformation(where, r.message))
    return lsp.Diagnostic(
        range=lsp_range(lines, span),
        related_information=related or None,
        message=message(d),
        severity=(
            lsp.DiagnosticSeverity.Error
            if d.severity == "error"
            else lsp.DiagnosticSeverity.Warning
        ),
        code=d.code,
        code_description=lsp.CodeDescription(href=f"{docs}#{d.code.lower()}") if docs else None,
        source=SOURCE,
        data=data,
    )


def _plain(r: lsp.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def convert_all(
    diagnostics: list[Diagnostic],
    source: Source,
    path: str,
    uri: str,
    lines: LineIndex,
    docs: str | None,
) -> list[lsp.Diagnostic]:
    out = []
    for d in diagnostics:
        found = convert(d, source, path, uri, lines, docs)
        if found is not None:
            out.append(found)
    return out
