#!/usr/bin/env bash
# make release-check: what `make release` put in dist/ works where users install it.
#   1. the files: SHA256SUMS matches; the LICENSE is in the wheel, the sdist and the vsix; the vsix carries the wheel
#   2. the wheel in a fresh venv: `sidecar --version` says the release's version, `sidecar doctor` passes, and one
#      chat turn against the embedded fake (tools/release_turn.py, with the installed package's own client)
#   3. the vsix in a fresh code-server profile (editors/vscode/e2e/release.ts, the e2e setup cached in .cache/vscode-e2e):
#      the extension installs its bundled wheel and one chat turn goes through the chat view
# Env: PYTHON (Python 3.11+ for the fresh venv; default python3), SIDECAR_PYTHON (the project venv's, for the e2e).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIST=$ROOT/dist
cd "$ROOT"
t0=$(date +%s)
lap() { echo "release-check [+$(( $(date +%s) - t0 ))s] $*"; }
fail() { echo "release-check: FAIL: $*" >&2; exit 1; }
VERSION=$(sed -n 's/^__version__ = "\([^"]*\)"$/\1/p' sidecar/__init__.py)
WHEEL=$DIST/sidecar-$VERSION-py3-none-any.whl
SDIST=$DIST/sidecar-$VERSION.tar.gz
VSIX=$DIST/sidecar-vscode-$VERSION.vsix
for f in "$WHEEL" "$SDIST" "$VSIX" "$DIST/SHA256SUMS"; do [ -f "$f" ] || fail "$f is missing: run make release"; done

# -- 1. the files ------------------------------------------------------------------------------------
(cd "$DIST" && sha256sum --check --quiet SHA256SUMS) || fail "dist/SHA256SUMS does not match the files"
has() { # archive listing, exact member
  grep -qxF -- "$2" <<<"$1" || fail "$3 has no $2"
}
wheel_files=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$WHEEL")
has "$wheel_files" "sidecar-$VERSION.dist-info/licenses/LICENSE" "the wheel"
sdist_files=$(tar tzf "$SDIST")
has "$sdist_files" "sidecar-$VERSION/LICENSE" "the sdist"
has "$sdist_files" "sidecar-$VERSION/CHANGELOG.md" "the sdist"
vsix_files=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$VSIX")
has "$vsix_files" "extension/LICENSE.txt" "the vsix"
has "$vsix_files" "extension/server/sidecar-$VERSION-py3-none-any.whl" "the vsix"
python3 -c 'import sys, zipfile; sys.exit(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]) != open(sys.argv[3], "rb").read())' \
  "$VSIX" "extension/server/sidecar-$VERSION-py3-none-any.whl" "$WHEEL" || fail "the vsix's wheel is not dist/'s"
lap "dist/ files ok (sidecar $VERSION: SHA256SUMS, LICENSE in the wheel, sdist and vsix; the vsix carries the wheel)"

# -- 2. the wheel in a fresh venv ------------------------------------------------------------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sidecar-release-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"${PYTHON:-python3}" -m venv "$WORK/venv"
# The dependencies come from the local wheelhouse the VS Code e2e builds (.cache/wheelhouse, same key as
# editors/vscode/e2e/run.ts) when there is one for this Python: no index traffic; else from the package index.
house=$ROOT/.cache/wheelhouse/$("$WORK/venv/bin/python" - "$ROOT/pyproject.toml" <<'PY'
import hashlib, re, sys, sysconfig
deps = re.search(r"dependencies = \[([\s\S]*?)\]", open(sys.argv[1]).read()).group(1)
print(hashlib.sha256(f"{deps}{tuple(sys.version_info[:2])} {sysconfig.get_platform()}".encode()).hexdigest()[:12])
PY
)
from=(); [ -f "$house/.ok" ] && from=(--no-index --find-links "$house")
"$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${from[@]}" "$WHEEL" || fail "pip install $WHEEL"
lap "installed the wheel into a fresh venv (dependencies from ${from[2]:-the package index})"
# the user's view: not this checkout on the path, no key, no endpoint, a data home of its own
clean=(env -u PYTHONPATH -u GEMINI_API_KEY -u GOOGLE_API_KEY -u GOOGLE_GEMINI_BASE_URL -u GOOGLE_GENAI_USE_VERTEXAI
  -u GOOGLE_CLOUD_PROJECT SIDECAR_HOME="$WORK/home")
said=$(cd "$WORK" && "${clean[@]}" "$WORK/venv/bin/sidecar" --version)
[ "$said" = "sidecar $VERSION" ] || fail "sidecar --version says '$said', the release is $VERSION"
(cd "$WORK" && "${clean[@]}" "$WORK/venv/bin/sidecar" doctor) || fail "sidecar doctor in the fresh venv"
(cd "$WORK" && "${clean[@]}" "$WORK/venv/bin/python" "$ROOT/tools/release_turn.py" "$WORK/venv/bin/sidecar" "$VERSION") ||
  fail "one chat turn with the installed wheel"
lap "the wheel: --version, doctor and one chat turn ok"

# -- 3. the vsix in a fresh code-server profile ---------------------------------------------------------------
VSIX=$VSIX RELEASE_VERSION=$VERSION editors/vscode/scripts/run-e2e.sh release || fail "the vsix in code-server"
lap "the vsix: installed its server and answered one chat turn in a real VS Code"
echo "release-check: PASS (sidecar $VERSION, $(( $(date +%s) - t0 )) s)"
