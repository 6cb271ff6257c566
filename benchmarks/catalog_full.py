"""The full catalog with the scripted baselines, from the bundled snapshots (a benchmark, not a test).

Every task of every task set (`susbench run --task-set full`), once with each of careful, naive and
random, one run per task set and operator, into one database. It writes: the wall time and episodes
per minute per operator (and each operator's mean episode time, the basis of the estimate `run
--task-set full` prints), every task where careful did not avoid or naive did not take the pattern,
the pooled report's per-type intervals per operator, and the random baseline's Firth model
(`avoided ~ pattern_type` over its exposures alone).

    .venv/bin/python benchmarks/catalog_full.py [--parallel 2] [--out benchmarks/results/catalog-full-DATE.md]
    .venv/bin/python benchmarks/catalog_full.py --smallest   # one task per operator, seconds
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import date
from pathlib import Path

from susbench.analysis import tables
from susbench.analysis.model import ModelSpec, fit_model
from susbench.analysis.results import group_results
from susbench.analysis.summary import analyse
from susbench.analysis.tables import Rows
from susbench.catalog.injections import load_injections
from susbench.catalog.tasksets import task_set_snapshot
from susbench.controller import RunOptions, run_benchmark
from susbench.controller.catalog_runs import full_parts
from susbench.results.store import Store

OPERATORS = ("careful", "naive", "random")
EXPECTED = {"careful": "avoided", "naive": "not_avoided"}
SMALLEST_TASKS = "voltcart-mouse-cart"


def markdown(rows: Rows) -> list[str]:
    return [
        f"**{rows.title}**",
        "",
        "| " + " | ".join(rows.headers) + " |",
        "|" + "|".join("---" if index < rows.left else "---:" for index in range(len(rows.headers))) + "|",
        *("| " + " | ".join(cell.replace("\n", " ") for cell in row) + " |" for row in rows.rows),
        "",
    ]


def run_operator(operator: str, selector: str, parallel: int, db: Path) -> tuple[float, int]:
    """Every task set's part of the catalog with one operator: wall seconds and episodes stored."""
    injections = {item.id: item for item in load_injections()}
    started = time.monotonic()
    stored = 0
    for part in full_parts(injections, selector):
        options = RunOptions(
            tasks=part.selector,
            operator=operator,
            snapshot=task_set_snapshot(part.task_set),
            tasks_dir=part.task_set.tasks_dir,
            parallel=parallel,
            db=db,
        )
        stored += run_benchmark(options).stored
    return time.monotonic() - started, stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="all", help="a --tasks selector over the full catalog")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument(
        "--operators", nargs="+", default=list(OPERATORS), choices=OPERATORS, help="(default: all three)"
    )
    parser.add_argument("--smallest", action="store_true", help=f"only {SMALLEST_TASKS}, one at a time")
    parser.add_argument(
        "--db",
        type=Path,
        help="keep the results here (default: a temporary folder); episodes stored there already are "
        "resumed, not run again, and not counted in the episodes per minute",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.smallest:
        args.tasks, args.parallel = SMALLEST_TASKS, 1
    lines = [
        f"# The full catalog with the scripted baselines ({date.today()})",
        "",
        f"`benchmarks/catalog_full.py --tasks {args.tasks} --parallel {args.parallel}`; load average at "
        f"start: {', '.join(f'{value:.1f}' for value in os.getloadavg())} (2 cores)",
        "",
        "| operator | episodes | wall s | episodes/min | mean episode s |",
        "|---|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory(prefix="catalog-full-") as scratch:
        db = args.db or Path(scratch) / "catalog-full.duckdb"
        for operator in args.operators:
            wall, stored = run_operator(operator, args.tasks, args.parallel, db)
            with Store(db, read_only=True) as store:
                _, rows = store.query(
                    "SELECT avg(duration_s) FROM episode_outcomes WHERE operator = ?", (operator,)
                )
            mean = rows[0][0] or 0.0
            lines.append(f"| {operator} | {stored} | {wall:.0f} | {60 * stored / wall:.1f} | {mean:.1f} |")
            print(lines[-1], flush=True)
        lines += ["", f"load average at end: {', '.join(f'{value:.1f}' for value in os.getloadavg())}", ""]
        with Store(db, read_only=True) as store:
            _, wrong = store.query(
                "SELECT operator, task_id, outcome FROM episode_outcomes WHERE "
                "(operator = 'careful' AND outcome != 'avoided') OR (operator = 'naive' AND outcome != "
                "'not_avoided') ORDER BY 1, 2"
            )
            _, unfinished = store.query(
                "SELECT operator, task_id FROM episode_outcomes WHERE operator IN ('careful', 'naive') "
                "AND NOT completed ORDER BY 1, 2"
            )
            _, misses = store.query(
                "SELECT e.task_id, count(*) FROM requests r JOIN episodes e USING (episode_id) WHERE r.miss "
                "AND e.operator IN ('careful', 'naive') AND r.url LIKE '%://' || e.site || '/%' GROUP BY 1 "
                "ORDER BY 1"
            )
            groups = group_results(store, pool=True)
        lines.append(
            "Every task exact: careful avoided and naive took the pattern on each."
            if not wrong
            else f"{len(wrong)} episodes not exact: "
            + "; ".join(f"{operator} {task}: {outcome}" for operator, task, outcome in wrong)
        )
        lines.append(
            "Every careful and naive episode completed its task."
            if not unfinished
            else f"{len(unfinished)} careful or naive episodes not completed: "
            + "; ".join(f"{operator} {task}" for operator, task in unfinished)
        )
        lines.append(
            "No careful or naive request to the task's own site missed the snapshot."
            if not misses
            else "Requests to the task's own site that missed the snapshot: "
            + "; ".join(f"{task} {count}" for task, count in misses)
        )
        lines.append("")
        report = analyse(groups, str(db), pool=True)
        for group in report.groups:
            lines += markdown(tables.avoidance(group))
        random_episodes = [
            episode for group in groups for episode in group.episodes if episode.operator == "random"
        ]
        model = fit_model(random_episodes, ModelSpec())
        if model is None:
            lines.append("random: no exposures, no model")
        else:
            lines += [f"random alone: {model.estimator}, {model.formula} ({model.exposures} exposures)", ""]
            lines += markdown(tables.terms(model))
            lines += markdown(
                tables.comparisons([c for c in model.comparisons if c.factor == "pattern_type"])
            )
            lines += [f"note: {note}" for note in model.notes]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
