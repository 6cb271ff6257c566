"""Same pixels: the container draws a replayed page identically every time, and like the host does."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from playwright.sync_api import Page, Playwright

from susbench.browser import BrowserProfile, LocalBackend
from susbench.container import ContainerBackend, DockerApiRuntime
from susbench.container.image import LABEL_CHROMIUM, LABEL_FONTS, PINNED_PACKAGES, host_package_versions
from susbench.container.runtime import ImageInfo
from susbench.replayer.direct import DirectReplayServer
from tests.support.container import CONTAINER_TIMEOUT_S

pytestmark = [pytest.mark.container, pytest.mark.e2e, pytest.mark.timeout(CONTAINER_TIMEOUT_S)]

PAGE = "https://bazaarly.test/"
# Chromium itself now and then antialiases a rounded corner one level differently from one page load
# to the next (seen on the host alone: 4 of 1,024,000 pixels, about one load in ten under load), so
# host vs container is measured and reported, and held to this share of pixels.
SAME_BUILD_TOLERANCE = 1e-4


SETTLE = "Promise.all([document.fonts.ready, ...[...document.images].map((image) => image.decode())])"
MAX_SHOTS = 5


def _render(page: Page) -> tuple[str, bytes]:
    """The page's DOM hash and a screenshot, once fonts and images are decoded and two consecutive
    screenshots agree (as Playwright's own screenshot assertions wait for a stable frame)."""
    page.goto(PAGE, wait_until="load")
    page.wait_for_load_state("networkidle")
    page.evaluate(f"{SETTLE}.then(() => true, () => true)")
    dom = hashlib.sha256(page.content().encode()).hexdigest()
    shot = page.screenshot(animations="disabled", caret="hide")
    for _ in range(MAX_SHOTS):
        previous, shot = shot, page.screenshot(animations="disabled", caret="hide")
        if shot == previous:
            break
    return dom, shot


def different_pixels(first: bytes, second: bytes) -> float:
    """Share of pixels that differ between two PNG screenshots of the same size."""
    a, b = (Image.open(io.BytesIO(png)).convert("RGB") for png in (first, second))
    assert a.size == b.size, (a.size, b.size)
    mask = ImageChops.difference(a, b).convert("L").point(lambda value: 255 if value else 0)
    return mask.histogram()[255] / (a.size[0] * a.size[1])


def _host_matches_image(image: ImageInfo) -> bool:
    """The host has Debian's Chromium and fonts at exactly the versions the image was built with."""
    host = host_package_versions(list(PINNED_PACKAGES))
    fonts = " ".join(f"{name}={host.get(name)}" for name in ("fonts-dejavu-core", "fonts-liberation"))
    return host.get("chromium") == image.labels.get(LABEL_CHROMIUM) and fonts == image.labels.get(LABEL_FONTS)


@pytest.fixture(scope="module")
def container_renders(
    container_runtime: DockerApiRuntime,
    browser_image: ImageInfo,
    bundled_snapshot: Path,
    web_playwright: Playwright,
) -> list[tuple[str, bytes]]:
    """The page rendered in two separate containers (one each)."""
    renders = []
    with ContainerBackend(
        bundled_snapshot,
        image=browser_image.tags[0],
        runtime=container_runtime,
        playwright=web_playwright,
        fresh_container=True,
    ) as backend:
        for _ in range(2):
            with backend.launch(BrowserProfile()) as session:
                renders.append(_render(session.context.pages[0]))
    return renders


def test_two_container_runs_are_identical(container_renders: list[tuple[str, bytes]]) -> None:
    (first_dom, first_png), (second_dom, second_png) = container_renders
    assert first_dom == second_dom
    assert first_png == second_png
    assert len(first_png) > 10_000


def test_container_and_host_draw_the_same_pixels(
    container_renders: list[tuple[str, bytes]],
    browser_image: ImageInfo,
    bundled_snapshot: Path,
    web_playwright: Playwright,
    extension_dir: Path,
    record_property: pytest.RecordProperty,
) -> None:
    with DirectReplayServer(bundled_snapshot) as server:
        profile = BrowserProfile(
            host_resolver_rules=server.host_resolver_rules,
            spki_pins=(server.spki,),
            extension_dir=extension_dir,
        )
        with LocalBackend(web_playwright).launch(profile) as session:
            host_dom, host_png = _render(session.context.pages[0])
    container_dom, container_png = container_renders[0]
    fraction = different_pixels(container_png, host_png)
    record_property("container_vs_host_different_pixels", fraction)
    print(f"container vs host: {fraction:.6%} of pixels differ")
    assert host_dom == container_dom
    if _host_matches_image(browser_image):
        assert fraction < SAME_BUILD_TOLERANCE, "same Chromium and fonts on both sides, yet the pixels differ"
    else:
        assert fraction < 0.05, f"{fraction:.2%} of pixels differ (host Chromium or fonts differ)"
