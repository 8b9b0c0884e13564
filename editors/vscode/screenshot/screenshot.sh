#!/usr/bin/env bash
# docs/images/vscode-extension.png: examples/ad_attribution.sjoin with a misspelt column,
# highlighted by the extension's TextMate grammar and showing the diagnostic sjoin reports
# for it (render.js), rendered by headless Chromium. Needs build.sh's node_modules, Debian's
# chromium, and sjoin in PYTHON (default: the checkout's .venv/bin/python).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
python=${PYTHON:-$root/.venv/bin/python}
out=${1:-$root/docs/images/vscode-extension.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/c\.user_id$/c.usr_id/' "$root/examples/ad_attribution.sjoin" >"$work/attribution.sjoin"
"$python" -m sjoin check --format json "$work/attribution.sjoin" >"$work/diagnostics.json" || true
(cd "$here/.." && node screenshot/render.js "$work/attribution.sjoin" "$work/diagnostics.json" "$work/page.html")
mkdir -p "$(dirname "$out")"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run \
    --disable-component-update --disable-sync --hide-scrollbars --user-data-dir="$work/profile" \
    --window-size=1000,760 --screenshot="$out" "file://$work/page.html" >/dev/null 2>&1
echo "wrote $out"
