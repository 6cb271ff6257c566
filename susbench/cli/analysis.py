"""`susbench report`, `compare` and `drift`: read results and snapshots, print or write the analysis."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from susbench.analysis.power import ALPHA, POWER, exposures_needed
from susbench.analysis.results import Breakdown
from susbench.cli.options import DEFAULT_DB, DbOption, JsonOption
from susbench.cli.terminal import output_console, progress_lines
from susbench.core.errors import SusbenchError
from susbench.core.models import PATTERN_TYPES, SplitChoice
from susbench.web.edition import DEFAULT_DATE

# Each command imports its part (statistics, plotting, DuckDB, Chromium) in its body: `--help` loads none.


def report(
    db: DbOption = DEFAULT_DB,
    as_json: JsonOption = False,
    where: Annotated[
        str, typer.Option("--where", help="SQL filter over episode_outcomes, e.g. \"mode = 'live'\"")
    ] = "",
    pool: Annotated[
        bool, typer.Option("--pool", help="pool runs whose configurations differ (mode, snapshot, catalogs)")
    ] = False,
    by: Annotated[
        Breakdown | None, typer.Option("--by", help="add a breakdown per task or injection")
    ] = None,
    interaction: Annotated[
        bool, typer.Option("--interaction", help="add operator:pattern_type to the model")
    ] = False,
    task_effect: Annotated[
        bool, typer.Option("--task-effect", help="add task as a grouping factor where tasks repeat")
    ] = False,
    no_model: Annotated[bool, typer.Option("--no-model", help="rates only, no regression")] = False,
    split: Annotated[
        SplitChoice,
        typer.Option(
            "--split", help="only episodes of tasks in the held-out split: test (to report), dev, or all"
        ),
    ] = "all",
    html: Annotated[
        Path | None, typer.Option("--html", help="write DIR/report.html (self-contained) and the figures")
    ] = None,
    figures: Annotated[
        Path | None, typer.Option("--figures", help="write Figure 4 (PNG + SVG) per configuration to DIR")
    ] = None,
    gallery: Annotated[
        Path | None,
        typer.Option("--gallery", help="injection screenshots from `injections preview` (default: cache)"),
    ] = None,
) -> None:
    """Avoidance by operator and type per run configuration: Wilson intervals, completion, Firth model."""
    from susbench.analysis.figures import write_group_figures
    from susbench.analysis.html_report import default_gallery, write_report
    from susbench.analysis.model import ModelSpec
    from susbench.analysis.render import render_analysis
    from susbench.analysis.results import group_results
    from susbench.analysis.summary import analyse
    from susbench.results.store import Store

    if gallery is not None and not gallery.is_dir():
        raise SusbenchError(f"--gallery {gallery}: not a folder; expected the output of `injections preview`")
    spec = None if no_model else ModelSpec(interaction=interaction, task_effect=task_effect)
    with Store(db, read_only=True) as store:
        groups = group_results(store, where, pool, split)
    result = analyse(groups, str(db), pool, by, spec)
    console = output_console()
    written = [] if figures is None else write_group_figures(result, figures)
    if html is not None:
        episodes = {group.label: group.episodes for group in groups}
        written += write_report(result, episodes, html, gallery or default_gallery())
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
    else:
        console.print(render_analysis(result))
    if not as_json:
        for path in written:
            console.print(f"wrote {path}", soft_wrap=True)


def compare(
    run_a: Annotated[str, typer.Argument(help="first run id (or a unique prefix), e.g. the live run")],
    run_b: Annotated[str, typer.Argument(help="second run id (or a unique prefix), e.g. the snapshot run")],
    db: DbOption = DEFAULT_DB,
    as_json: JsonOption = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="write DIR/compare.html (self-contained)")
    ] = None,
) -> None:
    """Pair two runs' episodes: agreement, discordant pairs, McNemar exact, per-type differences."""
    from susbench.analysis.compare import compare_runs
    from susbench.analysis.html_report import compare_page, write_page
    from susbench.analysis.render import render_compare
    from susbench.results.store import Store

    with Store(db, read_only=True) as store:
        result = compare_runs(store, run_a, run_b)
    target = write_page(html, "compare.html", compare_page(result)) if html is not None else None
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
        return
    console = output_console()
    console.print(render_compare(result))
    if target is not None:
        console.print(f"wrote {target}", soft_wrap=True)


def drift(
    snapshot_a: Annotated[Path, typer.Argument(help="the earlier snapshot (WACZ)")],
    snapshot_b: Annotated[Path | None, typer.Argument(help="the later snapshot (or --live)")] = None,
    live: Annotated[
        bool, typer.Option("--live", help="record the tasks' flows from the live (local) web as B")
    ] = False,
    live_date: Annotated[
        datetime | None,
        typer.Option(formats=["%Y-%m-%d"], help=f"the local web's date for --live (default: {DEFAULT_DATE})"),
    ] = None,
    tasks: Annotated[
        str, typer.Option(help="all, a task id, a site host, a pattern type or a glob over ids")
    ] = "all",
    out: Annotated[
        Path | None, typer.Option("--out", help="folder for drift.html, drift.json, screenshots and diffs")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """What changed between two snapshots: URLs, payloads, task pages' text and pixels, anchors."""
    from susbench.analysis.drift import drift_tasks, measure_drift, record_live, snapshot_hosts
    from susbench.analysis.html_report import drift_page, write_page
    from susbench.analysis.render import render_drift
    from susbench.catalog.injections import load_injections
    from susbench.core.tables import counted

    if (snapshot_b is None) == (not live):
        raise SusbenchError(
            "give SNAPSHOT_B or --live (a fresh recording of the live web); expected exactly one"
        )
    if live_date is not None and not live:
        raise SusbenchError("--live-date sets the local web's date for --live; expected --live with it")
    injections = {injection.id: injection for injection in load_injections()}
    folder = out or Path(f"drift-{snapshot_a.stem}-vs-{snapshot_b.stem if snapshot_b else 'live'}")
    folder.mkdir(parents=True, exist_ok=True)
    console = output_console()
    progress = progress_lines()
    if snapshot_b is None:
        chosen = drift_tasks(tasks, snapshot_hosts(snapshot_a), injections)
        day = live_date.date() if live_date else DEFAULT_DATE
        progress(f"recording {counted(len(chosen), 'task flow')} from the local web ({day})")
        snapshot_b = record_live(chosen, folder / f"live-{day}.wacz", day, progress)
    else:
        chosen = drift_tasks(tasks, snapshot_hosts(snapshot_a, snapshot_b), injections)
    result = measure_drift(snapshot_a, snapshot_b, chosen, injections, folder, progress)
    page = write_page(folder, "drift.html", drift_page(result, folder))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    console.print(render_drift(result))
    console.print(f"wrote {page}", soft_wrap=True)


def plan(
    detect: Annotated[
        float,
        typer.Option(
            "--detect", min=0.01, max=0.99, help="the difference in avoidance between two types, e.g. 0.2"
        ),
    ],
    baseline: Annotated[
        float, typer.Option("--baseline", min=0.0, max=1.0, help="one type's avoidance (0.5: the worst case)")
    ] = 0.5,
    exposure_rate: Annotated[
        float,
        typer.Option("--exposure-rate", min=0.01, max=1.0, help="share of episodes whose pattern is decided"),
    ] = 1.0,
    types: Annotated[int, typer.Option("--types", min=2, help="pattern types in the study")] = len(
        PATTERN_TYPES
    ),
    alpha: Annotated[float, typer.Option("--alpha", min=0.001, max=0.5)] = ALPHA,
    power: Annotated[float, typer.Option("--power", min=0.5, max=0.999)] = POWER,
    as_json: JsonOption = False,
) -> None:
    """How many episodes per pattern type a study needs to tell two types apart (two-sided, equal n)."""
    needed = exposures_needed(detect, baseline, alpha, power)
    episodes = math.ceil(needed / exposure_rate)
    if as_json:
        fields = {"detect": detect, "baseline": baseline, "alpha": alpha, "power": power, "types": types}
        answer = {"exposures_per_type": needed, "episodes_per_type": episodes, "episodes": episodes * types}
        typer.echo(json.dumps({**fields, "exposure_rate": exposure_rate, **answer}, indent=2))
        return
    output_console().print(
        f"To detect a difference of {100 * detect:.0f} pp in avoidance between two types (one at "
        f"{100 * baseline:.0f}%) at α {alpha:g} with {100 * power:.0f}% power: {needed} exposures per type; "
        f"with {100 * exposure_rate:.0f}% of episodes exposed, {episodes} episodes per type, "
        f"{episodes * types} for {types} types.",
        soft_wrap=True,
    )
