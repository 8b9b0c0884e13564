"""compiler/vocabulary/javaregex.py against java.util.regex itself (the matcher Spark calls):
thousands
of random patterns, each run by Java (tests/compiler/vocabulary/java/RegexProbe.java) and by RE2
through
sjoin on random texts, every match of Matcher.find with every group compared; a pattern sjoin
refuses must be one `check` reports, never a different answer."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from sjoin.compiler.vocabulary import javaregex

pytestmark = pytest.mark.spark  # needs a JDK, as the Spark tests need Java

ATOMS = [
    "a", "b", ".", "[ab]", "[^a]", "\\w", "\\W", "\\s", "\\d", "\\b", "\\B", "^", "$", "\\n",
    "A", "[a-c]", "\\Z", "\\z", "\\A", "[\\s\\d]", "x", "_", "\\x41", "[]a]", "\\Qa.\\E",
]  # fmt: skip
ANCHORS = {"^", "$", "\\b", "\\B", "\\Z", "\\z", "\\A"}
QUANTIFIERS = ["", "", "", "*", "+", "?", "{1,2}", "*?", "+?", "??", "{0,2}?", "{2}"]
# no character outside the BMP (Java's UTF-16 steps, see docs/language.md) and no
# non-ASCII letter next to \b (Java 17's Unicode word characters)
ALPHABET = ["a", "b", "A", " ", "\n", "\r", "\x85", "\u2028", "_", "1", "x", "B", "\x0b", "."]


def _pattern(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        if r < 0.25 and depth < 3:
            opener = rng.choice(["(", "(?:", "(?i:", "(?s:", "(?<n>"])
            atom = opener + _pattern(rng, depth + 1) + ")"
        elif r < 0.32 and depth < 3:
            atom = "(" + _pattern(rng, depth + 1) + "|" + _pattern(rng, depth + 1) + ")"
        else:
            atom = rng.choice(ATOMS)
        parts.append(atom + ("" if atom in ANCHORS else rng.choice(QUANTIFIERS)))
    text = "".join(parts)
    if rng.random() < 0.1:
        text = "(?i)" + text
    if rng.random() < 0.15:
        text += "|" + _pattern(rng, depth + 1)
    return text.replace("(?<n>", "(")  # one name per pattern at most: plain groups


def _hex(text: str) -> str:
    return text.encode("utf-8").hex()


def _sjoin(pattern: str, text: str) -> str | None:
    try:
        regex = javaregex.parse(pattern)
    except javaregex.PatternError:
        return None
    out = []
    for n, spans in enumerate(regex.finditer(text)):
        if n >= 50:
            break
        groups = ",".join("-" if a < 0 else _hex(text[a:b]) for a, b in spans)
        out.append(f"M,{groups};")
    return "".join(out)


@pytest.fixture(scope="module")
def java_probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    javac = shutil.which("javac")
    if javac is None:
        if os.environ.get("CI"):
            pytest.fail("javac is needed to compare the regex engine with Java's")
        pytest.skip("no javac")
    folder = tmp_path_factory.mktemp("regexprobe")
    source = Path(__file__).parent / "java" / "RegexProbe.java"
    shutil.copy(source, folder)
    subprocess.run([javac, "RegexProbe.java"], cwd=folder, check=True)
    return folder


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_patterns_match_javas_matcher(java_probe: Path, seed: int) -> None:
    rng = random.Random(seed)
    cases = [
        (_pattern(rng), "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 7))))
        for _ in range(1500)
    ]
    cases += [(p, s) for p in ("(a+)+$", "(a|)*", "((\\z))*", "a$") for s in ("aa", "a\r\n")]
    lines = "".join(f"{_hex(p)}\t{_hex(s)}\n" for p, s in cases)
    java = (
        subprocess.run(
            ["java", "-cp", str(java_probe), "RegexProbe"],
            input=lines.encode(),
            capture_output=True,
            check=True,
            timeout=600,
        )
        .stdout.decode()
        .splitlines()
    )
    assert len(java) == len(cases)
    different, refused = [], 0
    for (pattern, text), want in zip(cases, java, strict=True):
        got = _sjoin(pattern, text)
        if got is None:
            refused += 1  # `check` refuses it (E012): never a different answer
            continue
        if got != want:
            different.append((pattern, text, want, got))
    assert different == []
    assert refused < len(cases) // 2  # most random patterns run
