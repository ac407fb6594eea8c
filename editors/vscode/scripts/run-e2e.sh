#!/usr/bin/env bash
# The real-VS-Code end-to-end test: set up (cached), build the vsix, run e2e/run.ts.
# Usage: scripts/run-e2e.sh [release]   Env: VSIX=<prebuilt .vsix> to skip packaging, VSCODE_E2E_CACHE, SIDECAR_PYTHON.
# `release`: e2e/release.ts instead of e2e/run.ts (make release-check: VSIX=dist/…vsix, a fresh profile, one turn).
# Needs `npm ci` to have run in editors/vscode (the Makefile's test-vscode-e2e does that).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
EXT=$(cd "$HERE/.." && pwd)
REPO=$(cd "$EXT/../.." && pwd)
export VSCODE_E2E_CACHE=${VSCODE_E2E_CACHE:-$REPO/.cache/vscode-e2e}
bash "$HERE/setup-e2e.sh"
# shellcheck disable=SC1091
source "$VSCODE_E2E_CACHE/env.sh"
cd "$EXT"
test -d node_modules/playwright-core || { echo "run-e2e: run 'npm ci' in editors/vscode first" >&2; exit 1; }
npm run --silent compile  # out/e2e/*.js: always from the current sources (packaging only bundles the extension)
if [ -z "${VSIX:-}" ]; then
  npm run --silent package >/dev/null
  VSIX=$EXT/sidecar.vsix
fi
export VSIX
SCRIPT=run
[ "${1:-}" = release ] && SCRIPT=release
exec node "out/e2e/$SCRIPT.js"
