"""Code actions: the fixes the diagnostics already know (``Diagnostic.fix``: a misspelt
relation, column, function, setting or type replaced by the did-you-mean spelling; W001's
range condition after the ON condition), each
a quick fix with its edit.  The fix travels in the LSP diagnostic's ``data``
(``editor/diagnostics.py``), so an action needs no check of its own; a fix whose text has
changed since (the user already retyped it) is not offered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types as lsp

from .document import Analysis


def _range(raw: Any) -> lsp.Range | None:
    try:
        s, e = raw["start"], raw["end"]
        return lsp.Range(
            lsp.Position(int(s["line"]), int(s["character"])),
            lsp.Position(int(e["line"]), int(e["character"])),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def code_actions(
    analysis: Analysis, uri: str, asked: lsp.Range, diagnostics: Sequence[lsp.Diagnostic]
) -> list[lsp.CodeAction]:
    out = []
    for d in diagnostics:
        if d.source != "sjoin" or not isinstance(d.data, dict) or not _overlaps(d.range, asked):
            continue
        fix = d.data.get("fix")
        where = _range(fix.get("range")) if isinstance(fix, dict) else None
        if where is None or not isinstance(fix, dict) or not isinstance(fix.get("newText"), str):
            continue
        start = analysis.lines.offset(where.start.line, where.start.character)
        end = analysis.lines.offset(where.end.line, where.end.character)
        if fix.get("oldText") is not None and analysis.text[start:end] != fix["oldText"]:
            continue
        new = fix["newText"]
        old = analysis.text[start:end]
        out.append(
            lsp.CodeAction(
                title=f"Replace `{old}` with `{new}`" if old else f"Insert `{new.strip()}`",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[d],
                is_preferred=True,
                edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(where, new)]}),
            )
        )
    return out
