"""Agent harness overhead per step, without the model: observation capture plus action execution,
per observation kind, and the bytes each step sends to the model (a benchmark, not a test).

One Chromium with the extension on the bundled snapshot (direct replay). On each type task's start
page (its injection drawn) the three kinds take turns, step by step, so they share the machine's
load alike. A step is an observation plus one action: a 300 px wheel scroll (down, then back up),
which waits for the scroll to settle. A click on a text field (no navigation) is timed apart: it
includes the fixed wait for a navigation the input might start. Bytes: the user message
`openai-chat` would send with that observation (text, and the image as a data URL).

    .venv/bin/python benchmarks/agent_overhead.py [--steps 6] [--out benchmarks/results/FILE.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from datetime import date
from pathlib import Path

from playwright.sync_api import sync_playwright

from susbench.agents.actions import AgentAction, Click, Scroll
from susbench.agents.execute import Executor
from susbench.agents.observe import Element, Observation, Observer
from susbench.agents.openai_chat import ChatConversation, OpenAIChatOperator
from susbench.agents.window import BrowserWindow
from susbench.browser import LocalBackend, routed_profile
from susbench.browser.bridge import ExtensionBridge
from susbench.catalog.injections import build_extension, load_injections
from susbench.catalog.tasks import load_tasks
from susbench.controller import default_snapshot
from susbench.operators import OperatorSettings
from susbench.replayer.factory import replay_server
from susbench.snapshot import Snapshot

KINDS = ("screenshot", "som", "axtree")
GOALS_MS = {"screenshot": 150, "som": 400, "axtree": 400}
TASKS = (
    "voltcart-mouse-cart",
    "taskflow-ai-addon-cart",
    "voltcart-laptop-cart",
    "threadline-tee-size-s-cart",
    "taskflow-enterprise-cart",
    "threadline-scarf-cart",
    "bazaarly-blanket-cart",
    "taskflow-storage-checkout",
    "voltcart-charger-checkout",
)


class Samples:
    def __init__(self) -> None:
        self.observe: list[float] = []
        self.act: list[float] = []
        self.message_bytes: list[int] = []

    @property
    def step(self) -> list[float]:
        return [observe + act for observe, act in zip(self.observe, self.act, strict=True)]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def message_bytes(kind: str, observation: Observation) -> int:
    """The user message openai-chat builds for this observation, as the JSON it sends."""
    os.environ.setdefault("OPENAI_API_KEY", "unused-by-the-benchmark")
    operator = OpenAIChatOperator(OperatorSettings(model="m", observation=kind))  # type: ignore[arg-type]
    conversation = ChatConversation(operator, "the task", observation)
    conversation.prepare(observation, [])
    return len(json.dumps({"role": "user", "content": conversation.pending[-1]["content"]}).encode())


def timed(executor: Executor, action: AgentAction, elements: dict[int, Element]) -> float:
    """Milliseconds to carry out one action."""
    started = time.perf_counter()
    executor.run(action, elements)
    return 1000 * (time.perf_counter() - started)


def measure(steps: int) -> tuple[dict[str, Samples], list[float]]:
    snapshot = default_snapshot()
    with Snapshot.open(snapshot) as opened:
        look = opened.manifest.look
    injections = {injection.id: injection for injection in load_injections()}
    tasks = {task.id: task for task in load_tasks()}
    samples = {kind: Samples() for kind in KINDS}
    clicks: list[float] = []
    with replay_server(snapshot, "direct") as server, sync_playwright() as playwright:
        profile = routed_profile(server, look, extension_dir=build_extension(injections.values()))
        with LocalBackend(playwright).launch(profile) as session:
            bridge = ExtensionBridge(session.context)
            page = session.first_page()
            for task_id in TASKS:
                server.new_episode()
                with bridge.episode(f"bench-{task_id}", tasks[task_id].injections[0]):
                    page.goto(tasks[task_id].start_url, wait_until="load")
                    window = BrowserWindow(page)
                    executor = Executor(window, timeout_s=15)
                    observers = {kind: Observer(window, kind) for kind in KINDS}
                    observers["screenshot"].observe()  # the tab's CDP session opens once, before timing
                    for step in range(steps):
                        for kind in KINDS:
                            observation = observers[kind].observe()
                            samples[kind].observe.append(observation.observe_ms)
                            samples[kind].message_bytes.append(message_bytes(kind, observation))
                            scroll = Scroll(dy=300 if step % 2 == 0 else -300)
                            samples[kind].act.append(timed(executor, scroll, observation.elements))
                    listed = observers["som"].observe().elements
                    field = next(
                        (e for e in listed.values() if e.visible and e.role in ("textbox", "searchbox")), None
                    )
                    if field is not None:
                        clicks.append(timed(executor, Click(element=field.id), listed))
                    window.close()
    return samples, clicks


def report(samples: dict[str, Samples], clicks: list[float], steps: int, load: tuple[str, str]) -> str:
    lines = [
        f"# Agent harness overhead per step ({date.today().isoformat()})",
        "",
        f"`benchmarks/agent_overhead.py --steps {steps}`: {len(TASKS)} task pages of the bundled "
        "snapshot, one Chromium with the extension, direct replay; the kinds take turns step by step. "
        "A step = observation + a 300 px wheel scroll (waiting for it to settle); no model.",
        f"Load average (1, 5, 15 min) before: {load[0]}; after: {load[1]} "
        "(2 cores, shared: figures are noisy).",
        "",
        "| observation | steps | observe median / p90 ms | action median / p90 ms | step median / p90 ms "
        "| goal | bytes to the model per step (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in KINDS:
        taken = samples[kind]
        columns = [
            kind,
            str(len(taken.step)),
            *(
                f"{statistics.median(values):.0f} / {percentile(values, 0.9):.0f}"
                for values in (taken.observe, taken.act, taken.step)
            ),
            f"≤ {GOALS_MS[kind]}",
            f"{statistics.median(taken.message_bytes) / 1024:.0f} KiB",
        ]
        lines.append("| " + " | ".join(columns) + " |")
    if clicks:
        lines += [
            "",
            f"A click on element N (a text field; no navigation): median {statistics.median(clicks):.0f} ms, "
            f"p90 {percentile(clicks, 0.9):.0f} ms over {len(clicks)} clicks; it includes the fixed "
            "150 ms wait for a navigation the input may start.",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="steps per kind and page")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this Markdown file")
    args = parser.parse_args()
    before = " ".join(f"{value:.1f}" for value in os.getloadavg())
    samples, clicks = measure(args.steps)
    after = " ".join(f"{value:.1f}" for value in os.getloadavg())
    text = report(samples, clicks, args.steps, (before, after))
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
