# sidecar — every target builds or refreshes the project venv (.venv) itself.
# On a fresh machine `make demo` and `make test` are the only two commands needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
VSCODE    := editors/vscode
VSCODE_NM := $(VSCODE)/node_modules/.package-lock.json

.DEFAULT_GOAL := help
.PHONY: help venv demo test test-fast test-fast-editors test-python test-stress lint format typecheck protocol bench bench-long eval clean vsix test-vscode-unit test-vscode-e2e test-nvim nvim-install acpx-install

help: ## list the targets
	@echo "sidecar — make targets:"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## /  \1\t/' | expand -t 16

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,dev]'
	@touch $@

venv: $(STAMP) ## create or update the project venv

demo: $(STAMP) ## a scripted editor session end to end (embedded fake Gemini, or real Gemini with GEMINI_API_KEY)
	$(PY) -m sidecar.demo

test: lint typecheck test-python test-vscode-unit test-nvim test-vscode-e2e release-check ## everything: lint, types, Python suites, both editors, the release

test-fast: $(STAMP) ## the edit loop: unit tests that start no process and open no socket (20 s); `make test` before pushing
	$(PY) -m pytest -q -p no:xdist -m "not process" --hypothesis-profile=fast --durations=10 tests/unit $(PYTEST_ARGS)

# The editors' unit tests that start no server: Neovim's plugin logic and module graph on both Neovims (no fake
# Gemini is started for them), VS Code's node --test files but the two that drive a real sidecar.
VSCODE_SERVER_TESTS := roundtrip doctor
VSCODE_PURE_TESTS = $(filter-out $(VSCODE_SERVER_TESTS:%=out/test/%.test.js),\
  $(patsubst $(VSCODE)/test/%.ts,out/test/%.js,$(wildcard $(VSCODE)/test/*.test.ts)))

test-fast-editors: $(VSCODE_NM) nvim-install ## the editors' pure unit tests (Neovim plugin logic, VS Code node --test): no server, no process of ours
	SIDECAR_NVIM_SKIP_INSTALL=1 $(NVIM)/tests/run.sh test_unit test_architecture
	cd $(VSCODE) && node_modules/.bin/tsc -p . && node --test $(VSCODE_PURE_TESTS)

test-python: $(STAMP) acpx-install ## the pytest suites (two workers: most e2e time is spent waiting on processes)
	$(PY) -m pytest -n 2 --dist loadfile $(PYTEST_ARGS)

test-stress: ## the Python suites (SUITES=all: all of make test) RUNS times (default 5) on fresh clones of HEAD under CPU, fsync and process-spawn load
	RUNS=$(or $(RUNS),5) SUITES=$(or $(SUITES),python) PYTHON=$(PYTHON) tools/stress.sh

PY_SOURCES  := sidecar tests bench eval
NVIM        := editors/nvim
NVIM_NM     := $(NVIM)/node_modules/.package-lock.json
LUA_SOURCES := lua plugin tests
STYLUA      := node_modules/.bin/stylua

$(NVIM_NM): $(NVIM)/package.json $(NVIM)/package-lock.json
	cd $(NVIM) && npm ci --no-audit --no-fund
	@touch $@

lint: $(STAMP) $(VSCODE_NM) $(NVIM_NM) nvim-install ## Python (ruff check, ruff format --check), TypeScript (ESLint), Lua (StyLua --check, no require cycle)
	$(BIN)/ruff check $(PY_SOURCES)
	$(BIN)/ruff format --check $(PY_SOURCES)
	cd $(VSCODE) && npm run --silent lint
	cd $(NVIM) && $(STYLUA) --check $(LUA_SOURCES)
	SIDECAR_NVIM_SKIP_INSTALL=1 NVIM_VERSIONS=0.11 $(NVIM)/tests/run.sh test_architecture

# StyLua runs twice: 2.5 settles some long call arguments only on its second pass (the check then agrees).
format: $(STAMP) $(NVIM_NM) ## apply the formatters: ruff format (Python), StyLua (Lua)
	$(BIN)/ruff format $(PY_SOURCES)
	cd $(NVIM) && $(STYLUA) $(LUA_SOURCES) && $(STYLUA) $(LUA_SOURCES)

typecheck: $(STAMP) ## mypy --strict on sidecar/
	$(BIN)/mypy

protocol: $(STAMP) ## regenerate the editors' protocol and settings mirrors and the docs' tables from sidecar/protocol/ and the Settings struct
	$(PY) -m sidecar.export

bench: $(STAMP) ## benchmarks; writes bench/results/ and docs/performance.md
	$(PY) -m bench

bench-long: $(STAMP) ## the 200-turn session beside the reference alone (~3 min; bench/results/, not the doc)
	$(PY) -m bench --only long_session

eval: $(STAMP) ## compaction quality: planted facts through 5 rounds (fake Gemini; real model too with a key); eval/results/
	$(PY) -m eval

# ---- ACP (sidecar acp) ----
acpx-install: ## acpx (headless ACP client, npm) and the Node 24 it needs, in .cache/acpx, for the ACP tests
	tests/acp_agent/install-acpx.sh

# ---- Neovim plugin (editors/nvim) ----
nvim-install: ## Neovim 0.7.2 (apt) and 0.11 (PyPI, .cache/nvim011-venv) for the plugin tests
	PYTHON=$(PYTHON) editors/nvim/tests/install-nvim.sh

test-nvim: $(STAMP) nvim-install ## the Neovim plugin's headless tests on nvim 0.7.2 and 0.11
	SIDECAR_PYTHON=$(abspath $(PY)) SIDECAR_NVIM_SKIP_INSTALL=1 editors/nvim/tests/run.sh

# ---- VS Code extension (editors/vscode) ----
$(VSCODE_NM): $(VSCODE)/package.json $(VSCODE)/package-lock.json
	cd $(VSCODE) && npm ci --no-audit --no-fund
	@touch $@

vsix: $(VSCODE_NM) ## package the VS Code extension with the sidecar wheel it installs: editors/vscode/sidecar.vsix
	cd $(VSCODE) && npm run --silent package

test-vscode-unit: $(STAMP) $(VSCODE_NM) ## VS Code extension: node --test unit tests + protocol round trip with the real sidecar
	cd $(VSCODE) && SIDECAR_PYTHON=$(abspath $(PY)) npm test

test-vscode-e2e: $(STAMP) $(VSCODE_NM) ## VS Code extension in a real VS Code (code-server + Chromium; setup cached in .cache/vscode-e2e)
	SIDECAR_PYTHON=$(abspath $(PY)) $(VSCODE)/scripts/run-e2e.sh

# ---- Release (dist/) ----
.PHONY: release release-check
release: $(STAMP) $(VSCODE_NM) ## build dist/: the wheel and sdist (python -m build), the vsix carrying that wheel, SHA256SUMS
	PYTHON=$(abspath $(PY)) tools/release.sh

release-check: release ## dist/'s wheel in a fresh venv and its vsix in a fresh code-server profile: sidecar doctor, one chat turn each
	SIDECAR_PYTHON=$(abspath $(PY)) tools/release_check.sh

clean: ## remove the venv, caches and build output
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache dist
	rm -rf $(VSCODE)/node_modules $(VSCODE)/out $(VSCODE)/dist $(VSCODE)/*.vsix test-artifacts
