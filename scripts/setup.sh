#!/usr/bin/env bash
# Install sjoin and its development tools into .venv, say what the Spark parts need, and get
# the browser tests their tools (chromium, mermaid's bundle) where it can.
# Idempotent: a second run only reinstalls the project itself (non-editable, as users get it:
# pip installs a project named by its folder again whatever its version, since pip 10).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
    echo "sjoin setup: $python is not on PATH; install Python 3.11 or newer." >&2
    exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
# setuptools reuses build/: a module moved or deleted since the last build would ship again
rm -rf build
.venv/bin/python -m pip install --quiet --disable-pip-version-check '.[dev]'

# The compiler and the reference runtime need no JVM; local Spark (tests, `sjoin verify`) does.
if ! command -v java >/dev/null 2>&1; then
    echo "sjoin setup: Java 17 or newer is not on PATH, so the Spark tests cannot run (install e.g. openjdk-17-jre-headless)." >&2
elif ! java -version 2>&1 | grep -qE 'version "(1[7-9]|[2-9][0-9])'; then
    echo "sjoin setup: Spark 4 needs Java 17 or newer, but 'java -version' says: $(java -version 2>&1 | head -n 1)" >&2
fi
if ! .venv/bin/python -c 'import pyspark' >/dev/null 2>&1; then
    echo "sjoin setup: pyspark is not installed in .venv, so the Spark tests cannot run." >&2
fi

# The Kafka tests (tests/integration/kafka) start a real broker and read it with Spark's Kafka connector:
# both are jars from Maven Central, fetched once with mvn into ~/.cache/sjoin/jvm/.
if ! command -v mvn >/dev/null 2>&1; then
    echo "sjoin setup: Maven (mvn) is not on PATH, so the Kafka broker and Spark's Kafka connector cannot be fetched and the Kafka tests cannot run (install it, e.g. 'apt-get install maven')." >&2
elif command -v java >/dev/null 2>&1 && .venv/bin/python -c 'import pyspark' >/dev/null 2>&1; then
    spark_version=$(.venv/bin/python -c 'import pyspark; print(pyspark.__version__)')
    .venv/bin/python -m sjoin.jvm.jars fetch-broker >/dev/null ||
        echo "sjoin setup: could not fetch the Kafka broker's jars (above), so the Kafka tests cannot run." >&2
    .venv/bin/python -m sjoin.jvm.jars fetch-connectors "$spark_version" kafka | grep '^note:' >&2 ||
        [ "${PIPESTATUS[0]}" = 0 ] ||
        echo "sjoin setup: could not fetch Spark's Kafka connector (above), so the Kafka tests cannot run." >&2
fi

# The browser tests (pytest -m browser) render the `sjoin run --report` page and the Mermaid
# diagrams in Debian's headless chromium, with mermaid's browser bundle from npm.
if [ ! -x /usr/bin/chromium ]; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        if ! apt-get install -y -q chromium >/dev/null 2>&1; then
            apt-get update -q >/dev/null 2>&1 || true
            apt-get install -y -q chromium >/dev/null 2>&1 || true
        fi
        [ -x /usr/bin/chromium ] ||
            echo "sjoin setup: 'apt-get install chromium' failed, so the browser tests cannot run." >&2
    else
        echo "sjoin setup: the browser tests need Debian's chromium; install it as root with 'apt-get install chromium'." >&2
    fi
fi
mermaid_version=11.17.2
mermaid_dir=.cache/mermaid
if [ ! -s "$mermaid_dir/mermaid.min.js" ] || [ "$(cat "$mermaid_dir/VERSION" 2>/dev/null)" != "$mermaid_version" ]; then
    pack=$(mktemp -d)
    if command -v npm >/dev/null 2>&1 &&
        (cd "$pack" && npm pack --silent "mermaid@$mermaid_version" >/dev/null 2>&1) &&
        tar -xzf "$pack/mermaid-$mermaid_version.tgz" -C "$pack" package/dist/mermaid.min.js 2>/dev/null; then
        mkdir -p "$mermaid_dir"
        mv "$pack/package/dist/mermaid.min.js" "$mermaid_dir/mermaid.min.js"
        echo "$mermaid_version" >"$mermaid_dir/VERSION"
    else
        echo "sjoin setup: could not fetch mermaid $mermaid_version with npm, so the Mermaid browser test cannot run." >&2
    fi
    rm -rf "$pack"
fi
