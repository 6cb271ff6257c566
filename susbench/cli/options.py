"""Options several commands share, each declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from susbench.catalog.tasks import complete_tasks
from susbench.core.models import Backend, BrowserKind
from susbench.core.paths import complete_snapshots

DEFAULT_DB = Path("results.duckdb")
DB_HELP = "DuckDB results file"

DbOption = Annotated[Path, typer.Option("--db", help=DB_HELP)]
SnapshotOption = Annotated[
    Path | None,
    typer.Option(help="WACZ to replay (default: the bundled one)", autocompletion=complete_snapshots),
]
TasksOption = Annotated[
    str,
    typer.Option(
        help="all, a task id, a site host, a pattern type or a glob over ids", autocompletion=complete_tasks
    ),
]
TaskSetOption = Annotated[
    str,
    typer.Option(
        "--task-set",
        help="localweb: tasks/ on the bundled snapshot; realpages: tasks/realpages/ on real pages, their "
        "snapshot built once from ../shared/realdata into the cache",
    ),
]
BackendOption = Annotated[
    Backend,
    typer.Option(
        help="local: worker processes on this machine; ray: Ray tasks on an embedded node or a cluster"
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(help="join this Ray cluster (default: $RAY_ADDRESS; neither: start an embedded node)"),
]
BrowsersPerNodeOption = Annotated[
    int | None, typer.Option(min=1, help="browsers of the embedded Ray node (default: its CPU count)")
]
BrowserOption = Annotated[
    BrowserKind,
    typer.Option(help="local: Chromium on this machine; container: the browser image, with no network"),
]
ImageOption = Annotated[
    str | None,
    typer.Option(help="browser image for --browser container (default: $SUSBENCH_IMAGE, else the version's)"),
]
ServeOption = Annotated[
    bool,
    typer.Option("--serve", help="the screen on a virtual display, for a remote participant (noVNC link)"),
]
ServePortOption = Annotated[
    int | None, typer.Option(min=0, max=65535, help="--serve: port of the link (default 6080)")
]
ServeHostOption = Annotated[str | None, typer.Option(help="--serve: address to listen on (127.0.0.1)")]
