"""The browser image holds the package as a wheel installs it, and runs the demo from it like any
other command: `docker run IMAGE susbench demo`, with no network (every container gets `--network
none`) and nothing mounted."""

from __future__ import annotations

import json
import time

import pytest

from susbench.container import DEFAULT_IMAGE, DockerApiRuntime
from susbench.container.runtime import ContainerSpec, ImageInfo
from susbench.core.paths import REPO_ROOT
from tests.support.container import CONTAINER_TIMEOUT_S

pytestmark = [pytest.mark.container, pytest.mark.timeout(CONTAINER_TIMEOUT_S)]

SITE = "/opt/susbench/venv/lib/python3.11/site-packages/susbench"
WHERE = "import susbench; from susbench.core.paths import DATA_ROOT; print(susbench.__file__, DATA_ROOT)"
DEMO = "susbench demo --tasks 'voltcart-*' --no-local-model --db demo.duckdb"
COUNTS = (
    "susbench query \"SELECT operator, count(*) AS episodes, count(*) FILTER (WHERE outcome = 'error') "
    'AS errors FROM episode_outcomes GROUP BY ALL ORDER BY 1" --db demo.duckdb --json'
)


def run_to_the_end(runtime: DockerApiRuntime, command: tuple[str, ...], timeout_s: float) -> str:
    """Start a container of the image with `command` and wait for it to exit; its output."""
    container_id = runtime.start(ContainerSpec(image=DEFAULT_IMAGE, command=command))
    try:
        deadline = time.monotonic() + timeout_s
        while runtime.state(container_id) in {"created", "running"} and time.monotonic() < deadline:
            time.sleep(1)
        assert runtime.state(container_id) == "exited", f"still running after {timeout_s} s"
        return runtime.logs(container_id)
    finally:
        runtime.remove(container_id)


def test_the_image_holds_the_installed_wheel_not_the_sources(
    container_runtime: DockerApiRuntime, browser_image: ImageInfo
) -> None:
    shown = run_to_the_end(container_runtime, ("python", "-c", WHERE), 120)
    assert shown.split() == [f"{SITE}/__init__.py", f"{SITE}/data"]
    assert run_to_the_end(container_runtime, ("ls", "/opt/susbench"), 120).split() == ["extension", "venv"]


def test_the_image_runs_the_demo_offline(
    container_runtime: DockerApiRuntime, browser_image: ImageInfo
) -> None:
    """`susbench demo --tasks 'voltcart-*' --no-local-model` in the image, to the end (report
    included), then the episodes it stored: each baseline on each task, none an error."""
    command = ("sh", "-c", f"{DEMO} && echo '---' && {COUNTS}")
    output = run_to_the_end(container_runtime, command, CONTAINER_TIMEOUT_S - 60)
    assert "report: demo-report/report.html" in output and "\n---\n" in output, output[-4000:]
    tasks = len(list((REPO_ROOT / "tasks").glob("voltcart-*.yaml")))
    assert json.loads(output.rsplit("\n---\n", 1)[1]) == [
        {"operator": operator, "episodes": tasks, "errors": 0} for operator in ("careful", "naive", "random")
    ]
