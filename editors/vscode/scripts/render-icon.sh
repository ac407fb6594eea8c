#!/usr/bin/env bash
# Render the marketplace icon media/icon.png (128x128) from media/icon.svg with rsvg-convert (Debian: librsvg2-bin,
# installed here when missing). The PNG is committed: packaging does not need this script; run it after editing the SVG.
set -euo pipefail
EXT=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v rsvg-convert >/dev/null; then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends librsvg2-bin >/dev/null
fi
rsvg-convert --width 128 --height 128 --format png --output "$EXT/media/icon.png" "$EXT/media/icon.svg"
echo "wrote $EXT/media/icon.png"
