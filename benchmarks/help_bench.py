"""Every `susbench ... --help` as a whole process, as a ratio to `python -c pass`, in one run.

    .venv/bin/python benchmarks/help_bench.py [--repeats 7] [--out benchmarks/results/help-DATE.md]
    .venv/bin/python benchmarks/help_bench.py --smallest --out /tmp/help.md   # 3 commands, 1 round

The goal of issue 48: every command's and subcommand's `--help` within 0.5 s. The command tree is
walked as Click sees it (the root's lazy commands loaded, every group's subcommands), so a new
command is timed without being listed here. `susbench version` (run, not its help) is timed too.

Each round runs every command once, each right after a `python -c pass`, so both see the same load;
a command's figure is the median of its rounds, its ratio that median over the median of all the
`python -c pass` runs. A first, untimed run of each command under `-X importtime` fills the
bytecode cache and counts the modules it imports (and names the heavy packages among them).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import typer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from susbench.cli.main import app  # noqa: E402 - after the checkout is on the path

GOAL_S = 0.5
# `python -c pass` on the project's 2-core machine when quiet (results/cli-startup-2026-12-04.md): the
# goal as a ratio to it, for a machine of another speed. Load moves the ratios too (it slows a
# command's half second more than the baseline's 25 ms), so the report gives the load averages.
QUIET_BASELINE_S = 0.023
BASELINE = "python -c pass"
ROOT_HELP = "susbench --help"  # the command list alone: what every command's help adds to
# Packages a `--help` has no use for (the controller, replayer and recorder load the first three); a
# row names those it imported.
HEAVY = (
    "playwright",
    "duckdb",
    "mitmproxy",
    "scipy",
    "numpy",
    "matplotlib",
    "docker",
    "ray",
    "warcio",
    "cryptography",
    "PIL",
)


def command_paths(command: Any, path: tuple[str, ...] = (), parent: Any = None) -> Iterator[tuple[str, ...]]:
    """Every command's words below the root, the root's own () first; hidden commands left out."""
    yield path
    context = command.context_class(command, parent=parent, info_name=path[-1] if path else "susbench")
    if not hasattr(command, "list_commands"):
        return
    for name in command.list_commands(context):
        sub = command.get_command(context, name)
        if sub is not None and not getattr(sub, "hidden", False):
            yield from command_paths(sub, (*path, name), context)


def susbench_command() -> list[str]:
    """The installed entry script beside this Python (what a user runs), else `python -m susbench`."""
    script = Path(sys.executable).parent / "susbench"
    return [str(script)] if script.exists() else [sys.executable, "-m", "susbench"]


def imported_modules(argv: list[str]) -> list[str]:
    """The modules a run imports, from `-X importtime` (one line per module imported)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return [
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and not line.rstrip().endswith("imported package")
    ]


def heavy_among(modules: list[str]) -> list[str]:
    return [name for name in HEAVY if any(m == name or m.startswith(f"{name}.") for m in modules)]


def seconds(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed rounds; each command's median of them")
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / f"benchmarks/results/help-{date.today()}.md",
        help="the report (Markdown)",
    )
    parser.add_argument(
        "--smallest", action="store_true", help="one round of `--help`, `run --help` and one subcommand's"
    )
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    susbench = susbench_command()
    paths = list(command_paths(typer.main.get_command(app)))
    if args.smallest:
        paths = [(), ("run",), next(path for path in paths if len(path) == 2)]
        args.repeats = 1
    commands = {
        BASELINE: [sys.executable, "-c", "pass"],
        **{" ".join(["susbench", *path, "--help"]): [*susbench, *path, "--help"] for path in paths},
        "susbench version": [*susbench, "version"],
    }
    load_before = load_average()
    modules = {name: imported_modules(argv) for name, argv in commands.items()}
    medians = timed(commands, args.repeats)
    how = f"--repeats {args.repeats}{' --smallest' if args.smallest else ''}"
    header = (
        f"`benchmarks/help_bench.py {how}` at commit {commit()}: {len(commands) - 1} commands, each a whole "
        f"process (`{' '.join(susbench)}`) run right after `{BASELINE}`, medians of {args.repeats} rounds; "
        "modules are those imported (`-X importtime`). "
        f"{os.cpu_count()} cores, load average {load_before} before and {load_average()} after."
    )
    report = render(header, medians, modules)
    print(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report + "\n", encoding="utf-8")


def timed(commands: dict[str, list[str]], repeats: int) -> dict[str, float]:
    """Each command's median seconds, and the baseline's over all its runs (one before each command's)."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for round_number in range(repeats):
        for name, argv in commands.items():
            if name != BASELINE:
                samples[BASELINE].append(seconds(commands[BASELINE]))
                samples[name].append(seconds(argv))
        print(f"round {round_number + 1}/{repeats} done", file=sys.stderr, flush=True)
    return {name: statistics.median(values) for name, values in samples.items()}


def render(header: str, medians: dict[str, float], modules: dict[str, list[str]]) -> str:
    base, root = medians[BASELINE], medians[ROOT_HELP]
    goal_ratio = GOAL_S / QUIET_BASELINE_S
    commands = [name for name in medians if name != BASELINE]
    over_s = [name for name in commands if medians[name] > GOAL_S]
    over_ratio = [name for name in commands if medians[name] / base > goal_ratio]
    rows = [
        f"| `{name}` | {medians[name]:.3f} | {medians[name] / base:.1f} | {medians[name] / root:.2f} | "
        f"{len(modules[name])} | "
        f"{', '.join(heavy_among(modules[name])) or '-'} |"
        for name in [BASELINE, *sorted(commands, key=medians.__getitem__, reverse=True)]
    ]
    return "\n".join(
        [
            f"# `susbench ... --help` start-up ({date.today()})",
            "",
            header,
            "",
            f"Goal: {GOAL_S} s, or {goal_ratio:.1f} x `{BASELINE}` (its {QUIET_BASELINE_S * 1000:.0f} ms "
            f"on the quiet machine; {base * 1000:.0f} ms in this run). "
            f"Over {GOAL_S} s: {listed(over_s)}. Over {goal_ratio:.1f} x: {listed(over_ratio)}.",
            "",
            f"| command | median s | x `{BASELINE}` | x `{ROOT_HELP}` | modules | heavy imports |",
            "|---|---:|---:|---:|---:|---|",
            *rows,
        ]
    )


def listed(names: list[str]) -> str:
    return f"{len(names)} ({', '.join(f'`{name}`' for name in names)})" if names else "none"


if __name__ == "__main__":
    main()
