"""The catalog card (`susbench catalog stats`): how big the full catalog is and what it can tell apart.

Counts are of task files, per pattern type, site (host), category and source; a task with several
injections counts for each type it can show. Injections are the distinct injection ids the tasks
list (a generic one placed on several sites counts once; its placements are counted beside). Sites
are distinct hosts. Distinct tasks count each group the no-padding rule (`susbench.catalog.full`)
merges as one.

Power is for one operator running the full catalog once: each episode draws one of its task's
injections, uniformly, so a type's expected exposures are the sum over tasks of the share of their
injections of that type (rounded down). The detectable difference is then the smallest one between
two types with that many exposures each, at a 50% baseline (the worst case), two-sided α 0.05 and
80% power (`susbench.analysis.power`, as `susbench plan --detect` computes it).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from pydantic import Field

from susbench.analysis.power import ALPHA, POWER, detectable_difference
from susbench.apps import load_specs
from susbench.catalog.full import CatalogTask, load_catalog, padded_groups
from susbench.catalog.injections import load_injections
from susbench.core.models import PATTERN_TYPES, Frozen, Injection
from susbench.core.paths import DATA_ROOT
from susbench.recorder.catalog import load_site_catalog
from susbench.web.catalog import specs as synthetic_specs

UNLISTED = "unlisted"
BASELINE = 0.5


class TypeRow(Frozen):
    """One pattern type in the full catalog."""

    pattern_type: str
    tasks: int = Field(ge=0, description="tasks with an injection of this type")
    sites: int = Field(ge=0, description="distinct hosts with such a task")
    exposures: int = Field(
        ge=0, description="expected exposures in one run of the full catalog by one operator"
    )
    detectable_difference: float | None = Field(
        description="smallest difference in avoidance from another type with as many exposures, at a 50% "
        "baseline, α 0.05, 80% power; None with no exposures"
    )


class SourceRow(Frozen):
    """One source of pages: the synthetic local web, a real app run here, or saved real pages."""

    source: str
    tasks: int = Field(ge=0)
    sites: int = Field(ge=0)


class CatalogCard(Frozen):
    """`susbench catalog stats --json`."""

    tasks: int = Field(ge=0)
    distinct_tasks: int = Field(ge=0, description="tasks, each group the no-padding rule merges counted once")
    injections: int = Field(ge=0, description="distinct injection ids the tasks list")
    injection_placements: int = Field(ge=0, description="distinct (injection, site) pairs")
    sites: int = Field(ge=0, description="distinct hosts")
    test_tasks: int = Field(ge=0)
    test_share: float = Field(ge=0, le=1, description="share of tasks in the held-out test split")
    alpha: float = ALPHA
    power: float = POWER
    baseline: float = BASELINE
    types: tuple[TypeRow, ...]
    sources: tuple[SourceRow, ...]
    per_site: dict[str, int] = Field(description="tasks per host")
    per_category: dict[str, int] = Field(
        description="tasks per site category (unlisted: no catalog names it)"
    )
    per_task_set: dict[str, int]
    padded: tuple[tuple[str, ...], ...] = Field(
        description="groups of tasks the no-padding rule counts as one"
    )


def site_categories() -> dict[str, str]:
    """A category per host: the synthetic sites' catalog, the apps' specs, then the real sites'
    catalog (sites/catalog.yaml) for saved pages of sites it lists."""
    found = {host: spec.category for host, spec in synthetic_specs().items()}
    for app in load_specs():
        found.update(dict.fromkeys(app.hosts, app.category))
    real = DATA_ROOT / "sites" / "catalog.yaml"
    if real.is_file():
        for site in load_site_catalog(real).sites:
            found.setdefault(site.host, site.category)
    return found


def _sorted_counts(counter: Mapping[str, int]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda item: (-item[1], item[0])))


def expected_exposures(
    entries: Iterable[CatalogTask], injections: Mapping[str, Injection]
) -> dict[str, float]:
    """Per type, the exposures one run of every task is expected to draw (each task's injections uniform)."""
    shares: dict[str, float] = defaultdict(float)
    for entry in entries:
        listed = entry.task.injections
        for injection_id in listed:
            shares[injections[injection_id].type] += 1 / len(listed)
    return shares


def catalog_card(entries: list[CatalogTask], injections: Mapping[str, Injection]) -> CatalogCard:
    categories = site_categories()
    tasks = [entry.task for entry in entries]
    padded = padded_groups(tasks)
    exposures = expected_exposures(entries, injections)
    type_rows = []
    for name in PATTERN_TYPES:
        having = [entry for entry in entries if name in entry.types]
        n = math.floor(exposures.get(name, 0.0) + 1e-9)
        type_rows.append(
            TypeRow(
                pattern_type=name,
                tasks=len(having),
                sites=len({entry.task.site for entry in having}),
                exposures=n,
                detectable_difference=detectable_difference(n, BASELINE, ALPHA, POWER),
            )
        )
    sources = []
    for source in dict.fromkeys(entry.source for entry in entries):
        mine = [entry for entry in entries if entry.source == source]
        sources.append(SourceRow(source=source, tasks=len(mine), sites=len({e.task.site for e in mine})))
    test_tasks = sum(task.split == "test" for task in tasks)
    return CatalogCard(
        tasks=len(tasks),
        distinct_tasks=len(tasks) - sum(len(group) - 1 for group in padded),
        injections=len({item for task in tasks for item in task.injections}),
        injection_placements=len({(item, task.site) for task in tasks for item in task.injections}),
        sites=len({task.site for task in tasks}),
        test_tasks=test_tasks,
        test_share=test_tasks / len(tasks) if tasks else 0.0,
        types=tuple(type_rows),
        sources=tuple(sources),
        per_site=_sorted_counts(Counter(task.site for task in tasks)),
        per_category=_sorted_counts(Counter(categories.get(task.site, UNLISTED) for task in tasks)),
        per_task_set=dict(Counter(entry.task_set for entry in entries)),
        padded=tuple(padded),
    )


def project_catalog_card() -> CatalogCard:
    """The card of the project's full catalog, against the injection catalog."""
    injections = {injection.id: injection for injection in load_injections()}
    return catalog_card(load_catalog(injections), injections)
