"""Drift between two snapshots of the same sites (or a snapshot and a fresh live recording).

What changed, from the bytes up: URLs added and removed (canonical URLs, cache-busters and session
ids stripped by the replayer's own rules), payloads whose digest changed grouped by content type,
then each task page replayed on both sides: its visible text diffed line by line, its screenshot
diffed pixel by pixel, and every injection asked, through the real extension, whether its anchor
still matches. An injection that anchors on the first side and not on the second is flagged: its
episodes would silently turn into `not_encountered`.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field

from susbench.analysis.pixels import pixel_diff
from susbench.analysis.walk import AnchorObservation, PageObservation, SideObservation
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.catalog.tasksets import TASK_SETS
from susbench.core.errors import SusbenchError
from susbench.core.models import Frozen, Injection, Task
from susbench.core.paths import TASKS_DIR
from susbench.replayer.matching import Canonicalizer, RuleSet
from susbench.snapshot import IndexEntry, Snapshot

MAX_DIFF_LINES = 400
FAMILIES = ("html", "css", "javascript", "json", "image", "font", "other")


class SnapshotSide(Frozen):
    path: str
    id: str
    sha256: str
    created_at: datetime
    hosts: tuple[str, ...]
    records: int


class UrlChanges(Frozen):
    """Canonical URLs (method first) on one side only; paths (host + path) likewise."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    common: int
    paths_added: tuple[str, ...]
    paths_removed: tuple[str, ...]


class DigestChanges(Frozen):
    """Of the URLs on both sides, how many answered with other bytes, for one content type."""

    family: str
    common: int
    changed: int
    examples: tuple[str, ...] = Field(description="up to ten changed URLs")


class PageDrift(Frozen):
    """One task page on both sides (the walk's n-th document)."""

    task_id: str
    index: int
    url_a: str
    url_b: str
    text_lines_changed: int
    text_diff: str
    pixels_changed: float | None = Field(description="fraction of pixels changed (0..1)")
    diff_image: str | None
    problem: str | None = None


class AnchorDrift(Frozen):
    injection_id: str
    pattern_type: str
    task_id: str
    a: AnchorObservation
    b: AnchorObservation
    broke: bool = Field(description="anchored on A, not on B")
    fallback: bool = Field(description="anchored on both, but by another locator on B")


class DriftReport(Frozen):
    a: SnapshotSide
    b: SnapshotSide
    tasks: tuple[str, ...]
    urls: UrlChanges
    digests: tuple[DigestChanges, ...]
    pages: tuple[PageDrift, ...]
    anchors: tuple[AnchorDrift, ...]
    flagged: tuple[str, ...] = Field(description="injections whose anchors broke from A to B")


def family(mime: str) -> str:
    mime = mime.split(";")[0].strip().lower()
    for name, needles in (
        ("html", ("html",)),
        ("css", ("css",)),
        ("javascript", ("javascript", "ecmascript")),
        ("json", ("json",)),
        ("image", ("image/",)),
        ("font", ("font", "woff", "ttf", "otf")),
    ):
        if any(needle in mime for needle in needles):
            return name
    return "other"


def side(path: Path, snapshot: Snapshot) -> SnapshotSide:
    manifest = snapshot.manifest
    return SnapshotSide(
        path=str(path),
        id=manifest.id,
        sha256=snapshot.sha256,
        created_at=manifest.created_at,
        hosts=manifest.hosts
        or tuple(sorted({urlsplit(e.url).hostname or "" for e in snapshot.entries()} - {""})),
        records=len(snapshot),
    )


def _keyed(entries: list[IndexEntry], canonical: Canonicalizer) -> dict[str, list[IndexEntry]]:
    keyed: dict[str, list[IndexEntry]] = defaultdict(list)
    for entry in entries:
        keyed[f"{entry.method} {canonical.url(entry.url)[0]}"].append(entry)
    return keyed


def _path(key: str) -> str:
    parts = urlsplit(key.split(" ", 1)[1])
    return f"{key.split(' ', 1)[0]} {parts.netloc}{parts.path}"


def record_changes(first: Snapshot, second: Snapshot) -> tuple[UrlChanges, tuple[DigestChanges, ...]]:
    """URLs on one side only, and changed payload digests by content type for the rest."""
    canonical = Canonicalizer(RuleSet.load())
    entries_a, entries_b = list(first.entries()), list(second.entries())
    a, b = _keyed(entries_a, canonical), _keyed(entries_b, canonical)
    mimes = {e.digest: e.mime for e in (*entries_a, *entries_b) if e.record_type == "response" and e.digest}
    paths_a, paths_b = {_path(key) for key in a}, {_path(key) for key in b}
    urls = UrlChanges(
        added=tuple(sorted(set(b) - set(a))),
        removed=tuple(sorted(set(a) - set(b))),
        common=len(set(a) & set(b)),
        paths_added=tuple(sorted(paths_b - paths_a)),
        paths_removed=tuple(sorted(paths_a - paths_b)),
    )
    common: dict[str, int] = defaultdict(int)
    changed: dict[str, list[str]] = defaultdict(list)
    for key in sorted(set(a) & set(b)):
        first_entry = a[key][0]
        kind = family(mimes.get(first_entry.digest, first_entry.mime) or "")
        common[kind] += 1
        if sorted(e.digest or "" for e in a[key]) != sorted(e.digest or "" for e in b[key]):
            changed[kind].append(key)
    digests = tuple(
        DigestChanges(
            family=name, common=common[name], changed=len(changed[name]), examples=tuple(changed[name][:10])
        )
        for name in FAMILIES
        if common[name]
    )
    return urls, digests


def _text_diff(first: str, second: str) -> tuple[int, str]:
    lines = list(difflib.unified_diff(first.splitlines(), second.splitlines(), "A", "B", n=1, lineterm=""))
    changed = sum(1 for line in lines[2:] if line[:1] in "+-")
    shown = lines[:MAX_DIFF_LINES] + (
        [f"… {len(lines) - MAX_DIFF_LINES} more lines"] if len(lines) > MAX_DIFF_LINES else []
    )
    return changed, "\n".join(shown)


def page_changes(a: SideObservation, b: SideObservation, diffs: Path) -> list[PageDrift]:
    """Pair the n-th document of each task's walk on both sides and diff text and pixels."""
    diffs.mkdir(parents=True, exist_ok=True)
    second = {(page.task_id, page.index): page for page in b.pages}
    first = {(page.task_id, page.index): page for page in a.pages}
    found = []
    for key in sorted(set(first) | set(second), key=lambda k: (k[0], k[1])):
        left, right = first.get(key), second.get(key)
        problem = _problem(left, right)
        lines, text = _text_diff(left.text if left else "", right.text if right else "")
        ratio = image = None
        if left and right and left.screenshot and right.screenshot:
            target = diffs / f"{key[0]}-{key[1]}-diff.png"
            ratio = pixel_diff(left.screenshot, right.screenshot, target)
            image = str(target)
        found.append(
            PageDrift(
                task_id=key[0],
                index=key[1],
                url_a=left.url if left else "",
                url_b=right.url if right else "",
                text_lines_changed=lines,
                text_diff=text,
                pixels_changed=ratio,
                diff_image=image,
                problem=problem,
            )
        )
    return found


def _problem(left: PageObservation | None, right: PageObservation | None) -> str | None:
    if left is None or right is None:
        return f"only on {'A' if right is None else 'B'}: the walks reached different pages"
    errors = [f"{name}: {page.error}" for name, page in (("A", left), ("B", right)) if page.error]
    return "; ".join(errors) or None


def anchor_changes(
    a: SideObservation, b: SideObservation, injections: dict[str, Injection]
) -> list[AnchorDrift]:
    second = {anchor.injection_id: anchor for anchor in b.anchors}
    found = []
    for left in a.anchors:
        right = second.get(left.injection_id)
        if right is None:
            continue
        found.append(
            AnchorDrift(
                injection_id=left.injection_id,
                pattern_type=injections[left.injection_id].type,
                task_id=left.task_id,
                a=left,
                b=right,
                broke=left.status == "anchored" and right.status != "anchored",
                fallback=left.status == right.status == "anchored" and left.locator != right.locator,
            )
        )
    return found


def drift_report(
    paths: tuple[Path, Path],
    snapshots: tuple[Snapshot, Snapshot],
    tasks: list[Task],
    observations: tuple[SideObservation, SideObservation],
    injections: dict[str, Injection],
    out: Path,
) -> DriftReport:
    urls, digests = record_changes(*snapshots)
    anchors = anchor_changes(*observations, injections)
    return DriftReport(
        a=side(paths[0], snapshots[0]),
        b=side(paths[1], snapshots[1]),
        tasks=tuple(task.id for task in tasks),
        urls=urls,
        digests=digests,
        pages=tuple(page_changes(*observations, out / "diff")),
        anchors=tuple(anchors),
        flagged=tuple(anchor.injection_id for anchor in anchors if anchor.broke),
    )


def drift_tasks(selector: str, hosts: set[str], injections: dict[str, Injection]) -> list[Task]:
    """The selected catalog tasks (the local web's and the apps') whose site both snapshots hold and
    that have a capture plan."""
    folders = [TASKS_DIR] + [chosen.tasks_dir for chosen in TASK_SETS.values() if chosen.app]
    catalog = [task for folder in folders for task in load_tasks(folder, injections)]
    chosen = [
        task
        for task in select_tasks(catalog, selector, injections)
        if task.capture is not None and task.site in hosts
    ]
    if not chosen:
        raise SusbenchError(
            f"--tasks {selector!r}: no selected task is on a site both snapshots hold "
            f"({', '.join(sorted(hosts)) or 'none in common'})"
        )
    return chosen


def record_live(
    tasks: list[Task], out: Path, live_date: date, progress: Callable[[str], None] | None = None
) -> Path:
    """A fresh recording of the tasks' flows from the local web at `live_date`; `progress` hears of
    each page recorded."""
    from susbench.recorder.capture import record_plans
    from susbench.web import LocalWeb

    with LocalWeb(port=0, date=live_date) as web:
        return record_plans(
            [task.capture for task in tasks if task.capture is not None],
            out,
            host_map=web.resolve,
            upstream_ca=web.ca_cert_path,
            targets=tuple(f"tasks/{task.id}.yaml" for task in tasks),
            progress=progress,
        )


def measure_drift(
    first: Path,
    second: Path,
    tasks: list[Task],
    injections: dict[str, Injection],
    out: Path,
    progress: Callable[[str], None] | None = None,
) -> DriftReport:
    """Both snapshots replayed and walked; the report, also written to `out`/drift.json. `progress`
    hears of each task walked."""
    from susbench.analysis.walk import observe_snapshot
    from susbench.browser.driver import playwright_driver
    from susbench.catalog.injections import build_extension

    extension = build_extension(list(injections.values()))
    with (
        Snapshot.open(first) as snapshot_a,
        Snapshot.open(second) as snapshot_b,
        playwright_driver() as playwright,
    ):
        observations = (
            observe_snapshot(playwright, first, tasks, injections, extension, out / "a", progress),
            observe_snapshot(playwright, second, tasks, injections, extension, out / "b", progress),
        )
        report = drift_report((first, second), (snapshot_a, snapshot_b), tasks, observations, injections, out)
    (out / "drift.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return report


def snapshot_hosts(*paths: Path) -> set[str]:
    """Hosts every one of the snapshots holds."""
    hosts = None
    for path in paths:
        if not path.is_file():
            raise SusbenchError(f"{path}: snapshot not found; expected a .wacz file")
        with Snapshot.open(path) as snapshot:
            found = set(side(path, snapshot).hosts)
        hosts = found if hosts is None else hosts & found
    return hosts or set()
