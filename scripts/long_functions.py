"""Print every function of the package longer than a limit (80 lines by default), longest
first, with its line count: `python scripts/long_functions.py [LIMIT]`.

A function's lines run from its ``def`` (its decorators not counted) to its last line, as
``ast`` gives them, so a nested function counts in its own right and inside its parent.
The last line is the count, so the figure can be compared before and after a change.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the package's root (it is `sjoin`)
SKIP = {"tests", "benchmarks", "scripts", "docs", "examples", "build", "dist"}


def package_modules() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if not any(part in SKIP or part.startswith(".") for part in path.relative_to(ROOT).parts)
    )


def long_functions(limit: int) -> list[tuple[int, str]]:
    found = []
    for module in package_modules():
        tree = ast.parse(module.read_text(encoding="utf-8"))
        stack: list[tuple[ast.AST, str]] = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                name = prefix
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = f"{prefix}{child.name}."
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (child.end_lineno or child.lineno) - child.lineno + 1
                    if lines > limit:
                        where = f"{module.relative_to(ROOT)}:{child.lineno}"
                        found.append((lines, f"{where} {name[:-1]}"))
                stack.append((child, name))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def main() -> None:
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    found = long_functions(limit)
    for lines, where in found:
        print(f"{lines:5d}  {where}")
    print(f"{len(found)} functions over {limit} lines")


if __name__ == "__main__":
    main()
