"""The browser image: its pins and labels, who runs inside it, and what never goes into it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from susbench import __version__
from susbench.container import DEFAULT_IMAGE, ContainerError, DockerApiRuntime
from susbench.container.image import (
    LABEL_CHROMIUM,
    LABEL_FONTS,
    LABEL_VERSION,
    PINNED_PACKAGES,
    debian_sources,
    dockerfile_args,
)
from susbench.container.runtime import ContainerSpec, ImageInfo
from tests.support.cli import run_cli
from tests.support.container import CONTAINER_TIMEOUT_S

# Files that must never be in the image: CA keys (the replay CA is made per container at run
# time) and the certificate bundle the build hands to pip.
SECRETS_PROBE = r"find / -xdev \( -name '*key*.pem' -o -name 'build-ca.pem' -o -path '*replay-ca*' \) -print"


def test_dockerfile_defaults_match_the_project() -> None:
    args = dockerfile_args()
    assert args["SUSBENCH_VERSION"] == __version__
    assert args["BASE"] == "debian:bookworm-slim"
    assert all(args[arg] for arg in PINNED_PACKAGES.values())


def test_debootstrap_base_gets_security_updates() -> None:
    sources = debian_sources("bookworm")
    assert "Suites: bookworm bookworm-updates" in sources
    assert "Suites: bookworm-security" in sources


def test_no_engine_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ContainerError, match="podman system service"):
        DockerApiRuntime(f"unix://{tmp_path}/no-engine.sock")


def test_serve_without_socket_folder_is_one_clear_error(tmp_path: Path) -> None:
    result = run_cli("browser", "serve", "--socket-dir", str(tmp_path / "absent"))
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert "no such folder" in message and "Traceback" not in message


@pytest.fixture
def idle_container(container_runtime: DockerApiRuntime, browser_image: ImageInfo) -> Iterator[str]:
    """A container of the image that runs nothing of ours (so nothing is generated at run time)."""
    container_id = container_runtime.start(ContainerSpec(image=DEFAULT_IMAGE, command=("sleep", "120")))
    try:
        deadline = time.monotonic() + 30
        while container_runtime.state(container_id) != "running" and time.monotonic() < deadline:
            time.sleep(0.1)
        yield container_id
    finally:
        container_runtime.remove(container_id)


@pytest.mark.container
@pytest.mark.timeout(CONTAINER_TIMEOUT_S)
def test_labels_name_project_chromium_and_fonts(browser_image: ImageInfo) -> None:
    args = dockerfile_args()
    labels = browser_image.labels
    assert labels[LABEL_VERSION] == __version__
    assert labels[LABEL_CHROMIUM].startswith(args["CHROMIUM_VERSION"].split(".")[0])
    assert labels[LABEL_FONTS].startswith("fonts-dejavu-core=") and "fonts-liberation=" in labels[LABEL_FONTS]
    assert browser_image.size > 0


@pytest.mark.container
@pytest.mark.timeout(CONTAINER_TIMEOUT_S)
def test_runs_as_non_root_under_tini(container_runtime: DockerApiRuntime, idle_container: str) -> None:
    code, uid = container_runtime.exec(idle_container, ["id", "-u"])
    assert code == 0 and uid.strip() != "0"
    code, init = container_runtime.exec(idle_container, ["cat", "/proc/1/cmdline"])
    assert code == 0 and init.split("\0")[0] == "/usr/bin/tini"


@pytest.mark.container
@pytest.mark.timeout(CONTAINER_TIMEOUT_S)
def test_no_keys_in_the_image(container_runtime: DockerApiRuntime, idle_container: str) -> None:
    code, found = container_runtime.exec(idle_container, ["sh", "-c", SECRETS_PROBE], user="root")
    assert code == 0 and found.strip() == "", found
    code, chromium = container_runtime.exec(idle_container, ["chromium", "--version"])
    assert code == 0 and "Chromium" in chromium  # the probe ran in a real image
