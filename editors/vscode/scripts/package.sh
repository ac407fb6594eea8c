#!/usr/bin/env bash
# Package the extension: the esbuild bundle, the webview assets, the user README with its screenshots, the LICENSE and
# CHANGELOG (copied from the repository root at packaging time) and the sidecar wheel the extension installs.
# Usage: scripts/package.sh [OUT.vsix]   (default editors/vscode/sidecar.vsix; `npm run package -- OUT` passes it)
# Env:   WHEEL=<a built sidecar-*.whl> to carry that wheel (make release: the one in dist/) instead of building one.
# The manifest's version and repository are first copied from where they are defined (scripts/sync-metadata.js).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
EXT=$(cd "$HERE/.." && pwd)
REPO=$(cd "$EXT/../.." && pwd)
OUT=${1:-$EXT/sidecar.vsix}
node "$HERE/sync-metadata.js" "$REPO"
if [ -n "${WHEEL:-}" ]; then
  rm -rf "$EXT/server" && mkdir -p "$EXT/server" && cp "$WHEEL" "$EXT/server/"
else
  bash "$HERE/build-wheel.sh"
fi
cp "$REPO/LICENSE" "$EXT/LICENSE"
cp "$REPO/CHANGELOG.md" "$EXT/CHANGELOG.md"
cd "$EXT"
# Relative links (the README's screenshots) stay relative: VS Code shows them from the installed extension. The
# repository address is a placeholder (pyproject.toml), so vsce could not make them absolute anyway; once it is a
# real GitHub/GitLab address, dropping --no-rewrite-relative-links lets vsce point them at it for the marketplace.
PATH=$EXT/node_modules/.bin:$PATH vsce package --no-dependencies --no-rewrite-relative-links -o "$OUT"
