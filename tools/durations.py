"""The suite's profile from pytest's `--durations=0` table: seconds per test, per module and per part.

`python -m tools.durations LOG` prints the top tests and the time per part as Markdown (for
benchmarks/results/suite-<date>.md); `--write` also stores the seconds per work unit in
tests/data/module_seconds.yaml (per module; per test for the modules tests/data/work_units.yaml spreads),
which `make test`'s scheduler reads to start the longest units first (tests/support/tiers.py), so no
worker is left with a long one at the end.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

from tests.support.work_units import MODULE_SECONDS, module_of, work_unit_key

ROW = re.compile(r"^(\d+(?:\.\d+)?)s (call|setup|teardown)\s+(tests/\S+?\.py)(?:::(\S.*))?$")


def per_test(log: Path) -> dict[str, float]:
    """Seconds per test id: its call, set-up and tear-down rows summed."""
    seconds: dict[str, float] = defaultdict(float)
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        row = ROW.match(line.strip())
        if row:
            seconds[f"{row[3]}::{row[4]}" if row[4] else row[3]] += float(row[1])
    if not seconds:
        sys.exit(f"{log}: no --durations table (run pytest with --durations=0)")
    return dict(seconds)


def part_of(test: str) -> str:
    """The part a test file belongs to, by its folder: tests/agents/test_loops.py -> agents."""
    return Path(module_of(test)).parent.name


def summed(seconds: dict[str, float], key: Callable[[str], str]) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for test, value in seconds.items():
        totals[key(test)] += value
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def markdown(seconds: dict[str, float], top: int) -> str:
    total = sum(seconds.values())
    lines = [f"Tests: {len(seconds)}; seconds summed over the workers: {total:,.0f}", ""]
    lines += ["| # | test | s |", "|---|---|---|"]
    ranked = sorted(seconds.items(), key=lambda item: -item[1])[:top]
    lines += [f"| {rank} | `{test}` | {value:.1f} |" for rank, (test, value) in enumerate(ranked, 1)]
    lines += ["", "| part | tests | s | share |", "|---|---|---|---|"]
    counts: dict[str, int] = defaultdict(int)
    for test in seconds:
        counts[part_of(test)] += 1
    for part, value in summed(seconds, part_of).items():
        lines.append(f"| {part} | {counts[part]} | {value:.0f} | {100 * value / total:.1f} % |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="pytest output with --durations=0")
    parser.add_argument("--top", type=int, default=30, help="how many of the longest tests to list")
    parser.add_argument("--write", action="store_true", help=f"store them in {MODULE_SECONDS}")
    args = parser.parse_args(argv)
    if not args.log.is_file():
        sys.exit(f"{args.log}: no such file")
    seconds = per_test(args.log)
    print(markdown(seconds, args.top))
    if args.write:
        units = {unit: round(value, 1) for unit, value in summed(seconds, work_unit_key).items()}
        header = f"# Seconds per work unit, from `python -m tools.durations {args.log.name} --write`.\n"
        MODULE_SECONDS.write_text(header + yaml.safe_dump(units, sort_keys=False), encoding="utf-8")


if __name__ == "__main__":
    main()
