"""Helpers of the language server's tests: documents opened, changed, and their
diagnostics waited for (the fixtures that start the server are in conftest.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

ROOT = Path(__file__).resolve().parents[2]
FAULT = "--crash-this-check--"  # the text that makes faulty_client's server's check raise
# a check of a small spec takes milliseconds; a loaded CI machine gets plenty of slack
WAIT = 60.0


def uri_of(name: str) -> str:
    return (ROOT / "tests" / "editor" / name).as_uri()


async def diagnostics_of(
    client: LanguageClient, uri: str, version: int
) -> Sequence[lsp.Diagnostic]:
    """The diagnostics the server publishes for ``version`` of ``uri`` (waiting for them)."""

    async def wait() -> Sequence[lsp.Diagnostic]:
        while True:
            params = await client.wait_for_notification("textDocument/publishDiagnostics")
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)

    return await asyncio.wait_for(wait(), WAIT)


def open_document(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="sjoin", version=version, text=text)
        )
    )


async def opened(
    client: LanguageClient, name: str, text: str
) -> tuple[str, Sequence[lsp.Diagnostic]]:
    """Open ``text`` as tests/editor/NAME and wait for its first diagnostics."""
    uri = uri_of(name)
    waiting = asyncio.ensure_future(diagnostics_of(client, uri, 1))
    await asyncio.sleep(0)
    open_document(client, uri, text)
    return uri, await waiting


def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def at(text: str, needle: str, nth: int = 0, shift: int = 0) -> lsp.Position:
    """The LSP position (UTF-16) of the ``nth`` occurrence of ``needle`` in ``text`` (plus
    ``shift`` characters), for texts of ASCII lines."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    i += shift
    line = text.count("\n", 0, i)
    return lsp.Position(line, i - (text.rfind("\n", 0, i) + 1))
