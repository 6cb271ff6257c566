"""The catalog card on the real catalog files, and `susbench catalog stats --json` end to end."""

from __future__ import annotations

import json

from susbench.analysis.catalog_card import CatalogCard, catalog_card, expected_exposures
from susbench.analysis.power import detectable_difference
from susbench.catalog.full import catalog_sets, load_catalog
from susbench.catalog.injections import load_injections
from susbench.core.models import PATTERN_TYPES, task_split
from tests.support.cli import run_cli

INJECTIONS = {injection.id: injection for injection in load_injections()}
CATALOG = load_catalog(INJECTIONS)
CARD = catalog_card(CATALOG, INJECTIONS)
TASK_FILES = [path for chosen in catalog_sets() for path in chosen.tasks_dir.glob("*.yaml")]


def test_counts_add_up_over_sites_sources_categories_and_task_sets() -> None:
    assert CARD.tasks == len(TASK_FILES) == len(CATALOG)
    for counts in (CARD.per_site, CARD.per_category, CARD.per_task_set):
        assert sum(counts.values()) == CARD.tasks
    assert sum(row.tasks for row in CARD.sources) == CARD.tasks
    assert {row.source for row in CARD.sources} == {"synthetic", "real app", "saved page"}
    assert CARD.sites == len(CARD.per_site) == sum(row.sites for row in CARD.sources)
    assert CARD.distinct_tasks == CARD.tasks - sum(len(group) - 1 for group in CARD.padded)
    assert CARD.test_tasks == sum(task_split(entry.task.id) == "test" for entry in CATALOG)
    assert 0.25 <= CARD.test_share <= 0.35


def test_every_type_is_counted_with_its_sites_and_what_its_exposures_detect() -> None:
    assert [row.pattern_type for row in CARD.types] == list(PATTERN_TYPES)
    shares = expected_exposures(CATALOG, INJECTIONS)
    # every task is one expected exposure, split over the types of its injections
    assert abs(sum(shares.values()) - CARD.tasks) < 1e-6
    for row in CARD.types:
        having = [entry for entry in CATALOG if row.pattern_type in entry.types]
        assert row.tasks == len(having) > 0
        assert row.sites == len({entry.task.site for entry in having})
        assert row.exposures <= row.tasks
        assert row.detectable_difference == detectable_difference(row.exposures)
    # more exposures detect a smaller difference
    ordered = sorted(CARD.types, key=lambda row: row.exposures)
    assert ordered[0].detectable_difference >= ordered[-1].detectable_difference


def test_catalog_stats_json_on_the_command_line() -> None:
    result = run_cli("catalog", "stats", "--json")
    assert result.returncode == 0, result.stderr
    card = CatalogCard.model_validate(json.loads(result.stdout))
    assert card == CARD
    table = run_cli("catalog", "stats")
    assert table.returncode == 0, table.stderr
    assert f"{CARD.tasks} tasks" in table.stdout and "hidden_information" in table.stdout
