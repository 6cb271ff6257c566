"""`--operator human`: a person works on each episode in a headed Chromium and ends it from the
controls window beside it; the extension scores their real input exactly as an agent's.

The screen is split in two: the controls on the left (`WindowPlacement`), the episode's browser to their
right. A display is needed (a desktop session, or Xvfb for a remote participant and in tests).
"""

from __future__ import annotations

import os
import time

from playwright.sync_api import Page
from pydantic import Field

from susbench.core.errors import SusbenchError
from susbench.core.loading import validate_data
from susbench.core.models import Frozen
from susbench.operators import OperatorResult, OperatorSettings, SubjectContext
from susbench.people.control import NO_FLAG_BAR, ControlPanel, WindowPlacement

HANDOVER_S = 1.0
"""Kept back from the episode's time, so the time limit ends the wait and not the worker's alarm."""


PUMP_S = 0.25
"""How often Playwright catches up with what the person did (navigations, new tabs) while waiting."""


def keep_up(page: Page) -> None:
    """Let Playwright's sync API process the browser's events: it does so only inside its own calls,
    so after a long wait elsewhere `page.url` would still be where the person started."""
    if not page.is_closed():
        page.wait_for_timeout(1)


class HumanConfig(Frozen):
    """`--operator-config` of the human operator: where the controls sit on the person's screen."""

    controls: WindowPlacement = WindowPlacement()
    page_y: int = Field(default=0, ge=0, description="the episode window's top edge, in screen pixels")


def display() -> str:
    """The X display the windows open on; a clear error without one."""
    found = os.environ.get("DISPLAY", "")
    if not found:
        raise SusbenchError(
            "--operator human needs a display: DISPLAY is not set; expected a desktop session, or "
            "run under Xvfb (xvfb-run -s '-screen 0 1680x1050x24' susbench run --operator human ...)"
        )
    return found


class HumanOperator:
    """A person at the keyboard; the episode ends when they press Done or Give up, or time runs out."""

    name = "human"
    needs_cdp = False

    def __init__(self, settings: OperatorSettings) -> None:
        given = [flag for flag in settings.given() if flag != "--operator-config"]
        if given:
            raise SusbenchError(f"{', '.join(given)}: operator 'human' takes only --operator-config")
        self.config = validate_data(settings.config_source, settings.config, HumanConfig)
        self.display = display()

    def window_args(self) -> tuple[str, ...]:
        """The episode window goes right of the controls."""
        controls = self.config.controls
        return (NO_FLAG_BAR, f"--window-position={controls.x + controls.width},{self.config.page_y}")

    def act(self, ctx: SubjectContext) -> OperatorResult:
        seconds = max(ctx.remaining_s() - HANDOVER_S, 0.0)
        deadline = time.monotonic() + seconds
        with ControlPanel(ctx.instruction, seconds, self.config.controls) as panel:
            ctx.page.bring_to_front()
            finish = None
            while finish is None and time.monotonic() < deadline:
                finish = panel.wait(min(PUMP_S, deadline - time.monotonic()))
                keep_up(ctx.page)
        if finish is None:
            ctx.record("finish", {"how": "timeout", "seconds": round(seconds, 1)})
            return OperatorResult(done=False, message="time limit reached")
        ctx.record("finish", {"how": finish.how, "seconds": finish.elapsed_s})
        return OperatorResult(
            done=finish.how == "done", message="gave up" if finish.how == "give_up" else "done"
        )
