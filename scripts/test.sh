#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up, lint, import rules, then every test
# (real-Spark tests included) against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check --quiet .
.venv/bin/lint-imports --no-cache >/dev/null
exec .venv/bin/pytest "$@"
