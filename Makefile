# MemAudit build / test entry points.  `make test` is what CI runs (via .ci/run).
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON_BOOT ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV        := .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.stamp
PORT        ?= 8501
PYTEST_ARGS ?=
CHROMIUM    := /usr/bin/chromium
LINT_PATHS  := $(wildcard memaudit_core memaudit_ui tests app.py pages bench)
BENCHES     := $(sort $(wildcard bench/bench_*.py))
# Re-install when memaudit_core first appears (an editable install made before it
# existed would not map the package).
INSTALL_DEPS := requirements.txt requirements-dev.txt pyproject.toml $(wildcard memaudit_core/__init__.py)

.PHONY: help setup chromium run test lint fmt bench

help:
	@echo "make setup     create .venv and install requirements-dev.txt + the package (idempotent)"
	@echo "make chromium  apt-get install Debian chromium if /usr/bin/chromium is missing"
	@echo "make run       streamlit app on PORT=$(PORT) (python -m memaudit_ui.serve)"
	@echo "make test      full pytest suite, browser tests included (PYTEST_ARGS=... to narrow)"
	@echo "make lint      ruff check + ruff format --check"
	@echo "make fmt       ruff format + ruff check --fix"
	@echo "make bench     run every bench/bench_*.py at its defaults (well over 30 min; see README)"

setup: $(STAMP)

$(VENV)/pyvenv.cfg:
	$(PYTHON_BOOT) -m venv $(VENV)

$(STAMP): $(VENV)/pyvenv.cfg $(INSTALL_DEPS)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -r requirements-dev.txt
	$(PY) -m pip install -e .
	touch $(STAMP)

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		SUDO=""; if [ "$$(id -u)" != "0" ]; then SUDO="sudo"; fi; \
		echo "Installing Debian chromium ..."; \
		$$SUDO apt-get update && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	fi
	@$(CHROMIUM) --version

run: setup
	$(PY) -m memaudit_ui.serve --server.headless true --browser.gatherUsageStats false \
		--server.port $(PORT)

# Writes pytest's own exit code to test-output/pytest-exit-code so .ci/run can
# tell "no tests collected" (5) from failures; make itself only says "Error N".
test: setup chromium
	@mkdir -p test-output; rm -f test-output/pytest-exit-code; \
	rc=0; $(PY) -m pytest $(PYTEST_ARGS) || rc=$$?; \
	echo $$rc > test-output/pytest-exit-code; \
	if [ $$rc -eq 5 ]; then echo "make test: ERROR: pytest collected no tests (exit 5)" >&2; fi; \
	exit $$rc

lint: setup
	$(PY) -m ruff check $(LINT_PATHS)
	$(PY) -m ruff format --check $(LINT_PATHS)

fmt: setup
	$(PY) -m ruff format $(LINT_PATHS)
	$(PY) -m ruff check --fix $(LINT_PATHS)

bench: setup
	@if [ -z "$(BENCHES)" ]; then echo "no bench/bench_*.py scripts"; exit 0; fi; \
	failed=""; \
	for f in $(BENCHES); do \
		echo "=== $$f"; \
		$(PY) $$f || failed="$$failed $$f"; \
	done; \
	if [ -n "$$failed" ]; then echo "bench FAILED:$$failed" >&2; exit 1; fi
