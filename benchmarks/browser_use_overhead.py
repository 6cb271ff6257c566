"""What our harness adds around Browser Use: the `browser-use` operator vs Browser Use alone, driving the
same Chromium against the same local model server (a benchmark, not a test).

One Chromium with the extension and a CDP endpoint on the bundled snapshot (direct replay); a local
chat-completions server plays careful demonstrations of the type tasks. Each episode starts the
same way (a fresh replay episode, the extension told, the task's start page loaded), then either
`BrowserUseOperator.act` (our runner in Browser Use's virtualenv: hooks, timing, screenshots saved,
step rows) or `browser_use_alone.py` (stock Browser Use, same settings) runs it; the two take turns
episode by episode so they share the machine's load alike. Both include starting Python and
importing Browser Use. Reported: wall time per episode and per Browser Use step, median and p90,
and the ratio.

    .venv/bin/python benchmarks/browser_use_overhead.py [--repeats 2] [--out benchmarks/results/FILE.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from playwright.sync_api import sync_playwright

from susbench.agents.browser_use_env import installed_python
from susbench.agents.browser_use_operator import BrowserUseOperator
from susbench.agents.servers import ScriptedPolicy, model_server
from susbench.agents.walker import record_demonstrations
from susbench.browser import LocalBackend, routed_profile
from susbench.browser.bridge import ExtensionBridge
from susbench.catalog.injections import build_extension, load_injections
from susbench.catalog.tasks import load_tasks
from susbench.controller import default_snapshot
from susbench.controller.traffic import ReplayTraffic
from susbench.core.models import Task
from susbench.operators import OperatorSettings
from susbench.operators.base import Limits, SubjectContext
from susbench.records.trace import StepRecord
from susbench.replayer.factory import replay_server
from susbench.snapshot import Snapshot

TASKS = ("voltcart-mouse-cart", "threadline-tee-size-s-cart", "taskflow-enterprise-cart")
KEY_VARIABLE = "BENCH_MODEL_KEY"
ALONE = Path(__file__).with_name("browser_use_alone.py")


@dataclass
class Samples:
    episode_s: list[float] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)

    @property
    def per_step_s(self) -> list[float]:
        return [seconds / max(1, steps) for seconds, steps in zip(self.episode_s, self.steps, strict=True)]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def alone(python: Path, job: dict[str, object]) -> int:
    done = subprocess.run(
        [str(python), str(ALONE)], input=json.dumps(job) + "\n", capture_output=True, text=True, check=True
    )
    return int(json.loads(done.stdout.strip().splitlines()[-1])["steps"])


def measure(repeats: int, chosen: tuple[str, ...]) -> dict[str, Samples]:
    os.environ[KEY_VARIABLE] = "sk-bench-local"
    snapshot = default_snapshot()
    with Snapshot.open(snapshot) as opened:
        look = opened.manifest.look
    injections = {injection.id: injection for injection in load_injections()}
    tasks = {task.id: task for task in load_tasks()}
    extension = build_extension(injections.values())
    samples = {"harness": Samples(), "alone": Samples()}
    python = installed_python()
    with replay_server(snapshot, "direct") as server, sync_playwright() as playwright:

        def task_route(task: Task) -> ReplayTraffic:
            return ReplayTraffic(server, task.capture_plan().id)

        backend = LocalBackend(playwright)
        items = [(tasks[task_id], tasks[task_id].injections[0]) for task_id in chosen]
        demonstrations = record_demonstrations(backend, task_route, look, extension, items, "careful")
        profile = routed_profile(server, look, extension_dir=extension, cdp=True)
        with (
            model_server(ScriptedPolicy(demonstrations)) as model,
            backend.launch(profile) as session,
            tempfile.TemporaryDirectory(prefix="bu-bench-") as traces,
        ):
            settings = OperatorSettings(
                model="scripted-bench", base_url=model.openai_base_url, config={"api_key_env": KEY_VARIABLE}
            )
            bridge = ExtensionBridge(session.context)
            page = session.first_page()
            operator = BrowserUseOperator(settings)
            for repeat in range(repeats):
                for number, task_id in enumerate(chosen):
                    order = ("harness", "alone") if (repeat + number) % 2 == 0 else ("alone", "harness")
                    for mode in order:
                        server.new_episode()
                        with bridge.episode(f"bench-{mode}-{repeat}-{task_id}", tasks[task_id].injections[0]):
                            page.goto(tasks[task_id].start_url, wait_until="load")
                            ctx = SubjectContext(
                                instruction=tasks[task_id].instruction,
                                page=page,
                                cdp_endpoint=session.cdp_endpoint,
                                limits=Limits(max_steps=20, max_seconds=300),
                                record=lambda kind, detail: None,
                                trace_dir=Path(traces) / f"{mode}-{repeat}-{task_id}",
                                record_step=_keep,
                            )
                            started = time.perf_counter()
                            steps = (
                                operator.act(ctx).steps
                                if mode == "harness"
                                else alone(python, operator.job(ctx))
                            )
                            samples[mode].episode_s.append(time.perf_counter() - started)
                            samples[mode].steps.append(steps)
    return samples


def _keep(step: StepRecord) -> None:
    """The harness stores each step; here it is built and dropped (the database is not measured)."""


def report(samples: dict[str, Samples], repeats: int, chosen: tuple[str, ...], load: tuple[str, str]) -> str:
    lines = [
        f"# Browser Use: our harness vs Browser Use alone ({date.today().isoformat()})",
        "",
        f"`benchmarks/browser_use_overhead.py --repeats {repeats}`: tasks {', '.join(chosen)}; one Chromium "
        "with the extension (CDP), direct replay, a local scripted chat-completions server; the two "
        "take turns episode by episode. Both include starting Python and importing Browser Use.",
        f"Load average (1, 5, 15 min) before: {load[0]}; after: {load[1]} (2 cores, shared: noisy).",
        "",
        "| | episodes | steps (total) | episode median / p90 s | per step median / p90 s |",
        "|---|---|---|---|---|",
    ]
    for mode, label in (("alone", "Browser Use alone"), ("harness", "`--operator browser-use`")):
        taken = samples[mode]
        lines.append(
            f"| {label} | {len(taken.episode_s)} | {sum(taken.steps)} | "
            f"{statistics.median(taken.episode_s):.2f} / {percentile(taken.episode_s, 0.9):.2f} | "
            f"{statistics.median(taken.per_step_s):.2f} / {percentile(taken.per_step_s, 0.9):.2f} |"
        )
    ratio = statistics.median(samples["harness"].per_step_s) / statistics.median(samples["alone"].per_step_s)
    lines += ["", f"Ratio, per step (median): harness / alone = {ratio:.2f}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2, help="episodes per task and mode")
    parser.add_argument(
        "--tasks", type=int, default=len(TASKS), help=f"the first N of its tasks (default: all {len(TASKS)})"
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this Markdown file")
    args = parser.parse_args()
    before = " ".join(f"{value:.1f}" for value in os.getloadavg())
    samples = measure(args.repeats, TASKS[: args.tasks])
    after = " ".join(f"{value:.1f}" for value in os.getloadavg())
    text = report(samples, args.repeats, TASKS[: args.tasks], (before, after))
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
