"""Write the held-out split into every task file of the catalog that does not state it yet.

    python -m tools.write_splits          # adds `split: dev|test` after the `id:` line, by the rule
    python -m tools.write_splits --check  # lists the files without one, changes nothing (exit 1 if any)

The split comes from `susbench.core.models.task_split` alone; a file that states one already is left
as it is (the loader refuses one that differs from the rule). Only a line is added, so a task file
keeps its layout and comments, and merging branches that added tasks only adds lines.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from susbench.catalog.full import catalog_sets
from susbench.core.models import task_split


def missing_split(path: Path) -> str | None:
    """The split line a task file lacks, or None when it states its split."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "id" not in data or "split" in data:
        return None
    return f"split: {task_split(str(data['id']))}\n"


def write_split(path: Path, line: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(index for index, text in enumerate(lines) if text.startswith("id:"))
    lines.insert(at + 1, line)
    path.write_text("".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list the files without a split; write nothing")
    args = parser.parse_args()
    files = sorted(path for chosen in catalog_sets() for path in chosen.tasks_dir.glob("*.yaml"))
    lacking = [(path, line) for path in files if (line := missing_split(path)) is not None]
    for path, line in lacking:
        if args.check:
            print(f"{path}: no split (the rule gives {line.strip()})")
        else:
            write_split(path, line)
    print(f"{len(lacking)} of {len(files)} task files {'lack' if args.check else 'given'} a split")
    if args.check and lacking:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
