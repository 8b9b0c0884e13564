"""`sjoin lsp` without its extra: a clear message naming what to install, exit status 2,
no traceback (the server itself is tested end to end in tests/editor)."""

from __future__ import annotations

import subprocess
import sys

# pygls made unimportable, as in an environment without `sjoin[lsp]`
WITHOUT_PYGLS = """
import sys
for name in ("pygls", "pygls.lsp", "pygls.lsp.server"):
    sys.modules[name] = None
from sjoin.cli.main import main
main(["lsp"])
"""


def test_lsp_without_pygls_says_what_to_install() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PYGLS],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "pip install 'sjoin[lsp]'" in done.stderr
    assert "pygls" in done.stderr
    assert "Traceback" not in done.stderr


def test_lsp_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sjoin", "lsp", "--help"], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0
    assert "--debounce-ms" in done.stdout
