"""Print two measures of how the package reads its plan, to compare a tree before and after a
change (issue 36):

    .venv/bin/python scripts/graph_metrics.py [TREE]

TREE is a folder named ``sjoin`` holding the package (default: this checkout), e.g. an older
commit unpacked with ``git archive COMMIT | tar -x -C /tmp/old/sjoin``.

- import cycles: the strongly connected components of more than one module in the graph of
  the package's imports (grimp, which import-linter installs; every import counts, those
  inside functions and under ``TYPE_CHECKING`` too), each with its modules;
- ``isinstance`` branches on plan node kinds: ``isinstance`` calls whose class argument names
  ``StreamNode``, ``JoinNode``, ``AggregateNode`` or ``PlanNode``, per module (read with
  ``ast``, so a call written over several lines counts once).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import grimp

PLAN_NODES = {"StreamNode", "JoinNode", "AggregateNode", "PlanNode"}
SKIPPED = {"tests", "benchmarks", "scripts", "build", ".venv"}


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            module, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append(
                        (target, iter(sorted(graph.find_modules_directly_imported_by(target))))
                    )
                    advanced = True
                    break
                if target in on_stack:
                    low[module] = min(low[module], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def isinstance_branches(tree: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree)
        if rel.parts[0] in SKIPPED:
            continue
        n = 0
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance"
                and len(node.args) == 2
                and PLAN_NODES & {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            ):
                n += 1
        if n:
            counts[str(rel)] = n
    return counts


def main(argv: list[str]) -> None:
    tree = Path(argv[0] if argv else Path(__file__).resolve().parents[1]).resolve()
    if tree.name != "sjoin" or not (tree / "__init__.py").is_file():
        sys.exit(f"{tree} is no folder named sjoin holding the package")
    sys.path.insert(0, str(tree.parent))
    graph = grimp.build_graph("sjoin", cache_dir=None)
    assert Path(grimp.__file__).exists()
    found = cycles(graph)
    print(f"tree: {tree}")
    print(f"modules: {len(graph.modules)}")
    print(
        f"import cycles (strongly connected components): {len(found)}, "
        f"modules in them: {sum(len(c) for c in found)}"
    )
    for component in found:
        print(f"  {len(component)} modules: " + ", ".join(component))
    counts = isinstance_branches(tree)
    print(f"isinstance on plan node kinds: {sum(counts.values())} calls in {len(counts)} modules")
    for module, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:3d} {module}")


if __name__ == "__main__":
    main(sys.argv[1:])
