"""Helpers of the tests that run real editor tooling (Node for the VS Code extension's
grammar, Neovim): a missing tool skips the test with the reason, except in CI (env CI set),
where it must fail loudly rather than pass by skipping."""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest


def unavailable(reason: str) -> NoReturn:
    """Fail in CI, skip elsewhere, with the same sentence."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def tool(name: str, install: str) -> str:
    """The path of the program ``name``, or skip/fail saying how to ``install`` it."""
    found = shutil.which(name)
    if found is None:
        unavailable(f"{name} is not on PATH: {install}")
    return found
