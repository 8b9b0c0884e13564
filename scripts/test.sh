#!/usr/bin/env bash
# The whole test suite, as CI runs it: set up, lint, import rules and types of the installed
# package, then every test (real-Spark tests included) against the installed package; without
# arguments the parity suite also runs on Spark 3.5.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
.venv/bin/ruff check --quiet .
.venv/bin/ruff format --check --quiet .  # laid out as ruff lays it out (the generated jobs are too)
# import rules and types, checked on the installed package (the checkout's root is that
# package, docs/architecture.md: nothing here shadows it)
.venv/bin/lint-imports --no-cache pyproject.toml >/dev/null  # the file positional: --config is deprecated (2.17)
.venv/bin/mypy --no-incremental -p sjoin

# The parity suite once more on the newest Spark 3.5 (Java 17), as `sjoin verify --spark 3.5`
# runs it: in sjoin's cached environment (~/.cache/sjoin/spark-3.5, made on first use with pip,
# a few minutes) through the driver in a child process; the specs are re-planned for 3.5.
# Only for the whole suite (no arguments), as CI runs it; SJOIN_SKIP_SPARK35=1 leaves it out.
parity=()
if [ $# -eq 0 ] && [ -z "${SJOIN_SKIP_SPARK35:-}" ]; then
    python35=$(.venv/bin/python -c 'from sjoin.jvm.spark_env import ensure_env; print(ensure_env("3.5"))')
    parity=("--parity-python=$python35")  # one word: pytest takes a separate value for a path, and roots the run there
fi
# Two processes (pytest-xdist): one runs the tests on the run's one Spark session and Kafka
# broker, in order; the other the rest, the Spark 3.5 parity run among them (tests/conftest.py).
# SJOIN_TEST_PROCESSES=0 runs everything in this process. The slowest tests, to keep the run
# well under its budget; -rs names every skipped test and why.
.venv/bin/pytest -n "${SJOIN_TEST_PROCESSES:-2}" --dist loadgroup --durations=25 -rs \
    ${parity[@]+"${parity[@]}"} "$@"
