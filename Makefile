# sidecar — every target builds or refreshes the project venv (.venv) itself.
# On a fresh machine `make demo` and `make test` are the only two commands needed.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help venv demo test test-python lint typecheck bench clean

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

test: lint typecheck test-python ## everything: lint, types, unit, e2e and reliability tests

test-python: $(STAMP) ## the pytest suites
	$(PY) -m pytest $(PYTEST_ARGS)

lint: $(STAMP) ## ruff
	$(BIN)/ruff check sidecar tests bench

typecheck: $(STAMP) ## mypy --strict on sidecar/
	$(BIN)/mypy

bench: $(STAMP) ## benchmarks; writes bench/results/ and docs/performance.md
	$(PY) -m bench

clean: ## remove the venv and caches
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache
