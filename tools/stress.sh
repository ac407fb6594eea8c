#!/usr/bin/env bash
# make test-stress: the Python suites, RUNS times (default 5), each in a fresh clone of HEAD with its own venv,
# while a CPU hog keeps every core busy. Prints each run's failures and a summary; exits 1 if any run failed.
# SUITES=all runs all of `make test` instead (lint, types, Python, VS Code unit and real-VS-Code e2e, Neovim),
# with the VS Code e2e setup (code-server, Chromium) shared from this checkout's .cache/vscode-e2e.
# Only committed work is tested (a clone sees HEAD, as CI does).
set -uo pipefail
RUNS=${RUNS:-5}
SUITES=${SUITES:-python}
case "$SUITES" in
  python) targets=(test-python) ;;
  all) targets=(test) ;;
  *) echo "stress: SUITES is python or all, not '$SUITES'" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3}
top=$(git rev-parse --show-toplevel) || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/sidecar-stress.XXXXXX")
hogs=()
cleanup() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

cores=$(nproc)
for _ in $(seq "$cores"); do
  "$PYTHON" -c 'while True: pass' &
  hogs+=("$!")
done
commit=$(git -C "$top" rev-parse HEAD)  # every run tests this commit, even if HEAD moves meanwhile
export VSCODE_E2E_CACHE=${VSCODE_E2E_CACHE:-$top/.cache/vscode-e2e}
echo "stress: $RUNS runs of make ${targets[*]} on fresh clones of ${commit:0:7}, $cores CPU hogs running"

failed_runs=0
for run in $(seq "$RUNS"); do
  clone="$work/run-$run"
  git clone -q "$top" "$clone" && git -C "$clone" checkout -q "$commit" || { echo "run $run: git clone failed"; exit 2; }
  log="$work/run-$run.log"
  started=$(date +%s)
  (cd "$clone" && make -s venv PYTHON="$PYTHON" && make -s "${targets[@]}") >"$log" 2>&1
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
