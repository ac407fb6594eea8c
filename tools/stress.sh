#!/usr/bin/env bash
# make test-stress: the Python suites, RUNS times (default 5), each in a fresh clone of HEAD with its own venv,
# under a load worse than CI's: a CPU hog on every core, an fsync-heavy disk writer, and a process that keeps
# starting short-lived Python interpreters (as a busy developer machine does). Prints each run's failures and a
# summary; exits 1 if any run failed.
# SUITES=all runs all of `make test` instead (lint, types, Python, VS Code unit and real-VS-Code e2e, Neovim),
# with the VS Code e2e setup (code-server, Chromium) and acpx shared from this checkout's .cache.
# Only committed work is tested (a clone sees HEAD, as CI does).
# `tools/stress.sh COMMAND [ARGS...]` runs COMMAND once, here, under the same load instead (e.g. one test file in a
# shell loop) and exits with its status.
# The load is bounded: every load process ends when this script ends (trap on EXIT/INT/TERM), when it finds this
# script gone (even after a SIGKILL), and after STRESS_MAX_SECONDS (default 3 hours) at the latest. The disk
# writer keeps one file of at most 64 MiB in the work directory, which is removed at the end.
set -uo pipefail
RUNS=${RUNS:-5}
SUITES=${SUITES:-python}
case "$SUITES" in
  python) targets=(test-python) ;;
  all) targets=(test) ;;
  *) echo "stress: SUITES is python or all, not '$SUITES'" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3}
MAX_SECONDS=${STRESS_MAX_SECONDS:-10800}
top=$(git rev-parse --show-toplevel) || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/sidecar-stress.XXXXXX")
load=()
child=""
cleanup() {
  trap - EXIT INT TERM
  [ -n "$child" ] && kill -TERM -- "-$child" 2>/dev/null  # the run under way, with everything it started
  for pid in "${load[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Run COMMAND in its own process group and wait for it: an interrupt or a kill of this script then ends the whole
# run (pytest, its workers, the sidecars they started) at once, not after it finishes.
run_child() {
  setsid "$@" &
  child=$!
  wait "$child"
  local rc=$?
  child=""
  return "$rc"
}

# One load process: `cpu`, `disk FILE` or `spawn`. Each checks every few hundred milliseconds at most that the
# script that started it (its parent) is still there and that its time is not up, and ends otherwise.
# shellcheck disable=SC2016
LOAD_PY='
import os, subprocess, sys, time
kind, parent, deadline = sys.argv[1], os.getppid(), time.monotonic() + float(sys.argv[2])
def alive():
    return os.getppid() == parent and time.monotonic() < deadline
if kind == "cpu":  # a busy loop, as a compiler or a test suite next door
    while alive():
        for _ in range(200_000):
            pass
elif kind == "disk":  # small writes, each made durable: what keeps a journal and a disk queue busy
    path, chunk, size = sys.argv[3], os.urandom(64 * 1024), 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    while alive():
        os.write(fd, chunk)
        os.fsync(fd)
        size += len(chunk)
        if size >= 64 * 1024 * 1024:
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            size = 0
elif kind == "spawn":  # short-lived interpreters, each importing a little: linters, hooks, language servers
    while alive():
        subprocess.run([sys.executable, "-c", "import asyncio, json, email.parser, decimal"], check=False)
'
start_load() {
  "$PYTHON" -c "$LOAD_PY" "$@" &
  load+=("$!")
}
cores=$(nproc)
for _ in $(seq "$cores"); do start_load cpu "$MAX_SECONDS"; done
start_load disk "$MAX_SECONDS" "$work/fsync-load"
start_load spawn "$MAX_SECONDS"
describe="$cores CPU hogs, an fsync-heavy writer and a Python spawner running"

if [ $# -gt 0 ]; then
  echo "stress: $* under load ($describe)"
  run_child "$@"
  exit $?
fi

commit=$(git -C "$top" rev-parse HEAD)  # every run tests this commit, even if HEAD moves meanwhile
export VSCODE_E2E_CACHE=${VSCODE_E2E_CACHE:-$top/.cache/vscode-e2e}
export ACPX_CACHE=${ACPX_CACHE:-$top/.cache/acpx}  # acpx and its Node, installed once, not downloaded per run
export SIDECAR_ACPX=${SIDECAR_ACPX:-$ACPX_CACHE/bin/acpx}
export SIDECAR_PROPERTY_EXAMPLES=${SIDECAR_PROPERTY_EXAMPLES:-200}  # the random edit-sequence test: more examples than make test
echo "stress: $RUNS runs of make ${targets[*]} on fresh clones of ${commit:0:7}, $describe"

failed_runs=0
for run in $(seq "$RUNS"); do
  clone="$work/run-$run"
  git clone -q "$top" "$clone" && git -C "$clone" checkout -q "$commit" || { echo "run $run: git clone failed"; exit 2; }
  log="$work/run-$run.log"
  started=$(date +%s)
  # shellcheck disable=SC2016
  run_child bash -c 'cd "$1" && make -s venv PYTHON="$2" && make -s "${@:3}"' run "$clone" "$PYTHON" "${targets[@]}" \
    >"$log" 2>&1
  rc=$?
  took=$(( $(date +%s) - started ))
  counts=$(grep -E '^=+ .*(passed|failed|error).* in [0-9.]+s' "$log" | tail -n 1 | tr -d '=')
  grep -q '^\[e2e [0-9.]*s\] PASS' "$log" && counts="$counts; VS Code e2e PASS"
  if [ "$rc" -eq 0 ]; then
    echo "run $run: ok (${took}s)${counts:+ —$counts}"
  else
    failed_runs=$((failed_runs + 1))
    echo "run $run: FAILED rc=$rc (${took}s)${counts:+ —$counts}"
    grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/    /'
    grep -qE '^(FAILED|ERROR) ' "$log" || tail -n 30 "$log" | sed 's/^/    /'
    cp "$log" "$top/stress-run-$run.log" && echo "    full log: stress-run-$run.log"
  fi
  rm -rf "$clone"
done
echo "stress: $failed_runs failures in $RUNS loaded runs"
[ "$failed_runs" -eq 0 ]
