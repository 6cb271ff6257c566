"""`susbench run --browser container` end to end: the controller's workers in warm browser containers,
outcomes into DuckDB, and an image built from other catalogs refused before any episode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from susbench.browser import BrowserProfile
from susbench.container import DEFAULT_IMAGE, ContainerBackend, ContainerError, DockerApiRuntime
from susbench.container.image import LABEL_CHROMIUM
from susbench.container.runtime import ImageInfo
from susbench.results.store import Store
from tests.fixtures.container import CONTAINER_TIMEOUT_S

pytestmark = [pytest.mark.container, pytest.mark.e2e, pytest.mark.timeout(CONTAINER_TIMEOUT_S)]

# Three types whose outcomes are decided three different ways: a pop-up's close/CTA, an add-on
# still checked when the flow moves on, and the first of two buttons.
TASKS = "threadline-tee-size-s-cart,voltcart-laptop-cart,threadline-scarf-cart"
EXPECTED = {"naive": "not_avoided", "careful": "avoided"}


def susbench_run(db: Path, operator: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "susbench", "run", "--browser", "container", "--image", DEFAULT_IMAGE]
    return subprocess.run(
        [*command, "--tasks", TASKS, "--operator", operator, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=CONTAINER_TIMEOUT_S,
        check=False,
    )


def test_run_with_the_container_browser_stores_every_outcome(
    browser_image: ImageInfo, tmp_path: Path
) -> None:
    db = tmp_path / "container.duckdb"
    for operator in EXPECTED:
        result = susbench_run(db, operator)
        assert result.returncode == 0, result.stderr[-2000:]
        assert "3 episodes stored" in result.stdout, result.stdout
    with Store(db, read_only=True) as store:
        _, outcomes = store.query("SELECT operator, outcome, count(*) FROM episode_outcomes GROUP BY ALL")
        _, configs = store.query("SELECT config FROM runs")
        _, site_misses = store.query("SELECT count(*) FROM requests WHERE miss AND url LIKE '%.test/%'")
        _, carts = store.query(
            "SELECT count(*), count(*) FILTER (r.session = e.task_id) FROM requests r JOIN episodes e "
            "USING (episode_id) WHERE r.url LIKE '%.test/cart'"
        )
    assert sorted(outcomes) == [("careful", "avoided", 3), ("naive", "not_avoided", 3)]
    assert site_misses == [(0,)], "every request to a site was answered by the container's replayer"
    ((cart_pages, from_own_session),) = carts
    assert cart_pages >= 6 and from_own_session == cart_pages, "each episode replayed its task's session"
    for (config,) in configs:
        recorded = json.loads(config)
        assert (recorded["browser"], recorded["image"]) == ("container", DEFAULT_IMAGE)
        assert recorded["image_chromium"] == browser_image.labels[LABEL_CHROMIUM]
        assert recorded["image_id"] == browser_image.id


def test_an_image_with_another_extension_is_refused(
    container_runtime: DockerApiRuntime, browser_image: ImageInfo, bundled_snapshot: Path
) -> None:
    other = "0" * 64
    with (
        ContainerBackend(bundled_snapshot, runtime=container_runtime, extension_sha256=other) as backend,
        pytest.raises(
            ContainerError, match="carries an injection extension built from other catalogs"
        ) as caught,
    ):
        backend.warm(BrowserProfile())
    assert f"susbench image build --tag {DEFAULT_IMAGE}" in str(caught.value)
