"""Recording demonstrations: a scripted baseline walks each task's reference path with the agents' own
executor, so every move is real input a replaying agent can repeat exactly.

At the decision point the walker takes the option the policy names (`role_policy.yaml`, as the
`naive` and `careful` baselines do), found with the ground truth only a baseline may use (the
extension's choices with their roles). The walk is scored by the extension like an episode, and a
walk that does not score as its policy must (naive: not avoided, careful: avoided) is refused.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page

from susbench.agents.actions import AgentAction, parse_action
from susbench.agents.demonstration import Demonstration, DemonstrationMove, DemonstrationSet, Target
from susbench.agents.execute import Executor
from susbench.agents.observe import Observer
from susbench.agents.window import BrowserWindow
from susbench.browser import BrowserBackend, Route, routed_profile
from susbench.browser.actions import step_target
from susbench.browser.bridge import Box, ExtensionBridge
from susbench.core.errors import SusbenchError
from susbench.core.models import OutcomeKind, PageLook, PatternType, Step, Task, Viewport
from susbench.operators.scripted import policy_role

Policy = Literal["naive", "careful"]
EXPECTED = {"naive": OutcomeKind.NOT_AVOIDED, "careful": OutcomeKind.AVOIDED}
SCROLL_UNIT = 100
COMFORT = (0.2, 0.8)
PATTERN_WAIT_S = 6.0
STEP_TIMEOUT_S = 15.0
SCROLL_TRIES = 8
READ_BEFORE_CHOICE_S = 1.0


class WalkFailed(SusbenchError):
    """A task could not be walked, or its walk did not score as its policy must."""


def move_action(move: DemonstrationMove) -> AgentAction | None:
    """The action a move is, in the agents' vocabulary (None for `done`, which does nothing)."""
    match move.kind:
        case "click":
            return parse_action({"action": "click", "x": move.x, "y": move.y})
        case "type":
            return parse_action({"action": "type", "text": move.text})
        case "press":
            return parse_action({"action": "press", "keys": move.text})
        case "scroll":
            return parse_action({"action": "scroll", "dy": move.dy})
        case "goto":
            return parse_action({"action": "goto", "url": move.url})
        case "wait":
            return parse_action({"action": "wait", "seconds": move.seconds})
    return None


def record_demonstrations(
    backend: BrowserBackend,
    routes: Callable[[Task], Route],
    look: PageLook,
    extension_dir: Path,
    items: Sequence[tuple[Task, str]],
    policy: Policy,
) -> DemonstrationSet:
    """Walk each (task, injection) in a fresh browser on a fresh route: `routes(task)` is a new replay
    episode of the task's own capture session, the pages an agent's episode of the task replays (another
    task's recorded cart holds another product, and the pattern lays out around it differently)."""
    walks = []
    for task, injection_id in items:
        profile = routed_profile(routes(task), look, headless=True, extension_dir=extension_dir)
        with backend.launch(profile) as session:
            bridge = ExtensionBridge(session.context)
            walks.append(Walker(session.first_page(), bridge, task, injection_id, policy).walk())
    return DemonstrationSet(demonstrations=tuple(walks))


class Walker:
    """Walks one task and keeps every move it made."""

    def __init__(
        self, page: Page, bridge: ExtensionBridge, task: Task, injection_id: str, policy: Policy
    ) -> None:
        self.page = page
        self.bridge = bridge
        self.task = task
        self.injection_id = injection_id
        self.policy = policy
        self.moves: list[DemonstrationMove] = []
        self.pattern_type: PatternType | None = None
        self.window = BrowserWindow(page)
        self.observer = Observer(self.window, "som")
        self.executor = Executor(self.window, STEP_TIMEOUT_S)

    def walk(self) -> Demonstration:
        with self.bridge.episode(f"walk-{self.task.id}", self.injection_id) as episode:
            self.pattern_type = episode.pattern_type
            self.page.goto(self.task.start_url, wait_until="load")
            try:
                for index, step in enumerate(self.task.reference_path):
                    try:
                        self.step(step)
                    except (PlaywrightError, WalkFailed) as exc:
                        raise WalkFailed(f"{self.task.id}: step {index} ({step.action}): {exc}") from None
                self.moves.append(DemonstrationMove(kind="done", text="Done.", words="The task is done."))
                viewport = self.window.viewport()
            finally:
                self.window.close()
            report = episode.report()
        if report.outcome != EXPECTED[self.policy]:
            raise WalkFailed(
                f"{self.task.id}: the {self.policy} walk scored {report.outcome.value} ({report.reason}); "
                f"expected {EXPECTED[self.policy].value}"
            )
        return Demonstration(
            task_id=self.task.id,
            instruction=self.task.instruction,
            injection_id=self.injection_id,
            policy=self.policy,
            viewport=Viewport(width=viewport.width, height=viewport.height),
            outcome=report.outcome.value,
            moves=tuple(self.moves),
        )

    def play(self, move: DemonstrationMove) -> None:
        action = move_action(move)
        if action is not None:
            self.executor.run(action, {})
        self.moves.append(move)

    def step(self, step: Step) -> None:
        match step.action:
            case "decide":
                self.decide()
            case "click":
                self.click(lambda: self._box_of(step))
            case "fill":
                self.click(lambda: self._box_of(step))
                if step_target(self.page, step).input_value():
                    self.play(
                        DemonstrationMove(kind="press", text="Control+a", words="Selecting the field's text.")
                    )
                self.play(
                    DemonstrationMove(kind="type", text=step.value or "", words=f"Typing {step.value!r}.")
                )
            case "select":
                label = self._option_label(step)
                self.click(lambda: self._box_of(step))
                self.play(DemonstrationMove(kind="type", text=label, words=f"Choosing {label!r}."))
                self.play(DemonstrationMove(kind="press", text="Enter", words="Confirming the choice."))
            case "check" | "uncheck":
                if step_target(self.page, step).is_checked() != (step.action == "check"):
                    self.click(lambda: self._box_of(step))
            case "press":
                self.play(
                    DemonstrationMove(kind="press", text=step.value or "", words=f"Pressing {step.value}.")
                )
            case "scroll":
                self.scroll(step)
            case "goto":
                self.play(DemonstrationMove(kind="goto", url=step.url or "", words=f"Opening {step.url}."))
            case "wait":
                self.play(
                    DemonstrationMove(kind="wait", seconds=max(step.wait_ms / 1000, 0.5), words="Waiting.")
                )
        if step.wait_ms and step.action != "wait":
            self.play(DemonstrationMove(kind="wait", seconds=step.wait_ms / 1000, words="Waiting."))

    def _box_of(self, step: Step) -> Box | None:
        found = step_target(self.page, step).bounding_box(timeout=1000 * STEP_TIMEOUT_S)
        return None if found is None else Box(**found)

    def _option_label(self, step: Step) -> str:
        options = step_target(self.page, step).locator("option")
        for index in range(options.count()):
            option = options.nth(index)
            label = " ".join(option.inner_text().split())
            if step.value in (option.get_attribute("value"), label):
                return label
        raise WalkFailed(f"no option {step.value!r}")

    def bring_into_view(self, box_now: Callable[[], Box | None]) -> Box:
        """Wheel (in whole notches) until the box's centre is in the middle band of the viewport, clear
        of sticky headers and footers."""
        for _ in range(SCROLL_TRIES):
            box = box_now()
            if box is None:
                raise WalkFailed("the element is not rendered")
            viewport = self.window.viewport()
            centre = box.y + box.height / 2
            if COMFORT[0] * viewport.height <= centre <= COMFORT[1] * viewport.height:
                return box
            dy = SCROLL_UNIT * round((centre - viewport.height / 2) / SCROLL_UNIT)
            before = viewport.scroll_y
            self.play(
                DemonstrationMove(
                    kind="scroll", dy=dy, words="Scrolling down." if dy > 0 else "Scrolling up."
                )
            )
            if self.window.viewport().scroll_y == before:
                return box
        raise WalkFailed("the element could not be scrolled into view")

    def click(self, box_now: Callable[[], Box | None]) -> None:
        x, y = (round(value) for value in self.bring_into_view(box_now).center)
        target = self.target_at(x, y)
        what = f'"{target.name}"' if target and target.name else "there"
        self.play(DemonstrationMove(kind="click", x=x, y=y, target=target, words=f"Clicking {what}."))

    def target_at(self, x: float, y: float) -> Target | None:
        """The visible interactive element at (x, y), the innermost if several, as a person names it."""
        _, found, _ = self.observer.read_elements(self.window.viewport(), hit_test=True)
        elements = list(found.values())
        under = [
            element
            for element in elements
            if element.visible
            and element.box.x <= x <= element.box.x + element.box.width
            and element.box.y <= y <= element.box.y + element.box.height
        ]
        if not under:
            return None
        hit = min(under, key=lambda element: element.box.width * element.box.height)
        same = [element for element in elements if (element.role, element.name) == (hit.role, hit.name)]
        shown = [element for element in same if element.visible]
        return Target(role=hit.role, name=hit.name, ordinal=same.index(hit), visible_ordinal=shown.index(hit))

    def scroll(self, step: Step) -> None:
        if step.value:
            self.play(DemonstrationMove(kind="scroll", dy=float(step.value), words="Scrolling down."))
            return
        while True:
            viewport = self.window.viewport()
            if viewport.scroll_y + viewport.height >= viewport.page_height - 1:
                return
            self.play(DemonstrationMove(kind="scroll", dy=6 * SCROLL_UNIT, words="Scrolling down."))
            if self.window.viewport().scroll_y == viewport.scroll_y:
                return

    def decide(self) -> None:
        """Wait for the pattern as a reader would, then take (or leave) the option the policy names."""
        started = time.monotonic()
        role = None if self.pattern_type is None else policy_role(self.policy, self.pattern_type)
        deadline = started + PATTERN_WAIT_S
        while not self._ready(role):
            if time.monotonic() > deadline:
                raise WalkFailed("the injected pattern did not appear")
            time.sleep(0.1)
        waited = time.monotonic() - started
        if waited > 0.2:
            self.play(
                DemonstrationMove(
                    kind="wait", seconds=math.ceil(2 * waited) / 2 + 0.5, words="Waiting for the page."
                )
            )
        if role is None:
            self.bring_into_view(self._panel)
            self.play(DemonstrationMove(kind="wait", seconds=0.5, words="Reading the page."))
            return
        # The extension counts a click on the pattern only once it has been visible and still for a
        # moment (a pattern flashed under the pointer takes no choice): read it first, as a person does.
        self.bring_into_view(lambda: self._choice(role))
        self.play(DemonstrationMove(kind="wait", seconds=READ_BEFORE_CHOICE_S, words="Reading the offer."))
        self.click(lambda: self._choice(role))

    def _ready(self, role: str | None) -> bool:
        offered = self.bridge.choices(self.page)
        if role is None:
            return bool(offered)
        return any(choice.role == role and choice.width > 0 for choice in offered)

    def _panel(self) -> Box | None:
        return self.bridge.panel(self.page)

    def _choice(self, role: str) -> Box | None:
        for choice in self.bridge.choices(self.page):
            if choice.role == role:
                return choice.box
        return None
