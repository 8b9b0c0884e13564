"""Machine-checked invariants of the layout: packaging, docs generated from code."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from sjoin.compiler.diagnostics.codes import markdown_table

from .conftest import ROOT

# The package's folders under the root (the root itself is the package `sjoin`)
PACKAGE_FOLDERS = ("cli", "jvm", "reports", "editor", "grammar", "compiler", "runtime")


def package_modules() -> list[Path]:
    """Every module of the package: the root's own modules and those of its folders."""
    return sorted(ROOT.glob("*.py")) + [
        module for folder in PACKAGE_FOLDERS for module in sorted((ROOT / folder).rglob("*.py"))
    ]


def module_name(module: Path) -> str:
    """The import path of a module, read off its file path (the rule this layout keeps)."""
    parts = module.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("sjoin", *parts))


def top_level_names(module: Path) -> set[str]:
    """The names a module binds at its top level (functions, classes, assignments, imports)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {
                n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)
            }
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def test_every_module_folder_is_packaged() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"sjoin": "."}
    packages = set(config["packages"])
    inits = [ROOT / "__init__.py"] + [
        init for folder in PACKAGE_FOLDERS for init in (ROOT / folder).rglob("__init__.py")
    ]
    assert packages == {module_name(init) for init in inits}


def test_import_path_is_the_file_path() -> None:
    """Nothing at the root is called ``sjoin`` (it would shadow the installed package), and
    the package imports itself only relatively, so each import names a file of the tree."""
    assert not (ROOT / "sjoin").exists() and not (ROOT / "sjoin.py").exists()
    files = {module_name(module): module for module in package_modules()}
    offenders = []
    for module in package_modules():
        tree = ast.parse(module.read_text())
        package = module_name(module).split(".")
        if module.name != "__init__.py":
            package = package[:-1]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                offenders += [
                    f"{module.relative_to(ROOT)}:{node.lineno}: import {alias.name}"
                    for alias in node.names
                    if alias.name.split(".")[0] == "sjoin"
                ]
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0:
                    if (node.module or "").split(".")[0] == "sjoin":
                        offenders.append(f"{module.relative_to(ROOT)}:{node.lineno}: absolute")
                    continue
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
                if target not in files:
                    offenders.append(f"{module.relative_to(ROOT)}:{node.lineno}: {target}")
                    continue
                # each imported name is a module of the tree or a name its target defines
                defined = top_level_names(files[target])
                offenders += [
                    f"{module.relative_to(ROOT)}:{node.lineno}: {target}.{alias.name}"
                    for alias in node.names
                    if f"{target}.{alias.name}" not in files
                    and alias.name not in defined
                    and alias.name != "*"
                ]
    assert offenders == []


def test_the_package_imports_from_the_root_of_a_checkout() -> None:
    """`python -c "import sjoin"` run in the checkout imports the installed package."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sjoin, sjoin.compiler.planning.planner; print(sjoin.__file__)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).name == "__init__.py"


def test_diagnostics_doc_is_generated_from_codes() -> None:
    assert (ROOT / "docs" / "diagnostics.md").read_text() == markdown_table(), (
        "regenerate: python -m sjoin.compiler.diagnostics.codes > docs/diagnostics.md"
    )


def test_architecture_doc_names_every_module() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for module in package_modules():
        if module.name == "__init__.py" and module.stat().st_size == 0:
            continue
        rel = module.relative_to(ROOT).as_posix()
        assert rel in doc, f"docs/architecture.md does not mention {rel}"


def test_only_the_annotate_module_names_expression_meta_keys() -> None:
    """sqlglot's free-form ``meta`` dict is read and written through
    ``compiler/vocabulary/annotate.py`` alone, so every annotation has one typed accessor (issue
    14)."""
    raw = re.compile(r"\.meta\s*(\[|\.get\(|\.update\(|\.setdefault\(|\.pop\()")
    offenders = [
        f"{module.relative_to(ROOT).as_posix()}:{n}: {line.strip()}"
        for module in package_modules()
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
        for module in package_modules()
        if not module.is_relative_to(ROOT / "grammar")
        if module.name not in ("model.py", "planner.py")
        for n, line in enumerate(module.read_text().splitlines(), 1)
        if literal_tuple.search(line)
    ]
    assert offenders == []


def test_the_version_is_the_one_pyproject_declares() -> None:
    """version.py holds the version the CLI prints and the back ends stamp on a job: it must be
    the one the package is built with (pyproject.toml), which importlib.metadata would read."""
    from sjoin import __version__
    from sjoin.version import __version__ as stamped

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert __version__ == stamped == project["version"]


def test_the_import_rules_step_of_the_test_script_runs_without_a_warning() -> None:
    """scripts/test.sh checks the import rules as written there, and the run prints nothing on
    stderr: import-linter 2.17 deprecated ``--config FILE`` (a DeprecationWarning in every CI
    log) for the file as a positional argument, which the dev extra's floor guarantees."""
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    (line,) = [ln for ln in script.splitlines() if ln.startswith(".venv/bin/lint-imports ")]
    command = line.split("#")[0].split(">")[0].split()
    assert "--config" not in command
    executable = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(executable), *command[1:]], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]["dev"]
    assert "import-linter>=2.17" in dev


def test_the_docs_cite_no_text_users_do_not_have() -> None:
    """The docs point at docs: the project's internal language brief (its sections, `§7`) is
    not shipped, so a user cannot follow a reference to it (issue 35, item 15)."""
    offenders = [
        f"{doc.relative_to(ROOT).as_posix()}:{n}: {line.strip()}"
        for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bbrief\b|§", line, re.IGNORECASE)
    ]
    assert offenders == []


# Calls that write, make, move or delete files, by the name they are called by: a method
# of a path or a library (``.write_text``), or a function of ``os`` / ``shutil``.
_WRITING_METHODS = {
    "write_text",
    "write_bytes",
    "touch",
    "mkdir",
    "symlink_to",
    "hardlink_to",
    "write_deltalake",
    "write_parquet",
    "write_csv",
    "write_ndjson",
    "write_ipc",
}
_WRITING_FUNCTIONS = {
    "os": {
        "open",
        "replace",
        "rename",
        "renames",
        "remove",
        "unlink",
        "mkdir",
        "makedirs",
        "rmdir",
        "removedirs",
        "symlink",
        "link",
        "truncate",
        "mkfifo",
    },
    "shutil": {"rmtree", "copy", "copy2", "copyfile", "copytree", "move"},
}
# Writes outside runtime/io/files.py, each with the reason it may stay where it is.
_WRITES_ALLOWED = {
    # polars writes to a handle the caller gives (files.Folder.write's temporary file, or a
    # sink's open file), never to a path
    ("runtime/columnar/frames.py", "write_csv"),
    ("runtime/columnar/parquet_out.py", "write_parquet"),
    # delta-rs writes by path: the table's folder, its log and every entry in them are
    # checked through files.LibraryFolder just before each commit
    ("runtime/columnar/delta.py", "write_deltalake"),
    # BatchOutput.write_text: a batch's lines into the handle of a sink's file, which
    # files.open_named opened
    ("runtime/io/sinks.py", "write_text"),
    # /dev/null opened to silence stdout (cli --quiet), not a file written
    ("cli/main.py", "os.open"),
    # Spark's side of `sjoin verify` and the test harnesses: they write only in folders
    # sjoin made for the run with tempfile (mode 0700, a name nobody can guess) or in
    # sjoin's own environment caches, never at a path a user named; spark_driver.py runs
    # in another interpreter, which has no sjoin to import
    ("jvm/spark_driver.py", "os.open"),
    ("jvm/spark_driver.py", "shutil.rmtree"),
    ("jvm/spark_driver.py", "os.makedirs"),
    ("jvm/spark_driver.py", "shutil.copyfile"),
    ("jvm/spark_driver.py", "os.replace"),
    ("jvm/spark_env.py", "open"),
    ("jvm/spark_env.py", "shutil.copyfile"),
    ("jvm/spark_env.py", "shutil.rmtree"),
    ("jvm/kafka_broker.py", "open"),
    ("jvm/kafka_broker.py", "mkdir"),
    ("jvm/kafka_broker.py", "write_text"),
    ("jvm/kafka_broker.py", "shutil.rmtree"),
    ("jvm/kafka_driver.py", "mkdir"),
    ("jvm/delta_driver.py", "mkdir"),
    ("jvm/delta_driver.py", "write_deltalake"),
}


def _writes(module: Path) -> list[tuple[int, str]]:
    """The calls in ``module`` that write files: (line, name)."""
    found = []
    for node in ast.walk(ast.parse(module.read_text())):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner in _WRITING_FUNCTIONS:
                if func.attr in _WRITING_FUNCTIONS[owner]:
                    found.append((node.lineno, f"{owner}.{func.attr}"))
            elif func.attr in _WRITING_METHODS:
                found.append((node.lineno, func.attr))
            elif func.attr == "open" and _writing_mode(node, 0, computed=False):
                found.append((node.lineno, "open"))  # Path.open("w")
        elif isinstance(func, ast.Name) and func.id == "open" and _writing_mode(node, 1):
            found.append((node.lineno, "open"))
    return found


def _writing_mode(call: ast.Call, position: int, computed: bool = True) -> bool:
    """Whether an ``open`` call's mode (positional at ``position``, or ``mode=``) writes;
    a mode computed at run time counts as a write for the builtin (``computed``), not for
    a method (``Folder.open(path, what)``: its first argument is no mode)."""
    mode = next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None and len(call.args) > position:
        mode = call.args[position]
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(set(mode.value) & set("wax+"))
    return computed


def test_every_write_goes_through_the_files_module() -> None:
    """Issue 35 item 18: every file and folder sjoin writes goes through runtime/io/files.py,
    which refuses links where sjoin names the path and turns a failed write into an error
    naming the file; a new writer elsewhere fails here (add it to files.py, or, with the
    reason, to _WRITES_ALLOWED)."""
    offenders = []
    used = set()
    for module in package_modules():
        relative = module.relative_to(ROOT).as_posix()
        if relative == "runtime/io/files.py":
            continue
        for line, name in _writes(module):
            if (relative, name) in _WRITES_ALLOWED:
                used.add((relative, name))
            else:
                offenders.append(f"{relative}:{line}: {name}")
    assert offenders == []
    assert used == _WRITES_ALLOWED  # no stale exemption


def test_the_test_tree_mirrors_the_package() -> None:
    """tests/README.md: a folder of module tests is named as the package folder (or the
    module) it tests, so `tests/runtime/io/` holds the tests of `runtime/io/`; the suites
    that run whole scenarios across the stack are under tests/integration/."""
    tests = ROOT / "tests"
    strays = sorted(
        folder.relative_to(tests).as_posix()
        for folder in {path.parent for path in tests.rglob("test_*.py")}
        if folder != tests
        and "integration" not in folder.relative_to(tests).parts
        and "__snapshots__" not in folder.parts
        and not (ROOT / folder.relative_to(tests)).is_dir()
        and not (ROOT / folder.relative_to(tests)).with_suffix(".py").is_file()
    )
    assert strays == []
