"""The container tests' session fixtures: the engine, the image built from this checkout, and one
warm container on the bundled snapshot.

The tests that take them fail when neither Docker nor Podman is installed (`make engine` installs
Podman as root), and when an installed engine does not answer (`ci/podman-service.sh start`).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Playwright

from susbench.container import DEFAULT_IMAGE, ContainerBackend, DockerApiRuntime, build_image
from susbench.container.image import host_ca_bundle
from susbench.container.runtime import ImageInfo
from susbench.core.paths import SNAPSHOTS_DIR


@pytest.fixture(scope="session")
def container_runtime() -> DockerApiRuntime:
    if shutil.which("docker") is None and shutil.which("podman") is None:
        pytest.fail("neither Docker nor Podman is installed: run `make engine` (as root it installs Podman)")
    return DockerApiRuntime()


@pytest.fixture(scope="session")
def browser_image(container_runtime: DockerApiRuntime) -> ImageInfo:
    """The browser image built from this checkout through the engine's API (cached when unchanged)."""
    return build_image(container_runtime, tag=DEFAULT_IMAGE, ca_bundle=host_ca_bundle()).image


@pytest.fixture(scope="session")
def bundled_snapshot() -> Path:
    return sorted(SNAPSHOTS_DIR.glob("*.wacz"))[-1]


@pytest.fixture(scope="session")
def container_backend(
    container_runtime: DockerApiRuntime,
    browser_image: ImageInfo,
    bundled_snapshot: Path,
    web_playwright: Playwright,
) -> Iterator[ContainerBackend]:
    """One warm container for the session; every launch is a fresh browser in it."""
    with ContainerBackend(
        bundled_snapshot, image=DEFAULT_IMAGE, runtime=container_runtime, playwright=web_playwright
    ) as backend:
        yield backend
