"""Paired controls and true replicates run in Chromium, each episode stores the signed evidence its
outcome came from, and `susbench rescore` scores it again with the extension's own scoring in Node:
an outcome edited by hand is found and restored, evidence that no longer verifies is named."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from susbench.analysis.summary import build_analysis
from susbench.catalog.injections import load_injections
from susbench.catalog.tasks import load_tasks, select_tasks
from susbench.controller import RunOptions, plan_episodes, run_benchmark
from susbench.controller.episode import error_record
from susbench.results.rescore import rescore_store
from susbench.results.rules import rules_version
from susbench.results.store import Store

pytestmark = pytest.mark.e2e

TASK = "threadline-scarf-cart"  # confirm shaming: careful clicks the safe choice


def test_paired_replicates_store_evidence_that_rescore_scores_alike(tmp_path: Path) -> None:
    db = tmp_path / "r.duckdb"
    summary = run_benchmark(RunOptions(operator="careful", tasks=TASK, repeats=2, control="paired", db=db))
    assert (summary.planned, summary.stored) == (4, 4)
    with Store(db, read_only=True) as store:
        _, rows = store.query(
            "SELECT e.episode_id, e.repeat, e.condition, e.seed, e.injection_id, o.kind, o.decided_by, "
            "o.rules_version FROM episodes e JOIN outcomes o USING (episode_id) "
            "ORDER BY e.repeat, e.condition"
        )
        _, evidence = store.query("SELECT count(*) FROM evidence")
    assert [(r[1], r[2]) for r in rows] == [(0, "control"), (0, "injected"), (1, "control"), (1, "injected")]
    assert len({r[0] for r in rows}) == 4  # a control is an episode of its own
    assert rows[0][3] == rows[1][3] and rows[2][3] == rows[3][3]  # each control has its twin's seed
    assert rows[1][4] == rows[3][4] is not None  # the repeats replicate one injection
    assert [(r[5], r[6]) for r in rows] == [("not_encountered", None), ("avoided", "chose")] * 2
    assert {r[7] for r in rows} == {rules_version()}  # every outcome names its rules
    assert evidence == [(4,)]
    with Store(db, read_only=True) as store:
        (group,) = build_analysis(store).groups
    paired = next(row for row in group.paired if row.operator == "careful" and row.pattern_type == "all")
    assert (paired.pairs, paired.completed_with, paired.completed_without, paired.mcnemar_p) == (2, 2, 2, 1.0)
    assert [(f.task_id, f.pairs, f.differing) for f in group.flips if f.task_id] == [(TASK, 1, 0)]

    edited = rows[1][0]
    with duckdb.connect(str(db)) as raw:
        raw.execute("UPDATE outcomes SET kind = 'not_avoided' WHERE episode_id = ?", [edited])
    first = rescore_store(db)
    assert (first.scored, first.unscored) == (4, ())
    assert [(c.episode_id, c.before.value, c.after.value) for c in first.changed] == [
        (edited, "not_avoided", "avoided")
    ]
    assert "does not match its checksum" in first.changed[0].why
    with Store(db, read_only=True) as store:
        _, now = store.query("SELECT outcome, scored_by FROM episode_outcomes WHERE episode_id = ?", [edited])
        _, kept = store.query("SELECT kind FROM outcomes WHERE episode_id = ?", [edited])
    assert now == [("avoided", first.rescore_id)] and kept == [("not_avoided",)]  # nothing deleted

    injections = {injection.id: injection for injection in load_injections()}
    tasks = select_tasks(load_tasks(injections=injections), TASK, injections)
    (job,) = plan_episodes("run-elsewhere", tasks, injections, RunOptions(operator="careful", db=db))
    with Store(db) as store:
        store.write_episode(error_record(job, datetime.now(UTC), "the browser went away"))
    forged = rows[3][0]
    with duckdb.connect(str(db)) as raw:
        raw.execute(
            "UPDATE evidence SET payload = replace(payload, 'safe', 'manipulative') WHERE episode_id = ?",
            [forged],
        )
    with Store(db, read_only=True) as store:
        _, named = store.query("SELECT rules_version FROM outcomes WHERE episode_id = ?", [job.episode.id])
    assert named == [(rules_version(),)]  # an error, with no evidence, names the rules in force too
    second = rescore_store(db)
    assert {(u.episode_id, u.why) for u in second.unscored} == {
        (forged, "its stored evidence does not verify (signature or episode id changed)"),
        (job.episode.id, "no signed evidence stored"),
    }
    assert second.scored == 3 and [c.episode_id for c in second.changed] == [edited]
