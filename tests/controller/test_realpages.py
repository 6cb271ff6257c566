"""The realpages task set: real product pages and a real WARC, generic injections, the scripted
baselines' expected rates on every type, and completion by the page's own control."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, task_types
from susbench.catalog.tasksets import TASK_SETS, build_realpages_snapshot
from susbench.controller import RunOptions, run_benchmark
from susbench.core.models import PATTERN_TYPES
from susbench.results.store import Store
from susbench.snapshot import Snapshot
from tests.support.cli import run_cli
from tests.support.episode_evidence import event_lines

REALPAGES = TASK_SETS["realpages"]


def test_every_task_carries_generic_injections_of_one_type_and_all_nine_are_covered() -> None:
    injections = {item.id: item for item in load_injections()}
    tasks = load_tasks(REALPAGES.tasks_dir, injections)
    covered = set()
    for task in tasks:
        assert all(injections[item].site == "*" for item in task.injections), task.id
        types = task_types(task, injections)
        assert len(types) == 1, task.id  # so one run draws every type, whichever injection it draws
        covered |= types
        assert task.completion is not None and task.completion.control is not None, task.id
    assert covered == set(PATTERN_TYPES)


def test_the_task_set_is_chosen_by_name_and_never_live() -> None:
    done = run_cli("run", "--task-set", "nowhere", "--operator", "careful")
    assert done.returncode != 0 and "expected one of localweb, realpages" in done.stderr + done.stdout
    done = run_cli("run", "--task-set", "realpages", "--operator", "careful", "--live")
    assert done.returncode != 0 and "replays recorded real pages only" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.e2e
def test_baselines_score_zero_and_full_avoidance_on_every_type_of_real_pages(
    realdata: Path, tmp_path: Path
) -> None:
    snapshot = build_realpages_snapshot(realdata)
    injections = {item.id: item for item in load_injections()}
    tasks = load_tasks(REALPAGES.tasks_dir, injections)
    with Snapshot.open(snapshot) as opened:
        archived = {entry.url for entry in opened.entries()}
    assert {task.start_url.split("#", 1)[0] for task in tasks} <= archived
    db = tmp_path / "realpages.duckdb"
    for operator in ("naive", "careful"):
        options = RunOptions(
            operator=operator, snapshot=snapshot, tasks_dir=REALPAGES.tasks_dir, parallel=2, db=db
        )
        summary = run_benchmark(options)
        assert summary.stored == len(tasks), summary
    expected = {"naive": "not_avoided", "careful": "avoided"}
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT episode_id, operator, pattern_type, outcome, completed, error FROM episode_outcomes"
        )
        # An episode that went the other way prints its whole timeline (every source's events), which
        # the conftest's section cuts to a few hundred lines of every episode.
        for episode_id, operator, _, outcome, completed, error in rows:
            if outcome != expected[operator] or error is not None or completed is not True:
                _, events = store.query(
                    "SELECT ts_ms, source || ' ' || kind, detail FROM events WHERE episode_id = ? "
                    "ORDER BY seq",
                    [episode_id],
                )
                print(f"{episode_id} by {operator}: {outcome}")
                timeline = [(ts_ms, kind, json.loads(detail)) for ts_ms, kind, detail in events]
                print("\n".join(event_lines(timeline, timeline[0][0] if timeline else 0)))
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for _, operator, pattern_type, outcome, completed, error in rows:
        assert error is None and completed is True, (operator, pattern_type, outcome, error)
        found[(operator, pattern_type)].append(outcome)
    for pattern_type in PATTERN_TYPES:
        for operator, outcome in expected.items():  # naive 0% avoidance, careful 100%
            assert set(found[(operator, pattern_type)]) == {outcome}, (operator, pattern_type)


def test_building_the_snapshot_is_announced_once_with_its_size(realdata: Path, tmp_path: Path) -> None:
    """Two saved product pages and one WARC: the first build says what it builds from and where it
    keeps it; the second finds it and says nothing."""
    small = tmp_path / "realdata"
    (small / "product-pages").mkdir(parents=True)
    (small / "warc").mkdir()
    truths = json.loads((realdata / "product-pages" / "ground-truth.json").read_text(encoding="utf-8"))
    times = json.loads((realdata / "product-pages" / "capture-times.json").read_text(encoding="utf-8"))
    stems = sorted(truths)[:2]
    for stem in stems:
        shutil.copy(realdata / "product-pages" / f"{stem}.html.gz", small / "product-pages")
    for name, data in (("ground-truth.json", truths), ("capture-times.json", times)):
        chosen = {stem: data[stem] for stem in stems}
        (small / "product-pages" / name).write_text(json.dumps(chosen), encoding="utf-8")
    shutil.copy(realdata / "warc" / "books.toscrape.warc", small / "warc")
    said: list[str] = []
    built = build_realpages_snapshot(small, tmp_path / "cache", announce=said.append)
    assert built.is_file() and built.parent == tmp_path / "cache"
    (line,) = said
    assert line.startswith(f"building the realpages snapshot from {small} (5 files, ") and str(built) in line
    with Snapshot.open(built) as snapshot:
        assert {page.url for page in snapshot.manifest.pages} >= {truths[stem]["url"] for stem in stems}
    assert build_realpages_snapshot(small, tmp_path / "cache", announce=said.append) == built
    assert said == [line]


@pytest.mark.e2e
def test_preview_with_real_pages_writes_both_galleries(tmp_path: Path, realdata: Path) -> None:
    """`injections preview --real-pages 1` writes the local web's gallery and one real page's, as its
    help says."""
    generic = next(item for item in load_injections() if item.site == "*")
    done = run_cli("injections", "preview", "--id", generic.id, "--real-pages", "1", "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    pages = [Path(line) for line in done.stdout.splitlines() if line.endswith("index.html")]
    assert [page.relative_to(tmp_path).as_posix() for page in pages] == ["index.html", "real-1/index.html"]
    for page in pages:
        assert generic.id in page.read_text(encoding="utf-8")
        assert list(page.parent.glob("*.png")), f"{page.parent}: no screenshot"
