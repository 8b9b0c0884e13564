"""The language server under test: `python -m sjoin lsp` (the installed package) started
over stdio by pytest-lsp's client, one server per test, and helpers that open a document
and wait for the diagnostics of a given version of it."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-m", "sjoin", "lsp"]
FAULT = "--crash-this-check--"  # as session.FAULT


async def _start(client: LanguageClient) -> AsyncIterator[LanguageClient]:
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            root_uri=ROOT.as_uri(),
            initialization_options={"debounceMs": 50},
        )
    )
    yield client
    await client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    async for c in _start(lsp_client):
        yield c


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=SERVER, server_env={**os.environ, "SJOIN_LSP_FAULT": FAULT}
    )
)
async def faulty_client(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    async for c in _start(lsp_client):
        yield c
