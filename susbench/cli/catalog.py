"""`susbench catalog stats`: the full catalog's card, as tables or JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Group, RenderableType
from rich.text import Text

from susbench.cli.options import JsonOption
from susbench.cli.terminal import output_console
from susbench.core.tables import FittedTable

if TYPE_CHECKING:
    from susbench.analysis.catalog_card import CatalogCard

catalog_app = typer.Typer(no_args_is_help=True)


def _counts(title: str, what: str, counts: dict[str, int]) -> FittedTable:
    return FittedTable((what, "tasks"), [(name, str(count)) for name, count in counts.items()], title, left=1)


def render_card(card: CatalogCard) -> RenderableType:
    detect = f"detectable at α {card.alpha:g}, {100 * card.power:.0f}% power"
    types = FittedTable(
        ("type", "tasks", "sites", "exposures per run", detect),
        [
            (
                row.pattern_type,
                str(row.tasks),
                str(row.sites),
                str(row.exposures),
                "—" if row.detectable_difference is None else f"{100 * row.detectable_difference:.0f} pp",
            )
            for row in card.types
        ],
        "Per type",
        caption=f"a task counts for each type its injections can show; exposures: expected in one run of "
        f"every task by one operator; detectable: the difference from another type with as many exposures, "
        f"one at {100 * card.baseline:.0f}%",
        left=1,
    )
    sources = FittedTable(
        ("source", "tasks", "sites"),
        [(row.source, str(row.tasks), str(row.sites)) for row in card.sources],
        "Per source",
        left=1,
    )
    padded = "; ".join(" = ".join(group) for group in card.padded) or "none"
    return Group(
        Text(
            f"{card.tasks} tasks ({card.distinct_tasks} distinct by the no-padding rule), {card.injections} "
            f"injections ({card.injection_placements} placements), {card.sites} sites; test split "
            f"{card.test_tasks} tasks ({100 * card.test_share:.0f}%)",
            style="bold",
        ),
        types,
        sources,
        _counts("Per category", "category", card.per_category),
        _counts("Per task set", "task set", card.per_task_set),
        _counts("Per site", "site", card.per_site),
        Text(f"counted as one (same site, injections and flow): {padded}"),
    )


@catalog_app.command(
    "stats", help="Counts per type, site, category and source, the split, and what the catalog can detect."
)
def stats(as_json: JsonOption = False) -> None:
    # Imported here: the power's statistics (scipy) would otherwise slow `susbench catalog --help`.
    from susbench.analysis.catalog_card import project_catalog_card

    card = project_catalog_card()
    if as_json:
        typer.echo(card.model_dump_json(indent=2))
        return
    output_console().print(render_card(card))
