"""Machine-checked invariants of the layout: packaging, docs generated from code."""

from __future__ import annotations

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
