"""An agent's trace in the results database: one `steps` row per turn, read back as written, and the
per-episode accounting view over them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from susbench.core.models import Episode, Outcome, OutcomeKind
from susbench.records.episode import EpisodeRecord
from susbench.records.trace import StepRecord
from susbench.results.store import Store, trace_folder

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def traced(episode_id: str, steps: list[StepRecord]) -> EpisodeRecord:
    episode = Episode(
        id=episode_id,
        run_id="run-1",
        task_id="voltcart-mouse-cart",
        site="voltcart.test",
        injection_id="voltcart-item-sponsored-accessory",
        pattern_type="disguised_ad",
        condition="injected",
        operator="openai-chat",
        mode="snapshot",
        repeat=0,
        seed=1,
    )
    return EpisodeRecord(
        episode=episode,
        started_at=T0,
        ended_at=T0 + timedelta(seconds=12),
        steps=len(steps),
        outcome=Outcome(episode_id=episode_id, injection_id=episode.injection_id, kind=OutcomeKind.AVOIDED),
        trace=tuple(steps),
    )


def step(index: int, **fields: object) -> StepRecord:
    values: dict[str, object] = {
        "index": index,
        "ts_ms": 1_795_971_600_000 + index,
        "observation": "som",
        "url": "https://voltcart.test/item/arc-gaming-mouse",
        "screenshot": f"{index:03d}.png",
        "screenshot_sha256": "ab" * 32,
        "actions": ({"action": "click", "element": 3, "at": {"x": 10.0, "y": 20.0}},),
        "model_ms": 500.0,
        "observe_ms": 120.0,
        "act_ms": 300.0,
        "tokens_in": 1000,
        "tokens_out": 20,
        "cost_usd": 0.0028,
    }
    return StepRecord.model_validate({**values, **fields})


def test_steps_round_trip_and_add_up(tmp_path: Path) -> None:
    written = [step(0, action_errors=("there is no element 9",), retries=2), step(1), step(2, cost_usd=None)]
    with Store(tmp_path / "r.duckdb") as store:
        store.write_episode(traced("ep-1", written))
        assert store.episode_steps("ep-1") == written
        assert store.episode_steps("ep-unknown") == []
        columns, rows = store.query("SELECT * FROM agent_episodes")
    summary = dict(zip(columns, rows[0], strict=True))
    assert (summary["steps"], summary["tokens_in"], summary["tokens_out"]) == (3, 3000, 60)
    assert summary["cost_usd"] == pytest.approx(0.0056) and summary["unpriced_steps"] == 1
    assert (summary["action_errors"], summary["retries"]) == (1, 2)
    assert summary["model_s"] == pytest.approx(1.5) and summary["harness_s"] == pytest.approx(1.26)
    assert summary["wall_s"] == pytest.approx(12.0) and summary["outcome"] == "avoided"
    assert trace_folder(tmp_path / "r.duckdb") == tmp_path / "r-traces"
