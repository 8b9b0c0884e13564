"""`sjoin lsp`: the language server (pygls over stdio), the documents' checks and the
requests' answers.

Each open document is checked on open, on save and after each change once the user pauses
(``debounce`` seconds, 150 ms by default): a newer change cancels the check still waiting
for its pause, and a check whose document changed while it ran publishes nothing (the newer
one will).  Checks run one at a time in a worker thread, so the server keeps answering
while one runs.  A check that raises (a bug of sjoin's) is logged to the client
(window/logMessage), its document's diagnostics become one E999 saying so, and the server
goes on: no stale diagnostics, no stale answers.

Requests (hover, definition, references, symbols, code actions) wait for the document's
pending check, so they answer about the text the client sees; completion answers at once
from the newest check and the current text.  Clients pass options as
``initializationOptions``: ``debounceMs`` and ``docsUrl`` (the page a diagnostic's code
links to; by default the workspace's ``docs/diagnostics.md`` when it has one).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

from lsprotocol import types as lsp
from pygls import uris
from pygls.lsp.server import LanguageServer

from ..version import __version__
from .actions import code_actions
from .completion import complete
from .document import Analysis, analyse, is_pipeline_sql
from .hover import hover
from .navigation import definition, references, symbols
from .positions import Encoding, LineIndex

DEBOUNCE_SECONDS = 0.15
# waits this long at most for a pending check before answering a request from the last one
REQUEST_WAIT_SECONDS = 10.0
# fault injection for the tests of a check that raises (tests/editor): a document holding
# this variable's value makes its check raise
FAULT_VARIABLE = "SJOIN_LSP_FAULT"

log = logging.getLogger("sjoin.lsp")
P = ParamSpec("P")
T = TypeVar("T")


class SjoinServer(LanguageServer):
    def __init__(self, debounce: float = DEBOUNCE_SECONDS) -> None:
        super().__init__("sjoin", __version__)
        self.debounce = debounce
        self.docs: str | None = os.environ.get("SJOIN_DOCS_URL") or None
        self.analyses: dict[str, Analysis] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sjoin-check")

    @property
    def encoding(self) -> Encoding:
        chosen = self.server_capabilities.position_encoding
        value = str(getattr(chosen, "value", chosen) or "utf-16")
        return cast(Encoding, value if value in ("utf-8", "utf-16", "utf-32") else "utf-16")

    def path_of(self, uri: str) -> str:
        return uris.to_fs_path(uri) or uri

    # ------------------------------------------------------------------ checks
    def schedule(self, uri: str, delay: float) -> None:
        """Check ``uri`` after ``delay`` seconds, cancelling the check still waiting."""
        old = self.pending.pop(uri, None)
        if old is not None and not old.done():
            old.cancel()
        self.pending[uri] = asyncio.get_running_loop().create_task(self._check(uri, delay))

    async def _check(self, uri: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        doc = self.workspace.get_text_document(uri)
        text, version = doc.source, doc.version
        path = self.path_of(uri)
        loop = asyncio.get_running_loop()
        try:
            analysis = await loop.run_in_executor(
                self.checker, _analyse, path, uri, text, version, self.docs, self.encoding
            )
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug of sjoin's: said once, never the server's end
            self.analyses.pop(uri, None)
            self.window_log_message(
                lsp.LogMessageParams(
                    lsp.MessageType.Error,
                    f"sjoin: checking {path} failed:\n{traceback.format_exc()}",
                )
            )
            self._publish(uri, version, [_crash(e)])
            return
        if self.workspace.get_text_document(uri).version != version:
            return  # the text changed while it was checked: the newer check publishes
        self.analyses[uri] = analysis
        self._publish(uri, version, list(analysis.diagnostics))

    def _publish(self, uri: str, version: int | None, diags: list[lsp.Diagnostic]) -> None:
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version)
        )

    async def current(self, uri: str) -> Analysis | None:
        """The newest analysis of ``uri``, after its pending check (if any) is done."""
        deadline = asyncio.get_running_loop().time() + REQUEST_WAIT_SECONDS
        # a newer change may cancel the check awaited and schedule its own: wait for that one
        while (task := self.pending.get(uri)) is not None and not task.done():
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), left)
        analysis = self.analyses.get(uri)
        if analysis is None:
            return None
        doc = self.workspace.get_text_document(uri)
        if doc.source != analysis.text:  # a check still to come: answer nothing stale
            return None
        return analysis

    def offset(self, analysis: Analysis, position: lsp.Position) -> int:
        return analysis.lines.offset(position.line, position.character)


def _analyse(
    path: str, uri: str, text: str, version: int | None, docs: str | None, encoding: Encoding
) -> Analysis:
    fault = os.environ.get(FAULT_VARIABLE)
    if fault and fault in text:
        raise RuntimeError(f"a fault injected by {FAULT_VARIABLE}")
    return analyse(path, uri, text, version, docs, encoding)


def _crash(e: Exception) -> lsp.Diagnostic:
    return lsp.Diagnostic(
        range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        message=(
            f"sjoin failed to check this file ({type(e).__name__}: {e}); this is a bug in "
            "sjoin, the editor's log has the traceback"
        ),
        severity=lsp.DiagnosticSeverity.Error,
        code="E999",
        source="sjoin",
    )


def make_server(debounce: float = DEBOUNCE_SECONDS) -> SjoinServer:
    server = SjoinServer(debounce)

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: SjoinServer, params: lsp.InitializeParams) -> None:
        options: Any = params.initialization_options or {}
        if isinstance(options, dict):
            if isinstance(options.get("debounceMs"), int | float):
                ls.debounce = max(0.0, float(options["debounceMs"]) / 1000)
            if isinstance(options.get("docsUrl"), str):
                ls.docs = options["docsUrl"]
        if ls.docs is None:
            root = params.root_uri or (
                params.workspace_folders[0].uri if params.workspace_folders else None
            )
            page = Path(uris.to_fs_path(root) or "") / "docs" / "diagnostics.md" if root else None
            if page is not None and page.is_file():
                ls.docs = page.resolve().as_uri()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: SjoinServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: SjoinServer, params: lsp.DidChangeTextDocumentParams) -> None:
        if not is_pipeline_sql(ls.path_of(params.text_document.uri)):  # .sql: checked on save
            ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: SjoinServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if is_pipeline_sql(ls.path_of(params.text_document.uri)):
            ls.schedule(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: SjoinServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.analyses.pop(uri, None)
        ls._publish(uri, None, [])

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: SjoinServer, params: lsp.HoverParams) -> lsp.Hover | None:
        analysis = await ls.current(params.text_document.uri)
        if analysis is None:
            return None
        return _guarded(hover, analysis, ls.offset(analysis, params.position))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(ls: SjoinServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        uri = params.text_document.uri
        analysis = await ls.current(uri)
        if analysis is None:
            return None
        return _guarded(definition, analysis, uri, ls.offset(analysis, params.position))

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    async def on_references(
        ls: SjoinServer, params: lsp.ReferenceParams
    ) -> list[lsp.Location] | None:
        uri = params.text_document.uri
        analysis = await ls.current(uri)
        if analysis is None:
            return None
        at = ls.offset(analysis, params.position)
        return _guarded(references, analysis, uri, at, params.context.include_declaration)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def on_symbols(
        ls: SjoinServer, params: lsp.DocumentSymbolParams
    ) -> list[lsp.DocumentSymbol] | None:
        analysis = await ls.current(params.text_document.uri)
        return None if analysis is None else _guarded(symbols, analysis)

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION,
        lsp.CompletionOptions(trigger_characters=["."]),
    )
    def on_completion(ls: SjoinServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        uri = params.text_document.uri
        doc = ls.workspace.get_text_document(uri)
        last = ls.analyses.get(uri)
        lines = LineIndex(doc.source, ls.encoding)
        analysis = (
            dataclasses.replace(last, lines=lines)
            if last is not None
            else Analysis(ls.path_of(uri), doc.version, lines, None)
        )
        at = lines.offset(params.position.line, params.position.character)
        return _guarded(complete, analysis, at)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]),
    )
    async def on_code_action(
        ls: SjoinServer, params: lsp.CodeActionParams
    ) -> list[lsp.CodeAction] | None:
        uri = params.text_document.uri
        analysis = await ls.current(uri)
        if analysis is None:
            return None
        return _guarded(code_actions, analysis, uri, params.range, params.context.diagnostics)

    return server


def _guarded(feature: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T | None:
    """A feature's answer, or None when it raises (logged: a bug of sjoin's)."""
    try:
        return feature(*args, **kwargs)
    except Exception:
        log.exception("sjoin lsp: %s failed", getattr(feature, "__name__", feature))
        return None


def serve(debounce: float = DEBOUNCE_SECONDS) -> None:
    """Run the server over stdin and stdout until the client says exit."""
    logging.basicConfig(level=logging.WARNING, format="sjoin lsp: %(message)s")
    make_server(debounce).start_io()
