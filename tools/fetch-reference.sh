#!/usr/bin/env bash
# Install the reference implementation (@google/gemini-cli-core) from npm into a cache directory.
# Idempotent: returns at once when the wanted version is already installed there.
# Usage: tools/fetch-reference.sh [cache-dir]   (default: $REPO/.cache/reference; env REFERENCE_DIR overrides)
# Prints the package directory (…/node_modules/@google/gemini-cli-core) on stdout.
set -euo pipefail

PKG="@google/gemini-cli-core"
VERSION="${REFERENCE_VERSION:-0.61.0}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${1:-${REFERENCE_DIR:-$REPO/.cache/reference}}"
PKG_DIR="$CACHE/node_modules/$PKG"
STAMP="$CACHE/.installed-$VERSION"

if [[ -f "$STAMP" && -f "$PKG_DIR/package.json" ]]; then
  echo "$PKG_DIR"
  exit 0
fi

for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "fetch-reference: '$tool' not found on PATH" >&2; exit 1; }
done

mkdir -p "$CACHE"
rm -f "$CACHE"/.installed-*
echo "fetch-reference: installing $PKG@$VERSION into $CACHE ..." >&2
# The package needs no install scripts for what we import; skipping them keeps this offline-friendly and safe.
npm install "$PKG@$VERSION" --prefix "$CACHE" \
  --ignore-scripts --no-audit --no-fund --no-save --loglevel=error >&2

installed="$(node -p "require(process.argv[1]).version" "$PKG_DIR/package.json")"
if [[ "$installed" != "$VERSION" ]]; then
  echo "fetch-reference: expected $PKG@$VERSION, found $installed" >&2
  exit 1
fi
touch "$STAMP"
echo "$PKG_DIR"
