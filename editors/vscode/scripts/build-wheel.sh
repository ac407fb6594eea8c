#!/usr/bin/env bash
# Build the sidecar wheel the .vsix carries: editors/vscode/server/sidecar-<version>-py3-none-any.whl.
# The extension installs it into a private venv in its global storage on first start (src/serverSetup.ts).
# Env: SIDECAR_PYTHON (default <repo>/.venv/bin/python, else python3). pip builds with hatchling (pyproject.toml),
# fetched into an isolated build environment like any `pip wheel`.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
EXT=$(cd "$HERE/.." && pwd)
REPO=$(cd "$EXT/../.." && pwd)
PY=${SIDECAR_PYTHON:-$REPO/.venv/bin/python}
[ -x "$PY" ] || PY=python3
rm -rf "$EXT/server"
mkdir -p "$EXT/server"
"$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$EXT/server" "$REPO"
ls "$EXT"/server/sidecar-*-py3-none-any.whl >/dev/null
