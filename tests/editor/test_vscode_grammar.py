"""The VS Code extension's TextMate grammar (editors/vscode/syntaxes/sjoin.tmLanguage.json),
tested with vscode-tmgrammar-test (npm): its `-- SYNTAX TEST` fixtures in
editors/vscode/tests/, and every example's tokens against its committed snapshot
(editors/vscode/tests/examples/NAME.sjoin.snap; SJOIN_UPDATE_GRAMMAR_SNAPSHOTS=1 rewrites
them). The tools come from editors/vscode/package-lock.json: a missing node_modules is
installed with `npm ci` (as editors/vscode/build.sh does). Without node and npm the tests
skip, or fail in CI. The grammar's words are also checked against sjoin's own: every
keyword of grammar/*.lark, every type name and every duration unit. And the compiled client
(src/extension.ts), under a stand-in `vscode` module, starts `python -m sjoin lsp` as set."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sjoin.compiler.vocabulary import types

from .session import ROOT
from .tools import tool, unavailable

VSCODE = ROOT / "editors" / "vscode"
GRAMMAR = VSCODE / "syntaxes" / "sjoin.tmLanguage.json"
SNAPSHOTS = VSCODE / "tests" / "examples"
EXAMPLES = sorted((ROOT / "examples").glob("*.sjoin"))
INSTALL = "install Node.js 20+ and npm (Debian: apt-get install nodejs npm)"


@pytest.fixture(scope="module")
def node_bin() -> Path:
    """editors/vscode/node_modules/.bin, installed with `npm ci` when missing."""
    tool("node", INSTALL)
    npm = tool("npm", INSTALL)
    bin_dir = VSCODE / "node_modules" / ".bin"
    # one `npm ci` at a time: the suite's two worker processes may both get here
    with open(VSCODE / ".npm-ci.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (bin_dir / "vscode-tmgrammar-test").exists():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=VSCODE,
                capture_output=True,
                text=True,
                timeout=900,
            )
            if done.returncode != 0:
                unavailable(f"`npm ci` in editors/vscode failed:\n{done.stdout}{done.stderr}")
    return bin_dir


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=VSCODE, capture_output=True, text=True, timeout=300)


def test_syntax_test_fixtures(node_bin: Path) -> None:
    fixtures = sorted(p.name for p in (VSCODE / "tests").glob("*.sjoin"))
    assert fixtures == ["expressions.sjoin", "statements.sjoin"]
    done = run([str(node_bin / "vscode-tmgrammar-test"), "-g", str(GRAMMAR), "-c", "tests/*.sjoin"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("run successfuly") == len(fixtures), done.stdout


def test_every_example_matches_its_snapshot(node_bin: Path, tmp_path: Path) -> None:
    update = bool(os.environ.get("SJOIN_UPDATE_GRAMMAR_SNAPSHOTS"))
    if not update:
        assert sorted(p.name for p in SNAPSHOTS.glob("*.snap")) == [
            f"{e.name}.snap" for e in EXAMPLES
        ], "an example without a snapshot (or a snapshot without an example): rerun with "
        "SJOIN_UPDATE_GRAMMAR_SNAPSHOTS=1 and review the new .snap"
    for example in EXAMPLES:
        shutil.copy(example, tmp_path / example.name)
        if not update:
            shutil.copy(SNAPSHOTS / f"{example.name}.snap", tmp_path / f"{example.name}.snap")
    command = [str(node_bin / "vscode-tmgrammar-snap"), "-g", str(GRAMMAR), "-s", "source.sjoin"]
    done = run([*command, *(["-u"] if update else []), str(tmp_path / "*.sjoin")])
    assert done.returncode == 0, done.stdout + done.stderr
    if update:
        for example in EXAMPLES:
            shutil.copy(tmp_path / f"{example.name}.snap", SNAPSHOTS / f"{example.name}.snap")
    # every word of every example has a scope of its own: nothing falls through as plain text
    for example in EXAMPLES:
        snap = (SNAPSHOTS / f"{example.name}.snap").read_text()
        lines = snap.splitlines()
        for number, line in enumerate(lines):
            if not line.startswith("#"):
                continue
            source = next(s for s in reversed(lines[:number]) if s.startswith(">"))[1:]
            start = line.index("^") - 1
            token = source[start : start + line.count("^")]
            if re.search(r"\w", token):
                assert line.split()[-1] != "source.sjoin", (example.name, source, token)


def grammar_words() -> set[str]:
    """The words the TextMate grammar's patterns name, lower case."""
    text = GRAMMAR.read_text()
    json.loads(text)  # well-formed
    return {w.lower() for w in re.findall(r"[A-Za-z_]+", text)}


def lark_keywords() -> set[str]:
    text = "\n".join((ROOT / "grammar" / name).read_text() for name in ("sjoin.lark", "expr.lark"))
    return {w.lower() for w in re.findall(r'"([A-Za-z_]+)"i', text)}


def test_grammar_names_every_keyword_type_and_unit() -> None:
    words = grammar_words()
    keywords = lark_keywords()
    assert {"stream", "join", "watermark", "within", "try_cast", "rlike"} <= keywords
    assert keywords - words == set()
    assert set(types.TYPE_NAMES) - words == set()
    assert set(types.SPARK_UNITS) - words == set()
    assert {u.lower() for u in types.SPARK_UNIT_WORDS} - words == set()


def test_extension_manifest() -> None:
    manifest = json.loads((VSCODE / "package.json").read_text())
    (language,) = manifest["contributes"]["languages"]
    assert (language["id"], language["extensions"]) == ("sjoin", [".sjoin"])
    (grammar,) = manifest["contributes"]["grammars"]
    assert (VSCODE / grammar["path"]).resolve() == GRAMMAR
    assert json.loads(GRAMMAR.read_text())["scopeName"] == grammar["scopeName"]
    settings = manifest["contributes"]["configuration"]["properties"]
    assert settings["sjoin.python"]["default"] == "python3"
    assert settings["sjoin.debounceMs"]["default"] == 150
    config = json.loads((VSCODE / language["configuration"]).read_text())
    assert config["comments"] == {"lineComment": "--", "blockComment": ["/*", "*/"]}
    lock = json.loads((VSCODE / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == manifest["dependencies"]
    extension = (VSCODE / "src" / "extension.ts").read_text()
    assert '["-m", "sjoin", "lsp"]' in extension


@pytest.mark.parametrize(
    ("settings", "command", "languages", "debounce"),
    [
        ({}, "python3", ["sjoin", "sjoin"], 150),
        (
            {
                "python": "${workspaceFolder}/.venv/bin/python",
                "debounceMs": 40,
                "checkPipelineSql": True,
            },
            "/work/project/.venv/bin/python",
            ["sjoin", "sjoin", "sql"],
            40,
        ),
    ],
)
def test_the_client_starts_sjoin_lsp_as_set(
    node_bin: Path, settings: dict[str, object], command: str, languages: list[str], debounce: int
) -> None:
    """The compiled client (src/extension.ts) under a stand-in `vscode` module
    (editors/vscode/tests/client.test.js): the server it starts for the settings."""
    compiled = run([str(node_bin / "tsc"), "-p", "./"])
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    done = run([tool("node", INSTALL), "tests/client.test.js", json.dumps(settings)])
    assert done.returncode == 0, done.stdout + done.stderr
    (started,) = json.loads(done.stdout)["started"]
    assert started["command"] == command
    assert started["args"] == ["-m", "sjoin", "lsp"]
    assert [s["language"] for s in started["documentSelector"]] == languages
    assert started["initializationOptions"] == {"debounceMs": debounce}
