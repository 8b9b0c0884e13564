"""Machine-checked invariants of the layout: packaging, docs generated from code."""

from __future__ import annotations

import re
import tomllib

from sjoin.compiler.codes import markdown_table

from .conftest import ROOT


def test_every_module_folder_is_packaged() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = set(config["packages"])
    folders = {v: k for k, v in config["package-dir"].items()}
    for folder, package in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            name = ".".join([package, *rel.parts]) if rel.parts else package
            assert name in packages, f"{name} is missing from [tool.setuptools] packages"


def test_diagnostics_doc_is_generated_from_codes() -> None:
    assert (ROOT / "docs" / "diagnostics.md").read_text() == markdown_table(), (
        "regenerate: python -m sjoin.compiler.codes > docs/diagnostics.md"
    )


def test_architecture_doc_names_every_module() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for folder in ("compiler", "grammar", "runtime", "sjoin"):
        for module in (ROOT / folder).rglob("*.py"):
            if module.name == "__init__.py" and module.stat().st_size == 0:
                continue
            rel = module.relative_to(ROOT).as_posix()
            assert rel in doc, f"docs/architecture.md does not mention {rel}"


def test_only_the_annotate_module_names_expression_meta_keys() -> None:
    """sqlglot's free-form ``meta`` dict is read and written through ``compiler/annotate.py``
    alone, so every annotation has one typed accessor (issue 14)."""
    raw = re.compile(r"\.meta\s*(\[|\.get\(|\.update\(|\.setdefault\(|\.pop\()")
    offenders = [
        f"{module.relative_to(ROOT).as_posix()}:{n}: {line.strip()}"
        for folder in ("compiler", "grammar", "runtime", "sjoin")
        for module in sorted((ROOT / folder).rglob("*.py"))
        if module.name != "annotate.py"
        for n, line in enumerate(module.read_text().splitlines(), 1)
        if raw.search(line)
    ]
    assert offenders == []


def test_join_types_are_tested_through_the_join_kinds_table() -> None:
    """Facts about join types live in ``model.JOIN_KINDS``: no module outside the model and
    the planner compares a join type with a list of them."""
    literal_tuple = re.compile(
        r"\bin\s*[\(\[{]\s*\"(inner|left_outer|right_outer|full_outer|left_semi|left_anti)\""
    )
    offenders = [
        f"{module.relative_to(ROOT).as_posix()}:{n}: {line.strip()}"
        for folder in ("compiler", "runtime", "sjoin")
        for module in sorted((ROOT / folder).rglob("*.py"))
        if module.name not in ("model.py", "planner.py")
        for n, line in enumerate(module.read_text().splitlines(), 1)
        if literal_tuple.search(line)
    ]
    assert offenders == []
