"""What the BrowserGym path costs per step against our own operator on the same tasks (a benchmark,
not a test).

The same local scripted chat-completions server plays careful demonstrations of two type tasks to
both: our `openai-chat` operator (AXTree observation, `susbench run` in this process) and the
BrowserGym path (`susbench_browsergym.agent.ChatModelAgent` through `gymnasium.make` in BrowserGym's
virtualenv, each reset starting `susbench run --operator browsergym:bench`). The two take turns task
by task so they share the machine's load alike. Per step: the operator's span in the stored events
(`ready` to `stopped`) over its steps, for both; per episode: the whole wall time as its caller saw
it (BrowserGym's includes starting `susbench run` and its chat window).

    PYTHONPATH=. .venv/bin/python benchmarks/browsergym_overhead.py [--repeats 2] [--out FILE.md]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks., tests.

from susbench.agents.servers import ScriptedPolicy, model_server
from susbench.agents.walker import record_demonstrations
from susbench.browser import LocalBackend
from susbench.browsergym.environment import installed_python
from susbench.catalog.injections import build_extension, load_injections
from susbench.catalog.tasks import load_tasks
from susbench.controller import RunOptions, default_snapshot, run_benchmark
from susbench.controller.traffic import ReplayTraffic
from susbench.core.models import Task
from susbench.operators import OperatorSettings
from susbench.replayer.factory import replay_server
from susbench.results.store import Store
from susbench.snapshot import Snapshot
from tests.support.browsergym import Driver

TASKS = ("threadline-scarf-cart", "bazaarly-blanket-cart")
KEY_VARIABLE = "BENCH_MODEL_KEY"
MODES = {"ours": "`--operator openai-chat` (axtree)", "browsergym": "BrowserGym agent via `gymnasium.make`"}


@dataclass
class Samples:
    episode_s: list[float] = field(default_factory=list)
    acting_s: list[float] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)

    @property
    def per_step_s(self) -> list[float]:
        return [seconds / max(1, steps) for seconds, steps in zip(self.acting_s, self.steps, strict=True)]


def acting(db: Path, episode_id: str | None = None) -> tuple[float, int]:
    """The operator's span (`ready` to `stopped`) and its steps, for one stored episode."""
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT e.episode_id,"
            " max(e.ts_ms) FILTER (e.kind = 'stopped') - max(e.ts_ms) FILTER (e.kind = 'ready'),"
            " (SELECT count(*) FROM steps s WHERE s.episode_id = e.episode_id) FROM events e GROUP BY 1"
        )
    row = next(row for row in rows if episode_id in (None, row[0]))
    return row[1] / 1000, int(row[2])


def measure(repeats: int, chosen: tuple[str, ...], folder: Path) -> dict[str, Samples]:
    os.environ[KEY_VARIABLE] = "sk-bench-local"
    snapshot = default_snapshot()
    with Snapshot.open(snapshot) as opened:
        look = opened.manifest.look
    injections = {injection.id: injection for injection in load_injections()}
    tasks = {task.id: task for task in load_tasks()}
    with replay_server(snapshot, "direct") as server, sync_playwright() as playwright:

        def task_route(task: Task) -> ReplayTraffic:
            return ReplayTraffic(server, task.capture_plan().id)

        items = [(tasks[task_id], tasks[task_id].injections[0]) for task_id in chosen]
        extension = build_extension(injections.values())
        demonstrations = record_demonstrations(
            LocalBackend(playwright), task_route, look, extension, items, "careful"
        )
    samples = {mode: Samples() for mode in MODES}
    driver = Driver(installed_python())
    try:
        with model_server(ScriptedPolicy(demonstrations), api_key=os.environ[KEY_VARIABLE]) as model:
            for repeat in range(repeats):
                for number, task_id in enumerate(chosen):
                    order = ("ours", "browsergym") if (repeat + number) % 2 == 0 else ("browsergym", "ours")
                    for mode in order:
                        db = folder / f"{mode}-{repeat}-{task_id}.duckdb"
                        started = time.perf_counter()
                        if mode == "ours":
                            settings = OperatorSettings(
                                model="scripted-bench",
                                base_url=model.openai_base_url,
                                observation="axtree",
                                config={"api_key_env": KEY_VARIABLE},
                            )
                            run_benchmark(
                                RunOptions(
                                    operator="openai-chat", operator_settings=settings, tasks=task_id, db=db
                                )
                            )
                            episode_id = None
                        else:
                            episode_id = driver.call(
                                "agent",
                                task=task_id,
                                db=str(db),
                                agent="bench",
                                base_url=model.openai_base_url,
                                model="scripted-bench",
                                api_key_env=KEY_VARIABLE,
                                max_steps=20,
                            )["episode_id"]
                        samples[mode].episode_s.append(time.perf_counter() - started)
                        span, steps = acting(db, episode_id)
                        samples[mode].acting_s.append(span)
                        samples[mode].steps.append(steps)
    finally:
        driver.stop()
    return samples


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def report(samples: dict[str, Samples], repeats: int, chosen: tuple[str, ...], load: tuple[str, str]) -> str:
    lines = [
        f"# BrowserGym path vs our own operator ({date.today().isoformat()})",
        "",
        f"`benchmarks/browsergym_overhead.py --repeats {repeats}`: tasks {', '.join(chosen)}, careful "
        "demonstrations played by one local scripted chat-completions server to both; they take turns.",
        f"Load average (1, 5, 15 min) before: {load[0]}; after: {load[1]} (2 cores, shared: noisy).",
        "",
        "| | episodes | steps (total) | episode wall median s | per step (ready to stopped) median / p90 s |",
        "|---|---|---|---|---|",
    ]
    for mode, label in MODES.items():
        taken = samples[mode]
        lines.append(
            f"| {label} | {len(taken.episode_s)} | {sum(taken.steps)} | "
            f"{statistics.median(taken.episode_s):.1f} | "
            f"{statistics.median(taken.per_step_s):.2f} / {percentile(taken.per_step_s, 0.9):.2f} |"
        )
    step_ratio = statistics.median(samples["browsergym"].per_step_s) / statistics.median(
        samples["ours"].per_step_s
    )
    episode_ratio = statistics.median(samples["browsergym"].episode_s) / statistics.median(
        samples["ours"].episode_s
    )
    lines += [
        "",
        f"Ratio, per step (median): BrowserGym / ours = {step_ratio:.2f}; "
        f"per episode (wall): {episode_ratio:.2f}.",
    ]
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
    with tempfile.TemporaryDirectory(prefix="browsergym-bench-") as folder:
        samples = measure(args.repeats, TASKS[: args.tasks], Path(folder))
    after = " ".join(f"{value:.1f}" for value in os.getloadavg())
    text = report(samples, args.repeats, TASKS[: args.tasks], (before, after))
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
