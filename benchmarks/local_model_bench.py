"""The packaged small model as a subject: where an episode's time goes, and whether two runs with the
same identity agree.

Runs `openai-chat` on the local model (serve-local's settings) over the nine one-per-type tasks, twice,
each run on its own freshly started server (so the server's prompt cache starts empty both times),
one episode at a time. The two runs go at once, as two processes on two ports (on a shared machine
that halves the wait); the port is part of a run's identity, so the report recomputes the second
run's id with the first run's base URL to show that nothing else differs. Reports per step the
observation, model and action time (median, p90), prompt and completion tokens, the observation's own
size in the model's tokens (the server's /tokenize), episodes per minute, the harness's share beside
the model's, and per task whether the two runs took the same actions and reached the same outcome.
The load average is printed with every figure: the machine is shared.

    .venv/bin/python benchmarks/local_model_bench.py run --port 8719 --out /tmp/run-1.json &
    .venv/bin/python benchmarks/local_model_bench.py run --port 8720 --out /tmp/run-2.json
    .venv/bin/python benchmarks/local_model_bench.py report /tmp/run-1.json /tmp/run-2.json --out R.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

from susbench.agents.local_model import LocalModelSettings, local_run_fields, serving_for_run
from susbench.controller import RunOptions, run_benchmark
from susbench.results.store import Store


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def quantiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return statistics.median(ordered), p90


def tokens(base_url: str, key: str, text: str) -> int:
    request = urllib.request.Request(
        base_url.removesuffix("/v1") + "/tokenize",
        data=json.dumps({"content": text}).encode(),
        headers={"content-type": "application/json", "authorization": f"Bearer {key}"},
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        return len(json.loads(answer.read())["tokens"])


def one_run(db: Path, settings: LocalModelSettings, port: int, tasks: str | None) -> dict[str, Any]:
    started_load = load()
    with serving_for_run(port=port) as server:
        started = time.perf_counter()
        run_benchmark(RunOptions(**local_run_fields(server, tasks, settings), db=db))
        wall = time.perf_counter() - started
        with Store(db, read_only=True) as store:
            _, texts = store.query("SELECT observation_text FROM steps")
        observation_tokens = [tokens(server.base_url, server.api_key, text) for (text,) in texts]
    with Store(db, read_only=True) as store:
        _, steps = store.query(
            "SELECT observe_ms, model_ms, act_ms, tokens_in, tokens_out FROM steps ORDER BY episode_id, step"
        )
        _, episodes = store.query(
            "SELECT o.task_id, o.outcome, e.error, s.actions, s.reply_text, s.action_errors "
            "FROM episode_outcomes o JOIN episodes e USING (episode_id) "
            "LEFT JOIN steps s USING (episode_id) ORDER BY o.task_id, s.step"
        )
        run_id, config = store.query("SELECT run_id, config FROM runs")[1][0]
    per_task: dict[str, dict[str, Any]] = {}
    for task_id, outcome, error, actions, reply, errors in episodes:
        entry = per_task.setdefault(task_id, {"outcome": outcome, "error": error, "steps": []})
        if reply is not None:
            entry["steps"].append((json.loads(actions), reply, json.loads(errors)))
    return {
        "run_id": run_id,
        "config": json.loads(config) if isinstance(config, str) else config,
        "settings": settings.model_dump(mode="json"),
        "wall_s": wall,
        "load_start": started_load,
        "load_end": load(),
        "steps": steps,
        "observation_tokens": observation_tokens,
        "tasks": per_task,
    }


def row(name: str, values: list[float], unit: str) -> str:
    median, p90 = quantiles(values)
    return f"| {name} | {median:,.0f} {unit} | {p90:,.0f} {unit} |"


def same_identity(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Whether the second run's identity, with the first run's base URL, is the first run's."""
    from susbench.core.identity import RunIdentity

    identity = RunIdentity.from_config(second["config"])
    settings = {**identity.operator_settings, "base_url": first["config"]["operator_settings"]["base_url"]}
    return identity.model_copy(update={"operator_settings": settings}).run_id() == first["run_id"]


def report(runs: list[dict[str, Any]]) -> str:
    settings = runs[0]["settings"]
    lines = [
        "# The packaged small model as a subject (SmolLM2-135M-Instruct Q4_1, xllamacpp, 2 threads)",
        "",
        f"`benchmarks/local_model_bench.py` (max_steps {settings['max_steps']}, max_tokens "
        f"{settings['max_tokens']}): openai-chat, compact axtree, json actions under json_schema, one "
        "episode at a time, the nine one-per-type tasks, two runs at once on two servers.",
        "",
    ]
    for index, run in enumerate(runs, 1):
        steps = run["steps"]
        observe, model, act = ([float(step[i]) for step in steps] for i in range(3))
        tokens_in, tokens_out = ([float(step[i]) for step in steps] for i in (3, 4))
        episodes = len(run["tasks"])
        harness = sum(observe) + sum(act)
        lines += [
            f"## Run {index} ({run['run_id']}): load average {run['load_start']} at its start, "
            f"{run['load_end']} at its end (1 / 5 / 15 min, 2 cores)",
            "",
            f"{episodes} episodes, {len(steps)} steps in {run['wall_s']:.0f} s: "
            f"{60 * episodes / run['wall_s']:.2f} episodes per minute. Harness (observe + act) "
            f"{harness / 1000:.1f} s beside model {sum(model) / 1000:.1f} s: "
            f"{harness / max(sum(model), 1):.3f} of the model's time.",
            "",
            "| per step | median | p90 |",
            "|---|---|---|",
            row("observation (compact axtree)", observe, "ms"),
            row("model call", model, "ms"),
            row("action", act, "ms"),
            row("prompt tokens", tokens_in, ""),
            row("completion tokens", tokens_out, ""),
            row("observation's own tokens", [float(n) for n in run["observation_tokens"]], ""),
            "",
        ]
    first, second = runs[0]["tasks"], runs[1]["tasks"]
    same_actions = same_outcomes = 0
    lines += [
        "## Two runs, one identity",
        "",
        f"Run ids {runs[0]['run_id']} and {runs[1]['run_id']}; with the first run's base URL the second "
        f"run's identity is {'the same' if same_identity(runs[0], runs[1]) else 'STILL DIFFERENT'}.",
        "",
        "| task | outcome 1 | outcome 2 | steps 1 / 2 | same replies | same actions |",
        "|---|---|---|---|---|---|",
    ]
    for task_id in sorted(first):
        one, two = first[task_id], second.get(task_id, {"outcome": "missing", "steps": [], "error": None})
        replies = [reply for _, reply, _ in one["steps"]] == [reply for _, reply, _ in two["steps"]]
        actions = [a for a, _, e in one["steps"]] == [a for a, _, e in two["steps"]]
        same_actions += actions
        same_outcomes += one["outcome"] == two["outcome"]
        lines.append(
            f"| {task_id} | {one['outcome']} | {two['outcome']} | {len(one['steps'])} / {len(two['steps'])} "
            f"| {'yes' if replies else 'no'} | {'yes' if actions else 'no'} |"
        )
    lines += [
        "",
        f"Same actions in {same_actions} of {len(first)} tasks; "
        f"same outcome in {same_outcomes} of {len(first)}.",
        "",
        "Outcomes and errors, run 1:",
        "",
        *(
            f"- {task}: {entry['outcome']}; {entry['error'] or 'no error'}"
            for task, entry in sorted(first.items())
        ),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="one run; its figures as JSON")
    run.add_argument("--port", type=int, required=True)
    run.add_argument("--max-steps", type=int, default=1)
    run.add_argument("--max-tokens", type=int, default=32)
    run.add_argument("--tasks", help="a --tasks selector (default: the nine one-per-type tasks)")
    run.add_argument("--db", type=Path)
    run.add_argument("--out", type=Path, required=True)
    combine = commands.add_parser("report", help="the Markdown report of two runs")
    combine.add_argument("runs", type=Path, nargs=2)
    combine.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "run":
        settings = LocalModelSettings(max_steps=args.max_steps, max_tokens=args.max_tokens)
        db = args.db or args.out.with_suffix(".duckdb")
        db.unlink(missing_ok=True)
        found = one_run(db, settings, args.port, args.tasks)
        args.out.write_text(json.dumps(found, default=str), encoding="utf-8")
        print(f"{args.out}: {found['wall_s']:.0f} s, load {found['load_end']}")
        return
    runs = [json.loads(path.read_text(encoding="utf-8")) for path in args.runs]
    args.out.write_text(report(runs), encoding="utf-8")
    print(args.out)


if __name__ == "__main__":
    main()
