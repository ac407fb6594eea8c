#!/usr/bin/env bash
# make release: build what users install into dist/ —
#   sidecar-<version>-py3-none-any.whl and sidecar-<version>.tar.gz   (python -m build; hatchling, pyproject.toml)
#   sidecar-vscode-<version>.vsix                                      (carrying that same wheel)
#   SHA256SUMS                                                         (sha256sum -c SHA256SUMS checks them)
# The version comes from sidecar/__init__.py (the extension's manifest copies it: editors/vscode/scripts/sync-metadata.js).
# Env: PYTHON (default .venv/bin/python, which has `build`: the dev extra). Needs `npm ci` in editors/vscode.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-$ROOT/.venv/bin/python}
DIST=$ROOT/dist
cd "$ROOT"
t0=$(date +%s)
VERSION=$(sed -n 's/^__version__ = "\([^"]*\)"$/\1/p' sidecar/__init__.py)
[ -n "$VERSION" ] || { echo "release: no __version__ in sidecar/__init__.py" >&2; exit 1; }
rm -rf "$DIST" && mkdir -p "$DIST"
# --no-isolation: the venv has hatchling (the dev extra), so no build environment is fetched and installed twice
"$PY" -m build --no-isolation --outdir "$DIST" . >"$DIST/.build.log" 2>&1 || { cat "$DIST/.build.log" >&2; exit 1; }
rm -f "$DIST/.build.log"
WHEEL=$DIST/sidecar-$VERSION-py3-none-any.whl
SDIST=$DIST/sidecar-$VERSION.tar.gz
[ -f "$WHEEL" ] && [ -f "$SDIST" ] || { echo "release: python -m build did not make $WHEEL and $SDIST:" >&2; ls "$DIST" >&2; exit 1; }
(cd editors/vscode && WHEEL=$WHEEL npm run --silent package -- "$DIST/sidecar-vscode-$VERSION.vsix" >/dev/null)
(cd "$DIST" && sha256sum -- *.whl *.tar.gz *.vsix > SHA256SUMS)
echo "release: sidecar $VERSION in dist/ ($(( $(date +%s) - t0 )) s):"
(cd "$DIST" && ls -l --time-style=+ -- * | awk '{print "  " $NF "  " $5 " bytes"}')
