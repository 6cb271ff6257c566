"""Checking a draft as a reviewer would before reading it: is it a valid injection, do its anchors
exist on the page, does the real extension draw it there, and what does it look like in place."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from pydantic import Field

from susbench.browser import LocalBackend, replay_profile
from susbench.browser.bridge import ExtensionBridge
from susbench.browser.semantic import IsolatedWorld
from susbench.catalog.injections import build_extension
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen, Injection
from susbench.preview.injection_preview import shoot_in_place
from susbench.replayer.factory import replay_server

COUNT_JS = """(selector) => { try { return document.querySelectorAll(selector).length; } catch (error) {
  return -1; } }"""


class DraftCheck(Frozen):
    """What the check found: problems in the researcher's terms, and the preview if one was drawn."""

    anchors: dict[str, int] = Field(default_factory=dict, description="CSS anchor -> elements it matches")
    injected: bool = False
    preview: str | None = Field(default=None, description="file name of the screenshot in place")
    problems: tuple[str, ...] = ()


def anchor_problems(counts: dict[str, int]) -> list[str]:
    problems = []
    for selector, count in counts.items():
        if count < 0:
            problems.append(f"anchor {selector!r} is not a valid CSS selector")
        elif count == 0:
            problems.append(f"anchor {selector!r} matches no element on the page")
    if counts and all(count <= 0 for count in counts.values()):
        problems.append("no anchor finds its place, so the pattern cannot be drawn")
    return problems


def check_on_page(drafts: Sequence[tuple[Injection, Path]], snapshot: Path, url: str) -> list[DraftCheck]:
    """Draw each draft alone with the real extension on `url` replayed from `snapshot` (one browser for
    all of them), keeping a preview in its folder."""
    extension = build_extension([injection for injection, _ in drafts])
    with (
        replay_server(snapshot, "direct") as server,
        LocalBackend().launch(
            replay_profile(server).model_copy(update={"extension_dir": extension})
        ) as session,
    ):
        bridge = ExtensionBridge(session.context)
        checks = []
        for injection, folder in drafts:
            server.new_episode()
            checks.append(_check_one(session.context.new_page(), bridge, injection, url, folder))
    return checks


def _check_one(
    page: Page, bridge: ExtensionBridge, injection: Injection, url: str, folder: Path
) -> DraftCheck:
    bridge.start_episode(f"draft-{injection.id}", injection.id)
    try:
        page.goto(url, wait_until="domcontentloaded")
    except PlaywrightError as exc:
        return DraftCheck(problems=(f"{url}: the snapshot does not replay it ({exc.message})",))
    world = IsolatedWorld(page, "susbench-draft-check")
    try:
        selectors = [anchor.css for anchor in injection.page.anchors if anchor.css]
        counts = {selector: int(world.call(f"({COUNT_JS})", selector)) for selector in selectors}
    finally:
        world.close()
    problems = anchor_problems(counts)
    preview: str | None = f"preview-{injection.id}.png"
    try:
        shoot_in_place(page, bridge, injection, folder / preview)
    except SusbenchError as exc:
        problems.append(f"the extension drew nothing: {exc}")
        preview = None
    bridge.finish()
    page.close()
    return DraftCheck(anchors=counts, injected=preview is not None, preview=preview, problems=tuple(problems))


def write_check(check: DraftCheck, folder: Path) -> None:
    (folder / "check.json").write_text(json.dumps(check.model_dump(mode="json"), indent=1), encoding="utf-8")
