"""No browser container outlives its host: a killed host process leaves a stopped container only."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from susbench.container import DockerApiRuntime
from susbench.container.runtime import ImageInfo
from tests.support.container import CONTAINER_TIMEOUT_S

pytestmark = [pytest.mark.container, pytest.mark.e2e, pytest.mark.timeout(CONTAINER_TIMEOUT_S)]

HOST = """
import sys, time
from pathlib import Path
from susbench.container import DEFAULT_IMAGE, BrowserContainer, DockerApiRuntime
with BrowserContainer(DockerApiRuntime(), DEFAULT_IMAGE, Path(sys.argv[1]).resolve(), 120) as container:
    print(container.id, flush=True)
    time.sleep(600)
"""


def test_container_stops_when_its_host_is_killed(
    container_runtime: DockerApiRuntime, browser_image: ImageInfo, bundled_snapshot: Path
) -> None:
    host = subprocess.Popen(
        [sys.executable, "-c", HOST, str(bundled_snapshot)], stdout=subprocess.PIPE, text=True
    )
    assert host.stdout is not None
    container_id = host.stdout.readline().strip()
    try:
        assert container_id, "the host process did not start a container"
        assert container_runtime.state(container_id) == "running"
        host.send_signal(signal.SIGKILL)
        host.wait(10)
        deadline = time.monotonic() + 30
        while container_runtime.state(container_id) == "running" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert container_runtime.state(container_id) == "exited"
        assert '"stopped": true' in container_runtime.logs(container_id)
    finally:
        host.kill()
        if container_id:
            container_runtime.remove(container_id)
