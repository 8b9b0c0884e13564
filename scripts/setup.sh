#!/usr/bin/env bash
# Install sjoin and its development tools into .venv, then say what the Spark parts need.
# Idempotent: a second run only reinstalls the project itself (non-editable, as users get it).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
    echo "sjoin setup: $python is not on PATH; install Python 3.11 or newer." >&2
    exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check '.[dev]'
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall .

# The compiler and the reference runtime need no JVM; local Spark (tests, `sjoin verify`) does.
if ! command -v java >/dev/null 2>&1; then
    echo "sjoin setup: Java 17 or newer is not on PATH, so the Spark tests cannot run (install e.g. openjdk-17-jre-headless)." >&2
elif ! java -version 2>&1 | grep -qE 'version "(1[7-9]|[2-9][0-9])'; then
    echo "sjoin setup: Spark 4 needs Java 17 or newer, but 'java -version' says: $(java -version 2>&1 | head -n 1)" >&2
fi
if ! .venv/bin/python -c 'import pyspark' >/dev/null 2>&1; then
    echo "sjoin setup: pyspark is not installed in .venv, so the Spark tests cannot run." >&2
fi
