#!/usr/bin/env bash
# Build the sjoin VS Code extension: install the exact dependencies of package-lock.json,
# compile src/ to out/, and package sjoin-<version>.vsix here (needs Node 20+ and npm).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1; then
    echo "editors/vscode/build.sh: npm is not on PATH; install Node.js 20 or newer." >&2
    exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
npx --no-install tsc -p ./
npx --no-install vsce package --out "sjoin-$(node -p 'require("./package.json").version').vsix"
