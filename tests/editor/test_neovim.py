"""A real editor: Neovim (headless, Debian's package) runs `python -m sjoin lsp` through its
built-in LSP client with editors/nvim/sjoin.lua, the configuration docs/editors.md shows,
opens a spec with a typo, and reads back the diagnostics and a hover on a join's name
(tests/editor/nvim_probe.lua); they must be what `sjoin check --format json` and `sjoin plan`
say. Without nvim the test skips, or fails in CI (.ci/run installs neovim)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .session import ROOT
from .tools import tool

CONFIG = ROOT / "editors" / "nvim" / "sjoin.lua"
PROBE = ROOT / "tests" / "editor" / "nvim_probe.lua"
EXAMPLE = ROOT / "examples" / "ad_attribution.sjoin"
TYPO = ("c.user_id\n", "c.usr_id\n")  # a column of the SELECT misspelt: E004, did you mean


def sjoin(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sjoin", *args], capture_output=True, text=True, timeout=300
    )


def join_block(plan: str, name: str) -> str:
    """The lines `sjoin plan` prints for the join ``name``, up to the blank line after it."""
    lines = plan.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"join {name} = "))
    end = lines.index("", start)
    return "\n".join(lines[start:end])


def test_neovim_shows_the_diagnostics_and_a_hover(tmp_path: Path) -> None:
    nvim = tool("nvim", "install Neovim (Debian: apt-get install neovim)")
    text = EXAMPLE.read_text()
    assert text.count(TYPO[0]) == 1
    spec = tmp_path / "typo.sjoin"
    spec.write_text(text.replace(*TYPO))
    lines = spec.read_text().splitlines()
    hover_line = next(i for i, line in enumerate(lines) if line.startswith("join attributed"))
    out = tmp_path / "nvim.json"
    env = {
        **os.environ,
        "SJOIN_PYTHON": sys.executable,
        "SJOIN_NVIM_OUT": str(out),
        "SJOIN_NVIM_HOVER": f"{hover_line + 1}:{len('join ') + 3}",  # inside `attributed`
        "XDG_STATE_HOME": str(tmp_path / "state"),  # Neovim's log, away from $HOME
    }
    done = subprocess.run(
        [nvim, "--headless", "--clean", "-u", str(CONFIG), "-c", f"luafile {PROBE}", str(spec)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(out.read_text())
    assert (seen["filetype"], seen["clients"]) == ("sjoin", 1), seen

    checked = sjoin("check", "--format", "json", str(spec))
    assert checked.returncode == 1, checked.stderr
    expected = [
        {
            "code": d["code"],
            "line": d["line"],
            "col": d["col"],
            "end_line": d["end_line"],
            "end_col": d["end_col"],
            "severity": d["severity"].upper(),
            "message": f"{d['message']}\n{d['label']}\nhelp: {d['help']}",
        }
        for d in json.loads(checked.stdout)["diagnostics"]
    ]
    assert seen["diagnostics"] == expected
    assert expected == [
        {
            "code": "E004",
            "line": 26,
            "col": 66,
            "end_line": 26,
            "end_col": 74,
            "severity": "ERROR",
            "message": "`c` has no column `usr_id`\nunknown column\nhelp: did you mean `user_id`?",
        }
    ]

    # the hover: the join's plan as `sjoin plan` prints it (of the spec without the typo: the
    # misspelt column is in the SELECT list, so the join's keys, filters and state are the same)
    planned = sjoin("plan", str(EXAMPLE))
    assert planned.returncode == 0, planned.stderr
    hover = seen["hover"]
    assert hover["kind"] == "markdown"
    block = join_block(planned.stdout, "attributed")
    assert hover["value"].startswith(f"```text\n{block}\n```\n"), hover["value"]
    assert "kept until the watermark reaches i.impression_time + 1 hour 1 ms" in block


def test_the_docs_show_the_configuration_the_test_uses() -> None:
    docs = (ROOT / "docs" / "editors.md").read_text()
    assert f"```lua\n{CONFIG.read_text()}```" in docs
