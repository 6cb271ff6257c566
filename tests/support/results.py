"""Episodes and runs written straight into a results store, for the tests that read one back (the
results, analysis, study and command-line tests)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from susbench.core.models import Episode, Event, Outcome, OutcomeKind
from susbench.records.episode import EpisodeRecord, RequestRecord
from susbench.records.run import RunRecord
from susbench.results.store import Store

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def record(
    episode_id: str, kind: OutcomeKind = OutcomeKind.AVOIDED, pattern: str | None = "preselection"
) -> EpisodeRecord:
    injected = pattern is not None
    episode = Episode(
        id=episode_id,
        run_id="run-1",
        task_id="pizza-order",
        site="pizzapalace.test",
        injection_id="pp-preselect" if injected else None,
        pattern_type=pattern,
        condition="injected" if injected else "control",
        operator="careful",
        mode="snapshot",
        repeat=0,
        seed=7,
    )
    return EpisodeRecord(
        episode=episode,
        started_at=T0,
        ended_at=T0 + timedelta(seconds=2.5),
        steps=4,
        completed=True,
        outcome=Outcome(
            episode_id=episode_id, injection_id=episode.injection_id, kind=kind, reason="unchecked"
        ),
        events=(
            Event(ts_ms=1, source="operator", kind="step", detail={"action": "goto"}),
            Event(ts_ms=2, source="extension", kind="uncheck", detail={"trusted": True}),
        ),
        requests=(
            RequestRecord(url="https://pizzapalace.test/", match_kind="exact", status=200),
            RequestRecord(url="https://pizzapalace.test/x", status=404, miss=True),
        ),
    )


def run_record() -> RunRecord:
    return RunRecord(run_id="run-1", config={"operator": "careful"}, seed=0, host="h", started_at=T0)


TASKS = {  # task -> (injection, type)
    "shop-a": ("inj-a", "preselection"),
    "shop-b": ("inj-b", "confirm_shaming"),
    "shop-c": ("inj-c", "popup_ad"),
}


def add_run(store: Store, run_id: str, operator: str, mode: str = "snapshot", **config: Any) -> None:
    settings = {
        "operator": operator,
        "mode": mode,
        "seed": 0,
        "snapshot_sha256": "abc" if mode == "snapshot" else None,
    }
    store.add_run(RunRecord(run_id=run_id, config={**settings, **config}, seed=0, host="h", started_at=T0))


def add_episode(
    store: Store,
    run_id: str,
    operator: str,
    task: str,
    kind: OutcomeKind,
    repeat: int = 0,
    mode: str = "snapshot",
    tasks: dict[str, tuple[str, str]] = TASKS,
) -> None:
    injection, pattern = tasks[task]
    episode = Episode(
        id=f"{run_id}-{task}-{repeat}",
        run_id=run_id,
        task_id=task,
        site="shop.test",
        injection_id=injection,
        pattern_type=pattern,
        condition="injected",
        operator=operator,
        mode=mode,
        repeat=repeat,
        seed=100 + repeat,
    )
    reason = "anchor not found" if kind == OutcomeKind.NOT_ENCOUNTERED else "decided"
    store.write_episode(
        EpisodeRecord(
            episode=episode,
            started_at=T0,
            ended_at=T0 + timedelta(seconds=3),
            completed=kind != OutcomeKind.ERROR,
            outcome=Outcome(episode_id=episode.id, injection_id=injection, kind=kind, reason=reason),
        )
    )
