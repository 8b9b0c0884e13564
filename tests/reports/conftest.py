"""Shared by the browser tests: Debian's headless Chromium, and mermaid's browser bundle.

Without them the tests are skipped with the reason, except in CI (env CI set), where a
missing browser or bundle must fail loudly rather than pass by skipping; `scripts/setup.sh`
installs both (chromium with apt-get, mermaid with npm into `.cache/mermaid/`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ..conftest import ROOT

CHROMIUM = Path(os.environ.get("SJOIN_CHROMIUM", "/usr/bin/chromium"))
MERMAID_JS = Path(
    os.environ.get("SJOIN_MERMAID_JS", ROOT / ".cache" / "mermaid" / "mermaid.min.js")
)

# Without the background-networking flags, Chromium keeps trying the closed network.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]
TIMEOUT_S = 180


def unavailable(reason: str) -> None:
    """Fail in CI, skip elsewhere, with the same sentence."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


class Chromium:
    """One headless Chromium call per page, each with a new empty profile."""

    def __init__(self, binary: Path, workdir: Path) -> None:
        self.binary = binary
        self.workdir = workdir
        self.calls = 0

    def _run(self, page: Path, *flags: str) -> str:
        self.calls += 1
        profile = self.workdir / f"profile-{self.calls}"
        profile.mkdir()
        command = [str(self.binary), *FLAGS, f"--user-data-dir={profile}", *flags]
        done = subprocess.run(
            [*command, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        assert done.returncode == 0, f"chromium exited {done.returncode}:\n{done.stderr[-3000:]}"
        return done.stdout

    def dom(self, page: Path, *, budget_ms: int | None = None) -> str:
        """The page's DOM after load (and after ``budget_ms`` of virtual time for scripts)."""
        budget = [f"--virtual-time-budget={budget_ms}"] if budget_ms else []
        return self._run(page, *budget, "--dump-dom")

    def screenshot(
        self, page: Path, png: Path, *, size: tuple[int, int], budget_ms: int | None = None
    ) -> bytes:
        budget = [f"--virtual-time-budget={budget_ms}"] if budget_ms else []
        self._run(page, *budget, f"--window-size={size[0]},{size[1]}", f"--screenshot={png}")
        assert png.is_file(), f"chromium wrote no screenshot to {png}"
        return png.read_bytes()


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Chromium:
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        unavailable(
            f"the browser tests need Debian's chromium at {CHROMIUM} "
            "(bash scripts/setup.sh installs it as root; or: apt-get install chromium)"
        )
    return Chromium(CHROMIUM, tmp_path_factory.mktemp("chromium"))


@pytest.fixture(scope="session")
def mermaid_js() -> Path:
    if not MERMAID_JS.is_file():
        unavailable(
            f"the Mermaid browser test needs mermaid's browser bundle at {MERMAID_JS} "
            "(bash scripts/setup.sh fetches it with npm)"
        )
    return MERMAID_JS


def sjoin_command() -> list[str]:
    """The installed console script, as users run it."""
    script = Path(sys.executable).with_name("sjoin")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "sjoin.cli.main"]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def distinct_colors(png: Path) -> int:
    """How many colours a screenshot has: a blank or one-colour page has a handful."""
    from PIL import Image

    with Image.open(png) as image:
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    return len(colors) if colors is not None else 1 << 20


class Dom(HTMLParser):
    """What the tests read of a page: its <svg> elements and their text, its tables' rows,
    its visible text (scripts and styles left out), and the attributes of <body>."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.svgs: list[list[str]] = []  # per <svg>, its text pieces
        self.rows: list[list[str]] = []  # every <tr>, its cells' text
        self.text: list[str] = []
        self.body: dict[str, str | None] = {}
        self.tags: list[str] = []
        self.classes: list[str] = []  # every class attribute
        self._svg_depth = 0
        self._skip = 0
        self._cell: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.classes += [value for key, value in attrs if key == "class" and value]
        if tag == "svg":
            if self._svg_depth == 0:
                self.svgs.append([])
            self._svg_depth += 1
        elif tag in ("style", "script"):
            self._skip += 1
        elif tag == "body":
            self.body = dict(attrs)
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._svg_depth -= 1
        elif tag in ("style", "script"):
            self._skip -= 1
        elif tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._skip or not data.strip():
            return
        self.text.append(data.strip())
        if self._svg_depth:
            self.svgs[-1].append(data.strip())
        if self._cell is not None:
            self._cell.append(data)

    def svg_text(self, index: int | None = None) -> str:
        pieces = self.svgs[index] if index is not None else [t for s in self.svgs for t in s]
        return "\n".join(pieces)
