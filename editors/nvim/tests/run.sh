#!/usr/bin/env bash
# Runs the Neovim plugin tests headless on every Neovim version against the real sidecar and the
# fake Gemini. Usage: editors/nvim/tests/run.sh [test_name ...]   (default: every tests/test_*.lua)
# Env: NVIM_VERSIONS="0.7 0.11"   SIDECAR_PYTHON (default .venv/bin/python)   SIDECAR_NVIM_TIMEOUT=120
#      SIDECAR_NVIM_SKIP_INSTALL=1 (use the Neovims already installed)   NVIM_07 / NVIM_011 (binaries)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGIN=$(dirname "$HERE")
ROOT=$(cd "$PLUGIN/../.." && pwd)
CACHE=${SIDECAR_CACHE:-$ROOT/.cache}
PY=${SIDECAR_PYTHON:-$ROOT/.venv/bin/python}
TIMEOUT=${SIDECAR_NVIM_TIMEOUT:-120}
VERSIONS=${NVIM_VERSIONS:-"0.7 0.11"}

if [ "${SIDECAR_NVIM_SKIP_INSTALL:-0}" != 1 ]; then
  "$HERE/install-nvim.sh" || { echo "nvim tests: installing Neovim failed" >&2; exit 2; }
fi
NVIM_07=${NVIM_07:-/usr/bin/nvim}
NVIM_011=${NVIM_011:-$CACHE/nvim011/bin/nvim}

TESTS=()
if [ $# -gt 0 ]; then
  for t in "$@"; do TESTS+=("$HERE/${t%.lua}.lua"); done
else
  for t in "$HERE"/test_*.lua; do TESTS+=("$t"); done
fi
# Tests of the plugin's own logic that start no sidecar: a run of only these (make test-fast-editors) needs no
# Python and starts no fake Gemini.
PURE_TESTS=" test_unit test_architecture "
needs_server=0
for t in "${TESTS[@]}"; do
  case "$PURE_TESTS" in *" $(basename "$t" .lua) "*) ;; *) needs_server=1 ;; esac
done
[ $needs_server = 0 ] || [ -x "$PY" ] || { echo "nvim tests: $PY not found (run make venv)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sidecar-nvim-tests.XXXXXX")
FAKE_PID=
cleanup() {
  [ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null && wait "$FAKE_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The sidecar runs from this checkout whether or not it is pip-installed in the venv.
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

# One fake Gemini for the run; each test resets it.
BASEURL=none
if [ $needs_server = 1 ]; then
  "$PY" -m sidecar.fakegemini --port 0 >"$WORK/fake.log" 2>&1 &
  FAKE_PID=$!
  BASEURL=
  for _ in $(seq 1 200); do
    BASEURL=$(sed -n 's/^fake-gemini listening on \(http[^ ]*\).*/\1/p' "$WORK/fake.log" | head -n1)
    [ -n "$BASEURL" ] && break
    kill -0 "$FAKE_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$BASEURL" ]; then
    echo "nvim tests: the fake Gemini did not start:" >&2
    cat "$WORK/fake.log" >&2
    exit 2
  fi
fi

# Isolation: no user config, plugins, shada, state or API keys (XDG dirs are per test, below).
unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GEMINI_BASE_URL NVIM NVIM_LISTEN_ADDRESS VIMINIT
export SIDECAR_TEST_PYTHON="$PY" SIDECAR_TEST_BASEURL="$BASEURL" SIDECAR_TEST_DEADLINE=$((TIMEOUT - 10))

secs_since() { # seconds (2 decimals) since a `date +%s%N` stamp
  local ms=$(( ($(date +%s%N) - $1) / 1000000 ))
  printf '%d.%02d' $((ms / 1000)) $(((ms % 1000) / 10))
}

failed=0
passed=0
summary=()
start_all=$(date +%s%N)
for v in $VERSIONS; do
  case $v in
    0.7) NVIM=$NVIM_07 ;;
    0.11) NVIM=$NVIM_011 ;;
    *) echo "nvim tests: unknown version $v" >&2; exit 2 ;;
  esac
  if ! "$NVIM" --version 2>/dev/null | head -n1 | grep -q "^NVIM v$v\."; then
    echo "nvim tests: $NVIM is not Neovim $v" >&2
    exit 2
  fi
  for t in "${TESTS[@]}"; do
    name=$(basename "$t" .lua)
    log="$WORK/$v-$name.log"
    home="$WORK/$v-$name"
    mkdir -p "$home"
    t0=$(date +%s%N)
    # :SidecarInstall builds a venv and pip-installs the sidecar with its dependencies: it gets more time
    t_timeout=$TIMEOUT
    [ "$name" = test_install ] && t_timeout=${SIDECAR_NVIM_INSTALL_TIMEOUT:-420}
    # its pip cache is shared by both Neovim versions and kept between runs (.cache/nvim-pip-cache)
    ( cd "$home" && export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$CACHE/nvim-pip-cache}" \
        SIDECAR_TEST_DEADLINE=$((t_timeout - 10)) XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" \
        XDG_STATE_HOME="$home/state" XDG_CACHE_HOME="$home/cache" NVIM_LOG_FILE="$home/nvim.log" \
        SIDECAR_HOME="$home/sidecar-home" TMPDIR="$home" && timeout -k 5 "$t_timeout" "$NVIM" --headless -n -i NONE -u "$HERE/minimal_init.lua" \
        -c "luafile $t" </dev/null >"$log" 2>&1 )
    rc=$?
    secs=$(secs_since "$t0")
    if [ $rc -eq 0 ] && grep -q "^\[.*\] PASS $name" "$log"; then
      passed=$((passed + 1))
      summary+=("$(printf 'PASS  nvim %-5s %-16s %6ss' "$v" "$name" "$secs")")
    else
      failed=$((failed + 1))
      [ $rc -eq 124 ] && echo "TIMEOUT after ${t_timeout}s" >>"$log"
      summary+=("$(printf 'FAIL  nvim %-5s %-16s %6ss (exit %s)' "$v" "$name" "$secs" "$rc")")
      echo "---- nvim $v $name (exit $rc) ----" >&2
      cat "$log" >&2
      # The server's stderr lands in Neovim's LSP log.
      for f in "$home/state/nvim/lsp.log" "$home/nvim.log"; do
        [ -s "$f" ] && { echo "---- $(basename "$f") (last 40 lines) ----" >&2; tail -n 40 "$f" >&2; }
      done
      mkdir -p "$CACHE/nvim-test-logs" && cp "$log" "$CACHE/nvim-test-logs/" 2>/dev/null
    fi
    [ "${SIDECAR_NVIM_VERBOSE:-0}" = 1 ] && cat "$log" >&2
  done
done
printf '%s\n' "${summary[@]}"
total=$(secs_since "$start_all")
echo "nvim tests: $passed passed, $failed failed ($total s)"
[ $failed -eq 0 ]
