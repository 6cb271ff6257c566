"""The container tests' time limit (their fixtures: tests/container/conftest.py)."""

from __future__ import annotations

# Generous: the first test also builds the image (a cached build when it already exists).
CONTAINER_TIMEOUT_S = 900
