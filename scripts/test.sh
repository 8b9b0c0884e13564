#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up, lint, import rules and types of the installed
# package, then every test (real-Spark tests included) against the installed package.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
.venv/bin/ruff check --quiet .
# import rules and types are checked on the installed package, from outside the work tree
# (inside it, the thin top folder sjoin/ would shadow the installed sjoin.compiler & co.)
(
    cd "$(mktemp -d)"
    "$root/.venv/bin/lint-imports" --no-cache --config "$root/pyproject.toml" >/dev/null
    "$root/.venv/bin/mypy" --config-file "$root/pyproject.toml" --no-incremental -p sjoin
)
exec .venv/bin/pytest "$@"
