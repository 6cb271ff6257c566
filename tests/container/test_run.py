"""`susbench run --browser container` end to end: the controller's workers in warm browser containers,
outcomes into DuckDB, a bundle of such a run reproduced in a container again, and an image built from
other catalogs refused before any episode."""

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
from tests.support.container import CONTAINER_TIMEOUT_S

pytestmark = [pytest.mark.container, pytest.mark.e2e, pytest.mark.timeout(CONTAINER_TIMEOUT_S)]

# Three types whose outcomes are decided three different ways: a pop-up's close/CTA, an add-on
# still checked when the flow moves on, and the first of two buttons.
TASKS = "threadline-tee-size-s-cart,voltcart-laptop-cart,threadline-scarf-cart"
EXPECTED = {"naive": "not_avoided", "careful": "avoided"}


def susbench(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "susbench", *arguments],
        capture_output=True,
        text=True,
        timeout=CONTAINER_TIMEOUT_S,
        check=False,
    )


def susbench_run(db: Path, operator: str) -> subprocess.CompletedProcess[str]:
    container = ("--browser", "container", "--image", DEFAULT_IMAGE)
    return susbench("run", *container, "--tasks", TASKS, "--operator", operator, "--db", str(db))


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


def test_a_bundle_of_a_container_run_reproduces_in_a_container(
    browser_image: ImageInfo, bundled_snapshot: Path, tmp_path: Path
) -> None:
    """Exported and re-run through the command line: the re-run's episodes ran in the same image, so
    under the bundle run's identity and id, and every outcome matches the stored one."""
    db, bundle, rerun = tmp_path / "container.duckdb", tmp_path / "bundle", tmp_path / "rerun.duckdb"
    ran = susbench_run(db, "careful")
    assert ran.returncode == 0, ran.stderr[-2000:]
    exported = susbench("results", "export", "--parquet", str(bundle), "--db", str(db))
    assert exported.returncode == 0, exported.stderr[-2000:]
    again = ("--snapshot", str(bundled_snapshot), "--db", str(rerun), "--parallel", "1", "--json")
    reproduced = susbench("reproduce", str(bundle), *again)
    assert reproduced.returncode == 0, (reproduced.stdout + reproduced.stderr)[-3000:]
    result = json.loads(reproduced.stdout)
    (check,) = result["runs"]
    assert result["reproduced"] and (result["matched"], result["checked"]) == (3, 3)
    assert check["rerun_id"] == check["run_id"] and check["changed_inputs"] == [] and not result["forced"]
    with Store(rerun, read_only=True) as store:
        _, runs = store.query("SELECT run_id, config, versions FROM runs")
        _, episodes = store.query("SELECT count(*) FROM episodes")
        _, site_misses = store.query("SELECT count(*) FROM requests WHERE miss AND url LIKE '%.test/%'")
    ((run_id, config, versions),) = runs
    recorded = json.loads(config)
    assert run_id == check["run_id"] and episodes == [(3,)] and site_misses == [(0,)]
    assert (recorded["browser"], recorded["image"], recorded["image_id"]) == (
        "container",
        DEFAULT_IMAGE,
        browser_image.id,
    )
    chromium = browser_image.labels[LABEL_CHROMIUM]
    assert recorded["image_chromium"] == json.loads(versions)["chromium"] == chromium  # not the host's


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
